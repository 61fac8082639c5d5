"""Short human text for reasons: index ranges, long rationals as decimals, counts of any size."""

from __future__ import annotations

from decimal import Decimal
from fractions import Fraction


def ranges(indices) -> str:
    """``[0, 1, 2, 5]`` as ``0–2, 5``."""
    indices = [int(i) for i in indices]
    parts, start = [], None
    for k, i in enumerate(indices):
        if start is None:
            start = i
        if k + 1 == len(indices) or indices[k + 1] != i + 1:
            parts.append(f"{start}" if start == i else f"{start}–{i}")
            start = None
    return ", ".join(parts)


def short(value, digits: int = 6) -> str:
    """An exact rational as ``p/q`` when short, else as a decimal with ``digits`` significant digits."""
    value = Fraction(value)
    text = str(value)
    return text if len(text) <= 20 else f"{float(value):.{digits}g}"


def count(value: int, digits: int = 3) -> str:
    """An integer of any size: in full up to six digits, else with ``digits`` significant digits.

    Exact to the digits shown, through :class:`decimal.Decimal` (a float
    overflows past about 10³⁰⁸, and the counts of sign vectors do not stop there).

    >>> count(123456), count(295147905179352825856), count(2 ** 1100)
    ('123456', '2.95e+20', '1.36e+331')
    """
    value = int(value)
    return str(value) if abs(value) < 10**6 else f"{Decimal(value):.{digits - 1}e}"
