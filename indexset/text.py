"""Short human text for reasons: index ranges, long rationals as decimals."""

from __future__ import annotations

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
