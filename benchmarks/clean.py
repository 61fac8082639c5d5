"""The ``clean`` suite: every run of the command line ends cleanly, and ``--time-limit`` holds for the whole process.

``soak``
    ``indexset solve FILE --json`` (default engines) ``--runs`` times,
    ``--jobs`` processes at a time (the load brings out a crash at exit
    that a single run may not show), each in a fresh empty working folder,
    on seeded constructed families (planted and random, d = 2 with entries
    in [−1000, 1000], d = 3 in [−30, 30]) and the bundled instances. A run
    is clean when its exit status is the documented code of the status it
    printed (0 absorbable, 1 not_absorbable, 3 unknown), stderr holds no
    ``SIGABRT``, ``Traceback`` or ``terminate called``, nothing is left in
    its folder (no ``cysignals_crash_logs``), it did not hang and its answer
    is not wrong (a planted instance is never not_absorbable).
    ``tests/cli/test_clean_exit.py`` is a small version of it.
``limits``
    The wall time of whole ``indexset solve HARD --time-limit T`` processes,
    from fork to exit, on ``indexset construct random --d 2 --n 80 --range
    1000 --seed 1``, whose search takes many minutes.
"""

from __future__ import annotations

import json
import os
import random
import shlex
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor, as_completed
from pathlib import Path

EXIT = {"absorbable": 0, "not_absorbable": 1, "unknown": 3}
"""The documented exit code of each JSON status."""

SIGNATURES = ("SIGABRT", "Traceback", "terminate called")
"""Strings whose presence on stderr marks a crash."""

BUNDLED = Path(__file__).resolve().parent.parent / "instances"
RANGES = {2: 1000, 3: 30}
HARD = "random --d 2 --n 80 --range 1000 --seed 1"


def instances(indexset: list, folder: Path, d2_sizes: list, d3_sizes: list, seed: int) -> list:
    """Write the soak's constructed instances with ``indexset construct``, and list them with the bundled ones.

    Parameters
    ----------
    indexset : list of str
        The ``indexset`` command.
    folder : Path
        Where to write the files.
    d2_sizes, d3_sizes : list of int
        Widths n of the d = 2 and d = 3 families.
    seed : int
        The constructor's seed.

    Returns
    -------
    list of dict
        ``family``, ``name``, ``path`` and ``expected`` (``"absorbable"`` for a planted instance, else None).
    """
    items = []
    for d, sizes in ((2, d2_sizes), (3, d3_sizes)):
        for kind in ("planted", "random"):
            for n in sizes:
                path = folder / f"{kind}_d{d}_n{n}_s{seed}.npz"
                argv = [*indexset, "construct", kind, "--d", str(d), "--n", str(n), "--range", str(RANGES[d]), "--seed", str(seed), "-o", str(path)]
                subprocess.run(argv, capture_output=True, check=True)
                items.append({"family": f"{kind}-d{d}", "name": path.name, "path": path, "expected": "absorbable" if kind == "planted" else None})
    items += [{"family": "bundled", "name": p.name, "path": p, "expected": None} for p in sorted(BUNDLED.glob("*.npz"))]
    return items


def parse_status(stdout: str) -> str:
    """The ``status`` of the JSON object that ``solve --json`` printed, or ``"no-json"``."""
    start = stdout.find("{")
    try:
        payload = json.loads(stdout[start:]) if start >= 0 else None
    except ValueError:
        return "no-json"
    return payload["status"] if isinstance(payload, dict) and isinstance(payload.get("status"), str) else "no-json"


def solve_once(indexset: list, item: dict, index: int, timeout: float, workroot: str) -> dict:
    """Run ``indexset solve FILE --json`` once, in a fresh working folder.

    Parameters
    ----------
    indexset : list of str
        The ``indexset`` command.
    item : dict
        One entry of :func:`instances`.
    index : int
        The run's number.
    timeout : float
        Seconds after which the process is killed and the run counted as a hang.
    workroot : str
        The parent of the run's working folder.

    Returns
    -------
    dict
        The run: exit status and signal, JSON status, whether the exit code is the documented one,
        crash signatures on stderr, files left behind, hang, wrong answer, wall seconds, and ``clean``.
    """
    workdir = tempfile.mkdtemp(prefix=f"run{index:04d}-", dir=workroot)
    start = time.perf_counter()
    try:
        process = subprocess.run([*indexset, "solve", str(item["path"]), "--json"], capture_output=True, text=True, errors="replace", cwd=workdir,
                                 timeout=timeout, stdin=subprocess.DEVNULL)
        code, stdout, stderr, hung = process.returncode, process.stdout, process.stderr, False
    except subprocess.TimeoutExpired as expired:
        code, hung = None, True
        stdout, stderr = (b.decode(errors="replace") if isinstance(b, bytes) else (b or "") for b in (expired.stdout, expired.stderr))
    wall = time.perf_counter() - start
    left = sorted(os.listdir(workdir))
    shutil.rmtree(workdir, ignore_errors=True)
    status = parse_status(stdout)
    killed = signal.Signals(-code).name if code is not None and code < 0 and -code in signal.valid_signals() else None
    row = {"run": index, "family": item["family"], "instance": item["name"], "exit": code, "signal": killed, "timeout": hung, "status": status,
           "exit_matches": status in EXIT and code == EXIT[status], "wrong_answer": item["expected"] is not None and status == "not_absorbable",
           "left_in_cwd": left, "signatures": [s for s in SIGNATURES if s in stderr], "stderr_head": stderr.splitlines()[:3], "wall_s": round(wall, 3)}
    row["clean"] = row["exit_matches"] and not hung and not left and not row["wrong_answer"] and not row["signatures"]
    return row


def soak(indexset: list, runs: int, jobs: int, seed: int, timeout: float, d2_sizes: list, d3_sizes: list) -> dict:
    """The soak: the instances in a seeded shuffled order, ``jobs`` runs at a time; every run's row."""
    with tempfile.TemporaryDirectory(prefix="indexset-soak-") as tmp:
        folder, work = Path(tmp) / "instances", Path(tmp) / "runs"
        folder.mkdir()
        work.mkdir()
        items = instances(indexset, folder, d2_sizes, d3_sizes, seed)
        rng, schedule = random.Random(seed), []
        while len(schedule) < runs:
            batch = list(items)
            rng.shuffle(batch)
            schedule.extend(batch)
        rows = []
        with ThreadPoolExecutor(max_workers=jobs) as pool:
            futures = [pool.submit(solve_once, indexset, item, i, timeout, str(work)) for i, item in enumerate(schedule[:runs])]
            for done, future in enumerate(as_completed(futures), 1):
                rows.append(future.result())
                if not rows[-1]["clean"] or done % 20 == 0:
                    print(f"[{done}/{runs}] {rows[-1]['instance']}: exit {rows[-1]['exit']} {rows[-1]['status']}" + ("" if rows[-1]["clean"] else "  UNCLEAN"),
                          file=sys.stderr, flush=True)
    return {"jobs": jobs, "rows": sorted(rows, key=lambda r: r["run"])}


def limits(indexset: list, seconds: list, repeat: int) -> dict:
    """The wall time of whole ``solve --time-limit T`` processes on an instance that takes many minutes."""
    folder = Path(tempfile.mkdtemp(prefix="indexset-limits-"))
    hard = folder / "hard.npz"
    subprocess.run([*indexset, "construct", *HARD.split(), "-o", str(hard)], check=True, capture_output=True)
    runs = []
    for limit in seconds:
        for _ in range(repeat):
            start = time.perf_counter()
            process = subprocess.run([*indexset, "solve", str(hard), "--time-limit", f"{limit:g}"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            runs.append({"limit": limit, "wall_s": round(time.perf_counter() - start, 3), "exit": process.returncode})
    return {"instance": f"indexset construct {HARD}", "runs": runs}


class Clean:
    """Clean exits of the command line over many runs, and the wall time of ``--time-limit`` runs."""

    def arguments(self, parser) -> None:
        parser.add_argument("--part", default="soak,limits", help="comma list from soak, limits (default %(default)s)")
        parser.add_argument("--indexset", default="indexset", help="the indexset command, split like a shell line (default: indexset on PATH)")
        parser.add_argument("--runs", type=int, default=400, help="soak: runs in all (default 400)")
        parser.add_argument("--jobs", type=int, default=2, help="soak: runs at a time (default 2)")
        parser.add_argument("--seed", type=int, default=0, help="soak: the instances' seed and the order's (default 0)")
        parser.add_argument("--timeout", type=float, default=300.0, help="soak: seconds before a run counts as a hang (default 300)")
        parser.add_argument("--d2-sizes", default="12,20,28,36,44", help="soak: widths of the d = 2 families (default %(default)s)")
        parser.add_argument("--d3-sizes", default="12,24,36,48,60", help="soak: widths of the d = 3 families (default %(default)s)")
        parser.add_argument("--limits", default="3,10,20,30", help="limits: the time limits in seconds (default %(default)s)")
        parser.add_argument("--repeat", type=int, default=3, help="limits: runs per limit (default 3)")

    def measure(self, args):
        indexset = shlex.split(args.indexset)
        sizes = [[int(v) for v in text.split(",") if v.strip()] for text in (args.d2_sizes, args.d3_sizes)]
        for part in args.part.split(","):
            if part == "soak":
                yield part, soak(indexset, args.runs, args.jobs, args.seed, args.timeout, *sizes)
            elif part == "limits":
                yield part, limits(indexset, [float(v) for v in args.limits.split(",")], args.repeat)
            else:
                raise SystemExit(f"clean: no part {part!r}; the parts are soak, limits")

    def table(self, name: str, part: dict) -> dict:
        if name == "soak":
            rows, walls = part["rows"], [r["wall_s"] for r in part["rows"]]
            exits = ", ".join(f"{k}: {v}" for k, v in sorted(Counter(str(r["signal"] or r["exit"]) for r in rows).items()))
            crashes = sum(bool(r["signal"] or r["signatures"] or "cysignals_crash_logs" in r["left_in_cwd"]) for r in rows)
            return {name: (["runs", "clean", "exit statuses", "crashes (SIGABRT, crash logs)", "median / max wall"],
                           [[len(rows), sum(r["clean"] for r in rows), exits, crashes, f"{statistics.median(walls):.1f} / {max(walls):.1f} s"]])}
        by_limit = {}
        for run in part["runs"]:
            by_limit.setdefault(run["limit"], []).append(run["wall_s"])
        return {name: (["--time-limit (s)", "wall median (s)", "wall max (s)"], [[f"{k:g}", f"{statistics.median(v):.2f}", f"{max(v):.2f}"] for k, v in by_limit.items()])}


SUITES = {"clean": Clean()}
