"""Time of ``indexset explore`` on stacks on R against the width: the ``whole-stack`` family and proven negatives.

- ``whole``: :func:`indexset.workflows.construct.whole_stack` at widths
  ``--widths``, seeds 0 … ``--seeds`` − 1, each explored once (absorbable);
- ``negative``: seeded random two-block ReLU stacks on R whose composite
  is strictly monotone with m ≥ 2n − 1 breakpoints and that Theorem 9.6
  proves not absorbable, ``--seeds`` per width up to ``--negative-max``.

Usage::

    python benchmarks/line_width.py --out benchmarks/line_width.json

Prints one line per width; the same arguments draw the same stacks.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

import numpy as np

REPOSITORY = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPOSITORY))

from indexset.model.instance import Instance  # noqa: E402
from indexset.model.stack import Stack  # noqa: E402
from indexset.result import NOT_ABSORBABLE  # noqa: E402
from indexset.theory import line_stacks  # noqa: E402
from indexset.theory.line import line_map  # noqa: E402
from indexset.workflows import construct  # noqa: E402
from indexset.workflows.explore import explore  # noqa: E402


def timed(stack: Stack) -> tuple[str, float]:
    start = time.perf_counter()
    result = explore(stack, starts=1, iterations=1, seed=0, time_limit=600)
    return result.status, time.perf_counter() - start


def random_block(rng, n: int) -> Instance:
    """Integer kinks drawn without repetition from [−3n, 3n]; weights in [−3, 3] ∖ {0}."""
    up = rng.choice([-2, -1, 1, 2], size=n)
    b_up = -up * rng.choice(np.arange(-3 * n, 3 * n + 1), size=n, replace=False)
    nonzero = [v for v in range(-3, 4) if v]
    return Instance(up.reshape(n, 1), rng.choice(nonzero, size=(1, n)), skip=np.array([[rng.choice(nonzero)]]), b_up=b_up)


def negatives(n: int, count: int, seed: int) -> list:
    rng, found = np.random.default_rng([seed, n]), []
    for _ in range(20000):
        stack = Stack([random_block(rng, n) for _ in range(2)])
        phi = line_map(stack)
        if phi.strictly_monotone() and len(phi.breakpoints) >= 2 * n - 1 and line_stacks.decide(stack).status == NOT_ABSORBABLE:
            found.append(stack)
        if len(found) >= count:
            break
    return found


def row(kind: str, n: int, runs: list) -> dict:
    seconds = [s for _, s in runs]
    return {"kind": kind, "n": n, "statuses": sorted({st for st, _ in runs}), "runs": len(runs),
            "median_s": round(statistics.median(seconds), 4) if seconds else None, "max_s": round(max(seconds), 4) if seconds else None}


def table(rows: list) -> str:
    """The BENCHMARKS.md table of the rows: widths across, one line per kind (median seconds)."""
    widths = sorted({row["n"] for row in rows})
    by_kind = {(row["kind"], row["n"]): row for row in rows}
    lines = ["| n | " + " | ".join(str(n) for n in widths) + " |", "|---|" + "---|" * len(widths)]
    for kind, label in (("whole", "whole-stack, median s"), ("negative", "proven negative, median s")):
        cells = [by_kind.get((kind, n), {}).get("median_s") for n in widths]
        lines.append(f"| {label} | " + " | ".join("–" if c is None else f"{c:.2g}" for c in cells) + " |")
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--widths", default="2,3,4,5,6,7,8,10,12", help="widths of the whole-stack family (default 2,…,8,10,12)")
    parser.add_argument("--negative-max", type=int, default=8, help="largest width for the negatives (default 8)")
    parser.add_argument("--seeds", type=int, default=3, help="stacks per width and kind (default 3)")
    parser.add_argument("--seed", type=int, default=5)
    parser.add_argument("--out", help="write the rows as JSON here")
    parser.add_argument("--table", metavar="JSON", help="print the table of an earlier result file and stop")
    args = parser.parse_args(argv)
    if args.table:
        print(table(json.loads(Path(args.table).read_text())["rows"]))
        return 0
    rows = []
    for n in (int(w) for w in args.widths.split(",")):
        rows.append(row("whole", n, [timed(construct.whole_stack(n=n, seed=s)) for s in range(args.seeds)]))
        print(json.dumps(rows[-1]), flush=True)
    for n in range(2, args.negative_max + 1):
        rows.append(row("negative", n, [timed(s) for s in negatives(n, args.seeds, args.seed)]))
        print(json.dumps(rows[-1]), flush=True)
    if args.out:
        Path(args.out).write_text(json.dumps({"command": " ".join(["python", "benchmarks/line_width.py", *(argv or sys.argv[1:])]),
                                              "rows": rows}, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
