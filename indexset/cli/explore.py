"""``indexset explore STACK.npz``: does a ReLU / leaky-ReLU stack absorb its skips as a whole? (MATH.md §9)."""

from __future__ import annotations

import argparse
import threading

from indexset.classes import DEFINITIONS
from indexset.cli.common import Progress, StopOnInterrupt, add_class_option, emit_json, time_budget
from indexset.errors import InputError

EPILOG = """\
exit status:
  0  absorbable: a residual-free witness stack, checked equal exactly on every region
  1  not absorbable: a theorem of MATH.md §9 (or the block's own proof for a single block)
  3  unknown: time limit, Ctrl-C, or no theorem and no fit decides; the best fit is reported
  2  bad input: one line on stderr, nothing written
  130  a second Ctrl-C
"""


def register(sub) -> None:
    """Add the ``explore`` subcommand."""
    parser = sub.add_parser(
        "explore",
        help="search for a residual-free stack of the same widths equal to a ReLU/leaky-ReLU stack, checked exactly (MATH.md §9)",
        description="Decide whether a stack of ReLU or leaky-ReLU blocks equals a residual-free stack of the\n"
                    "same widths: block by block first, then on R the decisions of MATH.md §9.5, then\n"
                    "the necessary conditions of MATH.md §9, then seeded fitting; every witness is checked\n"
                    "exactly on every linear region.",
        epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("file", help="stack .npz (a single block is a stack of one)")
    add_class_option(parser)
    parser.add_argument("--seed", type=int, default=0, help="seed of every random choice (sample points, starts; default 0)")
    parser.add_argument("--starts", type=int, default=16, help="fitting starts, the first ones the block-wise pieces (default 16)")
    parser.add_argument("--iterations", type=int, default=3000, help="Adam steps per start at most (default 3000)")
    parser.add_argument("--time-limit", type=float, metavar="S", help="seconds; past it the answer is 'unknown' with what is known")
    parser.add_argument("--witness", metavar="OUT", help="write the exactly checked residual-free witness stack to OUT (.npz)")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.set_defaults(run=run)


def run(args) -> int:
    """Exit 0 absorbable (exact witness), 1 not absorbable (a theorem of MATH.md §9), 3 unknown."""
    from indexset.model.loading import load_any
    from indexset.result import ABSORBABLE
    from indexset.workflows.explore import check_stack, explore, witness_from_certificate

    if args.seed < 0:
        raise InputError("--seed", f"must be ≥ 0, got {args.seed}")
    if args.starts < 1:
        raise InputError("--starts", f"must be ≥ 1, got {args.starts}")
    if args.iterations < 1:
        raise InputError("--iterations", f"must be ≥ 1, got {args.iterations}")
    stack = check_stack(load_any(args.file))
    time_budget(args.time_limit)  # a bad --time-limit is refused before any work starts
    stop = threading.Event()
    with StopOnInterrupt(stop), Progress(f"exploring {args.file}") as progress:
        result = explore(stack, target_class=args.target_class, seed=args.seed, starts=args.starts, iterations=args.iterations,
                         time_limit=time_budget(args.time_limit), stop=stop, progress=progress)
    payload = result.to_json()
    if args.witness and result.status == ABSORBABLE:
        witness = witness_from_certificate(stack, result.certificate)
        witness.save(args.witness)
        payload["witness"] = {"written": [args.witness], "summary": result.certificate["comparison"]["reason"]}
    if args.json:
        emit_json(payload)
    else:
        _print(result, payload, args)
    return result.exit_code


def _print(result, payload: dict, args) -> None:
    label = {"absorbable": "ABSORBABLE", "not_absorbable": "NOT ABSORBABLE", "unknown": "UNKNOWN"}[result.status]
    print(f"{args.file}: {label}" + (" (extension beyond the paper)" if result.extension else ""))
    print(f"  class    {result.target_class}: {DEFINITIONS[result.target_class]}")
    print(f"  why      {result.reason}")
    fit = result.stages.get("fit")
    if fit:
        best = "n/a" if fit["best_loss"] is None else f"{fit['best_loss']:.3g}"
        print(f"  fit      {fit['starts']} starts, best relative error {best}, {fit.get('exact_checks', 0)} exact check(s)")
    comparison = result.stages.get("comparison")
    if comparison:
        print(f"  regions  {comparison['regions']} visited")
    print(f"  time     {result.time_s:.2f} s")
    if "witness" in payload:
        print(f"  witness  written to {', '.join(payload['witness']['written'])}")
