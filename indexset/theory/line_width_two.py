"""Three residual-free blocks of width two on R whose composite turns four times or more (MATH.md §9.5, Theorem 9.21, extension).

When F has no zero slope and turns four or more times, the first block
must fold at a turn of F whose two sides match, and the second block must
fold at a turn of the matched side, inside its half-line. Each fold leaves
at most two candidate blocks (the kink budget of width two), and the third
block is then read off a half-line. :func:`three_blocks` tries them all.

>>> from fractions import Fraction as Q
>>> g = LineMap.of((Q(0),), (Q(-1), Q(1)), Q(0))             # |x|
>>> h = LineMap.of((Q(1),), (Q(-1), Q(1)), Q(0))             # |y − 1|
>>> k = LineMap.of((Q(1, 2),), (Q(-1), Q(1)), Q(0))          # |z − 1/2|
>>> F = k.after(h).after(g)                                   # turns 7 times
>>> maps = three_blocks(F)
>>> maps[2].after(maps[1]).after(maps[0]) == F
True
"""

from __future__ import annotations

import bisect
import itertools
from fractions import Fraction

from indexset.theory.line import LineMap, block_values, half_line
from indexset.theory.line_walk import turning_points

THREE_WIDTH_TWO = "MATH.md §9.5, Theorem 9.21 (three blocks of width two on R, the composite turning four times or more, no zero slope)"


def applies(target: LineMap) -> bool:
    """Theorem 9.21's hypothesis: no zero slope and at least four turns."""
    return all(s != 0 for s in target.slopes) and len(turning_points(target)) >= 4


def three_blocks(target: LineMap) -> list | None:
    """Theorem 9.21: three residual-free block maps of width 2 composing to F, or None when there are none.

    Only for F meeting :func:`applies`.
    """
    for first, half in first_folds(target, 2):
        rest = _second_and_third(half)
        if rest is not None:
            maps = [first, *rest]
            if maps[2].after(maps[1]).after(maps[0]) != target:
                raise AssertionError("bug: Theorem 9.21's three maps do not compose to F")
            return maps
    return None


def first_folds(target: LineMap, n: int):
    """Each fold g_1 at a turn of F whose sides match that is a block of width n, with the half K = F read through it on [0, ∞).

    For F with no zero slope (Theorem 9.21's first step): at each turn x_0
    with a lap matching θ, the two folds of :func:`_folds`. At width 2 a θ
    breaking twice or more leaves neither a block.
    """
    for x0 in turning_points(target):
        left, right = _sides(target, x0)
        theta = matching(left, right, None)
        for first, half in (_folds(x0, theta, left, right) if theta is not None else ()):
            if block_values(first, n) is not None:
                yield first, half


def _second_and_third(half: LineMap) -> tuple | None:
    """g_2, g_3 of width 2 with g_3 ∘ g_2 = K on [0, ∞): g_2 folds at a turn c of K inside (0, ∞) (Theorem 9.21's second step)."""
    for c in (t for t in turning_points(half) if t > 0):
        left, right = _sides(half, c)
        theta = matching(left, right, c)
        if theta is None or _inner_kinks(theta, c) > 1:
            continue
        for second, third in _second_candidates(c, theta, left, right):
            third = half_line(third)
            if block_values(second, 2) is not None and block_values(third, 2) is not None:
                return second, third
    return None


def _second_candidates(c: Fraction, theta: LineMap, left: LineMap, right: LineMap):
    """The folds of g_2 at c that the kink budget allows, each with the g_3 they leave on [0, ∞)."""
    one = Fraction(1)
    # (a) the right branch linear: g_2 is θ(c − y) left of c, y − c right of it; g_3 is K's right side.
    yield _fold_at(c, theta, mirrored=False), right
    # (b) the left branch linear: the right branch is θ⁻¹; g_3 = (K's right side) ∘ θ.
    yield _fold_at(c, theta.inverse(), mirrored=True), right.after(theta)
    if _inner_kinks(theta, c) == 0:
        # (b′) θ linear (slope λ): the right branch ρ = θ⁻¹ may break once more, at a breakpoint t ≥ θ(c) of K's right side;
        # g_2's slopes −1, 1/λ, r/λ then balance only with r = 1 + λ (Lemma 9.5), and g_3 = (K's right side) ∘ ρ⁻¹.
        slope = theta.slopes[0]
        for t in right.breakpoints:
            if t >= theta(c):
                branch = LineMap.of((t,), (one / slope, (one + slope) / slope), t / slope)  # ρ(0) = 0, so ρ(t) = t/λ
                yield _fold_at(c, branch, mirrored=True), right.after(branch.inverse())


def matching(left: LineMap, right: LineMap, end: Fraction | None) -> LineMap | None:
    """The increasing θ on [0, end] (end None: [0, ∞)) with left = right ∘ θ there, θ(0) = 0, or None when there is none.

    Both maps start at one value and have no zero slope, so θ is forced lap
    by lap: the turning values of ``left`` on (0, end) must be those of
    ``right`` in order, and ``left(end)`` must lie on the next lap of
    ``right`` (end None: the laps must be as many). θ is continued linearly
    past both ends.
    """
    laps_left, laps_right = _laps(left, end), _laps(right, None)
    if left(0) != right(0) or len(laps_left) > len(laps_right) or (end is None and len(laps_left) != len(laps_right)):
        return None
    pairs = [(Fraction(0), Fraction(0))]
    for (lo, hi), (lo2, hi2) in zip(laps_left, laps_right):
        if _direction(left, lo) != _direction(right, lo2):
            return None
        if hi is not None and not _within(right, lo2, hi2, left(hi)):
            return None
        if hi is not None and hi != end and left(hi) != right(hi2):
            return None  # a full lap of ``left`` ends at a turn, which must be ``right``'s
        points = {u for u in left.breakpoints if lo < u and (hi is None or u < hi)}
        points |= {_lap_inverse(left, lo, hi, right(v)) for v in right.breakpoints
                   if lo2 < v and (hi2 is None or v < hi2) and _within(left, lo, hi, right(v))}
        points |= {hi} if hi is not None else set()
        pairs += [(u, _lap_inverse(right, lo2, hi2, left(u))) for u in sorted(points) if u > lo]
    inner = [(b[1] - a[1]) / (b[0] - a[0]) for a, b in itertools.pairwise(pairs)]
    if end is None:
        tail = left.slopes[-1] / right.slopes[-1]
        inner = inner or [tail]
    else:
        tail = inner[-1]
    return LineMap.of([u for u, _ in pairs], [inner[0], *inner, tail], Fraction(0))


def _inner_kinks(theta: LineMap, end: Fraction | None) -> int:
    return sum(1 for t in theta.breakpoints if t > 0 and (end is None or t < end))


def _sides(phi: LineMap, x0: Fraction) -> tuple:
    """phi read outward from x0: u ↦ phi(x0 − u) and v ↦ phi(x0 + v)."""
    left = LineMap.sampled([x0 - b for b in phi.breakpoints], lambda u: phi(x0 - u))
    right = LineMap.sampled([b - x0 for b in phi.breakpoints], lambda v: phi(x0 + v))
    return left, right


def _laps(phi: LineMap, end: Fraction | None) -> list:
    """The maximal intervals of [0, end] on which phi is monotone, as (lo, hi), hi None for an unbounded last one."""
    turns = [t for t in turning_points(phi) if t > 0 and (end is None or t < end)]
    ends = [Fraction(0), *turns]
    return list(zip(ends, [*turns, end]))


def _direction(phi: LineMap, at: Fraction) -> int:
    return 1 if phi.slopes[bisect.bisect_right(phi.breakpoints, at)] > 0 else -1


def _within(phi: LineMap, lo: Fraction, hi: Fraction | None, value: Fraction) -> bool:
    """Whether phi takes ``value`` on its lap [lo, hi] (at its ends included)."""
    if hi is None:
        return (value - phi(lo)) * _direction(phi, lo) >= 0
    return min(phi(lo), phi(hi)) <= value <= max(phi(lo), phi(hi))


def _lap_inverse(phi: LineMap, lo: Fraction, hi: Fraction | None, value: Fraction) -> Fraction:
    """The x in the lap [lo, hi] of phi with phi(x) = value (phi strictly monotone there)."""
    points = [lo, *(t for t in phi.breakpoints if lo < t and (hi is None or t < hi))]
    for a, b in itertools.pairwise([*points, hi] if hi is not None else points):
        if min(phi(a), phi(b)) <= value <= max(phi(a), phi(b)):
            return a + (value - phi(a)) * (b - a) / (phi(b) - phi(a))
    last = points[-1]
    return last + (value - phi(last)) / phi.slopes[bisect.bisect_right(phi.breakpoints, last)]


def _fold_at(x0: Fraction, inner: LineMap, mirrored: bool) -> LineMap:
    """The fold at x0: x − x0 right of it and inner(x0 − x) left (mirrored: x0 − x left and inner(x − x0) right)."""
    points = [x0, *(x0 - t for t in inner.breakpoints), *(x0 + t for t in inner.breakpoints)]
    if mirrored:
        return LineMap.sampled(points, lambda x: x0 - x if x <= x0 else inner(x - x0))
    return LineMap.sampled(points, lambda x: x - x0 if x >= x0 else inner(x0 - x))


def _folds(x0: Fraction, theta: LineMap, left: LineMap, right: LineMap):
    """g_1's two folds at x0 (Theorem 9.21's first step), each with the half K = F read through it on [0, ∞)."""
    yield _fold_at(x0, theta, mirrored=False), right
    yield _fold_at(x0, theta.inverse(), mirrored=True), left
