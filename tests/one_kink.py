"""Independent references for three bias-free blocks on R (MATH.md §9.5, Theorem 9.15e), none of them the code under test.

- ``two_kink_forms(R)`` is Lemma 9.15f's list of forms, read off R's
  slopes and values: whether R = P_3 ∘ P_2 with P_2, P_3 breaking at most
  once each.
- ``three_by_forms(F)`` is Theorem 9.15e with a wide net instead of its
  few slopes: every ratio of products of two of F's slopes, and random
  ones, for a homeomorphic first block; the half-line cases solved for the
  added breakpoint by its value.
- ``three_by_brute_force(F)`` shares nothing with the lemma: first maps from
  a small grid, each later map read off level by level
  (``line_pairs.second_block_for``).
"""

from __future__ import annotations

import itertools
from fractions import Fraction

from line_pairs import second_block_for

from indexset.theory.line import LineMap

GRID = [Fraction(v) for v in (-3, -2, -1, Fraction(-1, 2), Fraction(-1, 3), 0, Fraction(1, 3), Fraction(1, 2), 1, 2, 3)]


def two_kink_forms(target: LineMap) -> bool:
    """Lemma 9.15f's forms: at most one breakpoint; two with a side of one sign or flat; three folded with equal ends."""
    points, r = target.breakpoints, target.slopes
    if len(points) <= 1:
        return True
    if len(points) == 2:
        return r[0] * r[1] > 0 or r[1] * r[2] > 0 or r[0] == 0 or r[2] == 0 or (r[1] == 0 and r[0] * r[2] < 0)
    if len(points) == 3:
        return r[1] * r[2] < 0 and r[0] * r[2] == r[1] * r[3] and target(points[0]) == target(points[2])
    return False


def _read_through(target: LineMap, p: Fraction) -> LineMap:
    """F ∘ P⁻¹ for P with slopes p left of 0 and 1 right, by evaluation at the images of F's breakpoints."""
    images = [t * p if t < 0 else t for t in target.breakpoints] + [Fraction(0)]
    return LineMap.sampled(images, lambda y: target(y / p if y < 0 else y))


def _folded(target: LineMap) -> bool:
    """Some λ < 0, a ratio of a breakpoint left of 0 to one right of it, with F(x) = F(λx) for every x ≥ 0."""
    right = [t for t in target.breakpoints if t > 0]
    left = [t for t in target.breakpoints if t < 0]
    ratios = {a / b for a in left for b in right} or ({target.slopes[-1] / target.slopes[0]} if target.slopes[0] else set())

    def same(lam):
        # Both sides are linear between F's breakpoints right of 0 and the points λ sends onto its left ones: equal at those and beyond.
        xs = sorted({Fraction(0), *right, *(a / lam for a in left)})
        return all(target(x) == target(lam * x) for x in [*xs, xs[-1] + 1])

    return any(lam < 0 and same(lam) for lam in ratios)


def _right_half_extends(target: LineMap) -> bool:
    """Some R of the forms agrees with F on [0, ∞): the linear continuation, or a breakpoint y ≤ 0 where F(v) is met again."""
    right = [t for t in target.breakpoints if t > 0]
    start = target.slopes_at(Fraction(0))[1]
    linear = LineMap.sampled(right, lambda x: target(x) if x >= 0 else target(0) + start * x)
    if two_kink_forms(linear):
        return True
    if len(right) != 2 or start == 0:
        return False
    u, v = right
    y = u + (target(v) - target(u)) / start  # where the line through (u, F(u)) with F's slope on (0, u) reaches F(v)
    if y > 0:
        return False
    middle = (target(v) - target(u)) / (v - u)
    if middle == 0:
        return False
    left = start * target.slopes[-1] / middle
    extended = LineMap.of((y, u, v), (left, start, middle, target.slopes[-1]), target(u) + start * (y - u))
    return two_kink_forms(extended)


def three_by_forms(target: LineMap, rng) -> bool:
    """Theorem 9.15e by a wide net: homeomorphic first blocks with many p, folds onto itself, flat half-lines."""
    slopes = [s for s in target.slopes if s != 0]
    net = {a * b / (c * d) for a, b, c, d in itertools.product(slopes, repeat=4)}
    net |= {Fraction(int(rng.integers(1, 50)), int(rng.integers(1, 50))) for _ in range(20)} | {Fraction(1)}
    if any(two_kink_forms(_read_through(target, p)) for p in net if p > 0):
        return True
    if _folded(target) and _right_half_extends(target):
        return True
    if target.slopes[0] == 0 and all(t >= 0 for t in target.breakpoints) and _right_half_extends(target):
        return True
    mirrored = LineMap.sampled([-t for t in target.breakpoints], lambda x: target(-x))
    return target.slopes[-1] == 0 and all(t <= 0 for t in target.breakpoints) and _right_half_extends(mirrored)


def _normalised_first_maps(kink: Fraction):
    """One-breakpoint maps at ``kink`` up to scaling of their output: slopes (a, 1) for a in the grid, and (1, 0)."""
    for a in GRID:
        yield LineMap.of((kink,), (a, Fraction(1)), Fraction(0))
    yield LineMap.of((kink,), (Fraction(1), Fraction(0)), Fraction(0))


def two_kink_by_brute_force(target: LineMap) -> bool:
    """Some P_2 from the grid, breaking at 0 or at a breakpoint of R, with R read through it breaking at most once."""
    for kink in {Fraction(0), *target.breakpoints}:
        for first in _normalised_first_maps(kink):
            second = second_block_for(target, first, 4)
            if second is not None and len(second.breakpoints) <= 1:
                return True
    return False


def three_by_brute_force(target: LineMap) -> bool:
    """A grid first block breaking at 0; the composite of the other two read off level by level and tried the same way."""
    for first in _normalised_first_maps(Fraction(0)):
        outer = second_block_for(target, first, 4)
        if outer is not None and two_kink_by_brute_force(outer):
            return True
    return False
