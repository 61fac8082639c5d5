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

from indexset.theory.line_paths import Passage, fit_length


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
        passages = [Passage(kind, entry, leave if kind == "cross" else -leave, length) for kind, entry, leave, length in paths]
        assert fit_length(passages, spare=fewest - 1) is None if fewest else True
        length, extra = fit_length(passages, spare=fewest)
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
        built = Passage(kind, *signed, length).path(range_length)
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


def random_passage(rng, middle: bool = True) -> Passage:
    """A crossing or a dip with small integer speeds, a random direction and a fixed middle slope of any sign (zero included)."""
    kind = "cross" if rng.random() < 0.5 else "dip"
    entry, leave, length = (Fraction(int(v)) for v in rng.integers(1, 5, 3))
    sign = int(rng.choice([-1, 1]))
    fixed = Fraction(int(rng.integers(-4, 5)), int(rng.integers(1, 3))) * sign if middle else None
    return Passage(kind, sign * entry, sign * leave if kind == "cross" else -sign * leave, length, fixed)


def valid(passage: Passage, pieces: tuple, range_length: Fraction) -> bool:
    """Durations positive summing to L, the middle slope present, every position inside the range, ending at the far edge or back at 0."""
    if sum(d for d, _ in pieces) != passage.length or any(d <= 0 for d, _ in pieces):
        return False
    if passage.middle is not None and all(s != passage.middle for _, s in pieces):
        return False
    sign = 1 if passage.entry > 0 else -1
    positions = [sign * p for p in walk(pieces)]
    return all(0 <= p <= range_length for p in positions) and positions[-1] == (range_length if passage.kind == "cross" else 0)


@pytest.mark.parametrize("seed", range(3))
def test_a_fixed_middle_reaches_a_length_iff_some_path_of_that_shape_does(seed):
    """Where ``fits`` says yes, the path built is valid; wherever a path entry–middle–leave with sampled durations runs, ``fits`` says yes."""
    rng = np.random.default_rng(seed)
    checked = 0
    for _ in range(150):
        passage = random_passage(rng)
        for k in range(1, 49):
            span = Fraction(k, 4)
            if passage.fits(span):
                assert valid(passage, passage.path(span).pieces, span), (passage, span)
        for _ in range(40):
            # Durations drawn first; the plateau's length is then what they add up to (a dip's last piece brings it back).
            t1, t2, t3 = (Fraction(int(v), 4) for v in rng.integers(0, 9, 3))
            if t2 == 0:
                continue
            sign = 1 if passage.entry > 0 else -1
            positions = [sign * p for p in walk(((t1, passage.entry), (t2, passage.middle)))]
            if passage.kind == "dip":
                t3 = positions[-1] / abs(passage.leave)
            drawn = Passage(passage.kind, passage.entry, passage.leave, t1 + t2 + t3, passage.middle)
            positions = [sign * p for p in walk(((t1, passage.entry), (t2, passage.middle), (t3, passage.leave)))]
            if min(positions) < 0 or max(positions) == 0:
                continue
            if passage.kind == "cross" and max(positions) == positions[-1]:
                assert drawn.fits(positions[-1]), (drawn, t1, t2, t3)
                checked += 1
            if passage.kind == "dip" and positions[-1] == 0:
                assert drawn.fits(max(positions)) and drawn.fits(max(positions) + 1), (drawn, t1, t2, t3)
                checked += 1
    assert checked >= 500, checked
