"""Split lattice searches as Dask tasks, and the cluster they run on.

Two kinds of work outgrow one process: one hard instance whose enumeration
tree takes minutes to hours, and sweeps of many instances. Both run on
``dask.distributed``: on worker processes of this machine (a
``LocalCluster`` started on first use and closed afterwards) or on a
running cluster (``--scheduler tcp://HOST:PORT``).

**Split search.** The lattice engine's tree is cut at the highest level
with at least :data:`PARTS` nodes (:func:`indexset.search.engines.lattice.split_tree`);
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
every :data:`CHECK_SECONDS`: Dask cannot interrupt a running task.

**Sweeps.** :func:`map_runs` sends every (instance, method) run of an
``indexset bench`` sweep as one task; the worker rebuilds the instance from
the constructor and its seed, so nothing but names and numbers travels.

A local cluster costs 2–4 s here (start-up with the engines imported and
the kernels loaded in each worker, and close) plus ~3.5 ms per part, so it
is started only when the lattice engine's tree-size estimate predicts at
least :data:`LOCAL_CLUSTER_FROM` seconds; shorter searches stay in this
process (BENCHMARKS.md, "Split search on Dask"). The command line makes a
local cluster only when asked (``--workers N``): on one machine the
engine's own threads were faster.
Library code: nothing here prints.
"""

from __future__ import annotations

import os
import signal
import threading
import time
import uuid

import numpy as np

from indexset.errors import InputError
from indexset.search.system import System

PARTS = 256
"""Subtrees a split search aims at (at least :data:`PARTS_PER_WORKER` per
worker on big clusters). Fixed rather than proportional to the workers, so
the split, and every node count, is the same on 1, 2 or 16 workers."""

PARTS_PER_WORKER = 16

LOCAL_CLUSTER_FROM = 20.0
"""Predicted enumeration seconds from which a local cluster is worth
starting (2–4 s of start-up and close on two local workers, measured in
BENCHMARKS.md)."""

CHECK_SECONDS = 0.25
"""How often a running part asks the scheduler whether it is still wanted."""

POLL_SECONDS = 0.2
"""How often the client looks at the time limit and the stop request."""

GRACE_SECONDS = 3.0
"""How long stopped parts may take to report what they found."""

DELETE_AFTER_SECONDS = 5.0
"""Delay before a search's cut-off Variable is deleted on the scheduler."""

RETRIES = 3
"""Re-runs of a task that failed (a lost worker is handled by the scheduler)."""

CLOSE_SECONDS = 2.5
"""Time kept back from a time limit for closing a local cluster and exiting with
Dask loaded (0.9–1.3 s to close and about 0.8 s of interpreter exit, measured here)."""

START_TIMEOUT = "60s"
"""How long a local cluster may take to start before the search stays in this process."""

CONNECT_TIMEOUT = "20s"
"""How long connecting to a given scheduler may take before it is bad input."""


def _lattice():
    """The lattice engine module (imported on first use: the Numba kernels)."""
    from indexset.search.engines import lattice

    return lattice


# ============================================================== cluster
class Cluster:
    """Where split searches and sweep runs go; a context manager.

    Parameters
    ----------
    scheduler : str, optional
        Address of a running Dask scheduler (``tcp://HOST:PORT``). Its
        workers need ``indexset`` installed.
    workers : int, optional
        Worker processes of a local cluster (default: every CPU); ignored
        with ``scheduler`` or ``client``.
    client : distributed.Client, optional
        Use this client (tests, notebooks); it is not closed here.
    min_seconds : float
        A local cluster that is not running yet is started only for
        searches predicted to take at least this long (shorter ones stay in
        this process); 0 starts it for every split search.
    parts : int, optional
        Subtrees a split search aims at (default :data:`PARTS`, or
        :data:`PARTS_PER_WORKER` per worker on big clusters).
    """

    def __init__(self, scheduler: str | None = None, workers: int | None = None, client=None, min_seconds: float = LOCAL_CLUSTER_FROM, parts: int | None = None, on_problem=None) -> None:
        if workers is not None and workers < 1:
            raise InputError("workers", f"must be at least 1, got {workers}")
        if scheduler is not None and not str(scheduler).strip():
            raise InputError("scheduler", "empty scheduler address")
        self.scheduler = scheduler
        self.workers = workers or os.cpu_count() or 1
        self.min_seconds = float(min_seconds)
        self.parts = parts
        self.on_problem = on_problem
        self.problem = None  # why a local cluster could not start (work then stays in this process)
        self._client = client
        self._given = client is not None
        self._prepared = False
        self._owned = []  # what we started, closed in reverse order
        self._starter = None  # the thread starting a local cluster
        self._variables = []  # cut-off Variables to delete on close
        self._own_tracker = False  # whether starting our workers started multiprocessing's resource tracker

    def accepts(self, estimated_nodes, seconds_left: float | None = None) -> bool:
        """Whether a split search of this predicted size should use the cluster.

        A local cluster that is not running yet is started only for searches
        predicted to take at least ``min_seconds``, when at least that much
        time is left, and never again after it failed to start.
        """
        if self._client is not None or self.scheduler is not None:
            return True  # running (or remote) cluster: a split costs only task overhead
        if self.problem is not None or estimated_nodes is None:
            return False  # failed before, or a small lattice (no estimate): seconds at most
        if seconds_left is not None and seconds_left < self.min_seconds:
            return False
        from indexset.search.engines.lattice import NODE_SECONDS

        return float(estimated_nodes) * NODE_SECONDS >= self.min_seconds

    def client(self):
        """The Dask client, connecting or starting the local cluster on first use.

        Raises
        ------
        InputError
            A ``scheduler`` that cannot be reached or whose workers cannot
            prepare indexset.
        RuntimeError
            A local cluster that cannot start.
        """
        if self._client is None:
            self._client = self._connect()
        elif self._given and not self._prepared:
            self._client.register_plugin(prepare_plugin(ignore_sigint=False), name="indexset-prepare")
        self._prepared = True
        return self._client

    def client_or_none(self, stop=None, deadline: float | None = None):
        """The client, or None when a local cluster cannot start or the wait is stopped.

        A local cluster starts in a thread of this object's (joined by
        :meth:`close`) while the caller keeps watching ``stop`` and
        ``deadline``, so that an engine waiting here still stops promptly.
        A cluster that fails to start is reported once through
        ``on_problem`` and not tried again: the search stays in this process.
        """
        if self._client is not None or self.scheduler is not None:
            return self.client()
        if self.problem is not None:
            return None
        if self._starter is None:
            box = {}
            self._starter = threading.Thread(target=self._start_local, args=(box,), name="indexset-dask-start")
            self._starter.box = box
            self._starter.start()
        while self._starter.is_alive():
            if (stop is not None and stop.is_set()) or (deadline is not None and time.perf_counter() >= deadline):
                return None
            self._starter.join(0.05)
        if "client" in self._starter.box:
            self._client = self._starter.box["client"]
            self._prepared = True
            return self._client
        self._fail(self._starter.box.get("error", "unknown error"))
        return None

    def _start_local(self, box: dict) -> None:
        try:
            box["client"] = self._connect()
        except Exception as exc:  # spawning workers, ports, start-up timeouts: fall back to threads
            box["error"] = f"{type(exc).__name__}: {exc}".strip()

    def _fail(self, error: str) -> None:
        self.problem = " ".join(str(error).split())[:200] or "unknown error"
        if self.on_problem is not None:
            self.on_problem(f"the local Dask cluster could not start ({self.problem}); searching in this process instead")

    def _connect(self):
        from dask.distributed import Client, LocalCluster

        if self.scheduler is not None:
            _probe(self.scheduler)
            try:
                client = Client(self.scheduler, timeout=CONNECT_TIMEOUT)
            except (OSError, TimeoutError, ValueError) as exc:
                raise InputError("scheduler", f"cannot connect to {self.scheduler}: {exc}") from None
            self._owned.append(client)
            try:
                client.register_plugin(prepare_plugin(ignore_sigint=False), name="indexset-prepare")
            except Exception as exc:  # typically: indexset is not installed on the workers
                self.close()
                raise InputError("scheduler", f"the workers of {self.scheduler} cannot prepare indexset: {type(exc).__name__}: {exc}") from None
            return client
        self._own_tracker = not _tracker_running()
        # Loopback only, no dashboard: nothing listens beyond this machine.
        cluster = LocalCluster(n_workers=self.workers, threads_per_worker=1, processes=True, dashboard_address=None, host="127.0.0.1")
        self._owned.append(cluster)
        client = Client(cluster, timeout=START_TIMEOUT)
        self._owned.append(client)
        # Ctrl-C reaches the whole process group; our workers leave it to us.
        client.register_plugin(prepare_plugin(ignore_sigint=True), name="indexset-prepare")
        return client

    def enumerate_split(self, system: System, lattice, find_all: bool, deadline: float | None, stop, progress):
        """Walk a prepared lattice as Dask tasks on this cluster (:func:`enumerate_split`)."""
        return enumerate_split(system, lattice, self, find_all, deadline, stop, progress)

    def reserve_seconds(self, time_limit: float | None) -> float:
        """Seconds of a whole-process ``time_limit`` to keep back for closing what this may start.

        A local cluster starts only when at least ``min_seconds`` are left;
        closing it and the interpreter's exit with Dask loaded then take
        about :data:`CLOSE_SECONDS`.
        """
        if time_limit is None or self.scheduler is not None or self._given or time_limit < self.min_seconds:
            return 0.0
        return CLOSE_SECONDS

    def threads(self) -> int:
        """Worker threads available (the configured count before startup)."""
        if self._client is None:
            return self.workers
        return max(1, sum(self._client.nthreads().values()))

    def to_json(self) -> dict:
        """Where the work ran, for stages and JSON reports."""
        return {"scheduler": self.scheduler or "local", "workers": self.threads()}

    def forget_later(self, variable) -> None:
        """Delete this Dask Variable when the cluster closes (running parts may still read it)."""
        self._variables.append(variable)

    def close(self) -> None:
        """Close the client and local cluster started here (not a given client); join the start-up thread."""
        if self._starter is not None:
            self._starter.join()
            if "client" in self._starter.box and self._client is None:
                self._client = self._starter.box["client"]
            self._starter = None
        while self._variables:
            _delete_variable(self._variables.pop())
        while self._owned:
            thing = self._owned.pop()
            try:
                thing.close()
            except Exception:  # closing must not hide the answer
                pass
        if self._own_tracker:
            _stop_tracker()
            self._own_tracker = False
        if not self._given:
            self._client = None

    def __enter__(self) -> Cluster:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def _tracker_running() -> bool:
    """Whether multiprocessing's resource tracker process is running."""
    from multiprocessing import resource_tracker

    return getattr(resource_tracker._resource_tracker, "_pid", None) is not None


def _stop_tracker() -> None:
    """Stop multiprocessing's resource tracker and reap it, and every exited child.

    Spawning the local workers starts the tracker, which otherwise lives as
    long as the interpreter: a call that returned would leave a process
    running. Only a tracker the cluster started is stopped (one the caller
    had running stays); the next spawn starts a new one. ``_stop`` is the
    standard library's own shutdown of it (private, hence the guard).
    """
    import multiprocessing
    from multiprocessing import resource_tracker

    try:
        resource_tracker._resource_tracker._stop()
    except (AttributeError, OSError, ChildProcessError):
        pass
    multiprocessing.active_children()  # joins (reaps) children that have exited


def _probe(address: str) -> None:
    """Refuse a ``tcp://HOST:PORT`` address at once when nothing listens there.

    Dask's client retries a refused connection until its timeout (20 s);
    a plain TCP connect tells in milliseconds.
    """
    import socket
    from urllib.parse import urlsplit

    parts = urlsplit(address if "://" in address else f"tcp://{address}")
    try:
        port = parts.port
    except ValueError:
        raise InputError("scheduler", f"{address!r} has no valid port") from None
    if parts.scheme != "tcp" or parts.hostname is None or port is None:
        return  # other protocols (tls, inproc, ws) are left to Dask
    try:
        socket.create_connection((parts.hostname, port), timeout=5).close()
    except OSError as exc:
        raise InputError("scheduler", f"cannot connect to {address}: {exc.strerror or exc}") from None


def prepare_plugin(ignore_sigint: bool):
    """A worker plugin that imports the engines on each worker's main thread and loads the kernels.

    fpylll (cysignals) can be imported first only on a main thread, and
    tasks run in worker threads; without it the lattice engine would run
    without BKZ inside sweep tasks. The plugin also runs on workers that
    join or restart later. Local workers also ignore SIGINT (Ctrl-C reaches
    the whole process group): the client handles it and stops the parts
    through the cut-off. Built here so that importing this module does not
    import Dask.
    """
    from distributed import WorkerPlugin

    class Prepare(WorkerPlugin):
        def setup(self, worker) -> None:
            from indexset.search import bkz

            bkz.load()  # on this worker's main thread

            if ignore_sigint:
                signal.signal(signal.SIGINT, signal.SIG_IGN)
            warm_kernels()

    return Prepare()


def warm_kernels() -> None:
    """Load the enumeration kernels from Numba's cache now (~1–2 s), not in the first part."""
    from indexset.search.system import plain_system

    rng = np.random.default_rng(0)
    A = rng.integers(0, 31, size=(3, 30))
    system = plain_system(A, A @ rng.integers(0, 2, size=30))
    _lattice().search(system, find_all=True, workers=2)  # D > SPLIT_FROM: start_below too


# ========================================================== cut-off flag
class _Cutoff:
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



def _delete_variable(variable) -> None:
    try:
        variable.delete()
    except Exception:  # the client or scheduler may be closed by now
        pass


class RemoteStop:
    """``stop.is_set()`` inside a task: true once the cut-off drops to ``index`` or below.

    Polls the Variable at most every :data:`CHECK_SECONDS`, the first time
    after that long (a round trip costs ~2.5 ms, more than most parts; parts
    not started when the search stops are cancelled by the scheduler). A
    variable that cannot be read (deleted, scheduler gone) means stop.
    """

    def __init__(self, name: str, index: int) -> None:
        self.name, self.index = name, index
        self._next = time.monotonic() + CHECK_SECONDS
        self._set = False

    def is_set(self) -> bool:
        now = time.monotonic()
        if self._set or now < self._next:
            return self._set
        self._next = now + CHECK_SECONDS
        from distributed import Variable

        try:
            self._set = int(Variable(self.name).get(timeout=2)) <= self.index
        except Exception:
            self._set = True
        return self._set


# ========================================================= split search
def subproblem(system: System, lattice) -> dict:
    """Plain data shared by every part of one split search (numpy arrays, ints)."""
    mask = _lattice().coordinate_mask(system, lattice)
    return {"lattice": lattice.payload(), "M": system.M, "t": system.t, "coord_mask": mask}


def run_part(shared: dict, prefix: np.ndarray, level: int, find_all: bool, deadline_epoch: float | None, cutoff: str | None, index: int) -> dict:
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

    Returns
    -------
    dict
        :func:`indexset.search.engines.lattice.search_subtree`'s dict plus
        ``index``, ``seconds`` and ``worker`` (host:pid).
    """
    began = time.perf_counter()
    lattice = _lattice().Lattice.from_payload(shared["lattice"])
    system = System(shared["M"], shared["t"])
    deadline = None if deadline_epoch is None else began + (deadline_epoch - time.time())
    stop = RemoteStop(cutoff, index) if cutoff else None
    outcome = _lattice().search_subtree(system, lattice, prefix, level, find_all=find_all, deadline=deadline, stop=stop, coord_mask=shared["coord_mask"])
    outcome.update(index=index, seconds=round(time.perf_counter() - began, 4), worker=f"{os.uname().nodename}:{os.getpid()}")
    return outcome


def _identity(value):
    """Task holding the shared data: recomputable if its worker is lost."""
    return value


def enumerate_split(system: System, lattice, cluster: Cluster, find_all: bool, deadline: float | None, stop, progress) -> tuple:
    """Split the tree, run the parts on the cluster, merge.

    Parameters
    ----------
    system, lattice
        The engine's exact system and prepared lattice.
    cluster : Cluster
    find_all : bool
    deadline : float, optional
        ``time.perf_counter()`` value.
    stop : threading.Event, optional
    progress : callable, optional

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
    client = cluster.client_or_none(stop, deadline)
    if client is None:
        return None
    target = cluster.parts or max(PARTS, PARTS_PER_WORKER * cluster.threads())
    prefixes, level, split_nodes = _lattice().split_tree(system, lattice, target, deadline, stop)
    facts = {"split_level": level, "parts": len(prefixes or []), "split_nodes": split_nodes, "cluster": cluster.to_json()}
    if prefixes is None:
        return [], False, _halt_reason(deadline, stop) or "stopped", dict(facts, nodes=split_nodes)
    if not prefixes:
        return [], True, None, dict(facts, nodes=split_nodes)
    parts = _Parts(client, system, lattice, prefixes, level, find_all, deadline)
    cluster.forget_later(parts.cutoff.variable)
    try:
        interrupted = parts.collect(stop, progress, began)
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
    facts.update(parts.facts(split_nodes), enumerate_s=round(time.perf_counter() - began, 4))
    return solutions, complete, interrupted, facts


def _halt_reason(deadline, stop) -> str | None:
    if stop is not None and stop.is_set():
        return "stopped"
    if deadline is not None and time.perf_counter() >= deadline:
        return "time limit reached"
    return None


class _Parts:
    """The futures of one split search and what came back."""

    def __init__(self, client, system, lattice, prefixes, level, find_all, deadline) -> None:
        self.client = client
        self.find_all = find_all
        self.count = len(prefixes)
        self.deadline = deadline
        self.cutoff = _Cutoff(client, self.count)
        epoch = None if deadline is None else time.time() + (deadline - time.perf_counter())
        token = uuid.uuid4().hex[:12]
        shared = client.submit(_identity, subproblem(system, lattice), key=f"indexset-tree-{token}", pure=False)
        # Submitted in index order: Dask starts them first in, first out.
        self.pending = {
            client.submit(run_part, shared, prefix, level, find_all, epoch, self.cutoff.variable.name, i, key=f"indexset-part-{token}-{i}", retries=RETRIES, pure=False): i
            for i, prefix in enumerate(prefixes)
        }
        self.shared = shared
        self.futures = [shared, *self.pending]
        self.results = {}
        self.failure = None
        self.last_report = time.perf_counter()

    def collect(self, stop, progress, began) -> str | None:
        """Gather results until every wanted part is back or the search halts."""
        from distributed import as_completed

        # Callbacks, not a wait() on every pending future each poll: that
        # cost the client 15 % of a core, taken from the workers.
        arrivals = as_completed(list(self.pending))
        while self._wanted():
            batch = arrivals.next_batch(block=False)
            if not batch:
                time.sleep(POLL_SECONDS)
            for future in batch:
                if future in self.pending and self.pending[future] < self.cutoff.value:  # else cancelled meanwhile
                    self._take(future)
            if self.failure:
                self._halt()
                return self.failure
            why = _halt_reason(self.deadline, stop)
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
        _wait_all(list(self.pending), GRACE_SECONDS)
        for future in list(self.pending):
            if future.status == "finished":
                self._take(future)

    def _report(self, progress, began) -> None:
        now = time.perf_counter()
        if progress is None or now - self.last_report < 1.0:
            return
        self.last_report = now
        progress({"engine": _lattice().NAME, "nodes": sum(r["nodes"] for r in self.results.values()), "parts_done": len(self.results), "parts": self.count, "solutions": sum(len(r["solutions"]) for r in self.results.values()), "elapsed_s": round(now - began, 3)})

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
        _forget(self.client, self.futures)
        self.futures, self.pending, self.shared = [], {}, None


def _forget(client, futures: list) -> None:
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
