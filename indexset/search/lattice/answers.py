"""The engine's answers: a :class:`~indexset.result.Result` from exact algebra or from what a walk found."""

from __future__ import annotations

from indexset.result import FEASIBLE, INFEASIBLE, UNKNOWN, Result
from indexset.search.lattice.job import Job
from indexset.search.lattice.walk import NAME


def unknown(job: Job, reason: str, stages: dict | None = None) -> Result:
    """``unknown`` for ``reason``."""
    return Result(UNKNOWN, reason, time_s=job.budget.elapsed(), stages=stages or {}, engine=NAME).note_halt(job.budget.halt_reason())


def walked(job: Job, solutions: list, complete: bool, interrupted: str | None, stages: dict, count: int | None = None) -> Result:
    """The answer of a walk: its solutions (checked exactly), whether it was complete, why it ended early.

    ``count``: the solutions found when the walk counted more than it
    listed (``count_only``); default, the listed ones.
    """
    common = dict(time_s=job.budget.elapsed(), stages=stages, engine=NAME)
    found_count = len(solutions) if count is None else count
    if solutions:
        reason = f"{found_count} solution(s) found by lattice enumeration, each checked exactly against M z = t"
        if job.find_all and complete:
            reason = f"complete lattice enumeration: exactly {found_count} solution(s), each checked exactly"
        elif job.find_all and interrupted:
            reason += f" ({interrupted}: the enumeration is incomplete)"
        found = Result(FEASIBLE, reason, index_set=solutions[0], verified=True, count=found_count if complete else None, solutions=solutions, complete=complete, **common)
        return found.note_halt(job.budget.halt_reason(), job.find_all)
    if complete:
        return Result(INFEASIBLE, "complete lattice enumeration of the box found no solution", count=0, solutions=[], complete=True, **common)
    return Result(UNKNOWN, f"lattice enumeration {interrupted} before finding a solution or completing the search", **common).note_halt(job.budget.halt_reason())


def by_algebra(job: Job) -> Result | None:
    """Answers exact linear algebra gives directly (no enumeration needed); None when a search is needed."""
    reduction, system = job.reduction, job.system

    def done(status, reason, solutions=(), certificate=None):
        solutions = [list(s) for s in solutions]
        return Result(status, reason, index_set=solutions[0] if solutions else None, verified=bool(solutions), count=len(solutions),
                      solutions=solutions, time_s=job.budget.elapsed(), stages=reduction.stages(), engine=NAME, certificate=certificate, complete=True)

    if not reduction.span_feasible:
        return done(INFEASIBLE, "t is not in the column space of M (span certificate y: yᵀM = 0, yᵀt ≠ 0)", certificate={"span_certificate": reduction.span_certificate})
    if reduction.integer_feasible is False:
        return done(INFEASIBLE, f"no integer solution: {reduction.lattice_reason}", certificate={"lattice_reason": reduction.lattice_reason})
    if reduction.kernel_dimension == 0:
        z = [int(v) for v in reduction.z0]
        inside = all(0 <= v <= u for v, u in zip(z, system.bounds()))
        if inside and system.is_solution(system.solution(z)):
            return done(FEASIBLE, "rank M = n: the unique solution lies in the box", [system.solution(z)])
        return done(INFEASIBLE, "rank M = n: the unique solution lies outside the box")
    return None
