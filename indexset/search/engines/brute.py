"""Brute force over all 2^n subsets: the reference every test compares with.

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

MAX_WIDTH = 22
"""Largest n the brute force accepts (2^22 subsets)."""


def solve_system_brute(M, t, max_width: int = MAX_WIDTH) -> list[list[int]]:
    """Every 0/1 solution of ``M z = t``, as sorted supports.

    Parameters
    ----------
    M : array_like of int, shape (m, n)
    t : array_like of int, shape (m,)

    Returns
    -------
    list of list of int
        Supports of all solutions, in increasing order of the bitmask.
    """
    M = np.asarray(M, dtype=object)
    t = np.asarray(t, dtype=object)
    n = M.shape[1]
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
    """Every one of the 2^n supports, checked exactly: the reference engine (n ≤ :data:`MAX_WIDTH`).

    Systems with a slack are checked row by row against it. It honours a
    stop request and the time limit between blocks of supports.
    """

    name = "brute"
    options = ("min_size",)

    def search(self, system, reduction=None, *, find_all: bool = False, time_limit=None, seed: int = 0, stop=None, progress=None, min_size: int = 0):
        """Enumerate every support (see :mod:`indexset.search.engines`)."""
        import time

        from indexset.result import FEASIBLE, INFEASIBLE, UNKNOWN, Result

        start = time.perf_counter()
        if system.n > MAX_WIDTH:
            return Result(UNKNOWN, f"brute force is for n ≤ {MAX_WIDTH}, got n = {system.n}", engine=self.name)
        found = []
        for mask in range(1 << system.n):
            if mask % 4096 == 0 and ((stop is not None and stop.is_set()) or (time_limit is not None and time.perf_counter() - start > time_limit)):
                return Result(UNKNOWN, "brute force stopped before the end", engine=self.name, solutions=found, time_s=time.perf_counter() - start)
            support = [i for i in range(system.n) if mask >> i & 1]
            if len(support) >= min_size and system.is_solution(support):
                found.append(support)
                if not find_all:
                    break
        elapsed = time.perf_counter() - start
        if not found:
            return Result(INFEASIBLE, f"none of the 2^{system.n} supports solves the system", engine=self.name, complete=True, count=0, solutions=[], time_s=elapsed)
        complete = find_all
        return Result(FEASIBLE, f"{len(found)} support(s) found by brute force", index_set=found[0], solutions=found,
                      count=len(found) if complete else None, engine=self.name, complete=complete, time_s=elapsed)


ENGINE = BruteEngine()
