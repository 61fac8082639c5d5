"""Where the lattice engine spends its time on one 0/1 system, and how the BKZ block changes its tree.

Two parts, on one system file (a QOBLIB ``.dat``, an ``.npz`` with A and b,
or a solvediophant input file with every bound 1):

- ``decide``: ``decide_system`` as ``solve-system`` calls it, once per
  ``--bkz`` block and ``--workers`` count, by count (``--count``) or for a
  first solution: wall and CPU time of the call and its ``stages`` (the
  exact reduction, the basis, the candidates, the passes, the enumeration
  and its nodes per second);
- ``trees``: the exact reduction, then for each ``--bkz`` block the
  reduced basis built as the engine builds it (timed), the
  Gaussian-heuristic size and the Knuth estimate of its tree, and a
  complete walk of the tree on one thread by the engine's kernel for at
  most ``--walk-seconds`` (nodes, nodes per CPU second, solutions, and
  whether the walk ended); ``--reduction self-dual`` or ``slide`` puts
  fpylll's self-dual BKZ or slide reduction in place of the engine's BKZ;
  with ``--sd-log``, the Gaussian-heuristic size
  of solvediophant's reduced lattice, read from its log, beside them.

It reads the engine's internals and changes nothing.

    python benchmarks/lattice_profile.py Tests/KM_PSL_2_23_7_8.in --part trees --bkz 0,20,30,40 --walk-seconds 300
    python benchmarks/lattice_profile.py Tests/4-arcs.txt --part decide --count --bkz 20,40 --workers 1,2 --json out.json
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import resource
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from versus import read_sd


def load(path: Path):
    """The file's system as indexset's System (Python ints)."""
    from indexset.search.system import plain_system
    from indexset.search.systemfile import load_system

    if path.suffix in (".dat", ".npz"):
        return load_system(path)
    data = read_sd(path)
    if (data["bounds"] is not None and any(v != 1 for v in data["bounds"])) or set(data["options"]) - {"stopafter"}:
        raise SystemExit(f"{path}: not a plain 0/1 system")
    return plain_system(data["A"], data["b"])


def _cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def decide(system, count: bool, block: int | None, workers: int, time_limit: float | None) -> dict:
    """One ``decide_system`` call as solve-system makes it; time, answer and stages."""
    from indexset.search.decide import decide_system

    options = {"workers": workers}
    if block is not None:
        options["bkz_block"] = block
    wall, cpu = time.perf_counter(), _cpu()
    result = decide_system(system, find_all=count, time_limit=time_limit, engines=["lattice"], engine_options=options)
    wall, cpu = time.perf_counter() - wall, _cpu() - cpu
    record = {"bkz": block, "workers": workers, "wall_s": round(wall, 3), "cpu_s": round(cpu, 3), "status": result.status,
              "count": result.count if count else None, "stages": result.stages}
    search = result.stages.get("search", {})
    for part in search.values() if isinstance(search, dict) else []:
        if isinstance(part, dict) and part.get("nodes") and part.get("enumerate_s"):
            record["nodes_per_s"] = round(part["nodes"] / part["enumerate_s"])
    return record


class Engine:
    """The lattice engine's internals this script reads, in either layout.

    The one-module engine (``indexset.search.engines.lattice``, up to
    00a3053) and the lattice package (``indexset.search.lattice``) name
    them differently; read-only use of both.
    """

    def __init__(self) -> None:
        try:
            from indexset.search.lattice import basis, choose, tuning, walk
        except ImportError:
            from indexset.search.engines import lattice as old

            self.old, self.basis, self.score, self.probes = old, old, old.profile_score, old.ESTIMATE_PROBES
            return
        self.old, self.basis, self.walk, self.score, self.probes = None, basis, walk, choose.profile_score, tuning.DEFAULT.estimate_probes

    def rr(self, lattice) -> np.ndarray:
        return lattice.arrays["rr"] if self.old else lattice.data.rr

    def radius2(self, lattice) -> float:
        return float(lattice.arrays["radius2"] if self.old else lattice.data.radius2)

    def estimate(self, lattice, seed: int) -> float:
        module = self.old or self.walk
        return module.estimate_nodes(lattice, self.probes, seed)

    def run(self, system, lattice, seconds: float):
        """A complete walk's run (every solution) with its deadline, and the call that drives it."""
        if self.old:
            run = self.old._Run(system, lattice, True, time.perf_counter() + seconds, None)
            return run, lambda: run.drive(run.new_state(), lattice.D, -1)
        from indexset.budget import Budget

        run = self.walk.Run(system, lattice, True, Budget.of(seconds))
        return run, lambda: run.drive(run.new_walk(), lattice.D, -1)


VARIANTS = ("engine", "self-dual", "slide")
"""How ``trees`` reduces: as the engine does (LLL, then fpylll's BKZ, at most
8 tours, auto-abort), or the engine's LLL followed by fpylll's self-dual
BKZ or slide reduction (8 tours) in place of its BKZ."""


def build(engine: Engine, reduction, block: int, variant: str):
    """The kernel lattice with the target outside, reduced by ``variant`` (see :data:`VARIANTS`)."""
    if variant == "engine" or block < 3:
        return engine.basis.build_lattice(reduction, block)
    import flint
    from fpylll import BKZ, IntegerMatrix

    n, K = reduction.n, reduction.kernel
    rows = flint.fmpz_mat([[2 * int(K[i, j]) for i in range(n)] for j in range(K.shape[1])]).lll(delta=0.99)
    A = IntegerMatrix.from_matrix([[int(rows[r, c]) for c in range(rows.ncols())] for r in range(rows.nrows())])
    flags = BKZ.SD_VARIANT if variant == "self-dual" else BKZ.SLD_RED
    BKZ.reduction(A, BKZ.Param(block_size=min(block, A.nrows), max_loops=8, flags=flags | BKZ.MAX_LOOPS))
    basis = np.array([[int(A[r, c]) for c in range(A.ncols)] for r in range(A.nrows)], dtype=object).reshape(A.nrows, A.ncols).T
    target = engine.basis._babai(basis, np.array([1 - 2 * int(v) for v in reduction.z0], dtype=object))
    lattice = engine.basis.Lattice(basis, -target, n, False)
    engine.basis._float_data(lattice)
    return lattice


def trees(system, blocks: list[int], walk_seconds: float, seed: int, variant: str = "engine") -> list[dict]:
    """For each block: the basis built as the engine builds it (or by ``variant``), its score and estimate, a timed complete walk."""
    from indexset.search.reduce import reduce_system

    engine = Engine()
    began = time.perf_counter()
    M = np.array(system.M, dtype=object)
    t = np.array(system.t, dtype=object)
    reduction = reduce_system(M, t)
    reduce_s = time.perf_counter() - began
    out = []
    for block in blocks:
        began, began_cpu = time.perf_counter(), time.thread_time()
        lattice = build(engine, reduction, block, variant)
        basis_s, basis_cpu = time.perf_counter() - began, time.thread_time() - began_cpu
        record = {"bkz": block, "reduction": variant, "reduce_s": round(reduce_s, 3), "rank": reduction.rank, "kernel_dimension": reduction.kernel_dimension,
                  "basis_s": round(basis_s, 3), "basis_cpu_s": round(basis_cpu, 3), "lattice_dim": lattice.D, "problem": lattice.problem}
        if lattice.problem or lattice.infeasible or lattice.D == 0:
            out.append(record)
            continue
        rr, radius2 = engine.rr(lattice), engine.radius2(lattice)
        record["score"] = round(engine.score(lattice), 3)
        record["radius2"] = round(radius2, 3)
        record["log10_gaussian_nodes"] = log10_gaussian_nodes(rr, radius2)
        record["rr"] = [round(float(v), 3) for v in rr]
        record["log2_gs_first_last"] = [round(0.5 * float(np.log2(rr[0])), 3), round(0.5 * float(np.log2(rr[-1])), 3)]
        began = time.perf_counter()
        record["estimated_nodes"] = engine.estimate(lattice, seed)
        record["estimate_s"] = round(time.perf_counter() - began, 3)
        record.update(walk(engine, system, lattice, walk_seconds))
        out.append(record)
        print(json.dumps({k: v for k, v in record.items() if k != "rr"}), flush=True)
    return out


def log10_gaussian_nodes(rr, radius2: float) -> float:
    """log10 of the Gaussian-heuristic tree size: the engine's ``profile_score`` for any list of ‖b*_j‖²."""
    rr = np.asarray(rr, dtype=float)
    depth = np.arange(1, len(rr) + 1)
    log_ball = 0.5 * depth * np.log(np.pi * radius2) - np.array([math.lgamma(k / 2 + 1) for k in depth])
    log_levels = log_ball - 0.5 * np.cumsum(np.log(rr[::-1]))
    top = log_levels.max()
    return round(float(top + np.log(np.exp(log_levels - top).sum())) / math.log(10), 2)


def sd_profile(log: Path) -> dict:
    """solvediophant's reduced lattice from its log (stderr): the ‖b*_j‖² it prints after ``Fd:``.

    Its lattice is the homogeneous embedding: the last vector carries the
    target with its coefficient fixed to 1, so the tree is that of the
    other vectors in the radius² ``Fd − ‖b*_last‖²``, the same geometry as
    the engine's kernel lattice with the target outside.
    """
    text = log.read_text(errors="replace")
    found = re.search(r"Fd: ([\d.]+)\n(.*?)\n\s*\n", text, re.S)
    if found is None:
        raise SystemExit(f"{log}: no 'Fd:' block (run solvediophant without -silent)")
    values = [float(v) for v in found.group(2).split()]
    radius2 = float(found.group(1)) - values[-1]
    block = re.search(r"BKZ (\d+) #+", text)
    return {"program": "solvediophant", "bkz": int(block.group(1)) if block else None, "lattice_dim": len(values) - 1, "radius2": round(radius2, 3),
            "log10_gaussian_nodes": log10_gaussian_nodes(values[:-1], radius2), "log2_gs_first_last": [round(0.5 * math.log2(values[0]), 3), round(0.5 * math.log2(values[-2]), 3)],
            "rr": values[:-1]}


def walk(engine: Engine, system, lattice, seconds: float) -> dict:
    """The complete walk on one thread (every solution), for at most ``seconds``."""
    run, drive = engine.run(system, lattice, seconds)
    began, began_cpu = time.perf_counter(), time.thread_time()
    done = drive()
    elapsed, cpu = time.perf_counter() - began, time.thread_time() - began_cpu
    return {"walk_nodes": run.nodes, "walk_s": round(elapsed, 3), "walk_cpu_s": round(cpu, 3), "nodes_per_cpu_s": round(run.nodes / max(cpu, 1e-9)),
            "walk_complete": bool(done), "walk_solutions": len(run.solutions)}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("file", type=Path)
    parser.add_argument("--part", choices=("decide", "trees"), default="decide")
    parser.add_argument("--bkz", default="default", help="comma list of BKZ blocks; 'default' for the engine's own (decide only)")
    parser.add_argument("--workers", default=str(os.cpu_count() or 1), help="comma list of thread counts (decide)")
    parser.add_argument("--count", action="store_true", help="count every solution (decide)")
    parser.add_argument("--time-limit", type=float, help="seconds per decide call")
    parser.add_argument("--reduction", choices=VARIANTS, default="engine", help="how trees reduces the basis (default: as the engine does)")
    parser.add_argument("--walk-seconds", type=float, default=120.0, help="most seconds of each complete walk (trees)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--sd-log", type=Path, help="solvediophant's stderr on the same file: its reduced lattice's Gaussian-heuristic tree beside the engine's (trees)")
    parser.add_argument("--json", type=Path, help="write the records here")
    args = parser.parse_args(argv)
    system = load(args.file)
    blocks = [None if b == "default" else int(b) for b in args.bkz.split(",")]
    records = []
    if args.part == "decide":
        from indexset.search import bkz

        bkz.load()  # fpylll on the main thread, as the CLI does
        for block in blocks:
            for workers in (int(w) for w in args.workers.split(",")):
                record = decide(system, args.count, block, workers, args.time_limit)
                records.append(record)
                print(json.dumps(record, default=str), flush=True)
    else:
        records = trees(system, [20 if b is None else b for b in blocks], args.walk_seconds, args.seed, args.reduction)
        if args.sd_log:
            records.append(sd_profile(args.sd_log))
            print(json.dumps({k: v for k, v in records[-1].items() if k != "rr"}), flush=True)
    if args.json:
        args.json.write_text(json.dumps({"file": str(args.file), "argv": sys.argv, "cpus": os.cpu_count(), "records": records}, indent=1, default=str) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
