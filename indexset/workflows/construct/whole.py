"""The ``whole-stack`` family: ReLU stacks on R that absorb as a whole and not block by block (MATH.md §9.5).

Built backwards from the witness (Proposition 9.7): two residual-free
blocks g_1, g_2 of width n that are increasing homeomorphisms of R, with
one breakpoint t* of g_1 sent onto a breakpoint y* of g_2; a fold
h(y) = y* + λ(y − y*) for y > y* (identity below); then
f_1 = h⁻¹ ∘ g_1 and f_2 = g_2 ∘ h. So f_2 ∘ f_1 = g_2 ∘ g_1 exactly, each
f_i has n breakpoints (h's fold sits on one of g_1's and one of g_2's), and
λ is drawn until neither f_i passes the subset condition of Lemma 9.5, so
neither block absorbs its skip on its own.

For d ≥ 2 (``d``, the parallel-units case of MATH.md §9.5, Proposition
9.10) the line stack of width n − 2(d − 1) acts on x_1 and every other
coordinate passes through: f_l(x) = (f_l¹(x_1), x_2, …, x_d), all unit rows
multiples of e_1 (rank-one W_up; the 2(d − 1) extra units come in pairs
σ(x_1) − σ(−x_1) = x_1 into the first output, the skip compensating). The
witness adds σ(x_k) − σ(−x_k) = x_k for each k ≥ 2.

The witness stack travels in the file as metadata (``witness_W_up`` …
over ``witness_denominator``); :func:`witness_of` reads it back.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from indexset.exact import pwl
from indexset.exact.witness import block_instance
from indexset.model.instance import Instance
from indexset.model.stack import Stack
from indexset.theory.line import LineMap, balanced, block_values, lift, lifted_width
from indexset.workflows.construct.spec import ATTEMPTS, Spec, check_int, params

FOLDS = (Fraction(2), Fraction(1, 2), Fraction(3), Fraction(1, 3), Fraction(3, 2), Fraction(2, 3), Fraction(5, 2), Fraction(2, 5))
"""Slopes λ tried for the fold of h, in a seeded order."""

WITNESS_KEYS = ("W_up", "b_up", "W_down", "b_down")


@dataclass(frozen=True)
class WholeStackSpec(Spec):
    """Options of the ``whole-stack`` family.

    Parameters
    ----------
    n : int
        Width of both blocks, n ≥ 2 + 2(d − 1).
    d : int
        Input dimension; for d ≥ 2 the line stack of width n − 2(d − 1)
        acts on x_1.
    range : int
        Jumps of g_1, g_2 are integers in [1, range]; breakpoints integers
        in [−max(range, n), max(range, n)] (g_2's around y*).
    seed : int
        Seed of every draw.
    """

    family = "whole_stack"
    n: int = 3
    range: int = 3
    seed: int = 0
    d: int = 1

    def __post_init__(self) -> None:
        check_int("d", self.d, 1)
        check_int("n", self.n, 2 * self.d)
        check_int("range", self.range, 1)
        check_int("seed", self.seed, 0)


def whole_stack(**options) -> Stack:
    """A two-block ReLU stack (on R, or lifted to R^d) that absorbs only as a whole; options: :class:`WholeStackSpec`."""
    return make_whole_stack(WholeStackSpec.of(options))


def make_whole_stack(spec: WholeStackSpec) -> Stack:
    """The ``whole-stack`` of a validated spec, its witness checked by exact region enumeration."""
    rng, line = np.random.default_rng(spec.seed), dataclasses.replace(spec, d=1, n=lifted_width(spec.n, spec.d))
    for _ in range(ATTEMPTS):
        first, second, fold = _homeomorphism(line, rng, None), None, None
        t_star = first.breakpoints[int(rng.integers(len(first.breakpoints)))]
        second = _homeomorphism(line, rng, (first(t_star), set(first.values())))
        for i in rng.permutation(len(FOLDS)):
            fold = LineMap.of((first(t_star),), (Fraction(1), FOLDS[i]), first(t_star))
            blocks = (fold.inverse().after(first), second.after(fold))
            if _neither_absorbs(blocks, line.n) and len(second.after(first).breakpoints) == 2 * line.n - 1:
                return _stack(spec, blocks, (first, second))
    raise RuntimeError(f"no whole-stack example found in {ATTEMPTS} draws (n = {spec.n}, range = {spec.range})")


def _homeomorphism(spec: WholeStackSpec, rng: np.random.Generator, around) -> LineMap:
    """An increasing residual-free block with n breakpoints: units c·relu(x − t) and −c·relu(t − x), c ≥ 1, both kinds present.

    ``around``: (y*, values to avoid): y* is one breakpoint, the others
    avoid those values (so g_2's breakpoints meet g_1's images only at y*).
    """
    spread = max(spec.range, spec.n)
    centre, avoid = (Fraction(0), set()) if around is None else around
    pool = [centre + k for k in range(-spread, spread + 1) if centre + k not in avoid and centre + k != centre]
    points = sorted(rng.choice(pool, size=spec.n if around is None else spec.n - 1, replace=False).tolist())
    if around is not None:
        points = sorted([*points, centre])
    right = rng.permutation([True] + [False] + [bool(b) for b in rng.integers(0, 2, size=spec.n - 2)])
    weights = rng.integers(1, spec.range + 1, size=spec.n)
    left_slope = Fraction(int(sum(w for w, r in zip(weights, right) if not r)))
    slopes = [left_slope]
    for w, r in zip(weights, right):
        slopes.append(slopes[-1] + (int(w) if r else -int(w)))
    return LineMap.of([Fraction(p) for p in points], slopes, Fraction(0))


def _neither_absorbs(blocks, n: int) -> bool:
    return all(len(f.breakpoints) == n and balanced(f.jumps(), f.slopes[-1]) is None for f in blocks)


def _residual_values(f: LineMap) -> dict:
    """A residual block equal to f: skip = f's slope at −∞, one unit δ·relu(x − t) per breakpoint."""
    jumps = f.jumps()
    at_zero = sum((j * max(-t, 0) for t, j in zip(f.breakpoints, jumps)), Fraction(0))
    return {"W_up": np.array([[Fraction(1)] for _ in jumps], dtype=object),
            "b_up": np.array([-t for t in f.breakpoints], dtype=object),
            "W_down": np.array([list(jumps)], dtype=object), "skip": np.array([[f.slopes[0]]], dtype=object),
            "b_down": np.array([f(0) - at_zero], dtype=object)}


def _integers(values: list) -> tuple[list, int]:
    """Every array of every dict as int64 numerators over one common denominator."""
    den = math.lcm(*(Fraction(v).denominator for d in values for a in d.values() for v in a.ravel()))
    return [{k: np.array([int(v * den) for v in a.ravel()], dtype=np.int64).reshape(a.shape) for k, a in d.items()}
            for d in values], den


def _stack(spec: WholeStackSpec, maps: tuple, witness_maps: tuple) -> Stack:
    width = lifted_width(spec.n, spec.d)
    numerators, den = _integers([lift(_residual_values(f), spec.d, residual=True) for f in maps])
    meta = {"params": np.array(params("whole_stack", spec.seed, n=spec.n, range=spec.range, d=spec.d))}
    blocks = [Instance(**values, activation="relu", denominator=den, source="construct whole-stack") for values in numerators]
    witness, witness_den = _integers([lift(block_values(g, width), spec.d, residual=False) for g in witness_maps])
    for key in WITNESS_KEYS:
        meta[f"witness_{key}"] = np.stack([w[key] for w in witness])
    meta["witness_denominator"] = np.array(witness_den, dtype=np.int64)
    built = Stack(blocks, meta, "construct whole-stack")
    comparison = pwl.compare(built, witness_of(built))
    if not comparison.equal:
        raise RuntimeError(f"bug: the whole-stack witness differs from the stack: {comparison.describe()}")
    return built


def witness_of(stack: Stack) -> Stack:
    """The residual-free witness stack a ``whole-stack`` file carries in its metadata."""
    den = int(stack.metadata["witness_denominator"])
    blocks = []
    for layer, block in enumerate(stack.blocks):
        values = {key: np.vectorize(lambda v: Fraction(int(v), den), otypes=[object])(np.asarray(stack.metadata[f"witness_{key}"])[layer])
                  for key in WITNESS_KEYS}
        blocks.append(block_instance(block, values, "construct"))
    return Stack(blocks, source=f"witness of {stack.source}")
