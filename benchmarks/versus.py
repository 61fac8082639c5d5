"""indexset against solvediophant, side by side: paired, alternating runs on the same 0/1 systems.

solvediophant (A. Wassermann's lattice solver for 0/1 systems) is not part
of this project: build it yourself outside the repository and pass the
binary with ``--solvediophant PATH``. This script

- builds each instance with ``indexset construct`` (or takes QOBLIB
  ``.dat`` files), and writes its 0/1 system ``M z = t`` (the (★) system of
  the block, exact integers) in solvediophant's input format;
- times ``indexset solve FILE --json`` (``solve-system`` for ``.dat``) and
  solvediophant on the same system, in paired runs whose order alternates
  (A B, B A, A B, ...), each as a whole process, wall and CPU time
  (children's rusage);
- checks both answers: the same status, every solution solves the system
  exactly, the same count with ``--count``;
- reports medians and the median of the per-pair ratios indexset /
  solvediophant, by wall time and by CPU time (per core);
- with ``--floor``, times a third program in the same rotation: the Python
  interpreter that runs indexset, importing NumPy and nothing else
  (``python -c "import numpy"``): the least any NumPy-based program needs
  on this machine, so a row where it is slower than solvediophant is one
  that no Python solver can win as a whole process.

solvediophant runs with each of ``--settings`` (default: its defaults,
``-bkz -beta40`` and ``-bkz -beta40 -lds20``, the settings its author uses
for market split) and the best median is its figure; every setting's
figures are in the JSON.

    python benchmarks/versus.py --solvediophant /path/to/sd2 --repeat 3 --json versus.json

Standard library only (plus indexset, for writing the systems).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SETTINGS = ("", "-bkz -beta40", "-bkz -beta40 -lds20")

ROWS = [  # (label, construct arguments) — the families of the comparison
    ("d2 R1000 unplanted n50", "random --d 2 --n 50 --range 1000 --seed 1"),
    ("d2 R1000 unplanted n60", "random --d 2 --n 60 --range 1000 --seed 1"),
    ("d2 R1000 unplanted n70", "random --d 2 --n 70 --range 1000 --seed 1"),
    ("d2 R1000 planted n60", "planted --d 2 --n 60 --range 1000 --seed 1"),
    ("d2 R1000 planted n70", "planted --d 2 --n 70 --range 1000 --seed 1"),
    ("d3 R30 unplanted n60", "random --d 3 --n 60 --range 30 --seed 1"),
    ("d3 R30 unplanted n80", "random --d 3 --n 80 --range 30 --seed 1"),
    ("d3 R30 planted n60", "planted --d 3 --n 60 --range 30 --seed 1"),
    ("d3 R30 planted n80", "planted --d 3 --n 80 --range 30 --seed 1"),
]
COUNT_ROWS = [
    ("count d2 planted n70", "planted --d 2 --n 70 --range 1000 --seed 1"),
    ("count d3 planted n80", "planted --d 3 --n 80 --range 30 --seed 1"),
]


def timed(argv: list[str], timeout: float) -> dict:
    """Run one whole process; wall time, CPU time of it and its children, output."""
    start = time.perf_counter()
    before = os.times()
    try:
        process = subprocess.run(argv, capture_output=True, text=True, timeout=timeout)
        code, out, err = process.returncode, process.stdout, process.stderr
    except subprocess.TimeoutExpired as exc:
        code, out, err = None, exc.stdout or "", exc.stderr or ""
        out = out.decode() if isinstance(out, bytes) else out
        err = err.decode() if isinstance(err, bytes) else err
    after = os.times()
    cpu = (after.children_user - before.children_user) + (after.children_system - before.children_system)
    return {"wall_s": time.perf_counter() - start, "cpu_s": cpu, "code": code, "stdout": out, "stderr": err}


def write_system(block: Path, target: Path) -> tuple[list, list]:
    """The (★) system of a block file in solvediophant's format; returns (M, t) as int lists."""
    from indexset.model.instance import Instance
    from indexset.search.system import build_system

    system = build_system(Instance.load(block))
    M = [[int(v) for v in row] for row in system.M]
    t = [int(v) for v in system.t]
    _write_sd(M, t, target)
    return M, t


def read_dat(path: Path) -> tuple[list, list]:
    """A QOBLIB market split .dat file as (A, b)."""
    rows = [line.split() for line in path.read_text().splitlines() if line.strip() and not line.lstrip().startswith(("#", "%"))]
    m, n = int(rows[0][0]), int(rows[0][1])
    body = [[int(v) for v in row] for row in rows[1 : m + 1]]
    return [row[:n] for row in body], [row[n] for row in body]


def _write_sd(M, t, target: Path) -> None:
    lines = [f"{len(M)} {len(M[0]) if M else 0} 1"] + [" ".join(map(str, row + [rhs])) for row, rhs in zip(M, t)]
    target.write_text("\n".join(lines) + "\n")


def solves(M, t, z) -> bool:
    return len(z) == len(M[0]) and all(v in (0, 1) for v in z) and all(sum(a * b for a, b in zip(row, z)) == rhs for row, rhs in zip(M, t))


def indexset_answer(run: dict, n: int, M, t, system_mode: bool, count: bool) -> dict:
    """Status, count and check of one indexset run."""
    if run["code"] is None:
        return {"status": "timeout"}
    try:
        payload = json.loads(run["stdout"])
    except json.JSONDecodeError:
        return {"status": f"no-json (exit {run['code']})"}
    status = payload["status"]
    yes = status in ("absorbable", "feasible")
    answer = {"status": "sat" if yes else "unsat" if status in ("not_absorbable", "infeasible") else "unknown", "count": payload.get("count")}
    if yes and not count:
        if system_mode:
            z = payload["solution"]
        else:
            z = [0] * n
            for i in payload["index_set"]:
                z[i] = 1
        answer["checked"] = solves(M, t, z)
    return answer


def sd_answer(run: dict, M, t, count: bool) -> dict:
    """Status, count and check of one solvediophant run (stdout: solution vectors; stderr: the log)."""
    if run["code"] is None or run["code"] == 11:
        return {"status": "timeout"}
    vectors = [[int(v) for v in line.split()] for line in run["stdout"].splitlines() if re.fullmatch(r"[\d ]+", line.strip() or "x")]
    total = re.search(r"Total number of solutions: (\d+)", run["stderr"])
    if run["code"] in (8, 9) or (total and int(total.group(1)) > 0) or vectors:
        answer = {"status": "sat", "checked": bool(vectors) and all(solves(M, t, z) for z in vectors)}
        if count and total:
            answer["count"] = int(total.group(1))
        return answer
    if run["code"] == 2 or (total and int(total.group(1)) == 0) or "System not solvable" in run["stderr"]:
        return {"status": "unsat", "count": 0}
    return {"status": f"unknown (exit {run['code']})"}


def compare(label: str, ours: list[str], theirs: dict, M, t, n: int, system_mode: bool, count: bool, repeat: int, timeout: float, floor: list[str] | None = None) -> dict:
    """Paired, alternating runs of indexset and every solvediophant setting (and the floor program, if given)."""
    pairs = {setting: [] for setting in theirs}
    for rep in range(repeat):
        for setting, argv in theirs.items():
            programs = [("indexset", ours), ("sd", argv)] + ([("floor", floor)] if floor else [])
            shift = rep % len(programs)
            order = programs[shift:] + programs[:shift]  # each program goes first in turn
            result = {}
            for who, command in order:
                run = timed(command, timeout)
                if who == "floor":
                    answer = {"status": "ran" if run["code"] == 0 else f"failed (exit {run['code']})"}
                else:
                    answer = indexset_answer(run, n, M, t, system_mode, count) if who == "indexset" else sd_answer(run, M, t, count)
                result[who] = {"wall_s": round(run["wall_s"], 4), "cpu_s": round(run["cpu_s"], 4), **answer}
            pairs[setting].append(result)
    return {"label": label, "n": n, "pairs": pairs, "summary": _summary(pairs)}


def _agree(a: dict, b: dict) -> bool:
    """Both answers the same and checked (a timeout agrees with anything: it answers nothing)."""
    if "timeout" in (a["status"], b["status"]):
        return True
    same_count = a.get("count") is None or b.get("count") is None or a["count"] == b["count"]
    return a["status"] == b["status"] and a.get("checked", True) and b.get("checked", True) and same_count


def _summary(pairs: dict) -> dict:
    by_setting = {}
    for setting, runs in pairs.items():
        ours = [r["indexset"] for r in runs]
        theirs = [r["sd"] for r in runs]
        agree = all(_agree(a, b) for a, b in zip(ours, theirs))
        by_setting[setting] = {
            "indexset_wall": statistics.median(r["wall_s"] for r in ours), "sd_wall": statistics.median(r["wall_s"] for r in theirs),
            "indexset_cpu": statistics.median(r["cpu_s"] for r in ours), "sd_cpu": statistics.median(r["cpu_s"] for r in theirs),
            "ratio_wall": statistics.median(a["wall_s"] / max(b["wall_s"], 1e-3) for a, b in zip(ours, theirs)),
            "ratio_cpu": statistics.median(a["cpu_s"] / max(b["cpu_s"], 1e-3) for a, b in zip(ours, theirs)),
            "answers_agree": agree, "statuses": sorted({r["status"] for r in ours}) + ["|"] + sorted({r["status"] for r in theirs}),
        }
        if all("floor" in r for r in runs):
            by_setting[setting]["floor_wall"] = statistics.median(r["floor"]["wall_s"] for r in runs)
            by_setting[setting]["floor_ratio_wall"] = statistics.median(r["floor"]["wall_s"] / max(r["sd"]["wall_s"], 1e-3) for r in runs)
    best = min(by_setting, key=lambda s: by_setting[s]["sd_wall"])
    return {"best_setting": best, **by_setting[best], "settings": by_setting}


def _interpreter(executable: str) -> str:
    """The Python interpreter named on the first line of a console script (this one's own otherwise)."""
    path = shutil.which(executable) or executable
    try:
        first = Path(path).read_bytes()[:256].split(b"\n", 1)[0].decode()
    except (OSError, UnicodeDecodeError):
        return sys.executable
    return first[2:].strip().split()[0] if first.startswith("#!") and "python" in first else sys.executable


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--solvediophant", required=True, metavar="PATH", help="the solvediophant (sd2) binary")
    parser.add_argument("--indexset", default="indexset", help="the indexset executable (default: indexset on PATH)")
    parser.add_argument("--repeat", type=int, default=3, help="paired runs per instance and setting (default 3)")
    parser.add_argument("--timeout", type=float, default=600.0, help="seconds per run (default 600)")
    parser.add_argument("--settings", default=";".join(SETTINGS), help="solvediophant settings, ';'-separated (default: %(default)s)")
    parser.add_argument("--rows", default="all", help="comma list of row labels to run, or 'all' (default)")
    parser.add_argument("--count", action="store_true", help="also the --count rows")
    parser.add_argument("--qoblib", nargs="*", default=[], metavar="DAT", help="QOBLIB market split .dat files (solve-system)")
    parser.add_argument("--extra", nargs="*", default=[], metavar="LABEL=CONSTRUCT", help="more rows: 'label=construct arguments'")
    parser.add_argument("--json", metavar="OUT", help="write every run here")
    parser.add_argument("--floor", action="store_true", help="also time the interpreter that runs indexset importing NumPy alone, in the same rotation")
    args = parser.parse_args(argv)
    sd = os.path.abspath(args.solvediophant)
    if not os.access(sd, os.X_OK):
        print(f"versus: {sd} is not an executable", file=sys.stderr)
        return 2
    settings = [s.strip() for s in args.settings.split(";")]
    folder = Path(tempfile.mkdtemp(prefix="indexset-versus-"))
    rows = [r for r in ROWS if args.rows == "all" or r[0] in args.rows.split(",")]
    rows += [tuple(extra.split("=", 1)) for extra in args.extra]
    jobs = [(label, spec, False) for label, spec in rows] + ([(label, spec, True) for label, spec in COUNT_ROWS] if args.count else [])
    jobs += [(Path(path).stem, path, False) for path in args.qoblib]
    floor = [_interpreter(args.indexset), "-c", "import numpy"] if args.floor else None
    results = []
    for label, spec, count in jobs:
        if spec.endswith(".dat"):
            path = Path(spec)
            M, t = read_dat(path)
            system_file = folder / f"{path.stem}.txt"
            _write_sd(M, t, system_file)
            ours = [args.indexset, "solve-system", str(path), "--json"] + (["--count"] if count else [])
            system_mode = True
        else:
            block = folder / (re.sub(r"\W+", "_", label) + ".npz")
            subprocess.run([args.indexset, "construct", *shlex.split(spec), "-o", str(block)], check=True, capture_output=True)
            system_file = block.with_suffix(".txt")
            M, t = write_system(block, system_file)
            ours = [args.indexset, "solve", str(block), "--json"] + (["--count"] if count else [])
            system_mode = False
        theirs = {s: [sd, *shlex.split(s), *([] if count else ["-t1"]), f"-o{folder / 'sd.sol'}", str(system_file)] for s in settings}
        row = compare(label + (" (--count)" if count else ""), ours, theirs, M, t, len(M[0]), system_mode, count, args.repeat, args.timeout, floor)
        results.append(row)
        s = row["summary"]
        print(f"{row['label']:<30} indexset {s['indexset_wall']:8.3f} s  sd2[{s['best_setting'] or 'default'}] {s['sd_wall']:8.3f} s  "
              f"ratio wall {s['ratio_wall']:6.2f}  cpu {s['ratio_cpu']:6.2f}  agree {s['answers_agree']}"
              + (f"  floor {s['floor_wall']:.3f} s (ratio {s['floor_ratio_wall']:.2f})" if "floor_wall" in s else ""), flush=True)
        if args.json:  # after every row: a run stopped part-way keeps what it measured
            Path(args.json).write_text(json.dumps({"machine": dict(zip(("sysname", "nodename", "release", "version", "machine"), os.uname())), "cpus": os.cpu_count(), "rows": results}, indent=1) + "\n")
    print("\n| instance | indexset wall (s) | solvediophant wall (s), best setting | ratio wall | ratio CPU |" + (" floor wall (s) | floor ratio |" if floor else ""))
    print("|---|---|---|---|---|" + ("---|---|" if floor else ""))
    for row in results:
        s = row["summary"]
        tail = f" {s['floor_wall']:.3f} | {s['floor_ratio_wall']:.2f} |" if floor else ""
        print(f"| {row['label']} | {s['indexset_wall']:.3f} | {s['sd_wall']:.3f} (`{s['best_setting'] or 'defaults'}`) | {s['ratio_wall']:.2f} | {s['ratio_cpu']:.2f} |" + tail)
    return 0 if all(row["summary"]["answers_agree"] for row in results) else 1


if __name__ == "__main__":
    sys.exit(main())
