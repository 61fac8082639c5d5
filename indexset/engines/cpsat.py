"""CP-SAT engine: the 0/1 system as a constraint model, in kernel coordinates when given.

With a :class:`~indexset.reduce.Reduction` holding z0 and an LLL-reduced
kernel basis K, the model has integer variables y with exact box-derived
bounds and ``z = z0 + K y`` (MATH.md §6); otherwise it is the plain model
``M z = t`` (``|M z − t| ≤ slack`` in tolerance mode). CP-SAT finds some
planted sets that lattice enumeration misses, so the portfolio runs both.
"""

from __future__ import annotations

import threading
import time
import numpy as np
from ortools.sat.python import cp_model

from ..bounds import kernel_bounds
from ..reduce import Reduction
from ..result import FEASIBLE, INFEASIBLE, UNKNOWN, Result
from ..system import System

NAME = "cpsat"
INT_LIMIT = 2**53
"""Largest coefficient magnitude handed to CP-SAT (its linear sums must not overflow int64)."""


def _fits(values) -> bool:
    return all(abs(int(v)) < INT_LIMIT for v in values)


def build_model(system: System, reduction: Reduction | None, min_size: int = 0):
    """The CP-SAT model and its 0/1 variables, or None when coefficients are too large.

    Parameters
    ----------
    system : System
    reduction : Reduction or None
        Use kernel coordinates when it holds z0 and a kernel basis.
    min_size : int
        Add ``Σ z ≥ min_size`` (|S| ≥ d is implied by (★); it helps search).
    """
    model = cp_model.CpModel()
    n = system.n
    z = [model.new_bool_var(f"z{i}") for i in range(n)]
    use_kernel = reduction is not None and reduction.z0 is not None and system.slack is None
    if use_kernel:
        K = reduction.kernel
        if not (_fits(K.ravel()) and _fits(reduction.z0)):
            use_kernel = False
    if use_kernel:
        bounds = kernel_bounds(reduction.z0, K)
        if any(lo > hi for lo, hi in bounds):
            return model, z, "empty"
        y = [model.new_int_var(lo, hi, f"y{j}") for j, (lo, hi) in enumerate(bounds)]
        for i in range(n):
            terms = [int(K[i, j]) * y[j] for j in range(len(y)) if int(K[i, j]) != 0]
            model.add(z[i] == int(reduction.z0[i]) + sum(terms))
    if not use_kernel or _fits(system.M.ravel()):
        if not (_fits(system.M.ravel()) and _fits(system.t)):
            if not use_kernel:
                return None, z, "too_large"
        else:
            _add_rows(model, system, z)
    if min_size:
        model.add(sum(z) >= min_size)
    return model, z, "kernel" if use_kernel else "plain"


def _add_rows(model, system: System, z) -> None:
    for r in range(system.m):
        expr = sum(int(system.M[r, i]) * z[i] for i in range(system.n) if int(system.M[r, i]) != 0)
        if system.slack is None:
            model.add(expr == int(system.t[r]))
        else:
            model.add_linear_constraint(expr, int(system.t[r]) - int(system.slack[r]), int(system.t[r]) + int(system.slack[r]))


class _Collector(cp_model.CpSolverSolutionCallback):
    """Collects supports; stops at the first one unless asked for all."""

    def __init__(self, z, find_all, progress):
        super().__init__()
        self._z = z
        self._find_all = find_all
        self._progress = progress
        self.solutions = []
        self._seen = set()

    def on_solution_callback(self) -> None:
        support = tuple(i for i, var in enumerate(self._z) if self.boolean_value(var))
        if support not in self._seen:
            self._seen.add(support)
            self.solutions.append(list(support))
            if self._progress:
                self._progress({"engine": NAME, "solutions": len(self.solutions)})
        if not self._find_all:
            self.stop_search()


def search(system, reduction=None, *, find_all=False, time_limit=None, seed=0, stop=None, progress=None, min_size=0, workers=2) -> Result:
    """Search the 0/1 system with CP-SAT (see :mod:`indexset.engines` for the contract)."""
    start = time.perf_counter()
    model, z, mode = build_model(system, reduction, min_size)
    if mode == "empty":
        return Result(INFEASIBLE, "the box 0 ≤ z0 + K y ≤ 1 leaves no integer y", engine=NAME, complete=True, count=0, solutions=[], time_s=time.perf_counter() - start)
    if model is None:
        return Result(UNKNOWN, "coefficients too large for CP-SAT's 64-bit model", engine=NAME, time_s=time.perf_counter() - start)
    solver = cp_model.CpSolver()
    params = solver.parameters
    params.random_seed = int(seed)
    params.catch_sigint_signal = False  # Ctrl-C is handled by the caller, which sets `stop`
    if time_limit is not None:
        params.max_time_in_seconds = max(0.01, float(time_limit))
    if find_all:
        params.enumerate_all_solutions = True
        params.num_workers = 1  # CP-SAT enumerates all solutions with one worker only
    else:
        params.num_workers = int(workers)
    collector = _Collector(z, find_all, progress)
    finished = threading.Event()
    watcher = _watch(stop, finished, solver)
    try:
        status = solver.solve(model, collector)
    finally:
        finished.set()
        if watcher:
            watcher.join()
    stopped = stop is not None and stop.is_set()
    return _result(status, collector.solutions, find_all, stopped, mode, time.perf_counter() - start)


def _watch(stop, finished, solver):
    """A thread that forwards the caller's stop request to CP-SAT."""
    if stop is None:
        return None

    def loop():
        while not finished.is_set():
            if stop.wait(0.05):
                solver.stop_search()
                return

    thread = threading.Thread(target=loop, daemon=True)
    thread.start()
    return thread


def _result(status, solutions, find_all, stopped, mode, elapsed) -> Result:
    stages = {"model": mode}
    if status == cp_model.INFEASIBLE or (find_all and status == cp_model.OPTIMAL and not solutions and not stopped):
        return Result(INFEASIBLE, f"CP-SAT proved the {mode} model infeasible", engine=NAME, complete=True, count=0, solutions=[], time_s=elapsed, stages=stages)
    complete = find_all and status == cp_model.OPTIMAL and not stopped
    if solutions:
        reason = f"CP-SAT ({mode} model) found {len(solutions)} solution(s)" + (", all of them" if complete else "")
        return Result(FEASIBLE, reason, index_set=solutions[0], solutions=solutions, count=len(solutions) if complete else None, engine=NAME, complete=complete, time_s=elapsed, stages=stages)
    why = "stopped" if stopped else "time limit reached"
    return Result(UNKNOWN, f"CP-SAT ({mode} model): {why} before a proof", engine=NAME, time_s=elapsed, stages=stages)
