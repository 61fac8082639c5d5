"""Per node and per core: the lattice engine's walk against solvediophant's enumeration loop, file by file.

For each system file, in one run, paired and alternating, ``--repeat``
times:

- ``python -m indexset solve-system FILE --count --json`` with this
  repository's code (run in its folder): wall and CPU seconds of
  the process, and from its stages the nodes walked, the walk's wall
  seconds and its threads, so nodes per thread-second of the walk;
- solvediophant ``-bkz -beta40 -silent FILE`` (its test script's count
  setting): wall and CPU seconds and its ``Loops``;
- the same with ``% stoploops 1`` put before the file's header: the CPU
  of its reduction (and one loop), so that its loops per CPU second of
  enumeration are loops / (CPU − reduction CPU).

Then, once per file, the engine itself on one thread (``decide_system``
with ``workers = 1``, in process): the same basis and tree, so its nodes
per second of walk with no second thread, and the share of the two
threads' walk time they were not walking,
1 − (one-thread walk s) / (threads × two-thread walk s), when both
walked the same tree (node counts within 0.1 %: the split counts a few nodes twice).

    python benchmarks/per_node.py --solvediophant PATH/sd2 --repeat 3 --json benchmarks/per_node.json FILE ...
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPOSITORY = Path(__file__).resolve().parent.parent


def timed(argv: list[str], timeout: float, cwd: Path, env: dict | None = None) -> dict:
    """Wall and CPU seconds, exit code, stdout and stderr of one whole process, run in ``cwd``."""
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
    return {"code": code, "wall_s": wall, "cpu_s": cpu, "stdout": out if isinstance(out, str) else out.decode(),
            "stderr": err if isinstance(err, str) else err.decode()}


def ours(path: Path, timeout: float) -> dict:
    """One counted run of this repository's indexset (``python -m indexset``): process times and the walk's nodes, seconds and threads."""
    run = timed([sys.executable, "-m", "indexset", "solve-system", str(path.resolve()), "--count", "--json"], timeout, REPOSITORY,
                {**os.environ, "PYTHONPATH": str(REPOSITORY)})
    if run["code"] not in (0, 1):
        return {"wall_s": run["wall_s"], "cpu_s": run["cpu_s"], "failed": run["code"], "nodes": None, "walk_s": None,
                "threads": None, "nodes_per_thread_s": None}
    payload = json.loads(run["stdout"])
    lattice = payload["stages"]["search"]["lattice"]
    threads = lattice.get("workers", 1)
    walk = lattice.get("enumerate_s")
    return {"wall_s": run["wall_s"], "cpu_s": run["cpu_s"], "count": payload.get("count"), "nodes": lattice.get("nodes"),
            "walk_s": walk, "threads": threads, "bkz": lattice.get("bkz"),
            "nodes_per_thread_s": lattice["nodes"] / (walk * threads) if walk else None}


def theirs(sd: str, path: Path, reduction_copy: Path, timeout: float) -> dict:
    """One counted run of solvediophant and one that stops after its first loop (its reduction), in the scratch folder of the copy (it writes a file there)."""
    full = timed([sd, "-bkz", "-beta40", "-silent", str(path.resolve())], timeout, reduction_copy.parent)
    reduction = timed([sd, "-bkz", "-beta40", "-silent", str(reduction_copy)], timeout, reduction_copy.parent)
    loops = re.search(r"Loops: (\d+)", full["stderr"])
    total = re.search(r"Total number of solutions: (\d+)", full["stderr"])
    enumeration = full["cpu_s"] - reduction["cpu_s"]
    loops = int(loops.group(1)) if loops else None
    return {"wall_s": full["wall_s"], "cpu_s": full["cpu_s"], "reduction_cpu_s": reduction["cpu_s"], "loops": loops,
            "count": int(total.group(1)) if total else None,
            "loops_per_cpu_s": loops / enumeration if loops and enumeration > 0 else None}


def one_thread(path: Path) -> dict:
    """The engine on one thread, in process: the basis ``solve-system --count`` chooses, walked by one thread (a rung's restart needs two)."""
    code = (
        "import json, sys, time\n"
        "from indexset.search.decide import decide_system\n"
        "from indexset.search.systemfile import load_system\n"
        "system = load_system(sys.argv[1])\n"
        "began = time.process_time()\n"
        "result = decide_system(system, find_all=True, count_only=True, engines=['lattice'], engine_options={'workers': 1})\n"
        "lattice = result.stages['search']['lattice']\n"
        "print(json.dumps({'nodes': lattice['nodes'], 'walk_s': lattice['enumerate_s'], 'cpu_s': time.process_time() - began}))\n"
    )
    env = {**os.environ, "PYTHONPATH": str(REPOSITORY)}
    done = subprocess.run([sys.executable, "-c", code, str(path.resolve())], capture_output=True, text=True, env=env, cwd=REPOSITORY, check=True)
    facts = json.loads(done.stdout.strip().splitlines()[-1])
    facts["nodes_per_s"] = facts["nodes"] / facts["walk_s"]
    return facts


def stoploops_copy(path: Path, folder: Path) -> Path:
    """The file with '% stoploops 1' before its first line: solvediophant reduces, walks one loop and stops."""
    target = folder / (path.name + ".stop1")
    target.write_text("% stoploops 1\n" + path.read_text())
    return target


def median(values):
    """The median of the values that are not None (None when none is)."""
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("files", nargs="+", type=Path, help="system files (solvediophant's format, QOBLIB .dat)")
    parser.add_argument("--solvediophant", required=True, metavar="PATH", help="the solvediophant (sd2) binary")
    parser.add_argument("--repeat", type=int, default=3, help="paired runs per file (default 3)")
    parser.add_argument("--timeout", type=float, default=900.0, help="seconds per run (default 900)")
    parser.add_argument("--json", metavar="OUT", help="write every run here")
    args = parser.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as scratch:
        for path in args.files:
            copy = stoploops_copy(path, Path(scratch))
            runs = []
            for rep in range(args.repeat):
                pair = {}
                for who in (("ours", "theirs") if rep % 2 == 0 else ("theirs", "ours")):
                    pair[who] = ours(path, args.timeout) if who == "ours" else theirs(args.solvediophant, path, copy, args.timeout)
                runs.append(pair)
            alone = one_thread(path)
            row = {"file": path.name, "runs": runs, "one_thread": alone,
                   "ours_nodes_per_thread_s": median(r["ours"]["nodes_per_thread_s"] for r in runs),
                   "sd_loops_per_cpu_s": median(r["theirs"]["loops_per_cpu_s"] for r in runs),
                   "ratio_wall": median(r["ours"]["wall_s"] / r["theirs"]["wall_s"] for r in runs),
                   "ratio_cpu": median(r["ours"]["cpu_s"] / r["theirs"]["cpu_s"] for r in runs)}
            walks = [r["ours"] for r in runs if r["ours"]["nodes"] is not None and abs(r["ours"]["nodes"] - alone["nodes"]) <= 1e-3 * alone["nodes"] and r["ours"]["walk_s"]]
            row["idle_share"] = median(1 - alone["walk_s"] / (w["walk_s"] * w["threads"]) for w in walks) if walks else None
            rows.append(row)
            print(f"{path.name}: ours nodes {runs[0]['ours']['nodes']} at {row['ours_nodes_per_thread_s'] or 0:.3g}/thread-s "
                  f"(one thread {alone['nodes_per_s']:.3g}/s, {alone['nodes']} nodes), sd loops {runs[0]['theirs']['loops']} at "
                  f"{row['sd_loops_per_cpu_s'] or 0:.3g}/CPU-s; ratio wall {row['ratio_wall']:.3g}, CPU {row['ratio_cpu']:.3g}; "
                  f"idle share {row['idle_share']}", flush=True)
    if args.json:
        machine = {"cpus": os.cpu_count(), "platform": platform.platform(), "processor": platform.processor() or platform.machine()}
        Path(args.json).write_text(json.dumps({"machine": machine, "rows": rows}, indent=1) + "\n")


if __name__ == "__main__":
    main()
