"""Open intervals of rationals cut out by strict integer conditions, and a simple point inside.

The exact geometry of :mod:`indexset.exact.pwl` keeps meeting one task:
given conditions ``a·y + b > 0`` on one rational unknown y (a, b
integers), find the tightest lower and upper bounds and a rational strictly
between them, with a small denominator so that later steps stay small.

>>> interval = OpenInterval()
>>> interval.require(2, -1)    # y > 1/2
>>> interval.require(-3, 2)    # y < 2/3
>>> interval.empty, interval.point()
(False, Fraction(3, 5))
>>> interval.require(1, -1)    # y > 1
>>> interval.empty
True
"""

from __future__ import annotations

import math
from fractions import Fraction


class OpenInterval:
    """The rationals y with ``a·y + b > 0`` for every condition required so far.

    Bounds are kept as (numerator, positive denominator) pairs of Python
    integers and compared by cross-multiplying, so no Fraction is built
    (and no gcd taken) until a point is chosen.

    Attributes
    ----------
    low, high : tuple of int or None
        The tightest lower and upper bound (None: unbounded that way).
    contradicted : bool
        A condition ``0·y + b > 0`` with ``b ≤ 0`` was required.
    """

    __slots__ = ("contradicted", "high", "low")

    def __init__(self) -> None:
        self.low = None
        self.high = None
        self.contradicted = False

    def require(self, a: int, b: int) -> None:
        """Add the condition ``a·y + b > 0`` (integers; ``a = 0`` holds or contradicts)."""
        if a > 0:  # y > −b/a
            bound = (-b, a)
            if self.low is None or bound[0] * self.low[1] > self.low[0] * bound[1]:
                self.low = bound
        elif a < 0:  # y < b/(−a)
            bound = (b, -a)
            if self.high is None or bound[0] * self.high[1] < self.high[0] * bound[1]:
                self.high = bound
        elif b <= 0:
            self.contradicted = True

    @property
    def empty(self) -> bool:
        """Whether no rational satisfies every condition."""
        if self.contradicted:
            return True
        return self.low is not None and self.high is not None and not self.low[0] * self.high[1] < self.high[0] * self.low[1]

    def point(self) -> Fraction:
        """A rational strictly inside (the interval must not be :attr:`empty`).

        0 when there is no bound, the integer next to a single bound, else
        the rational of smallest denominator between the two
        (:func:`simplest_between`).
        """
        if self.low is None and self.high is None:
            return Fraction(0)
        if self.high is None:
            return Fraction(math.floor(Fraction(*self.low)) + 1)
        if self.low is None:
            return Fraction(math.ceil(Fraction(*self.high)) - 1)
        return simplest_between(Fraction(*self.low), Fraction(*self.high))


def simplest_between(low: Fraction, high: Fraction) -> Fraction:
    """The rational with the smallest denominator strictly between low < high (Stern–Brocot).

    Small denominators keep the numbers of every later step small.

    >>> simplest_between(Fraction(1, 3), Fraction(1, 2))
    Fraction(2, 5)
    """
    floor = math.floor(low)
    if floor + 1 < high:
        return Fraction(floor + 1)
    # (low, high) lies in [floor, floor + 1]: x ↦ 1/(x − floor) maps it onto (1/(high − floor), 1/(low − floor)).
    low_frac, high_frac = low - floor, high - floor
    if low_frac == 0:
        inner = Fraction(math.floor(1 / high_frac) + 1)
    else:
        inner = simplest_between(1 / high_frac, 1 / low_frac)
    return floor + 1 / inner
