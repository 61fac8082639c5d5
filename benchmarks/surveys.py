"""Surveys of seeded families through the decisions: the ``degenerate`` and ``stacks`` suites.

``degenerate``
    Low-precision ReLU blocks with identity skip, integer weights in
    [−R, R] (R = 1: ternary), n = k·d for the multipliers k, each solved in
    process with ``indexset.solve`` under a time limit, ``--jobs`` at a
    time. Such weights are often degenerate (collinear or zero rows, zero
    columns), where (★) is sufficient but not necessary and MATH.md §7
    decides. Blocks cycle through four variants per cell: target class
    affine / bias-free × zero / small integer biases. Two views: by R and d,
    blocks, degenerate blocks, answers and the median / max seconds of the
    whole decision (``survey``); and every case §7 leaves open, with the
    size of the work no tool here affords (``frontier``).
``stacks``
    ``indexset explore`` on seeded two-block ReLU stacks with identity
    skips and integer weights in [−3, 3], d ∈ {1, 2}, n ∈ {2, 3, 4}
    (``survey``: block-wise, only as a whole, proven not, unknown; MATH.md
    §9.7), and its time against the width on R (``width``): the
    ``whole-stack`` family, absorbable, and random strictly monotone
    two-block stacks that Theorem 9.6 proves not absorbable.

The same options always draw the same blocks and stacks.
"""

from __future__ import annotations

import multiprocessing
import os
import statistics
import time
from collections import Counter, defaultdict
from pathlib import Path

# One BLAS thread per worker: the workers are the parallelism (set before numpy loads, inherited by spawned workers).
for _variable in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_variable, "1")

import numpy as np  # noqa: E402


def _pool(function, jobs: list, processes: int, chunksize: int = 1) -> list:
    """``function`` over the jobs, in ``processes`` spawned workers (in order), or here when one."""
    if processes > 1:
        with multiprocessing.get_context("spawn").Pool(processes) as pool:
            return list(pool.imap(function, jobs, chunksize=chunksize))
    return [function(job) for job in jobs]


def _range(text: str) -> list:
    if "-" in text:
        low, high = (int(v) for v in text.split("-"))
        return list(range(low, high + 1))
    return [int(v) for v in text.split(",")]


# ------------------------------------------------------------------ degenerate blocks


VARIANTS = (("affine", False), ("bias-free", False), ("affine", True), ("bias-free", True))
"""(target class, small biases) cycled over the seeds of a cell."""


def draw_block(d: int, bound: int, k: int, rep: int, seed: int, biases: bool):
    """Block ``rep`` of cell (d, R, k): integer weights in [−R, R], identity skip."""
    from indexset.model.instance import Instance

    rng = np.random.default_rng([seed, d, bound, k, rep])
    n = k * d
    up, down = rng.integers(-bound, bound + 1, size=(n, d)), rng.integers(-bound, bound + 1, size=(d, n))
    b_up = rng.integers(-bound, bound + 1, size=n) if biases else None
    b_down = rng.integers(-bound, bound + 1, size=d) if biases else None
    return Instance(up, down, b_up=b_up, b_down=b_down, source=f"survey d={d} R={bound} n={n} rep={rep}")


def kind_of(result) -> str:
    """What kind of answer a result is: S found, §7 witness, §7 proof, another theorem, unknown from §7 or from the search."""
    if result.status == "absorbable":
        return "S" if result.index_set is not None else "§7 witness"
    if result.status == "not_absorbable":
        return "§7 proof" if result.engine == "degenerate" else "theorem"
    if "not necessary, for degenerate weights" in result.reason or "degenerate-weights decision" in result.reason:
        return "unknown §7"
    return "unknown search"


def classify_block(job: tuple) -> dict:
    """Solve one block and record its answer, its seconds, its stages' timings and the §7 facts (classes, spare units, open cases)."""
    from indexset.solver import solve
    from indexset.theory.nondegeneracy import find_degeneracy

    (d, bound, k, rep), options = job
    target_class, biases = VARIANTS[rep % len(VARIANTS)]
    instance = draw_block(d, bound, k, rep, options["seed"], biases)
    degenerate = not find_degeneracy(instance).nondegenerate
    start = time.perf_counter()
    result = solve(instance, target_class=target_class, time_limit=options["time_limit"])
    seconds = time.perf_counter() - start
    stages = result.stages
    section7 = stages.get("degenerate") if isinstance(stages.get("degenerate"), dict) else {}

    def stage_seconds(key):
        value = stages.get(key)
        return value.get("time_s") if isinstance(value, dict) else None

    return {"d": d, "R": bound, "n": instance.n, "k": k, "rep": rep, "class": target_class, "biases": biases, "degenerate": degenerate, "status": result.status,
            "kind": kind_of(result), "seconds": round(seconds, 4), "system_s": stage_seconds("system"), "reduce_s": stage_seconds("reduce"),
            "prune_s": stage_seconds("prune"), "section7_s": section7.get("time_s", section7.get("decide_s")), "classes": section7.get("classes"),
            "spare": section7.get("spare"), "open": section7.get("open"), "reason": result.reason[-300:] if result.status == "unknown" else None}


def _cell(records: list) -> dict:
    seconds = [r["seconds"] for r in records]
    degenerate = [r for r in records if r["degenerate"]]
    unknown = [r for r in records if r["status"] == "unknown"]
    return {"blocks": len(records), "degenerate": len(degenerate), "unknown": len(unknown), "unknown_section7": sum(r["kind"] == "unknown §7" for r in unknown),
            "absorbable": sum(r["status"] == "absorbable" for r in records), "by_section7": sum(r["kind"] in ("§7 witness", "§7 proof") for r in records),
            "median_s": round(statistics.median(seconds), 3) if seconds else None, "max_s": round(max(seconds), 3) if seconds else None,
            "degenerate_median_s": round(statistics.median([r["seconds"] for r in degenerate]), 3) if degenerate else None,
            "degenerate_max_s": round(max(r["seconds"] for r in degenerate), 3) if degenerate else None}


def summarise_blocks(records: list) -> dict:
    """The cells by R and d, each with "all" first, numbers in numeric order."""
    cells = defaultdict(list)
    for record in records:
        for key in ((record["R"], record["d"]), (record["R"], "all"), ("all", "all")):
            cells[key].append(record)
    order = sorted(cells, key=lambda key: tuple((1, v) if isinstance(v, int) else (0, 0) for v in key))
    return {f"R={R} d={d}": _cell(cells[(R, d)]) for R, d in order}


def survey_table(summary: dict) -> tuple:
    header = ["cell", "blocks", "degenerate", "absorbable", "by §7", "unknown (§7)", "unknown rate", "median s", "max s", "degenerate median s", "degenerate max s"]
    rows = [[name, c["blocks"], c["degenerate"], c["absorbable"], c["by_section7"], f"{c['unknown']} ({c['unknown_section7']})",
             f"{c['unknown'] / c['blocks']:.1%}" if c["blocks"] else "-", c["median_s"], c["max_s"], c["degenerate_median_s"], c["degenerate_max_s"]]
            for name, c in summary.items()]
    return header, rows


def frontier_table(records: list) -> tuple:
    """Each open §7 case: the block's cell, classes and spare units, the level, and the size of its work."""
    from indexset.text import count

    def size(work: dict, key: str) -> str:
        return "–" if work.get(key) is None else count(work[key], 2)

    header = ["d", "R", "n", "classes", "spare", "level u (q)", "kind", "terms", "coefficient vectors", "rows per half", "limit", "Lemma 7.7e systems"]
    rows = []
    for r in sorted(records, key=lambda r: (r["d"], r["R"], r["n"], r["rep"])):
        for case in r.get("open") or []:
            work = case.get("work") or {}
            rows.append([r["d"], r["R"], r["n"], r["classes"], r["spare"], f"{case['u']} ({case['q']})", case["kind"], work.get("terms", "–"),
                         size(work, "coefficient_vectors"), size(work, "half_rows"), work.get("limit", "–"), size(work.get("short") or {}, "systems")])
    return header, rows


class Degenerate:
    """How often, and how fast, degenerate low-precision ReLU blocks are decided (MATH.md §7), and each case left open."""

    def arguments(self, parser) -> None:
        parser.add_argument("--d", default="2-10", help="dimensions: lo-hi or a comma list (default %(default)s)")
        parser.add_argument("--ranges", default="1,2,3", help="weight ranges R, comma list (default %(default)s)")
        parser.add_argument("--multipliers", default="2,4,8,12,16", help="widths n = k·d for these k (default %(default)s)")
        parser.add_argument("--seeds", type=int, default=4, help="blocks per cell (default 4: the four variants once each)")
        parser.add_argument("--seed", type=int, default=0)
        parser.add_argument("--time-limit", type=float, default=30.0, help="seconds per block (default 30)")
        parser.add_argument("--jobs", type=int, default=2, help="blocks at a time (default 2)")

    def measure(self, args):
        options = {"seed": args.seed, "time_limit": args.time_limit}
        jobs = [((d, bound, k, rep), options) for d in _range(args.d) for bound in _range(args.ranges) for k in _range(args.multipliers) for rep in range(args.seeds)]
        jobs.sort(key=lambda job: -job[0][0] * job[0][2])  # big blocks first, so the workers end together
        start = time.perf_counter()
        records = sorted(_pool(classify_block, jobs, args.jobs), key=lambda r: (r["R"], r["d"], r["k"], r["rep"]))
        yield "survey", {"options": dict(options, d=_range(args.d), ranges=_range(args.ranges), multipliers=_range(args.multipliers), seeds=args.seeds),
                         "wall_seconds": round(time.perf_counter() - start, 1), "summary": summarise_blocks(records), "records": records}

    def table(self, name: str, part: dict) -> dict:
        return {"survey": survey_table(part["summary"]), "frontier": frontier_table(part["records"])}


# ------------------------------------------------------------------ stacks: the survey


def acceptable(block) -> bool:
    """Nondegenerate for d ≥ 2; on R, every unit has a breakpoint (u ≠ 0 and w ≠ 0)."""
    from indexset.theory.nondegeneracy import find_degeneracy

    if block.d == 1:
        return bool(np.all(np.asarray(block.W_up) != 0) and np.all(np.asarray(block.W_down) != 0))
    return find_degeneracy(block).nondegenerate


def draw_stack(index: int, options: dict):
    """Stack number ``index``: its (d, n) cycles through every pair; blocks redrawn until :func:`acceptable`."""
    from indexset.model.instance import Instance
    from indexset.model.stack import Stack

    bound, shapes = options["bound"], [(d, n) for d in options["dims"] for n in options["widths"]]
    rng = np.random.default_rng([options["seed"], index])
    d, n = shapes[index % len(shapes)]
    blocks, redraws = [], 0
    while len(blocks) < options["layers"]:
        block = Instance(rng.integers(-bound, bound + 1, size=(n, d)), rng.integers(-bound, bound + 1, size=(d, n)), b_up=rng.integers(-bound, bound + 1, size=n),
                         b_down=rng.integers(-bound, bound + 1, size=d), activation=options["activation"], source=f"survey stack {index}")
        if acceptable(block):
            blocks.append(block)
        else:
            redraws += 1
    return Stack(blocks, source=f"survey stack {index}"), redraws


def classify_stack(job: tuple) -> dict:
    """Explore one stack: block-wise, only as a whole (witness exactly checked), proven not, or unknown; with the stack and witness saved when asked."""
    from indexset.theory.line import line_map
    from indexset.workflows.explore import explore, witness_from_certificate

    index, options = job
    stack, redraws = draw_stack(index, options)
    start = time.perf_counter()
    result = explore(stack, target_class=options.get("class", "affine"), seed=index, starts=options["starts"], iterations=options["iterations"],
                     time_limit=options["time_limit"])
    theory, line = result.stages.get("theory", {}), result.stages.get("line", {})
    record = {"index": index, "d": stack.d, "n": stack.n, "status": result.status, "monotone": line_map(stack).strictly_monotone() if stack.d == 1 else None,
              "blocks": result.stages.get("blockwise", {}).get("blocks"), "seconds": round(time.perf_counter() - start, 3), "redraws": redraws,
              "min_rank": theory.get("facts", {}).get("min_rank"), "theorem": (line.get("theorem") or theory.get("theorem")) if result.status == "not_absorbable" else None,
              "best_loss": result.stages.get("fit", {}).get("best_loss")}
    if result.status == "absorbable":
        record["category"] = "blockwise" if result.certificate["kind"] == "blockwise" else "whole_only"
    else:
        record["category"] = "proven_not" if result.status == "not_absorbable" else "unknown"
    if record["category"] == "whole_only":
        record["witness_kind"] = result.certificate["kind"]
        if options.get("save"):
            folder = Path(options["instances"])
            folder.mkdir(parents=True, exist_ok=True)
            stack.save(folder / f"whole_only_{index}.npz")
            witness_from_certificate(stack, result.certificate).save(folder / f"whole_only_{index}_witness.npz")
            record["files"] = [f"whole_only_{index}.npz", f"whole_only_{index}_witness.npz"]
    return record


def none_absorbs(record: dict) -> bool:
    """Whether every block is proven not to absorb on its own."""
    return bool(record["blocks"]) and all(status == "not_absorbable" for status in record["blocks"])


def _shape(record: dict) -> str:
    return f"d={record['d']},n={record['n']}"


def summarise_stacks(records: list, options: dict, seconds: float) -> dict:
    by_shape, on_the_line, ranks = defaultdict(Counter), defaultdict(Counter), defaultdict(Counter)
    for r in records:
        by_shape[_shape(r)][r["category"]] += 1
        if r["monotone"] is not None:
            on_the_line[f"{_shape(r)},{'monotone' if r['monotone'] else 'not monotone'}"][r["category"]] += 1
        if r["min_rank"] is not None:
            ranks[_shape(r)][r["min_rank"]] += 1
    losses = [r["best_loss"] for r in records if r["category"] == "unknown" and r["best_loss"] is not None]
    return {"options": options, "stacks": len(records), "wall_seconds": round(seconds, 1), "counts": {k: dict(v) for k, v in sorted(by_shape.items())},
            "whole_only_no_block_absorbs": dict(Counter(_shape(r) for r in records if r["category"] == "whole_only" and none_absorbs(r))),
            "counts_on_the_line": {k: dict(v) for k, v in sorted(on_the_line.items())}, "totals": dict(Counter(r["category"] for r in records)),
            "theorems": dict(Counter(r["theorem"] for r in records if r["theorem"])), "min_rank_by_shape": {k: dict(v) for k, v in sorted(ranks.items())},
            "unknown_best_loss": {"min": min(losses), "median": statistics.median(losses), "max": max(losses)} if losses else None,
            "some_block_absorbs": sum(1 for r in records if r["blocks"] and "absorbable" in r["blocks"] and r["category"] != "blockwise"),
            "redraws": sum(r["redraws"] for r in records), "seconds_per_stack": {"median": statistics.median(r["seconds"] for r in records), "max": max(r["seconds"] for r in records)},
            "whole_only": [r for r in records if r["category"] == "whole_only"]}


def explore_table(summary: dict) -> tuple:
    """One row per (d, n): block-wise, only as a whole (of them, no block absorbs), proven not, unknown."""
    rows = []
    for key, counts in summary["counts"].items():
        d, n = (part.split("=")[1] for part in key.split(","))
        whole = f"{counts.get('whole_only', 0)}" + (f" ({summary['whole_only_no_block_absorbs'].get(key, 0)})" if counts.get("whole_only") else "")
        rows.append([d, n, counts.get("blockwise", 0), whole, counts.get("proven_not", 0), counts.get("unknown", 0)])
    return ["d", "n", "block-wise", "only as a whole (no block absorbs)", "proven not", "unknown"], rows


def explore_survey(args) -> dict:
    """The survey: every stack explored; the unknowns with the smallest fitting error explored again with 16 starts × 3000 steps."""
    options = {"seed": args.seed, "widths": _range(args.widths), "bound": args.range, "dims": _range(args.dims), "layers": args.layers, "activation": "relu",
               "starts": args.starts, "iterations": args.iterations, "time_limit": args.time_limit, "instances": args.instances, "class": args.target_class}
    start = time.perf_counter()
    records = _pool(classify_stack, [(index, options) for index in range(args.count)], args.jobs, chunksize=4)
    unknown = sorted((r for r in records if r["category"] == "unknown" and r["best_loss"] is not None), key=lambda r: r["best_loss"])
    deeper = dict(options, starts=16, iterations=3000, time_limit=120.0)
    by_index = {r["index"]: r for r in records}
    for record in _pool(classify_stack, [(r["index"], deeper) for r in unknown[: args.second_pass]], args.jobs):
        by_index[record["index"]]["second_pass"] = {"category": record["category"], "best_loss": record["best_loss"], "seconds": record["seconds"]}
        if record["category"] == "whole_only":  # moved only with an exactly checked witness
            by_index[record["index"]].update(record)
    kept = Counter()
    for record in records:
        if args.instances and record["category"] == "whole_only" and none_absorbs(record) and kept[_shape(record)] < args.keep:
            kept[_shape(record)] += 1
            record["files"] = classify_stack((record["index"], dict(options, save=True))).get("files")
    summary = summarise_stacks(records, options, time.perf_counter() - start)
    summary["second_pass"] = [{"index": r["index"], "n": r["n"], "first_loss": r["best_loss"], **r["second_pass"]} for r in records if "second_pass" in r]
    return {"summary": summary, "records": records}


# ------------------------------------------------------------------ stacks: time against the width on R


def _explored(stack) -> tuple:
    from indexset.workflows.explore import explore

    start = time.perf_counter()
    result = explore(stack, starts=1, iterations=1, seed=0, time_limit=600)
    return result.status, time.perf_counter() - start


def _line_block(rng, n: int):
    """Integer kinks drawn without repetition from [−3n, 3n]; weights in [−3, 3] ∖ {0}."""
    from indexset.model.instance import Instance

    up = rng.choice([-2, -1, 1, 2], size=n)
    nonzero = [v for v in range(-3, 4) if v]
    return Instance(up.reshape(n, 1), rng.choice(nonzero, size=(1, n)), skip=np.array([[rng.choice(nonzero)]]),
                    b_up=-up * rng.choice(np.arange(-3 * n, 3 * n + 1), size=n, replace=False))


def line_negatives(n: int, count: int, seed: int, folding: bool = False) -> list:
    """Random two-block stacks on R that §9.5 proves not absorbable.

    Strictly monotone with m ≥ 2n − 1 breakpoints (Theorem 9.6), or with
    ``folding`` not monotone and without a zero slope (Theorem 9.12).
    """
    from indexset.model.stack import Stack
    from indexset.result import NOT_ABSORBABLE
    from indexset.theory import line_stacks
    from indexset.theory.line import line_map

    def shaped(phi) -> bool:
        if folding:
            return not phi.strictly_monotone() and all(slope != 0 for slope in phi.slopes)
        return phi.strictly_monotone() and len(phi.breakpoints) >= 2 * n - 1

    rng, found = np.random.default_rng([seed, n]), []
    for _ in range(20000):
        stack = Stack([_line_block(rng, n) for _ in range(2)])
        if shaped(line_map(stack)) and line_stacks.decide(stack).status == NOT_ABSORBABLE:
            found.append(stack)
        if len(found) >= count:
            break
    return found


def _width_row(kind: str, n: int, runs: list) -> dict:
    seconds = [s for _, s in runs]
    return {"kind": kind, "n": n, "statuses": sorted({st for st, _ in runs}), "runs": len(runs),
            "median_s": round(statistics.median(seconds), 4) if seconds else None, "max_s": round(max(seconds), 4) if seconds else None}


def line_width_table(rows: list) -> tuple:
    """Widths across, one line per kind (median seconds)."""
    widths = sorted({row["n"] for row in rows})
    by = {(row["kind"], row["n"]): row for row in rows}
    lines = []
    for kind, label in (("whole", "whole-stack, median s"), ("negative", "proven negative, monotone (Thm 9.6), median s"),
                        ("fold-negative", "proven negative, folding (Thm 9.12), median s")):
        cells = [by.get((kind, n), {}).get("median_s") for n in widths]
        lines.append([label] + ["–" if c is None else f"{c:.2g}" for c in cells])
    return ["n", *widths], lines


class Stacks:
    """``indexset explore`` on seeded small ReLU stacks (MATH.md §9), and its time against the width on R."""

    def arguments(self, parser) -> None:
        parser.add_argument("--part", default="survey,width", help="comma list from survey, width (default %(default)s)")
        parser.add_argument("--count", type=int, default=2400, help="survey: stacks (default 2400)")
        parser.add_argument("--dims", default="1,2", help="survey: input dimensions d, cycled (default %(default)s)")
        parser.add_argument("--widths", default="2,3,4", help="survey: widths n, cycled within each d (default %(default)s)")
        parser.add_argument("--range", type=int, default=3, help="survey: weights and biases in [−R, R] (default 3)")
        parser.add_argument("--layers", type=int, default=2, help="survey: blocks per stack (default 2)")
        parser.add_argument("--class", dest="target_class", choices=("affine", "bias-free"), default="affine",
                            help="survey: the residual-free blocks that count (default %(default)s)")
        parser.add_argument("--seed", type=int, default=0)
        parser.add_argument("--starts", type=int, default=4, help="survey: fitting starts per stack (default 4)")
        parser.add_argument("--iterations", type=int, default=200, help="survey: Adam steps per start (default 200)")
        parser.add_argument("--time-limit", type=float, default=20.0, help="survey: seconds per stack (default 20)")
        parser.add_argument("--second-pass", type=int, default=20, help="survey: unknowns explored again with 16 starts × 3000 steps (default 20)")
        parser.add_argument("--instances", help="survey: write stacks that absorb only as a whole, with their witnesses, to this folder (default: none)")
        parser.add_argument("--keep", type=int, default=2, help="survey: such stacks written per (d, n) (default 2)")
        parser.add_argument("--jobs", type=int, default=2, help="survey: stacks at a time (default 2)")
        parser.add_argument("--line-widths", default="2,3,4,5,6,7,8,10,12", help="width: widths of the whole-stack family (default %(default)s)")
        parser.add_argument("--negative-max", type=int, default=8, help="width: largest width of the negatives, monotone and folding (default 8)")
        parser.add_argument("--line-seeds", type=int, default=3, help="width: stacks per width and kind (default 3)")

    def measure(self, args):
        parts = args.part.split(",")
        if "survey" in parts:  # one table per depth and class: survey (two blocks, affine), survey_L3, survey_L3_bias_free, ...
            name = "survey" + (f"_L{args.layers}" if args.layers != 2 else "") + ("_bias_free" if args.target_class == "bias-free" else "")
            yield name, explore_survey(args)
        if "width" in parts:
            from indexset.workflows import construct

            rows = [_width_row("whole", n, [_explored(construct.whole_stack(n=n, seed=s)) for s in range(args.line_seeds)]) for n in _range(args.line_widths)]
            rows += [_width_row("negative", n, [_explored(s) for s in line_negatives(n, args.line_seeds, 5)]) for n in range(2, args.negative_max + 1)]
            rows += [_width_row("fold-negative", n, [_explored(s) for s in line_negatives(n, args.line_seeds, 5, folding=True)])
                     for n in range(2, args.negative_max + 1)]
            yield "width", {"rows": rows}

    def table(self, name: str, part: dict) -> dict:
        return {name: explore_table(part["summary"]) if name.startswith("survey") else line_width_table(part["rows"])}


SUITES = {"degenerate": Degenerate(), "stacks": Stacks()}
