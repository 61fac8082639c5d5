"""``indexset scan PATH``: decide the MLP block of every layer of a checkpoint."""

from __future__ import annotations

import re

from indexset.classes import DEFINITIONS
from indexset.cli.common import add_class_option, emit_json, parse_tolerance

_NUMBER = re.compile(r"[-+]?\d[\d.e+-]*")

STATUS_TEXT = {"absorbable": "absorbable", "not_absorbable": "NOT absorbable", "unknown": "unknown"}


def register(sub) -> None:
    """Add the ``scan`` subcommand."""
    parser = sub.add_parser(
        "scan",
        help="decide every MLP block of a safetensors checkpoint (BERT, GPT-2, OPT, GPT-NeoX, LLaMA-like)",
        description=(
            "Read a .safetensors file or checkpoint folder one layer at a time (never unpickling), "
            "and decide each MLP block with the Gram path. Exit 0: every layer absorbable; "
            "1: every layer decided and one is not; 3: some layer unknown; 2: bad input."
        ),
    )
    parser.add_argument("path", help=".safetensors file, or folder with model.safetensors (or shards) and config.json")
    parser.add_argument("--activation", help="override the activation from config.json (indexset name, e.g. gelu_tanh)")
    parser.add_argument("--tol", help="accept max |c·W_down[:,S]·W_up[S,:] + A| ≤ T (exact rational)")
    add_class_option(parser)
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.set_defaults(run=run)


def _progress_callback(progress):
    state = {}

    def callback(done, total, row):
        if row is None:
            state["task"] = progress.add_task("scanning layers", total=total)
            return
        progress.update(state["task"], completed=done, description=f"layer {row['layer']}: {row['status']}")

    return callback


def run(args) -> int:
    """Scan, print the table (or JSON); exit as :attr:`ScanReport.exit_code`."""
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from indexset.large.scan import scan

    tol = parse_tolerance(args.tol)
    console = Console(stderr=True)
    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
    with Progress(*columns, console=console, transient=True, disable=not console.is_terminal) as progress:
        report = scan(args.path, activation=args.activation, tol=tol, progress=_progress_callback(progress), target_class=args.target_class)
    if args.json:
        emit_json(report.to_json())
    else:
        print_table(report)
    return report.exit_code


def _number(value) -> str:
    return "-" if value is None else f"{value:.4g}"


def print_table(report) -> None:
    """The per-layer table with the model header."""
    print(f"{report.model}: layout {report.layout}, {len(report.layers)} layers, activation {report.activation} ({report.activation_source})")
    print(f"  {report.meaning}")
    for note in report.notes:
        print(f"  note: {note}")
    print(f"  class {report.target_class}: {DEFINITIONS[report.target_class]}")
    if report.tol is not None:
        print(f"  tolerance τ = {report.tol} on the largest residual entry")
    header = f"{'layer':>5} {'d':>6} {'n':>6}  {'verdict':<15} {'dist lower':>11} {'dist upper':>11} {'rel lower':>10} {'time s':>8}"
    print(header)
    print("-" * len(header))
    for row in report.layers:
        print(
            f"{row['layer']:>5} {row['d']:>6} {row['n']:>6}  {STATUS_TEXT[row['status']]:<15} "
            f"{_number(row['distance_lower']):>11} {_number(row['distance_upper']):>11} "
            f"{_number(row['relative_lower']):>10} {row['time_s']:>8.3f}"
        )
    groups = {}
    for row in report.layers:
        key = (row["status"], _NUMBER.sub("#", row["reason"]))
        groups.setdefault(key, []).append(row)
    print("distances: Frobenius norm of c·W_down[:,S]·W_up[S,:] + A over the best S (certified interval)")
    for rows in groups.values():
        layers = [row["layer"] for row in rows]
        example = f" (e.g. layer {layers[0]})" if len(layers) > 1 else ""
        print(f"layer{'s' if len(layers) > 1 else ''} {_ranges(layers)}{example}: {rows[0]['reason']}")


def _ranges(layers) -> str:
    if len(layers) > 3 and layers == list(range(layers[0], layers[-1] + 1)):
        return f"{layers[0]}–{layers[-1]}"
    return ", ".join(str(i) for i in layers)
