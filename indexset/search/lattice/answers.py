"""The engine's answers: a :class:`~indexset.result.Result` from exact algebra or from what a walk found."""

from __future__ import annotations

from indexset.result import FEASIBLE, INFEASIBLE, UNKNOWN, Result
from indexset.search.lattice.job import Job
from indexset.search.lattice.walk import NAME
from indexset.search.reduce import algebra_answer


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
    """Answers exact linear algebra gives directly (no enumeration needed, :func:`indexset.search.reduce.algebra_answer`); None when a search is needed."""
    answer = algebra_answer(job.reduction, job.system)
    if answer is None:
        return None
    answer.engine, answer.time_s, answer.stages = NAME, job.budget.elapsed(), job.reduction.stages()
    return answer
