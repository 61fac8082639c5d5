"""``indexset scan MODEL [MODEL ...]``: decide the MLP block of every layer of checkpoints; plot them; extract one layer."""

from __future__ import annotations

import contextlib
import re
import sys

from indexset.classes import DEFINITIONS
from indexset.cli.common import EXIT_SECONDS, Progress, add_class_option, emit_json, parse_tolerance, process_seconds, time_budget
from indexset.errors import InputError

_NUMBER = re.compile(r"[-+]?\d[\d.e+-]*")

STATUS_TEXT = {"absorbable": "absorbable", "not_absorbable": "NOT absorbable", "unknown": "unknown"}

PLOT_SECONDS = 2.0
"""Seconds of ``--time-limit`` kept back for importing matplotlib and writing the figure."""


def register(sub) -> None:
    """Add the ``scan`` subcommand."""
    parser = sub.add_parser(
        "scan",
        help="decide every MLP block of a checkpoint (safetensors, Hugging Face folder or cached model id)",
        description=(
            "Read safetensors checkpoints one layer at a time (never unpickling) and decide each MLP block "
            "with the Gram path. MODEL is a .safetensors file, a model.safetensors.index.json, a model folder, "
            "or a model id in the local Hugging Face cache (never downloaded). Exit 0: every layer absorbable; "
            "1: every layer decided and one is not; 3: some layer unknown; 2: bad input."
        ),
    )
    parser.add_argument("models", nargs="+", metavar="MODEL", help="checkpoint file, index, folder or cached model id; several are scanned in turn")
    parser.add_argument("--activation", help="override the activation from config.json (indexset or Hugging Face name, e.g. gelu_new)")
    parser.add_argument("--tol", help="accept max |c·W_down[:,S]·W_up[S,:] + A| ≤ T (exact rational)")
    parser.add_argument("--layers", metavar="LIST", help="layers to scan, e.g. 0,3,5-7 (default: all)")
    parser.add_argument("--time-limit", type=float, metavar="S", help="seconds for the whole run; layers that do not fit are 'unknown'")
    parser.add_argument("--plot", metavar="FILE", help="draw each layer's certified distance interval, one panel per model (.pdf, .svg or .png)")
    parser.add_argument("--extract", type=int, metavar="L", dest="layer", help="write layer L as an instance file (with -o) instead of scanning")
    parser.add_argument("-o", "--output", metavar="FILE", help="the instance file --extract writes (.npz)")
    parser.add_argument("--cache-dir", metavar="DIR", help="Hugging Face cache for model ids (default: HF_HUB_CACHE, else HF_HOME/hub)")
    add_class_option(parser)
    parser.add_argument("--json", action="store_true", help="print one JSON object (several models: {\"models\": [...]})")
    parser.set_defaults(run=run)


@contextlib.contextmanager
def _layer_progress():
    """Yields ``callback_for(model)``: a bar on a terminal, else a plain line about every 10 s.

    Off a terminal (batch logs) the lines come from :class:`indexset.cli.common.Progress`,
    and rich is not even imported.
    """
    if not sys.stderr.isatty():
        with Progress("scan") as plain:
            yield lambda model: _plain_callback(plain, model)
        return
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, TextColumn, TimeElapsedColumn
    from rich.progress import Progress as Bar

    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
    with Bar(*columns, console=Console(stderr=True), transient=True) as bar:
        yield lambda model: _bar_callback(bar, model)


def _plain_callback(plain, label: str):
    def callback(done, total, row):
        plain({"model": label, "layers done": f"{done}/{total}"} | ({} if row is None else {"last": f"layer {row['layer']} {row['status']}"}))

    return callback


def _bar_callback(bar, label: str):
    state = {}

    def callback(done, total, row):
        if row is None:
            state["task"] = bar.add_task(f"{label}: scanning layers", total=total)
            return
        bar.update(state["task"], completed=done, description=f"{label}: layer {row['layer']}: {row['status']}")

    return callback


def run(args) -> int:
    """Scan, print the table (or JSON) and draw the plot; exit as the worst :attr:`ScanReport.exit_code`."""
    time_budget(args.time_limit)  # a bad --time-limit is refused before any work starts
    if args.layer is not None or args.output is not None:
        return _extract(args)
    tol = parse_tolerance(args.tol)
    if args.plot is not None:
        from indexset.workflows.scanplot import plot_format

        plot_format(args.plot)  # a bad --plot path is refused before any work starts
    from indexset.large.scan import scan

    reserve = PLOT_SECONDS if args.plot is not None else 0.0
    reports = []
    with _layer_progress() as callback_for:
        for model in args.models:
            reports.append(scan(
                model, activation=args.activation, tol=tol, progress=callback_for(model), target_class=args.target_class,
                layers=args.layers, time_limit=_left(args.time_limit, reserve), cache_dir=args.cache_dir,
            ))
    if args.plot is not None:
        from indexset.workflows.scanplot import write_scan_plot

        write_scan_plot(reports, args.plot)
    if args.json:
        emit_json(reports[0].to_json() if len(reports) == 1 else {"models": [report.to_json() for report in reports]})
    else:
        for k, report in enumerate(reports):
            if k:
                print()
            print_table(report)
        if args.plot is not None:
            print(f"\nplot: {args.plot}")
    return combined_exit_code(report.exit_code for report in reports)


def _left(time_limit: float | None, reserve: float) -> float | None:
    """Seconds of ``--time-limit`` left for scanning: the whole process counts (start-up, earlier models, exit, the plot)."""
    if time_limit is None:
        return None
    left = time_limit - process_seconds() - EXIT_SECONDS - reserve
    # Spent already: a limit no layer can start within, so every remaining layer is reported as not scanned.
    return left if left > 0 else 1e-9


def combined_exit_code(codes) -> int:
    """3 if some model has an unknown layer, else 1 if some layer is not absorbable, else 0."""
    codes = set(codes)
    return 3 if 3 in codes else 1 if 1 in codes else 0


def _extract(args) -> int:
    if args.layer is None or args.output is None:
        raise InputError("--extract", "writes one layer: give both --extract L and -o FILE.npz")
    if len(args.models) != 1:
        raise InputError("--extract", f"takes one model, got {len(args.models)}")
    for option in ("plot", "tol", "layers"):
        if getattr(args, option) is not None:
            raise InputError("--extract", f"--{option} does not apply when extracting a layer")
    from indexset.large.scan import extract_layer

    instance = extract_layer(args.models[0], args.layer, args.activation, cache_dir=args.cache_dir)
    instance.save(args.output)
    info = instance.metadata["checkpoint"]
    if args.json:
        emit_json({"written": args.output, "d": instance.d, "n": instance.n, "activation": instance.activation, **info})
    else:
        names = ", ".join(f"{role} {name}" for role, name in info["tensors"].items())
        print(f"{args.output}: layer {info['layer']} of {info['model']} ({names}), d = {instance.d}, n = {instance.n}, activation {instance.activation}")
    return 0


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
    width = max([len("tensors")] + [len(row["name"]) for row in report.layers])
    header = (
        f"{'layer':>5}  {'tensors':<{width}} {'d':>6} {'n':>6}  {'verdict':<16} "
        f"{'dist lower':>10} {'dist upper':>10} {'rel lower':>9} {'rel upper':>9} {'|S|':>6} {'time s':>8}"
    )
    print(header)
    print("-" * len(header))
    for row in report.layers:
        verdict = STATUS_TEXT[row["status"]] + (" *" if row["extension"] else "")
        size = "-" if row["best_set_size"] is None else str(row["best_set_size"])
        print(
            f"{row['layer']:>5}  {row['name']:<{width}} {row['d']:>6} {row['n']:>6}  {verdict:<16} "
            f"{_number(row['distance_lower']):>10} {_number(row['distance_upper']):>10} "
            f"{_number(row['relative_lower']):>9} {_number(row['relative_upper']):>9} {size:>6} {row['time_s']:>8.3f}"
        )
    print("dist: Frobenius norm of c·W_down[:,S]·W_up[S,:] + A, certified lower bound over every S and the value at the best S found "
          "(|S| units); rel: the same over ‖A‖_F")
    if any(row["extension"] for row in report.layers):
        print("*: extension, the verdict rests on a statement beyond the paper (MATH.md §8)")
    groups = {}
    for row in report.layers:
        key = (row["status"], _NUMBER.sub("#", row["reason"]))
        groups.setdefault(key, []).append(row)
    for rows in groups.values():
        layers = [row["layer"] for row in rows]
        example = f" (e.g. layer {layers[0]})" if len(layers) > 1 else ""
        print(f"layer{'s' if len(layers) > 1 else ''} {_ranges(layers)}{example}: {rows[0]['reason']}")


def _ranges(layers) -> str:
    from indexset.text import ranges

    return ranges(layers)
