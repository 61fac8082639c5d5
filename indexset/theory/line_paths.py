"""Paths of g_1 through a range of levels where g_2 is flat, on one of F's flat pieces (MATH.md §9.5, Lemmas 9.17 and 9.18, extension).

On a plateau of length L, between g̃_1's slopes ``entry`` and ``leave``, g_1
either *crosses* a range of length Λ (edge to edge) or *dips* into it and
back out the edge it came from, never leaving it. With one kink (a dip:
one turn) a crossing covers Λ from min(|entry|, |leave|)·L to
max(|entry|, |leave|)·L and a dip needs Λ ≥ D = L·|entry|·|leave|/(|entry| + |leave|).
With two kinks, a middle slope s between them: left free, any Λ is
reached; fixed, the lengths reached are those :meth:`Passage.fits`
lists (MATH.md Lemma 9.18 (c)).

>>> from fractions import Fraction as Q
>>> crossing = Passage("cross", Q(1), Q(2), Q(1))          # one kink covers [1, 2]
>>> crossing.fits(Q(3)), Passage("cross", Q(1), Q(2), Q(1), middle=Q(4)).fits(Q(3))
(False, True)
>>> [(str(d), str(s)) for d, s in Passage("cross", Q(1), Q(2), Q(1), middle=Q(4)).path(Q(3)).pieces]
[('1/3', '1'), ('2/3', '4')]
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from fractions import Fraction

__all__ = ["Passage", "Path", "fit_length"]


@dataclass(frozen=True)
class Path:
    """g_1 on a plateau that passes, from its start: ``pieces`` of (duration, slope), the durations summing to its length."""

    pieces: tuple

    def kinks(self) -> list:
        """The times where the slope changes (piece ends before the last)."""
        out, t = [], Fraction(0)
        for duration, _ in self.pieces[:-1]:
            t += duration
            out.append(t)
        return out

    def value(self, t: Fraction) -> Fraction:
        """How far g_1 has moved t after the plateau's start."""
        out = Fraction(0)
        for duration, slope in self.pieces:
            step = min(duration, t)
            out, t = out + slope * step, t - step
            if t <= 0:
                break
        return out


@dataclass(frozen=True)
class Passage:
    """One plateau point's way through a range: ``cross`` or ``dip``, g̃_1's signed slopes either side, the plateau's length.

    ``middle``: None for the path of one kink (or, where that does not fit,
    two kinks with a middle slope of the path's choosing); a number for two
    kinks with that middle slope.
    """

    kind: str
    entry: Fraction
    leave: Fraction
    length: Fraction
    middle: Fraction | None = None

    @property
    def _speeds(self) -> tuple:
        return abs(self.entry), abs(self.leave), self.length

    @property
    def _onward(self) -> int:
        """The middle slope's sign against the direction into the range (+1 on, −1 back, 0 flat)."""
        product = self.middle * self.entry
        return (product > 0) - (product < 0)

    def depth(self) -> Fraction:
        """D: how deep a dip of one turn goes."""
        e, l_, length = self._speeds
        return length * e * l_ / (e + l_)

    def ends(self) -> set:
        """Every length Λ where whether this passage fits can change."""
        e, l_, length = self._speeds
        if self.middle is None:
            return {e * length, l_ * length} if self.kind == "cross" else {self.depth()}
        m = abs(self.middle)
        if self.kind == "cross":
            reach = {e * length, l_ * length, m * length}
            return reach | ({length / (1 / e + 1 / m + 1 / l_)} if self._onward < 0 else set())
        if self._onward == 0:
            return {self.depth()}
        return {self.depth(), length / (1 / m + (1 / l_ if self._onward > 0 else 1 / e))}

    def fits(self, range_length: Fraction | None) -> bool:
        """Whether this passage has a path through a range of this length (None: beyond an edge, unbounded)."""
        if range_length is None:
            return True
        e, l_, length = self._speeds
        if self.middle is None:
            if self.kind == "cross":
                return min(e, l_) * length <= range_length <= max(e, l_) * length
            return range_length >= self.depth()
        return self._reaches(range_length, e, l_, length, abs(self.middle))

    def _reaches(self, span: Fraction, e: Fraction, l_: Fraction, length: Fraction, m: Fraction) -> bool:
        onward = self._onward
        if self.kind == "dip":
            if onward == 0:
                return True
            return length < span * (1 / e + 1 / l_) or length <= span * (1 / m + (1 / l_ if onward > 0 else 1 / e))
        if onward > 0:
            v = span / length
            return v == m or min(e, m, l_) < v < max(e, m, l_)
        if onward == 0:
            return span < max(e, l_) * length
        return span < max(e, l_) * length and length <= span * (1 / e + 1 / m + 1 / l_)

    def extra(self, range_length: Fraction | None) -> int:
        """Breakpoints of g_1 beyond one kink needed for this range: 0 when one fits, 2 for a straight crossing, else 1."""
        if self.middle is not None or self.fits(range_length):
            return 0
        return 2 if self.kind == "cross" and self.entry == self.leave else 1

    def path(self, range_length: Fraction | None) -> Path:
        """A path through the range (one kink when that fits and no middle is fixed)."""
        if self.middle is None and self.fits(range_length):
            pieces = self._one_kink(range_length)
        elif self.middle is None:
            pieces = self._chosen_middle(range_length)
        else:
            pieces = self._fixed_middle(range_length)
        return Path(tuple(piece for piece in pieces if piece[0] > 0))

    def _one_kink(self, span: Fraction | None) -> tuple:
        e, l_, length = self._speeds
        if self.kind == "cross":
            if e == l_:
                return ((length, self.entry),)
            turn = (span - l_ * length) / (e - l_)
            return ((turn, self.entry), (length - turn, self.leave))
        turn = length * l_ / (e + l_)
        return ((turn, self.entry), (length - turn, self.leave))

    def _chosen_middle(self, span: Fraction) -> tuple:
        """Two kinks for a range one kink does not fit: a crossing's middle slope covers the rest; a dip waits flat."""
        e, l_, length = self._speeds
        if self.kind == "cross":
            tau = min(length / 4, span / (2 * (e + l_)))
            middle = length - 2 * tau
            sign = 1 if self.entry > 0 else -1
            return ((tau, self.entry), (middle, sign * (span - (e + l_) * tau) / middle), (tau, self.leave))
        depth = span / 2
        return ((depth / e, self.entry), (length - depth / e - depth / l_, Fraction(0)), (depth / l_, self.leave))

    def _fixed_middle(self, span: Fraction) -> tuple:
        """Durations (t_1, t_2, t_3) of entry, middle and leave slopes, t_2 > 0, for a range this passage reaches (Lemma 9.18 (c))."""
        e, l_, length = self._speeds
        m, onward = abs(self.middle), self._onward
        if self.kind == "cross":
            times = _crossing_times(span, e, l_, length, m, onward)
        else:
            times = _dip_times(span, e, l_, length, m, onward)
        return tuple(zip(times, (self.entry, self.middle, self.leave)))


def _crossing_times(span, e, l_, length, m, onward) -> tuple:
    if onward > 0:
        v = span / length
        if v == m:
            return (Fraction(0), length, Fraction(0))
        # The weight off the middle goes on the entry or leave speed on the far side of v from m.
        use_entry = (e < v) if v < m else (e > v)
        t = (m * length - span) / (m - (e if use_entry else l_))
        return (t, length - t, Fraction(0)) if use_entry else (Fraction(0), length - t, t)
    if onward == 0:
        if span < e * length:
            return (span / e, length - span / e, Fraction(0))
        return (Fraction(0), length - span / l_, span / l_)
    if length > span / l_:  # in to x, back to the edge, then across at the leave slope
        x = (length - span / l_) / (1 / e + 1 / m)
        return (x / e, x / m, span / l_)
    back = (length - span / e) / (1 / m + 1 / l_)  # across at the entry slope, back, and up again
    return (span / e, back / m, back / l_)


def _dip_times(span, e, l_, length, m, onward) -> tuple:
    if onward == 0:
        x = min(span, length * e * l_ / (e + l_)) / 2
        return (x / e, length - x / e - x / l_, x / l_)
    if onward > 0:
        if length <= span * (1 / m + 1 / l_):
            x = length / (1 / m + 1 / l_)
            return (Fraction(0), x / m, x / l_)
        p = (length - span / m - span / l_) / (1 / e - 1 / m)
        return (p / e, (span - p) / m, span / l_)
    if length <= span * (1 / e + 1 / m):
        x = length / (1 / e + 1 / m)
        return (x / e, x / m, Fraction(0))
    y = (length - span / e - span / m) / (1 / l_ - 1 / m)
    return (span / e, (span - y) / m, y / l_)


def fit_length(passages: list, spare: int = 0) -> tuple | None:
    """A length for a range that ``passages`` share, and the breakpoints g_1 gains for it.

    Whether each passage fits changes only at its :meth:`Passage.ends`, so
    those and the points between them are tried (Lemma 9.18).

    Returns
    -------
    tuple or None
        ``(length, extra)`` with the fewest extra breakpoints, every fixed
        middle reaching it; None when that exceeds ``spare`` or no length
        suits the fixed middles.

    >>> from fractions import Fraction as Q
    >>> pair = [Passage("cross", Q(1), Q(2), Q(1)), Passage("cross", Q(3), Q(4), Q(1))]   # [1, 2] and [3, 4]
    >>> fit_length(pair) is None, fit_length(pair, spare=1)
    (True, (Fraction(1, 1), 1))
    """
    ends = sorted(set().union(*(p.ends() for p in passages)))
    tried = [*ends, *((a + b) / 2 for a, b in itertools.pairwise(ends)), ends[-1] + 1, ends[0] / 2]
    tried = [v for v in tried if v > 0 and all(p.middle is None or p.fits(v) for p in passages)]
    if not tried:
        return None

    def extra(range_length):
        return sum(p.extra(range_length) for p in passages)

    best = min(tried, key=lambda v: (extra(v), v))
    return (best, extra(best)) if extra(best) <= spare else None
