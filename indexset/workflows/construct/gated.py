"""Gated (SwiGLU, GeGLU, ReGLU, GLU) and positively homogeneous (ReLU², ReGLU) blocks (MATH.md §4, §8.6).

Without a bias inside σ no bias-free residual-free block absorbs the skip
of these blocks, so the families build negatives, optionally with a trap
(an S satisfying (★) as if the activation were ReLU); and, with biases
allowed in g, the two constructions of MATH.md §8.6 that the affine class
absorbs (``gated --pairs``, ``homogeneous --collinear``).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import flint
import numpy as np

import indexset.model.activations as activations
from indexset.classes import AFFINE, check_class
from indexset.errors import InputError
from indexset.model.activations import HOMOGENEOUS
from indexset.model.instance import Instance
from indexset.rational import as_fraction, fmpq_matrix
from indexset.theory.nondegeneracy import direction
from indexset.workflows.construct.blocks import PlantedSpec, make_planted
from indexset.workflows.construct.integers import biases, identity, int_array, nonzero_columns, random_nonzero, random_row, unimodular
from indexset.workflows.construct.planting import exact_int
from indexset.workflows.construct.skips import begin, check_skip, float_skip, skip_array
from indexset.workflows.construct.spec import ATTEMPTS, Spec, check_choice, check_sizes, params
from indexset.workflows.vocabulary import DTYPES


@dataclass(frozen=True)
class _NegativeSpec(Spec):
    """Options shared by the gated and homogeneous families (see :class:`GatedSpec`)."""

    activation: str = ""
    d: int = 2
    n: int = 8
    range: int = 5
    seed: int = 0
    biases: bool = False
    skip: str = "identity"
    dtype: str = "int"
    trap: bool = False
    target_class: str = "bias-free"
    act: object = field(default=None, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        self._set(act=self._activation())
        if self._construction():
            check_sizes(self.d, self.n, self.seed, min_d=1, bound=self.range)
            check_skip(self.skip, self.d, None)
            self._check_construction()
            return
        self._set(target_class=check_class(self.target_class))
        check_sizes(self.d, self.n, self.seed, min_d=1, bound=self.range)
        check_choice("dtype", self.dtype, DTYPES)
        if self.trap and self.dtype != "int":
            raise InputError("trap", "a trap needs integer weights")
        if self.trap and self.d < 2:
            raise InputError("trap", "a trap needs d ≥ 2")
        if self.trap and self.biases and self.target_class == AFFINE:
            raise InputError("biases", "with biases inside σ a block may absorb into the affine class: a trap for it has none")
        check_skip(self.skip, self.d, None)

    def _activation(self) -> activations.Activation:
        raise NotImplementedError

    def _construction(self) -> bool:
        """True when the family's absorbable construction (pairs, collinear) is asked for."""
        raise NotImplementedError

    def _check_construction(self) -> None:
        raise NotImplementedError


@dataclass(frozen=True)
class GatedSpec(_NegativeSpec):
    """Options of the ``gated`` family.

    Parameters
    ----------
    activation : {"swiglu", "geglu", "reglu", "glu"}
    d, n, range, seed, biases, skip
        As in :class:`~indexset.workflows.construct.blocks.RandomSpec` (d ≥ 1).
    dtype : {"int", "float"}
    trap : bool
        Plant an index set satisfying (★) with c = 1 in W_up/W_down anyway
        (metadata ``trap_S``, integer weights only): a tool that ignores the
        activation would wrongly call the block absorbable. The block is
        still not absorbable by the class ``target_class``.
    target_class : {"bias-free", "affine"}
        The class a ``trap`` must stay a negative for. For ``affine`` the
        gate rows are redrawn until pairwise non-collinear and the block
        has no bias inside σ (Theorem C then rules absorption out).
    pairs : bool
        Make units 2p, 2p+1 (p < d) a pair with opposite gate rows ±u_p
        (u_p the rows of a unimodular matrix) and parallel down columns,
        chosen so that value biases on the pairs reproduce A·x (MATH.md
        §8.6): absorbable by the affine class, not by the bias-free one.
        Needs n ≥ 2d; the pairs are shuffled among random units.
    """

    family = "gated"
    activation: str = "swiglu"
    pairs: bool = False

    def _activation(self) -> activations.Activation:
        act = activations.get(self.activation, "activation")
        if not act.gated:
            raise InputError("activation", f"{act.name} is not gated (gated: swiglu, geglu, reglu, glu)")
        return act

    def _construction(self) -> bool:
        return bool(self.pairs)

    def _check_construction(self) -> None:
        if self.n < 2 * self.d:
            raise InputError("n", f"pairs need n ≥ 2d = {2 * self.d}, got n = {self.n}")


@dataclass(frozen=True)
class HomogeneousSpec(_NegativeSpec):
    """Options of the ``homogeneous`` family: as :class:`GatedSpec`, with ``activation`` relu2 or reglu, and:

    Parameters
    ----------
    collinear : bool
        ReLU² only: for each of d directions u_p (rows of a unimodular
        matrix) four units with rows u_p, 2u_p, −u_p, −3u_p: two merge on
        each side of the hyperplane, which frees two units per direction,
        enough for relu(z+1)² − relu(z)² − relu(−z)² + relu(−z−1)² = 2z + 1
        to reproduce A·x (MATH.md §8.6). Absorbable by the affine class,
        not by the bias-free one. Needs n ≥ 4d.
    """

    family = "homogeneous"
    activation: str = "relu2"
    collinear: bool = False

    def _activation(self) -> activations.Activation:
        act = activations.get(self.activation, "activation")
        if act.kind != HOMOGENEOUS:
            raise InputError("activation", f"{act.name} is not positively homogeneous of degree ≠ 1 (known: relu2, reglu)")
        if self.collinear and act.gated:
            raise InputError("collinear", "collinear units are a ReLU² construction; for reglu use: gated --pairs")
        return act

    def _construction(self) -> bool:
        return bool(self.collinear)

    def _check_construction(self) -> None:
        if self.n < 4 * self.d:
            raise InputError("n", f"collinear units need n ≥ 4d = {4 * self.d}, got n = {self.n}")


def gated(**options) -> Instance:
    """A gated block ``W_down (g(W_gate x) ⊙ (W_up x + b_up)) + b_down + A x``; options: :class:`GatedSpec`.

    Without a bias inside σ no bias-free residual-free block absorbs the
    skip of a SwiGLU or GeGLU block (MATH.md §4, g(0) = 0) or of a ReGLU
    block (degree 2); the sigmoid GLU is not covered (answer "unknown").
    With biases allowed in g (the affine class) the weights decide
    (MATH.md §8): ``pairs=True`` builds a block that such a g absorbs.
    """
    return make_gated(GatedSpec.of(options))


def make_gated(spec: GatedSpec) -> Instance:
    """The ``gated`` instance of a validated spec."""
    return _pairs(spec) if spec.pairs else _negative(spec)


def homogeneous(**options) -> Instance:
    """A block with a positively homogeneous activation of degree 2; options: :class:`HomogeneousSpec`.

    ``relu2`` (max(z, 0)²) or ``reglu``: without a bias inside σ no
    bias-free residual-free block absorbs the skip (MATH.md §4, degree
    argument).
    """
    return make_homogeneous(HomogeneousSpec.of(options))


def make_homogeneous(spec: HomogeneousSpec) -> Instance:
    """The ``homogeneous`` instance of a validated spec."""
    return _relu2_collinear(spec) if spec.collinear else _negative(spec)


def _negative(spec: _NegativeSpec) -> Instance:
    """A ReLU twin's up and down weights with the spec's activation (and a gate when it is gated)."""
    act, bound = spec.act, spec.range
    meta = params(spec.family, spec.seed, activation=act.name, d=spec.d, n=spec.n, range=bound, biases=bool(spec.biases),
                  skip=spec.skip, dtype=spec.dtype, trap=bool(spec.trap), **({"class": spec.target_class} if spec.trap else {}))
    twin = _relu_twin(spec)
    metadata = {"params": meta}
    if spec.trap:
        metadata["trap_S"] = np.array(twin.planted, dtype=np.int64)
        metadata["trap_class"] = np.array(spec.target_class)
    for attempt in range(ATTEMPTS):
        rng = np.random.default_rng([spec.seed, 1] if attempt == 0 else [spec.seed, 1, attempt])  # the gate gets its own stream
        gate = rng.integers(-bound, bound + 1, size=(spec.n, spec.d)) if spec.dtype == "int" else rng.standard_normal((spec.n, spec.d))
        instance = Instance(twin.W_up, twin.W_down, twin.skip, twin.b_up, twin.b_down, activation=act.name,
                            W_gate=gate if act.gated else None, denominator=twin.denominator, metadata=metadata,
                            source=f"construct {spec.family}")
        if not (spec.trap and spec.target_class == AFFINE) or not _theorem_violations(instance):
            return instance
    raise InputError("range", f"no draw gave a trap with pairwise non-collinear rows in [−{bound}, {bound}]^{spec.d}; raise --range")


def _theorem_violations(instance: Instance) -> list[str]:
    from indexset.theory.flips import violations

    return violations(instance)


def _relu_twin(spec: _NegativeSpec) -> Instance:
    """Up and down weights of a gated/homogeneous block, drawn as a ReLU block."""
    d, n, bound = spec.d, spec.n, spec.range
    if spec.trap:
        return make_planted(PlantedSpec(d=d, n=n, range=bound, seed=spec.seed, biases=spec.biases, skip=spec.skip))
    start = begin(spec, exact=spec.dtype == "int")
    rng = start.rng
    if spec.dtype == "float":
        arrays = {"W_up": rng.standard_normal((n, d)), "W_down": rng.standard_normal((d, n)),
                  "skip": None if start.skip is None else float_skip(start.skip, d)}
        if spec.biases:
            arrays.update(b_up=rng.standard_normal(n), b_down=rng.standard_normal(d))
        return Instance(**arrays)
    arrays = {"W_up": rng.integers(-bound, bound + 1, size=(n, d)),
              "W_down": int_array([list(r) for r in zip(*nonzero_columns(rng, n, d, bound))]),
              "skip": skip_array(start.skip, start.q)}
    arrays.update(biases(rng, spec.biases, n, d, bound))
    return Instance(**arrays, denominator=start.q)


def _pairs(spec: GatedSpec) -> Instance:
    """d pairs of units with opposite gate rows and parallel down columns that reproduce A·x (MATH.md §8.6)."""
    d, n, bound = spec.d, spec.n, spec.range
    start = begin(spec, entropy=[spec.seed, 2])
    rng, q = start.rng, start.q
    A = fmpq_matrix(start.skip or identity(d))
    U = unimodular(rng, d, max(1, min(bound, 3)))
    columns = A * flint.fmpz_mat(U).inv()  # A = columns·U, so Σ_p columns[:,p]·u_pᵀ = A
    gate, down = [], []
    for p in range(d):
        mu = int(rng.choice([-2, -1, 1, 2]))
        column = [exact_int(as_fraction(columns[r, p]) * q) for r in range(d)]
        gate += [U[p], [-v for v in U[p]]]
        down += [column, [mu * v for v in column]]
    for _ in range(n - 2 * d):
        gate.append(random_row(rng, d, bound))
        down.append([q * v for v in random_nonzero(rng, d, bound)])
    order = rng.permutation(n)
    pairs = sorted(sorted(int(np.flatnonzero(order == 2 * p + k)[0]) for k in (0, 1)) for p in range(d))
    up = rng.integers(-bound, bound + 1, size=(n, d))
    arrays = {"W_up": up[order] * q, "W_down": int_array([[down[int(i)][r] for i in order] for r in range(d)]),
              "W_gate": int_array([gate[int(i)] for i in order]) * q, "skip": skip_array(start.skip, q)}
    arrays.update({k: v * q for k, v in biases(rng, spec.biases, n, d, bound).items()})
    meta = params("gated", spec.seed, activation=spec.act.name, d=d, n=n, range=bound, biases=bool(spec.biases), skip=spec.skip, pairs=True)
    metadata = {"params": meta, "pairs": np.array(pairs, dtype=np.int64)}
    return Instance(**arrays, activation=spec.act.name, denominator=q, metadata=metadata, source="construct gated --pairs")


def _relu2_collinear(spec: HomogeneousSpec) -> Instance:
    """Four ReLU² units on each of d lines, two merging on each side (MATH.md §8.6)."""
    d, n, bound = spec.d, spec.n, spec.range
    start = begin(spec, entropy=[spec.seed, 3])
    rng = start.rng
    U = unimodular(rng, d, max(1, min(bound, 3)))
    rows, down = [], []
    for p in range(d):
        for scale in (1, 2, -1, -3):
            rows.append([scale * v for v in U[p]])
            down.append(random_nonzero(rng, d, bound))
    lines = {direction(row) for row in rows}
    for _ in range(ATTEMPTS * n):
        if len(rows) == n:
            break
        row = random_row(rng, d, bound)
        if any(row) and direction(row) not in lines:
            lines.add(direction(row))
            rows.append(row)
            down.append(random_nonzero(rng, d, bound))
    while len(rows) < n:  # no new line left (d = 1): more units on the first one, which merge
        rows.append([int(rng.choice([-2, -1, 1, 2])) * v for v in U[0]])
        down.append(random_nonzero(rng, d, bound))
    order = rng.permutation(n)
    meta = params("homogeneous", spec.seed, activation="relu2", d=d, n=n, range=bound, skip=spec.skip, collinear=True)
    return Instance(int_array([rows[int(i)] for i in order]), int_array([[down[int(i)][r] for i in order] for r in range(d)]),
                    skip_array(start.skip, start.q), activation="relu2", denominator=start.q, metadata={"params": meta},
                    source="construct homogeneous --collinear")
