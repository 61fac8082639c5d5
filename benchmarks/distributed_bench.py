"""Split lattice search on Dask: 1, 2, 4, … local workers against threads in process, and the split balance.

Instance: ``indexset construct random --d 2 --n 74 --range 1000 --seed 1``
(unplanted, integer entries in [−1000, 1000]; the complete enumeration
proves it negative). Modes, each a complete search (``find_all``) after the
same exact reduction and basis choice:

- ``single``: the lattice engine in this process, one thread (the sequential run);
- ``threads-2``: the same engine with two threads sharing subtrees (for comparison);
- ``dask-N``: the split search (:mod:`indexset.search.split`) on a
  ``LocalCluster`` of N worker processes, startup timed apart; every part's
  nodes and seconds are written to the JSON file (``part_nodes``,
  ``part_seconds``), from which the wall on any number of machines follows.

From the per-part seconds of ``dask-1`` (one part at a time, no contention)
the script predicts the wall time of W workers that take the parts first
in, first out (Dask's order) and prints the expected speedups.

Usage::

    python benchmarks/distributed_bench.py [--n 74] [--seed 1] [--modes single,threads-2,dask-1,dask-2] [--repeat K] [--json OUT]
"""

from __future__ import annotations

import argparse
import heapq
import json
import os
import platform
import time

from indexset.search import lattice
from indexset.search.cluster import Cluster
from indexset.search.reduce import reduce_system
from indexset.search.system import build_system
from indexset.workflows import construct


def warm_up() -> None:
    """Load the kernels in this process (Numba cache), untimed."""
    system = build_system(construct.random(d=2, n=40, range=1000, seed=0))
    lattice.search(system, find_all=True)


def run_mode(mode: str, system) -> dict:
    """One complete search; wall seconds from the reduction on (cluster startup apart)."""
    record = {"mode": mode}
    cluster = None
    if mode.startswith("dask-"):
        cluster = Cluster(workers=int(mode.split("-")[1]), min_seconds=0)
        began = time.perf_counter()
        cluster.client()
        record["startup_s"] = round(time.perf_counter() - began, 3)
    try:
        began = time.perf_counter()
        reduction = reduce_system(system.M, system.t)
        threads = int(mode.split("-")[1]) if mode.startswith("threads-") else 1
        result = lattice.search(system, reduction, find_all=True, workers=threads, cluster=cluster)
        record["wall_s"] = round(time.perf_counter() - began, 3)
    finally:
        if cluster is not None:
            began = time.perf_counter()
            cluster.close()
            record["close_s"] = round(time.perf_counter() - began, 3)
    stages = result.stages
    record.update(status=result.status, count=result.count, complete=result.complete, nodes=stages.get("nodes"), basis_s=stages.get("basis_s"), enumerate_s=stages.get("enumerate_s"), lattice_dim=stages.get("lattice_dim"))
    for key in ("split_level", "parts", "split_nodes", "part_nodes", "part_seconds", "parts_per_worker", "subtrees"):
        if key in stages:
            record[key] = stages[key]
    return record


def tiny(n: int = 60) -> dict:
    """What Dask costs on a short search: in process vs a fresh 2-worker local cluster."""
    system = build_system(construct.random(d=2, n=n, range=1000, seed=0))
    alone = run_mode("single", system)
    began = time.perf_counter()
    split = run_mode("dask-2", system)
    total = time.perf_counter() - began
    return {"instance": f"indexset construct random --d 2 --n {n} --range 1000 --seed 0", "single_wall_s": alone["wall_s"], "dask2_startup_s": split["startup_s"], "dask2_wall_s": split["wall_s"], "dask2_close_s": split["close_s"], "dask2_total_s": round(total, 3), "parts": split.get("parts"), "same_answer": alone["status"] == split["status"] and alone["count"] == split["count"]}


def fifo_makespan(seconds: list, workers: int) -> float:
    """Wall time of ``workers`` taking the parts in order, each the next free one."""
    free = [0.0] * workers
    for s in seconds:
        heapq.heappush(free, heapq.heappop(free) + s)
    return max(free)


def balance(record: dict) -> dict:
    """Shares of the largest parts and the FIFO speedups their times allow."""
    nodes = record["part_nodes"]
    seconds = record["part_seconds"]
    total_nodes, total_s = sum(nodes), sum(seconds)
    top = sorted(range(len(nodes)), key=lambda i: -nodes[i])[:5]
    return {
        "parts": len(nodes),
        "largest_shares": [round(nodes[i] / total_nodes, 4) for i in top],
        "largest_indices": top,
        "median_part_s": round(sorted(seconds)[len(seconds) // 2], 4),
        "max_part_s": round(max(seconds), 3),
        "sum_part_s": round(total_s, 2),
        "ns_per_node": round(total_s / total_nodes * 1e9, 1),
        "fifo_speedup": {w: round(total_s / fifo_makespan(seconds, w), 2) for w in (2, 4, 8, 16, 32, 64)},
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=74)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--modes", default="single,threads-2,dask-1,dask-2")
    parser.add_argument("--repeat", type=int, default=1, help="run the modes this many times, interleaved (the machine may be noisy)")
    parser.add_argument("--no-tiny", action="store_true", help="skip the short-search overhead measurement")
    parser.add_argument("--json", default=os.path.join(os.path.dirname(__file__), "distributed_bench.json"))
    args = parser.parse_args()
    instance = construct.random(d=2, n=args.n, range=1000, seed=args.seed)
    system = build_system(instance)
    warm_up()
    report = {"instance": f"indexset construct random --d 2 --n {args.n} --range 1000 --seed {args.seed}", "cpus": os.cpu_count(), "platform": platform.platform(), "load_average_start": os.getloadavg(), "runs": []}
    if not args.no_tiny:
        report["tiny"] = tiny()
        print(json.dumps(report["tiny"]), flush=True)
    for repeat in range(args.repeat):
        for mode in args.modes.split(","):
            record = dict(run_mode(mode, system), repeat=repeat, load_average_after=os.getloadavg())
            report["runs"].append(record)
            print(json.dumps({k: v for k, v in record.items() if k not in ("part_nodes", "part_seconds")}), flush=True)
            if mode == "dask-1" and repeat == 0:
                report["balance"] = balance(record)
                print(json.dumps(report["balance"]), flush=True)
    with open(args.json, "w", encoding="utf-8") as handle:
        json.dump(report, handle, indent=1)
        handle.write("\n")


if __name__ == "__main__":
    main()
