"""Figures of bench reports: the format follows the extension, timeouts and disagreements are marked, --from re-renders without running.

The report is written here by hand (no sweep runs), so every marker class
is present: decided runs, a timeout, an unknown and a disagreement.
"""

from __future__ import annotations

import json

import pytest
from reports import report

from indexset.cli.main import main
from indexset.workflows import bench, plots

MAGIC = {"pdf": b"%PDF", "svg": b"<svg", "png": b"\x89PNG\r\n\x1a\n"}


@pytest.fixture
def saved(tmp_path):
    path = tmp_path / "results.json"
    path.write_text(json.dumps(report()), encoding="utf-8")
    return path


@pytest.mark.parametrize("fmt", ["pdf", "svg"])  # PNG: tests/workflows/test_bench.py
def test_from_rerenders_every_format_without_running(fmt, saved, tmp_path, monkeypatch, capsys):
    def no_sweep(*args, **kwargs):
        raise AssertionError("--from must not run a sweep")

    monkeypatch.setattr(bench, "run_sweep", no_sweep)
    monkeypatch.setattr(bench, "run_method", no_sweep)
    out = tmp_path / f"figure.{fmt}"
    assert main(["bench", "--from", str(saved), "--plot", str(out)]) == 1  # the report holds a disagreement
    data = out.read_bytes()
    head = data[:400].lstrip()
    assert head.startswith(MAGIC[fmt]) or (fmt == "svg" and head.startswith(b"<?xml") and b"<svg" in head), data[:80]
    assert "DISAGREEMENT n=6 seed=0" in capsys.readouterr().err
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(["results.json", out.name])  # no temporary file left


def test_markers_legend_title_and_caption(tmp_path):
    """SVG keeps text as text: the legend names the timeout, undecided and disagreement markers; title and caption the sweep."""
    out = tmp_path / "f.svg"
    plots.plot_report(report(), out)
    text = out.read_text(encoding="utf-8")
    assert "timeout, drawn at the limit (1 run)" in text
    assert "undecided: unknown, error or interrupted (1)" in text
    assert "disagreement or wrong claim, see the JSON (2 runs)" in text  # pipeline and milp at n = 6, seed 0
    assert "d = 2, planted instances, integer entries in [−20, 20]" in text
    assert "seeds 0–1 (2 per width), widths 6–10 (3), time limit 10 s per run; 2 CPUs, 2030-01-02" in text
    for label in ("pipeline (indexset solve)", "HiGHS MILP on M z = t", "time limit (10 s per run)"):
        assert label in text


def test_a_figure_without_problems_has_no_problem_entries(tmp_path):
    clean = report()
    clean["runs"] = [run for run in clean["runs"] if run["status"] == "feasible"]
    clean["disagreements"] = []
    out = tmp_path / "f.svg"
    plots.plot_report(clean, out)
    text = out.read_text(encoding="utf-8")
    assert "timeout" not in text and "disagreement" not in text and "undecided" not in text


@pytest.mark.slow  # four renders, two with font subsetting
def test_same_report_same_bytes(tmp_path):
    for fmt in ("pdf", "svg"):
        first, second = tmp_path / f"a.{fmt}", tmp_path / f"b.{fmt}"
        plots.plot_report(report(), first)
        plots.plot_report(report(), second)
        assert first.read_bytes() == second.read_bytes(), fmt


def test_disagreeing_runs_are_the_named_ones():
    flagged = plots.disagreeing_runs(report())
    assert flagged == {("pipeline", 6, 0), ("milp", 6, 0)}
    orphan = report()
    orphan["disagreements"] = [{"n": 8, "seed": 1, "kind": "unverified_hit", "method": "constructor"}]
    assert plots.disagreeing_runs(orphan) == {("pipeline", 8, 1), ("milp", 8, 1)}


@pytest.mark.parametrize("name", ["figure.jpg", "figure", "figure.pdf.txt"])
def test_other_extensions_are_bad_input(name, saved, tmp_path, capsys):
    assert main(["bench", "--from", str(saved), "--plot", str(tmp_path / name)]) == 2
    err = capsys.readouterr().err
    assert len(err.splitlines()) == 1 and "--plot" in err and ".pdf, .svg or .png" in err
    assert not (tmp_path / name).exists()


def test_low_precision_titles_say_ternary_or_the_range_and_whether_planted():
    base = {"d": 3, "family": "low_precision", "density": None}
    assert plots.title({**base, "range": None, "plant": True}) == "d = 3, low-precision instances, ternary weights"
    assert plots.title({**base, "range": 2, "plant": False}) == "d = 3, low-precision instances, integer weights in [−2, 2], unplanted"
