"""How the time grows with the problem and the machine: the ``width``, ``dask`` and ``checkpoints`` suites.

``width``
    Search time against the width n: the sweeps of
    :mod:`indexset.workflows.bench` (``indexset bench``) on constructed
    instances, d = 2 (entries in [−1000, 1000]) and d = 3 ([−30, 30]),
    random (negative) and planted (positive), every method beside the
    pipeline (plain CP-SAT, HiGHS MILP, brute force, two ablations). A
    table per sweep (median / max seconds over the seeds, decided/runs)
    and its figure (``--plots``). Every run carries the command that runs
    it alone and the one that writes its instance.
``dask``
    The split search (:mod:`indexset.search.split`) of one complete walk,
    ``indexset construct random --d 2 --n 74 --range 1000 --seed 1``
    (counted: no S exists), on 1, 2 and 4 local Dask workers against two
    threads in process; start-up and close timed apart, every part's nodes
    and seconds kept, from which the wall on any number of workers taking
    the parts first in, first out follows.
``checkpoints``
    The Gram path on one transformer-sized layer (d = 768, n = 3072, GELU,
    weights N(0, 1/d) and N(0, 1/n), seed 0; one BLAS thread, each run a
    fresh process) beside the bare work it rests on (forming G, then
    ``numpy.linalg.solve``); and ``indexset scan`` of seeded BERT-layout
    checkpoints as whole processes against the bare float64 solves of
    their layers, alternating.
"""

from __future__ import annotations

import heapq
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

RESULTS = Path(__file__).resolve().parent / "results"

SWEEPS = {  # name: (d, family, range, widths)
    "d2_random": (2, "random", 1000, "2,3,4,5,6,8,10:60:10"),
    "d2_planted": (2, "planted", 1000, "2,3,4,5,6,8,10:60:10"),
    "d3_random": (3, "random", 30, "3,6,9,10,12,15,20:60:10"),
    "d3_planted": (3, "planted", 30, "3,6,9,10,12,15,20:60:10"),
}
METHODS = "pipeline,cpsat-plain,milp,brute,no-prune,no-lattice"


# ------------------------------------------------------------------ width


class Width:
    """Search time against width, beside plain CP-SAT, HiGHS MILP, brute force and two ablations, with figures."""

    def arguments(self, parser) -> None:
        parser.add_argument("--sweeps", default=",".join(SWEEPS), help="comma list from %(default)s")
        parser.add_argument("--widths", help="widths of every sweep (START:STOP:STEP or a comma list; default: each sweep's)")
        parser.add_argument("--seeds", type=int, default=2, help="seeds per width, 0, 1, … (default 2)")
        parser.add_argument("--methods", default=METHODS, help="comma list (default %(default)s)")
        parser.add_argument("--time-limit", type=float, default=30.0, help="seconds per run (default 30)")
        parser.add_argument("--plots", type=Path, default=RESULTS, help="the folder of the figures, width_SWEEP.png (default benchmarks/results)")

    def measure(self, args):
        import indexset.workflows.bench as bench
        from indexset.workflows.plots import plot_report

        for name in args.sweeps.split(","):
            d, family, bound, widths = SWEEPS[name]
            sweep = bench.Sweep(d=d, widths=bench.parse_widths(args.widths or widths), seeds=list(range(args.seeds)), family=family, range=bound,
                                methods=tuple(args.methods.split(",")), time_limit=args.time_limit)
            report = bench.run_sweep(sweep)
            report["bench_command"] = bench.sweep_command(sweep)
            plot_report(report, args.plots / f"width_{name}.png")
            yield name, report

    def table(self, name: str, part: dict) -> dict:
        return {name: width_table(part)}


def _seconds(value, limit: float) -> str:
    if value is None:
        return f">{limit:g}"
    return "<0.001" if value < 0.001 else f"{value:.3f}" if value < 10 else f"{value:.1f}"


def _cell(row: dict, limit: float) -> str:
    if row["runs"] == 0:
        return "skipped (n > 22)" if row["skipped"] else "—"
    text = f"{_seconds(row['median_s'], limit)} / {_seconds(row['max_s'], limit)}  {row['solved']}/{row['runs']}"
    text += "*" if row["infeasible_float"] else ""
    return text + (f" ({row['timeouts']} timeout{'s' if row['timeouts'] > 1 else ''})" if row["timeouts"] else "")


def width_table(report: dict) -> tuple:
    """Median / max seconds and decided/runs per method and width, and a row per disagreement."""
    sweep = report["sweep"]
    by = {(r["method"], r["n"]): r for r in report["summary"]}
    header = ["n", *sweep["methods"]]
    rows = [[f"{n}" + (" (≤ d²)" if n <= sweep["d"] ** 2 else "")] + [_cell(by[(m, n)], sweep["time_limit"]) for m in sweep["methods"]] for n in sweep["widths"]]
    for p in report["disagreements"]:
        rows.append(["⚠", f"**{p['kind'].upper().replace('_', ' ')} n={p['n']} seed={p['seed']}: {p.get('method')}: {p.get('note', '')}**"] + [""] * (len(header) - 2))
    return header, rows


# ------------------------------------------------------------------ dask


def fifo_makespan(seconds: list, workers: int) -> float:
    """Wall time of ``workers`` taking the parts in order, each the next free one."""
    free = [0.0] * workers
    for s in seconds:
        heapq.heappush(free, heapq.heappop(free) + s)
    return max(free)


def balance(record: dict) -> dict:
    """Shares of the largest parts and the speed-ups their times allow on W workers, first in, first out."""
    nodes, seconds = record["part_nodes"], record["part_seconds"]
    total_nodes, total_s = sum(nodes), sum(seconds)
    top = sorted(range(len(nodes)), key=lambda i: -nodes[i])[:5]
    return {"parts": len(nodes), "largest_shares": [round(nodes[i] / total_nodes, 4) for i in top], "median_part_s": round(sorted(seconds)[len(seconds) // 2], 4),
            "max_part_s": round(max(seconds), 3), "sum_part_s": round(total_s, 2), "ns_per_node": round(total_s / total_nodes * 1e9, 1),
            "fifo_speedup": {w: round(total_s / fifo_makespan(seconds, w), 2) for w in (2, 4, 8, 16, 32, 64)}}


def run_mode(mode: str, system) -> dict:
    """One complete search (``single``, ``threads-N`` or ``dask-N``); wall seconds from the reduction on, a cluster's start-up and close apart."""
    from indexset.search import lattice
    from indexset.search.cluster import Cluster
    from indexset.search.reduce import reduce_system

    record, cluster = {"mode": mode}, None
    if mode.startswith("dask-"):
        cluster = Cluster(workers=int(mode.split("-")[1]), min_seconds=0)
        began = time.perf_counter()
        cluster.client()
        record["startup_s"] = round(time.perf_counter() - began, 3)
    try:
        began = time.perf_counter()
        threads = int(mode.split("-")[1]) if mode.startswith("threads-") else 1
        result = lattice.search(system, reduce_system(system.M, system.t), find_all=True, workers=threads, cluster=cluster)
        record["wall_s"] = round(time.perf_counter() - began, 3)
    finally:
        if cluster is not None:
            began = time.perf_counter()
            cluster.close()
            record["close_s"] = round(time.perf_counter() - began, 3)
    stages = result.stages
    record.update(status=result.status, count=result.count, complete=result.complete, nodes=stages.get("nodes"), enumerate_s=stages.get("enumerate_s"),
                  lattice_dim=stages.get("lattice_dim"))
    record.update({key: stages[key] for key in ("split_level", "parts", "part_nodes", "part_seconds", "parts_per_worker", "subtrees") if key in stages})
    return record


class Dask:
    """The split search on local Dask workers against threads in process, and the balance of its parts."""

    def arguments(self, parser) -> None:
        parser.add_argument("--modes", default="threads-2,dask-1,dask-2,dask-4", help="comma list of single, threads-N, dask-N (default %(default)s)")
        parser.add_argument("--n", type=int, default=74, help="the width of the instance (default 74)")
        parser.add_argument("--seed", type=int, default=1, help="its seed (default 1)")

    def measure(self, args):
        from indexset.search import lattice
        from indexset.search.system import build_system
        from indexset.workflows import construct

        lattice.search(build_system(construct.random(d=2, n=40, range=1000, seed=0)), find_all=True)  # loads the kernels, untimed
        system = build_system(construct.random(d=2, n=args.n, range=1000, seed=args.seed))
        part = {"instance": f"indexset construct random --d 2 --n {args.n} --range 1000 --seed {args.seed}", "runs": []}
        for mode in args.modes.split(","):
            part["runs"].append(dict(run_mode(mode, system), load_average_after=os.getloadavg()))
            if mode == "dask-1" and "part_nodes" in part["runs"][-1]:
                part["balance"] = balance(part["runs"][-1])
            print(json.dumps({k: v for k, v in part["runs"][-1].items() if k not in ("part_nodes", "part_seconds")}), file=sys.stderr, flush=True)
            yield "scaling", part

    def table(self, name: str, part: dict) -> dict:
        one = next((r["wall_s"] for r in part["runs"] if r["mode"] == "dask-1"), None)
        header = ["mode", "wall (s)", "start-up + close (s)", "enumeration nodes", "parts per worker"]
        rows = []
        for r in part["runs"]:
            kind, count = r["mode"].split("-") if "-" in r["mode"] else (r["mode"], "1")
            if kind == "dask":
                label = f"Dask, {count} local worker{'s' if count != '1' else ''} ({r['parts']} parts at level {r['split_level']})"
            else:
                label = f"{count} thread{'s' if count != '1' else ''} in process" + (f" ({r['subtrees']} subtrees at level {r['split_level']})" if "subtrees" in r else "")
            speed = f" ({one / r['wall_s']:.2f}×)" if one and kind == "dask" and count != "1" else ""
            rows.append([label, f"{r['wall_s']:.1f}{speed}", f"{r['startup_s']:.1f} + {r['close_s']:.1f}" if "startup_s" in r else "–", f"{r['nodes']:,}",
                         ", ".join(str(v) for v in r["parts_per_worker"].values()) if "parts_per_worker" in r else "–"])
        return {name: (header, rows)}


# ------------------------------------------------------------------ checkpoints


_GRAM = """
import json, sys, time, tracemalloc, resource
import numpy as np
from indexset.large.gram import gram_decide
from indexset.model.instance import Instance
d, n, seed = (int(v) for v in sys.argv[1:4])
rng = np.random.default_rng(seed)
U, D = rng.standard_normal((n, d)) / np.sqrt(d), rng.standard_normal((d, n)) / np.sqrt(n)
instance = Instance(U, D, b_up=rng.standard_normal(n) * 0.02, b_down=np.zeros(d), activation="gelu")
start = time.perf_counter()
G = (D.T @ D) * (U @ U.T)
rhs = -np.einsum("ai,ia->i", D, U)
gram_s = time.perf_counter() - start
start = time.perf_counter()
np.linalg.solve(G, rhs)
solve_s = time.perf_counter() - start
del G
start = time.perf_counter()
result = gram_decide(instance)
decide_s = time.perf_counter() - start
tracemalloc.start()
gram_decide(instance)
peak = tracemalloc.get_traced_memory()[1]
print(json.dumps({"status": result.status, "distance": [result.certificate["distance_lower"], result.certificate["distance_upper"]], "decide_s": decide_s,
                  "gram_s": gram_s, "solve_s": solve_s, "traced_peak_mib": peak / 2**20, "max_rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""


def build_checkpoint(folder: Path, layers: int, d: int, n: int, seed: int) -> None:
    """A seeded BERT-layout checkpoint: float32 weights N(0, 1/d) and N(0, 1/n), small biases, GELU."""
    import numpy as np
    from safetensors.numpy import save_file

    rng = np.random.default_rng(seed)
    tensors = {}
    for i in range(layers):
        prefix = f"bert.encoder.layer.{i}."
        tensors[prefix + "intermediate.dense.weight"] = (rng.standard_normal((n, d)) / np.sqrt(d)).astype(np.float32)
        tensors[prefix + "intermediate.dense.bias"] = (0.02 * rng.standard_normal(n)).astype(np.float32)
        tensors[prefix + "output.dense.weight"] = (rng.standard_normal((d, n)) / np.sqrt(n)).astype(np.float32)
        tensors[prefix + "output.dense.bias"] = (0.02 * rng.standard_normal(d)).astype(np.float32)
    save_file(tensors, str(folder / "model.safetensors"))
    (folder / "config.json").write_text(json.dumps({"model_type": "bert", "hidden_act": "gelu"}))


def bare_scan(folder: Path, layers: int) -> float:
    """Seconds of the bare float64 Gram solves of every layer, the tensors read from the file."""
    import numpy as np
    from safetensors.numpy import load_file

    start = time.perf_counter()
    tensors = load_file(str(folder / "model.safetensors"))
    for i in range(layers):
        prefix = f"bert.encoder.layer.{i}."
        U = tensors[prefix + "intermediate.dense.weight"].astype(np.float64)
        D = tensors[prefix + "output.dense.weight"].astype(np.float64)
        np.linalg.solve((D.T @ D) * (U @ U.T), -np.einsum("ri,ir->i", D, U))
    return time.perf_counter() - start


def scan(folder: Path, indexset: str) -> float:
    """Wall seconds of one whole ``indexset scan FOLDER --json`` process."""
    start = time.perf_counter()
    process = subprocess.run([indexset, "scan", str(folder), "--json"], capture_output=True, text=True)
    if process.returncode not in (0, 1, 3):
        raise SystemExit(f"scan failed ({process.returncode}): {process.stderr[-500:]}")
    return time.perf_counter() - start


class Checkpoints:
    """The Gram path on one transformer-sized layer, and ``indexset scan`` of BERT-size checkpoints against the bare solves."""

    def arguments(self, parser) -> None:
        parser.add_argument("--part", default="gram,scan", help="comma list from gram, scan (default %(default)s)")
        parser.add_argument("--repeat", type=int, default=3, help="runs (gram), alternating pairs (scan) (default 3)")
        parser.add_argument("--layer", default="768,3072", metavar="D,N", help="gram: the layer's d and n (default %(default)s)")
        parser.add_argument("--checkpoints", default="6,384,1536;1,768,3072", metavar="L,D,N;...", help="scan: layers, d and n of each checkpoint (default %(default)s)")
        parser.add_argument("--indexset", default="indexset", help="scan: the indexset executable (default: indexset on PATH)")

    def measure(self, args):
        parts = args.part.split(",")
        if "gram" in parts:
            d, n = args.layer.split(",")
            env = dict(os.environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1")
            runs = [json.loads(subprocess.run([sys.executable, "-c", _GRAM, d, n, "0"], capture_output=True, text=True, check=True, env=env).stdout)
                    for _ in range(args.repeat)]
            yield "gram", {"d": int(d), "n": int(n), "blas_threads": 1, "runs": runs}
        if "scan" in parts:
            checkpoints = []
            for spec in args.checkpoints.split(";"):
                layers, d, n = (int(v) for v in spec.split(","))
                folder = Path(tempfile.mkdtemp(prefix="indexset-scan-"))
                build_checkpoint(folder, layers, d, n, 0)
                scan(folder, args.indexset)  # the file cache, untimed
                pairs = []
                for rep in range(args.repeat):  # alternating: scan first, then the bare solves first
                    if rep % 2 == 0:
                        scan_s = scan(folder, args.indexset)
                        bare_s = bare_scan(folder, layers)
                    else:
                        bare_s = bare_scan(folder, layers)
                        scan_s = scan(folder, args.indexset)
                    pairs.append({"scan_s": scan_s, "bare_s": bare_s})
                checkpoints.append({"layers": layers, "d": d, "n": n, "pairs": pairs})
            yield "scan", {"checkpoints": checkpoints}

    def table(self, name: str, part: dict) -> dict:
        def spread(values, digits=2):
            return f"{min(values):.{digits}f}–{max(values):.{digits}f}"

        if name == "gram":
            runs = part["runs"]
            header = ["layer", "status, certified distance", "`gram_decide` (s)", "forming G, then `numpy.linalg.solve` (s)", "peak memory (MiB): traced, resident"]
            lo, hi = runs[0]["distance"]
            return {name: (header, [[f"d = {part['d']}, n = {part['n']}", f"{runs[0]['status']}, [{lo:.6g}, {hi:.6g}]", spread([r["decide_s"] for r in runs]),
                                     spread([r["gram_s"] + r["solve_s"] for r in runs]), f"{max(r['traced_peak_mib'] for r in runs):.0f}, {max(r['max_rss_mib'] for r in runs):.0f}"]])}
        header = ["checkpoint", "scan, whole process (s, median)", "bare solves (s, median)", "ratio scan / bare (median)"]
        rows = [[f"{c['layers']} layer{'s' if c['layers'] > 1 else ''}, d = {c['d']}, n = {c['n']}", f"{statistics.median(p['scan_s'] for p in c['pairs']):.2f}",
                 f"{statistics.median(p['bare_s'] for p in c['pairs']):.2f}", f"{statistics.median(p['scan_s'] / p['bare_s'] for p in c['pairs']):.2f}"] for c in part["checkpoints"]]
        return {name: (header, rows)}


SUITES = {"width": Width(), "dask": Dask(), "checkpoints": Checkpoints()}
