"""Split lattice searches as Dask tasks: the protocol of cutting, running and merging parts.

The lattice engine's tree is cut at the highest level with at least
:attr:`~indexset.search.cluster_tuning.ClusterTuning.parts` nodes (:func:`indexset.search.lattice.walk.split_tree`);
each node fixes the top coordinates ``x[level:]`` and is one task. The
enumeration is deterministic, every leaf lies below exactly one node of
the level, and a task walks exactly the subtree the whole enumeration
would walk below its node, in the same order. Hence:

- counts add up and ``find_all`` lists each solution once, in the order of
  the one-process enumeration (parts are concatenated in index order);
- ``infeasible`` needs every part to come back complete and empty;
- in first-solution mode a part with a solution cancels every later part;
  earlier parts still running finish (at most ``workers − 1`` of them, since
  parts start in index order), so the answer is the sequential engine's
  first solution, whatever the number of workers;
- a task is plain data (numpy arrays and ints, :meth:`Lattice.payload`), so
  a part lost with its worker is simply run again (``retries``) with the
  same outcome.

Parts learn that they should stop (time limit, Ctrl-C, an earlier solution)
from a Dask ``Variable`` holding the lowest part index still wanted, polled
every ``check_seconds`` of the cluster's tuning: Dask cannot interrupt a running task. The
cluster itself (start, close) is :mod:`indexset.search.cluster`.
Library code: nothing here prints.
"""

from __future__ import annotations

import os
import time
import uuid
from dataclasses import dataclass

import numpy as np

from indexset.budget import INTERRUPTED, Budget
from indexset.search.cluster_tuning import DEFAULT as CLUSTER_DEFAULT
from indexset.search.lattice.tuning import DEFAULT, LatticeTuning
from indexset.search.system import System
from indexset.trace import Reporter


# ========================================================== cut-off flag
class Cutoff:
    """The search's "lowest part still wanted", a Dask Variable, on the client."""

    def __init__(self, client, parts: int) -> None:
        from distributed import Variable

        self.value = parts
        self.variable = Variable(f"indexset-cutoff-{uuid.uuid4().hex}", client=client)
        self.variable.set(parts)

    def lower(self, value: int) -> None:
        if value < self.value:
            self.value = value
            self.variable.set(value)



class RemoteStop:
    """``stop.is_set()`` inside a task: true once the cut-off drops to ``index`` or below.

    Polls the Variable at most every ``check_seconds``, the first time
    after that long (a round trip to the scheduler costs more than most parts; parts
    not started when the search stops are cancelled by the scheduler). A
    variable that cannot be read (deleted, scheduler gone) means stop.
    """

    def __init__(self, name: str, index: int, check_seconds: float = CLUSTER_DEFAULT.check_seconds) -> None:
        self.name, self.index, self.check_seconds = name, index, check_seconds
        self._next = time.monotonic() + check_seconds
        self._set = False

    def is_set(self) -> bool:
        now = time.monotonic()
        if self._set or now < self._next:
            return self._set
        self._next = now + self.check_seconds
        from distributed import Variable

        try:
            self._set = int(Variable(self.name).get(timeout=2)) <= self.index
        except Exception:
            self._set = True
        return self._set


# ========================================================= split search
def _walk():
    """The lattice engine's walk module (imported on first use: the Numba kernels)."""
    from indexset.search.lattice import walk

    return walk


def subproblem(system: System, lattice, tuning: LatticeTuning = DEFAULT) -> dict:
    """Plain data shared by every part of one split search (numpy arrays, ints, the engine's tuning)."""
    mask = _walk().coordinate_mask(system, lattice, tuning)
    return {"lattice": lattice.payload(), "M": system.M, "t": system.t, "upper": system.upper, "coord_mask": mask, "tuning": tuning}


def run_part(shared: dict, prefix: np.ndarray, level: int, find_all: bool, deadline_epoch: float | None, cutoff: str | None, index: int,
             count_only: bool = False, check_seconds: float = CLUSTER_DEFAULT.check_seconds) -> dict:
    """Task: walk one subtree (``x[level:] = prefix``) of the shared tree.

    Parameters
    ----------
    shared : dict
        :func:`subproblem`.
    prefix : ndarray of int64
    level : int
    find_all : bool
    deadline_epoch : float, optional
        ``time.time()`` after which to stop.
    cutoff : str, optional
        Name of the search's cut-off Variable (None: never asked to stop).
    index : int
        This part's index in the split.
    count_only : bool
        Count the subtree's solutions, keeping the first.
    check_seconds : float
        How often the part asks whether it is still wanted.

    Returns
    -------
    dict
        :func:`indexset.search.lattice.walk.search_subtree`'s dict plus
        ``index``, ``seconds`` and ``worker`` (host:pid).
    """
    began = time.perf_counter()
    from indexset.search.lattice.basis import Lattice

    lattice = Lattice.from_payload(shared["lattice"])
    system = System(shared["M"], shared["t"], upper=shared["upper"])
    deadline = None if deadline_epoch is None else began + (deadline_epoch - time.time())
    budget = Budget(deadline, RemoteStop(cutoff, index, check_seconds) if cutoff else Budget().stop, began)
    outcome = _walk().search_subtree(system, lattice, prefix, level, find_all=find_all, budget=budget, coord_mask=shared["coord_mask"], tuning=shared["tuning"],
                                     count_only=count_only)
    outcome.update(index=index, seconds=round(time.perf_counter() - began, 4), worker=f"{os.uname().nodename}:{os.getpid()}")
    return outcome


def _identity(value):
    """Task holding the shared data: recomputable if its worker is lost."""
    return value


def enumerate_split(system: System, lattice, cluster, find_all: bool, budget: Budget, progress, tuning: LatticeTuning | None = None,
                    count_only: bool = False) -> tuple:
    """Split the tree, run the parts on the cluster, merge.

    Parameters
    ----------
    system, lattice
        The engine's exact system and prepared lattice.
    cluster : indexset.search.cluster.Cluster
    find_all : bool
    budget : Budget
        Deadline and stop request of the search.
    progress : callable, optional
    tuning : LatticeTuning, optional
        The engine's tunables, for the split and for every part (default: its defaults).
    count_only : bool
        With ``find_all``: each part counts its solutions and keeps its first
        (the facts' ``count`` is their sum).

    Returns
    -------
    tuple or None
        None when the cluster is not available (a local cluster that cannot
        start, or a stop request or the deadline while it starts): the
        caller then searches in this process. Otherwise:
    solutions : list
        Checked supports, in the one-process enumeration order.
    complete : bool
        Every part exhausted its subtree (False in first-solution mode once
        a solution is found, as for the one-process engine).
    interrupted : str or None
    facts : dict
        Stage facts: split level, parts, per-part nodes and seconds, nodes.
    """
    began = time.perf_counter()
    tuning = DEFAULT if tuning is None else tuning
    client = cluster.client_or_none(budget)
    if client is None:
        return None
    target = cluster.parts or max(cluster.tuning.parts, cluster.tuning.parts_per_worker * cluster.threads())
    prefixes, level, split_nodes = _walk().split_tree(system, lattice, target, budget, tuning)
    facts = {"split_level": level, "parts": len(prefixes or []), "split_nodes": split_nodes, "cluster": cluster.to_json()}
    if prefixes is None:
        return [], False, budget.halt_reason() or INTERRUPTED, dict(facts, nodes=split_nodes)
    if not prefixes:
        return [], True, None, dict(facts, nodes=split_nodes)
    parts = _Parts(client, _Task(system, lattice, prefixes, level, find_all, count_only), budget, tuning, cluster.tuning)
    cluster.forget_later(parts.cutoff.variable)
    try:
        interrupted = parts.collect(progress, began)
    finally:
        parts.cleanup()
    solutions, seen = [], set()
    for index in sorted(parts.results):
        for support in parts.results[index]["solutions"]:
            if tuple(support) not in seen:  # the same rule as the one-process engine
                seen.add(tuple(support))
                solutions.append(support)
    if not find_all and solutions:
        first = min(i for i, r in parts.results.items() if r["solutions"])
        solutions = parts.results[first]["solutions"][:1]
    bad = [s for s in solutions if not system.is_solution(s)]
    if bad:
        raise AssertionError(f"a part reported {bad[0]}, which does not solve M z = t")
    complete = interrupted is None and len(parts.results) == len(prefixes) and all(r["complete"] for r in parts.results.values())
    facts.update(parts.facts(split_nodes), enumerate_s=round(time.perf_counter() - began, 4), count=sum(r["count"] for r in parts.results.values()))
    return solutions, complete, interrupted, facts


@dataclass(frozen=True)
class _Task:
    """What one split search runs: the system, its lattice, the subtrees' prefixes at ``level``, and what to collect."""

    system: System
    lattice: object
    prefixes: list
    level: int
    find_all: bool
    count_only: bool


class _Parts:
    """The futures of one split search and what came back."""

    def __init__(self, client, task: _Task, budget: Budget, tuning: LatticeTuning, cluster_tuning) -> None:
        self.client = client
        self.find_all = task.find_all
        self.count = len(task.prefixes)
        self.budget = budget
        self.cluster_tuning = cluster_tuning
        self.cutoff = Cutoff(client, self.count)
        left = budget.remaining()
        epoch = None if left is None else time.time() + left
        token = uuid.uuid4().hex[:12]
        shared = client.submit(_identity, subproblem(task.system, task.lattice, tuning), key=f"indexset-tree-{token}", pure=False)
        # Submitted in index order: Dask starts them first in, first out.
        self.pending = {
            client.submit(run_part, shared, prefix, task.level, task.find_all, epoch, self.cutoff.variable.name, i, task.count_only, cluster_tuning.check_seconds,
                          key=f"indexset-part-{token}-{i}", retries=cluster_tuning.retries, pure=False): i
            for i, prefix in enumerate(task.prefixes)
        }
        self.shared = shared
        self.futures = [shared, *self.pending]
        self.results = {}
        self.failure = None
        self.reporter = None

    def collect(self, progress, began) -> str | None:
        """Gather results until every wanted part is back or the search halts."""
        from distributed import as_completed

        # Callbacks, not a wait() on every pending future each poll: that
        # cost the client 15 % of a core, taken from the workers.
        arrivals = as_completed(list(self.pending))
        while self._wanted():
            batch = arrivals.next_batch(block=False)
            if not batch:
                time.sleep(self.cluster_tuning.poll_seconds)
            for future in batch:
                if future in self.pending and self.pending[future] < self.cutoff.value:  # else cancelled meanwhile
                    self._take(future)
            if self.failure:
                self._halt()
                return self.failure
            why = self.budget.halt_reason()
            if why:
                self._halt()
                return why
            self._report(progress, began)
        return None

    def _wanted(self) -> list:
        return [f for f, i in self.pending.items() if i < self.cutoff.value]

    def _take(self, future) -> None:
        index = self.pending.pop(future)
        try:
            result = future.result()
        except Exception as exc:  # retries exhausted or the worker kept dying
            self.failure = f"failed: part {index} could not be run on the cluster ({type(exc).__name__}: {exc})"
            return
        self.results[index] = result
        if not self.find_all and result["solutions"] and index < self.cutoff.value:
            self.cutoff.lower(index)  # later parts are not needed any more
            self.client.cancel([f for f, i in self.pending.items() if i > index and not f.done()])

    def _halt(self) -> None:
        """Ask every part to stop, keep what running parts found, drop the rest."""
        self.cutoff.lower(-1)
        running = set()
        for keys in self.client.processing().values():
            running.update(keys)
        queued = [f for f in self.pending if f.key not in running]
        self.client.cancel(queued)
        for future in queued:
            self.pending.pop(future)
        _wait_all(list(self.pending), self.cluster_tuning.grace_seconds)
        for future in list(self.pending):
            if future.status == "finished":
                self._take(future)

    def _report(self, progress, began) -> None:
        if self.reporter is None:
            self.reporter = Reporter(progress)
        self.reporter(lambda: {"engine": _walk().NAME, "nodes": sum(r["nodes"] for r in self.results.values()), "parts_done": len(self.results), "parts": self.count,
                               "solutions": sum(r.get("count", len(r["solutions"])) for r in self.results.values()), "elapsed_s": round(time.perf_counter() - began, 3)})

    def facts(self, split_nodes: int) -> dict:
        """Per-part node counts and times (index order; None for parts not run)."""
        nodes = [self.results[i]["nodes"] if i in self.results else None for i in range(self.count)]
        seconds = [self.results[i]["seconds"] if i in self.results else None for i in range(self.count)]
        workers = {}
        for result in self.results.values():
            workers[result["worker"]] = workers.get(result["worker"], 0) + 1
        return {"nodes": split_nodes + sum(n for n in nodes if n), "part_nodes": nodes, "part_seconds": seconds, "parts_per_worker": workers}

    def cleanup(self) -> None:
        """Stop and forget every task of the search, then drop the cut-off."""
        self.cutoff.lower(-1)
        forget(self.client, self.futures)
        self.futures, self.pending, self.shared = [], {}, None


def forget(client, futures: list) -> None:
    """Cancel the futures still running or queued and release every result."""
    try:
        client.cancel([f for f in futures if not f.done()])
        for future in futures:
            future.release()
    except Exception:  # the cluster may be gone already
        pass


def _wait_all(futures: list, timeout: float) -> None:
    """Wait up to ``timeout`` for every future to finish (errors and cancellations included)."""
    from distributed import wait

    try:
        wait(futures, timeout=timeout)
    except Exception:  # timeout, or cancelled futures: the caller looks at each one
        pass
