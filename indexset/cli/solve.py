"""``indexset solve FILE``: decide absorbability with proof, optionally write the witness."""

from __future__ import annotations

import threading

from indexset.classes import DEFINITIONS
from indexset.cli.common import Progress, StopOnInterrupt, add_class_option, add_cluster_options, cluster_from_args, emit_json, parse_tolerance, time_budget
from indexset.errors import InputError


def register(sub) -> None:
    """Add the ``solve`` subcommand."""
    parser = sub.add_parser("solve", help="decide whether the block can absorb its skip connection, with proof")
    parser.add_argument("file", help="instance .npz")
    parser.add_argument("--time-limit", type=float, metavar="S", help="seconds; past it the answer is 'unknown'")
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--all", action="store_true", help="list every index set S")
    group.add_argument("--count", action="store_true", help="count every index set S")
    parser.add_argument("--witness", metavar="OUT", help="write the residual-free witness block here (.npz)")
    parser.add_argument("--format", choices=("npz", "safetensors"), default="npz", help="witness format; safetensors also writes the .npz")
    parser.add_argument("--tol", help="accept S when every entry of c·W_down[:,S]·W_up[S,:] + A is at most T in absolute value (absolute, on the max entry; compared exactly) and |S| ≥ d")
    parser.add_argument("--seed", type=int, default=0, help="seed of the randomised engines")
    parser.add_argument("--engines", help="comma-separated engines for the search stage: lattice, cpsat, brute (default lattice,cpsat)")
    add_class_option(parser)
    add_cluster_options(parser)
    parser.add_argument("--json", action="store_true", help="print one JSON object")
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
    """Exit 0 absorbable, 1 not absorbable (proven), 3 unknown."""
    from indexset.model.loading import load_any
    from indexset.model.stack import Stack
    from indexset.result import ABSORBABLE
    from indexset.solver import solve

    instance = load_any(args.file)
    is_stack = isinstance(instance, Stack)
    if is_stack and (args.all or args.count or args.tol is not None or args.format != "npz"):
        raise InputError(args.file, "a stack file takes none of --all, --count, --tol, --format safetensors")
    time_budget(args.time_limit)  # a bad --time-limit is refused before any work starts
    tol = parse_tolerance(args.tol)
    engines = _engines(args.engines)
    stop = threading.Event()
    with StopOnInterrupt(stop), Progress(f"solving {args.file}") as progress, cluster_from_args(args) as cluster:
        time_limit = time_budget(args.time_limit, cluster)
        result = solve(instance, target_class=args.target_class, time_limit=time_limit, find_all=args.all or args.count, tol=tol,
                       seed=args.seed, engines=engines, stop=stop, progress=progress, cluster=cluster)
    payload = result.to_json()
    if args.count:
        payload["solutions"] = None
    if args.witness and result.status == ABSORBABLE:
        from indexset.exact.witness_files import write_block_witness, write_stack_witness

        if is_stack:
            payload["witness"] = write_stack_witness(instance, result, args.witness)
        else:
            payload["witness"] = write_block_witness(instance, result, args.witness, args.format)
    if args.json:
        emit_json(payload)
    else:
        _print(instance, result, payload, args)
    return result.exit_code


def _print(instance, result, payload: dict, args) -> None:
    label = {"absorbable": "ABSORBABLE", "not_absorbable": "NOT ABSORBABLE", "unknown": "UNKNOWN"}[result.status]
    print(f"{args.file}: {label}" + (" (extension beyond the paper)" if result.extension else ""))
    print(f"  class    {result.target_class}: {DEFINITIONS[result.target_class]}")
    print(f"  why      {result.reason}")
    if result.index_set is not None:
        print(f"  S        {result.index_set} (|S| = {len(result.index_set)}, d = {instance.d}, verified exactly: {'yes' if result.verified else 'no'})")
    if result.count is not None:
        print(f"  count    {result.count} index set(s)")
    if args.all and result.solutions:
        for support in result.solutions:
            print(f"           {support}")
    stages = result.stages
    if "reduce" in stages:
        r = stages["reduce"]
        print(f"  algebra  rank M = {r['rank']} of n = {r['n']}, kernel dimension {r['kernel_dimension']}")
    if result.engine:
        print(f"  engine   {result.engine}, {result.time_s:.3f} s")
    if "witness" in payload:
        w = payload["witness"]
        print(f"  witness  {w['summary']}" + (f"; written to {', '.join(w['written'])}" if w["written"] else "; NOT written"))
