"""Bounded flat pieces of F on R: collapse them for the fold walk, and put them back into a witness (MATH.md §9.5, Lemma 9.17, extension).

Collapsing every bounded interval where F is flat to a point c gives F̃
(``Collapsed.reduced``), flat at most on its end pieces, with F = F̃ ∘ κ.
A witness for F is one for F̃ in which each plateau point c is either
*flat* (g_1 constant on the plateau) or *passes*: g_1 crosses, or dips into
and leaves, a range of levels K inserted at ℓ(c) where g_2 is flat (or the
flat region beyond an edge of ℓ's image). :func:`uncollapse` builds g_1 and
g_2 on the original line from the collapsed maps and those choices.

>>> from fractions import Fraction as Q
>>> from indexset.theory.line import LineMap, preimages
>>> F = LineMap.of((Q(0), Q(1), Q(3)), (Q(1), Q(0), Q(2), Q(-1)), Q(0))   # flat on [0, 1]
>>> collapsed = collapse(F)
>>> [(str(p.start), str(p.stop), str(p.point)) for p in collapsed.plateaus]
[('0', '1', '0')]
>>> [str(t) for t in collapsed.reduced.breakpoints], [str(s) for s in collapsed.reduced.slopes]
(['0', '2'], ['1', '2', '-1'])
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

from indexset.theory.line import LineMap, preimages


@dataclass(frozen=True)
class Plateau:
    """A bounded interval [start, stop] where F is flat, and the point it collapses to."""

    start: Fraction
    stop: Fraction
    point: Fraction

    @property
    def length(self) -> Fraction:
        return self.stop - self.start


@dataclass(frozen=True)
class Collapsed:
    """F with its bounded flat pieces collapsed.

    Attributes
    ----------
    reduced : LineMap
        F̃, with F = F̃ ∘ κ; flat at most on its end pieces.
    plateaus : tuple of Plateau
        Left to right.
    domain : tuple
        ``(lo, hi)`` in collapsed coordinates: where F̃ leaves its flat ends
        (None: no flat end on that side).
    """

    reduced: LineMap
    plateaus: tuple
    domain: tuple

    def points(self) -> dict:
        """Plateau point c → Plateau."""
        return {p.point: p for p in self.plateaus}

    def expand(self, y: Fraction) -> Fraction:
        """The original x of a collapsed point (a plateau's start for its point)."""
        return _expand(self.plateaus, y)

    def shrink(self, x: Fraction) -> Fraction:
        """κ(x): the collapsed coordinate of an original x."""
        return _shrink(self.plateaus, x)


def _expand(plateaus: tuple, y: Fraction) -> Fraction:
    return y + sum((p.length for p in plateaus if p.point < y), Fraction(0))


def _shrink(plateaus: tuple, x: Fraction) -> Fraction:
    out = x
    for p in plateaus:
        if x >= p.stop:
            out -= p.length
        elif x > p.start:
            out -= x - p.start
    return out


def collapse(target: LineMap) -> Collapsed | None:
    """F's bounded flat pieces collapsed to points (None when F is constant)."""
    points, slopes = target.breakpoints, target.slopes
    if all(s == 0 for s in slopes):
        return None
    pieces = [(points[i - 1], points[i]) for i in range(1, len(slopes) - 1) if slopes[i] == 0]
    plateaus, removed = [], Fraction(0)
    for start, stop in pieces:
        plateaus.append(Plateau(start, stop, start - removed))
        removed += stop - start
    lo = points[0] if slopes[0] == 0 else None
    hi = points[-1] if slopes[-1] == 0 else None
    plateaus = tuple(plateaus)
    kept = sorted({_shrink(plateaus, t) for t in points})
    reduced = LineMap.sampled(kept, lambda y: target(_expand(plateaus, y)))
    domain = tuple(None if t is None else _shrink(plateaus, t) for t in (lo, hi))
    return Collapsed(reduced, plateaus, domain)


def uncollapse(collapsed: Collapsed, first: LineMap, second: LineMap, passing: dict) -> tuple | None:
    """g_1 and g_2 on the original line, from collapsed maps z = h ∘ ℓ (``first``) and G ∘ h⁻¹ (``second``).

    Parameters
    ----------
    collapsed : Collapsed
    first : LineMap
        g̃_1 on the collapsed line (its flat ends already as chosen).
    second : LineMap
        g̃_2 on g̃_1's levels (flat past an edge already as chosen).
    passing : dict
        Plateau point → ``cross``, ``dip`` or ``beyond`` (absent: flat).

    Returns
    -------
    tuple or None
        ``(g_1, g_2)`` as LineMaps on the original line and levels; None when
        the plateau points sharing one inserted range need lengths no single
        range has (each crossing path with one kink, Lemma 9.17).
    """
    plateaus = collapsed.points()
    sharing = {}
    for c, kind in passing.items():
        if kind != "beyond":
            sharing.setdefault(first(c), []).append(c)
    inserted = {}  # collapsed level → the length of the range inserted there
    for level, points in sharing.items():
        length = _range_length([(passing[c], *map(abs, first.slopes_at(c)), plateaus[c].length) for c in points])
        if length is None:
            return None
        inserted[level] = length
    paths = {}  # plateau point → (entry slope, leave slope, time of the path's kink or turn)
    for c, kind in passing.items():
        entry, leave = first.slopes_at(c)
        paths[c] = (entry, leave, _turn(kind, abs(entry), abs(leave), plateaus[c].length, inserted.get(first(c))))
    levels = sorted(inserted)

    def below(w: Fraction, include: bool) -> Fraction:
        return sum((inserted[y] for y in levels if y < w or (include and y == w)), Fraction(0))

    def at(x: Fraction) -> Fraction:
        return _first_value(collapsed, first, x, paths, below)

    candidates = {collapsed.expand(t) for t in first.breakpoints}
    for p in collapsed.plateaus:
        candidates |= {p.start, p.stop}
        if p.point in paths:
            candidates.add(p.start + paths[p.point][2])
    for y in levels:
        candidates |= {collapsed.expand(x) for x in preimages(first, y)}
    g1 = LineMap.sampled(sorted(candidates), at)
    return g1, _second_map(second, inserted, levels, below)


def _first_value(collapsed: Collapsed, first: LineMap, x: Fraction, paths: dict, below) -> Fraction:
    """g_1 at an original x: on a plateau its path (or its constant), elsewhere z shifted by the ranges inserted below."""
    for p in collapsed.plateaus:
        if p.start <= x <= p.stop:
            w = first(p.point)
            entry, leave = first.slopes_at(p.point)
            from_below = entry > 0
            base = w + below(w, include=not from_below)
            if p.point not in paths:
                return base
            entry, leave, turn = paths[p.point]
            t = x - p.start
            return base + (entry * t if t <= turn else entry * turn + leave * (t - turn))
    y = collapsed.shrink(x)
    w = first(y)
    lo, hi = collapsed.domain
    # Past a flat end g_1 stays where the domain's end left it.
    end = lo if lo is not None and y <= lo else hi if hi is not None and y >= hi else y
    left, right = first.slopes_at(end)
    # At a level where a range was inserted, a point g_1 only touches sits on the edge it comes from.
    return w + below(w, include=left < 0 if left != 0 else right > 0)


def _range_length(paths: list) -> Fraction | None:
    """One length for a range that every path ``(kind, |entry|, |leave|, plateau length)`` through it fits, or None.

    A crossing with one change of slope covers from |entry|·L to |leave|·L
    (the ends: one slope throughout, the change at the plateau's edge;
    exactly |entry|·L when the two are equal); a dip of depth
    L·|entry|·|leave|/(|entry| + |leave|) fits in any range at least as long.
    """
    low, high, floor = Fraction(0), None, Fraction(0)
    for kind, entry, leave, length in paths:
        if kind == "cross":
            low = max(low, min(entry, leave) * length)
            high = max(entry, leave) * length if high is None else min(high, max(entry, leave) * length)
        else:
            floor = max(floor, length * entry * leave / (entry + leave))
    if high is None:
        return 2 * floor
    low = max(low, floor)
    return (low + high) / 2 if low <= high else None


def _turn(kind: str, entry: Fraction, leave: Fraction, length: Fraction, range_length: Fraction | None) -> Fraction:
    """When, from the plateau's start, the path changes slope: a crossing's kink, a dip's turn."""
    if kind == "cross":
        return length / 2 if entry == leave else (range_length - leave * length) / (entry - leave)
    return length * leave / (entry + leave)


def _second_map(second: LineMap, inserted: dict, levels: list, below) -> LineMap:
    """g_2 on the original levels: g̃_2 with each inserted range flat at its value."""
    edges, shifted = [], []
    for y in levels:
        start = y + below(y, include=False)
        edges += [start, start + inserted[y]]
    for t in second.breakpoints:
        shifted.append(t + below(t, include=True))

    def value(v: Fraction) -> Fraction:
        for y in levels:
            start = y + below(y, include=False)
            if start <= v <= start + inserted[y]:
                return second(y)
        w = v
        for y in levels:
            start = y + below(y, include=False)
            if v > start + inserted[y]:
                w -= inserted[y]
        return second(w)

    return LineMap.sampled(sorted(set(edges + shifted)), value)


