"""``scan --plot``: the figure draws each row's interval where the report puts it, in every format."""

from __future__ import annotations

import xml.etree.ElementTree as ElementTree

import numpy as np
import pytest
from checkpoints import bert, llama, opt

from indexset.errors import InputError
from indexset.large.scan import scan
from indexset.workflows.scanplot import plot_format, scan_figure, write_scan_plot


@pytest.fixture(scope="module")
def reports(tmp_path_factory):
    folder = tmp_path_factory.mktemp("checkpoints")
    return [scan(opt(folder)), scan(llama(folder), target_class="bias-free"), scan(bert(folder), time_limit=1e-9)]


def test_intervals_sit_where_the_rows_say(reports):
    figure = scan_figure(reports)
    axes = figure.axes
    assert len(axes) == 3
    for ax, report in zip(axes, reports):
        drawn = set()
        for collection in ax.collections:
            if collection.get_gid() == "intervals":
                for (x0, y0), (x1, y1) in collection.get_segments():
                    assert x0 == x1
                    drawn.add((int(x0), round(min(y0, y1), 12), round(max(y0, y1), 12)))
        expected = {(row["layer"], round(row["relative_lower"], 12), round(row["relative_upper"], 12)) for row in report.layers if row["relative_lower"] is not None}
        assert drawn == expected
        marks = [line for line in ax.get_lines() if line.get_gid() == "no-interval"]
        without = [row["layer"] for row in report.layers if row["relative_lower"] is None]
        assert [list(np.asarray(line.get_xdata(), dtype=int)) for line in marks] == ([without] if without else [])
        assert report.model in ax.get_title() and report.target_class in ax.get_title()
        assert [int(t) for t in ax.get_xticks()] == [row["layer"] for row in report.layers]
    caption = figure.get_supxlabel()
    assert "class affine, bias-free" in caption and all(report.model in caption for report in reports)
    opt_top = max(row["relative_upper"] for row in reports[0].layers)
    assert axes[0].get_ylim()[0] == 0 and axes[0].get_ylim()[1] > opt_top


@pytest.mark.parametrize(("suffix", "magic"), [(".pdf", b"%PDF"), (".png", b"\x89PNG"), (".svg", b"<?xml")])
def test_every_format_by_extension(tmp_path, reports, suffix, magic):
    path = tmp_path / f"scan{suffix.upper() if suffix == '.png' else suffix}"
    write_scan_plot(reports[:1], path)
    data = path.read_bytes()
    assert data.startswith(magic) and len(data) > 1000
    if suffix == ".svg":  # text stays text: the model and the axis labels can be searched for
        texts = "".join(element.text or "" for element in ElementTree.fromstring(data).iter() if element.tag.endswith("text"))
        assert reports[0].model in texts and "layer" in texts
    assert [p.name for p in tmp_path.iterdir()] == [path.name]  # no temporary file left beside it


def test_bad_plot_paths_are_refused_first(tmp_path):
    for bad in (tmp_path / "figure.jpg", tmp_path / "figure", tmp_path / "missing" / "figure.pdf"):
        with pytest.raises(InputError) as error:
            plot_format(bad)
        assert error.value.source == "plot"
    assert plot_format(tmp_path / "Figure.SVG") == "svg"
