"""The ``kernel`` suite: the enumeration kernel per node and per core, and its walks alone.

``per-node``
    For each system file, after one untimed run of indexset that fills
    Numba's cache, paired and alternating (``--repeat``): indexset
    ``solve-system FILE --count --json`` (this checkout, a whole process;
    its stages give the nodes, the walk's seconds and its threads, so nodes
    per thread-second of the walk), and solvediophant ``-bkz -beta40
    -silent FILE`` (its test script's count setting) twice: in full (its
    ``Loops``) and with ``% stoploops 1`` before the header, which times its
    reduction, so that its loops per CPU second of enumeration are loops /
    (CPU − reduction CPU). Then, once per file, the engine on one thread
    in process: the same basis and tree walked alone, which gives the idle
    share of the two threads, 1 − (one-thread walk) / (threads × walk),
    where both walked the same tree (node counts within 0.1 %). The files:
    solvediophant's KM_PSL_2_23_7_8, 4-arcs and n8_282 (bounded integers),
    QOBLIB ms_07_100_002 and the (★) system of ``indexset construct random
    --d 3 --n 80 --range 30 --seed 1`` (``--files`` names others).
``walks``
    The kernel alone: the lattice of each file (a system file, or a block's
    ``.npz``: its (★) system) (BKZ-``--bkz``) built once,
    then its whole tree (or its first ``--max-nodes`` nodes, the same nodes
    in every version of the kernel that walks the tree in the same order)
    walked ``--repeat`` times in one process after one walk that loads the
    kernel; the minimum CPU seconds are the figure least disturbed by a
    shared machine. The per-coordinate bounds are off, as the engine walks.
    Under callgrind, ``--repeat 1`` and ``--repeat 2`` differ by one walk's
    instructions.
"""

from __future__ import annotations

import json
import os
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPOSITORY = Path(__file__).resolve().parent.parent
PER_NODE_TESTS = ("KM_PSL_2_23_7_8.in", "4-arcs.txt", "n8_282.txt")
PER_NODE_QOBLIB = ("ms_07_100_002.dat",)
DENSE = "random --d 3 --n 80 --range 30 --seed 1"


def timed(argv: list, timeout: float, cwd: Path, env: dict | None = None) -> dict:
    """Wall and CPU seconds (children's user + system), exit code, stdout and stderr of one whole process, run in ``cwd``."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, cwd=cwd, env=env)
        code, out, err = done.returncode, done.stdout, done.stderr
    except subprocess.TimeoutExpired as expired:
        code, out, err = None, expired.stdout or "", expired.stderr or ""
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return {"code": code, "wall_s": wall, "cpu_s": cpu, "stdout": out if isinstance(out, str) else out.decode(), "stderr": err if isinstance(err, str) else err.decode()}


def ours(path: Path, timeout: float) -> dict:
    """One counted run of this checkout's indexset (``python -m indexset``): process times and the walk's nodes, seconds and threads."""
    run = timed([sys.executable, "-m", "indexset", "solve-system", str(path.resolve()), "--count", "--json"], timeout, REPOSITORY,
                {**os.environ, "PYTHONPATH": str(REPOSITORY)})
    if run["code"] not in (0, 1):
        return {"wall_s": run["wall_s"], "cpu_s": run["cpu_s"], "failed": run["code"], "nodes": None, "walk_s": None, "threads": None, "nodes_per_thread_s": None}
    payload = json.loads(run["stdout"])
    lattice = payload["stages"]["search"]["lattice"]
    threads = lattice.get("workers", 1)
    walk = lattice.get("enumerate_s")
    return {"wall_s": run["wall_s"], "cpu_s": run["cpu_s"], "count": payload.get("count"), "nodes": lattice.get("nodes"), "walk_s": walk, "threads": threads,
            "bkz": lattice.get("bkz"), "nodes_per_thread_s": lattice["nodes"] / (walk * threads) if walk else None}


def theirs(sd: str, path: Path, reduction_copy: Path, timeout: float) -> dict:
    """One counted run of solvediophant and one that stops after its first loop (its reduction), in the copy's scratch folder (it writes a file there)."""
    full = timed([sd, "-bkz", "-beta40", "-silent", str(path.resolve())], timeout, reduction_copy.parent)
    reduction = timed([sd, "-bkz", "-beta40", "-silent", str(reduction_copy)], timeout, reduction_copy.parent)
    loops = re.search(r"Loops: (\d+)", full["stderr"])
    total = re.search(r"Total number of solutions: (\d+)", full["stderr"])
    enumeration = full["cpu_s"] - reduction["cpu_s"]
    loops = int(loops.group(1)) if loops else None
    return {"wall_s": full["wall_s"], "cpu_s": full["cpu_s"], "reduction_cpu_s": reduction["cpu_s"], "loops": loops, "count": int(total.group(1)) if total else None,
            "loops_per_cpu_s": loops / enumeration if loops and enumeration > 0 else None}


_ONE_THREAD = """
import json, sys, time
from indexset.search.decide import decide_system
from indexset.search.systemfile import load_system
system = load_system(sys.argv[1])
began = time.process_time()
result = decide_system(system, find_all=True, count_only=True, engines=['lattice'], engine_options={'workers': 1})
lattice = result.stages['search']['lattice']
print(json.dumps({'nodes': lattice['nodes'], 'walk_s': lattice.get('enumerate_s'), 'cpu_s': time.process_time() - began}))
"""


def one_thread(path: Path) -> dict:
    """The engine on one thread, in a fresh process: the basis ``solve-system --count`` chooses, walked by one thread (a rung's restart needs two)."""
    done = subprocess.run([sys.executable, "-c", _ONE_THREAD, str(path.resolve())], capture_output=True, text=True, cwd=REPOSITORY, check=True,
                          env={**os.environ, "PYTHONPATH": str(REPOSITORY)})
    facts = json.loads(done.stdout.strip().splitlines()[-1])
    facts["nodes_per_s"] = facts["nodes"] / facts["walk_s"] if facts["walk_s"] else None  # a small tree is walked in NumPy, untimed
    return facts


def median(values):
    """The median of the values that are not None (None when none is)."""
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


def per_node(sd: str, path: Path, repeat: int, timeout: float, scratch: Path) -> dict:
    """One file: paired runs of both programs, the engine on one thread, and the medians."""
    copy = scratch / (path.name + ".stop1")
    copy.write_text("% stoploops 1\n" + path.read_text())  # solvediophant reduces, walks one loop and stops
    ours(path, timeout)  # untimed: Numba's cache then holds every kernel the runs call
    runs = []
    for rep in range(repeat):
        pair = {}
        for who in ("ours", "theirs") if rep % 2 == 0 else ("theirs", "ours"):
            pair[who] = ours(path, timeout) if who == "ours" else theirs(sd, path, copy, timeout)
        runs.append(pair)
    alone = one_thread(path)
    row = {"file": path.name, "runs": runs, "one_thread": alone,
           "ours_nodes_per_thread_s": median(r["ours"]["nodes_per_thread_s"] for r in runs), "sd_loops_per_cpu_s": median(r["theirs"]["loops_per_cpu_s"] for r in runs),
           "ratio_wall": median(r["ours"]["wall_s"] / r["theirs"]["wall_s"] for r in runs), "ratio_cpu": median(r["ours"]["cpu_s"] / r["theirs"]["cpu_s"] for r in runs)}
    walks = [r["ours"] for r in runs if alone["walk_s"] and r["ours"]["nodes"] is not None and abs(r["ours"]["nodes"] - alone["nodes"]) <= 1e-3 * alone["nodes"] and r["ours"]["walk_s"]]
    row["idle_share"] = median(1 - alone["walk_s"] / (w["walk_s"] * w["threads"]) for w in walks) if walks else None
    return row


def walk_once(lattice, single: bool, budget: int = 1 << 40) -> tuple[float, int]:
    """CPU seconds and nodes of one kernel walk (whole, unless ``budget`` nodes end it first), the per-coordinate bounds off."""
    import numpy as np
    from indexset.native import enumerate as kernel

    coord = np.zeros((3, lattice.D), dtype=np.int64)
    tree = lattice.tree(coord=coord, single=single)
    walk = lattice.new_walk(tree)
    began = time.process_time()
    while kernel.enumerate_box(tree, walk, lattice.D, -1, budget - int(walk.istate[kernel.NODES])) not in (kernel.DONE, kernel.RUNNING):
        pass
    return time.process_time() - began, int(walk.istate[kernel.NODES])


def walks(path: Path, bkz: int, repeat: int, max_nodes: float) -> dict:
    """The kernel alone on one file's BKZ tree: ``repeat`` walks after one that loads the kernel."""
    from indexset.errors import InputError
    from indexset.model.instance import Instance
    from indexset.search.lattice import build_lattice
    from indexset.search.lattice.tuning import DEFAULT
    from indexset.search.reduce import reduce_system
    from indexset.search.system import build_system
    from indexset.search.systemfile import load_system

    try:
        system = load_system(str(path))
    except InputError:  # a block's .npz: its (★) system
        system = build_system(Instance.load(path))
    lattice = build_lattice(reduce_system(system.M, system.t, upper=system.upper), bkz, upper=system.upper)  # upper None: the 0/1 box
    walk_once(lattice, DEFAULT.single_precision, budget=1)
    times = [walk_once(lattice, DEFAULT.single_precision, int(max_nodes)) for _ in range(repeat)]
    return {"file": path.name, "bkz": bkz, "nodes": times[0][1], "cpu_s": [round(t, 6) for t, _ in times], "max_nodes": max_nodes}


class Kernel:
    """The enumeration kernel per node and per core, against solvediophant's loop, and its walks alone."""

    def arguments(self, parser) -> None:
        parser.add_argument("--part", default="per-node", help="comma list from per-node, walks (default %(default)s)")
        parser.add_argument("--solvediophant", metavar="PATH", help="the solvediophant (sd2) binary (per-node)")
        parser.add_argument("--tests", metavar="DIR", help="solvediophant's Tests/ folder (per-node's default files)")
        parser.add_argument("--qoblib", metavar="DIR", help="the folder of QOBLIB's market-split .dat files (per-node's default files)")
        parser.add_argument("--files", nargs="+", type=Path, help="system files instead of the default ones (solvediophant's format, QOBLIB .dat)")
        parser.add_argument("--repeat", type=int, default=3, help="paired runs per file (per-node), or timed walks (walks) (default 3)")
        parser.add_argument("--timeout", type=float, default=900.0, help="seconds per run (default 900)")
        parser.add_argument("--bkz", type=int, default=20, help="walks: the BKZ block of the basis (default 20)")
        parser.add_argument("--max-nodes", type=float, default=float(1 << 40), help="walks: time the first this many nodes of each walk (default: whole walks)")

    def measure(self, args):
        scratch = Path(tempfile.mkdtemp(prefix="indexset-kernel-"))
        files = args.files
        if files is None:
            if not (args.tests and args.qoblib):
                raise SystemExit("kernel: name --files, or --tests and --qoblib for the default files")
            files = [Path(args.tests) / name for name in PER_NODE_TESTS] + [Path(args.qoblib) / name for name in PER_NODE_QOBLIB] + [dense_system(scratch)]
        for part in (p.strip() for p in args.part.split(",")):
            rows = []
            for path in files:
                if part == "per-node":
                    if not args.solvediophant:
                        raise SystemExit("kernel: per-node needs --solvediophant")
                    rows.append(per_node(os.path.abspath(args.solvediophant), path, args.repeat, args.timeout, scratch))
                elif part == "walks":
                    rows.append(walks(path, args.bkz, args.repeat, args.max_nodes))
                else:
                    raise SystemExit(f"kernel: no part {part!r}; the parts are per-node, walks")
                print(json.dumps({k: v for k, v in rows[-1].items() if k != "runs"}, default=str), file=sys.stderr, flush=True)
                yield part, {"rows": rows}

    def table(self, name: str, part: dict) -> dict:
        return {name: (per_node_table if name == "per-node" else walks_table)(part["rows"])}


SUITES = {"kernel": Kernel()}


def dense_system(folder: Path) -> Path:
    """The (★) system of the dense d = 3, n = 80 block, in solvediophant's format (``d3n80.txt``)."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from versus import write_system

    block = folder / "d3n80.npz"
    subprocess.run([sys.executable, "-m", "indexset", "construct", *DENSE.split(), "-o", str(block)], check=True, capture_output=True, cwd=REPOSITORY,
                   env={**os.environ, "PYTHONPATH": str(REPOSITORY)})
    write_system(block, folder / "d3n80.txt")
    return folder / "d3n80.txt"


def _count(value) -> str:
    if value is None:
        return "–"
    mantissa, exponent = f"{value:.2e}".split("e")
    return f"{mantissa}·10{''.join('⁰¹²³⁴⁵⁶⁷⁸⁹'[int(c)] if c.isdigit() else '⁻' for c in str(int(exponent)))}"


def _rate(value) -> str:
    return "–" if value is None else f"{value / 1e6:.1f} M"


def per_node_table(rows: list) -> tuple:
    """Nodes and loops, their rates, the idle share and the per-process ratios, one row per file."""
    header = ["file", "nodes (indexset)", "loops (solvediophant)", "indexset nodes per thread-second, 2 threads", "one thread",
              "solvediophant loops per CPU second", "per node, ours / theirs", "idle share", "indexset CPU (s)", "solvediophant CPU (s), of it reduction",
              "ratio wall", "ratio CPU"]
    lines = []
    for row in rows:
        first = row["runs"][0]
        ours_rate, theirs_rate = row["ours_nodes_per_thread_s"], row["sd_loops_per_cpu_s"]
        lines.append([Path(row["file"]).stem, _count(first["ours"]["nodes"]), _count(first["theirs"]["loops"]), _rate(ours_rate), _rate(row["one_thread"]["nodes_per_s"]),
                      _rate(theirs_rate), f"{ours_rate / theirs_rate:.2f}" if ours_rate and theirs_rate else "–",
                      "–" if row["idle_share"] is None else f"{row['idle_share']:.1%}", f"{median(r['ours']['cpu_s'] for r in row['runs']):.2f}",
                      f"{median(r['theirs']['cpu_s'] for r in row['runs']):.2f}, {median(r['theirs']['reduction_cpu_s'] for r in row['runs']):.2f}",
                      f"{row['ratio_wall']:.2f}", f"{row['ratio_cpu']:.2f}"])
    return header, lines


def walks_table(rows: list) -> tuple:
    """Nodes, the minimum and every CPU time, and nodes per CPU second at the minimum, one row per file."""
    header = ["file", "BKZ", "nodes", "min CPU s", "every walk (CPU s)", "nodes per CPU s"]
    return header, [[row["file"], row["bkz"], row["nodes"], f"{min(row['cpu_s']):.3f}", " · ".join(f"{t:.3f}" for t in row["cpu_s"]), _rate(row["nodes"] / min(row["cpu_s"])) if min(row["cpu_s"]) > 0 else "–"]
                    for row in rows]
