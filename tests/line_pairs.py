"""Independent references for two blocks on R (MATH.md §9.5), none of them the code of Theorem 9.12.

- ``width_two_pair(F)`` is the proof of Theorem 9.11 as code: a
  homeomorphic first block (``line_folds.homeomorphic_first``), or a first
  block folding once at a turning point of F whose two sides match lap by
  lap. For F without a zero slope it finds a pair iff one exists, by an
  argument that shares nothing with the fold walk of Theorem 9.12.
- ``second_block_for(F, g_1, n)`` is brute force's inner step: given any
  first map g_1, whether F factors as g_2 ∘ g_1 with g_2 a residual-free
  block of width n, read off level by level.
"""

from __future__ import annotations

import bisect
import itertools
from fractions import Fraction

from indexset.theory.line import LineMap, block_values
from indexset.theory.line_folds import homeomorphic_first


def second_block_for(target: LineMap, first: LineMap, n: int) -> LineMap | None:
    """g_2 with g_2 ∘ first = F, continued linearly past first's image, if it is a residual-free block of width n; else None.

    Between consecutive images of the breakpoints of ``first`` and of F,
    every piece of ``first`` meets F where both are affine, so F is a
    function of the level iff all preimages of each such level, and of one
    level inside each gap, carry one value of F.
    """
    values = first.values()
    lows = [v for v in values] + [first(t) for t in target.breakpoints]
    top = None if first.slopes[-1] > 0 or first.slopes[0] < 0 else max(lows or [first(0)])
    bottom = None if first.slopes[-1] < 0 or first.slopes[0] > 0 else min(lows or [first(0)])
    levels = sorted(set(lows)) or [first(0)]
    probe = [*levels, *((a + b) / 2 for a, b in itertools.pairwise(levels))]
    probe += [levels[0] - 1] if bottom is None else []
    probe += [levels[-1] + 1] if top is None else []
    table = {}
    for y in probe:
        xs = _all_preimages(first, y)
        if not xs:
            continue
        heights = {target(x) for x in xs}
        if len(heights) != 1:
            return None
        table[y] = heights.pop()
    ys = sorted(table)
    if len(ys) == 1:
        second = LineMap.of((), (Fraction(0),), table[ys[0]])
    else:
        inner = [(table[b] - table[a]) / (b - a) for a, b in itertools.pairwise(ys)]
        second = LineMap.of(ys, [inner[0], *inner, inner[-1]], table[ys[0]])
    if second.after(first) != target or block_values(second, n) is None:
        return None
    return second


def _all_preimages(phi: LineMap, y: Fraction) -> list:
    """Points x with φ(x) = y: one per piece where φ is not constant, both ends of a constant piece at y."""
    points = list(phi.breakpoints)
    edges = [None, *points, None]
    out = set()
    for i, slope in enumerate(phi.slopes):
        lo, hi = edges[i], edges[i + 1]
        base = points[0] if i == 0 and points else (points[i - 1] if points else Fraction(0))
        at = phi(base)
        if slope == 0:
            if at == y:
                out.update(v for v in (lo, hi) if v is not None)
                if lo is None or hi is None:
                    out.add(Fraction(0) if lo is None and hi is None else (hi - 1 if lo is None else lo + 1))
                else:
                    out.add((lo + hi) / 2)
            continue
        x = base + (y - at) / slope
        if (lo is None or x >= lo) and (hi is None or x <= hi):
            out.add(x)
    return sorted(out)


def small_first_blocks(n: int, mirrored: bool = False):
    """Every function of a residual-free ReLU block of width n on R with u ∈ {±1}, b ∈ {−1, 0, 1}, w ∈ {−1, 1, 2}; and its negative if ``mirrored``."""
    units = [(u, b, w) for u in (-1, 1) for b in (-1, 0, 1) for w in (-1, 1, 2)]
    seen = set()
    for chosen in itertools.combinations_with_replacement(units, n):
        points = sorted({Fraction(-b, u) for u, b, _ in chosen})
        phi = LineMap.sampled(points, lambda x, chosen=chosen: sum(w * max(u * x + b, 0) for u, b, w in chosen))
        for shape in (phi, LineMap.of(phi.breakpoints, [-s for s in phi.slopes], -phi.anchor)) if mirrored else (phi,):
            if shape not in seen:
                seen.add(shape)
                yield shape


def width_two_pair(target: LineMap) -> tuple | None:
    """Two residual-free blocks of width 2 composing to F (no zero slope), or None when Theorem 9.11 says there are none."""
    return homeomorphic_first(target, 2) or folded_first(target)


def folded_first(target: LineMap) -> tuple | None:
    """Width two: a folding first block g_1 and g_2, both residual-free blocks of width 2 with g_2 ∘ g_1 = F, or None.

    For F with no zero slope (Theorem 9.11): g_1 folds once, at a turning
    point x_0 of F, and its laps are linear but for at most one kink, so
    A(u) = F(x_0 − u) and B(v) = F(x_0 + v) satisfy A = B ∘ θ for the one
    homeomorphism θ of [0, ∞) that matches their laps (:func:`lap_matching`).
    θ with no kink gives g_1 a V; with one kink, the kink sits on one lap or
    the other. Every such candidate is tried.

    Returns
    -------
    tuple or None
        ``(g_1, g_2)`` as :class:`LineMap`.
    """
    slopes = target.slopes
    for j, x0 in enumerate(target.breakpoints):
        if slopes[j] * slopes[j + 1] >= 0:
            continue
        left = LineMap.sampled([x0 - b for b in target.breakpoints], lambda u, x0=x0: target(x0 - u))
        right = LineMap.sampled([b - x0 for b in target.breakpoints], lambda v, x0=x0: target(x0 + v))
        theta = lap_matching(left, right)
        if theta is None or sum(1 for t in theta.breakpoints if t > 0) > 1:
            continue
        # Kink (if any) on the left lap: g_1 = θ(x_0 − x) left, x − x_0 right, g_2 = B; on the right lap: the mirror.
        for outer, inner in ((right, theta), (left, theta.inverse())):
            first = _fold_at(x0, inner, mirrored=outer is left)
            second = _half_line(outer)
            if block_values(first, 2) is not None and block_values(second, 2) is not None:
                return first, second
    return None


def lap_matching(left: LineMap, right: LineMap) -> LineMap | None:
    """The increasing homeomorphism θ of [0, ∞) with left = right ∘ θ there (extended linearly below 0), or None.

    Both maps start at one value and have no zero slope on [0, ∞), so θ is
    forced lap by lap: their turning values must agree in order and their
    last laps must leave in the same direction; inside a lap θ is
    right⁻¹ ∘ left, linear between the breakpoints of either.
    """
    laps_left, laps_right = _laps(left), _laps(right)
    start = bisect.bisect_right(left.breakpoints, Fraction(0)), bisect.bisect_right(right.breakpoints, Fraction(0))
    if len(laps_left) != len(laps_right) or left(0) != right(0) or left.slopes[start[0]] * right.slopes[start[1]] <= 0:
        return None
    pairs = [(Fraction(0), Fraction(0))]
    for (lo, hi), (lo2, hi2) in zip(laps_left, laps_right):
        if hi is not None and (hi2 is None or left(hi) != right(hi2)):
            return None
        points = {u for u in left.breakpoints if lo < u and (hi is None or u < hi)}
        points |= {_lap_inverse(left, lo, hi, right(v)) for v in right.breakpoints if lo2 < v and (hi2 is None or v < hi2)}
        pairs += [(u, _lap_inverse(right, lo2, hi2, left(u))) for u in sorted(points)]
        if hi is not None:
            pairs.append((hi, hi2))
    end_left, end_right = left.slopes[-1], right.slopes[-1]
    if end_left * end_right <= 0:
        return None
    inner = [(b[1] - a[1]) / (b[0] - a[0]) for a, b in itertools.pairwise(pairs)]
    pieces = [inner[0] if inner else end_left / end_right, *inner, end_left / end_right]
    return LineMap.of([u for u, _ in pairs], pieces, Fraction(0))


def _laps(phi: LineMap) -> list:
    """The maximal intervals of [0, ∞) on which phi is monotone, as (lo, hi) with hi None for the last."""
    turns = [t for j, t in enumerate(phi.breakpoints) if t > 0 and phi.slopes[j] * phi.slopes[j + 1] < 0]
    ends = [Fraction(0), *turns]
    return [(lo, hi) for lo, hi in zip(ends, [*turns, None])]


def _lap_inverse(phi: LineMap, lo: Fraction, hi: Fraction | None, value: Fraction) -> Fraction:
    """The x in the lap [lo, hi] of phi with phi(x) = value (phi strictly monotone there)."""
    points = [lo, *(t for t in phi.breakpoints if lo < t and (hi is None or t < hi))]
    for a, b in itertools.pairwise([*points, hi] if hi is not None else points):
        if min(phi(a), phi(b)) <= value <= max(phi(a), phi(b)):
            return a + (value - phi(a)) / ((phi(b) - phi(a)) / (b - a))
    last = points[-1]
    return last + (value - phi(last)) / phi.slopes[bisect.bisect_right(phi.breakpoints, last)]


def _fold_at(x0: Fraction, inner: LineMap, mirrored: bool) -> LineMap:
    """g_1 with its fold at x_0: x − x_0 on the right and inner(x_0 − x) on the left (mirrored: the other way round)."""
    points = [x0, *(x0 - t for t in inner.breakpoints if t > 0), *(x0 + t for t in inner.breakpoints if t > 0)]
    if mirrored:
        return LineMap.sampled(points, lambda x: x0 - x if x <= x0 else inner(x - x0))
    return LineMap.sampled(points, lambda x: x - x0 if x >= x0 else inner(x0 - x))


def _half_line(phi: LineMap) -> LineMap:
    """phi on [0, ∞), continued linearly below 0 (no breakpoint at 0 or before)."""
    kept = [t for t in phi.breakpoints if t > 0]
    first_slope = phi.slopes[bisect.bisect_right(phi.breakpoints, Fraction(0))]
    return LineMap.sampled(kept, lambda y: phi(y) if y >= 0 else phi(Fraction(0)) + first_slope * y)
