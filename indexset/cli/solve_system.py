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
  .npz: integer arrays A (m x n) and b (m), optionally upper (n) for bounded
  integers 0 <= x_j <= upper[j].
  solvediophant's text format, of which a QOBLIB market split .dat file is
  the plain case: blank lines and lines starting with % or # are comments;
  the header 'm n' or 'm n 1'; m rows of n integer coefficients, each
  followed by its right-hand side; then, optionally:
    BOUNDS n             and one bound u per column: 0 <= x <= u (1: 0/1,
                         0: the column is 0)
    SELECTEDCOLUMNS      then N and N flags 0/1: the rows hold the columns
                         flagged 1; solutions have N columns, 0 where flagged 0
  Other sections (the group data of Kramer-Mesner files) are skipped. A
  comment '% FREERHS' before the header asks, as in solvediophant, for
  A x = λ b with an integer λ != 0, |λ| <= L (--max-multiple, default 1 as
  solvediophant's -maxnorm: A x = ±b). Numbers of any size are read exactly.
  Solutions are printed in the file's columns, with their values.

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
--all; lambda (and lambdas with --all) for '% FREERHS'; a bad file of a
batch: status "bad_input" and its reason. --count counts without holding
the solutions.

Off a terminal, a progress line goes to stderr about every 10 s
(INDEXSET_PROGRESS_SECONDS sets another interval).
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
    parser.add_argument("--max-multiple", type=_positive, default=1, metavar="L",
                        help="for a '%% FREERHS' file: |λ| ≤ L (default 1, solvediophant's -maxnorm: A x = ±b)")
    add_cluster_options(parser, "local Dask worker processes for a lattice search predicted to take ≥ 20 s (default: none: threads in this process, one per CPU)")
    parser.add_argument("--json", action="store_true", help="print JSON Lines: one object per file")
    parser.set_defaults(run=run)


def _positive(text: str) -> int:
    """An integer ≥ 1 (argparse type)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {value}")
    return value


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
        import functools
        import time

        from indexset.budget import Budget
        from indexset.search.decide import decide_system
        from indexset.search.multiples import decide_multiples

        args = self.args
        engines = ["lattice", "cpsat"] if args.engine == "portfolio" else [args.engine]
        # Alone on the machine the enumeration may use every core.
        options = {"workers": args.workers or os.cpu_count() or 1} if args.engine == "lattice" else {}
        decide = functools.partial(decide_multiples, largest=args.max_multiple) if loaded.free_rhs else decide_system
        with Progress(f"solving {path}") as progress:
            budget = Budget.of(time_budget(args.time_limit, self.cluster, since), self.stop)
            result = decide(loaded.system, find_all=args.all or args.count, count_only=args.count, budget=budget, engines=engines, progress=progress,
                            cluster=self.cluster, engine_options=options)
        payload = _payload(path, result, loaded, args, time.perf_counter() - self.read_at)
        if args.json:
            emit_json_line(payload)
        else:
            _print(result, payload, loaded, args)
        return result.exit_code


def _payload(path: str, result, loaded, args, elapsed: float) -> dict:
    """The documented JSON object (plus, with --all, ``solutions``), vectors in the file's columns with their values."""
    first = _vector(loaded, result.index_set)
    payload = {
        "file": path,
        "status": result.status,
        "solution": None if first is None else first[0],
        "count": result.count if (args.all or args.count) and result.complete else None,
        "engine": result.engine,
        "time_s": round(elapsed, 6),
        "reason": result.reason,
        "halted": result.halted,
        "stages": result.stages,
    }
    if loaded.free_rhs:
        payload["lambda"] = None if first is None else first[1]
    if args.all:
        vectors = [_vector(loaded, s) for s in (result.solutions or [])]
        payload["solutions"] = [vector for vector, _ in vectors]
        if loaded.free_rhs:
            payload["lambdas"] = [lam for _, lam in vectors]
    return payload


def _vector(loaded, solution):
    """``(the file's vector, λ)`` of a solution (λ None unless the file has ``% FREERHS``); None for no solution."""
    if solution is None:
        return None
    if loaded.free_rhs:
        x, lam = solution
        return loaded.vector(x), lam
    return loaded.vector(solution), None


def _text(vector: list[int], binary: bool) -> str:
    """A solution vector as the file's columns: 0/1 digits run together, other values apart."""
    return "".join(str(v) for v in vector) if binary else " ".join(str(v) for v in vector)


def _print(result, payload: dict, loaded, args) -> None:
    from indexset.text import ranges

    label = {"feasible": "FEASIBLE", "infeasible": "INFEASIBLE", "unknown": "UNKNOWN"}[result.status]
    print(f"{payload['file']}: {label}")
    if result.reason:
        print(f"  why       {readable(result.reason)}")
    if loaded.width != loaded.system.n:
        print(f"  unknowns  {loaded.system.n} of the file's {loaded.width} columns (the others are 0: not selected, or bound 0)")
    if not loaded.system.is_binary:
        print(f"  box       bounded integers 0 ≤ x_j ≤ u_j, largest u = {max(loaded.system.bounds())}")
    if loaded.free_rhs:
        print("  question  A x = λ b for an integer λ ≠ 0 (% FREERHS)")
    binary = loaded.system.is_binary
    multiple = f", λ = {payload['lambda']}" if loaded.free_rhs and payload["solution"] is not None else ""
    if payload["solution"] is not None:
        support = [column for column, value in enumerate(payload["solution"]) if value]
        print(f"  solution  {_text(payload['solution'], binary)} (support {{{ranges(support)}}}{multiple}, checked exactly)")
    if payload["count"] is not None:
        print(f"  count     {payload['count']} solution(s)")
    if args.all and payload.get("solutions"):
        for k, z in enumerate(payload["solutions"]):
            print(f"            {_text(z, binary)}" + (f"  λ = {payload['lambdas'][k]}" if loaded.free_rhs else ""))
    reduce = result.stages.get("reduce", {})
    if "kernel_dimension" in reduce:
        print(f"  algebra   rank {reduce['rank']} of n = {reduce['n']}, kernel dimension {reduce['kernel_dimension']}")
    nodes = sum(part.get("nodes", 0) for part in result.stages.get("search", {}).values() if isinstance(part, dict))
    if nodes:
        print(f"  search    {nodes} enumeration nodes")
    print(f"  engine    {result.engine}, {payload['time_s']:.3f} s")
