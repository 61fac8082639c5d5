"""indexset against solvediophant, side by side: paired, alternating runs on the same 0/1 systems.

solvediophant (A. Wassermann's lattice solver for 0/1 systems) is not part
of this project: build it yourself outside the repository and pass the
binary with ``--solvediophant PATH``. Rows come from three sources:

- instances built with ``indexset construct``: the (★) system of the block
  (exact integers), written in solvediophant's input format; indexset runs
  ``indexset solve BLOCK --json``;
- QOBLIB market split ``.dat`` files (``--qoblib``): ``solve-system``;
- solvediophant's own test files (``--sd-tests DIR``, its ``Tests/``
  folder): every 0/1 file there (no ``BOUNDS`` line, or every bound 1; a
  plain ``A x = b``: no ``% FREERHS``, ``% cutafter``, ``% stoploops`` or a
  ``SELECTEDCOLUMNS`` that leaves columns out; ``% stopafter``: first
  solution only), or those named by ``--sd-files``. Each file gives
  two rows: by count (``solve-system --count`` against its test script's
  ``-bkz -beta40``, ``--sd-count-settings``) and by first solution
  (``solve-system`` against ``-t1`` with each of ``--sd-first-settings``:
  the test script's setting, limited discrepancy search, its QOBLIB recipe
  ``-bkz -beta56 -tours20 -lds20`` and its two-process recipe DFS ‖ LDS).
  indexset reads a QOBLIB-form copy of the file written in the temporary
  folder, or the file itself with ``--sd-native``. ``--sd-dotests``
  instead takes the whole list of its test script ``dotests`` (bounded
  integers and ``% FREERHS`` files too), by count, each file read by
  indexset itself, against the script's counts and setting.

Timing: each repetition runs indexset once and every solvediophant setting
once (and the floor program, if asked), as whole processes, the order
rotating with the repetition so that each program goes first in turn; each
setting's run is paired with indexset's run of the same repetition. Wall
time and CPU time (children's rusage: user + system) are recorded. A
setting written ``A || B`` runs A and B as two processes at once and ends
at the first of them that answers (a solution, or the end of a complete
search: depth-first, or limited discrepancy search that ran out of
discrepancies), as solvediophant's own ``start_parallel.bash`` does; its
wall time runs until then, its CPU time is both processes'.
``--long-after S`` stops repeating a row whose first repetition took more
than S seconds in some program (the JSON says how many repetitions a row
has).

Answers are checked: the same status, every solution (both programs')
solves the system exactly, equal counts by count (indexset's count,
solvediophant's "Total number of solutions" and the solution lines it
printed, and, for its test files, the count its test script ``dotests``
expects); a count that differs is printed loudly and makes the exit status
1. The summary gives medians and the median of the per-pair ratios indexset
/ solvediophant, by wall time and by CPU time (per core), against the
setting with the smallest median wall time; every setting's figures are in
the JSON.

With ``--baseline INDEXSET`` another indexset (an earlier commit's
executable) runs the same command in the same rotation, and each row also
gives the median ratio indexset / baseline: old against new, in one run.

With ``--floor``, a third program runs in the same rotation: the Python
interpreter that runs indexset, importing NumPy and nothing else
(``python -c "import numpy"``): the least any NumPy-based program needs on
this machine, so a row where it is slower than solvediophant is one that no
Python solver can win as a whole process.

    python benchmarks/versus.py --solvediophant /path/to/sd2 --repeat 3 --json versus.json
    python benchmarks/versus.py --solvediophant /path/to/sd2 --rows none \\
        --sd-tests /path/to/solvediophant/Tests --sd-files KM_Id9_t2_k3.txt,4-arcs.txt \\
        --repeat 3 --long-after 60 --timeout 600 --json versus_sdtests.json

Standard library (NumPy, when present, checks long lists of solutions), plus
indexset for writing the (★) systems of constructed rows.
"""

from __future__ import annotations

import argparse
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

SETTINGS = ("", "-bkz -beta40", "-bkz -beta40 -lds20")
SD_COUNT_SETTINGS = ("-bkz -beta40",)
SD_FIRST_SETTINGS = ("-bkz -beta40", "-bkz -beta40 -lds20", "-bkz -beta56 -tours20 -lds20", "-bkz -beta40 || -bkz -beta40 -lds20")

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


def zero_one_files(folder: Path, names: list[str] | None) -> tuple[list[tuple[Path, dict]], list[str]]:
    """The plain 0/1 systems of solvediophant's test folder (or of ``names`` there), and why each other file is left out."""
    chosen, left_out = [], []
    for path in sorted(folder.iterdir()) if names is None else [folder / name for name in names]:
        if not path.is_file() or path.suffix == ".md":
            continue
        try:
            system = read_sd(path)
        except (ValueError, IndexError, OSError) as exc:
            left_out.append(f"{path.name}: not read ({exc})")
            continue
        if system["bounds"] is not None and any(v != 1 for v in system["bounds"]):
            left_out.append(f"{path.name}: bounds other than 1")
        elif set(system["options"]) - {"stopafter"}:
            left_out.append(f"{path.name}: {', '.join(system['options'])}")
        elif not system["A"] or not system["A"][0]:
            left_out.append(f"{path.name}: empty")
        else:
            chosen.append((path, system))
    return chosen, left_out


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


def _write_dat(A, b, target: Path) -> None:
    """QOBLIB form: 'm n', then each row of A followed by its right-hand side."""
    lines = [f"{len(A)} {len(A[0])}"] + [" ".join(map(str, row + [rhs])) for row, rhs in zip(A, b)]
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


# ---------------------------------------------------------------- jobs


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


def constructed_jobs(args, folder: Path) -> list[dict]:
    """The construct rows (and --count rows): (★) systems of built blocks."""
    rows = [] if args.rows == "none" else [r for r in ROWS if args.rows == "all" or r[0] in args.rows.split(",")]
    rows += [tuple(extra.split("=", 1)) for extra in args.extra]
    specs = [(label, spec, False) for label, spec in rows] + ([(label, spec, True) for label, spec in COUNT_ROWS] if args.count else [])
    jobs = []
    for label, spec, count in specs:
        block = folder / (re.sub(r"\W+", "_", label) + ".npz")
        subprocess.run([args.indexset, "construct", *shlex.split(spec), "-o", str(block)], check=True, capture_output=True)
        system_file = block.with_suffix(".txt")
        M, t = write_system(block, system_file)
        ours = [args.indexset, "solve", str(block), "--json"] + (["--count"] if count else [])
        jobs.append({"label": label + (" (--count)" if count else ""), "M": M, "t": t, "count": count, "system_mode": False,
                     "ours": ours, "system_file": system_file, "construct": spec})
    return jobs


def qoblib_jobs(args, folder: Path) -> list[dict]:
    jobs = []
    for spec in args.qoblib:
        path = Path(spec)
        M, t = read_dat(path)
        system_file = folder / f"{path.stem}.txt"
        _write_sd(M, t, system_file)
        jobs.append({"label": path.stem, "M": M, "t": t, "count": False, "system_mode": True,
                     "ours": [args.indexset, "solve-system", str(path), "--json"], "system_file": system_file})
    return jobs


def sd_test_jobs(args, folder: Path) -> list[dict]:
    """Two rows per 0/1 test file of solvediophant: by count, by first solution."""
    tests = Path(args.sd_tests)
    names = [name.strip() for name in args.sd_files.split(",")] if args.sd_files else None
    chosen, left_out = zero_one_files(tests, names)
    for reason in left_out:
        print(f"versus: left out {reason}", file=sys.stderr)
    expected = expected_counts(tests)
    modes = [m.strip() for m in args.sd_modes.split(",")]
    jobs = []
    for path, system in chosen:
        A, b = system["A"], system["b"]
        ours_file = path
        if not args.sd_native:
            ours_file = folder / f"{path.name}.dat"
            _write_dat(A, b, ours_file)
        for mode in modes:
            count = mode == "count"
            if count and "stopafter" in system["options"]:  # the file itself stops solvediophant early
                print(f"versus: {path.name}: first solution only (% stopafter)", file=sys.stderr)
                continue
            ours = [args.indexset, "solve-system", str(ours_file), "--json"] + (["--count"] if count else [])
            jobs.append({"label": f"{path.name} ({mode})", "M": A, "t": b, "count": count, "system_mode": True, "ours": ours,
                         "system_file": path, "expected": expected.get(path.name) if count else None, "sd_settings": args.sd_count_settings if count else args.sd_first_settings})
    return jobs


def dotests_jobs(args, folder: Path) -> list[dict]:
    """solvediophant's own test list (its ``dotests`` script): every file, counted, against its count and its setting ``-bkz -beta40``.

    indexset reads each file itself, bounds, ``% FREERHS`` and all; both
    programs' solutions (indexset's first, solvediophant's first thousand)
    are checked exactly, in the file's columns, with their values and λ.
    """
    tests = Path(args.sd_tests)
    expected = expected_counts(tests)
    names = None if not args.sd_files else {name.strip() for name in args.sd_files.split(",")}
    jobs = []
    for name, count in expected.items():
        if names is not None and name not in names:
            continue
        path = tests / name
        system = read_sd(path)
        box = {"bounds": system["bounds"], "free": "FREERHS" in system["options"], "selected": system["selected"]}
        ours = [args.indexset, "solve-system", str(path), "--json", "--count"]
        jobs.append({"label": f"{name} (count)", "M": system["A"], "t": system["b"], "count": True, "system_mode": True, "ours": ours,
                     "system_file": path, "expected": count, "box": box, "sd_settings": args.sd_count_settings})
    return jobs


def _warm_up(argv: list[str], seconds: float) -> None:
    """One untimed run of indexset's command (stopped after ``seconds``): Numba's on-disk cache then holds every kernel it calls.

    A fresh installation compiles each kernel at its first call; that is a
    cost of the installation, paid once, not of the search being timed.
    """
    with contextlib.suppress(subprocess.TimeoutExpired):
        subprocess.run(argv, timeout=seconds, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)


def _line(row: dict) -> str:
    s = row["summary"]
    flag = "" if s["answers_agree"] else "   !!!!!!!! ANSWERS DIFFER: " + " ".join(map(str, s["statuses"])) + f" counts {s['counts']}"
    return (f"{row['label']:<36} indexset {s['indexset_wall']:8.3f} s  sd2[{s['best_setting'] or 'default'}] {s['sd_wall']:8.3f} s  "
            f"ratio wall {s['ratio_wall']:6.2f}  cpu {s['ratio_cpu']:6.2f}  x{row['repeats']}  agree {s['answers_agree']}"
            + (f"  floor {s['floor_wall']:.3f} s (ratio {s['floor_ratio_wall']:.2f})" if "floor_wall" in s else "")
            + (f"  baseline {s['baseline_wall']:.3f} s (indexset / baseline {s['ratio_to_baseline_wall']:.2f})" if "baseline_wall" in s else "") + flag)


def _table(results: list[dict], floor: bool) -> None:
    baseline = any("baseline_wall" in row["summary"] for row in results)
    print("\n| instance | m × n | indexset wall (s) | indexset CPU (s) | solvediophant wall (s), best setting | its CPU (s) | ratio wall | ratio CPU | runs | answers |"
          + (" floor wall (s) | floor ratio |" if floor else "") + (" baseline wall (s) | indexset / baseline |" if baseline else ""))
    print("|---|---|---|---|---|---|---|---|---|---|" + ("---|---|" if floor else "") + ("---|---|" if baseline else ""))
    for row in results:
        s = row["summary"]
        answers = " ".join(s["statuses"]).replace("|", "/") + (f", count {'/'.join(map(str, s['counts']))}" if s["counts"] else "") + ("" if s["answers_agree"] else " **DIFFER**")
        tail = f" {s['floor_wall']:.3f} | {s['floor_ratio_wall']:.2f} |" if floor else ""
        tail += f" {s['baseline_wall']:.3f} | {s['ratio_to_baseline_wall']:.2f} |" if "baseline_wall" in s else (" – | – |" if baseline else "")
        print(f"| {row['label']} | {row['m']} × {row['n']} | {s['indexset_wall']:.3f} | {s['indexset_cpu']:.3f} | {s['sd_wall']:.3f} (`{(s['best_setting'] or 'defaults').replace('|', chr(92) + '|')}`) | "
              f"{s['sd_cpu']:.3f} | {s['ratio_wall']:.2f} | {s['ratio_cpu']:.2f} | {row['repeats']} | {answers} |" + tail)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--solvediophant", required=True, metavar="PATH", help="the solvediophant (sd2) binary")
    parser.add_argument("--indexset", default="indexset", help="the indexset executable (default: indexset on PATH)")
    parser.add_argument("--repeat", type=int, default=3, help="paired runs per row (default 3)")
    parser.add_argument("--long-after", type=float, default=float("inf"), metavar="S", help="no more repetitions of a row whose first took more than S seconds in some program (default: never)")
    parser.add_argument("--timeout", type=float, default=600.0, help="seconds per run (default 600)")
    parser.add_argument("--settings", default=";".join(SETTINGS), help="solvediophant settings for construct and QOBLIB rows, ';'-separated (default: %(default)s)")
    parser.add_argument("--rows", default="all", help="comma list of construct row labels to run, 'all' (default) or 'none'")
    parser.add_argument("--count", action="store_true", help="also the --count construct rows")
    parser.add_argument("--qoblib", nargs="*", default=[], metavar="DAT", help="QOBLIB market split .dat files (solve-system)")
    parser.add_argument("--extra", nargs="*", default=[], metavar="LABEL=CONSTRUCT", help="more rows: 'label=construct arguments'")
    parser.add_argument("--sd-tests", metavar="DIR", help="solvediophant's Tests/ folder: rows for its 0/1 files")
    parser.add_argument("--sd-files", metavar="NAMES", help="comma list of file names in --sd-tests (default: every 0/1 file there; with --sd-dotests, every file of its list)")
    parser.add_argument("--sd-modes", default="count,first", help="rows per test file: 'count', 'first' or both (default: %(default)s)")
    parser.add_argument("--sd-count-settings", default=";".join(SD_COUNT_SETTINGS), help="solvediophant settings for the count rows (default: %(default)s)")
    parser.add_argument("--sd-first-settings", default=";".join(SD_FIRST_SETTINGS), help="solvediophant settings for the first-solution rows, each with -t1; 'A || B' runs two processes at once (default: %(default)s)")
    parser.add_argument("--sd-native", action="store_true", help="hand indexset the test file itself (default: a QOBLIB-form copy)")
    parser.add_argument("--sd-dotests", action="store_true",
                        help="with --sd-tests: the whole list of solvediophant's test script dotests (bounded integers and %% FREERHS too), counted, against its counts and --sd-count-settings")
    parser.add_argument("--warmup", type=float, default=0.0, metavar="S",
                        help="before each row, one untimed indexset run, stopped after S seconds, to fill Numba's cache (default: none)")
    parser.add_argument("--json", metavar="OUT", help="write every run here")
    parser.add_argument("--floor", action="store_true", help="also time the interpreter that runs indexset importing NumPy alone, in the same rotation")
    parser.add_argument("--baseline", metavar="INDEXSET", help="another indexset executable (an earlier commit) run in the same rotation on every row: old against new")
    args = parser.parse_args(argv)
    sd = os.path.abspath(args.solvediophant)
    if not os.access(sd, os.X_OK):
        print(f"versus: {sd} is not an executable", file=sys.stderr)
        return 2
    folder = Path(tempfile.mkdtemp(prefix="indexset-versus-"))
    tests = (dotests_jobs(args, folder) if args.sd_dotests else sd_test_jobs(args, folder)) if args.sd_tests else []
    jobs = constructed_jobs(args, folder) + qoblib_jobs(args, folder) + tests
    floor = [_interpreter(args.indexset), "-c", "import numpy"] if args.floor else None
    results = []
    for number, job in enumerate(jobs):
        if args.baseline:
            job["baseline"] = [args.baseline, *job["ours"][1:]]
        if args.warmup:
            _warm_up(job["ours"], args.warmup)
            if args.baseline:
                _warm_up(job["baseline"], args.warmup)
        settings = [s.strip() for s in job.get("sd_settings", args.settings).split(";")]
        theirs = {s: _sd_commands(sd, s, job["count"], job["system_file"], folder, str(number)) for s in settings}
        row = compare(job, theirs, args.repeat, args.timeout, args.long_after, floor, folder)
        row["indexset_command"] = shlex.join(job["ours"])
        row["sd_commands"] = {s: [shlex.join(argv) for argv in argvs] for s, argvs in theirs.items()}
        if "construct" in job:
            row["construct"] = job["construct"]
        results.append(row)
        print(_line(row), flush=True)
        if args.json:  # after every row: a run stopped part-way keeps what it measured
            Path(args.json).write_text(json.dumps({"machine": dict(zip(("sysname", "nodename", "release", "version", "machine"), os.uname())),
                                                   "cpus": os.cpu_count(), "argv": sys.argv, "rows": results}, indent=1) + "\n")
    _table(results, bool(floor))
    differ = [row["label"] for row in results if not row["summary"]["answers_agree"]]
    if differ:
        print(f"\n!!!!!!!! ANSWERS OR COUNTS DIFFER on: {', '.join(differ)}", file=sys.stderr)
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
