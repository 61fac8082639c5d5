"""Benchmark of the lattice enumeration engine (issue 8).

Instances:

- QOBLIB market split ``ms_MM_*`` with m ≤ 7 (``../shared/benchmarks/qoblib-marketsplit``);
- (★) systems of random integer blocks, unplanted: d = 2 with entries in
  [−1000, 1000] (n = 60, 70) and d = 3 with entries in [−30, 30] (n = 80).
  Column i of M is ``vec(W_down[:,i] W_up[i,:])`` and ``t = vec(−I)``.

For each instance the table gives the time to the first solution (or the
proof that there is none) and the time to decide completely (every solution
enumerated, or none), each including the exact reduction, with the
enumeration node counts. The Numba kernel is compiled (or loaded from the
cache) once before timing.

Usage::

    python benchmarks/lattice_bench.py [--time-limit S] [--only NAME ...] [--seeds K] [--workers W] [--json OUT]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

import numpy as np

from indexset.search import lattice
from indexset.search.reduce import reduce_system
from indexset.search.system import System
from indexset.search.systemfile import load_system

MARKET_SPLIT = os.path.join(os.path.dirname(__file__), "..", "..", "shared", "benchmarks", "qoblib-marketsplit")
QOBLIB = ["ms_03_050_002", "ms_03_100_001", "ms_03_200_050", "ms_04_050_001", "ms_04_100_003", "ms_04_200_030", "ms_05_050_001", "ms_05_100_003", "ms_05_200_070", "ms_06_050_001", "ms_06_100_002", "ms_06_200_077", "ms_07_050_001", "ms_07_100_002"]
STAR = [(2, 60, 1000), (2, 70, 1000), (3, 80, 30)]
TARGETS = {"ms_05_100_003": "0.17 (first)", "ms_06_100_002": "3.7 (first)", "ms_07_050_001": "156 (first)", "star_d2_n70": "~3 (decided)", "star_d3_n80": "~5 (decided)"}


def star_system(d: int, n: int, bound: int, seed: int) -> System:
    """(★) of a random unplanted integer block (identity skip, c = 1)."""
    rng = np.random.default_rng(seed)
    up = rng.integers(-bound, bound + 1, size=(n, d))
    down = rng.integers(-bound, bound + 1, size=(d, n))
    M = np.array([[int(down[a, i]) * int(up[i, b]) for i in range(n)] for a in range(d) for b in range(d)], dtype=object)
    t = np.array([-1 if a == b else 0 for a in range(d) for b in range(d)], dtype=object)
    return System(M, t, None, [(a, b) for a in range(d) for b in range(d)])


def warm_up() -> float:
    """Compile or load the kernel once; return the seconds it took."""
    start = time.perf_counter()
    rng = np.random.default_rng(0)
    A = rng.integers(0, 10, size=(2, 12))
    lattice.search(System(A.astype(object), (A @ rng.integers(0, 2, 12)).astype(object)), find_all=True)
    return time.perf_counter() - start


def run(system: System, find_all: bool, time_limit: float, workers: int) -> dict:
    """One timed search (reduction included): wall and CPU seconds."""
    start, cpu = time.perf_counter(), time.process_time()
    reduction = reduce_system(system.M, system.t)
    result = lattice.search(system, reduction, find_all=find_all, time_limit=time_limit, workers=workers)
    return {
        "status": result.status,
        "complete": result.complete,
        "count": result.count,
        "time_s": round(time.perf_counter() - start, 3),
        "cpu_s": round(time.process_time() - cpu, 3),
        "nodes": result.stages.get("nodes"),
        "lattice_dim": result.stages.get("lattice_dim"),
        "bkz": result.stages.get("bkz_block"),
    }


def instances(args) -> list[tuple[str, System]]:
    chosen = []
    for name in QOBLIB:
        path = os.path.join(MARKET_SPLIT, name + ".dat")
        if os.path.exists(path):
            chosen.append((name, load_system(path)))
    for d, n, bound in STAR:
        for seed in range(args.seeds):
            chosen.append((f"star_d{d}_n{n}" + (f"_s{seed}" if seed else ""), star_system(d, n, bound, seed)))
    if args.only:
        chosen = [(name, system) for name, system in chosen if any(name.startswith(o) for o in args.only)]
    return chosen


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--time-limit", type=float, default=120.0, help="seconds per search (default 120)")
    parser.add_argument("--only", nargs="*", help="instance name prefixes to run")
    parser.add_argument("--seeds", type=int, default=1, help="seeds per (★) family (default 1)")
    parser.add_argument("--first-only", action="store_true", help="skip the complete decision")
    parser.add_argument("--workers", type=int, default=1, help="threads of the lattice engine (default 1)")
    parser.add_argument("--json", metavar="OUT", help="also write the rows as JSON")
    args = parser.parse_args(argv)
    print(f"kernel warm-up (compile or cache load): {warm_up():.2f} s", flush=True)
    print(f"workers {args.workers}; times are wall (CPU) seconds including the exact reduction", flush=True)
    print(f"{'instance':16} {'n':>3} {'dim':>3}  {'first solution':<40} {'decided (all / none)':<44} target (s)")
    rows = []
    for name, system in instances(args):
        first = run(system, False, args.time_limit, args.workers)
        full = None if args.first_only else run(system, True, args.time_limit, args.workers)
        rows.append({"instance": name, "n": system.n, "m": system.m, "workers": args.workers, "first": first, "decided": full})
        print(f"{name:16} {system.n:>3} {first['lattice_dim'] or 0:>3}  {_cell(first):<40} {_cell(full):<44} {TARGETS.get(name, '')}", flush=True)
    if args.json:
        with open(args.json, "w", encoding="utf-8") as handle:
            json.dump({"time_limit": args.time_limit, "rows": rows}, handle, indent=2)
    return 0


def _cell(row: dict | None) -> str:
    if row is None:
        return "-"
    what = row["status"] if row["status"] != "feasible" else (f"all {row['count']}" if row["complete"] else "found")
    return f"{row['time_s']:.3f} ({row['cpu_s']:.3f}) {what}, {row['nodes'] or 0} nodes"


if __name__ == "__main__":
    sys.exit(main())
