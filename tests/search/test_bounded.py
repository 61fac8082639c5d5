"""Bounded integer unknowns 0 ≤ z_j ≤ u_j, ``A x = λ b`` (FREERHS) and numbers beyond int64, against references.

Every answer is held to a brute force over the box written here
(``itertools.product``), or, where the box is too large for one, to
solutions worked out by hand in the test.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from tunings import KERNEL_WALK, NUMPY_WALK

from indexset.search import lattice
from indexset.search.decide import decide_system
from indexset.search.engines import NAMES, get_engine
from indexset.search.multiples import decide_multiples, multiple_range
from indexset.search.reduce import reduce_system
from indexset.search.system import System, plain_system


def box_solutions(system: System) -> list[tuple[int, ...]]:
    """Every point of the box solving the system, by itertools."""
    rows = [[int(a) for a in row] for row in system.M]
    return sorted(z for z in itertools.product(*(range(u + 1) for u in system.bounds()))
                  if all(sum(a * v for a, v in zip(row, z)) == int(b) for row, b in zip(rows, system.t)))


def bounded_systems(seed: int, count: int, largest: int = 4):
    rng = np.random.default_rng(seed)
    for trial in range(count):
        m, n = int(rng.integers(1, 4)), int(rng.integers(2, 8))
        A = rng.integers(-2, 7, size=(m, n)) * (rng.random((m, n)) < 0.8)
        upper = rng.integers(0, largest + 1, size=n)
        planted = np.array([rng.integers(0, u + 1) for u in upper])
        b = A @ planted if trial % 4 else rng.integers(0, 15, size=m)
        yield plain_system(A, b, upper)


def values(system, solutions) -> list[tuple[int, ...]]:
    return sorted(tuple(system.values(s)) for s in solutions)


@pytest.mark.parametrize("seed", range(3))
def test_decide_system_counts_lists_and_finds_like_the_box(seed):
    for system in bounded_systems(seed, 25):
        expected = box_solutions(system)
        listed = decide_system(system, find_all=True)
        counted = decide_system(system, find_all=True, count_only=True)
        first = decide_system(system)
        assert listed.count == counted.count == len(expected) and values(system, listed.solutions) == expected
        assert first.status == ("feasible" if expected else "infeasible")
        if expected:
            assert tuple(system.values(first.index_set)) in expected and tuple(system.values(counted.index_set)) in expected


@pytest.mark.parametrize("walk", ["kernel", "numpy"])
def test_the_lattice_engine_walks_the_box_of_every_coordinate(walk):
    tuning = KERNEL_WALK if walk == "kernel" else NUMPY_WALK
    for system in bounded_systems(11, 30, largest=6):
        expected = box_solutions(system)
        result = lattice.search(system, find_all=True, tuning=tuning)
        assert result.complete and values(system, result.solutions) == expected
        counted = lattice.search(system, find_all=True, count_only=True, tuning=tuning)
        assert counted.count == len(expected)


@pytest.mark.parametrize("name", NAMES)
def test_every_engine_decides_bounded_systems(name):
    engine = get_engine(name)
    for system in bounded_systems(21, 12, largest=3):
        expected = box_solutions(system)
        result = engine.search(system, reduce_system(system.M, system.t, upper=system.upper), find_all=True)
        assert result.complete and values(system, result.solutions) == expected, name
        counted = engine.search(system, reduce_system(system.M, system.t, upper=system.upper), find_all=True, count_only=True)
        assert counted.count == len(expected) and len(counted.solutions or []) <= max(1, len(expected))


def test_wide_boxes_scale_to_a_near_cube_and_count_exactly():
    """Bounds 1 … 10⁶ (lcm far above the largest: rounded scales), a count small enough to check by hand."""
    # x0 + 2 x1 + 1000 x2 = 10⁶ + 5 with x0 ≤ 10⁶, x1 ≤ 3, x2 ≤ 1: x0 = 10⁶ + 5 − 2 x1 − 1000 x2 ≤ 10⁶.
    system = plain_system([[1, 2, 1000]], [10**6 + 5], [10**6, 3, 1])
    expected = sorted((10**6 + 5 - 2 * x1 - 1000 * x2, x1, x2) for x1 in range(4) for x2 in range(2) if 10**6 + 5 - 2 * x1 - 1000 * x2 <= 10**6)
    assert lattice.box_scales([10**6, 3, 1]) != [1, 1, 1]
    for tuning in (KERNEL_WALK, NUMPY_WALK):
        result = lattice.search(system, find_all=True, tuning=tuning)
        assert result.complete and values(system, result.solutions) == expected


@pytest.mark.parametrize("text, expected", [
    ("1 3 1\n1 1 1 {big}\n", "infeasible"),  # propagation: the row's range is far below the right-hand side
    ("2 4 1\n{big} {big} 1 2 {big3}\n1 1 1 1 2\n", "infeasible"),  # x0 + x1 = 1 forces x2 + 2 x3 = 3, then the second row sums to 3
])
def test_numbers_beyond_int64_are_decided_exactly_and_quietly(text, expected, tmp_path, recwarn):
    from indexset.search.systemfile import load_system

    big = 10**44
    path = tmp_path / "big.txt"
    path.write_text(text.format(big=big, big3=big + 3))
    system = load_system(path)
    assert box_solutions(system) == []
    result = decide_system(system, find_all=True)
    assert result.status == expected and result.count == 0
    assert not recwarn.list  # no NumPy RuntimeWarning


def test_a_huge_bound_and_right_hand_side_count_by_hand():
    big = 10**44
    system = plain_system([[1, 2, 3]], [big], [big, 1, 1])  # x0 = big − 2 x1 − 3 x2 for each (x1, x2)
    result = decide_system(system, find_all=True)
    assert result.count == 4 and values(system, result.solutions) == sorted((big - 2 * a - 3 * c, a, c) for a in (0, 1) for c in (0, 1))


def free_rhs_solutions(system: System) -> list[tuple[tuple[int, ...], int]]:
    """Every (x, λ) of the box with A x = λ b, λ ≠ 0 of any size, by itertools (λ read off a row with b_r ≠ 0)."""
    found = []
    for z in itertools.product(*(range(u + 1) for u in system.bounds())):
        sums = [sum(int(a) * v for a, v in zip(row, z)) for row in system.M]
        r = next(r for r in range(system.m) if int(system.t[r]))
        lam, rest = divmod(sums[r], int(system.t[r]))
        if not rest and lam and all(s == lam * int(b) for s, b in zip(sums, system.t)):
            found.append((z, lam))
    return sorted(found)


@pytest.mark.parametrize("seed", range(3))
def test_free_rhs_finds_every_multiple_of_either_sign(seed):
    rng = np.random.default_rng(70 + seed)
    for _ in range(20):
        m, n = int(rng.integers(1, 3)), int(rng.integers(2, 6))
        A = rng.integers(-3, 4, size=(m, n))
        b = rng.integers(-2, 3, size=m)
        if not b.any():
            b[0] = 1
        system = plain_system(A, b, rng.integers(1, 3, size=n) if rng.random() < 0.5 else None)
        every = free_rhs_solutions(system)
        for largest in (None, 1, 2):
            expected = [(x, lam) for x, lam in every if largest is None or abs(lam) <= largest]
            listed = decide_multiples(system, largest=largest, find_all=True)
            counted = decide_multiples(system, largest=largest, find_all=True, count_only=True)
            assert listed.count == counted.count == len(expected)
            assert sorted((tuple(system.values(x)), lam) for x, lam in listed.solutions) == expected
            low, high = multiple_range(system, largest)
            assert all(low <= lam <= high for _, lam in expected)
            first = decide_multiples(system, largest=largest)
            assert first.status == ("feasible" if expected else "infeasible")


def test_free_rhs_counts_in_the_kernel():
    """The 2-(6, 3, λ) designs for every λ ≠ 0, counted by the kernel, against a NumPy count over all 2^20 sets of triples."""
    from itertools import combinations

    pairs, triples = list(combinations(range(6), 2)), list(combinations(range(6), 3))
    M = np.array([[int(set(p) <= set(t)) for t in triples] for p in pairs])
    masks = np.arange(1 << len(triples), dtype=np.int64)
    chosen = ((masks[:, None] >> np.arange(len(triples))) & 1).astype(np.int8)
    covered = chosen @ M.T  # how often each pair is covered, per set of triples
    expected = int(((covered == covered[:, :1]).all(axis=1) & (covered[:, 0] > 0)).sum())
    system = plain_system(M, np.ones(len(pairs), dtype=np.int64))
    result = decide_multiples(system, largest=None, find_all=True, count_only=True, engine_options={"tuning": KERNEL_WALK})
    assert result.count == expected and multiple_range(system, None) == (0, 4)
