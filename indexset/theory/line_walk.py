"""The fold walk: every first block of a witness, up to a homeomorphism of its image (MATH.md §9.5, Lemma 9.13, extension).

Let F on R be piecewise linear with no zero slope (on the part the walk
covers, ``domain``: F's flat ends lie outside it) and F = g_2 ∘ g_1. Then
g_1 turns only where F turns, and once its set T of turning points is
chosen, F alone fixes g_1 up to a homeomorphism h of its image: g_1 = h ∘ ℓ
and g_2 = G ∘ h⁻¹ on the image, where the *level map* ℓ and the *profile*
G (with G ∘ ℓ = F) come out of one deterministic walk along the line:

- on the first lap, ℓ(x) = x and G = F;
- on every later lap ℓ runs in the lap's direction; inside the levels
  already visited it is forced, ℓ = (G on the side it moves to)⁻¹ ∘ F, and
  fails when F and G do not turn together; past them it moves with slope ±1
  and G is extended by F.

:func:`level_map` runs it and returns None when no first block turning
exactly at T exists.

>>> from fractions import Fraction as Q
>>> from indexset.theory.line import LineMap
>>> F = LineMap.of((Q(0),), (Q(-1), Q(2)), Q(0))      # a V: slopes −1, 2
>>> fold = level_map(F, (Q(0),))
>>> [str(fold.level(x)) for x in (-2, 0, 1)], fold.low, fold.high
(['-2', '0', '-2'], None, Fraction(0, 1))
>>> all(fold.profile(fold.level(x)) == F(x) for x in range(-3, 4))
True
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass
from fractions import Fraction

from indexset.theory.line import LineMap


@dataclass(frozen=True)
class Folding:
    """The level map and profile of a fold walk (Lemma 9.13).

    Attributes
    ----------
    level : LineMap
        ℓ: no zero slope, turning exactly at ``turning``.
    profile : LineMap
        G on the levels ℓ reaches, continued linearly past them; G ∘ ℓ = F.
    low, high : Fraction or None
        The image ℓ(R) = [low, high] (None: unbounded on that side).
    turning : tuple of Fraction
        The turning points T of ℓ.
    domain : tuple
        ``(lo, hi)``: the walk covered [lo, hi] (None: unbounded).
    """

    level: LineMap
    profile: LineMap
    low: Fraction | None
    high: Fraction | None
    turning: tuple
    domain: tuple = (None, None)

    def inside(self, y: Fraction) -> bool:
        """Whether y is an interior point of the image ℓ(R)."""
        return (self.low is None or y > self.low) and (self.high is None or y < self.high)


def turning_points(phi: LineMap) -> tuple:
    """The breakpoints where the slopes on the two sides have opposite signs."""
    return tuple(t for t, a, b in zip(phi.breakpoints, phi.slopes, phi.slopes[1:]) if a * b < 0)


def level_map(target: LineMap, turning: tuple, domain: tuple = (None, None)) -> Folding | None:
    """Walk F = ``target`` on ``domain`` with the turning points ``turning`` (sorted, a subset of F's): the folding, or None.

    Parameters
    ----------
    target : LineMap
        F, with no zero slope inside ``domain``.
    turning : tuple of Fraction
        T, sorted, each a turning point of F inside the domain.
    domain : tuple
        ``(lo, hi)``, None for an unbounded side: the walk covers [lo, hi]
        and ℓ is meaningful there only (F's flat ends lie outside).

    Returns
    -------
    Folding or None
        None when no map turning exactly at T makes F factor through it.
    """
    lo, hi = domain
    # Piece i of F starts at its breakpoint i − 1 (piece 0 at −∞).
    inside = [s for t, s in zip((None, *target.breakpoints), target.slopes)
              if (t is None and lo is None) or (t is not None and (lo is None or t >= lo) and (hi is None or t < hi))]
    if any(s == 0 for s in inside):
        raise ValueError("target must have no zero slope inside the domain")
    walk = _Walk(target, turning, domain)
    return walk.run()


def _linear_beyond(phi: LineMap, y: Fraction, lo: Fraction | None, hi: Fraction | None) -> Fraction:
    """phi continued linearly past the domain end nearest y, with its slope just inside."""
    if lo is not None and y < lo:
        return phi(lo) + phi.slopes[bisect.bisect_right(phi.breakpoints, lo)] * (y - lo)
    return phi(hi) + phi.slopes[bisect.bisect_left(phi.breakpoints, hi)] * (y - hi)


class _Walk:
    """State of one fold walk: the position, the level, and the profile so far as vertices."""

    def __init__(self, target: LineMap, turning: tuple, domain: tuple):
        self.target, self.turning = target, tuple(turning)
        self.start, self.finish = domain
        self.vertices = []        # (x, ℓ(x)) at every change of ℓ's slope, in order
        self.levels, self.values = [], []   # the profile's vertices, sorted by level
        self.low = self.high = None
        self.low_slope = self.high_slope = None   # the profile's slopes past unbounded ends

    def run(self) -> Folding | None:
        F, lo, hi = self.target, self.start, self.finish
        if not self.turning:
            return Folding(LineMap.of((), (Fraction(1),), Fraction(0)), self._identity_profile(), lo, hi, (), (lo, hi))
        first = self.turning[0]
        # The first lap, (lo, τ_1]: ℓ = id and G = F on the levels from lo up to τ_1.
        self.levels = ([] if lo is None else [lo]) + [t for t in F.breakpoints if t < first and (lo is None or t > lo)] + [first]
        self.values = [F(t) for t in self.levels]
        self.high, self.low = first, lo
        self.low_slope = F.slopes[0] if lo is None else None
        self.vertices = [(first, first)]
        ends = [*self.turning[1:], hi]
        direction = -1
        for end in ends:
            if not self._lap(end, direction):
                return None
            direction = -direction
        return self._folding()

    def _lap(self, end: Fraction | None, direction: int) -> bool:
        """Walk from the last vertex to ``end`` (None: +∞), ℓ moving in ``direction``; False if the walk fails."""
        while True:
            x, y = self.vertices[-1]
            if end is not None and x == end:
                return True
            if self._at_edge(y, direction):
                self._extend(end, direction)
                return True
            step = self._step(end, direction)
            if step is None:
                return False
            if step == "infinite":
                return True

    def _at_edge(self, y: Fraction, direction: int) -> bool:
        edge = self.high if direction > 0 else self.low
        return edge is not None and y == edge

    def _identity_profile(self) -> LineMap:
        """G = F on the domain, continued linearly past a finite end (T = ∅, ℓ = id)."""
        F, lo, hi = self.target, self.start, self.finish
        points = [t for t in F.breakpoints if (lo is None or t > lo) and (hi is None or t < hi)]
        return LineMap.sampled([*points, *(v for v in (lo, hi) if v is not None)],
                               lambda y: F(y) if (lo is None or y >= lo) and (hi is None or y <= hi) else _linear_beyond(F, y, lo, hi))

    def _extend(self, end: Fraction | None, direction: int) -> None:
        """Past the visited levels: ℓ moves with slope ±1 to ``end`` and G takes F's values there."""
        F = self.target
        x, y = self.vertices[-1]
        points = [t for t in F.breakpoints if t > x and (end is None or t < end)] + ([] if end is None else [end])
        new = [(y + direction * (t - x), F(t)) for t in points]
        if direction > 0:
            self.levels += [level for level, _ in new]
            self.values += [value for _, value in new]
        else:
            self.levels = [level for level, _ in reversed(new)] + self.levels
            self.values = [value for _, value in reversed(new)] + self.values
        if end is None:
            slope = direction * F.slopes[-1]
            if direction > 0:
                self.high, self.high_slope = None, slope
            else:
                self.low, self.low_slope = None, slope
            self.vertices.append(("end", Fraction(direction)))
        else:
            if direction > 0:
                self.high = new[-1][0]
            else:
                self.low = new[-1][0]
            self.vertices.append((end, new[-1][0]))

    def _step(self, end: Fraction | None, direction: int):
        """One forced move inside the visited levels, to the next breakpoint of F or vertex of G; None if F and G disagree."""
        F = self.target
        x, y = self.vertices[-1]
        slope_g, next_level = self._profile_piece(y, direction)
        j = bisect.bisect_right(F.breakpoints, x)
        slope_f = F.slopes[j]
        limit = F.breakpoints[j] if j < len(F.breakpoints) else None
        if end is not None and (limit is None or end < limit):
            limit = end
        speed = slope_f / slope_g
        if (speed > 0) != (direction > 0):
            return None
        spans = [d for d in ((None if limit is None else limit - x), (None if next_level is None else (next_level - y) / speed)) if d is not None]
        if not spans:
            self.vertices.append(("end", speed))
            return "infinite"
        span = min(spans)
        self.vertices.append((x + span, y + speed * span))
        return "moved"

    def _profile_piece(self, y: Fraction, direction: int) -> tuple:
        """G's slope on the side of level y that ℓ moves to, and the next vertex of G that way (None: none)."""
        levels, values = self.levels, self.values
        if direction > 0:
            i = bisect.bisect_right(levels, y)
            if i == len(levels):
                return self.high_slope, None
            if i == 0:
                return self.low_slope, levels[0]
            return (values[i] - values[i - 1]) / (levels[i] - levels[i - 1]), levels[i]
        i = bisect.bisect_left(levels, y)
        if i == 0:
            return self.low_slope, None
        if i == len(levels):
            return self.high_slope, levels[-1]
        return (values[i] - values[i - 1]) / (levels[i] - levels[i - 1]), levels[i - 1]

    def _folding(self) -> Folding:
        points, slopes = [], [Fraction(1)]
        for (x, y), (u, v) in zip(self.vertices, self.vertices[1:]):
            points.append(x)
            slopes.append(v if u == "end" else (v - y) / (u - x))
        if self.vertices[-1][0] != "end":  # a finite domain end: ℓ continued linearly past it
            points.append(self.vertices[-1][0])
            slopes.append(slopes[-1])
        level = LineMap.of(points, slopes, self.vertices[0][1])
        return Folding(level, self._profile(), self.low, self.high, self.turning, (self.start, self.finish))

    def _profile(self) -> LineMap:
        levels, values = self.levels, self.values
        inner = [(b - a) / (v - u) for u, v, a, b in zip(levels, levels[1:], values, values[1:])]
        left = self.low_slope if self.low is None else (inner[0] if inner else self.high_slope)
        right = self.high_slope if self.high is None else (inner[-1] if inner else self.low_slope)
        return LineMap.of(levels, [left, *inner, right], values[0])
