"""Figures of bench reports: time against width, as PDF, SVG or PNG (by the file's extension).

Drawn from the report alone (:func:`indexset.workflows.bench.run_sweep`'s
dict, or its JSON), so ``indexset bench --from results.json --plot out.pdf``
re-renders a figure without running anything. Meant for papers: fonts
embedded as TrueType in PDF, text kept as text in SVG, no timestamps in
either (the same report gives the same bytes), plain-number tick labels,
and the sweep's parameters in the title and a caption line. Library code:
nothing here prints.
"""

from __future__ import annotations

import itertools
import math
import os
import statistics

from indexset.errors import InputError
from indexset.model.files import atomic_write
from indexset.text import ranges
from indexset.workflows.bench import DECIDED, SKIPPED, TIMEOUT

FORMATS = {".pdf": "pdf", ".svg": "svg", ".png": "png"}
"""File extension → figure format."""

STYLE = {
    "pipeline": ("#1f77b4", "o", "pipeline (indexset solve)"),
    "no-prune": ("#17becf", "v", "pipeline, no pruning"),
    "no-lattice": ("#9467bd", "<", "pipeline, no lattice reduction"),
    "cpsat-plain": ("#d62728", "s", "CP-SAT on M z = t (plain)"),
    "milp": ("#ff7f0e", "D", "HiGHS MILP on M z = t"),
    "brute": ("#7f7f7f", "P", "brute force (2^n)"),
}
"""Method → (colour, marker of its decided runs, legend label)."""

TIMEOUT_MARKER = "^"
"""Hollow, at the time limit: a run stopped by the time limit (the time is at least that)."""

UNDECIDED_MARKER = "x"
"""At the time limit: a run that ended undecided otherwise (unknown, error, interrupted)."""

DISAGREEMENT_MARKER = "X"
"""Large, red: a run named in a disagreement or wrong claim of the report."""

FLOOR = 1e-4
"""Times below this are drawn at it (log axis)."""

_RC = {
    "pdf.fonttype": 42, "ps.fonttype": 42,  # TrueType, not Type 3: what publishers ask for
    "svg.fonttype": "none", "svg.hashsalt": "indexset",  # text stays text; ids do not change between runs
    "font.size": 9, "axes.titlesize": 8.5, "axes.labelsize": 9, "xtick.labelsize": 8.5, "ytick.labelsize": 8.5,
    "legend.fontsize": 7.5, "figure.titlesize": 10,
}

_METADATA = {"pdf": {"CreationDate": None, "Producer": None}, "svg": {"Date": None}, "png": {}}


def plot_format(path) -> str:
    """The figure format a file name asks for.

    Raises
    ------
    InputError
        An extension other than ``.pdf``, ``.svg``, ``.png`` (source ``path``).
    """
    extension = os.path.splitext(os.fspath(path))[1].lower()
    if extension not in FORMATS:
        raise InputError("path", f"{os.fspath(path)!r}: the figure format follows the extension; use .pdf, .svg or .png")
    return FORMATS[extension]


def plot_report(report: dict, path) -> None:
    """Time (log axis) against width, one line per method; write it atomically as PDF, SVG or PNG.

    Each method gets its median over seeds (filled markers and a line) and
    the min–max band over seeds. Runs not decided are drawn at the time
    limit: timeouts as hollow triangles, other undecided runs (unknown,
    error, interrupted) as crosses; runs named in a disagreement are
    marked by a large red X. A vertical line marks n = d², where the real
    solution stops being unique. The title gives d, the family and its
    range, a caption line the seeds, widths, time limit and machine.

    Parameters
    ----------
    report : dict
        A bench report (keys ``sweep``, ``runs``, ``disagreements``,
        optionally ``machine``).
    path : str or PathLike
        Output file; its extension picks the format (:func:`plot_format`).
    """
    fmt = plot_format(path)
    import matplotlib
    from matplotlib.figure import Figure  # no pyplot: no global figure state, no GUI backend

    with matplotlib.rc_context(_RC):
        fig = Figure(figsize=(6.4, 5.0), dpi=200, layout="constrained")
        ax = fig.subplots()
        sweep = report["sweep"]
        handles = _draw(ax, report, sweep)
        _axes(ax, sweep, report)
        fig.suptitle(title(sweep))
        ax.set_title(caption(report), loc="center")
        labels = [label for _, label in handles]
        fig.legend([h for h, _ in handles], labels, loc="outside lower center", ncol=2, frameon=False)
        atomic_write(path, lambda stream: fig.savefig(stream, format=fmt, metadata=_METADATA[fmt]), suffix=f".{fmt}")


def _draw(ax, report: dict, sweep: dict) -> list:
    """Draw every method and the markers; return the legend's (handle, label) pairs."""
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

    limit = sweep["time_limit"]
    offsets = _offsets(sweep)
    flagged = disagreeing_runs(report)
    counts = {"timeout": 0, "undecided": 0, "disagreement": 0}
    handles = []
    for method in sweep["methods"]:
        color, marker, label = STYLE[method]
        shifts = {n: offsets[(method, n)] for n in sweep["widths"]}
        _draw_method(ax, report["runs"], method, sweep["widths"], limit, shifts, flagged, counts)
        handles.append((Line2D([], [], color=color, marker=marker, markersize=5, linewidth=1.4), label))
    ax.axhline(limit, color="black", linestyle=":", linewidth=0.9)
    d2 = sweep["d"] ** 2
    ax.axvline(d2, color="green", linestyle="--", linewidth=1.0)
    handles.append((Patch(color="grey", alpha=0.25), "min–max over seeds (line: median)"))
    handles.append((Line2D([], [], color="black", linestyle=":", linewidth=0.9), f"time limit ({limit:g} s per run)"))
    handles.append((Line2D([], [], color="green", linestyle="--", linewidth=1.0), f"n = d² = {d2} (up to here rank M = n generically)"))
    if counts["timeout"]:
        handles.append((Line2D([], [], marker=TIMEOUT_MARKER, linestyle="none", markerfacecolor="none", markeredgecolor="black", markersize=6),
                        f"timeout, drawn at the limit ({counts['timeout']} run{'s' if counts['timeout'] > 1 else ''})"))
    if counts["undecided"]:
        handles.append((Line2D([], [], marker=UNDECIDED_MARKER, linestyle="none", color="black", markersize=6),
                        f"undecided: unknown, error or interrupted ({counts['undecided']})"))
    if counts["disagreement"]:
        handles.append((Line2D([], [], marker=DISAGREEMENT_MARKER, linestyle="none", markerfacecolor="red", markeredgecolor="black", markersize=9),
                        f"disagreement or wrong claim, see the JSON ({counts['disagreement']} run{'s' if counts['disagreement'] > 1 else ''})"))
    return handles


def _offsets(sweep: dict) -> dict:
    """Small horizontal shifts per (method, width) so markers do not overlap.

    At most 0.7 % of the axis per method, and at most 8 % of the gap to
    the nearest other width, so a point never drifts toward its neighbour.
    """
    widths = sweep["widths"]
    span = max(max(widths) - min(widths), 1)
    gaps = {n: min([abs(n - m) for m in widths if m != n] or [span]) for n in widths}
    count = len(sweep["methods"])
    return {
        (m, n): (i - (count - 1) / 2) * min(0.007 * span, 0.08 * gaps[n])
        for i, m in enumerate(sweep["methods"]) for n in widths
    }


def _draw_method(ax, runs, method, widths, limit, shifts, flagged, counts) -> None:
    color, marker, _label = STYLE[method]
    xs, med, lo, hi = [], [], [], []
    timeouts, undecided, bad = [], [], []
    for n in widths:
        cell = [r for r in runs if r["method"] == method and r["n"] == n and r["status"] != SKIPPED]
        if not cell:
            continue
        x = n + shifts[n]
        times = [max(FLOOR, r["time_s"]) if r["status"] in DECIDED else math.inf for r in cell]
        capped = [min(t, limit) for t in times]
        xs.append(x)
        med.append(statistics.median(times))
        lo.append(min(capped))
        hi.append(max(capped))
        for run, t in zip(cell, capped):
            if run["status"] not in DECIDED:
                (timeouts if run["status"] == TIMEOUT or run.get("timed_out") else undecided).append(x)
            if (run["method"], run["n"], run["seed"]) in flagged:
                bad.append((x, t))
    ax.fill_between(xs, lo, hi, color=color, alpha=0.13, linewidth=0)
    finite = [(x, m) for x, m in zip(xs, med) if math.isfinite(m)]
    if finite:
        ax.plot(*zip(*finite), color=color, marker=marker, markersize=5, linewidth=1.4)
    if timeouts:
        ax.scatter(timeouts, [limit] * len(timeouts), facecolors="none", edgecolors=color, marker=TIMEOUT_MARKER, s=40, linewidths=1.2, zorder=3)
    if undecided:
        ax.scatter(undecided, [limit] * len(undecided), color=color, marker=UNDECIDED_MARKER, s=36, linewidths=1.2, zorder=3)
    if bad:
        ax.scatter(*zip(*bad), color="red", edgecolors="black", marker=DISAGREEMENT_MARKER, s=110, linewidths=0.8, zorder=4)
    counts["timeout"] += len(timeouts)
    counts["undecided"] += len(undecided)
    counts["disagreement"] += len(bad)


def disagreeing_runs(report: dict) -> set:
    """``(method, n, seed)`` of every run a disagreement of the report names.

    A problem that names no run (the constructor's own S failing the
    verifier) flags every run of its point.
    """
    flagged = set()
    for problem in report.get("disagreements", []):
        point = [(r["method"], r["n"], r["seed"]) for r in report["runs"] if r["n"] == problem["n"] and r["seed"] == problem["seed"]]
        methods = {problem.get("method")} | {x["method"] for x in problem.get("infeasible", [])} | {w["by"] for w in problem.get("verified_S", [])}
        named = [key for key in point if key[0] in methods]
        flagged.update(named or point)
    return flagged


def _axes(ax, sweep: dict, report: dict) -> None:
    from matplotlib.ticker import FixedLocator, FuncFormatter, LogLocator, MaxNLocator, NullFormatter

    ax.set_yscale("log")
    ax.yaxis.set_major_locator(LogLocator(base=10))
    ax.yaxis.set_major_formatter(FuncFormatter(_seconds_label))
    ax.yaxis.set_minor_formatter(NullFormatter())
    times = [max(FLOOR, r["time_s"]) for r in report["runs"] if r["status"] in DECIDED]
    ax.set_ylim(min(times + [sweep["time_limit"] / 10]) / 2, sweep["time_limit"] * 2.5)
    widths = sorted(sweep["widths"])
    span = max(widths[-1] - widths[0], 1)
    if len(widths) <= 12 and min((b - a for a, b in itertools.pairwise(widths)), default=span) >= span / 20:
        ax.xaxis.set_major_locator(FixedLocator(widths))  # every width labelled when the labels cannot collide
    else:
        ax.xaxis.set_major_locator(MaxNLocator(nbins=10, integer=True, steps=[1, 2, 5, 10]))
    ax.set_xlabel("width n (hidden units)")
    ax.set_ylabel("wall time to decide (s, log scale)")
    ax.grid(True, which="major", alpha=0.3)
    ax.grid(True, which="minor", axis="y", alpha=0.1)


def _seconds_label(value: float, _position) -> str:
    """Decades as plain numbers (0.001, 0.1, 10), not powers of ten."""
    return f"{value:g}" if value >= 1e-4 else f"{value:.0e}"


def title(sweep: dict) -> str:
    """The figure title: dimension, family and its range or density."""
    if sweep["family"] == "hard":
        what = f"density {sweep['density'] if sweep['density'] is not None else 1.0}" + ("" if sweep.get("plant", True) else ", unplanted")
    elif sweep["family"] == "low_precision":
        levels = sweep.get("range") or 1
        what = ("ternary weights" if levels == 1 else f"integer weights in [−{levels}, {levels}]") + ("" if sweep.get("plant", True) else ", unplanted")
    elif sweep.get("range") is not None:
        what = f"integer entries in [−{sweep['range']}, {sweep['range']}]"
    else:
        what = "the constructor's default range"
    return f"d = {sweep['d']}, {sweep['family'].replace('_', '-')} instances, {what}"


def caption(report: dict) -> str:
    """The caption line: seeds, widths, time limit, and the machine the runs were timed on."""
    sweep = report["sweep"]
    seeds, widths = sweep["seeds"], sweep["widths"]
    text = (f"seeds {ranges(seeds)} ({len(seeds)} per width), widths {widths[0]}–{widths[-1]} ({len(widths)}), "
            f"time limit {sweep['time_limit']:g} s per run")
    machine = report.get("machine") or {}
    if machine.get("cpus"):
        text += f"; {machine['cpus']} CPUs"
    if machine.get("started"):
        text += f", {machine['started'].split(' ')[0]}"
    return text
