"""Soak test of a clean process exit for ``indexset solve FILE``.

The default ``indexset solve`` races lattice enumeration and CP-SAT in
threads. When an engine thread is still inside C++ (HiGHS via scipy's
``linprog``) at interpreter exit, the process can abort *after* printing a
correct answer: exit status 134 / signal SIGABRT, a few hundred lines of
"terminate called without an active exception ... Unhandled SIGABRT" on
stderr, and a ``cysignals_crash_logs/`` folder left in the working directory.
It happens in a fraction of the runs only, more often under CPU load, so one
run proves nothing: this script runs the real CLI many times and counts.

What it does
------------
1. Generates seeded instance families with ``indexset construct`` into a
   temporary folder (planted and random, d = 2 with ``--range 1000`` and
   d = 3 with ``--range 30``, several widths n each), and adds the bundled
   ``instances/*.npz``.
2. Runs ``indexset solve FILE --json`` (default engines) ``--runs`` times in
   all, cycling through the instances in a seeded shuffled order, ``--jobs``
   processes at a time (two at a time on a two-core machine is itself the
   CPU load that brings the crash out), each run in a fresh empty working
   directory.
3. Records, for every run: the exit status (negative: killed by that
   signal), the JSON ``status`` parsed from stdout (or ``no-json``), whether
   the exit status is the documented one for that status (0 absorbable,
   1 not_absorbable, 3 unknown), whether stderr holds ``SIGABRT``,
   ``Traceback`` or ``terminate called``, whether a ``cysignals_crash_logs``
   folder (or any other file) appeared in the working directory, whether
   the run hit ``--timeout`` (a hang), a planted instance answered
   not_absorbable (a wrong answer), and the wall time.
4. Prints a summary table (exit statuses by family, mismatches, crash
   signatures, wall times) and, with ``--json OUT``, writes every raw row and
   the summary.

A run is *clean* when its exit status is the documented code of the status
it printed, stderr holds none of the signatures, nothing was left in its
working directory, it did not time out and its answer is not wrong. The
script exits 0 when every run is clean, 1 otherwise (2 on a setup error).

Usage
-----
From the repository root, against the ``indexset`` on PATH::

    python benchmarks/soak.py --runs 400 --jobs 2
    python benchmarks/soak.py --runs 400 --jobs 2 --json soak.json

against another installation (e.g. a venv of an older commit)::

    python benchmarks/soak.py --indexset /path/to/venv/bin/indexset --json before.json

or a quick look::

    python benchmarks/soak.py --runs 40

Only the standard library is used; ``indexset`` runs as a subprocess.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import shlex
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter, defaultdict
from concurrent.futures import ThreadPoolExecutor, as_completed
from pathlib import Path

EXIT = {"absorbable": 0, "not_absorbable": 1, "unknown": 3}
"""Documented exit code of each JSON status."""

SIGNATURES = ("SIGABRT", "Traceback", "terminate called")
"""Strings whose presence on stderr marks a crash."""

CRASH_DIR = "cysignals_crash_logs"

BUNDLED = Path(__file__).resolve().parent.parent / "instances"

DEFAULT_D2_SIZES = "12,20,28,36,44"
DEFAULT_D3_SIZES = "12,24,36,48,60"
RANGES = {2: 1000, 3: 30}


def parse_sizes(text):
    """Parse a comma-separated list of widths.

    Parameters
    ----------
    text : str
        E.g. ``"12,20,28"``; empty for none.

    Returns
    -------
    list of int
    """
    return [int(part) for part in text.split(",") if part.strip()]


def family_specs(d2_sizes, d3_sizes, seed, per_size):
    """List the instances to generate.

    Parameters
    ----------
    d2_sizes, d3_sizes : list of int
        Widths n for d = 2 and d = 3.
    seed : int
        Base seed; instance ``i`` of a (kind, d, n) gets ``seed + i``.
    per_size : int
        Instances per (kind, d, n).

    Returns
    -------
    list of dict
        Keys ``family`` (e.g. ``planted-d2``), ``kind``, ``d``, ``n``,
        ``range``, ``seed`` and ``name`` (the file name).
    """
    specs = []
    for d, sizes in ((2, d2_sizes), (3, d3_sizes)):
        for kind in ("planted", "random"):
            for n in sizes:
                for i in range(per_size):
                    s = seed + i
                    specs.append({"family": f"{kind}-d{d}", "kind": kind, "d": d, "n": n, "range": RANGES[d],
                                  "seed": s, "name": f"{kind}_d{d}_n{n}_s{s}.npz"})
    return specs


def construct(cmd, spec, folder):
    """Write one instance with ``indexset construct``.

    Parameters
    ----------
    cmd : list of str
        The ``indexset`` command (executable and leading arguments).
    spec : dict
        One entry of :func:`family_specs`.
    folder : Path
        Where to write the file.

    Returns
    -------
    Path
        The written ``.npz``.

    Raises
    ------
    RuntimeError
        When ``indexset construct`` fails.
    """
    path = Path(folder) / spec["name"]
    argv = cmd + ["construct", spec["kind"], "--d", str(spec["d"]), "--n", str(spec["n"]),
                  "--range", str(spec["range"]), "--seed", str(spec["seed"]), "-o", str(path)]
    proc = subprocess.run(argv, capture_output=True, text=True, cwd=folder)
    if proc.returncode != 0 or not path.exists():
        raise RuntimeError(f"{shlex.join(argv)} failed ({proc.returncode}): {proc.stderr.strip()[-500:]}")
    return path


def signal_name(code):
    """Name of the signal that killed a process, from a negative return code.

    Parameters
    ----------
    code : int or None

    Returns
    -------
    str or None
        E.g. ``"SIGABRT"``; None for a normal exit.
    """
    if code is None or code >= 0:
        return None
    try:
        return signal.Signals(-code).name
    except ValueError:
        return f"signal {-code}"


def parse_status(stdout):
    """The ``status`` of the JSON object printed by ``solve --json``.

    Parameters
    ----------
    stdout : str

    Returns
    -------
    str
        The status, or ``"no-json"`` when stdout holds no JSON object with
        a string ``status``.
    """
    try:
        payload = json.loads(stdout)
    except ValueError:
        # Tolerate text before the object (e.g. a warning on stdout).
        start = stdout.find("{")
        if start < 0:
            return "no-json"
        try:
            payload = json.loads(stdout[start:])
        except ValueError:
            return "no-json"
    if isinstance(payload, dict) and isinstance(payload.get("status"), str):
        return payload["status"]
    return "no-json"


def solve_once(cmd, item, index, *, time_limit=None, timeout=300.0, workroot=None):
    """Run ``indexset solve FILE --json`` once, in a fresh working directory.

    Parameters
    ----------
    cmd : list of str
        The ``indexset`` command.
    item : dict
        ``family``, ``name``, ``path`` and ``expected`` (``"absorbable"`` or
        None) of the instance.
    index : int
        Run number (for the row).
    time_limit : float, optional
        Passed as ``--time-limit``.
    timeout : float
        Seconds after which the process is killed and the run counted as a
        hang.
    workroot : str, optional
        Parent of the per-run working directory.

    Returns
    -------
    dict
        One raw row (see the module docstring).
    """
    argv = cmd + ["solve", str(item["path"]), "--json"]
    if time_limit is not None:
        argv += ["--time-limit", str(time_limit)]
    workdir = tempfile.mkdtemp(prefix=f"run{index:04d}-", dir=workroot)
    timed_out = False
    start = time.perf_counter()
    try:
        proc = subprocess.run(argv, capture_output=True, text=True, errors="replace", cwd=workdir,
                              timeout=timeout, stdin=subprocess.DEVNULL)
        code, stdout, stderr = proc.returncode, proc.stdout, proc.stderr
    except subprocess.TimeoutExpired as exc:
        timed_out = True
        code = None

        def text(b):
            return b.decode(errors="replace") if isinstance(b, bytes) else (b or "")

        stdout, stderr = text(exc.stdout), text(exc.stderr)
    wall = time.perf_counter() - start
    left = sorted(os.listdir(workdir))
    shutil.rmtree(workdir, ignore_errors=True)
    status = parse_status(stdout)
    lines = stderr.splitlines()
    row = {
        "run": index,
        "family": item["family"],
        "instance": item["name"],
        "exit": code,
        "signal": signal_name(code),
        "timeout": timed_out,
        "status": status,
        "exit_matches": status in EXIT and code == EXIT[status],
        "wrong_answer": item["expected"] is not None and status in EXIT and status not in (item["expected"], "unknown"),
        "crash_logs": CRASH_DIR in left,
        "left_in_cwd": left,
        "stderr_lines": len(lines),
        "stderr_head": lines[:3],
        "stderr_tail": lines[-3:] if len(lines) > 3 else [],
        "wall_s": round(wall, 3),
    }
    for sig in SIGNATURES:
        row["stderr_" + sig.replace(" ", "_")] = sig in stderr
    row["clean"] = (row["exit_matches"] and not timed_out and not left and not row["wrong_answer"]
                    and not any(sig in stderr for sig in SIGNATURES))
    return row


def exit_label(row):
    """Short label of a row's exit: ``"0"``, ``"134"``, ``"SIGABRT"``, ``"timeout"``."""
    if row["timeout"]:
        return "timeout"
    return row["signal"] or str(row["exit"])


def summarize(rows):
    """Counts over the raw rows.

    Parameters
    ----------
    rows : list of dict

    Returns
    -------
    dict
        ``runs``, ``clean``, ``unclean``, ``by_family`` (per family: runs,
        clean, exit-label counts, JSON status counts, mismatches, crash
        signature counts, wall-time median and max) and ``total`` (the same
        over all families).
    """
    groups = defaultdict(list)
    for row in rows:
        groups[row["family"]].append(row)
    groups = dict(sorted(groups.items()))
    groups["total"] = list(rows)
    out = {}
    for family, group in groups.items():
        walls = [r["wall_s"] for r in group]
        out[family] = {
            "runs": len(group),
            "clean": sum(r["clean"] for r in group),
            "exit": dict(sorted(Counter(exit_label(r) for r in group).items())),
            "status": dict(sorted(Counter(r["status"] for r in group).items())),
            "mismatch": sum(not r["exit_matches"] for r in group),
            "wrong_answer": sum(r["wrong_answer"] for r in group),
            "timeout": sum(r["timeout"] for r in group),
            "crash_logs": sum(r["crash_logs"] for r in group),
            "other_files_left": sum(bool(set(r["left_in_cwd"]) - {CRASH_DIR}) for r in group),
            **{"stderr_" + s.replace(" ", "_"): sum(r["stderr_" + s.replace(" ", "_")] for r in group) for s in SIGNATURES},
            "wall_median_s": round(statistics.median(walls), 2) if walls else None,
            "wall_max_s": round(max(walls), 2) if walls else None,
        }
    total = out.pop("total")
    per_instance = defaultdict(lambda: [0, 0])
    for row in rows:
        per_instance[row["instance"]][0] += 1
        per_instance[row["instance"]][1] += not row["clean"]
    return {"runs": len(rows), "clean": total["clean"], "unclean": len(rows) - total["clean"], "total": total,
            "by_family": out, "unclean_by_instance": {k: {"runs": v[0], "unclean": v[1]}
                                                       for k, v in sorted(per_instance.items()) if v[1]}}


def format_table(summary):
    """The summary as a plain-text table.

    Parameters
    ----------
    summary : dict
        From :func:`summarize`.

    Returns
    -------
    str
    """
    cols = ["runs", "clean", "exit", "status", "mismatch", "crash_logs", "stderr_SIGABRT", "stderr_terminate_called",
            "stderr_Traceback", "timeout", "wrong_answer", "wall_median_s", "wall_max_s"]
    heads = ["family", "runs", "clean", "exit statuses", "JSON status", "mismatch", "crash-logs", "SIGABRT",
             "terminate", "Traceback", "hang", "wrong", "t med", "t max"]

    def cell(value):
        if isinstance(value, dict):
            return " ".join(f"{k}:{v}" for k, v in value.items())
        return str(value)

    body = [[family] + [cell(stats[c]) for c in cols] for family, stats in summary["by_family"].items()]
    body.append(["TOTAL"] + [cell(summary["total"][c]) for c in cols])
    widths = [max(len(r[i]) for r in body + [heads]) for i in range(len(heads))]
    lines = ["  ".join(h.ljust(w) for h, w in zip(heads, widths)), "  ".join("-" * w for w in widths)]
    lines += ["  ".join(v.ljust(w) for v, w in zip(r, widths)) for r in body]
    if summary["unclean_by_instance"]:
        lines.append("")
        lines.append("unclean runs by instance: " + ", ".join(
            f"{k} {v['unclean']}/{v['runs']}" for k, v in summary["unclean_by_instance"].items()))
    return "\n".join(lines)


def build_parser():
    """The command-line parser."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    parser.add_argument("--runs", type=int, default=400, help="solve runs in all")
    parser.add_argument("--jobs", type=int, default=2, help="runs at a time")
    parser.add_argument("--seed", type=int, default=0, help="seed of the generated instances and of the run order")
    parser.add_argument("--time-limit", type=float, default=None, help="passed to indexset solve as --time-limit")
    parser.add_argument("--timeout", type=float, default=300.0, help="seconds before a run is killed and counted as a hang")
    parser.add_argument("--indexset", default="indexset", metavar="CMD",
                        help="the indexset command (split like a shell line, e.g. 'python -m indexset.cli.main')")
    parser.add_argument("--d2-sizes", default=DEFAULT_D2_SIZES, help="widths n of the d = 2 families (--range 1000)")
    parser.add_argument("--d3-sizes", default=DEFAULT_D3_SIZES, help="widths n of the d = 3 families (--range 30)")
    parser.add_argument("--per-size", type=int, default=1, help="instances per family and width (seeds seed, seed+1, ...)")
    parser.add_argument("--instances", default=str(BUNDLED), help="folder of bundled .npz instances ('' for none)")
    parser.add_argument("--json", metavar="OUT", default=None, help="write the raw rows and the summary here")
    return parser


def main(argv=None):
    """Generate the instances, run the soak, print the summary.

    Returns
    -------
    int
        0 when every run was clean, 1 otherwise, 2 on a setup error.
    """
    args = build_parser().parse_args(argv)
    cmd = shlex.split(args.indexset)
    if not cmd or shutil.which(cmd[0]) is None:
        print(f"soak: cannot find {args.indexset!r}", file=sys.stderr)
        return 2
    cmd[0] = shutil.which(cmd[0])
    started = time.time()
    with tempfile.TemporaryDirectory(prefix="indexset-soak-") as tmp:
        tmp = Path(tmp)
        gen, work = tmp / "instances", tmp / "runs"
        gen.mkdir()
        work.mkdir()
        items = []
        specs = family_specs(parse_sizes(args.d2_sizes), parse_sizes(args.d3_sizes), args.seed, args.per_size)
        print(f"soak: generating {len(specs)} instances with {shlex.join(cmd)} ...", file=sys.stderr)
        try:
            for spec in specs:
                path = construct(cmd, spec, gen)
                items.append({"family": spec["family"], "name": spec["name"], "path": path,
                              "expected": "absorbable" if spec["kind"] == "planted" else None})
        except RuntimeError as exc:
            print(f"soak: {exc}", file=sys.stderr)
            return 2
        if args.instances:
            for path in sorted(Path(args.instances).glob("*.npz")):
                items.append({"family": "bundled", "name": path.name, "path": path, "expected": None})
        if not items:
            print("soak: no instances", file=sys.stderr)
            return 2
        rng = random.Random(args.seed)
        schedule = []
        while len(schedule) < args.runs:
            batch = list(items)
            rng.shuffle(batch)
            schedule.extend(batch)
        schedule = schedule[:args.runs]
        print(f"soak: {args.runs} runs over {len(items)} instances, {args.jobs} at a time", file=sys.stderr)
        rows = []
        with ThreadPoolExecutor(max_workers=args.jobs) as pool:
            futures = [pool.submit(solve_once, cmd, item, i, time_limit=args.time_limit, timeout=args.timeout,
                                   workroot=str(work)) for i, item in enumerate(schedule)]
            for done, future in enumerate(as_completed(futures), 1):
                row = future.result()
                rows.append(row)
                unclean = len(rows) - sum(r["clean"] for r in rows)
                if not row["clean"] or done % 20 == 0 or done == len(futures):
                    mark = "" if row["clean"] else "  UNCLEAN"
                    print(f"[{done}/{len(futures)}] {row['instance']}: exit {exit_label(row)} {row['status']} "
                          f"{row['wall_s']:.1f}s{mark}  (unclean so far {unclean}, {time.time() - started:.0f}s)",
                          file=sys.stderr)
    rows.sort(key=lambda r: r["run"])
    summary = summarize(rows)
    print(format_table(summary))
    print(f"\n{summary['clean']}/{summary['runs']} runs clean; {summary['unclean']} unclean "
          f"({time.time() - started:.0f} s, {args.jobs} jobs)")
    if args.json:
        meta = {"argv": sys.argv, "indexset": cmd, "runs": args.runs, "jobs": args.jobs, "seed": args.seed,
                "time_limit": args.time_limit, "timeout": args.timeout, "d2_sizes": args.d2_sizes,
                "d3_sizes": args.d3_sizes, "per_size": args.per_size, "cpus": os.cpu_count(),
                "python": platform.python_version(), "platform": platform.platform(),
                "elapsed_s": round(time.time() - started, 1)}
        Path(args.json).write_text(json.dumps({"meta": meta, "summary": summary, "rows": rows}, indent=1) + "\n")
    return 0 if summary["unclean"] == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
