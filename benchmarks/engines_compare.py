"""Lattice engine, CP-SAT and the portfolio side by side (issue 8).

First-solution mode (a solution, or the proof that none exists), each
engine given the same exact reduction, a time limit per run. Instances: the
QOBLIB market split files named in issue 8, unplanted (★) systems
(d = 2, entries in [−1000, 1000], n = 70; d = 3, entries in [−30, 30],
n = 80) and the planted d = 3, n = 100, |S| = 25 instance on which CP-SAT
beats enumeration.

Usage::

    python benchmarks/engines_compare.py [--time-limit S] [--json OUT]
"""

from __future__ import annotations

import argparse
import json
import os
import time

import numpy as np

from indexset.search import lattice
from indexset.search.engines import cpsat
from indexset.search.portfolio import run_portfolio
from indexset.search.reduce import reduce_system
from indexset.search.system import build_system, plain_system
from indexset.search.systemfile import load_system
from indexset.workflows import construct

HERE = os.path.dirname(os.path.abspath(__file__))
MARKET_SPLIT = os.path.join(HERE, "..", "..", "shared", "benchmarks", "qoblib-marketsplit")
QOBLIB = ["ms_04_100_003", "ms_05_100_003", "ms_06_100_002", "ms_07_050_001"]


def star_system(d, n, bound, seed):
    """Unplanted (★) system of a random integer ReLU block with identity skip."""
    rng = np.random.default_rng(seed)
    W_up = rng.integers(-bound, bound + 1, size=(n, d))
    W_down = rng.integers(-bound, bound + 1, size=(d, n))
    from indexset.model.instance import Instance

    return build_system(Instance(W_up, W_down))


def instances():
    """(name, System) pairs."""
    for name in QOBLIB:
        yield name, load_system(os.path.join(MARKET_SPLIT, name + ".dat"))
    yield "star_d2_n70_s0", star_system(2, 70, 1000, 0)
    yield "star_d3_n80_s0", star_system(3, 80, 30, 0)
    planted = construct.planted(d=3, n=100, k=25, range=30, seed=1)
    yield "planted_d3_n100_k25_s1", build_system(planted)


def run(engine, system, reduction, limit):
    start = time.perf_counter()
    if engine == "portfolio":
        result = run_portfolio(system, reduction, time_limit=limit)
    else:
        result = {"lattice": lattice, "cpsat": cpsat}[engine].search(system, reduction, time_limit=limit)
    return {"status": result.status, "time_s": round(time.perf_counter() - start, 3), "engine": result.engine}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--time-limit", type=float, default=60.0)
    parser.add_argument("--json", default=None)
    args = parser.parse_args()
    warm = plain_system([[1, 2, 3]], [3])
    lattice.search(warm, None)  # compile / load the Numba kernel before timing
    rows = []
    for name, system in instances():
        reduction = reduce_system(system.M, system.t)
        for engine in ("lattice", "cpsat", "portfolio"):
            row = {"instance": name, "method": engine, **run(engine, system, reduction, args.time_limit)}
            rows.append(row)
            print(f"{name:26s} {engine:10s} {row['status']:11s} {row['time_s']:8.3f} s  ({row['engine']})", flush=True)
    if args.json:
        with open(args.json, "w") as stream:
            json.dump(rows, stream, indent=1)


if __name__ == "__main__":
    main()
