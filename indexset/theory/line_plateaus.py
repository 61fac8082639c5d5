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
from indexset.theory.line_paths import Passage, fit_length


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


def uncollapse(collapsed: Collapsed, first: LineMap, second: LineMap, passing: dict, spare: int = 0, middles: dict | None = None) -> tuple | None:
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
    spare : int
        Breakpoints g_1 may gain over the paths of one kink, where plateau
        points sharing a range need paths of two (Lemma 9.18).
    middles : dict, optional
        Plateau point → the middle slope of its path of two kinks, fixed.

    Returns
    -------
    tuple or None
        ``(g_1, g_2)`` as LineMaps on the original line and levels; None when
        the plateau points sharing one inserted range need lengths no single
        range has within ``spare`` (and reached by every fixed middle).
    """
    plateaus, middles = collapsed.points(), middles or {}
    passages = {c: Passage(kind, *first.slopes_at(c), plateaus[c].length, middles.get(c)) for c, kind in passing.items()}
    sharing = {}
    for c, kind in passing.items():
        if kind != "beyond":
            sharing.setdefault(first(c), []).append(c)
    inserted = {}  # collapsed level → the length of the range inserted there
    for level, points in sharing.items():
        fitted = fit_length([passages[c] for c in points], spare)
        if fitted is None:
            return None
        inserted[level], extra = fitted
        spare -= extra
    paths = {c: passage.path(inserted.get(first(c))) for c, passage in passages.items()}
    levels = sorted(inserted)

    def below(w: Fraction, include: bool) -> Fraction:
        return sum((inserted[y] for y in levels if y < w or (include and y == w)), Fraction(0))

    def at(x: Fraction) -> Fraction:
        return _first_value(collapsed, first, x, paths, below)

    candidates = {collapsed.expand(t) for t in first.breakpoints}
    for p in collapsed.plateaus:
        candidates |= {p.start, p.stop}
        if p.point in paths:
            candidates |= {p.start + t for t in paths[p.point].kinks()}
    for y in levels:
        candidates |= {collapsed.expand(x) for x in preimages(first, y)}
    g1 = LineMap.sampled(sorted(candidates), at)
    return g1, _second_map(second, inserted, levels, below)


def _first_value(collapsed: Collapsed, first: LineMap, x: Fraction, paths: dict, below) -> Fraction:
    """g_1 at an original x: on a plateau its path (or its constant), elsewhere z shifted by the ranges inserted below."""
    for p in collapsed.plateaus:
        if p.start <= x <= p.stop:
            w = first(p.point)
            entry, _ = first.slopes_at(p.point)
            base = w + below(w, include=entry <= 0)
            return base if p.point not in paths else base + paths[p.point].value(x - p.start)
    y = collapsed.shrink(x)
    w = first(y)
    lo, hi = collapsed.domain
    # Past a flat end g_1 stays where the domain's end left it.
    end = lo if lo is not None and y <= lo else hi if hi is not None and y >= hi else y
    left, right = first.slopes_at(end)
    # At a level where a range was inserted, a point g_1 only touches sits on the edge it comes from.
    return w + below(w, include=left < 0 if left != 0 else right > 0)


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


