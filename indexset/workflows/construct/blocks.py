"""Plain blocks: planted positives, unplanted negatives, and float blocks planted up to rounding.

Families ``planted``, ``random`` and ``float_planted``: one spec each (the
options, validated once) and one builder each.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import flint
import numpy as np

from indexset.errors import InputError
from indexset.exact.verify import verify
from indexset.model.instance import Instance
from indexset.rational import as_fraction, fmpq_matrix, parse_fraction
from indexset.search.engines.brute import absorbing_sets_brute
from indexset.theory.nondegeneracy import find_degeneracy
from indexset.workflows.construct.integers import biases, check_room, decoy_rows, int_array, nonzero_columns
from indexset.workflows.construct.planting import checked, plant
from indexset.workflows.construct.skips import Start, begin, check_skip, float_skip, skip_array
from indexset.workflows.construct.spec import ATTEMPTS, Spec, check_choice, check_int, check_sizes, default_k, odd_linear, params
from indexset.workflows.vocabulary import DTYPES

BRUTE_CHECK_WIDTH = 16
"""``random`` confirms by brute force that no S exists up to this width."""


# ================================================================= planted
@dataclass(frozen=True)
class PlantedSpec(Spec):
    """Options of the ``planted`` family.

    Parameters
    ----------
    d, n : int
        Dimension (≥ 2; d = 1 is always degenerate, see the ``degenerate``
        family) and width.
    k : int, optional
        Size of S, ``d ≤ k ≤ n``; default ``max(d, n // 2)``.
    range : int
        Integer entries (numerators) are drawn from ``[−range, range]``.
    seed : int
        Seed of ``numpy.random.default_rng``.
    activation : str
        Any odd-linear activation (``relu``, ``gelu``, ``leaky_relu:1/2``, ...).
    biases : bool
        Draw random nonzero-range biases (they do not affect (★)).
    skip : {"identity", "unimodular", "permutation", "mhc"}
        The skip matrix A. ``mhc`` is a doubly stochastic invertible rational
        matrix ``H ⊗ I`` (a convex combination of permutations, as mHC's
        residual mixing); it reduces to the identity case through
        A⁻¹W_down (MATH.md §3, invertible skip).
    denominator : int, optional
        Store every array as integer numerators over ``q``. Default: the
        smallest q that keeps everything exact (1 for c = 1 and integer A;
        e.g. 3 for leaky_relu:1/2, where c = 3/2).
    streams : int, optional
        For ``skip="mhc"``: number of residual streams s (s divides d;
        default d), A = H ⊗ I_{d/s} with H doubly stochastic s × s.
    """

    family = "planted"
    d: int = 2
    n: int = 12
    k: int | None = None
    range: int = 5
    seed: int = 0
    activation: str = "relu"
    biases: bool = False
    skip: str = "identity"
    denominator: int | None = None
    streams: int | None = None
    act: object = field(default=None, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        check_sizes(self.d, self.n, self.seed, min_d=2, bound=self.range, k=default_k(self.d, self.n, self.k))
        self._set(k=default_k(self.d, self.n, self.k), act=odd_linear(self.activation), biases=bool(self.biases))
        check_skip(self.skip, self.d, self.streams)
        if self.denominator is not None:
            check_int("denominator", self.denominator, 1)


def planted(**options) -> Instance:
    """Exact weights with a hidden index set S satisfying (★); options: :class:`PlantedSpec`.

    Construction: U_S (k × d, the rows of S) is drawn uniformly from
    ``[−range, range]`` like the decoy rows, conditioned on its rows
    generating Z^d (for k = d: a random unimodular matrix). Then
    W_S (d × k) is a short integer solution of ``W_S·U_S = q²·(−A/c)``
    (a particular left inverse reduced modulo the LLL-reduced left null
    space lattice of U_S), plus a random small combination of that null
    space chosen so its entries match the decoys' magnitude. S is shuffled
    among decoy units whose rows are pairwise non-collinear and whose
    columns are nonzero, so the weights are nondegenerate (MATH.md §3).

    Returns
    -------
    Instance
        With metadata ``planted_S`` and ``params``.

    Raises
    ------
    InputError
        Invalid options (k < d, k > n, range < 1, d < 2, ...), named after the option.
    RuntimeError
        If the planted S fails the exact verifier (a bug).
    """
    return make_planted(PlantedSpec.of(options))


def make_planted(spec: PlantedSpec) -> Instance:
    """The ``planted`` instance of a validated spec."""
    start = begin(spec, c=spec.act.c)
    meta = params("planted", spec.seed, d=spec.d, n=spec.n, k=spec.k, range=spec.range, activation=spec.act.name,
                  biases=spec.biases, skip=spec.skip, denominator=start.q, streams=spec.streams)
    return plant(spec, start, meta)


# ================================================================== random
@dataclass(frozen=True)
class RandomSpec(Spec):
    """Options of the ``random`` family.

    Parameters
    ----------
    d, n, range, seed, activation, biases, skip, denominator, streams
        As in :class:`PlantedSpec` (``range`` unused for float weights).
    dtype : {"int", "float"}
        Integer or Gaussian float64 weights.
    """

    family = "random"
    d: int = 2
    n: int = 12
    range: int = 5
    seed: int = 0
    activation: str = "relu"
    biases: bool = False
    skip: str = "identity"
    denominator: int | None = None
    streams: int | None = None
    dtype: str = "int"
    act: object = field(default=None, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        check_sizes(self.d, self.n, self.seed, min_d=2, bound=self.range)
        check_choice("dtype", self.dtype, DTYPES)
        self._set(act=odd_linear(self.activation), biases=bool(self.biases))
        check_skip(self.skip, self.d, self.streams)
        if self.dtype == "float" and self.denominator not in (None, 1):
            raise InputError("denominator", "float weights take no denominator")
        if self.dtype == "int" and self.denominator is not None:
            check_int("denominator", self.denominator, 1)


def random(**options) -> Instance:
    """Unplanted, nondegenerate weights: negatives; options: :class:`RandomSpec`.

    Integer weights are uniform in ``[−range, range]`` (rows pairwise
    non-collinear, columns nonzero). For ``n ≤ 16`` the draw is repeated
    until a brute force finds no absorbing S, so those files are certified
    negatives (``params["negative"] = "brute_force"``); wider integer
    instances are ``"unchecked"``. Float weights are N(0, 1) (``range`` is
    unused) and negative with probability one (MATH.md §3, ``"generic"``).

    Returns
    -------
    Instance
        With metadata ``params`` (no ``planted_S``).
    """
    return make_random(RandomSpec.of(options))


def make_random(spec: RandomSpec) -> Instance:
    """The ``random`` instance of a validated spec."""
    start = begin(spec, exact=spec.dtype == "int")
    common = dict(d=spec.d, n=spec.n, activation=spec.act.name, biases=spec.biases, skip=spec.skip, streams=spec.streams, dtype=spec.dtype)
    if spec.dtype == "float":
        return _random_float(spec, start, params("random", spec.seed, **common, negative="generic"))
    negative = "brute_force" if spec.n <= BRUTE_CHECK_WIDTH else "unchecked"
    return _random_exact(spec, start, params("random", spec.seed, **common, range=spec.range, denominator=start.q, negative=negative))


def _random_exact(spec: RandomSpec, start: Start, meta: str) -> Instance:
    """Nondegenerate uniform integers; for small n, redrawn until no S exists."""
    d, n, bound, rng = spec.d, spec.n, spec.range, start.rng
    check_room(d, n, bound)
    for _ in range(ATTEMPTS):
        arrays = {
            "W_up": int_array(decoy_rows(rng, n, d, bound, set())),
            "W_down": int_array([list(r) for r in zip(*nonzero_columns(rng, n, d, bound))]),
            "skip": skip_array(start.skip, start.q),
        }
        arrays.update(biases(rng, spec.biases, n, d, bound))
        instance = Instance(**arrays, activation=spec.act.name, denominator=start.q, metadata={"params": meta},
                            source="construct random")
        if n > BRUTE_CHECK_WIDTH or not absorbing_sets_brute(instance):
            return instance
    raise InputError("range", f"every draw with range {bound} had an absorbing S; raise --range or --d")


def _random_float(spec: RandomSpec, start: Start, meta: str) -> Instance:
    d, n, rng = spec.d, spec.n, start.rng
    arrays = {"W_up": rng.standard_normal((n, d)), "W_down": rng.standard_normal((d, n)),
              "skip": None if start.skip is None else float_skip(start.skip, d)}
    if spec.biases:
        arrays.update(b_up=rng.standard_normal(n), b_down=rng.standard_normal(d))
    instance = Instance(**arrays, activation=spec.act.name, metadata={"params": meta}, source="construct random")
    if not find_degeneracy(instance).nondegenerate:
        raise RuntimeError("bug: Gaussian weights came out degenerate")
    return instance


# =========================================================== float planted
@dataclass(frozen=True)
class FloatPlantedSpec(Spec):
    """Options of the ``float_planted`` family.

    Parameters
    ----------
    d, n, k, seed, activation, biases, skip, streams
        As in :class:`PlantedSpec`.
    tol : str
        Tolerance τ (decimal or p/q, > 0) the planted S must meet exactly:
        ``max |c·W_down[:,S]·W_up[S,:] + A| ≤ τ``. Stored in ``params``.
    """

    family = "float_planted"
    d: int = 2
    n: int = 12
    k: int | None = None
    seed: int = 0
    activation: str = "relu"
    biases: bool = False
    skip: str = "identity"
    streams: int | None = None
    tol: str = "1e-9"
    act: object = field(default=None, init=False, repr=False, compare=False)
    tolerance: object = field(default=None, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        check_sizes(self.d, self.n, self.seed, min_d=2, k=default_k(self.d, self.n, self.k))
        self._set(k=default_k(self.d, self.n, self.k), act=odd_linear(self.activation), biases=bool(self.biases))
        tolerance = parse_fraction(str(self.tol), "tol")
        if tolerance <= 0:
            raise InputError("tol", "tolerance must be > 0")
        self._set(tolerance=tolerance)
        check_skip(self.skip, self.d, self.streams)


def float_planted(**options) -> Instance:
    """Gaussian weights where (★) holds up to float64 rounding; options: :class:`FloatPlantedSpec`.

    U_S and the decoys are N(0, 1); ``W_S = −A·pinv(U_S)/c + Y·N`` with N an
    orthonormal basis of the left null space of U_S and Y ~ N(0, 1), so the
    planted columns have the decoys' magnitude while ``W_S·U_S`` stays
    ``−A/c`` up to rounding. The draw is repeated until the exact residual
    is at most ``tol``; the file is meant for ``solve --tol``.
    """
    return make_float_planted(FloatPlantedSpec.of(options))


def make_float_planted(spec: FloatPlantedSpec) -> Instance:
    """The ``float_planted`` instance of a validated spec."""
    start = begin(spec, exact=False)
    meta = params("float_planted", spec.seed, d=spec.d, n=spec.n, k=spec.k, activation=spec.act.name, biases=spec.biases,
                  skip=spec.skip, streams=spec.streams, tol=str(spec.tol))
    for _ in range(ATTEMPTS):
        instance, index_set = _float_planted_draw(spec, start, meta)
        if verify(instance, index_set, tol=spec.tolerance).holds:
            return checked(instance, index_set, tol=spec.tolerance)
    raise InputError("tol", f"no draw met tolerance {spec.tol}; use a larger --tol")


def _float_planted_draw(spec: FloatPlantedSpec, start: Start, meta: str):
    """One Gaussian draw with W_S = T·U_S⁺ + Y·N (N: left null space of U_S).

    U_S⁺ and N are computed in exact rationals from the float64 draw and
    W_S is rounded to float64 once, at the end: the same seed gives the same
    bytes whatever BLAS numpy uses.
    """
    d, n, k, rng = spec.d, spec.n, spec.k, start.rng
    A = float_skip(start.skip, d)
    up_block = rng.standard_normal((k, d))
    mixing = rng.standard_normal((d, k - d))
    down_block = _exact_float_down_block(up_block, mixing, -A / float(spec.act.c))
    up = np.vstack([up_block, rng.standard_normal((n - k, d))])
    down = np.hstack([down_block, rng.standard_normal((d, n - k))])
    order = rng.permutation(n)
    index_set = sorted(int(p) for p, unit in enumerate(order) if unit < k)
    arrays = {"W_up": up[order], "W_down": down[:, order], "skip": None if start.skip is None else A}
    if spec.biases:
        arrays.update(b_up=rng.standard_normal(n), b_down=rng.standard_normal(d))
    metadata = {"planted_S": np.array(index_set, dtype=np.int64), "params": meta}
    return Instance(**arrays, activation=spec.act.name, metadata=metadata, source="construct float_planted"), index_set


def _exact_float_down_block(up_block: np.ndarray, mixing: np.ndarray, target: np.ndarray) -> np.ndarray:
    """``round(T·U⁺ + Y·N)`` from exact rationals: U⁺ = (UᵀU)⁻¹Uᵀ, N a left null space basis (rows scaled to max 1)."""
    k, d = up_block.shape
    up = fmpq_matrix(up_block)
    pseudo = (up.transpose() * up).inv() * up.transpose()
    denominator = math.lcm(*(int(up[i, j].q) for i in range(k) for j in range(d)))
    integral = flint.fmpz_mat([[int(up[i, j] * denominator) for i in range(k)] for j in range(d)])  # d × k
    null, nullity = integral.nullspace()  # columns: vectors v with Uᵀv = 0
    rows = []
    for j in range(nullity):
        column = [null[i, j] for i in range(k)]
        scale = max(abs(v) for v in column)
        rows.append([flint.fmpq(v) / scale for v in column])
    exact = fmpq_matrix(np.atleast_2d(target)) * pseudo
    if rows:
        exact += fmpq_matrix(np.atleast_2d(mixing)) * flint.fmpq_mat(rows)
    return np.array([[float(as_fraction(exact[r, c])) for c in range(k)] for r in range(d)], dtype=np.float64)  # correctly rounded
