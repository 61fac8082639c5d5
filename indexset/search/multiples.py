"""Solutions of ``A x = λ b`` for some integer λ ≠ 0, |λ| ≤ L: solvediophant's ``% FREERHS``.

solvediophant adds λ as a lattice coordinate and accepts a solution only
when |λ| lies within its box bound ``-maxnorm`` (default 1, so its
``% FREERHS`` asks for A x = ±b); ``largest`` is that bound L. Over the box
0 ≤ x ≤ u, each row r with b_r ≠ 0 bounds λ further: ``λ·b_r = (A x)_r``
lies in the row's range over the box, so λ lies in an interval [low,
high] (MATH.md §5.1). Writing ``λ = s·(1 + μ)`` with s = ±1 and μ ≥ 0
turns each sign into one bounded system over (x, μ),

    A x − s·b·μ = s·b,    0 ≤ x ≤ u,    0 ≤ μ ≤ (the side's largest |λ|) − 1,

decided by :func:`indexset.search.decide.decide_system`. As b ≠ 0, each x
has at most one λ, so the two systems' solutions are those of the question,
each once: counts add up.
"""

from __future__ import annotations

import numpy as np

from indexset.budget import Budget
from indexset.result import FEASIBLE, INFEASIBLE, UNKNOWN, Result
from indexset.search.decide import decide_system
from indexset.search.system import System, bounded

LARGEST = 1
"""solvediophant's bound on |λ| (its ``-maxnorm``, default 1)."""


def multiple_range(system: System, largest: int | None = LARGEST) -> tuple[int, int]:
    """The integers λ with |λ| ≤ ``largest`` (None: no bound) for which ``A x = λ b`` can hold in the box: ``(low, high)`` (low > high: none).

    Raises
    ------
    ValueError
        When b = 0 (every λ works for the same x: λ is not determined).
    """
    if not any(int(v) for v in system.t):
        raise ValueError("b = 0: every multiple λ·b is 0, so λ is not determined")
    low, high = None, None
    bounds = system.bounds()
    for r in range(system.m):
        b = int(system.t[r])
        if b == 0:
            continue
        row = [int(a) for a in system.M[r]]
        least = sum(min(0, a * u) for a, u in zip(row, bounds))
        greatest = sum(max(0, a * u) for a, u in zip(row, bounds))
        if b > 0:
            first, last = -((-least) // b), greatest // b
        else:
            first, last = -((-greatest) // b), least // b
        low = first if low is None else max(low, first)
        high = last if high is None else min(high, last)
    if largest is not None:
        low, high = max(low, -largest), min(high, largest)
    return low, high


def multiple_systems(system: System, largest: int | None = LARGEST) -> list[tuple[int, System]]:
    """``(s, system over (x, μ))`` for each sign s of λ the box (and |λ| ≤ ``largest``) allows (see the module docstring)."""
    low, high = multiple_range(system, largest)
    parts = []
    for sign, largest in ((1, high), (-1, -low)):
        if largest < 1:
            continue
        column = np.array([[-sign * int(v)] for v in system.t], dtype=object).reshape(system.m, 1)
        M = np.hstack([system.M, column]) if system.m else np.zeros((0, system.n + 1), dtype=object)
        t = np.array([sign * int(v) for v in system.t], dtype=object)
        parts.append((sign, System(M.astype(object), t, None, list(system.rows), upper=bounded(system.bounds() + [largest - 1]))))
    return parts


def decide_multiples(system: System, *, largest: int | None = LARGEST, find_all: bool = False, count_only: bool = False, budget: Budget | None = None,
                     **options) -> Result:
    """Decide ``A x = λ b`` over the box for an integer λ ≠ 0 with |λ| ≤ ``largest``.

    Parameters
    ----------
    system : System
        A x = b with its box (``t`` is b, not 0).
    largest : int or None
        The bound on |λ| (default 1, solvediophant's; None: any λ the box allows).
    find_all, count_only, budget, options
        As for :func:`indexset.search.decide.decide_system`.

    Returns
    -------
    Result
        ``solutions`` (and ``index_set``, the first) are pairs ``(x, λ)``,
        x written as ``system`` writes its solutions (a support, or values);
        ``count`` counts the pairs when complete.
    """
    budget = budget or Budget()
    parts = multiple_systems(system, largest)
    if not parts:
        low, high = multiple_range(system, largest)
        reason = f"no integer λ ≠ 0 lies in [{low}, {high}], the range the box allows for A x = λ b"
        return Result(INFEASIBLE, reason, engine="exact", complete=True, count=0, solutions=[], stages={"multiples": {"low": low, "high": high}})
    found, count, complete, stages, engines, reasons = [], 0, True, {}, [], []
    for sign, part in parts:
        result = decide_system(part, find_all=find_all, count_only=count_only, budget=budget, **options)
        stages[f"lambda {'> 0' if sign > 0 else '< 0'}"] = result.stages
        engines.append(result.engine or "exact")
        reasons.append(f"λ {'> 0' if sign > 0 else '< 0'}: {result.reason or result.status}")
        for solution in result.solutions or []:
            values = part.values(solution)
            found.append((system.solution(values[:-1]), sign * (1 + values[-1])))
        if result.status == UNKNOWN or (find_all and not result.complete):
            complete = False
        count += result.count or 0
        if found and not find_all:
            break
    engine = "+".join(dict.fromkeys(engines))
    low, high = multiple_range(system, largest)
    stages["multiples"] = {"low": low, "high": high}
    if found:
        reason = f"A x = λ b with λ ≠ 0 in [{low}, {high}]; " + "; ".join(reasons)
        return Result(FEASIBLE, reason, index_set=found[0], solutions=found, count=count if find_all and complete else None, engine=engine,
                      complete=find_all and complete, stages=stages).note_halt(budget.halt_reason(), find_all)
    if complete:
        return Result(INFEASIBLE, f"no solution of A x = λ b for any λ ≠ 0 in [{low}, {high}]: " + "; ".join(reasons), engine=engine, complete=True,
                      count=0, solutions=[], stages=stages)
    return Result(UNKNOWN, "; ".join(reasons), engine=engine, stages=stages).note_halt(budget.halt_reason(), find_all)
