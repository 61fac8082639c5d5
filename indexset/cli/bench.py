"""``indexset bench``: search time against width, beside baselines, with figures.

Runs a sweep of :mod:`indexset.workflows.bench` (instances from the constructor and
recorded seeds), shows progress (a bar on a terminal, a line about every 10 s
otherwise), prints a table (median, max, solved count per method and width),
writes every run as JSON and the figure as PDF, SVG or PNG
(:mod:`indexset.workflows.plots`). Exit status 0, or 1 when methods disagree
(the table says where).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import threading

from indexset.cli.common import Progress, StopOnInterrupt, add_cluster_options, cluster_from_args, warn
from indexset.errors import InputError
from indexset.workflows.vocabulary import BENCH_FAMILIES, BENCH_METHODS

EPILOG = """\
exit status:
  0  every answer agrees (with the other methods, the exact verifier and the constructor)
  1  a disagreement or a wrong claim (the table and stderr say where; the JSON has them all)
  2  bad input: one line on stderr, nothing written
Figures: timeouts are hollow triangles at the time limit, other undecided runs
crosses, runs in a disagreement a large red X. --from re-renders a saved
report (table and --plot) without running anything. Off a terminal, a
progress line goes to stderr about every 10 s (INDEXSET_PROGRESS_SECONDS
sets another interval).
"""


def register(sub) -> None:
    """Add the ``bench`` subcommand."""
    parser = sub.add_parser("bench", help="search time against width, beside baselines (CP-SAT, MILP, brute force)",
                            description="Time every method on constructed instances (width × seed), check every answer against the others, "
                                        "the exact verifier and the constructor, and print the table.",
                            epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--d", type=int, default=2, help="dimension d (default 2)")
    parser.add_argument("--widths", default="10:80:10", help="widths: START:STOP:STEP (STOP included), or a comma list of those and integers (default 10:80:10)")
    parser.add_argument("--seeds", type=int, default=3, metavar="K", help="seeds per width (default 3)")
    parser.add_argument("--first-seed", type=int, default=0, metavar="S", help="seeds are S, S+1, ..., S+K−1 (default 0)")
    parser.add_argument("--family", choices=BENCH_FAMILIES, default="planted", help="instance family (default planted)")
    parser.add_argument("--range", type=int, metavar="R", help="entries in [−R, R] (planted, random; default: the constructor's)")
    parser.add_argument("--density", type=float, help="family hard: target density (default 1)")
    parser.add_argument("--unplanted", action="store_true", help="families hard and low_precision: draw without planting an S")
    parser.add_argument("--methods", default="pipeline", help=f"comma list from {','.join(BENCH_METHODS)} (default pipeline)")
    parser.add_argument("--time-limit", type=float, default=30.0, metavar="S", help="seconds per run (default 30)")
    parser.add_argument("--out", metavar="JSON", help="write every run to this JSON file (default: not written)")
    parser.add_argument("--plot", metavar="FILE", help="write the time-against-width figure to FILE: .pdf, .svg or .png, by the extension (default: not drawn)")
    parser.add_argument("--markdown", action="store_true", help="print the table as Markdown")
    parser.add_argument("--from", dest="source", metavar="JSON", help="re-render the table and plot of a saved report instead of running")
    parser.add_argument("--no-warmup", action="store_true", help="do not solve a tiny instance before timing")
    add_cluster_options(parser, "run the runs as Dask tasks on N local worker processes, several at a time (default: one after the other in this process)")
    parser.set_defaults(run=run)


def _methods(text: str) -> tuple:
    names = tuple(name.strip() for name in text.split(",") if name.strip())
    unknown = [name for name in names if name not in BENCH_METHODS]
    if unknown or not names:
        raise InputError("--methods", f"unknown method {unknown[0] if unknown else '(none)'!r}; choose from {', '.join(BENCH_METHODS)}")
    return names


def sweep_from_args(args):
    """The :class:`indexset.workflows.bench.Sweep` the options describe (validated)."""
    import indexset.workflows.bench as bench  # numerics only when a sweep runs

    if args.seeds < 1:
        raise InputError("--seeds", f"need at least one seed, got {args.seeds}")
    if args.first_seed < 0:
        raise InputError("--first-seed", f"seeds are nonnegative, got {args.first_seed}")
    sweep = bench.Sweep(
        d=args.d, widths=bench.parse_widths(args.widths), seeds=list(range(args.first_seed, args.first_seed + args.seeds)),
        family=args.family, range=args.range, density=args.density, plant=not args.unplanted,
        methods=_methods(args.methods), time_limit=args.time_limit,
    )
    sweep.validate()
    return sweep


def run(args) -> int:
    """Run (or reload) the sweep; print the table; write JSON and PNG."""
    import indexset.workflows.bench as bench  # numerics only when a sweep runs

    _check_paths(args)
    if args.source:
        report = _load(args.source)
    else:
        sweep = sweep_from_args(args)
        report = _run(sweep, args)
        report["command"] = bench.sweep_command(sweep, args.out, args.plot)
        if args.out:
            bench.write_json(report, args.out)
    _print_table(report, args.markdown)
    if args.plot:
        from indexset.workflows.plots import plot_report  # matplotlib only for a figure

        plot_report(report, args.plot)
    _print_footer(report, args)
    return 1 if report["disagreements"] else 0


def _check_paths(args) -> None:
    if args.plot and os.path.splitext(args.plot)[1].lower() not in (".pdf", ".svg", ".png"):
        raise InputError("--plot", f"{args.plot!r}: the figure format follows the extension; use .pdf, .svg or .png")
    if args.out and not args.out.lower().endswith(".json"):
        raise InputError("--out", f"{args.out!r}: use a name ending in .json")
    for option, path in (("--out", args.out), ("--plot", args.plot)):
        folder = os.path.dirname(os.path.abspath(path)) if path else None
        if folder and not os.path.isdir(folder):
            raise InputError(option, f"{path!r}: folder {folder!r} does not exist")


def _load(path: str) -> dict:
    try:
        with open(path, encoding="utf-8") as handle:
            report = json.load(handle)
    except (OSError, ValueError) as exc:
        raise InputError(path, f"cannot read the report: {exc}") from None
    if not isinstance(report, dict) or not {"sweep", "runs", "summary", "disagreements"} <= set(report):
        raise InputError(path, "not an indexset bench report (keys sweep, runs, summary, disagreements)")
    return report


# ------------------------------------------------------------ progress
def _run(sweep, args) -> dict:
    import indexset.workflows.bench as bench  # numerics only when a sweep runs

    stop = threading.Event()
    with StopOnInterrupt(stop), _progress_display() as progress, cluster_from_args(args) as cluster:
        runner = None
        if cluster is not None:
            from indexset.workflows.sweeps import OnCluster  # Dask only when asked for

            runner = OnCluster(cluster)
        return bench.run_sweep(sweep, progress=progress, stop=stop, warmup=not args.no_warmup, runner=runner)


class _progress_display:
    """A rich progress bar on a terminal; otherwise :class:`indexset.cli.common.Progress` lines (about every 10 s)."""

    def __enter__(self):
        self._bar = None
        self._lines = None
        if sys.stderr.isatty():
            from rich.console import Console
            from rich.progress import BarColumn, MofNCompleteColumn, TextColumn, TimeElapsedColumn
            from rich.progress import Progress as Bar

            self._bar = Bar(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(), console=Console(stderr=True))
            self._bar.__enter__()
            self._task = self._bar.add_task("bench", total=None)
        else:
            self._lines = Progress("bench", enabled=False).__enter__()
        return self

    def __call__(self, event: dict) -> None:
        if self._bar is not None:
            self._update_bar(event)
            return
        counters = {"phase": {"construct": "constructing instances", "warmup": "warming up", "run": "runs"}[event["phase"]],
                    "done": f"{event['done']}/{event['total']}"}
        if event["phase"] == "run" and event["status"] is not None:
            counters["last"] = f"{event['method']} n={event['n']} seed={event['seed']}: {event['status']} {event['time_s']:.3f} s"
        self._lines(counters)

    def _update_bar(self, event: dict) -> None:
        phase = event["phase"]
        if phase == "run":
            what = f"{event['method']} n={event['n']} seed={event['seed']}"
        else:
            what = {"construct": "constructing instances", "warmup": "warming up"}[phase]
        self._bar.update(self._task, description=what, completed=event["done"], total=event["total"])

    def __exit__(self, *exc) -> None:
        if self._bar is not None:
            self._bar.__exit__(*exc)
        if self._lines is not None:
            self._lines.__exit__(*exc)


# --------------------------------------------------------------- table
def _cell(row: dict, limit: float) -> str:
    if row["runs"] == 0:
        return "skipped" + (" (n > 22)" if "n ≤" in row["note"] else "") if row["skipped"] else "—"
    median = _seconds(row["median_s"], limit)
    worst = _seconds(row["max_s"], limit)
    text = f"{median} / {worst}  {row['solved']}/{row['runs']}"
    if row["infeasible_float"]:
        text += "*"
    if row["timeouts"]:
        text += f" ({row['timeouts']} timeout{'s' if row['timeouts'] > 1 else ''})"
    return text


def _seconds(value, limit: float) -> str:
    if value is None:
        return f">{limit:g}"
    if value < 0.001:
        return "<0.001"
    return f"{value:.3f}" if value < 10 else f"{value:.1f}"


def _table_rows(report: dict) -> tuple:
    sweep = report["sweep"]
    by_key = {(r["method"], r["n"]): r for r in report["summary"]}
    header = ["n"] + list(sweep["methods"])
    rows = []
    for n in sweep["widths"]:
        label = f"{n}" + (" (≤ d²)" if n <= sweep["d"] ** 2 else "")
        rows.append([label] + [_cell(by_key[(m, n)], sweep["time_limit"]) for m in sweep["methods"]])
    return header, rows


def _warnings(report: dict) -> list:
    lines = []
    for p in report["disagreements"]:
        where = f"n={p['n']} seed={p['seed']}"
        if p["kind"] == "contradiction":
            yes = ", ".join(w["by"] for w in p["verified_S"])
            no = ", ".join(f"{x['method']} ({x['status']})" for x in p["infeasible"])
            lines.append(f"DISAGREEMENT {where}: verified S from {yes}, but {no}")
        else:
            lines.append(f"{p['kind'].upper().replace('_', ' ')} {where}: {p.get('method')}: {p.get('note', '')}".rstrip(": "))
    return lines


def _title(report: dict) -> str:
    s = report["sweep"]
    extra = f", range {s['range']}" if s.get("range") is not None else ""
    return f"d = {s['d']}, family {s['family']}{extra}, {len(s['seeds'])} seed(s), time limit {s['time_limit']:g} s: median / max seconds, solved/runs"


def _print_table(report: dict, markdown: bool) -> None:
    header, rows = _table_rows(report)
    warnings = _warnings(report)
    if markdown:
        _print_markdown(report, header, rows, warnings)
        return
    from rich.console import Console
    from rich.table import Table

    table = Table(title=_title(report), caption="* includes HiGHS 'infeasible' claims (floating point, not proofs)")
    for name in header:
        table.add_column(name, justify="right" if name == "n" else "left")
    for row in rows:
        table.add_row(*row)
    for line in warnings:
        table.add_row("⚠", f"[bold red]{line}[/]", *[""] * (len(header) - 2))
    Console(width=max(100, 24 * len(header))).print(table)


def _print_markdown(report: dict, header: list, rows: list, warnings: list) -> None:
    print(f"*{_title(report)}*\n")
    print("| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header))
    for row in rows:
        print("| " + " | ".join(row) + " |")
    for line in warnings:
        print(f"| ⚠ | **{line}** |" + " |" * (len(header) - 2))
    print()


def _print_footer(report: dict, args) -> None:
    for line in _warnings(report):
        warn(f"indexset: {line}")
    example = _example_run(report)
    if example is not None:
        print(f"re-run one point alone ({example['method']}, n = {example['n']}, seed {example['seed']}, {example['status']}):")
        print(f"  {example['rerun']}")
        print(f"  (instance: {example['construct']})")
    if report.get("interrupted"):
        warn("indexset: interrupted; runs not done are recorded as 'interrupted'")
    written = [p for p in (None if args.source else args.out, args.plot) if p]
    if written:
        print("wrote " + ", ".join(written))


def _example_run(report: dict):
    """The point most worth re-running: a disagreeing method, else the slowest run."""
    import indexset.workflows.bench as bench  # numerics only when a sweep runs

    runs = [r for r in report["runs"] if r["status"] != bench.SKIPPED]
    for p in report["disagreements"]:
        involved = [p.get("method")] + [x["method"] for x in p.get("infeasible", [])]
        match = [r for r in runs if r["n"] == p["n"] and r["seed"] == p["seed"] and r["method"] in involved]
        if match:
            return match[0]
    return max(runs, key=lambda r: r["time_s"], default=None)
