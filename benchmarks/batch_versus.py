"""A batch of systems (0/1, bounded, ``% FREERHS``) in one ``indexset solve-system`` call against solvediophant, one process per file.

solvediophant reads one system per process; indexset's ``solve-system``
takes several files and solves them in one process, paying its start-up
once. This script times both ways of deciding the same list of files (a
first solution each, or every solution with ``--count``), whole
processes, in paired runs whose order rotates with the repetition:

- indexset: ``indexset solve-system F1 ... Fk --json`` (JSON Lines, one
  object per file);
- solvediophant: for each of ``--settings``, every file in its own process,
  one after another (``-t1`` unless counting); a setting ``A || B`` runs A
  and B at once per file and stops at the first answer, as in
  ``versus.py``.

It checks every file's answer (the same status, each solution solves the
file's system exactly, equal counts) and reports, per program, the wall and
CPU time of the whole batch and per file, and the median over repetitions
of the per-pair ratio indexset / solvediophant, against the setting with
the smallest batch time; then indexset's slowest files (its own in-process
``time_s``) beside solvediophant's per-process times for them.

    python benchmarks/batch_versus.py --solvediophant /path/to/sd2 --repeat 3 \\
        --files QOBLIB/01-marketsplit/instances/ms_0[3-7]_*.dat Tests/KM_Id9_t2_k3.txt ... --json batch.json

Needs ``solve-system`` with several files (and, for solvediophant's own
test files, its input format).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from versus import _sd_commands, all_solve, read_sd, sd_answer, timed

SETTINGS = ("", "-bkz -beta40", "-bkz -beta40 -lds20", "-bkz -beta56 -tours20 -lds20", "-bkz -beta40 || -bkz -beta40 -lds20")


def indexset_answers(run: dict, systems: dict, count: bool) -> dict:
    """Per file: status, count, checked, from the JSON Lines of one batch run."""
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


def agree(a: dict, b: dict) -> bool:
    """The same answer, both checked; a timeout or an incomplete search answers nothing."""
    if any(s in ("timeout", "missing") or s.startswith("unknown") for s in (a["status"], b["status"])):
        return a.get("checked", True) and b.get("checked", True)
    counts = {c for c in (a.get("count"), b.get("count")) if c is not None}
    return a["status"] == b["status"] and a.get("checked", True) and b.get("checked", True) and len(counts) <= 1


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--solvediophant", required=True, metavar="PATH", help="the solvediophant (sd2) binary")
    parser.add_argument("--indexset", default="indexset", help="the indexset executable (default: indexset on PATH)")
    parser.add_argument("--files", nargs="+", required=True, metavar="FILE", help="system files (solvediophant's format, QOBLIB .dat)")
    parser.add_argument("--count", action="store_true", help="count every solution instead of a first one")
    parser.add_argument("--settings", default=";".join(SETTINGS), help="solvediophant settings, ';'-separated (default: %(default)s)")
    parser.add_argument("--repeat", type=int, default=3, help="paired runs (default 3)")
    parser.add_argument("--timeout", type=float, default=600.0, help="seconds per indexset batch and per solvediophant process (default 600)")
    parser.add_argument("--json", metavar="OUT", help="write every run here")
    args = parser.parse_args(argv)
    sd = os.path.abspath(args.solvediophant)
    if not os.access(sd, os.X_OK):
        print(f"batch_versus: {sd} is not an executable", file=sys.stderr)
        return 2
    folder = Path(tempfile.mkdtemp(prefix="indexset-batch-"))
    files = [str(Path(f).resolve()) for f in args.files]
    systems = {}
    for name in files:
        data = read_sd(Path(name))
        systems[name] = (data["A"], data["b"], {"bounds": data["bounds"], "free": "FREERHS" in data["options"], "selected": data["selected"]})
    settings = [s.strip() for s in args.settings.split(";")]
    ours = [args.indexset, "solve-system", *files, "--json"] + (["--count"] if args.count else [])
    programs = [("indexset", None)] + [("sd", s) for s in settings]
    reps = []
    for rep in range(args.repeat):
        shift = rep % len(programs)
        result = {}
        for who, setting in programs[shift:] + programs[:shift]:
            if who == "indexset":
                run = timed([ours], args.timeout, folder)
                result["indexset"] = {"wall_s": round(run["wall_s"], 4), "cpu_s": round(run["cpu_s"], 4), "files": indexset_answers(run, systems, args.count)}
                continue
            wall = cpu = 0.0
            answers = {}
            for k, name in enumerate(files):
                run = timed(_sd_commands(sd, setting, args.count, Path(name), folder, str(k)), args.timeout, folder)
                wall, cpu = wall + run["wall_s"], cpu + run["cpu_s"]
                A, b, box = systems[name]
                answers[name] = {**sd_answer(run, A, b, args.count, box), "wall_s": round(run["wall_s"], 4)}
            result[setting] = {"wall_s": round(wall, 4), "cpu_s": round(cpu, 4), "files": answers}
        reps.append(result)
        print(f"repetition {rep + 1}: indexset {result['indexset']['wall_s']:.3f} s; " + "; ".join(f"sd2[{s or 'defaults'}] {result[s]['wall_s']:.3f} s" for s in settings), flush=True)
    summary = {}
    for setting in settings:
        pairs = [(r["indexset"], r[setting]) for r in reps]
        differ = sorted({name for a, b in pairs for name in files if not agree(a["files"][name], b["files"][name])})
        summary[setting] = {
            "indexset_wall": statistics.median(a["wall_s"] for a, _ in pairs), "sd_wall": statistics.median(b["wall_s"] for _, b in pairs),
            "indexset_cpu": statistics.median(a["cpu_s"] for a, _ in pairs), "sd_cpu": statistics.median(b["cpu_s"] for _, b in pairs),
            "ratio_wall": statistics.median(a["wall_s"] / max(b["wall_s"], 1e-3) for a, b in pairs),
            "ratio_cpu": statistics.median(a["cpu_s"] / max(b["cpu_s"], 1e-3) for a, b in pairs),
            "differ": differ,
        }
    best = min(settings, key=lambda s: summary[s]["sd_wall"])
    k = len(files)
    print(f"\n{k} files, {'count' if args.count else 'first solution'}, {len(reps)} paired repetitions; ratio = indexset / solvediophant (median of per-pair ratios)")
    print("| solvediophant setting | indexset batch wall (s) | per file | solvediophant wall (s) | per file | ratio wall | ratio CPU | answers |")
    print("|---|---|---|---|---|---|---|---|")
    for setting in settings:
        s = summary[setting]
        label = (setting or "defaults").replace("|", "\\|") + (" (best)" if setting == best else "")
        answers = "agree" if not s["differ"] else "**DIFFER**: " + ", ".join(Path(n).name for n in s["differ"])
        print(f"| `{label}` | {s['indexset_wall']:.3f} | {s['indexset_wall'] / k:.4f} | {s['sd_wall']:.3f} | {s['sd_wall'] / k:.4f} | {s['ratio_wall']:.2f} | {s['ratio_cpu']:.2f} | {answers} |")
    slowest = sorted(files, key=lambda name: -statistics.median(r["indexset"]["files"][name].get("time_s") or 0.0 for r in reps))[:10]
    print("\nindexset's slowest files (median in-process seconds) beside solvediophant's per-process wall (median), each setting:")
    for name in slowest:
        ours = statistics.median(r["indexset"]["files"][name].get("time_s") or 0.0 for r in reps)
        theirs = "  ".join(f"{statistics.median(r[s]['files'][name]['wall_s'] for r in reps):.3f}" for s in settings)
        print(f"  {Path(name).name:28} {ours:8.3f}   {theirs}")
    if args.json:
        Path(args.json).write_text(json.dumps({"machine": dict(zip(("sysname", "nodename", "release", "version", "machine"), os.uname())), "cpus": os.cpu_count(),
                                               "argv": sys.argv, "indexset_command": ours, "files": files, "best_setting": best, "summary": summary, "repetitions": reps}, indent=1) + "\n")
    if any(summary[s]["differ"] for s in settings):
        print("!!!!!!!! ANSWERS DIFFER (see the table)", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
