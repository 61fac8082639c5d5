"""Driving the enumeration kernel: chunks, threads, subtrees.

Every kernel call goes through :meth:`Run.drive`, which runs chunks of
about ``chunk_seconds``, checks each leaf exactly, and stops when the
budget's time is up, its stop request is set, or (first-solution mode) a
solution exists. A tree is walked by one thread, or by several sharing the
subtrees of one level (:func:`walk_shared`; the kernel releases the GIL),
or, by a caller such as :mod:`indexset.search.split`, as independent
subtrees (:func:`split_tree`, :func:`search_subtree`): the subtrees
partition the search.
"""

from __future__ import annotations

import collections
import contextlib
import threading
import time

import numpy as np

from indexset.budget import Budget
from indexset.native import config
from indexset.native import enumerate as native
from indexset.search.lattice.basis import Lattice, decode
from indexset.search.lattice.tuning import DEFAULT, LatticeTuning
from indexset.search.system import System
from indexset.trace import Reporter

NAME = "lattice"

FAILED = "failed"
"""Why a shared walk ended when one of its threads raised (the error is re-raised)."""


class Run:
    """Shared state of one enumeration: solutions, counters, the stop rule.

    Parameters
    ----------
    system : System
    lattice : Lattice
    find_all : bool
        Every solution; else the run halts at its first.
    budget : Budget
    tuning : LatticeTuning
    coord_mask : ndarray, optional
        Levels where the per-coordinate bounds apply (fixed); without it the
        run adapts them itself after ``tuning.coord_sample`` nodes.
    bound2 : ndarray, optional
        A pruning profile (the walk is then incomplete); default the radius.
    limit : int, optional
        A discrepancy limit (the walk is then incomplete, see
        :func:`indexset.native.enumerate.enumerate_box`); default none.
    count_only : bool
        With ``find_all``: the kernel counts the solutions of an exact
        lattice itself (its leaf test is exact integer arithmetic, and
        every lattice point in the box is a solution, MATH.md §6.1), and
        only each walk's first is kept in ``solutions``; :meth:`count` is
        their number.
    """

    def __init__(self, system: System, lattice: Lattice, find_all: bool, budget: Budget, tuning: LatticeTuning = DEFAULT,
                 coord_mask=None, bound2=None, limit: int | None = None, count_only: bool = False) -> None:
        self.system, self.lattice, self.find_all = system, lattice, find_all
        self.budget, self.tuning = budget, tuning
        self.solutions, self.seen = [], set()
        self.counted = 0  # solutions the kernel counted without stopping (count_only)
        self.nodes = 0
        self.interrupted = None
        self.lock = threading.Lock()
        self.reporters: dict = {}  # one Reporter per progress callable (a walk is reported on by its driving thread)
        self.split_level = None
        self.subtrees = 0
        self.subtrees_done = 0
        self.estimate = None
        self.workers = 0  # threads that walked the tree (0: the calling thread alone)
        if coord_mask is None and tuning.coord_min_gain > 1.0:
            coord_mask = np.zeros(lattice.D, dtype=np.int64)  # no level can pay: off from the start, no sample
        coord = np.zeros((3, lattice.D), dtype=np.int64)
        coord[0] = 1 if coord_mask is None else 2 * (np.asarray(coord_mask) > 0)  # a fixed mask is settled
        self.adapted = coord_mask is not None
        self.tree = lattice.tree(bound2, coord, tuning.single_precision, count_only=find_all and count_only,
                                 relaxed=bound2 is not None and tuning.relaxed_pruning)
        self.limit = limit

    def count(self) -> int:
        """Solutions found so far: those counted by the kernel and those recorded."""
        return self.counted + len(self.solutions)

    def new_walk(self) -> native.Walk:
        """A fresh walk of the run's tree (in its precision)."""
        return self.lattice.new_walk(self.tree)

    def halted(self) -> bool:
        """Whether to stop now (recording why, once)."""
        if self.interrupted is not None:
            return True
        if not self.find_all and self.solutions:
            return True
        self.interrupted = self.budget.halt_reason()
        return self.interrupted is not None

    def drive(self, walk: native.Walk, floor: int, split: int, on_prefix=None, progress=None) -> bool:
        """Run the kernel on ``walk`` until DONE (True) or a halt (False)."""
        budget = self.tuning.first_chunk_nodes
        istate = walk.istate
        counted, solved = int(istate[native.NODES]), int(istate[native.SOLUTIONS])
        while not self.halted():
            t0 = time.perf_counter()
            status = native.enumerate_box(self.tree, walk, floor, split, budget, self.limit)
            budget = _next_budget(budget, time.perf_counter() - t0, self.tuning.chunk_seconds)
            with self.lock:
                self.nodes += int(istate[native.NODES]) - counted
                self.counted += int(istate[native.SOLUTIONS]) - solved
                if not self.adapted and self.nodes >= self.tuning.coord_sample:
                    self.adapt()
            counted, solved = int(istate[native.NODES]), int(istate[native.SOLUTIONS])
            if status == native.FOUND:
                self._record(walk.x)
            elif status == native.PREFIX:
                on_prefix(walk.x[split:].copy())
            elif status == native.DONE:
                return True
            if progress is not None:
                progress()
        return False

    def adapt(self) -> None:
        """Switch the per-coordinate bounds off where they have not paid, and mark the others settled (no longer counted)."""
        self.adapted = True
        coord = self.tree.coord
        tries, cuts = coord[1], coord[2]
        coord[0, coord[0] > 0] = 2
        coord[0, (tries < self.tuning.coord_min_tries) | (cuts < self.tuning.coord_min_gain * tries)] = 0

    def coord_levels_off(self) -> int:
        """Levels where the per-coordinate bounds are off."""
        return int((self.tree.coord[0] == 0).sum())

    def _record(self, x: np.ndarray) -> None:
        support = decode(self.lattice, x, self.system)
        if support is None:
            return
        with self.lock:
            if tuple(support) not in self.seen:
                self.seen.add(tuple(support))
                self.solutions.append(support)

    def report(self, progress, start: float) -> None:
        """Counters to ``progress`` at most once a second."""
        if progress is None:
            return
        reporter = self.reporters.setdefault(id(progress), Reporter(progress))

        def counters() -> dict:
            found = {"engine": NAME, "nodes": self.nodes, "solutions": self.count(), "elapsed_s": round(time.perf_counter() - start, 3)}
            return dict(found, estimated_nodes=self.estimate) if self.estimate else found

        reporter(counters)


def walk_whole(run: Run, progress=None) -> bool:
    """Walk the whole tree in the calling thread (True when exhausted)."""
    return run.drive(run.new_walk(), run.lattice.D, -1, progress=progress)


def walk_shared(run: Run, workers: int, progress, start: float, watch=None, late: threading.Event | None = None) -> bool:
    """Hand subtrees of one split level to worker threads (the kernel releases the GIL); ``watch()`` is called now and then while they walk.

    With ``late``, the last worker takes its first subtree only once
    ``late`` is set (its core is busy with something else until then).
    """
    prefixes, level = _split(run, run.tuning.subtrees_per_worker * workers)
    if prefixes is None:
        return False  # halted while splitting
    run.split_level, run.subtrees = level, len(prefixes)
    queue = collections.deque(prefixes)
    failures, finished = [], []

    def worker(waits: bool):
        try:
            while waits and not late.wait(0.1):
                with run.lock:
                    if not queue or run.halted():
                        return
            while True:
                with run.lock:
                    if not queue:
                        return
                    prefix = queue.popleft()
                if not _walk_below(run, prefix, level):
                    return
                finished.append(prefix)
                run.subtrees_done = len(finished)
        except BaseException as exc:  # surfaced in the calling thread
            failures.append(exc)
            run.interrupted = FAILED

    threads = [threading.Thread(target=worker, args=(late is not None and k == workers - 1,), name=f"indexset-enumerate-{k}") for k in range(workers)]
    run.workers = workers
    for thread in threads:
        thread.start()
    alive = threads
    while alive:
        alive[0].join(0.2)
        run.report(progress, start)
        if watch is not None:
            watch()
        alive = [thread for thread in threads if thread.is_alive()]
    if failures:
        raise failures[0]
    return len(finished) == len(prefixes)


def _walk_below(run: Run, prefix: np.ndarray, level: int) -> bool:
    """Search the subtree below the fixed top coordinates ``x[level:] = prefix`` (True when exhausted)."""
    walk = run.new_walk()
    walk.x[level:] = prefix
    native.start_below(level, run.tree, walk)
    return run.drive(walk, level, -1)


def split_tree(system: System, lattice: Lattice, target: int, budget: Budget | None = None, tuning: LatticeTuning = DEFAULT) -> tuple:
    """Cut the enumeration tree into independent subtrees (fixed top coordinates).

    Every leaf of the tree lies below exactly one node of the returned
    level, and :func:`search_subtree` on each prefix walks exactly the
    subtree the whole enumeration would walk below it, in the same order:
    the subtrees partition the search.

    Parameters
    ----------
    system : System
    lattice : Lattice
    target : int
        Wanted number of subtrees: the highest level with at least this many
        nodes is used (not below level ``tuning.split_from // 2``).
    budget : Budget, optional
        Its deadline and stop request end the split early.
    tuning : LatticeTuning

    Returns
    -------
    prefixes : list of ndarray or None
        ``x[level:]`` of every node of the level, in enumeration order;
        empty when the tree has no node there (nothing to search), None when
        halted by the budget.
    level : int
    nodes : int
        Nodes visited while splitting.
    """
    run = Run(system, lattice, True, budget or Budget(), tuning)
    prefixes, level = _split(run, max(1, int(target)))
    return prefixes, level, run.nodes


def coordinate_mask(system: System, lattice: Lattice, tuning: LatticeTuning = DEFAULT) -> np.ndarray:
    """Levels where the per-coordinate bounds stay on, as the one-process engine settles them.

    Runs the enumeration from the root for ``tuning.coord_sample`` nodes (or
    to its end) and keeps the bounds where they paid (:meth:`Run.adapt`).
    The parts of a split search share this mask instead of each paying the
    bounds at every level for its own first nodes.
    """
    if tuning.coord_min_gain > 1.0:
        return np.zeros(lattice.D, dtype=np.int64)  # no level can pay: no sample
    run = Run(system, lattice, True, Budget(), tuning)
    walk = run.new_walk()
    while int(walk.istate[native.NODES]) < tuning.coord_sample:
        if native.enumerate_box(run.tree, walk, lattice.D, -1, tuning.coord_sample) == native.DONE:
            break
    run.adapt()
    return run.tree.coord[0].copy()


def search_subtree(system: System, lattice: Lattice, prefix, level: int, *, find_all: bool = False, budget: Budget | None = None,
                   coord_mask=None, tuning: LatticeTuning = DEFAULT, count_only: bool = False) -> dict:
    """Walk the subtree below ``x[level:] = prefix`` (a prefix from :func:`split_tree`).

    ``coord_mask`` (from :func:`coordinate_mask`) fixes where the
    per-coordinate bounds apply; without it the walk adapts them itself.

    Returns
    -------
    dict
        ``solutions`` (checked exactly, in enumeration order; with
        ``count_only`` the first only), ``count`` (every solution found),
        ``nodes``, ``complete`` (the subtree was exhausted) and
        ``interrupted`` (the budget's halt reason, or None; a first-solution
        search that found one is neither complete nor interrupted).
    """
    run = Run(system, lattice, find_all, budget or Budget(), tuning, coord_mask, count_only=count_only)
    done = _walk_below(run, np.asarray(prefix, dtype=np.int64), int(level))
    return {"solutions": run.solutions, "count": run.count(), "nodes": run.nodes, "complete": bool(done and run.interrupted is None), "interrupted": run.interrupted}


def estimate_nodes(lattice: Lattice, probes: int, seed: int, bound2: np.ndarray | None = None, tuning: LatticeTuning = DEFAULT) -> float:
    """Knuth's random-probe estimate of the size of the tree a :class:`Run` walks (under the per-level bounds ``bound2``, if given).

    The tree is the one the kernel walks under ``tuning``: with the
    per-coordinate bounds off from the start when no level can pay for
    them, as :class:`Run` sets them.
    """
    coord = None
    if tuning.coord_min_gain > 1.0:
        coord = np.zeros((3, lattice.D), dtype=np.int64)
    tree = lattice.tree(bound2, coord, relaxed=bound2 is not None and tuning.relaxed_pruning)
    return float(native.estimate_tree(tree, lattice.new_walk(tree), probes, seed))


def kernels_loaded() -> bool:
    """Whether this process has loaded the kernels already (an earlier search did)."""
    return config.is_loaded(native.estimate_tree)


@contextlib.contextmanager
def kernels_loading(lattice: Lattice):
    """Load the kernels in a thread while the caller goes on; True inside when that thread runs.

    Importing Numba and loading the first cached kernel take one core for
    ``kernel_load_seconds`` (by the cost model), while the caller can
    reduce candidate bases on the other. The thread is joined on exit
    (after an exception too), so none outlives the block.
    """
    if kernels_loaded() or not lattice.searchable or lattice.D == 0:
        yield False
        return
    thread = threading.Thread(target=_load_kernels, args=(lattice,), name="indexset-kernel-load")
    thread.start()
    try:
        yield True
    finally:
        thread.join()


def _load_kernels(lattice: Lattice) -> None:
    """One probe of the tree estimate: the cheapest call that loads the kernels."""
    with contextlib.suppress(Exception):  # the caller's own first kernel call meets the same error and reports it
        estimate_nodes(lattice, 1, 0)


def _split(run: Run, target: int):
    """Prefixes at the highest level with at least ``target`` tree nodes.

    Returns ``(prefixes, level)``; ``([], D − 1)`` when the tree has no node
    there (the search is complete), ``(None, level)`` when halted.
    """
    D = run.lattice.D
    level = D - 1
    while True:
        found = []
        if not run.drive(run.new_walk(), D, level, on_prefix=found.append):
            return None, level
        if len(found) >= target or level <= run.tuning.split_from // 2 or not found:
            return found, level
        level -= 1


def _next_budget(budget: int, elapsed: float, chunk_seconds: float) -> int:
    """Nodes of the next kernel call, aimed at ``chunk_seconds``."""
    if elapsed < chunk_seconds / 4:
        return min(budget * 4, 1 << 30)
    if elapsed > chunk_seconds * 4:
        return max(budget // 4, 1 << 10)
    return budget
