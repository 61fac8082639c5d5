"""Survey of small ReLU stacks: do they absorb their skips block-wise, only as a whole, provably not, or unknown?

Draws seeded random stacks (L = 2, d ∈ {1, 2} and widths 2–4 by default,
cycled, integer weights and biases in [−R, R], identity skips) and runs
``indexset.workflows.explore.explore`` on each with a small fitting budget.
For d ≥ 2 every block is redrawn until nondegenerate in the sense of
MATH.md §3; on R every unit row is parallel, so there a block is redrawn
only until every unit has u ≠ 0 and w ≠ 0 (each unit has a breakpoint).
Counts, per (d, n):

- ``blockwise``: every block absorbs on its own (the witnesses compose);
- ``whole_only``: some block does not absorb on its own, but Theorem 9.6
  (on R) or fitting found a residual-free stack of the same widths that the
  exact region enumeration proves equal (the first ``--keep`` of each
  (d, n) in which no block absorbs on its own are written to
  ``--instances`` with their witnesses);
- ``proven_not``: a theorem of MATH.md §9 proves that no residual-free
  stack of the same widths equals it;
- ``unknown``: none of these.

The ``--second-pass K`` unknowns with the smallest fitting error are then
explored again with a much larger budget (16 starts, 3000 steps); what
they give is reported separately and moves them to ``whole_only`` only
with an exactly checked witness.

Usage::

    python benchmarks/explore_survey.py --count 2400 --jobs 2 --out benchmarks/explore_survey.json

The same arguments always draw the same stacks.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import statistics
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path

# One BLAS thread per worker: the workers are the parallelism (set before numpy loads, inherited by spawned workers).
for _variable in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_variable, "1")

import numpy as np  # noqa: E402

REPOSITORY = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPOSITORY))

from indexset.model.instance import Instance  # noqa: E402
from indexset.model.stack import Stack  # noqa: E402
from indexset.theory.line import line_map  # noqa: E402
from indexset.theory.nondegeneracy import find_degeneracy  # noqa: E402
from indexset.workflows.explore import explore, witness_from_certificate  # noqa: E402


def shapes(options: dict) -> list:
    """The (d, n) pairs the stacks cycle through."""
    return [(d, n) for d in options["dims"] for n in options["widths"]]


def acceptable(block: Instance) -> bool:
    """Nondegenerate for d ≥ 2; on R, every unit has a breakpoint (u ≠ 0 and w ≠ 0)."""
    if block.d == 1:
        return bool(np.all(np.asarray(block.W_up) != 0) and np.all(np.asarray(block.W_down) != 0))
    return find_degeneracy(block).nondegenerate


def draw(index: int, options: dict) -> tuple[Stack, int]:
    """Stack number ``index``: its (d, n) cycles through :func:`shapes`; blocks redrawn until :func:`acceptable`."""
    seed, bound, layers, activation = options["seed"], options["bound"], options["layers"], options["activation"]
    rng = np.random.default_rng([seed, index])
    d, n = shapes(options)[index % len(shapes(options))]
    blocks, redraws = [], 0
    while len(blocks) < layers:
        block = Instance(rng.integers(-bound, bound + 1, size=(n, d)), rng.integers(-bound, bound + 1, size=(d, n)),
                         b_up=rng.integers(-bound, bound + 1, size=n), b_down=rng.integers(-bound, bound + 1, size=d),
                         activation=activation, source=f"survey stack {index}")
        if acceptable(block):
            blocks.append(block)
        else:
            redraws += 1
    return Stack(blocks, source=f"survey stack {index}"), redraws


def classify(job: tuple) -> dict:
    index, options = job
    stack, redraws = draw(index, options)
    start = time.perf_counter()
    result = explore(stack, seed=index, starts=options["starts"], iterations=options["iterations"], time_limit=options["time_limit"])
    elapsed = time.perf_counter() - start
    blocks = result.stages.get("blockwise", {}).get("blocks")
    theory = result.stages.get("theory", {})
    line = result.stages.get("line", {})
    record = {"index": index, "d": stack.d, "n": stack.n, "status": result.status,
              "monotone": line_map(stack).strictly_monotone() if stack.d == 1 else None, "blocks": blocks, "seconds": round(elapsed, 3), "redraws": redraws,
              "min_rank": theory.get("facts", {}).get("min_rank"), "theorem": (line.get("theorem") or theory.get("theorem")) if result.status == "not_absorbable" else None,
              "best_loss": result.stages.get("fit", {}).get("best_loss")}
    if result.status == "absorbable":
        record["category"] = "blockwise" if result.certificate["kind"] == "blockwise" else "whole_only"
    elif result.status == "not_absorbable":
        record["category"] = "proven_not"
    else:
        record["category"] = "unknown"
    if record["category"] == "whole_only":
        record["witness_kind"] = result.certificate["kind"]
    if record["category"] == "whole_only" and options.get("save"):
        folder = Path(options["instances"])
        folder.mkdir(parents=True, exist_ok=True)
        stack.save(folder / f"whole_only_{index}.npz")
        witness_from_certificate(stack, result.certificate).save(folder / f"whole_only_{index}_witness.npz")
        record["files"] = [f"whole_only_{index}.npz", f"whole_only_{index}_witness.npz"]
    return record


def none_absorbs(record: dict) -> bool:
    """Whether every block is proven not to absorb on its own."""
    return bool(record["blocks"]) and all(status == "not_absorbable" for status in record["blocks"])


def shape_key(record: dict) -> str:
    return f"d={record['d']},n={record['n']}"


def summarise(records: list, options: dict, seconds: float) -> dict:
    by_width = defaultdict(Counter)
    for record in records:
        by_width[shape_key(record)][record["category"]] += 1
    by_monotone = defaultdict(Counter)
    for record in records:
        if record["monotone"] is not None:
            by_monotone[f"{shape_key(record)},{'monotone' if record['monotone'] else 'not monotone'}"][record["category"]] += 1
    theorems = Counter(r["theorem"] for r in records if r["theorem"])
    unknown_losses = [r["best_loss"] for r in records if r["category"] == "unknown" and r["best_loss"] is not None]
    ranks = defaultdict(Counter)
    for record in records:
        if record["min_rank"] is not None:
            ranks[shape_key(record)][record["min_rank"]] += 1
    return {
        "options": options, "stacks": len(records), "wall_seconds": round(seconds, 1),
        "counts": {key: dict(counter) for key, counter in sorted(by_width.items())},
        "whole_only_no_block_absorbs": dict(Counter(shape_key(r) for r in records if r["category"] == "whole_only" and none_absorbs(r))),
        "counts_on_the_line": {key: dict(counter) for key, counter in sorted(by_monotone.items())},
        "totals": dict(Counter(r["category"] for r in records)),
        "theorems": dict(theorems),
        "min_rank_by_shape": {key: dict(counter) for key, counter in sorted(ranks.items())},
        "unknown_best_loss": None if not unknown_losses else {"min": min(unknown_losses), "median": statistics.median(unknown_losses),
                                                              "max": max(unknown_losses)},
        "some_block_absorbs": sum(1 for r in records if r["blocks"] and "absorbable" in r["blocks"] and r["category"] != "blockwise"),
        "redraws": sum(r["redraws"] for r in records),
        "seconds_per_stack": {"median": statistics.median(r["seconds"] for r in records), "max": max(r["seconds"] for r in records)},
        "whole_only": [r for r in records if r["category"] == "whole_only"],
    }


def table(summary: dict) -> str:
    """The BENCHMARKS.md table of a summary: one row per (d, n)."""
    lines = ["| d | n | block-wise | only as a whole (no block absorbs) | proven not | unknown |", "|---|---|---|---|---|---|"]
    for key, counts in summary["counts"].items():
        d, n = (part.split("=")[1] for part in key.split(","))
        whole = f"{counts.get('whole_only', 0)}"
        if counts.get("whole_only"):
            whole += f" ({summary['whole_only_no_block_absorbs'].get(key, 0)})"
        lines.append(f"| {d} | {n} | {counts.get('blockwise', 0)} | {whole} | {counts.get('proven_not', 0)} | {counts.get('unknown', 0)} |")
    return "\n".join(lines)


def _dump(summary: dict, records: list) -> str:
    """The summary indented, one record per line (the file stays small and diffable)."""
    lines = ",\n".join("  " + json.dumps(record, default=str) for record in records)
    return '{"summary": ' + json.dumps(summary, indent=1, default=str) + ',\n "records": [\n' + lines + "\n ]}"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=2400, help="number of stacks (default 2400)")
    parser.add_argument("--widths", default="2,3,4", help="comma-separated widths n, cycled within each d (default 2,3,4)")
    parser.add_argument("--range", dest="bound", type=int, default=3, help="weights and biases in [−R, R] (default 3)")
    parser.add_argument("--d", default="1,2", help="comma-separated input dimensions, cycled (default 1,2)")
    parser.add_argument("--layers", type=int, default=2)
    parser.add_argument("--activation", default="relu")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--starts", type=int, default=4, help="fitting starts per stack (default 4)")
    parser.add_argument("--iterations", type=int, default=200, help="Adam steps per start (default 200)")
    parser.add_argument("--time-limit", type=float, default=20.0, help="seconds per stack (default 20)")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--second-pass", type=int, default=20, help="unknowns with the smallest fitting error explored again with 16 starts × 3000 steps (default 20)")
    parser.add_argument("--instances", default=str(REPOSITORY / "instances" / "stacks"), help="folder for stacks that absorb only as a whole, with their witnesses (default instances/stacks)")
    parser.add_argument("--keep", type=int, default=2, help="stacks that absorb only as a whole written per (d, n) (default 2)")
    parser.add_argument("--out", help="write the summary and every record as JSON here")
    parser.add_argument("--table", metavar="JSON", help="print the table of an earlier result file and stop")
    args = parser.parse_args(argv)
    if args.table:
        print(table(json.loads(Path(args.table).read_text())["summary"]))
        return 0
    widths = [int(w) for w in args.widths.split(",")]
    options = {"seed": args.seed, "widths": widths, "bound": args.bound, "dims": [int(d) for d in args.d.split(",")], "layers": args.layers, "activation": args.activation,
               "starts": args.starts, "iterations": args.iterations, "time_limit": args.time_limit, "instances": args.instances}
    start = time.perf_counter()
    jobs = [(index, options) for index in range(args.count)]
    if args.jobs > 1:
        with multiprocessing.get_context("spawn").Pool(args.jobs) as pool:
            records = list(pool.imap(classify, jobs, chunksize=4))
    else:
        records = [classify(job) for job in jobs]
    unknown = sorted((r for r in records if r["category"] == "unknown" and r["best_loss"] is not None), key=lambda r: r["best_loss"])
    deeper = dict(options, starts=16, iterations=3000, time_limit=120.0)
    second = [(r["index"], deeper) for r in unknown[: args.second_pass]]
    if second:
        if args.jobs > 1:
            with multiprocessing.get_context("spawn").Pool(args.jobs) as pool:
                again = list(pool.imap(classify, second))
        else:
            again = [classify(job) for job in second]
        by_index = {r["index"]: r for r in records}
        for record in again:
            by_index[record["index"]]["second_pass"] = {"category": record["category"], "best_loss": record["best_loss"], "seconds": record["seconds"]}
            if record["category"] == "whole_only":
                by_index[record["index"]].update(record)
    kept = Counter()
    for record in records:
        if record["category"] == "whole_only" and none_absorbs(record) and kept[shape_key(record)] < args.keep and args.instances:
            kept[shape_key(record)] += 1
            again = classify((record["index"], dict(options, save=True)))
            record["files"] = again.get("files")
    summary = summarise(records, options, time.perf_counter() - start)
    summary["second_pass"] = [{"index": r["index"], "n": r["n"], "first_loss": r["best_loss"], **r["second_pass"]}
                              for r in records if "second_pass" in r]
    text = _dump(summary, records)
    if args.out:
        Path(args.out).write_text(text + "\n")
    print(json.dumps({k: v for k, v in summary.items() if k != "whole_only"}, indent=1, default=str))
    print(f"whole_only: {len(summary['whole_only'])}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
