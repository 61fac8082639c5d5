"""Survey of low-precision ReLU blocks: how often, and how fast, are degenerate weights decided?

Draws seeded ReLU blocks with identity skip and integer weights in [−R, R]
(R = 1: ternary {−1, 0, 1}; R = 2: [−2, 2]), d = 2–8, n = k·d for the
multipliers k given, and solves each in process with ``indexset.solve``
under a per-block time limit. Such weights are often degenerate (collinear
or zero rows, zero columns), where (★) is sufficient but not necessary and
MATH.md §7 decides. Blocks cycle through four variants per cell: target
class affine / bias-free, and zero biases / small integer biases
(``b_up``, ``b_down`` in [−R, R]).

Each record holds the block's parameters, its status, the kind of answer
(``S`` found, §7 witness, §7 proof, another theorem, unknown from the
search or from §7), the whole decision's seconds, the stage timings the
result reports, and the §7 facts (classes, spare units, open cases). The table gives,
by range R and dimension d: blocks, degenerate blocks, unknowns (all from
§7 or the search), and the median / max seconds of the whole decision,
over all blocks and over the degenerate ones.

Usage::

    python benchmarks/degenerate_survey.py --seeds 4 --time-limit 30 --jobs 2 --out benchmarks/degenerate_survey.json
    python benchmarks/degenerate_survey.py --compare before.json after.json

After the table it lists every open §7 case (the frontier): the block's
cell, classes and spare units, the level, and the size of the work that no
tool could afford (terms, coefficient vectors, rows per half table, and
for rank ≤ 1 the systems of Lemma 7.7e).

The same arguments always draw the same blocks. ``--compare`` runs nothing:
it prints two runs' tables side by side (unknowns, median and max seconds).
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import platform
import statistics
import subprocess
import sys
import time
from collections import defaultdict
from pathlib import Path

# One BLAS thread per worker: the workers are the parallelism (set before numpy loads, inherited by spawned workers).
for _variable in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_variable, "1")

import numpy as np  # noqa: E402

REPOSITORY = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPOSITORY))

VARIANTS = (("affine", False), ("bias-free", False), ("affine", True), ("bias-free", True))
"""(target class, small biases) cycled over the seeds of a cell."""


def draw(d: int, bound: int, k: int, rep: int, seed: int, biases: bool):
    """Block ``rep`` of cell (d, R, k): integer weights in [−R, R], identity skip."""
    from indexset.model.instance import Instance

    rng = np.random.default_rng([seed, d, bound, k, rep])
    n = k * d
    up = rng.integers(-bound, bound + 1, size=(n, d))
    down = rng.integers(-bound, bound + 1, size=(d, n))
    b_up = rng.integers(-bound, bound + 1, size=n) if biases else None
    b_down = rng.integers(-bound, bound + 1, size=d) if biases else None
    return Instance(up, down, b_up=b_up, b_down=b_down, source=f"survey d={d} R={bound} n={n} rep={rep}")


def kind_of(result) -> str:
    """What kind of answer a result is (benchmark bookkeeping, from the result's fields)."""
    if result.status == "absorbable":
        return "S" if result.index_set is not None else "§7 witness"
    if result.status == "not_absorbable":
        return "§7 proof" if result.engine == "degenerate" else "theorem"
    if "not necessary, for degenerate weights" in result.reason or "degenerate-weights decision" in result.reason:
        return "unknown §7"
    return "unknown search"


def _seconds(stages: dict, key: str):
    value = stages.get(key)
    return value.get("time_s") if isinstance(value, dict) else None


def classify(job: tuple) -> dict:
    from indexset.solver import solve
    from indexset.theory.nondegeneracy import find_degeneracy

    (d, bound, k, rep), options = job
    target_class, biases = VARIANTS[rep % len(VARIANTS)] if options["biases"] == "both" else (
        VARIANTS[rep % 2][0], options["biases"] == "small")
    instance = draw(d, bound, k, rep, options["seed"], biases)
    degenerate = not find_degeneracy(instance).nondegenerate
    start = time.perf_counter()
    result = solve(instance, target_class=target_class, time_limit=options["time_limit"])
    seconds = time.perf_counter() - start
    stages = result.stages
    section7 = stages.get("degenerate") if isinstance(stages.get("degenerate"), dict) else {}
    return {
        "d": d, "R": bound, "n": instance.n, "k": k, "rep": rep, "class": target_class, "biases": biases,
        "degenerate": degenerate, "status": result.status, "kind": kind_of(result), "seconds": round(seconds, 4),
        "system_s": _seconds(stages, "system"), "reduce_s": _seconds(stages, "reduce"), "prune_s": _seconds(stages, "prune"),
        "section7_s": section7.get("time_s", section7.get("decide_s")), "classes": section7.get("classes"),
        "spare": section7.get("spare"), "open": section7.get("open"),
        "reason": result.reason[-300:] if result.status == "unknown" else None,
    }


def _cell(records: list) -> dict:
    seconds = [r["seconds"] for r in records]
    degenerate = [r for r in records if r["degenerate"]]
    unknown = [r for r in records if r["status"] == "unknown"]
    return {
        "blocks": len(records), "degenerate": len(degenerate), "unknown": len(unknown),
        "unknown_section7": sum(1 for r in unknown if r["kind"] == "unknown §7"),
        "absorbable": sum(1 for r in records if r["status"] == "absorbable"),
        "by_section7": sum(1 for r in records if r["kind"] in ("§7 witness", "§7 proof")),
        "median_s": round(statistics.median(seconds), 3) if seconds else None,
        "max_s": round(max(seconds), 3) if seconds else None,
        "degenerate_median_s": round(statistics.median([r["seconds"] for r in degenerate]), 3) if degenerate else None,
        "degenerate_max_s": round(max(r["seconds"] for r in degenerate), 3) if degenerate else None,
    }


def summarise(records: list) -> dict:
    cells = defaultdict(list)
    for record in records:
        cells[(record["R"], record["d"])].append(record)
        cells[(record["R"], "all")].append(record)
        cells[("all", "all")].append(record)
    return {f"R={R} d={d}": _cell(group) for (R, d), group in sorted(cells.items(), key=_cell_order)}


def _cell_order(item) -> tuple:
    """Cells by R, then d, numbers in numeric order and "all" first."""
    return tuple((1, v) if isinstance(v, int) else (0, 0) for v in item[0])


def table(summary: dict) -> str:
    head = ("| cell | blocks | degenerate | absorbable | by §7 | unknown (§7) | unknown rate | median s | max s "
            "| degenerate median s | degenerate max s |")
    lines = [head, "|" + "---|" * (head.count("|") - 1)]
    for name, cell in summary.items():
        rate = f"{cell['unknown'] / cell['blocks']:.1%}" if cell["blocks"] else "-"
        lines.append(f"| {name} | {cell['blocks']} | {cell['degenerate']} | {cell['absorbable']} | {cell['by_section7']} "
                     f"| {cell['unknown']} ({cell['unknown_section7']}) | {rate} | {cell['median_s']} | {cell['max_s']} "
                     f"| {cell['degenerate_median_s']} | {cell['degenerate_max_s']} |")
    return "\n".join(lines)


def compare(before_path: str, after_path: str) -> str:
    """Two runs side by side, cell by cell: unknowns, median and max seconds of the whole decision."""
    before, after = (json.loads(Path(path).read_text()) for path in (before_path, after_path))
    lines = [f"before: {before.get('commit')} ({before.get('label', '')}); after: {after.get('commit')} ({after.get('label', '')})",
             "| cell | blocks | degenerate | unknown before → after | median s before → after | max s before → after "
             "| degenerate median s before → after | degenerate max s before → after |",
             "|---|---|---|---|---|---|---|---|"]
    for name, old in before["summary"].items():
        new = after["summary"].get(name)
        if new is None:
            continue
        lines.append(f"| {name} | {old['blocks']} | {old['degenerate']} | {old['unknown']} → {new['unknown']} "
                     f"| {old['median_s']} → {new['median_s']} | {old['max_s']} → {new['max_s']} "
                     f"| {old['degenerate_median_s']} → {new['degenerate_median_s']} | {old['degenerate_max_s']} → {new['degenerate_max_s']} |")
    return "\n".join(lines)


def frontier(records: list) -> str:
    """Each open §7 case: the block's cell, classes and spare units, the level, and the size of its work."""
    from indexset.text import count

    def size(work: dict, key: str) -> str:
        return "–" if work.get(key) is None else count(work[key], 2)

    lines = ["| d | R | n | classes | spare | level u (q) | kind | terms | coefficient vectors | rows per half | limit | Lemma 7.7e systems |",
             "|" + "---|" * 12]
    for r in sorted(records, key=lambda r: (r["d"], r["R"], r["n"], r["rep"])):
        for case in r.get("open") or []:
            work = case.get("work") or {}
            short = work.get("short") or {}
            lines.append(f"| {r['d']} | {r['R']} | {r['n']} | {r['classes']} | {r['spare']} | {case['u']} ({case['q']}) | {case['kind']} "
                         f"| {work.get('terms', '–')} | {size(work, 'coefficient_vectors')} | {size(work, 'half_rows')} | {work.get('limit', '–')} "
                         f"| {size(short, 'systems')} |")
    return "\n".join(lines)


def _commit() -> str:
    try:
        return subprocess.run(["git", "-C", str(REPOSITORY), "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                              check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--d", default="2-8", help="dimensions, a range lo-hi or a comma list (default 2-8)")
    parser.add_argument("--ranges", default="1,2", help="weight ranges R, comma-separated (default 1,2)")
    parser.add_argument("--multipliers", default="2,4,8,12,16", help="widths n = k·d for these k (default 2,4,8,12,16)")
    parser.add_argument("--seeds", type=int, default=4, help="blocks per cell (default 4: the four variants once each)")
    parser.add_argument("--biases", choices=("both", "zero", "small"), default="both",
                        help="zero biases, small integer biases, or both alternating with the class (default both)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--time-limit", type=float, default=30.0, help="seconds per block (default 30)")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--out", help="write the summary and every record as JSON here")
    parser.add_argument("--label", default="", help="free text stored with the run (what code it measured)")
    parser.add_argument("--compare", nargs=2, metavar=("BEFORE", "AFTER"), help="print two runs' tables side by side and exit")
    args = parser.parse_args(argv)
    if args.compare:
        print(compare(*args.compare))
        return 0
    if "-" in args.d:
        low, high = (int(v) for v in args.d.split("-"))
        dims = list(range(low, high + 1))
    else:
        dims = [int(v) for v in args.d.split(",")]
    ranges = [int(v) for v in args.ranges.split(",")]
    multipliers = [int(v) for v in args.multipliers.split(",")]
    options = {"seed": args.seed, "time_limit": args.time_limit, "biases": args.biases}
    jobs = [((d, bound, k, rep), options) for d in dims for bound in ranges for k in multipliers for rep in range(args.seeds)]
    # Big blocks first, so the pool's two workers end together.
    jobs.sort(key=lambda job: -job[0][0] * job[0][2])
    start = time.perf_counter()
    if args.jobs > 1:
        with multiprocessing.get_context("spawn").Pool(args.jobs) as pool:
            records = list(pool.imap_unordered(classify, jobs))
    else:
        records = [classify(job) for job in jobs]
    wall = time.perf_counter() - start
    records.sort(key=lambda r: (r["R"], r["d"], r["k"], r["rep"]))
    summary = summarise(records)
    report = {"command": " ".join([Path(sys.argv[0]).name] + (argv if argv is not None else sys.argv[1:])),
              "commit": _commit(), "label": args.label, "machine": f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}",
              "wall_seconds": round(wall, 1), "options": dict(options, d=dims, ranges=ranges, multipliers=multipliers, seeds=args.seeds),
              "summary": summary}
    if args.out:
        lines = ",\n".join("  " + json.dumps(record, ensure_ascii=False) for record in records)
        text = json.dumps(report, indent=1, ensure_ascii=False)[:-2] + ',\n "records": [\n' + lines + "\n ]\n}\n"
        Path(args.out).write_text(text)
    print(table(summary))
    print(frontier(records))
    print(f"wall {wall:.1f} s, {len(records)} blocks, commit {report['commit']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
