"""Tests of ``indexset bench`` (issue 5): file contents, never timings.

A tiny sweep runs through the CLI into a temporary folder; every run must be
in the JSON, every answer must agree with the brute force over all 2^n
subsets (computed here, independently of the sweep), every positive must
carry an S that passes the exact verifier, and the PNG must be a PNG
(figures in the other formats: ``test_plots.py``).
"""

from __future__ import annotations

import json

import pytest

from indexset.cli.main import main
from indexset.errors import InputError
from indexset.exact.verify import verify
from indexset.model.instance import Instance
from indexset.search.engines.brute import absorbing_sets_brute
from indexset.search.system import build_system
from indexset.workflows import bench, construct

METHODS = ["pipeline", "cpsat-plain", "milp", "brute"]
WIDTHS = [6, 8, 10]
SEEDS = [0, 1]
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


@pytest.fixture(scope="module", params=["planted", "random"])
def sweep(request, tmp_path_factory):
    """Run the tiny sweep once per family; return (family, exit code, report, png path)."""
    family = request.param
    folder = tmp_path_factory.mktemp(f"bench_{family}")
    out, png = folder / "results.json", folder / "width.png"
    code = main([
        "bench", "--d", "2", "--widths", "6:10:2", "--seeds", "2", "--family", family, "--range", "20",
        "--methods", ",".join(METHODS), "--time-limit", "10", "--out", str(out), "--plot", str(png),
    ])
    return family, code, json.loads(out.read_text(encoding="utf-8")), png


def test_every_run_is_recorded(sweep):
    family, code, report, _ = sweep
    assert code == 0
    keys = {(r["method"], r["n"], r["seed"]) for r in report["runs"]}
    assert keys == {(m, n, s) for m in METHODS for n in WIDTHS for s in SEEDS}
    assert len(report["runs"]) == len(keys)
    for run in report["runs"]:
        assert {"method", "n", "d", "seed", "family", "params", "status", "time_s", "index_set", "verified", "timed_out"} <= set(run)
        assert run["d"] == 2 and run["family"] == family
        assert run["params"]["seed"] == run["seed"] and run["params"]["n"] == run["n"]
        assert f"--widths {run['n']} " in run["rerun"] and f"--first-seed {run['seed']} " in run["rerun"]


def test_answers_agree_with_brute_force(sweep):
    family, _, report, _ = sweep
    for run in report["runs"]:
        instance = construct.build(family, d=2, n=run["n"], range=20, seed=run["seed"])
        truth = absorbing_sets_brute(instance)
        if truth:
            assert run["status"] == bench.FEASIBLE, run
            assert run["verified"] and verify(instance, run["index_set"]).holds
            assert run["index_set"] in truth
        else:
            assert run["status"] in (bench.INFEASIBLE, bench.INFEASIBLE_FLOAT), run
            assert run["index_set"] is None
        assert run["status"] != bench.INFEASIBLE_FLOAT or run["method"] == "milp"
        assert not run["timed_out"]


def test_no_disagreements_and_complete_summary(sweep):
    _, _, report, _ = sweep
    assert report["disagreements"] == []
    assert len(report["summary"]) == len(METHODS) * len(WIDTHS)
    assert all(row["solved"] == row["runs"] == len(SEEDS) for row in report["summary"])
    assert report["sweep"]["methods"] == METHODS and report["machine"]["cpus"] >= 1


def test_plot_is_a_png(sweep):
    _, _, _, png = sweep
    data = png.read_bytes()
    assert len(data) > 1000 and data.startswith(PNG_MAGIC)


def test_report_can_be_rerendered(sweep, tmp_path, capsys, monkeypatch):
    _, _, report, _ = sweep
    monkeypatch.setattr(bench, "run_sweep", lambda *args, **kwargs: pytest.fail("--from must not run a sweep"))
    saved = tmp_path / "again.json"
    bench.write_json(report, saved)
    png = tmp_path / "again.png"
    assert main(["bench", "--from", str(saved), "--plot", str(png), "--markdown"]) == 0
    assert png.read_bytes().startswith(PNG_MAGIC)
    assert "| n | pipeline |" in capsys.readouterr().out


# ---------------------------------------------------------- bad options
@pytest.mark.parametrize("options", [
    ["--widths", "10:5"],
    ["--widths", "a:b"],
    ["--widths", "1:10:2"],          # width 1 < d
    ["--widths", "4:8:0"],
    ["--methods", "pipeline,gurobi"],
    ["--methods", ""],
    ["--family", "gated"],
    ["--time-limit", "0"],
    ["--seeds", "0"],
    ["--family", "hard", "--range", "9"],
    ["--density", "1.0"],
    ["--plot", "width.jpg"],
])
def test_bad_options_exit_2(options, tmp_path, capsys):
    assert main(["bench", "--d", "2", "--widths", "6", *options]) == 2
    assert "indexset: error:" in capsys.readouterr().err


def test_parse_widths():
    assert bench.parse_widths("10:80:10") == [10, 20, 30, 40, 50, 60, 70, 80]
    assert bench.parse_widths("4,10:30:10,12") == [4, 10, 12, 20, 30]
    assert bench.parse_widths("7") == [7]


# ------------------------------------------------ per-run special cases
def test_brute_is_skipped_past_its_width():
    instance = construct.planted(d=2, n=23, seed=0)
    outcome = bench.run_method("brute", instance, 1.0)
    assert outcome["status"] == bench.SKIPPED and "n ≤ 22" in outcome["note"]


def test_milp_skips_coefficients_beyond_float():
    planted = construct.planted(d=2, n=8, seed=0)
    scale = 2**27  # products of the weights reach 2^54: no longer exact in float64
    instance = Instance(planted.W_up * scale, planted.W_down * scale, skip=planted.skip)
    assert build_system(instance).max_abs() >= 2**53
    assert bench.run_method("milp", instance, 5.0)["status"] == bench.SKIPPED
    assert bench.run_method("milp", planted, 5.0)["status"] != bench.SKIPPED


def _fake_run(method, status, index_set=None, verified=False):
    return {"method": method, "n": 8, "seed": 0, "status": status, "index_set": index_set, "verified": verified, "reason": "", "note": ""}


def test_contradictions_are_reported():
    instance = construct.planted(d=2, n=8, seed=0)
    ref = bench.reference(bench.Sweep(d=2, widths=[8], seeds=[0]), 8, 0, instance)
    assert ref["planted_verified"]
    runs = [_fake_run("milp", bench.INFEASIBLE_FLOAT), _fake_run("brute", bench.FEASIBLE, ref["planted_S"], True)]
    problems = bench.find_disagreements(runs, [ref])
    assert [p["kind"] for p in problems] == ["contradiction"]
    assert problems[0]["infeasible"][0]["method"] == "milp"
    wrong = bench.find_disagreements([_fake_run("cpsat-plain", bench.UNVERIFIED_HIT, [0, 1])], [ref])
    assert [p["kind"] for p in wrong] == ["unverified_hit"]


# --------------------------------------------------- low-precision family
@pytest.fixture(scope="module", params=[True, False], ids=["planted", "unplanted"])
def low_precision_sweep(request):
    """A tiny ternary sweep, planted or not (run through the library: its report and its sweep)."""
    sweep = bench.Sweep(d=3, widths=[6, 12], seeds=[0, 1], family="low_precision", plant=request.param,
                        methods=("pipeline", "brute"), time_limit=20)
    return sweep, bench.run_sweep(sweep, warmup=False)


def test_low_precision_answers_agree_with_brute_force(low_precision_sweep):
    sweep, report = low_precision_sweep
    assert report["disagreements"] == []
    assert len(report["runs"]) == 2 * 2 * 2
    for run in report["runs"]:
        instance = construct.low_precision(d=3, n=run["n"], seed=run["seed"], plant=sweep.plant)
        assert run["params"] == json.loads(instance.metadata["params"])
        truth = absorbing_sets_brute(instance)
        if truth:
            assert run["status"] == bench.FEASIBLE and verify(instance, run["index_set"]).holds, run
        else:
            assert run["status"] in (bench.INFEASIBLE, bench.WITNESS), run
            assert run["verified"] == (run["status"] == bench.WITNESS)
        if sweep.plant:
            assert instance.planted in truth
    assert all(row["solved"] == row["runs"] == 2 for row in report["summary"])


def test_low_precision_is_plotted_and_rebuilt_by_its_commands(low_precision_sweep, tmp_path):
    from indexset.workflows.plots import plot_report

    sweep, report = low_precision_sweep
    png = tmp_path / "low_precision.png"
    plot_report(report, png)
    assert png.read_bytes().startswith(PNG_MAGIC)
    run = report["runs"][0]
    assert run["construct"].startswith("indexset construct low_precision --d 3 --n 6 ")
    assert ("--unplanted" in run["construct"]) == (not sweep.plant) == ("--unplanted" in run["rerun"])
    argv = run["construct"].split()[1:]
    argv[argv.index("-o") + 1] = str(tmp_path / "point.npz")
    assert main(argv) == 0


def test_a_witness_without_s_contradicts_a_verified_s():
    instance = construct.low_precision(d=3, n=12, seed=0)
    ref = bench.reference(bench.Sweep(d=3, widths=[12], seeds=[0], family="low_precision"), 12, 0, instance)
    assert ref["planted_verified"]
    problems = bench.find_disagreements([_fake_run("pipeline", bench.WITNESS, None, True) | {"n": 12}], [ref])
    assert [p["kind"] for p in problems] == ["contradiction"]


def test_only_hard_and_low_precision_sweeps_may_be_unplanted():
    bench.Sweep(d=2, widths=[6], seeds=[0], family="low_precision", plant=False).validate()
    with pytest.raises(InputError) as caught:
        bench.Sweep(d=2, widths=[6], seeds=[0], family="planted", plant=False).validate()
    assert caught.value.source == "plant"
