"""CP-SAT engine: the 0/1 system as a constraint model, in kernel coordinates when given.

With a :class:`~indexset.search.reduce.Reduction` holding z0 and an LLL-reduced
kernel basis K, the model has integer variables y with exact box-derived
bounds and ``z = z0 + K y`` (MATH.md §6); otherwise it is the plain model
``M z = t`` (``|M z − t| ≤ slack`` in tolerance mode). CP-SAT finds some
planted sets that lattice enumeration misses, so the portfolio runs both.
"""

from __future__ import annotations

import functools
import threading
import time

import numpy as np

from indexset.budget import INTERRUPTED, TIME_LIMIT, Budget
from indexset.result import FEASIBLE, INFEASIBLE, UNKNOWN, Result
from indexset.search.bounds import kernel_bounds
from indexset.search.reduce import Reduction
from indexset.search.system import System, fit_coefficients

NAME = "cpsat"
INT_LIMIT = 2**53
"""Largest coefficient magnitude handed to CP-SAT (its linear sums must not overflow int64)."""


def _cp_model():
    """OR-Tools' CP-SAT module, imported on first use: it is slow to load, and most runs never start CP-SAT."""
    from ortools.sat.python import cp_model

    return cp_model


def _fits(values) -> bool:
    return all(abs(int(v)) < INT_LIMIT for v in values)


def build_model(system: System, reduction: Reduction | None, min_size: int = 0, *, budget: Budget | None = None):
    """The CP-SAT model, its 0/1 variables and the model kind.

    Kinds: ``kernel`` (z = z0 + K y with certified bounds on y, plus the rows
    when they fit), ``plain`` (the rows), ``relaxed`` (rows too large for
    64 bits, replaced by the scaled relaxation of
    :func:`indexset.search.system.fit_coefficients`: it keeps every solution, and
    the caller must filter hits with the exact system), or ``empty`` (the
    certified bounds leave no y), or ``stopped`` (the budget's stop was set
    or its deadline passed while the bounds were computed).

    Parameters
    ----------
    system : System
    reduction : Reduction or None
        Use kernel coordinates when it holds z0 and a kernel basis.
    min_size : int
        Add ``Σ z ≥ min_size`` (|S| ≥ d is implied by (★); it helps search).
    budget : Budget, optional
        Deadline and stop request of the bounds' computation.
    """
    model = _cp_model().CpModel()
    if system.is_binary:
        z = [model.new_bool_var(f"z{i}") for i in range(system.n)]
    else:
        z = [model.new_int_var(0, u, f"z{i}") for i, u in enumerate(system.bounds())]
    kind = "plain"
    if _kernel_usable(system, reduction):
        bounds = kernel_bounds(reduction.z0, reduction.kernel, budget=budget, upper=system.upper)
        if bounds is None:
            return model, z, "stopped"
        if not _add_kernel(model, z, reduction.z0, reduction.kernel, bounds):
            return model, z, "empty"
        kind = "kernel"
    if _fits(system.M.ravel()) and _fits(system.t) and (system.slack is None or _fits(system.slack)) and _fits(system.bounds()):
        _add_rows(model, system, z)
    elif kind == "plain":
        exact_as_slack = system if system.slack is not None else System(system.M, system.t, np.zeros(system.m, dtype=object), system.rows, upper=system.upper)
        _add_rows(model, fit_coefficients(exact_as_slack), z)
        kind = "relaxed"
    if min_size:
        model.add(sum(z) >= min_size)
    return model, z, kind


def _kernel_usable(system: System, reduction: Reduction | None) -> bool:
    if reduction is None or reduction.z0 is None or system.slack is not None:
        return False
    return _fits(reduction.kernel.ravel()) and _fits(reduction.z0)


def _add_kernel(model, z, z0, K, bounds) -> bool:
    """Link z = z0 + K y; False when the certified bounds leave no y."""
    if any(lo > hi for lo, hi in bounds):
        return False
    y = [model.new_int_var(lo, hi, f"y{j}") for j, (lo, hi) in enumerate(bounds)]
    for i in range(len(z)):
        terms = [int(K[i, j]) * y[j] for j in range(len(y)) if int(K[i, j]) != 0]
        model.add(z[i] == int(z0[i]) + sum(terms))
    return True


def _add_rows(model, system: System, z) -> None:
    for r in range(system.m):
        expr = sum(int(system.M[r, i]) * z[i] for i in range(system.n) if int(system.M[r, i]) != 0)
        if system.slack is None:
            model.add(expr == int(system.t[r]))
        else:
            model.add_linear_constraint(expr, int(system.t[r]) - int(system.slack[r]), int(system.t[r]) + int(system.slack[r]))


@functools.cache
def _collector_class():
    """The solution callback class (built on first use, so that OR-Tools loads only when CP-SAT runs)."""

    class Collector(_cp_model().CpSolverSolutionCallback):
        """Collects the solutions (supports or values, as ``system`` writes them) that pass ``accept``; stops at the first unless asked for all."""

        def __init__(self, system, z, find_all, progress, accept, count_only=False):
            super().__init__()
            self._system = system
            self._count_only = count_only
            self.count = 0
            self._z = z
            self._find_all = find_all
            self._progress = progress
            self._accept = accept
            self.solutions = []
            self.candidates = 0
            self._seen = set()

        def on_solution_callback(self) -> None:
            solution = tuple(self._system.solution([self.value(var) for var in self._z]))
            self.candidates += 1
            if solution in self._seen or not self._accept(list(solution)):
                return
            self.count += 1
            if not self.solutions or not self._count_only:  # counting: the solver lists each solution once, so no set is kept
                self._seen.add(solution)
                self.solutions.append(list(solution))
            if self._progress:
                self._progress({"engine": NAME, "solutions": self.count})
            if not self._find_all:
                self.stop_search()

    return Collector


def search(system, reduction=None, *, find_all=False, budget=None, time_limit=None, seed=0, stop=None, progress=None, min_size=0, workers=2, count_only=False) -> Result:
    """Search the system with CP-SAT (see :mod:`indexset.search.engines` for the contract; ``count_only``: keep the first solution, count the others)."""
    budget = budget or Budget.of(time_limit, stop)
    start = budget.start
    if budget.stopped():
        return Result(UNKNOWN, f"CP-SAT: {INTERRUPTED} before it started", engine=NAME)
    model, z, mode = build_model(system, reduction, min_size, budget=budget)
    if mode == "stopped":
        return Result(UNKNOWN, f"CP-SAT: {budget.halt_reason() or TIME_LIMIT} while computing the kernel bounds", engine=NAME, time_s=budget.elapsed())
    if mode == "empty":
        return Result(INFEASIBLE, "the certified box bounds leave no integer y with 0 ≤ z0 + K y ≤ u", engine=NAME, complete=True, count=0, solutions=[], time_s=time.perf_counter() - start)
    relaxed = mode == "relaxed"
    solver = _cp_model().CpSolver()
    params = solver.parameters
    params.random_seed = int(seed) % 2**31  # CP-SAT takes an int32 seed
    params.catch_sigint_signal = False  # Ctrl-C is handled by the caller, which sets `stop`
    left = budget.remaining()
    if left is not None:
        params.max_time_in_seconds = max(0.01, left)
    if find_all or relaxed:
        # A relaxed model may have spurious hits: walk all of them, keep exact ones.
        params.enumerate_all_solutions = True
        params.num_workers = 1  # CP-SAT enumerates all solutions with one worker only
    else:
        params.num_workers = int(workers)
    accept = system.is_solution if relaxed else (lambda support: True)
    collector = _collector_class()(system, z, find_all, progress, accept, count_only and find_all)
    finished = threading.Event()
    watcher = _watch(budget.stop, finished, solver)
    try:
        status = solver.solve(model, collector)
    finally:
        finished.set()
        if watcher:
            watcher.join()
    stopped = budget.stopped()
    return _result(status, collector.solutions, find_all or relaxed, stopped, mode, time.perf_counter() - start, find_all, collector.count)

def _watch(stop, finished, solver):
    """A thread that forwards the caller's stop request to CP-SAT.

    It keeps asking until the solve returns: a request made before CP-SAT
    has started would otherwise be lost.
    """
    if stop is None:
        return None

    def loop():
        while not finished.is_set():
            if stop.is_set():
                solver.stop_search()
            finished.wait(0.05)

    thread = threading.Thread(target=loop, name="indexset-cpsat-stop")
    thread.start()
    return thread


def _result(status, solutions, enumerated, stopped, mode, elapsed, find_all, count) -> Result:
    cp_model = _cp_model()
    stages = {"model": mode}
    if status == cp_model.INFEASIBLE or (enumerated and status == cp_model.OPTIMAL and not solutions and not stopped):
        proof = "enumerated every solution of the scaled relaxation (which keeps all exact ones); none is exact" if mode == "relaxed" else f"proved the {mode} model infeasible"
        return Result(INFEASIBLE, f"CP-SAT {proof}", engine=NAME, complete=True, count=0, solutions=[], time_s=elapsed, stages=stages)
    complete = find_all and status == cp_model.OPTIMAL and not stopped
    if solutions:
        reason = f"CP-SAT ({mode} model) found {count} solution(s)" + (", all of them" if complete else "")
        return Result(FEASIBLE, reason, index_set=solutions[0], solutions=solutions, count=count if complete else None, engine=NAME, complete=complete, time_s=elapsed, stages=stages)
    why = INTERRUPTED if stopped else TIME_LIMIT
    return Result(UNKNOWN, f"CP-SAT ({mode} model): {why} before a proof", engine=NAME, time_s=elapsed, stages=stages)


class CpSatEngine:
    """The CP-SAT engine as an :class:`indexset.search.engines.Engine`."""

    name = NAME
    options = ("min_size", "workers", "count_only")

    def search(self, system, reduction=None, **options) -> Result:
        """See :func:`search`."""
        return search(system, reduction, **options)


ENGINE = CpSatEngine()
