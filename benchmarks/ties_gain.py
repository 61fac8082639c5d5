"""Tied units merged into bounded unknowns against kept apart, on low-precision blocks.

Builds ``indexset construct low_precision`` blocks (integer weights in
[−R, R], where equal rank-one terms W_down[:,i]·W_up[i,:] are common),
and decides each one twice in this process, alternating the order:
``solve(block, ...)`` (tied units merged, the default) and
``solve(block, ..., ablate=("ties",))``. Both answers must agree (status,
and with ``--count`` the number of index sets); the script prints, per
cell, the unknowns before and after merging and the median seconds and
ratio of the two, and writes every run to ``--json``.

    python benchmarks/ties_gain.py --d 2,3 --n 40,60,80 --range 1,2 --seeds 3 --count --time-limit 120 --json benchmarks/ties_gain.json
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

from indexset.search.system import build_system, tie_columns
from indexset.solver import solve
from indexset.workflows import construct


def one(block, ablate: tuple, count: bool, limit: float) -> dict:
    began = time.perf_counter()
    result = solve(block, find_all=count, ablate=ablate, time_limit=limit)
    return {"status": result.status, "count": result.count, "seconds": round(time.perf_counter() - began, 4)}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--d", default="2,3", help="comma list of d (default %(default)s)")
    parser.add_argument("--n", default="40,60", help="comma list of widths n (default %(default)s)")
    parser.add_argument("--range", default="1,2", help="comma list of weight ranges R (default %(default)s)")
    parser.add_argument("--seeds", type=int, default=3, help="blocks per cell (seeds 0 …; default %(default)s)")
    parser.add_argument("--count", action="store_true", help="count every index set (default: a first one)")
    parser.add_argument("--unplanted", action="store_true", help="unplanted blocks (default: planted)")
    parser.add_argument("--time-limit", type=float, default=120.0, help="seconds per solve (default %(default)s)")
    parser.add_argument("--json", metavar="OUT", help="write every run here")
    args = parser.parse_args(argv)
    rows, disagree = [], []
    for d in (int(v) for v in args.d.split(",")):
        for n in (int(v) for v in args.n.split(",")):
            for r in (int(v) for v in args.range.split(",")):
                runs = []
                for seed in range(args.seeds):
                    block = construct.low_precision(d=d, n=n, range=r, seed=seed, plant=not args.unplanted)
                    system = build_system(block)
                    merged_n = tie_columns(system).system.n
                    order = [("merged", ()), ("apart", ("ties",))]
                    answers = dict((name, one(block, ablate, args.count, args.time_limit)) for name, ablate in (order if seed % 2 == 0 else order[::-1]))
                    same = answers["merged"]["status"] == answers["apart"]["status"] and (not args.count or answers["merged"]["count"] == answers["apart"]["count"])
                    if not same and "unknown" not in (answers["merged"]["status"], answers["apart"]["status"]):
                        disagree.append((d, n, r, seed))
                    runs.append({"seed": seed, "units": system.n, "unknowns": merged_n, **answers})
                merged = statistics.median(run["merged"]["seconds"] for run in runs)
                apart = statistics.median(run["apart"]["seconds"] for run in runs)
                ratio = statistics.median(run["merged"]["seconds"] / max(run["apart"]["seconds"], 1e-4) for run in runs)
                row = {"d": d, "n": n, "range": r, "runs": runs, "merged_median_s": merged, "apart_median_s": apart, "ratio": ratio,
                       "unknowns_median": statistics.median(run["unknowns"] for run in runs)}
                rows.append(row)
                print(f"d={d} n={n} R={r}: unknowns {row['unknowns_median']:.0f} of {n}; merged {merged:.3f} s, apart {apart:.3f} s, ratio {ratio:.2f}; "
                      f"statuses {sorted({run['merged']['status'] for run in runs})}", flush=True)
    print("\n| d | n | R | unknowns after merging (median) | merged (s, median) | apart (s, median) | ratio merged / apart (median) |")
    print("|---|---|---|---|---|---|---|")
    for row in rows:
        print(f"| {row['d']} | {row['n']} | {row['range']} | {row['unknowns_median']:.0f} | {row['merged_median_s']:.3f} | {row['apart_median_s']:.3f} | {row['ratio']:.2f} |")
    if args.json:
        Path(args.json).write_text(json.dumps({"machine": dict(zip(("sysname", "nodename", "release", "version", "machine"), os.uname())), "cpus": os.cpu_count(),
                                               "argv": sys.argv, "rows": rows}, indent=1) + "\n")
    if disagree:
        print(f"!!!!!!!! ANSWERS DIFFER on (d, n, R, seed): {disagree}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
