"""Benchmark sweeps as Dask tasks: one ``indexset bench`` run per task.

:func:`map_runs` sends every (instance, method) run of a sweep as one task;
the worker rebuilds the instance from the constructor and its seed, so
nothing but names and numbers travels. The cluster, the cut-off flag and
the worker preparation are those of :mod:`indexset.search.cluster` and :mod:`indexset.search.split`.
"""

from __future__ import annotations

import dataclasses
import os
import threading
import time
import uuid

import indexset.workflows.bench as bench
from indexset.search.cluster import Cluster
from indexset.search.split import Cutoff, RemoteStop, forget


def bench_run(sweep_json: dict, method: str, n: int, seed: int, cutoff: str | None) -> dict:
    """Task: one ``indexset bench`` run, the instance rebuilt from its seed."""
    sweep = bench.Sweep(**dict(sweep_json, methods=tuple(sweep_json["methods"])))
    instance = bench.make_instance(sweep, n, seed)
    stop = RemoteStop(cutoff, 0) if cutoff else threading.Event()
    run = bench.one_run(sweep, method, n, seed, instance, stop)
    return dict(dataclasses.asdict(run), worker=f"{os.uname().nodename}:{os.getpid()}")


def warm_up_workers(cluster: Cluster, sweep_json: dict) -> None:
    """Run the sweep's warm-up once on every worker (imports, Numba cache), untimed."""
    from distributed import wait

    client = cluster.client()
    futures = [client.submit(_warm_up, sweep_json, key=f"indexset-warmup-{uuid.uuid4().hex[:12]}", workers=[address], allow_other_workers=False, pure=False) for address in client.scheduler_info()["workers"]]
    wait(futures)


def _warm_up(sweep_json: dict) -> bool:
    bench.warm_up(bench.Sweep(**dict(sweep_json, methods=tuple(sweep_json["methods"]))))
    return True


def map_runs(cluster: Cluster, sweep_json: dict, points: list, stop=None, on_done=None) -> list:
    """Run ``(method, n, seed)`` points as tasks; return their Run dicts in the points' order.

    Parameters
    ----------
    cluster : Cluster
    sweep_json : dict
        ``Sweep.to_json()``.
    points : list of tuple
        ``(method, n, seed)``.
    stop : threading.Event, optional
        Set it (Ctrl-C) to stop the running runs (they report
        ``interrupted``) and skip the rest (returned as None).
    on_done : callable, optional
        Called with each finished Run dict as it arrives.

    Returns
    -------
    list of dict or None
        One Run dict per point (with ``worker``); None for points not run.
    """
    from distributed import as_completed

    client = cluster.client()
    cutoff = Cutoff(client, 1)
    cluster.forget_later(cutoff.variable)
    token = uuid.uuid4().hex[:12]
    futures = [client.submit(bench_run, sweep_json, m, n, s, cutoff.variable.name, key=f"indexset-run-{token}-{i}", retries=cluster.tuning.retries, pure=False) for i, (m, n, s) in enumerate(points)]
    runs = [None] * len(points)
    index = {f: i for i, f in enumerate(futures)}
    pending = set(futures)
    arrivals = as_completed(futures)
    try:
        while pending:
            batch = [f for f in arrivals.next_batch(block=False) if f in pending]
            if not batch:
                time.sleep(cluster.tuning.poll_seconds)
            pending -= set(batch)
            for future in batch:
                runs[index[future]] = _run_outcome(future)
                if on_done is not None:
                    on_done(runs[index[future]])
            if stop is not None and stop.is_set() and cutoff.value > 0:
                cutoff.lower(0)  # running runs stop and report; queued ones are cancelled
                running = {key for keys in client.processing().values() for key in keys}
                queued = [f for f in pending if f.key not in running]
                client.cancel(queued)
                pending -= set(queued)
    finally:
        forget(client, futures)
    return runs


def _run_outcome(future) -> dict | None:
    try:
        return future.result()
    except Exception as exc:  # the run is reported as an error, the sweep goes on
        return {"status": "error", "note": f"{type(exc).__name__}: {exc}", "worker": ""}


class OnCluster:
    """Runs the points of a sweep as Dask tasks (the ``runner`` of :func:`indexset.workflows.bench.run_sweep`)."""

    def __init__(self, cluster: Cluster) -> None:
        self.cluster = cluster

    def to_json(self) -> dict:
        """Where the runs went, for the report."""
        return self.cluster.to_json()

    def run(self, sweep, instances, progress, stop, warmup) -> list:
        """Every (instance, method) as one task; Run records in the sweep's order."""
        return _run_on_cluster(self.cluster, sweep, instances, progress, stop, warmup)


def _run_on_cluster(cluster, sweep, instances, progress, stop, warmup) -> list:
    if warmup:
        bench.notify(progress, phase="warmup", done=0, total=1, method=None, n=None, seed=None, status=None, time_s=None)
        warm_up_workers(cluster, sweep.to_json())
    points = [(method, n, seed, instance) for n, seed, instance in instances for method in sweep.methods]
    finished = []

    def arrived(outcome):
        finished.append(outcome)
        bench.notify(progress, phase="run", done=len(finished), total=len(points), method=outcome.get("method"), n=outcome.get("n"), seed=outcome.get("seed"), status=outcome["status"], time_s=outcome.get("time_s", 0.0))

    outcomes = map_runs(cluster, sweep.to_json(), [p[:3] for p in points], stop, arrived)
    fields = set(bench.Run.__dataclass_fields__)
    runs = []
    for (method, n, seed, instance), outcome in zip(points, outcomes):
        if outcome is not None and "method" in outcome:
            runs.append(bench.Run(**{k: v for k, v in outcome.items() if k in fields}))
            continue
        run = bench.record(sweep, method, n, seed, instance)
        if outcome is None:  # cancelled before it started, as in a sequential sweep
            run.status, run.note = bench.INTERRUPTED, "not run: the sweep was interrupted"
        else:  # the task itself failed (its worker kept dying)
            run.status, run.note = outcome["status"], outcome["note"]
        runs.append(run)
    return runs
