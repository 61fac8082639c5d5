"""``indexset solve-system FILE [FILE ...]``: decide plain 0/1 systems ``A x = b``.

Reads solvediophant's text format (QOBLIB market split ``.dat`` files are
its plain case) or an ``.npz`` with ``A`` and ``b``
(:mod:`indexset.search.systemfile`) and decides each system with
:func:`indexset.search.decide.decide_system`, the same decision the block
solver uses: the lattice enumeration engine by default, CP-SAT, or the
portfolio racing both. Several files are solved in one process, one after
another (:func:`indexset.cli.common.run_files`).
"""

from __future__ import annotations

import argparse
import os

from indexset.cli.common import (
    Progress,
    StopOnInterrupt,
    add_cluster_options,
    cluster_from_args,
    emit_json_line,
    readable,
    run_files,
    time_budget,
)

ENGINE_CHOICES = ("lattice", "cpsat", "portfolio")

EPILOG = """\
file formats (told apart by content; a name ending .npz is an .npz):
  .npz: integer arrays A (m x n) and b (m).
  solvediophant's text format, of which a QOBLIB market split .dat file is
  the plain case: blank lines and lines starting with % or # are comments;
  the header 'm n' or 'm n 1'; m rows of n integer coefficients, each
  followed by its right-hand side; then, optionally:
    BOUNDS n             and one bound per column: 1, or 0 to fix the column at 0
    SELECTEDCOLUMNS      then N and N flags 0/1: the rows hold the columns
                         flagged 1; solutions have N columns, 0 where flagged 0
  Other sections (the group data of Kramer-Mesner files) are skipped. A
  bound above 1 (bounded integers) and '% FREERHS' (A x = λ b) are bad input.
  Solutions are printed in the file's columns.

exit status:
  0  feasible: a solution, checked exactly
  1  infeasible: proven
  3  unknown: time limit or Ctrl-C
  2  bad input: one line on stderr
With several files each file is solved and reported in turn (a bad file is
reported on stderr, and the others are still solved); the status is 2 if any
file was bad input, else 3 if any is unknown, else 1 if any is infeasible,
else 0.

--json prints JSON Lines: one object per file, on one line, with the keys
file, status, solution, count, engine, time_s, reason, halted ("time limit
reached" or "interrupted" when the work stopped short, else null), stages
(what each stage did: the system, exact algebra, pruning, and per engine
the basis walked, its tree estimate, the passes and nodes); solutions with
--all; a bad file of a batch: status "bad_input" and its reason.

Off a terminal, a progress line goes to stderr about every 10 s.
"""


def register(sub) -> None:
    """Add the ``solve-system`` subcommand."""
    parser = sub.add_parser("solve-system", help="decide plain 0/1 systems A x = b (solvediophant's format, QOBLIB .dat, .npz)",
                            description="Decide 0/1 systems A x = b with the decision the block solver uses (exact algebra, pruning, engines).",
                            epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("files", nargs="+", metavar="FILE", help="system file (formats below); several for a batch in one process")
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--all", action="store_true", help="list every solution")
    group.add_argument("--count", action="store_true", help="count every solution")
    parser.add_argument("--time-limit", type=float, metavar="S",
                        help="seconds; past it the answer is 'unknown'. Counts from process start; with several files each file gets S seconds (default: no limit)")
    parser.add_argument("--engine", choices=ENGINE_CHOICES, default="lattice", help="search engine (default: lattice)")
    add_cluster_options(parser, "local Dask worker processes for a lattice search predicted to take ≥ 20 s (default: none: threads in this process, one per CPU)")
    parser.add_argument("--json", action="store_true", help="print JSON Lines: one object per file")
    parser.set_defaults(run=run)


def run(args) -> int:
    """Solve every file; exit 0 feasible, 1 infeasible (proven), 3 unknown, or the batch's status."""
    import threading

    time_budget(args.time_limit)  # a bad --time-limit is refused before any work starts
    return run_files(args.files, _Job(args, threading.Event()))


class _Job:
    """One ``solve-system`` call: how :func:`run_files` loads, starts and solves."""

    def __init__(self, args, stop) -> None:
        self.args = args
        self.stop = stop
        self.as_json = args.json
        self.cluster = None
        self.read_at = 0.0  # time.perf_counter() when the file being solved started to be read

    def load(self, path: str):
        import time

        from indexset.search.systemfile import load_system_file

        self.read_at = time.perf_counter()  # time_s counts reading the file too
        return load_system_file(path)

    def start(self, stack) -> None:
        stack.enter_context(StopOnInterrupt(self.stop))
        self.cluster = stack.enter_context(cluster_from_args(self.args))

    def solve(self, path: str, loaded, since) -> int:
        import time

        from indexset.search.decide import decide_system

        args = self.args
        engines = ["lattice", "cpsat"] if args.engine == "portfolio" else [args.engine]
        # Alone on the machine the enumeration may use every core.
        options = {"workers": args.workers or os.cpu_count() or 1} if args.engine == "lattice" else {}
        with Progress(f"solving {path}") as progress:
            result = decide_system(loaded.system, find_all=args.all or args.count, time_limit=time_budget(args.time_limit, self.cluster, since),
                                   stop=self.stop, engines=engines, progress=progress, cluster=self.cluster, engine_options=options)
        payload = _payload(path, result, loaded, args, time.perf_counter() - self.read_at)
        if args.json:
            emit_json_line(payload)
        else:
            _print(result, payload, loaded, args)
        return result.exit_code


def _payload(path: str, result, loaded, args, elapsed: float) -> dict:
    """The documented JSON object (plus, with --all, ``solutions``), vectors in the file's columns."""
    payload = {
        "file": path,
        "status": result.status,
        "solution": None if result.index_set is None else loaded.vector(result.index_set),
        "count": result.count if (args.all or args.count) and result.complete else None,
        "engine": result.engine,
        "time_s": round(elapsed, 6),
        "reason": result.reason,
        "halted": result.halted,
        "stages": result.stages,
    }
    if args.all:
        payload["solutions"] = [loaded.vector(s) for s in (result.solutions or [])]
    return payload


def _print(result, payload: dict, loaded, args) -> None:
    from indexset.text import ranges

    label = {"feasible": "FEASIBLE", "infeasible": "INFEASIBLE", "unknown": "UNKNOWN"}[result.status]
    print(f"{payload['file']}: {label}")
    if result.reason:
        print(f"  why       {readable(result.reason)}")
    if loaded.width != loaded.system.n:
        print(f"  unknowns  {loaded.system.n} of the file's {loaded.width} columns (the others are 0: not selected, or bound 0)")
    if payload["solution"] is not None:
        support = [loaded.columns[i] for i in result.index_set]
        print(f"  solution  {''.join(str(v) for v in payload['solution'])} (support {{{ranges(support)}}}, checked exactly)")
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
