"""``scan --plot``: each layer's certified distance interval, one panel per model.

The interval of a layer runs from the certified lower bound of the Gram
path to the distance of its best index set S (the upper bound), both
divided by ‖A‖_F (A the skip; √d for the identity). An absorbable layer sits
at 0. Layers without an interval (decided by theorem, or not scanned) are
marked on the axis. matplotlib is imported only here, and only when a
figure is drawn; the figure is written atomically as PDF, SVG or PNG,
chosen by the file's extension.
"""

from __future__ import annotations

import os

from indexset.errors import InputError
from indexset.model.files import atomic_write

FORMATS = {".pdf": "pdf", ".svg": "svg", ".png": "png"}
PANEL_INCHES = (3.4, 2.6)
"""One panel's width and height: a journal column."""

STYLE = {
    "font.size": 8,
    "axes.titlesize": 8,
    "axes.labelsize": 8,
    "xtick.labelsize": 7,
    "ytick.labelsize": 7,
    "legend.fontsize": 7,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "pdf.fonttype": 42,  # TrueType in PDFs: the text stays text (journals ask for it)
    "svg.fonttype": "none",  # SVG text as <text> elements, editable and searchable
    "savefig.dpi": 300,
}

MAX_LAYER_TICKS = 12
"""Up to this many layers each gets its tick; more share integer ticks."""

COLOURS = {"absorbable": "#1b7837", "not_absorbable": "#2166ac", "unknown": "#878787"}
LABELS = {"absorbable": "absorbable", "not_absorbable": "not absorbable", "unknown": "unknown"}


def plot_format(path) -> str:
    """The figure format of an output path, checked before any work starts.

    Raises
    ------
    InputError
        An extension other than .pdf, .svg, .png, or a folder that does
        not exist (parameter ``plot``).
    """
    path = os.fspath(path)
    extension = os.path.splitext(path)[1].lower()
    if extension not in FORMATS:
        raise InputError("plot", f"{path}: the extension chooses the format: .pdf, .svg or .png")
    if not os.path.isdir(os.path.dirname(os.path.abspath(path))):
        raise InputError("plot", f"{path}: output folder does not exist")
    return FORMATS[extension]


def scan_figure(reports):
    """The figure of one or more scan reports (:class:`indexset.large.scan.ScanReport`), one panel each.

    Returns
    -------
    matplotlib.figure.Figure
        Not attached to pyplot; each interval is drawn by ``Axes.vlines``
        with the gid ``intervals``, the layers without one by a marker
        line with the gid ``no-interval``.
    """
    import matplotlib
    from matplotlib.figure import Figure
    from matplotlib.lines import Line2D
    from matplotlib.ticker import MaxNLocator

    reports = list(reports)
    if not reports:
        raise InputError("reports", "nothing to plot")
    with matplotlib.rc_context(STYLE):
        width, height = PANEL_INCHES
        figure = Figure(figsize=(width * len(reports), height + 0.35), layout="constrained")
        axes = figure.subplots(1, len(reports), squeeze=False)[0]
        statuses = set()
        for ax, report in zip(axes, reports):
            statuses |= _panel(ax, report, MaxNLocator)
        axes[0].set_ylabel(r"distance / $\|A\|_F$")
        handles = [Line2D([], [], color=COLOURS[s], marker="o" if s == "absorbable" else "_", markersize=4 if s == "absorbable" else 8, linewidth=2, label=LABELS[s]) for s in COLOURS if s in statuses]
        if any(_without_interval(report) for report in reports):
            handles.append(Line2D([], [], color=COLOURS["unknown"], marker="x", linestyle="none", label="no interval (theorem or not scanned)"))
        axes[-1].legend(handles=handles, loc="best", frameon=False)
        classes = sorted({report.target_class for report in reports})
        models = ", ".join(_plain(report.model) for report in reports)
        figure.supxlabel(
            r"Certified distance to absorbability per layer, lower to upper bound, relative to $\|A\|_F$. "
            f"{'Model' if len(reports) == 1 else 'Models'}: {models}; class {', '.join(classes)}.",
            fontsize=7, wrap=True,
        )
    return figure


def _plain(text: str) -> str:
    """Text that matplotlib shows as written (a "$" would start mathtext)."""
    return str(text).replace("$", r"\$")


def _without_interval(report) -> list:
    return [row for row in report.layers if row.get("relative_lower") is None or row.get("relative_upper") is None]


def _panel(ax, report, locator) -> set:
    """Draw one report; return the statuses drawn."""
    statuses = set()
    top = 0.0
    for status in COLOURS:
        rows = [row for row in report.layers if row["status"] == status and row.get("relative_lower") is not None and row.get("relative_upper") is not None]
        if not rows:
            continue
        statuses.add(status)
        layers = [row["layer"] for row in rows]
        lower = [row["relative_lower"] for row in rows]
        upper = [row["relative_upper"] for row in rows]
        top = max(top, *upper)
        lines = ax.vlines(layers, lower, upper, colors=COLOURS[status], linewidth=2.2)
        lines.set_gid("intervals")
        ax.plot(layers, lower, linestyle="none", marker="_", markersize=7, color=COLOURS[status])
        ax.plot(layers, upper, linestyle="none", marker="_", markersize=7, color=COLOURS[status])
        points = [(layer, lo) for layer, lo, hi in zip(layers, lower, upper) if lo == hi]
        if points:  # a zero-length interval (an exact S: distance 0) is a dot, not an invisible bar
            ax.plot(*zip(*points), linestyle="none", marker="o", markersize=3.5, color=COLOURS[status], clip_on=False)
    missing = _without_interval(report)
    if missing:
        (marks,) = ax.plot([row["layer"] for row in missing], [0.0] * len(missing), linestyle="none", marker="x", markersize=4, color=COLOURS["unknown"], clip_on=False)
        marks.set_gid("no-interval")
    ax.set_ylim(0.0, top * 1.12 if top > 0 else 1.0)
    layers = [row["layer"] for row in report.layers]
    if layers:
        ax.set_xlim(min(layers) - 0.7, max(layers) + 0.7)
    if 0 < len(layers) <= MAX_LAYER_TICKS:
        ax.set_xticks(layers)  # the scanned layers themselves, not the ones between
    else:
        ax.xaxis.set_major_locator(locator(integer=True, nbins=MAX_LAYER_TICKS))
    ax.set_xlabel("layer")
    ax.grid(axis="y", linewidth=0.4, alpha=0.5)
    ax.set_title(f"{_plain(report.model)}\n{report.layout}, {report.activation}, {report.norm}, class {report.target_class}")
    return statuses


def write_scan_plot(reports, path) -> None:
    """Draw :func:`scan_figure` and write it to ``path`` atomically (format by extension).

    Raises
    ------
    InputError
        As :func:`plot_format`, or when the file cannot be written.
    """
    fmt = plot_format(path)
    figure = scan_figure(reports)
    with _style():
        atomic_write(path, lambda stream: figure.savefig(stream, format=fmt, bbox_inches="tight"), "." + fmt)


def _style():
    import matplotlib

    return matplotlib.rc_context(STYLE)
