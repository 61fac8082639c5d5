"""Brute force over every point of the box (all 2^n subsets when 0/1): the reference every test compares with.

Deliberately naive and independent of the solver pipeline: it builds the
system from the instance's exact Fractions itself and never prunes.
"""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

import numpy as np

from indexset.exact.verify import require_odd_linear
from indexset.model.instance import Instance, exact_value
from indexset.search.tuning import DEFAULT as TUNING

"""Largest n the brute force accepts (2^22 subsets)."""


def solve_system_brute(M, t, max_width: int = TUNING.brute_max_width, upper=None) -> list[list[int]]:
    """Every solution of ``M z = t`` over 0/1 z (as sorted supports), or over 0 ≤ z_j ≤ ``upper[j]`` (as values).

    Parameters
    ----------
    M : array_like of int, shape (m, n)
    t : array_like of int, shape (m,)
    max_width : int
        The box may have at most 2^max_width points.
    upper : array_like of int, shape (n,), optional
        Bounds of bounded integer unknowns (None: 0/1).

    Returns
    -------
    list of list of int
        0/1: supports, in increasing order of the bitmask; bounded: value
        vectors, in lexicographic order.
    """
    M = np.asarray(M, dtype=object)
    t = np.asarray(t, dtype=object)
    n = M.shape[1]
    if upper is not None:
        return _bounded(M, t, [int(u) for u in np.asarray(upper, dtype=object).ravel()], max_width)
    if n > max_width:
        raise ValueError(f"brute force is for n ≤ {max_width}, got n = {n}")
    bound = max([abs(int(v)) for v in M.ravel()] + [abs(int(v)) for v in t.ravel()] + [0])
    if bound * (n + 1) < 2**62:
        return _vectorised(M.astype(np.int64), t.astype(np.int64))
    solutions = []
    for mask in range(1 << n):
        support = [i for i in range(n) if mask >> i & 1]
        if all(sum(int(M[r, i]) for i in support) == int(t[r]) for r in range(M.shape[0])):
            solutions.append(support)
    return solutions


def _bounded(M: np.ndarray, t: np.ndarray, upper: list[int], max_width: int) -> list[list[int]]:
    """Every value vector of the box ``0 ≤ z ≤ upper`` with ``M z = t``, in Python integers."""
    size = math.prod(u + 1 for u in upper)
    if size > 1 << max_width:
        raise ValueError(f"brute force is for boxes of at most 2^{max_width} points, got {size}")
    rows = [[int(v) for v in row] for row in M]
    target = [int(v) for v in t]
    return [list(z) for z in itertools.product(*(range(u + 1) for u in upper))
            if all(sum(a * v for a, v in zip(row, z)) == b for row, b in zip(rows, target))]


def _vectorised(M: np.ndarray, t: np.ndarray) -> list[list[int]]:
    n = M.shape[1]
    solutions = []
    chunk = 1 << min(n, 16)
    bits = np.arange(n, dtype=np.int64)
    for start in range(0, 1 << n, chunk):
        masks = np.arange(start, min(start + chunk, 1 << n), dtype=np.int64)
        Z = (masks[:, None] >> bits) & 1
        hits = np.nonzero(np.all(t == Z @ M.T, axis=1))[0]
        solutions.extend(np.nonzero(Z[h])[0].tolist() for h in hits)
    return solutions


def absorbing_sets_brute(instance: Instance) -> list[list[int]]:
    """Every index set S with ``c·W_down[:,S]·W_up[S,:] = −A``, by brute force.

    Builds the d² × n system from exact Fractions (independently of
    :mod:`indexset.search.system`), clears denominators, and enumerates all 2^n
    subsets.
    """
    require_odd_linear(instance)
    up = exact_value(instance, "W_up")
    down = exact_value(instance, "W_down")
    skip = exact_value(instance, "skip")
    c = instance.act.c
    d, n = instance.d, instance.n
    rows = []
    for a, b in itertools.product(range(d), range(d)):
        rows.append([c * down[a, i] * up[i, b] for i in range(n)] + [-skip[a, b]])
    den = math.lcm(1, *(Fraction(v).denominator for v in itertools.chain.from_iterable(rows)))
    integer_rows = [[int(v * den) for v in row] for row in rows]
    M = np.array([row[:-1] for row in integer_rows], dtype=object)
    t = np.array([row[-1] for row in integer_rows], dtype=object)
    return solve_system_brute(M, t)


class BruteEngine:
    """Every point of the box, checked exactly: the reference engine (boxes of at most 2^``SearchTuning.brute_max_width`` points).

    Systems with a slack are checked row by row against it. It honours a
    stop request and the time limit between blocks of points.
    """

    name = "brute"
    options = ("min_size", "count_only")

    def search(self, system, reduction=None, *, find_all: bool = False, budget=None, time_limit=None, seed: int = 0, stop=None, progress=None, min_size: int = 0,
               count_only: bool = False):
        """Enumerate every point (see :mod:`indexset.search.engines`; ``count_only``: keep the first solution, count the others)."""
        import time

        from indexset.budget import Budget
        from indexset.result import FEASIBLE, INFEASIBLE, UNKNOWN, Result

        budget = budget or Budget.of(time_limit, stop)
        start = time.perf_counter()
        bounds = system.bounds()
        size = math.prod(u + 1 for u in bounds)
        if size > 1 << TUNING.brute_max_width:
            return Result(UNKNOWN, f"brute force is for boxes of at most 2^{TUNING.brute_max_width} points, got {size}", engine=self.name)
        found, count = [], 0
        for index, values in enumerate(itertools.product(*(range(u + 1) for u in bounds))):
            if index % TUNING.brute_poll_points == 0 and budget.expired():
                return Result(UNKNOWN, "brute force stopped before the end", engine=self.name, solutions=found, time_s=time.perf_counter() - start)
            solution = system.solution(values)
            if system.size(solution) >= min_size and system.is_solution(solution):
                count += 1
                if not (count_only and found):
                    found.append(solution)
                if not find_all:
                    break
        elapsed = time.perf_counter() - start
        if not found:
            return Result(INFEASIBLE, f"none of the {size} points of the box solves the system", engine=self.name, complete=True, count=0, solutions=[], time_s=elapsed)
        complete = find_all
        return Result(FEASIBLE, f"{count} solution(s) found by brute force", index_set=found[0], solutions=found,
                      count=count if complete else None, engine=self.name, complete=complete, time_s=elapsed)


ENGINE = BruteEngine()
