"""Ranges of levels that plateau points share (MATH.md §9.5, Lemma 9.18): one length for every path, and the paths themselves.

References, none of them the code under test: the fewest extra
breakpoints found by trying every length on a fine grid (with every
path's own ends added), and each path held to what a path through a range
must do, read off its pieces by a plain loop.
"""

from __future__ import annotations

import itertools
from fractions import Fraction

import numpy as np
import pytest

from indexset.theory.line_plateaus import fit_length, path


def random_paths(rng) -> list:
    """Two to four paths ``(kind, |entry|, |leave|, plateau length)`` with small integer data."""
    out = []
    for _ in range(int(rng.integers(2, 5))):
        kind = "cross" if rng.random() < 0.7 else "dip"
        out.append((kind, *(Fraction(int(v)) for v in rng.integers(1, 5, 3))))
    return out


def fits(kind, entry, leave, length, range_length) -> bool:
    """Whether one kink suffices: a crossing between its two slopes' reaches, a dip no deeper than the range."""
    if kind == "cross":
        return min(entry, leave) * length <= range_length <= max(entry, leave) * length
    return range_length * (entry + leave) >= length * entry * leave


def extra_at(paths, range_length) -> int:
    return sum(0 if fits(*p, range_length) else 2 if p[0] == "cross" and p[1] == p[2] else 1 for p in paths)


def fewest_by_grid(paths) -> int:
    ends = {e * p[3] for p in paths for e in p[1:3]} | {p[3] * p[1] * p[2] / (p[1] + p[2]) for p in paths}
    # Ends have denominators at most 8, so two distinct ones are 1/64 apart or more: a step of 1/128 lands between any two.
    grid = {Fraction(k, 128) for k in range(1, 128 * 17)}
    return min(extra_at(paths, v) for v in ends | grid)


@pytest.mark.parametrize("seed", range(4))
def test_the_fewest_extra_breakpoints_agree_with_a_fine_grid(seed):
    rng = np.random.default_rng(seed)
    for _ in range(25):
        paths = random_paths(rng)
        fewest = fewest_by_grid(paths)
        assert fit_length(paths, spare=fewest - 1) is None if fewest else True
        length, extra = fit_length(paths, spare=fewest)
        assert extra == fewest == extra_at(paths, length) and length > 0


def walk(pieces) -> list:
    """The positions a path reaches at the ends of its pieces, from 0."""
    out, position = [Fraction(0)], Fraction(0)
    for duration, slope in pieces:
        position += duration * slope
        out.append(position)
    return out


@pytest.mark.parametrize("seed", range(3))
def test_every_path_runs_through_its_range_with_the_breakpoints_counted(seed):
    """Edge to edge (a crossing) or back to its edge (a dip), never outside the range; one kink when that fits, else two."""
    rng = np.random.default_rng(seed)
    for _ in range(200):
        kind = "cross" if rng.random() < 0.6 else "dip"
        entry, leave, length = (Fraction(int(v)) for v in rng.integers(1, 5, 3))
        range_length = Fraction(int(rng.integers(1, 40)), 4)
        sign = int(rng.choice([-1, 1]))
        signed = (sign * entry, sign * leave if kind == "cross" else -sign * leave)
        built = path(kind, *signed, length, range_length)
        assert sum(d for d, _ in built.pieces) == length and all(d > 0 for d, _ in built.pieces)
        positions = [sign * p for p in walk(built.pieces)]
        assert all(0 <= p <= range_length for p in positions)
        assert positions[-1] == (range_length if kind == "cross" else 0)
        slopes = [signed[0], *(s for _, s in built.pieces), signed[1]]
        changes = sum(a != b for a, b in itertools.pairwise(slopes))
        one_kink = (1 if entry != leave else 0) if kind == "cross" else 1
        expected = one_kink if fits(kind, entry, leave, length, range_length) else 2
        assert changes <= expected
        assert built.value(length) == walk(built.pieces)[-1]
