"""``indexset solve-system FILE``: decide a plain 0/1 system ``A x = b``.

Reads a QOBLIB market split ``.dat`` file or an ``.npz`` with ``A`` and
``b`` (:mod:`indexset.search.systemfile`) and decides it with
:func:`indexset.search.decide.decide_system`, the same decision the block
solver uses: the lattice enumeration engine by default, CP-SAT, or the
portfolio racing both.
"""

from __future__ import annotations

import argparse
import os
import threading
import time

from indexset.cli.common import Progress, StopOnInterrupt, add_cluster_options, cluster_from_args, emit_json, readable, time_budget

ENGINE_CHOICES = ("lattice", "cpsat", "portfolio")

EPILOG = """\
exit status:
  0  feasible: a solution, checked exactly
  1  infeasible: proven
  3  unknown: time limit or Ctrl-C
  2  bad input: one line on stderr
Off a terminal, a progress line goes to stderr about every 10 s.
"""


def register(sub) -> None:
    """Add the ``solve-system`` subcommand."""
    parser = sub.add_parser("solve-system", help="decide a plain 0/1 system A x = b (QOBLIB .dat or .npz with A, b)",
                            description="Decide a 0/1 system A x = b with the decision the block solver uses (exact algebra, pruning, engines).",
                            epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("file", help="system file: QOBLIB market split .dat, or .npz with integer arrays A and b")
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--all", action="store_true", help="list every solution")
    group.add_argument("--count", action="store_true", help="count every solution")
    parser.add_argument("--time-limit", type=float, metavar="S", help="seconds, counted from process start; past it the answer is 'unknown' (default: no limit)")
    parser.add_argument("--engine", choices=ENGINE_CHOICES, default="lattice", help="search engine (default: lattice)")
    add_cluster_options(parser, "local Dask worker processes for a lattice search predicted to take ≥ 20 s (default: none: threads in this process, one per CPU, which measured faster on one machine)")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.set_defaults(run=run)


def run(args) -> int:
    """Exit 0 feasible, 1 infeasible (proven), 3 unknown."""
    from indexset.search.decide import decide_system
    from indexset.search.systemfile import load_system

    time_budget(args.time_limit)  # a bad --time-limit is refused before any work starts
    start = time.perf_counter()
    system = load_system(args.file)
    stop = threading.Event()
    find_all = args.all or args.count
    engines = ["lattice", "cpsat"] if args.engine == "portfolio" else [args.engine]
    # Alone on the machine the enumeration may use every core.
    options = {"workers": args.workers or os.cpu_count() or 1} if args.engine == "lattice" else {}
    with StopOnInterrupt(stop), Progress(f"solving {args.file}") as progress, cluster_from_args(args) as cluster:
        time_limit = time_budget(args.time_limit, cluster)
        result = decide_system(system, find_all=find_all, time_limit=time_limit, stop=stop, engines=engines, progress=progress,
                               cluster=cluster, engine_options=options)
    elapsed = time.perf_counter() - start
    payload = _payload(result, system.n, args, elapsed)
    if args.json:
        emit_json(payload)
    else:
        _print(result, payload, args)
    return result.exit_code


def _vector(support, n: int) -> list[int]:
    z = [0] * n
    for i in support:
        z[i] = 1
    return z


def _payload(result, n: int, args, elapsed: float) -> dict:
    """The documented JSON object (plus ``reason`` and, with --all, ``solutions``)."""
    payload = {
        "status": result.status,
        "solution": None if result.index_set is None else _vector(result.index_set, n),
        "count": result.count if (args.all or args.count) and result.complete else None,
        "engine": result.engine,
        "time_s": round(elapsed, 6),
        "reason": result.reason,
    }
    if args.all:
        payload["solutions"] = [_vector(s, n) for s in (result.solutions or [])]
    return payload


def _print(result, payload: dict, args) -> None:
    from indexset.text import ranges

    label = {"feasible": "FEASIBLE", "infeasible": "INFEASIBLE", "unknown": "UNKNOWN"}[result.status]
    print(f"{args.file}: {label}")
    print(f"  why       {readable(result.reason)}")
    if payload["solution"] is not None:
        print(f"  solution  {''.join(str(v) for v in payload['solution'])} (support {{{ranges(result.index_set)}}}, checked exactly)")
    if payload["count"] is not None:
        print(f"  count     {payload['count']} solution(s)")
    if args.all and payload.get("solutions"):
        for z in payload["solutions"]:
            print(f"            {''.join(str(v) for v in z)}")
    reduce = result.stages.get("reduce", {})
    if "kernel_dimension" in reduce:
        print(f"  algebra   rank {reduce['rank']} of n = {reduce['n']}, kernel dimension {reduce['kernel_dimension']}")
    nodes = sum(part.get("nodes", 0) for part in result.stages.get("search", {}).values() if isinstance(part, dict))
    if nodes:
        print(f"  search    {nodes} enumeration nodes")
    print(f"  engine    {result.engine}, {payload['time_s']:.3f} s")
