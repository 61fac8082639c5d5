"""Integer rows, columns and matrices drawn in a range: the raw material of every exact family."""

from __future__ import annotations

import numpy as np

from indexset.errors import InputError
from indexset.theory.nondegeneracy import direction

INT64 = 2**63 - 1


def int_array(rows) -> np.ndarray:
    """An int64 array from nested Python ints, refusing silent overflow."""
    values = np.array(rows, dtype=object)
    if any(abs(int(v)) > INT64 for v in values.ravel()):
        raise InputError("construct", "weights exceed int64; use a smaller --d, --k or --range")
    return values.astype(np.int64)


def identity(d: int) -> list[list[int]]:
    """The d × d identity as nested ints."""
    return [[int(i == j) for j in range(d)] for i in range(d)]


def unimodular(rng, d: int, bound: int) -> list[list[int]]:
    """A random d × d integer matrix with det ±1 and entries in [−bound, bound].

    A signed permutation followed by random row additions that keep the
    entries in range: each step keeps det ±1, and the rows stay independent
    (hence pairwise non-collinear).
    """
    perm = rng.permutation(d)
    signs = rng.choice([-1, 1], size=d)
    matrix = [[int(signs[i]) if j == perm[i] else 0 for j in range(d)] for i in range(d)]
    for _ in range(8 * d * d if d > 1 else 0):
        i, j = (int(v) for v in rng.choice(d, size=2, replace=False))
        sign = int(rng.choice([-1, 1]))
        row = [a + sign * b for a, b in zip(matrix[i], matrix[j])]
        if max(abs(v) for v in row) <= bound:
            matrix[i] = row
    return matrix


def random_row(rng, d: int, bound: int) -> list[int]:
    """d integers uniform in [−bound, bound]."""
    return [int(v) for v in rng.integers(-bound, bound + 1, size=d)]


def random_nonzero(rng, d: int, bound: int) -> list[int]:
    """A nonzero row uniform in [−bound, bound]^d."""
    while True:
        column = [int(v) for v in rng.integers(-bound, bound + 1, size=d)]
        if any(column):
            return column


def nonzero_columns(rng, count: int, d: int, bound: int) -> list[list[int]]:
    """``count`` nonzero columns uniform in [−bound, bound]^d."""
    columns = []
    while len(columns) < count:
        column = random_row(rng, d, bound)
        if any(column):
            columns.append(column)
    return columns


def line_count(d: int, bound: int) -> int | None:
    """Number of lines through 0 hit by nonzero points of [−bound, bound]^d (None: huge)."""
    if (2 * bound + 1) ** d > 10**6:
        return None
    grid = np.indices((2 * bound + 1,) * d).reshape(d, -1).T - bound
    primitive = np.gcd.reduce(np.abs(grid), axis=1) == 1
    return int(primitive.sum()) // 2


def check_room(d: int, n: int, bound: int, source: str = "range") -> None:
    """Refuse n pairwise non-collinear rows where [−bound, bound]^d has fewer lines."""
    if d == 1:
        return  # d = 1 rows are collinear anyway (the dimension_one degeneracy)
    lines = line_count(d, bound)
    if lines is not None and n > lines:
        raise InputError(source, f"only {lines} pairwise non-collinear rows exist in [−{bound}, {bound}]^{d}; need n = {n}: raise --{source}")


def decoy_rows(rng, count: int, d: int, bound: int, taken: set) -> list[list[int]]:
    """Nonzero rows uniform in [−bound, bound]^d, each on a line not yet taken.

    For d = 1 every row is on the one line, so only zero rows are refused.
    """
    rows = []
    for _ in range(count):
        for _ in range(100_000):
            row = random_row(rng, d, bound)
            key = direction(row)
            if key is not None and (d == 1 or key not in taken):
                taken.add(key)
                rows.append(row)
                break
        else:
            raise InputError("range", f"could not draw {count} non-collinear rows in [−{bound}, {bound}]^{d}; raise --range")
    return rows


def biases(rng, wanted: bool, n: int, d: int, bound: int) -> dict:
    """Integer biases ``b_up``, ``b_down`` in [−bound, bound] when wanted (else nothing)."""
    if not wanted:
        return {}
    return {"b_up": rng.integers(-bound, bound + 1, size=n).astype(np.int64),
            "b_down": rng.integers(-bound, bound + 1, size=d).astype(np.int64)}
