"""Lemma 7.7e's systems on every core, or on a Dask cluster, with progress (MATH.md §7.7).

:func:`~indexset.theory.shortside.decide_short_side` decides one plan's
systems in this process. A plan predicted to take longer than
``DegenerateTuning.short_parallel_seconds`` runs here instead: this
process produces the systems' directions in order and hands them out in
batches to worker processes (or to the workers of a Dask cluster, when
the caller has one), each deciding its batch with the same code, until
one batch finds a solution, one is left undecided, or every batch is
refuted. A solution is checked exactly here again. Progress reports the
systems decided of the total and the time predicted for the rest.

Workers ignore Ctrl-C: a stop request or the deadline reaches them
through a shared event and their own deadline, and every process this
module starts has ended when it returns.
"""

from __future__ import annotations

import itertools
import multiprocessing
import os
import signal
import time
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from dataclasses import dataclass

from indexset.budget import Budget
from indexset.search.cluster import stop_tracker, tracker_running
from indexset.theory.degenerate_tuning import DegenerateTuning
from indexset.theory.shortside import ShortAnswer, ShortPlan, decide_directions, decide_short_side, directions, rank_at_most_one, shared_kernel
from indexset.trace import Reporter

__all__ = ["Workers", "run_short_side"]


@dataclass(frozen=True)
class Workers:
    """Where long work may run, and who hears of its progress.

    Attributes
    ----------
    processes : int or None
        Local worker processes (None: one per CPU; 1: this process only).
    cluster : indexset.search.cluster.Cluster or None
        A cluster whose Dask client, when it has one, takes the work
        instead of local processes.
    progress : callable or None
        Called with a dict of counters about once a second.
    """

    processes: int | None = None
    cluster: object = None
    progress: object = None

    def count(self) -> int:
        """Local processes to start."""
        return max(1, self.processes if self.processes is not None else os.cpu_count() or 1)


def run_short_side(question, plan: ShortPlan, tuning: DegenerateTuning, budget: Budget, workers: Workers | None = None) -> ShortAnswer:
    """Decide the systems of ``plan``, in parallel when they are predicted to take long; stop at the first solution.

    The first ``tuning.short_probe`` systems are decided here and time
    the rest. A prediction past the time allowed stops the work as
    :func:`~indexset.theory.shortside.decide_short_side` does (``open``,
    how ``time``); one within ``tuning.short_parallel_seconds``, or one
    process allowed and no cluster, decides the rest here too. Otherwise
    the rest go to the workers, the prediction divided by their number.
    """
    workers = workers or Workers()
    report = Reporter(workers.progress)
    shared = shared_kernel(question)
    began = time.perf_counter()
    order = directions(plan)
    probe = list(itertools.islice(order, tuning.short_probe))
    status, chosen, done, how = decide_directions(question, shared, probe, tuning, budget)
    if status != "refuted" or done == plan.count:
        return ShortAnswer(status, chosen, how, done, None)
    alone = (time.perf_counter() - began) / done * plan.count  # predicted seconds in this process
    long = alone > tuning.short_parallel_seconds
    client = _client(workers, alone, budget) if long else None
    threads = workers.cluster.threads() if client is not None else workers.count()
    parallel = client is not None or (long and threads > 1)
    predicted = alone / (threads if parallel else 1)
    remaining = budget.remaining()
    if predicted > (tuning.max_short_seconds if remaining is None else remaining):
        return ShortAnswer("open", None, "time", done, predicted)
    if not parallel:
        rest = decide_short_side(question, plan, tuning, budget, start=done, shared=shared)
        return ShortAnswer(rest.status, rest.chosen, rest.how, done + rest.done, predicted)
    batches = _batches(order, tuning.short_batch)
    data = (question, shared, tuning)
    pool = _DaskPool(client, threads, data, budget) if client is not None else _LocalPool(threads, data, budget)
    tally = _Tally(plan.count, done, predicted, report)
    with pool:
        answer = _drive(pool, batches, budget, tally)
    if workers.progress is not None:  # the final count, not rate-limited: later stages may not report for a while
        workers.progress({**tally.counters(), "status": answer.status})
    if answer.status == "found" and not rank_at_most_one(question, answer.chosen):
        raise ArithmeticError("bug: a solution of Lemma 7.7e's system has rank above 1")  # never expected
    return answer


def _client(workers: Workers, alone: float, budget: Budget):
    """The Dask client of the caller's cluster, when it takes work this long (a local one starts only then); else None."""
    cluster = workers.cluster
    if cluster is None or not cluster.accepts(alone, budget.remaining()):
        return None
    return cluster.client_or_none(budget)


def _batches(order, size: int):
    """The directions left, in lists of ``size``."""
    while batch := list(itertools.islice(order, size)):
        yield batch


class _Tally:
    """Systems decided so far, for progress and the answer."""

    def __init__(self, total: int, done: int, predicted: float, report: Reporter) -> None:
        self.total, self.done, self.predicted, self.report = total, done, predicted, report
        self.began = time.perf_counter()
        self.first = done

    def add(self, done: int) -> None:
        self.done += done

    def counters(self) -> dict:
        spent = time.perf_counter() - self.began
        rate = (self.done - self.first) / spent if spent > 0 else 0.0
        left = (self.total - self.done) / rate if rate > 0 else self.predicted
        return {"stage": "Lemma 7.7e systems", "systems": f"{self.done}/{self.total}", "predicted_s": round(left, 1)}


def _drive(pool, batches, budget: Budget, tally: _Tally) -> ShortAnswer:
    """Keep every worker busy with batches until one answers, the batches run out, or the budget ends."""
    pending = set()
    for batch in itertools.islice(batches, pool.depth):
        pending.add(pool.submit(batch))
    while pending:
        finished, pending = wait(pending, timeout=0.5, return_when=FIRST_COMPLETED)
        tally.report(tally.counters)
        for future in finished:
            status, chosen, done, how = future.result()
            tally.add(done)
            if status != "refuted":
                pool.stop()
                return ShortAnswer(status, chosen, budget.halt_reason() or how, tally.done, tally.predicted)
            batch = next(batches, None)
            if batch is not None:
                pending.add(pool.submit(batch))
        if budget.halt_reason() is not None:
            pool.stop()
            return ShortAnswer("open", None, budget.halt_reason(), tally.done, tally.predicted)
    return ShortAnswer("refuted", None, "short", tally.done, tally.predicted)


# --- the pools: local processes, or a Dask cluster ---

_WORKER = {}
"""A worker process's question, shared kernel, tuning, stop event and deadline (set by :func:`_start_worker`)."""


def _start_worker(question, shared, tuning, stop, deadline) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent turns Ctrl-C into the stop event
    _WORKER.update(question=question, shared=shared, tuning=tuning, stop=stop, deadline=deadline)


def _worker_batch(batch: list) -> tuple:
    """One batch of directions, decided in a worker process."""
    deadline = _WORKER["deadline"]
    budget = Budget.of(None if deadline is None else max(0.0, deadline - time.time()), stop=_WORKER["stop"])
    return decide_directions(_WORKER["question"], _WORKER["shared"], batch, _WORKER["tuning"], budget)


class _LocalPool:
    """Worker processes of this machine (spawned: this process may be running threads)."""

    def __init__(self, processes: int, data: tuple, budget: Budget) -> None:
        self.processes, self.depth, self.data = processes, 2 * processes, data
        remaining = budget.remaining()
        self.deadline = None if remaining is None else time.time() + remaining  # wall clock: each process has its own perf_counter
        self.own_tracker = not tracker_running()  # spawning starts multiprocessing's resource tracker, a process of its own
        self.context = multiprocessing.get_context("spawn")
        self.event = self.context.Event()
        self.executor = None

    def __enter__(self) -> _LocalPool:
        self.executor = ProcessPoolExecutor(self.processes, mp_context=self.context, initializer=_start_worker,
                                            initargs=(*self.data, self.event, self.deadline))
        return self

    def submit(self, batch: list) -> Future:
        return self.executor.submit(_worker_batch, batch)

    def stop(self) -> None:
        self.event.set()

    def __exit__(self, *exc) -> None:
        self.event.set()
        self.executor.shutdown(wait=True, cancel_futures=True)
        self.executor = self.event = None  # the event's semaphore is unlinked now, while the tracker still knows it
        if self.own_tracker:
            stop_tracker()


def _dask_batch(data: tuple, batch: list, seconds: float | None) -> tuple:
    """One batch of directions, decided on a Dask worker within ``seconds``."""
    question, shared, tuning = data
    return decide_directions(question, shared, batch, tuning, Budget.of(seconds))


class _DaskPool:
    """The workers of the caller's Dask cluster; its futures mirrored as :class:`concurrent.futures.Future`."""

    def __init__(self, client, threads: int, data: tuple, budget: Budget) -> None:
        self.client, self.data, self.budget = client, data, budget
        self.depth = 2 * threads
        self.futures = []

    def __enter__(self) -> _DaskPool:
        # One future for the whole record, under a key of its own: a content-hashed key shared with an earlier
        # call's (the same tuning, say) could be released by that call's exit while this one's batches need it.
        self.data = self.client.scatter([self.data], broadcast=True, hash=False)[0]
        return self

    def submit(self, batch: list) -> Future:
        mirror = Future()
        future = self.client.submit(_dask_batch, self.data, batch, self.budget.remaining(), pure=False)
        future.add_done_callback(lambda done: _settle(mirror, done))
        self.futures.append(future)
        return mirror

    def stop(self) -> None:
        self.client.cancel([future for future in self.futures if not future.done()])

    def __exit__(self, *exc) -> None:
        self.stop()
        self.futures.clear()


def _settle(mirror: Future, done) -> None:
    """Copy a finished Dask future's result (or error) into its mirror."""
    try:
        mirror.set_result(done.result())
    except BaseException as error:
        mirror.set_exception(error)
