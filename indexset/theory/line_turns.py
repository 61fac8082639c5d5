"""Turns of maps of the line, and what a stack of blocks allows of them (MATH.md §9.5, Propositions 9.19 and 9.20, extension).

A turn of a continuous piecewise-linear map is a sign change in the
sequence of its nonzero slopes: a local extremum, at a point or across a
flat piece, whose value is the turning value. A stack of L maps that turn
at most τ times each turns at most (τ + 1)^L − 1 times and takes at most
L·τ turning values; a residual-free ReLU block of width n on R has
τ = 0, 1, n for n = 1, 2, ≥ 3, and a bias-free one τ = 1. When τ = 1, a
composite turning twice or more with nonzero end slopes has a turn whose
two outward sequences of turning values agree (:func:`unmatched`).

>>> from fractions import Fraction as Q
>>> w = LineMap.of((Q(-2), Q(0), Q(2)), (Q(-1), Q(1), Q(-1), Q(1)), Q(0))   # a W: minima 0, maximum 2
>>> turning_values(w)
[Fraction(0, 1), Fraction(2, 1), Fraction(0, 1)]
>>> ruled_out(w, layers=2, per_block=1) is None     # 3 turns, 2 values: within (1 + 1)² − 1 = 3 and 2·1
True
"""

from __future__ import annotations

from indexset.theory.line import LineMap

TURNS = "MATH.md §9.5, Proposition 9.19 (a stack of L blocks turning at most τ times each turns at most (τ + 1)^L − 1 times, at L·τ values)"
UNMATCHED = "MATH.md §9.5, Proposition 9.20 (maps that turn at most once compose to no F whose turns match at none of its turns)"


def turning_values(phi: LineMap) -> list:
    """The value at each turn of φ, left to right (a turn across a flat piece takes the piece's value)."""
    values, sign, end = [], 0, None
    for index, slope in enumerate(phi.slopes):
        if slope == 0:
            continue
        here = 1 if slope > 0 else -1
        if sign and here != sign:
            values.append(phi(end))  # φ is constant from the end of the last nonzero piece to the start of this one
        sign = here
        end = phi.breakpoints[index] if index < len(phi.breakpoints) else None
    return values


def block_turns(n: int) -> int:
    """The most turns of one residual-free ReLU block of width n on R: 0 for n = 1, 1 for n = 2, n (its n + 1 pieces) beyond."""
    return 0 if n <= 1 else 1 if n == 2 else n


def proven_impossible(target: LineMap, *, layers: int, per_block: int, blocks: str) -> tuple | None:
    """``(theorem, reason)`` when Proposition 9.19, or for τ ≤ 1 Proposition 9.20, rules F out for ``layers`` such blocks; else None.

    ``blocks`` names the blocks in the reason (e.g. "a bias-free block on R").
    """
    why = ruled_out(target, layers=layers, per_block=per_block)
    if why is not None:
        return TURNS, f"{why}: {blocks} turns at most {per_block} time{'s' if per_block != 1 else ''}"
    if per_block <= 1 and unmatched(target):
        return UNMATCHED, ("F turns twice or more with nonzero end slopes and at none of its turns do the turning values on its two "
                           f"sides agree outward; {blocks} turns at most once, so the first block to turn would make them agree")
    return None


def ruled_out(target: LineMap, *, layers: int, per_block: int) -> str | None:
    """Why no stack of ``layers`` maps turning at most ``per_block`` times each equals F (Proposition 9.19), or None.

    Parameters
    ----------
    target : LineMap
        F.
    layers : int
        L, the number of blocks.
    per_block : int
        τ, the most turns of one block (:func:`block_turns`, or 1 for a
        bias-free block).
    """
    values = turning_values(target)
    most_turns, most_values = (per_block + 1) ** layers - 1, layers * per_block
    if len(values) > most_turns:
        return f"F turns {len(values)} times, and {layers} blocks turning at most {per_block} times each turn at most {most_turns}"
    if len(set(values)) > most_values:
        return (f"F takes {len(set(values))} turning values, and {layers} blocks turning at most {per_block} times each take at most "
                f"{most_values}")
    return None


def unmatched(target: LineMap) -> bool:
    """Proposition 9.20's hypothesis: nonzero end slopes, two turns or more, and at no turn equal outward turning values.

    At the turn with index i the outward sequences are the turning values
    before it, nearest first, and those after it. When this holds, no
    composite of maps that each turn at most once equals F.

    >>> from fractions import Fraction as Q
    >>> w = LineMap.of((Q(-2), Q(0), Q(2)), (Q(-1), Q(1), Q(-1), Q(1)), Q(0))   # a W, symmetric about its peak
    >>> unmatched(w)
    False
    >>> unmatched(LineMap.of((Q(-2), Q(0), Q(2)), (Q(-1), Q(1), Q(-2), Q(1)), Q(0)))   # minima 0 and −2: none agrees
    True
    """
    if target.slopes[0] == 0 or target.slopes[-1] == 0:
        return False
    values = turning_values(target)
    return len(values) >= 2 and all(values[:i][::-1] != values[i + 1:] for i in range(len(values)))
