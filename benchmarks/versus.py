"""The ``versus`` suite: indexset against solvediophant, paired and alternating, on the same systems.

solvediophant (A. Wassermann's lattice solver for 0/1 and bounded integer
systems) is not part of this project: pass its binary (``--solvediophant``),
its ``Tests/`` folder (``--tests``, its script ``dotests`` beside it) and
QOBLIB's market-split instances (``--qoblib``). The parts (``--part``), a
table each: ``dotests`` (its test list, every file counted, against the
script's counts and ``-bkz -beta40``); ``first`` (first solutions of its
larger test files against its test script's setting, limited discrepancy
search, its QOBLIB recipe and DFS ‖ LDS); ``qoblib`` (QOBLIB m = 8–12, the
first instance of each size and DDD value, against DFS ‖ LDS); ``dense``
((★) systems of constructed blocks, two counted, and small QOBLIB files,
against its defaults); ``hard`` (the dense families at n = 76–100);
``batch`` (one ``solve-system`` process over the small files against a
solvediophant process per file); ``floor`` (``python -c "import numpy"``
beside the dense rows that take solvediophant under 0.1 s).

Each repetition runs every program once as a whole process, the order
rotating; a setting ``A || B`` runs A and B at once and ends at the first
that answers, as solvediophant's ``start_parallel.bash`` does (its CPU time
is both's). Answers are checked: the same status, every solution (both
programs') solves the system exactly, equal counts (and the count
``dotests`` expects). A row's summary gives medians and the median of the
per-pair ratios indexset / solvediophant, by wall and CPU time, against the
setting with the smallest median wall. ``--baseline INDEXSET`` runs another
indexset (an earlier commit's) in the same rotation.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import resource
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SD_COUNT_SETTINGS = ("-bkz -beta40",)
DFS_LDS = "-bkz -beta40 || -bkz -beta40 -lds20"
SD_FIRST_SETTINGS = ("-bkz -beta40", "-bkz -beta40 -lds20", "-bkz -beta56 -tours20 -lds20", DFS_LDS)
UNITALS_SETTINGS = ("-bkz -beta32", "-bkz -beta32 || -bkz -beta32 -lds20", DFS_LDS, "-bkz -beta56 -tours20 -lds20")
"""The unitals' first solutions also against the setting of solvediophant's README for them (BKZ-32)."""

FIRST_FILES = ("KM_Id9_t2_k3.txt", "KM_PGL_2_25_7_8.txt", "4-arcs.txt", "KM_PSL_2_23_7_8.in", "unitals_v2.txt", "unitals_v1.txt")
QOBLIB_FILES = tuple(f"ms_{m:02d}_{ddd}_{'001' if (m, ddd) == (9, '100') else '000'}.dat" for m in range(8, 13) for ddd in ("050", "100"))
DENSE_QOBLIB = ("ms_04_100_003.dat", "ms_05_100_003.dat", "ms_06_100_002.dat", "ms_07_050_001.dat")
BATCH_TESTS = ("KM_Id7_t2_k3.in", "kotsireas01.txt", "min.in", "min1.in", "min2.in", "min3.in", "KM_Id9_t2_k3.txt", "KM_Id9_t2_k3_2.txt",
               "KM_PGL_2_25_7_8.txt", "4-arcs.txt")
"""Beside QOBLIB m = 3–7 (every file), the small test files of the batch."""

DENSE_ROWS = [  # (label, construct arguments)
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
COUNT_ROWS = [("count d2 planted n70", "planted --d 2 --n 70 --range 1000 --seed 1"), ("count d3 planted n80", "planted --d 3 --n 80 --range 30 --seed 1")]
FLOOR_ROWS = ("d2 R1000 unplanted n50", "d2 R1000 unplanted n60", "d2 R1000 planted n60", "d3 R30 unplanted n60", "d3 R30 planted n60")
HARD_ROWS = [  # (label, construct arguments, seconds per run)
    ("d2 R1000 unplanted n76", "random --d 2 --n 76 --range 1000 --seed 1", 1200),
    ("d2 R1000 unplanted n78", "random --d 2 --n 78 --range 1000 --seed 1", 1500),
    ("d2 R1000 unplanted n80", "random --d 2 --n 80 --range 1000 --seed 1", 3600),
    ("d3 R30 unplanted n90", "random --d 3 --n 90 --range 30 --seed 1", 1200),
    ("d3 R30 planted n90", "planted --d 3 --n 90 --range 30 --seed 1", 1200),
    ("d3 R30 planted n100", "planted --d 3 --n 100 --range 30 --seed 1", 900),
]

PARTS = {  # the defaults of each part: paired runs, seconds per run, no more repetitions after a run this long, warm-up seconds
    "dotests": {"repeat": 3, "timeout": 1500, "long_after": 60, "warmup": 20},
    "first": {"repeat": 3, "timeout": 300, "long_after": 60, "warmup": 30},
    "qoblib": {"repeat": 1, "timeout": 300, "long_after": float("inf"), "warmup": 20},
    "dense": {"repeat": 3, "timeout": 600, "long_after": float("inf"), "warmup": 0},
    "hard": {"repeat": 1, "timeout": None, "long_after": float("inf"), "warmup": 0},
    "batch": {"repeat": 3, "timeout": 300, "long_after": float("inf"), "warmup": 0},
    "floor": {"repeat": 5, "timeout": 600, "long_after": float("inf"), "warmup": 0},
}


# ---------------------------------------------------------------- systems


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


def read_sd(path: Path) -> dict:
    """A solvediophant input file, read as solvediophant reads it.

    Comment lines (``%``, ``#``) and blank lines first, some of them options
    (``% stopafter``, ``% cutafter``, ``% stoploops``, ``% FREERHS``); then
    ``m n [1]``; then m·(n+1) integers in any line layout (each row, then its
    right-hand side); then optionally ``BOUNDS k`` and k bounds, and
    ``SELECTEDCOLUMNS``. Returns A, b, the bounds (None: all 1) and the
    options found; raises ValueError on a file that does not parse.
    """
    lines = path.read_text(errors="replace").splitlines()
    options, k = [], 0
    while k < len(lines) and (not lines[k].strip() or lines[k].lstrip()[0] in "%#"):
        options += [word for word in ("stopafter", "cutafter", "stoploops", "FREERHS") if f"% {word}" in lines[k]]
        k += 1
    if k == len(lines):
        raise ValueError("no 'm n' line")
    header = lines[k].split()
    m, n = int(header[0]), int(header[1])
    tokens = " ".join(lines[k + 1 :]).split()
    values = [int(v) for v in tokens[: m * (n + 1)]]
    if len(values) < m * (n + 1):
        raise ValueError(f"expected {m * (n + 1)} numbers, found {len(values)}")
    A = [values[r * (n + 1) : r * (n + 1) + n] for r in range(m)]
    b = [values[r * (n + 1) + n] for r in range(m)]
    rest = tokens[m * (n + 1) :]
    bounds = None
    if "BOUNDS" in rest:
        at = rest.index("BOUNDS")
        count = int(rest[at + 1])
        bounds = [int(v) for v in rest[at + 2 : at + 2 + count]]
    selected = None
    if "SELECTEDCOLUMNS" in rest:  # a selection of every column changes nothing
        at = rest.index("SELECTEDCOLUMNS")
        count = int(rest[at + 1])
        selected = [int(v) for v in rest[at + 2 : at + 2 + count]]
        if count != n or any(v != 1 for v in selected):
            options.append("SELECTEDCOLUMNS")
    return {"A": A, "b": b, "bounds": bounds, "options": options, "selected": selected}



def expected_counts(folder: Path) -> dict[str, int]:
    """The solution counts solvediophant's test script ``dotests`` (next to its Tests/ folder) expects: its list FILESQUICK, in order."""
    script = folder.parent / "dotests"
    if not script.is_file():
        return {}
    listed = re.search(r'^FILESQUICK="(.*?)"', script.read_text(), re.M | re.S)
    text = listed.group(1) if listed else ""
    return {name: int(count) for name, count in re.findall(r"([\w.+-]+),(\d+)", text)}


def _write_sd(M, t, target: Path) -> None:
    lines = [f"{len(M)} {len(M[0]) if M else 0} 1"] + [" ".join(map(str, row + [rhs])) for row, rhs in zip(M, t)]
    target.write_text("\n".join(lines) + "\n")


def solves(M, t, z, box: dict | None = None) -> bool:
    """Whether z solves the system: 0/1 (or within ``box["bounds"]``), in the file's columns (``box["selected"]``),
    and with ``box["free"]`` the last number is |λ| of A x = λ b (λ ≠ 0, either sign)."""
    box = box or {}
    lam = None
    if box.get("free"):
        z, lam = z[:-1], z[-1]  # λ = 0: whatever λ the values give
    selected = box.get("selected")
    if selected is not None and len(z) == len(selected) != len(M[0]):
        if any(v for v, flag in zip(z, selected) if not flag):
            return False
        z = [v for v, flag in zip(z, selected) if flag]
    bounds = box.get("bounds") or [1] * len(M[0])
    if len(z) != len(M[0]) or any(not 0 <= v <= u for v, u in zip(z, bounds)):
        return False
    sums = [sum(a * v for a, v in zip(row, z)) for row in M]
    if lam is None:
        return sums == list(t)
    if lam == 0:
        r = next(r for r, rhs in enumerate(t) if rhs)
        lam, rest = divmod(sums[r], t[r])
        return not rest and lam != 0 and sums == [lam * rhs for rhs in t]
    return any(sums == [sign * lam * rhs for rhs in t] for sign in (1, -1))


def all_solve(M, t, vectors: list[list[int]], box: dict | None = None) -> bool:
    """Every vector is a solution (NumPy for long lists of plain 0/1 vectors when the entries fit)."""
    if box or len(vectors) < 50 or any(len(z) != len(M[0]) for z in vectors):
        return all(solves(M, t, z, box) for z in vectors)
    try:
        import numpy as np
    except ImportError:
        return all(solves(M, t, z) for z in vectors)
    A, Z = np.array(M, dtype=object), np.array(vectors, dtype=object)
    if max(abs(int(v)) for v in A.ravel()) * len(M[0]) < 2**62:
        A, Z = A.astype(np.int64), Z.astype(np.int64)
    return bool(((Z == 0) | (Z == 1)).all() and (np.array(t, dtype=A.dtype) == Z @ A.T).all())




# ---------------------------------------------------------------- runs


def timed(commands: list[list[str]], timeout: float, folder: Path) -> dict:
    """Run one program as whole processes (two or more: at once, until the first decisive answer).

    Returns wall time (until the decisive process ended), CPU time of every
    process (children's rusage, after all are reaped), and each process's
    exit code, stdout and stderr.
    """
    start = time.perf_counter()
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    outs = [(folder / f"out{k}.txt", folder / f"err{k}.txt") for k in range(len(commands))]
    processes = []
    for argv, (out, err) in zip(commands, outs):
        with open(out, "w") as out_handle, open(err, "w") as err_handle:
            processes.append(subprocess.Popen(argv, stdout=out_handle, stderr=err_handle))
    codes: list[int | None] = [None] * len(processes)
    decisive, wall = None, None
    while decisive is None:
        if time.perf_counter() - start > timeout:
            break
        if len(processes) == 1:
            try:
                codes[0] = processes[0].wait(timeout=max(timeout - (time.perf_counter() - start), 0.0))
                decisive = 0
            except subprocess.TimeoutExpired:
                break
        else:
            for k, process in enumerate(processes):
                if codes[k] is None and process.poll() is not None:
                    codes[k] = process.returncode
                    if _decisive(commands[k], codes[k], outs[k][0], outs[k][1]):
                        decisive = k
                        break
            if decisive is None and all(code is not None for code in codes):
                decisive = 0  # none decisive: every process ended
            if decisive is None:
                time.sleep(0.002)
    wall = time.perf_counter() - start
    for process in processes:
        if process.poll() is None:
            process.kill()
        process.wait()
    after = resource.getrusage(resource.RUSAGE_CHILDREN)  # microseconds (os.times counts clock ticks)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    runs = [{"code": codes[k], **_output(outs[k][0]), "stderr": outs[k][1].read_text(errors="replace")} for k in range(len(processes))]
    chosen = runs[decisive] if decisive is not None else {"code": None, "stdout": "", "stderr": ""}
    return {"wall_s": wall, "cpu_s": cpu, **chosen, "decided_by": decisive, "argv": commands[decisive] if decisive is not None else None}


SOLUTION_LINE = re.compile(r"[\d ]+(L = \d+)?")
"""A solution line of solvediophant's stdout: the values, and λ after ``L =`` for a ``% FREERHS`` file."""

STDOUT_KEPT = 1 << 22
"""Bytes of a process's stdout kept for the checks; the rest is only counted (a count of millions prints gigabytes)."""


def _output(path: Path) -> dict:
    """The head of a process's stdout (``stdout``) and its number of solution lines (digits and blanks) in all."""
    head, lines = [], 0
    kept = 0
    with open(path, errors="replace") as handle:
        for line in handle:
            if kept < STDOUT_KEPT:
                head.append(line)
                kept += len(line)
            lines += bool(SOLUTION_LINE.fullmatch(line.strip() or "x"))
    return {"stdout": "".join(head), "stdout_solution_lines": lines}


def _solution_file(run: dict) -> str:
    """The head of solvediophant's solution file (its ``-o`` argument): the values of each solution, one per line.

    Its stdout has them too, but a ``% FREERHS`` run writes the λ of the
    solutions its reductions meet onto the start of the first line there.
    """
    target = next((arg[2:] for arg in run.get("argv") or [] if arg.startswith("-o")), None)
    if target is None or not Path(target).is_file():
        return run["stdout"]
    return _output(Path(target))["stdout"]


def _decisive(argv: list[str], code: int, out: Path, err: Path) -> bool:
    """A solvediophant process answered: it printed a solution, or its search was complete."""
    text = err.read_text(errors="replace")
    with open(out, errors="replace") as handle:
        printed = any(SOLUTION_LINE.fullmatch(line.strip() or "x") for line in handle)
    if code in (2, 8, 9) or printed:
        return True  # 2: no solution over the reals, proved before any search
    lds = any(arg.startswith("-lds") for arg in argv)
    return not lds or "No more discrepancies possible" in text


def indexset_answer(run: dict, n: int, M, t, system_mode: bool, count: bool, box: dict | None = None) -> dict:
    """Status, count and check of one indexset run (its first solution, with its values and λ, checked exactly)."""
    if run["code"] is None:
        return {"status": "timeout"}
    try:
        payload = json.loads(run["stdout"])
    except json.JSONDecodeError:
        return {"status": f"no-json (exit {run['code']})"}
    status = payload["status"]
    yes = status in ("absorbable", "feasible")
    answer = {"status": "sat" if yes else "unsat" if status in ("not_absorbable", "infeasible") else "unknown", "count": payload.get("count")}
    if yes and (not count or system_mode):
        if system_mode:
            z = payload["solution"] + ([abs(payload["lambda"])] if (box or {}).get("free") else [])
        else:
            z = [0] * n
            for i in payload["index_set"]:
                z[i] = 1
        answer["checked"] = solves(M, t, z, box)
    return answer


def sd_answer(run: dict, M, t, count: bool, box: dict | None = None) -> dict:
    """Status, count and check of one solvediophant run (stdout: solution vectors, the first ones checked; stderr: the log)."""
    if run["code"] is None or run["code"] == 11:
        return {"status": "timeout"}
    vectors = [[int(v) for v in line.replace("L =", "").split()] for line in _solution_file(run).splitlines() if SOLUTION_LINE.fullmatch(line.strip() or "x")]
    if box and box.get("free"):  # its solution file holds x alone; the λ each x stands for is found by the check
        vectors = [z + [0] for z in vectors]
    total = re.search(r"Total number of solutions: (\d+)", run["stderr"])
    loops = re.search(r"Loops: (\d+)", run["stderr"])
    extra = {"loops": int(loops.group(1))} if loops else {}
    if run["code"] in (8, 9) or (total and int(total.group(1)) > 0) or vectors:
        cut = bool(vectors) and len(vectors[0]) < len(M[0]) + bool(box and box.get("free"))  # '% cutafter k': it prints k columns only
        answer = {"status": "sat", **extra} if cut else {"status": "sat", "checked": bool(vectors) and all_solve(M, t, vectors[:1000], box), **extra}
        if count:
            answer["printed"] = run.get("stdout_solution_lines", len(vectors))
            if total:
                answer["count"] = int(total.group(1))
        return answer
    if run["code"] == 2 or "System not solvable" in run["stderr"]:  # proved before any search
        return {"status": "unsat", "count": 0, **extra}
    lds = any(arg.startswith("-lds") for arg in run.get("argv") or [])
    if lds and "No more discrepancies possible" not in run["stderr"]:
        return {"status": "unknown (LDS incomplete)", **extra}
    if total and int(total.group(1)) == 0:
        return {"status": "unsat", "count": 0, **extra}
    return {"status": f"unknown (exit {run['code']})", **extra}


def compare(job: dict, theirs: dict, repeat: int, timeout: float, long_after: float, floor: list[str] | None, folder: Path) -> dict:
    """Paired, alternating runs: per repetition indexset once, every solvediophant setting once (and the floor, and the baseline), in rotating order."""
    M, t, count = job["M"], job["t"], job["count"]
    programs = [("indexset", None, [job["ours"]])] + [("sd", setting, argvs) for setting, argvs in theirs.items()]
    programs += [("floor", None, [floor])] if floor else []
    programs += [("baseline", None, [job["baseline"]])] if job.get("baseline") else []
    pairs = {setting: [] for setting in theirs}
    for rep in range(repeat):
        shift = rep % len(programs)
        result, slowest = {}, 0.0
        for who, setting, commands in programs[shift:] + programs[:shift]:
            run = timed(commands, timeout, folder)
            if who == "floor":
                answer = {"status": "ran" if run["code"] == 0 else f"failed (exit {run['code']})"}
            elif who in ("indexset", "baseline"):
                answer = indexset_answer(run, len(M[0]), M, t, job["system_mode"], count, job.get("box"))
            else:
                answer = sd_answer(run, M, t, count, job.get("box"))
                if len(commands) > 1:
                    answer["decided_by"] = None if run["decided_by"] is None else shlex.join(commands[run["decided_by"]][1:-2])
            slowest = max(slowest, run["wall_s"])
            result[(who, setting)] = {"wall_s": round(run["wall_s"], 4), "cpu_s": round(run["cpu_s"], 4), **answer}
        for setting in theirs:
            pair = {"indexset": result[("indexset", None)], "sd": result[("sd", setting)]}
            if floor:
                pair["floor"] = result[("floor", None)]
            if job.get("baseline"):
                pair["baseline"] = result[("baseline", None)]
            pairs[setting].append(pair)
        if slowest > long_after:
            break
    row = {"label": job["label"], "n": len(M[0]), "m": len(M), "repeats": len(next(iter(pairs.values()))), "pairs": pairs,
           "summary": _summary(pairs, job.get("expected"))}
    if job.get("expected") is not None:
        row["expected_count"] = job["expected"]
    return row


def _counts(a: dict, b: dict, expected: int | None) -> list[int]:
    """Every count the two answers and the test script give (with solvediophant's printed lines)."""
    return [c for c in (a.get("count"), b.get("count"), b.get("printed"), expected) if c is not None]


def _agree(a: dict, b: dict, expected: int | None = None) -> bool:
    """Both answers the same and checked (a timeout or an incomplete search agrees with anything: it answers nothing)."""
    if any(s == "timeout" or s.startswith("unknown") for s in (a["status"], b["status"])):
        return a.get("checked", True) and b.get("checked", True)
    return a["status"] == b["status"] and a.get("checked", True) and b.get("checked", True) and len(set(_counts(a, b, expected))) <= 1


def _summary(pairs: dict, expected: int | None = None) -> dict:
    by_setting = {}
    for setting, runs in pairs.items():
        ours = [r["indexset"] for r in runs]
        theirs = [r["sd"] for r in runs]
        by_setting[setting] = {
            "indexset_wall": statistics.median(r["wall_s"] for r in ours), "sd_wall": statistics.median(r["wall_s"] for r in theirs),
            "indexset_cpu": statistics.median(r["cpu_s"] for r in ours), "sd_cpu": statistics.median(r["cpu_s"] for r in theirs),
            "ratio_wall": statistics.median(a["wall_s"] / max(b["wall_s"], 1e-3) for a, b in zip(ours, theirs)),
            "ratio_cpu": statistics.median(a["cpu_s"] / max(b["cpu_s"], 1e-3) for a, b in zip(ours, theirs)),
            "answers_agree": all(_agree(a, b, expected) for a, b in zip(ours, theirs)),
            "statuses": sorted({r["status"] for r in ours}) + ["|"] + sorted({r["status"] for r in theirs}),
            "counts": sorted({c for a, b in zip(ours, theirs) for c in _counts(a, b, expected)}),
        }
        if all("floor" in r for r in runs):
            by_setting[setting]["floor_wall"] = statistics.median(r["floor"]["wall_s"] for r in runs)
            by_setting[setting]["floor_ratio_wall"] = statistics.median(r["floor"]["wall_s"] / max(r["sd"]["wall_s"], 1e-3) for r in runs)
        if all("baseline" in r for r in runs):
            by_setting[setting]["baseline_wall"] = statistics.median(r["baseline"]["wall_s"] for r in runs)
            by_setting[setting]["baseline_cpu"] = statistics.median(r["baseline"]["cpu_s"] for r in runs)
            by_setting[setting]["ratio_to_baseline_wall"] = statistics.median(r["indexset"]["wall_s"] / max(r["baseline"]["wall_s"], 1e-3) for r in runs)
            by_setting[setting]["baseline_statuses"] = sorted({r["baseline"]["status"] for r in runs})
    answered = [s for s in by_setting if "timeout" not in by_setting[s]["statuses"][by_setting[s]["statuses"].index("|"):]]
    best = min(answered or by_setting, key=lambda s: by_setting[s]["sd_wall"])
    return {"best_setting": best, **by_setting[best], "settings": by_setting}



def _interpreter(executable: str) -> str:
    """The Python interpreter named on the first line of a console script (this one's own otherwise)."""
    path = shutil.which(executable) or executable
    try:
        first = Path(path).read_bytes()[:256].split(b"\n", 1)[0].decode()
    except (OSError, UnicodeDecodeError):
        return sys.executable
    return first[2:].strip().split()[0] if first.startswith("#!") and "python" in first else sys.executable


def _sd_commands(sd: str, setting: str, count: bool, system_file: Path, folder: Path, tag: str) -> list[list[str]]:
    """The process(es) of one solvediophant setting ('A || B': two at once)."""
    parts = [part.strip() for part in setting.split("||")]
    return [[sd, *shlex.split(part), *([] if count else ["-t1"]), f"-o{folder / f'sd_{tag}_{k}.sol'}", str(system_file)] for k, part in enumerate(parts)]



def _warm_up(argv: list[str], seconds: float) -> None:
    """One untimed run of indexset's command (stopped after ``seconds``): Numba's on-disk cache then holds every kernel it calls.

    A fresh installation compiles each kernel at its first call; that is a
    cost of the installation, paid once, not of the search being timed.
    """
    with contextlib.suppress(subprocess.TimeoutExpired):
        subprocess.run(argv, timeout=seconds, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)


# ---------------------------------------------------------------- a batch in one process


def batch_answers(run: dict, systems: dict) -> dict:
    """Per file: status, count, in-process seconds and check, from the JSON Lines of one ``solve-system`` run over many files."""
    answers = {}
    for line in run["stdout"].splitlines():
        try:
            payload = json.loads(line)
        except json.JSONDecodeError:
            continue
        name = payload.get("file")
        if name not in systems:
            continue
        status = payload["status"]
        answer = {"status": "sat" if status == "feasible" else "unsat" if status == "infeasible" else status, "count": payload.get("count"),
                  "time_s": payload.get("time_s")}
        if status == "feasible":
            A, b, box = systems[name]
            answer["checked"] = all_solve(A, b, [payload["solution"] + ([abs(payload["lambda"])] if box["free"] else [])], box)
        answers[name] = answer
    for name in systems:
        answers.setdefault(name, {"status": "timeout" if run["code"] is None else "missing"})
    return answers


def batch(indexset: str, sd: str, files: list, settings: list, repeat: int, timeout: float, folder: Path) -> dict:
    """One ``solve-system`` process over every file against one solvediophant process per file, each setting, paired and rotating."""
    systems = {}
    for name in files:
        data = read_sd(Path(name))
        systems[name] = (data["A"], data["b"], {"bounds": data["bounds"], "free": "FREERHS" in data["options"], "selected": data["selected"]})
    ours = [indexset, "solve-system", *files, "--json"]
    programs = [("indexset", None)] + [("sd", s) for s in settings]
    repetitions = []
    for rep in range(repeat):
        shift = rep % len(programs)
        result = {}
        for who, setting in programs[shift:] + programs[:shift]:
            if who == "indexset":
                run = timed([ours], timeout, folder)
                result["indexset"] = {"wall_s": round(run["wall_s"], 4), "cpu_s": round(run["cpu_s"], 4), "files": batch_answers(run, systems)}
                continue
            wall = cpu = 0.0
            answers = {}
            for k, name in enumerate(files):
                run = timed(_sd_commands(sd, setting, False, Path(name), folder, str(k)), timeout, folder)
                wall, cpu = wall + run["wall_s"], cpu + run["cpu_s"]
                A, b, box = systems[name]
                answers[name] = {**sd_answer(run, A, b, False, box), "wall_s": round(run["wall_s"], 4)}
            result[setting] = {"wall_s": round(wall, 4), "cpu_s": round(cpu, 4), "files": answers}
        repetitions.append(result)
    summary = {}
    for setting in settings:
        pairs = [(r["indexset"], r[setting]) for r in repetitions]
        summary[setting] = {
            "indexset_wall": statistics.median(a["wall_s"] for a, _ in pairs), "sd_wall": statistics.median(b["wall_s"] for _, b in pairs),
            "indexset_cpu": statistics.median(a["cpu_s"] for a, _ in pairs), "sd_cpu": statistics.median(b["cpu_s"] for _, b in pairs),
            "ratio_wall": statistics.median(a["wall_s"] / max(b["wall_s"], 1e-3) for a, b in pairs),
            "ratio_cpu": statistics.median(a["cpu_s"] / max(b["cpu_s"], 1e-3) for a, b in pairs),
            "differ": sorted({name for a, b in pairs for name in files if not _agree(a["files"][name], b["files"][name])}),
        }
    return {"files": files, "indexset_command": shlex.join(ours), "best_setting": min(settings, key=lambda s: summary[s]["sd_wall"]),
            "summary": summary, "repetitions": repetitions}


# ---------------------------------------------------------------- jobs


def constructed_jobs(indexset: str, rows: list, folder: Path, count: bool = False) -> list[dict]:
    """Rows of constructed blocks: the block's (★) system written for solvediophant, ``indexset solve BLOCK`` for indexset."""
    jobs = []
    for label, spec, *_ in rows:
        block = folder / (re.sub(r"\W+", "_", label) + ".npz")
        subprocess.run([indexset, "construct", *shlex.split(spec), "-o", str(block)], check=True, capture_output=True)
        system_file = block.with_suffix(".txt")
        M, t = write_system(block, system_file)
        ours = [indexset, "solve", str(block), "--json"] + (["--count"] if count else [])
        jobs.append({"label": label + (" (--count)" if count else ""), "M": M, "t": t, "count": count, "system_mode": False,
                     "ours": ours, "system_file": system_file, "construct": spec})
    return jobs


def file_jobs(indexset: str, paths: list, folder: Path, count: bool, expected: dict | None = None) -> list[dict]:
    """Rows of system files, each read by both programs: QOBLIB ``.dat`` (written in solvediophant's format for it) or solvediophant's own."""
    jobs = []
    for path in paths:
        if path.suffix == ".dat":
            A, b = read_dat(path)
            box, system_file, label = None, folder / f"{path.stem}.txt", path.stem
            _write_sd(A, b, system_file)
        else:
            system = read_sd(path)
            A, b, system_file, label = system["A"], system["b"], path, f"{path.name} ({'count' if count else 'first'})"
            box = {"bounds": system["bounds"], "free": "FREERHS" in system["options"], "selected": system["selected"]}
        ours = [indexset, "solve-system", str(path), "--json"] + (["--count"] if count else [])
        jobs.append({"label": label, "M": A, "t": b, "count": count, "system_mode": True, "ours": ours, "system_file": system_file, "box": box,
                     "expected": (expected or {}).get(path.name)})
    return jobs


def part_jobs(part: str, args, folder: Path) -> list[dict]:
    """The rows of one part, with the solvediophant settings of each."""
    tests = Path(args.tests) if args.tests else None
    qoblib = Path(args.qoblib) if args.qoblib else None
    need = {"dotests": [tests], "first": [tests], "qoblib": [qoblib], "dense": [qoblib]}.get(part, [])
    if any(folder_ is None for folder_ in need):
        raise SystemExit(f"versus: part {part} needs --tests and --qoblib where it reads their files")
    if part == "dotests":
        expected = expected_counts(tests)
        jobs = file_jobs(args.indexset, [tests / name for name in expected], folder, True, expected)
        settings = {job["label"]: SD_COUNT_SETTINGS for job in jobs}
    elif part == "first":
        jobs = file_jobs(args.indexset, [tests / name for name in FIRST_FILES], folder, False)
        settings = {job["label"]: UNITALS_SETTINGS if "unitals" in job["label"] else SD_FIRST_SETTINGS for job in jobs}
    elif part == "qoblib":
        jobs = file_jobs(args.indexset, [qoblib / name for name in QOBLIB_FILES], folder, False)
        settings = {job["label"]: (DFS_LDS,) for job in jobs}
    elif part in ("dense", "floor"):
        rows = DENSE_ROWS if part == "dense" else [row for row in DENSE_ROWS if row[0] in FLOOR_ROWS]
        jobs = constructed_jobs(args.indexset, rows, folder) + (constructed_jobs(args.indexset, COUNT_ROWS, folder, True) if part == "dense" else [])
        jobs += file_jobs(args.indexset, [qoblib / name for name in DENSE_QOBLIB], folder, False) if qoblib else []
        settings = {job["label"]: ("",) for job in jobs}
    else:  # hard
        jobs = constructed_jobs(args.indexset, HARD_ROWS, folder)
        for job, (_, _, seconds) in zip(jobs, HARD_ROWS):
            job["timeout"] = seconds
        settings = {job["label"]: ("", DFS_LDS) if "planted n" in job["label"] and "unplanted" not in job["label"] else ("",) for job in jobs}
    only = [word.strip() for word in args.only.split(",")] if args.only else None
    return [dict(job, sd_settings=settings[job["label"]]) for job in jobs if only is None or any(word in job["label"] for word in only)]


def _line(row: dict) -> str:
    s = row["summary"]
    flag = "" if s["answers_agree"] else "   !!!!!!!! ANSWERS DIFFER: " + " ".join(map(str, s["statuses"])) + f" counts {s['counts']}"
    return (f"{row['label']:<36} indexset {s['indexset_wall']:8.3f} s  sd2[{s['best_setting'] or 'defaults'}] {s['sd_wall']:8.3f} s  "
            f"ratio wall {s['ratio_wall']:6.2f}  cpu {s['ratio_cpu']:6.2f}  x{row['repeats']}  agree {s['answers_agree']}" + flag)


class Versus:
    """indexset against solvediophant, paired and alternating, on the same systems."""

    def arguments(self, parser) -> None:
        parser.add_argument("--solvediophant", metavar="PATH", help="the solvediophant (sd2) binary")
        parser.add_argument("--tests", metavar="DIR", help="solvediophant's Tests/ folder (its script dotests beside it)")
        parser.add_argument("--qoblib", metavar="DIR", help="the folder of QOBLIB's market-split .dat files")
        parser.add_argument("--part", default="dotests,first,qoblib,dense", help=f"comma list from {', '.join(PARTS)} (default %(default)s)")
        parser.add_argument("--only", metavar="WORDS", help="comma list: only the rows whose label holds one of these (a file name, 'n70', ...)")
        parser.add_argument("--indexset", default="indexset", help="the indexset executable (default: indexset on PATH)")
        parser.add_argument("--baseline", metavar="INDEXSET", help="another indexset executable (an earlier commit's) in the same rotation on every row")
        parser.add_argument("--repeat", type=int, help="paired runs per row (default: the part's)")
        parser.add_argument("--timeout", type=float, help="seconds per run (default: the part's)")
        parser.add_argument("--warmup", type=float, help="one untimed indexset run per row, stopped after this many seconds, to fill Numba's cache (default: the part's)")

    def measure(self, args):
        if not args.solvediophant or not os.access(args.solvediophant, os.X_OK):
            raise SystemExit(f"versus: --solvediophant {args.solvediophant!r} is not an executable")
        sd = os.path.abspath(args.solvediophant)
        folder = Path(tempfile.mkdtemp(prefix="indexset-versus-"))
        for part in (p.strip() for p in args.part.split(",")):
            if part not in PARTS:
                raise SystemExit(f"versus: no part {part!r}; the parts are {', '.join(PARTS)}")
            defaults = PARTS[part]
            repeat = args.repeat or defaults["repeat"]
            warmup = defaults["warmup"] if args.warmup is None else args.warmup
            if part == "batch":
                files = sorted(str(p) for p in Path(args.qoblib).glob("ms_0[3-7]_*.dat")) + [str(Path(args.tests) / name) for name in BATCH_TESTS]
                files = [f for f in files if not args.only or any(word in Path(f).name for word in args.only.split(","))]
                yield part, {"batch": batch(args.indexset, sd, files, ["", "-bkz -beta40"], repeat, args.timeout or defaults["timeout"], folder)}
                continue
            floor = [_interpreter(args.indexset), "-c", "import numpy"] if part == "floor" else None
            rows = []
            for number, job in enumerate(part_jobs(part, args, folder)):
                if args.baseline:
                    job["baseline"] = [args.baseline, *job["ours"][1:]]
                if warmup:
                    _warm_up(job["ours"], warmup)
                theirs = {s: _sd_commands(sd, s, job["count"], job["system_file"], folder, f"{part}{number}") for s in job["sd_settings"]}
                row = compare(job, theirs, repeat, args.timeout or job.get("timeout") or defaults["timeout"], defaults["long_after"], floor, folder)
                row["indexset_command"] = shlex.join(job["ours"])
                row["sd_commands"] = {s: [shlex.join(argv) for argv in argvs] for s, argvs in theirs.items()}
                if "construct" in job:
                    row["construct"] = job["construct"]
                rows.append(row)
                print(_line(row), file=sys.stderr, flush=True)
                yield part, {"rows": rows}  # after every row: a run stopped part-way keeps what it measured

    def table(self, name: str, part: dict) -> dict:
        if "batch" in part:
            return {name: batch_table(part["batch"])}
        return {name: rows_table(part["rows"], part.get("commit"))}


SUITES = {"versus": Versus()}


# ---------------------------------------------------------------- tables


def _s(seconds: float) -> str:
    for below, form in ((0.1, ".2g"), (1, ".3f"), (10, ".2f"), (100, ".1f")):
        if seconds < below:
            return f"{seconds:{form}}"
    return f"{seconds:.0f}"


def _ratio(value: float, bound: str = "") -> str:
    text = f"{bound}{value:.2g}" if value < 0.1 else f"{bound}{value:.2f}" if value < 10 else f"{bound}{value:.3g}"
    return f"**{text}**" if value < 1 and bound != ">" else text


def _setting(setting: str) -> str:
    return f"`{setting.replace('||', '‖')}`" if setting else "defaults"


def rows_table(rows: list, commit: str | None) -> tuple:
    """The header and rows of a versus table: medians, the best setting, the median per-pair ratios and the answers."""
    floor = all("floor_wall" in row["summary"] for row in rows)
    baseline = any("baseline_wall" in row["summary"] for row in rows)
    codes = any(row.get("commit", commit) != commit for row in rows)
    header = (["instance"] + (["code"] if codes else []) + ["m × n", "indexset wall (s)", "its CPU (s)", "solvediophant wall (s), setting", "its CPU (s)",
                                                          "ratio wall", "ratio CPU", "runs", "answers"]
              + (['`python -c "import numpy"` wall (s)', "its ratio"] if floor else []) + (["baseline wall (s)", "indexset / baseline"] if baseline else []))
    lines = []
    for row in rows:
        s = row["summary"]
        split = s["statuses"].index("|")
        ours, theirs = s["statuses"][:split], s["statuses"][split + 1 :]
        ours_out, theirs_out = ours == ["timeout"], theirs == ["timeout"]
        bound = "" if ours_out == theirs_out else "<" if theirs_out else ">"
        wall = "–" if ours_out and theirs_out else _ratio(s["ratio_wall"], bound)
        cpu = "–" if ours_out and theirs_out else _ratio(s["ratio_cpu"], bound)
        counts = sorted(set(s.get("counts") or []))
        answers = " / ".join([" ".join(ours), " ".join(theirs)]) + (f", count {'/'.join(map(str, counts))}" if any(counts) else "") + ("" if s["answers_agree"] else " **DIFFER**")
        sd_wall = f"none in {s['sd_wall']:.0f}" if theirs_out else _s(s["sd_wall"])
        line = ([row["label"]] + ([row.get("commit", commit)] if codes else [])
                + [f"{row.get('m', len(row.get('M', [])) or '?')} × {row['n']}", f"none in {s['indexset_wall']:.0f}" if ours_out else _s(s["indexset_wall"]),
                   _s(s["indexset_cpu"]), f"{sd_wall} ({_setting(s['best_setting'])})", _s(s["sd_cpu"]), wall, cpu, row["repeats"], answers])
        if floor:
            line += [_s(s["floor_wall"]), _ratio(s["floor_ratio_wall"])]
        if baseline:
            line += [_s(s["baseline_wall"]), _ratio(s["ratio_to_baseline_wall"])] if "baseline_wall" in s else ["–", "–"]
        lines.append(line)
    return header, lines


def batch_table(result: dict) -> tuple:
    """The header and rows of the batch: per solvediophant setting, both programs' wall for every file, and the ratios."""
    k = len(result["files"])
    header = ["solvediophant setting", "files", "indexset, one process (s)", "per file", "solvediophant, a process per file (s)", "per file", "ratio wall", "ratio CPU", "answers"]
    rows = []
    for setting, s in result["summary"].items():
        answers = "agree" if not s["differ"] else "**DIFFER**: " + ", ".join(Path(n).name for n in s["differ"])
        rows.append([_setting(setting), k, _s(s["indexset_wall"]), f"{s['indexset_wall'] / k:.3f}", _s(s["sd_wall"]), f"{s['sd_wall'] / k:.3f}",
                     _ratio(s["ratio_wall"]), _ratio(s["ratio_cpu"]), answers])
    return header, rows
