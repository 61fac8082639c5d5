"""``indexset solve FILE [FILE ...]``: decide absorbability with proof, optionally write the witness."""

from __future__ import annotations

import argparse
import threading

from indexset.classes import DEFINITIONS
from indexset.cli.common import (
    Progress,
    StopOnInterrupt,
    add_class_option,
    add_cluster_options,
    add_witness_options,
    cluster_from_args,
    emit_json_line,
    parse_tolerance,
    readable,
    run_files,
    time_budget,
    witness_targets,
)
from indexset.errors import InputError

DESCRIPTION = "Decide whether each block can absorb its skip connection, with proof: an exact check for every yes, a proof for every no."

EPILOG = """\
exit status:
  0  absorbable: an index set S or a witness, checked exactly
  1  not absorbable: proven
  3  unknown: time limit, Ctrl-C, or no theorem or search decides
  2  bad input: one line on stderr, nothing written
  130  a second Ctrl-C
With several files each file is solved and reported in turn (a bad file is
reported on stderr, and the others are still solved); the status is 2 if any
file was bad input, else 3 if any is unknown, else 1 if any is not
absorbable, else 0.

--json prints JSON Lines: one object per file, on one line, with the key
"file" and status, class, reason, index_set, verified, count, solutions,
time_s, stages, engine, certificate, extension, halted (why the work
stopped short, if it did), distance (a bad file of a batch: status
"bad_input" and its reason).

Float weights are decided at their exact binary values; "distance" (and the
text line) brackets min over S of |c·W_down[:,S]·W_up[S,:] + A|_F by the
certified Gram bound (MATH.md §6) when σ is odd-linear and n ≤ d²
(null for exact weights).

Off a terminal, a progress line goes to stderr about every 10 s
(INDEXSET_PROGRESS_SECONDS sets another interval).
"""


def register(sub) -> None:
    """Add the ``solve`` subcommand."""
    parser = sub.add_parser("solve", help="decide whether the block can absorb its skip connection, with proof",
                            description=DESCRIPTION, epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("files", nargs="+", metavar="FILE", help="instance .npz (a block, a hyper-connection layer or a stack); several for a batch")
    parser.add_argument("--time-limit", type=float, metavar="S",
                        help="seconds; past it the answer is 'unknown'. Counts from process start; with several files each file gets S seconds (default: no limit)")
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--all", action="store_true", help="list every index set S")
    group.add_argument("--count", action="store_true", help="count every index set S")
    add_witness_options(parser)
    parser.add_argument("--tol", help="accept S when every entry of c·W_down[:,S]·W_up[S,:] + A is at most T in absolute value (absolute, on the max entry; compared exactly) and |S| ≥ d (default: exact equality)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the randomised engines (default 0)")
    parser.add_argument("--engines", help="comma-separated engines for the search stage: lattice, cpsat, brute (default lattice,cpsat)")
    add_class_option(parser)
    add_cluster_options(parser)
    parser.add_argument("--json", action="store_true", help="print JSON Lines: one object per file")
    parser.set_defaults(run=run)


def _engines(text):
    if text is None:
        return None
    from indexset.search.engines import NAMES as ENGINES

    names = [name.strip() for name in text.split(",") if name.strip()]
    unknown = [name for name in names if name not in ENGINES]
    if unknown or not names:
        raise InputError("--engines", f"unknown engine {unknown[0] if unknown else '(none)'}; choose from {', '.join(ENGINES)}")
    return names


def run(args) -> int:
    """Solve every file; exit with the status of the one file, or the batch's (:func:`indexset.cli.common.aggregate`)."""
    if len(args.files) > 1 and args.witness:
        raise InputError("--witness", f"writes one file: give one instance file, not {len(args.files)}")
    time_budget(args.time_limit)  # a bad option is refused before any work starts
    return run_files(args.files, _Job(args))


class _Job:
    """One ``solve`` call: how :func:`indexset.cli.common.run_files` loads, starts and solves."""

    def __init__(self, args) -> None:
        self.args = args
        self.stop = threading.Event()
        self.as_json = args.json
        self.tol = parse_tolerance(args.tol)
        self.engines = _engines(args.engines)
        self.targets = witness_targets(args)
        self.cluster = None

    def load(self, path: str):
        return _load(path, self.args, self.targets)

    def start(self, stack) -> None:
        # Entered at the first good file: a bad file alone is refused without importing fpylll or Dask.
        stack.enter_context(StopOnInterrupt(self.stop))
        self.cluster = stack.enter_context(cluster_from_args(self.args))

    def solve(self, path: str, instance, since) -> int:
        return _solve_file(path, instance, self, since)


def _load(path: str, args, targets):
    """The block or stack in ``path``, refused when the options cannot apply to it."""
    from indexset.model.loading import load_any
    from indexset.model.stack import Stack

    instance = load_any(path)
    if isinstance(instance, Stack):
        if args.all or args.count or args.tol is not None:
            raise InputError(path, "a stack file takes none of --all, --count, --tol")
        if targets is not None and list(targets) != ["npz"]:
            raise InputError(path, f"the witness of a stack is an .npz stack file; name it with .npz, not {args.witness!r}")
    return instance


def _solve_file(path: str, instance, job: _Job, since) -> int:
    """Solve one loaded file, write the witness and print the answer; its exit status."""
    from indexset.model.stack import Stack
    from indexset.result import ABSORBABLE
    from indexset.solver import distance, solve

    args, tol, targets = job.args, job.tol, job.targets
    is_stack = isinstance(instance, Stack)
    with Progress(f"solving {path}") as progress:
        result = solve(instance, target_class=args.target_class, time_limit=time_budget(args.time_limit, job.cluster, since),
                       find_all=args.all or args.count, tol=tol, seed=args.seed, engines=job.engines, stop=job.stop,
                       progress=progress, cluster=job.cluster)
    payload = {"file": path, **result.to_json(), "distance": distance(instance, result, tol)}
    if args.count:
        payload["solutions"] = None
    if targets is not None and result.status == ABSORBABLE:
        from indexset.exact.witness_files import write_block_witness, write_stack_witness

        if is_stack:
            payload["witness"] = write_stack_witness(instance, result, args.witness)
        else:
            payload["witness"] = write_block_witness(instance, result, args.witness, args.format)
    if args.json:
        emit_json_line(payload)
    else:
        _print(instance, result, payload, args)
    return result.exit_code


def _print(instance, result, payload: dict, args) -> None:
    from indexset.text import ranges

    label = {"absorbable": "ABSORBABLE", "not_absorbable": "NOT ABSORBABLE", "unknown": "UNKNOWN"}[result.status]
    print(f"{payload['file']}: {label}" + (" (extension beyond the paper)" if result.extension else ""))
    print(f"  class    {result.target_class}: {DEFINITIONS[result.target_class]}")
    print(f"  why      {readable(result.reason)}")
    if result.index_set is not None:
        print(f"  S        {{{ranges(result.index_set)}}} (|S| = {len(result.index_set)}, d = {instance.d}, verified exactly: {'yes' if result.verified else 'no'})")
    if result.count is not None:
        print(f"  count    {result.count} index set(s)")
    if args.all and result.solutions:
        for support in result.solutions:
            print(f"           {{{ranges(support)}}}")
    stages = result.stages
    if "reduce" in stages:
        r = stages["reduce"]
        print(f"  algebra  rank M = {r['rank']} of n = {r['n']}, kernel dimension {r['kernel_dimension']}")
    if payload["distance"] is not None:
        for line in _distance_lines(payload["distance"]):
            print(f"  distance {line}")
    if result.engine:
        print(f"  engine   {result.engine}, {result.time_s:.3f} s")
    if "witness" in payload:
        w = payload["witness"]
        print(f"  witness  {w['summary']}" + (f"; written to {', '.join(w['written'])}" if w["written"] else "; NOT written"))


def _distance_lines(distance) -> list[str]:
    """The distance entry (a block's, or a stack's per block) as text lines."""
    if isinstance(distance, list):
        return [f"block {entry['block']}: {_distance_text(entry)}" for entry in distance]
    return [_distance_text(distance)]


def _distance_text(entry: dict) -> str:
    if not entry["applies"]:
        return f"not bounded: {entry['why']}"
    from indexset.text import ranges

    if entry["upper"] == 0:
        return "0: (★) holds exactly"
    nearest = ranges(entry["nearest_S"])
    nearest = f"{{{nearest}}}" if len(nearest) <= 60 else f"|S| = {len(entry['nearest_S'])} (listed in --json)"
    return (f"min over S of ‖c·W_down[:,S]·W_up[S,:] + A‖_F in [{entry['lower']:.4g}, {entry['upper']:.4g}] "
            f"(relative to ‖A‖_F: [{entry['relative_lower']:.3g}, {entry['relative_upper']:.3g}]; certified, MATH.md §6; "
            f"upper bound at S = {nearest})")
