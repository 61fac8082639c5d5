"""One decision of a 0/1 system ``M z = t``: exact algebra first, then the engines.

Used wherever a block's question has become a 0/1 system: the degenerate
weights decision (MATH.md §7) and the affine-class criteria for
homogeneous and gated blocks (MATH.md §8). Every solution it reports
satisfies the system exactly; ``infeasible`` comes from a certificate or a
complete search.
"""

from __future__ import annotations

import time

from indexset.search.engines.brute import solve_system_brute
from indexset.search.reduce import reduce_system
from indexset.result import FEASIBLE, INFEASIBLE, UNKNOWN, Result
from indexset.search.system import System

BRUTE_WIDTH = 14
"""Systems with at most this many unknowns are enumerated directly (2^14 supports)."""


def decide_system(system: System, *, find_all: bool = False, time_limit: float | None = None, stop=None, seed: int = 0, engines=None, progress=None) -> Result:
    """Decide an exact 0/1 system.

    Parameters
    ----------
    system : System
        Exact equations (no slack).
    find_all : bool
        Every solution instead of the first.
    time_limit : float, optional
        Seconds for the engines; past it the answer is ``unknown``.
    stop : threading.Event, optional
    seed : int
    engines : sequence of str, optional
        Portfolio engines (default: every available one).
    progress : callable, optional

    Returns
    -------
    Result
        ``feasible`` with exactly checked supports, ``infeasible`` with the
        reason (span certificate, unique real solution, integer lattice,
        complete search), or ``unknown``.
    """
    start = time.perf_counter()
    if system.slack is not None:
        raise ValueError("decide_system takes exact equations only")

    def done(status, reason, solutions=(), engine="exact", **extra):
        found = [list(s) for s in solutions]
        return Result(status, reason, index_set=found[0] if found else None, solutions=found, count=len(found) if status != UNKNOWN else None,
                      engine=engine, complete=status != UNKNOWN, time_s=time.perf_counter() - start, **extra)

    if system.infeasible_row is not None:
        return done(INFEASIBLE, f"row {system.rows[system.infeasible_row]} reads 0 = t ≠ 0")
    if system.m == 0:
        return done(FEASIBLE, "no equation: every support solves it", [[]])
    if system.n <= BRUTE_WIDTH:
        solutions = solve_system_brute(system.M, system.t)
        return done(FEASIBLE if solutions else INFEASIBLE, f"complete enumeration of all 2^{system.n} supports", solutions if find_all else solutions[:1], "brute")
    reduction = reduce_system(system.M, system.t)
    if not reduction.span_feasible:
        return done(INFEASIBLE, "t is outside the column space of M (span certificate y: yᵀM = 0, yᵀt ≠ 0)", certificate={"kind": "span", "y": [str(v) for v in reduction.span_certificate]})
    if reduction.unique_solution is not None:
        z = reduction.unique_solution
        if all(v in (0, 1) for v in z):
            return done(FEASIBLE, "rank M = n: the unique real solution is a 0/1 vector", [[i for i, v in enumerate(z) if v == 1]])
        return done(INFEASIBLE, "rank M = n and the unique real solution is not a 0/1 vector")
    if reduction.integer_feasible is False:
        return done(INFEASIBLE, reduction.lattice_reason)
    from indexset.search.portfolio import run_portfolio  # the engines import OR-Tools and the kernels

    result = run_portfolio(system, reduction, engines=engines, find_all=find_all, time_limit=time_limit, seed=seed, stop=stop, progress=progress)
    solutions = [s for s in (result.solutions or ([result.index_set] if result.index_set is not None else [])) if system.is_solution(s)]
    if result.status == FEASIBLE and solutions:
        listed = solutions if find_all else solutions[:1]
        return Result(FEASIBLE, result.reason, index_set=listed[0], solutions=listed, count=len(listed) if result.complete else None,
                      engine=result.engine, complete=result.complete or not find_all, time_s=time.perf_counter() - start)
    if result.status == INFEASIBLE and result.complete:
        return done(INFEASIBLE, result.reason, engine=result.engine)
    return Result(UNKNOWN, result.reason, engine=result.engine, time_s=time.perf_counter() - start)
