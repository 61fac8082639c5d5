"""The tunables of the Dask cluster and of the split searches on it, in one frozen object.

:class:`indexset.search.cluster.Cluster` holds one (``tuning=``); a split
search (:mod:`indexset.search.split`) reads its cluster's. The evidence for
the values is in BENCHMARKS.md ("Split search on Dask").

    >>> from dataclasses import replace
    >>> replace(ClusterTuning(), parts=64).parts
    64
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ClusterTuning:
    """Tunables of the cluster and of the split searches on it; each line states its rule.

    They change how fast a search answers, never what it answers.
    """

    local_from_seconds: float = 20.0  # predicted enumeration seconds from which a local cluster is worth starting (its start-up and close).
    close_seconds: float = 2.5  # time kept back from a time limit for closing a local cluster and exiting with Dask loaded.
    start_timeout: str = "60s"  # how long a local cluster may take to start before the search stays in this process.
    connect_timeout: str = "20s"  # how long connecting to a given scheduler may take before it is bad input.
    parts: int = 256  # subtrees a split search aims at: not per worker, so the split and every node count are the same on 1, 2 or 16 workers ...
    parts_per_worker: int = 16  # ... unless the cluster has more than parts / this worker threads: then this many per thread.
    check_seconds: float = 0.25  # how often a running part asks the scheduler whether it is still wanted (a round trip costs more than most parts).
    poll_seconds: float = 0.2  # how often the client looks at arrivals, the time limit and the stop request.
    grace_seconds: float = 3.0  # how long stopped parts may take to report what they found.
    retries: int = 3  # re-runs of a task that failed (a lost worker is handled by the scheduler).


DEFAULT = ClusterTuning()
"""The tuning every cluster uses unless given another."""
