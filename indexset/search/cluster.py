"""The Dask cluster that split searches and sweeps run on: its lifecycle, nothing else.

Two kinds of work outgrow one process: one hard instance whose enumeration
tree takes minutes to hours, and sweeps of many instances. Both run on
``dask.distributed``: on worker processes of this machine (a
``LocalCluster`` started on first use and closed afterwards) or on a
running cluster (``--scheduler tcp://HOST:PORT``). The protocol of a split
search lives in :mod:`indexset.search.split`; :meth:`Cluster.enumerate_split`
hands a search to it.

A local cluster costs seconds of start-up and close plus a little per
part, so it is started only when the lattice engine's tree-size estimate
predicts at least ``ClusterTuning.local_from_seconds`` seconds; shorter searches stay
in this process (BENCHMARKS.md, "Split search on Dask"). The command line
makes a local cluster only when asked (``--workers N``).
Library code: nothing here prints.
"""

from __future__ import annotations

import os
import signal
import threading

import numpy as np

from indexset.budget import Budget
from indexset.errors import InputError
from indexset.search.cluster_tuning import DEFAULT, ClusterTuning
from indexset.search.system import System


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
    min_seconds : float, optional
        A local cluster that is not running yet is started only for
        searches predicted to take at least this long (shorter ones stay in
        this process); 0 starts it for every split search (default:
        ``tuning.local_from_seconds``).
    parts : int, optional
        Subtrees a split search aims at (default: ``tuning.parts``, or
        ``tuning.parts_per_worker`` per worker thread on big clusters).
    tuning : ClusterTuning, optional
        The cluster's and its split searches' tunables.
    """

    def __init__(self, scheduler: str | None = None, workers: int | None = None, client=None, min_seconds: float | None = None, parts: int | None = None, on_problem=None,
                 tuning: ClusterTuning = DEFAULT) -> None:
        if workers is not None and workers < 1:
            raise InputError("workers", f"must be at least 1, got {workers}")
        if scheduler is not None and not str(scheduler).strip():
            raise InputError("scheduler", "empty scheduler address")
        self.scheduler = scheduler
        self.workers = workers or os.cpu_count() or 1
        self.tuning = tuning
        self.min_seconds = float(tuning.local_from_seconds if min_seconds is None else min_seconds)
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

    def accepts(self, predicted_seconds: float | None, seconds_left: float | None = None) -> bool:
        """Whether a split search predicted to take ``predicted_seconds`` on one core should use the cluster.

        A local cluster that is not running yet is started only for searches
        predicted (by the caller's cost model) to take at least
        ``min_seconds``, when at least that much time is left, and never
        again after it failed to start.
        """
        if self._client is not None or self.scheduler is not None:
            return True  # running (or remote) cluster: a split costs only task overhead
        if self.problem is not None or predicted_seconds is None:
            return False  # failed before, or a small lattice (no estimate): seconds at most
        if seconds_left is not None and seconds_left < self.min_seconds:
            return False
        return float(predicted_seconds) >= self.min_seconds

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

    def client_or_none(self, budget: Budget | None = None):
        """The client, or None when a local cluster cannot start or the wait is stopped.

        A local cluster starts in a thread of this object's (joined by
        :meth:`close`) while the caller keeps watching the ``budget``, so
        that an engine waiting here still stops promptly.
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
            if budget is not None and budget.expired():
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
                client = Client(self.scheduler, timeout=self.tuning.connect_timeout)
            except (OSError, TimeoutError, ValueError) as exc:
                raise InputError("scheduler", f"cannot connect to {self.scheduler}: {exc}") from None
            self._owned.append(client)
            try:
                client.register_plugin(prepare_plugin(ignore_sigint=False), name="indexset-prepare")
            except Exception as exc:  # typically: indexset is not installed on the workers
                self.close()
                raise InputError("scheduler", f"the workers of {self.scheduler} cannot prepare indexset: {type(exc).__name__}: {exc}") from None
            return client
        self._own_tracker = not tracker_running()
        # Loopback only, no dashboard: nothing listens beyond this machine.
        cluster = LocalCluster(n_workers=self.workers, threads_per_worker=1, processes=True, dashboard_address=None, host="127.0.0.1")
        self._owned.append(cluster)
        client = Client(cluster, timeout=self.tuning.start_timeout)
        self._owned.append(client)
        # Ctrl-C reaches the whole process group; our workers leave it to us.
        client.register_plugin(prepare_plugin(ignore_sigint=True), name="indexset-prepare")
        return client

    def enumerate_split(self, system: System, lattice, find_all: bool, budget: Budget, progress, tuning=None, count_only: bool = False):
        """Walk a prepared lattice as Dask tasks on this cluster (:func:`indexset.search.split.enumerate_split`)."""
        from indexset.search.split import enumerate_split

        return enumerate_split(system, lattice, self, find_all, budget, progress, tuning, count_only)

    def reserve_seconds(self, time_limit: float | None) -> float:
        """Seconds of a whole-process ``time_limit`` to keep back for closing what this may start.

        A local cluster starts only when at least ``min_seconds`` are left;
        closing it and the interpreter's exit with Dask loaded then take
        about ``tuning.close_seconds``.
        """
        if time_limit is None or self.scheduler is not None or self._given or time_limit < self.min_seconds:
            return 0.0
        return self.tuning.close_seconds

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
            stop_tracker()
            self._own_tracker = False
        if not self._given:
            self._client = None

    def __enter__(self) -> Cluster:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def tracker_running() -> bool:
    """Whether multiprocessing's resource tracker process is running."""
    from multiprocessing import resource_tracker

    return getattr(resource_tracker._resource_tracker, "_pid", None) is not None


def stop_tracker() -> None:
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
    """Load the enumeration kernels from Numba's cache now, not in the first part."""
    from indexset.search.system import plain_system

    rng = np.random.default_rng(0)
    A = rng.integers(0, 31, size=(3, 30))
    system = plain_system(A, A @ rng.integers(0, 2, size=30))
    from indexset.search.lattice.engine import search

    search(system, find_all=True, workers=2)  # wider than split_from: start_below too



def _delete_variable(variable) -> None:
    try:
        variable.delete()
    except Exception:  # the client or scheduler may be closed by now
        pass


