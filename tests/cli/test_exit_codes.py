"""Exit statuses of the real command line, in subprocesses: single files, batches, bad input, --version.

The expected verdicts come from the brute force over all 2^n subsets and
from the theorem tables (a sigmoid-gated GLU is covered by none), not from
an earlier run. Processes run two at a time (the machine has two cores).
"""

from __future__ import annotations

import importlib.metadata
import json
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

import pytest

from indexset.search.engines.brute import absorbing_sets_brute
from indexset.workflows import construct

CLI = [sys.executable, "-m", "indexset"]
HANG_S = 120  # a guard against a hung process, not a timing assertion


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    folder = tmp_path_factory.mktemp("exit_codes")
    made = {
        "yes": construct.planted(d=2, n=10, seed=3),
        "no": construct.random(d=2, n=10, seed=3),
        "unknown": construct.gated(activation="glu", d=2, n=6, seed=1),
    }
    paths = {}
    for name, instance in made.items():
        paths[name] = str(folder / f"{name}.npz")
        construct.write_reproducible(instance, paths[name])
    # the references behind the expected statuses
    absorbing = {tuple(sorted(S)) for S in absorbing_sets_brute(made["yes"])}
    assert absorbing and not absorbing_sets_brute(made["no"])
    assert made["unknown"].act.kind == "uncovered"
    paths["not_S"] = str(next(i for i in range(10) if (i,) not in absorbing))  # a single unit that does not absorb
    paths["corrupt"] = str(folder / "corrupt.npz")
    with open(paths["corrupt"], "wb") as handle:
        handle.write(b"not an npz archive")
    paths["missing"] = str(folder / "missing.npz")
    paths["folder"] = str(folder)
    paths["S"] = ",".join(str(i) for i in made["yes"].planted)
    return paths


def run_all(commands: dict, cwd) -> dict:
    def one(argv):
        return subprocess.run(CLI + argv, capture_output=True, text=True, timeout=HANG_S, cwd=cwd)

    with ThreadPoolExecutor(2) as pool:
        done = dict(zip(commands, pool.map(one, commands.values())))
    for name, process in done.items():
        assert "Traceback" not in process.stderr, (name, process.stderr)
    return done


def test_exit_statuses(files, tmp_path):
    f = files
    out = tmp_path / "out"
    out.mkdir()
    done = run_all({
        "yes": ["solve", f["yes"]],  # a single "no" (exit 1): tests/cli/test_cli_robustness.py
        "unknown": ["solve", f["unknown"]],
        "missing": ["solve", f["missing"]],
        "batch_json": ["solve", f["yes"], f["unknown"], f["no"], "--json"],
        "batch_bad_file": ["solve", f["yes"], f["missing"], f["no"], "--json"],
        "witness_mismatch": ["verify", f["yes"], "--index-set", f["S"], "--witness", str(out / "a.npz"), "--format", "safetensors"],
        "version": ["--version"],
    }, tmp_path)
    codes = {name: process.returncode for name, process in done.items()}
    assert codes == {
        "yes": 0, "unknown": 3, "missing": 2, "batch_json": 3, "batch_bad_file": 2, "witness_mismatch": 2, "version": 0,
    }, {name: done[name].stderr for name in codes}
    # bad input: one line on stderr, nothing on stdout, nothing written
    for name in ("missing", "witness_mismatch"):
        assert done[name].stdout == "" and len(done[name].stderr.splitlines()) == 1, name
    assert list(out.iterdir()) == []
    assert "--format" in done["witness_mismatch"].stderr
    # JSON Lines: one object per file, in order, each with its file
    lines = [json.loads(line) for line in done["batch_json"].stdout.splitlines()]
    assert [(p["file"], p["status"]) for p in lines] == [(f["yes"], "absorbable"), (f["unknown"], "unknown"), (f["no"], "not_absorbable")]
    # a bad file of a batch is reported, and the others are still solved
    lines = [json.loads(line) for line in done["batch_bad_file"].stdout.splitlines()]
    assert [(p["file"], p["status"]) for p in lines] == [(f["yes"], "absorbable"), (f["missing"], "bad_input"), (f["no"], "not_absorbable")]
    assert "no such file" in lines[1]["reason"]
    assert done["batch_bad_file"].stderr.splitlines() == [f"indexset: error: {f['missing']}: no such file"]
    assert done["version"].stdout == f"indexset {importlib.metadata.version('indexset')}\n"


def test_verify_info_scan_and_bench_exit_statuses(files, tmp_path):
    """The other commands' statuses in real processes: 0 and 1 by their answers, 2 on bad input, 3 when cut short."""
    from checkpoints import bert, opt
    from reports import report

    f = files
    saved = tmp_path / "results.json"
    saved.write_text(json.dumps(report()), encoding="utf-8")  # holds a disagreement
    done = run_all({
        "verify_holds": ["verify", f["yes"], "--index-set", f["S"]],
        "verify_fails": ["verify", f["yes"], "--index-set", f["not_S"]],
        "verify_corrupt": ["verify", f["corrupt"], "--index-set", f["S"]],
        "info": ["info", f["yes"]],
        "info_corrupt": ["info", f["corrupt"]],
        "scan_absorbable": ["scan", str(opt(tmp_path)), "--layers", "2"],
        "scan_not": ["scan", str(bert(tmp_path))],
        "scan_bad_layers": ["scan", str(opt(tmp_path)), "--layers", "x"],
        "scan_out_of_time": ["scan", str(opt(tmp_path)), "--time-limit", "0.2"],
        "bench": ["bench", "--d", "2", "--widths", "4", "--seeds", "1", "--methods", "brute", "--no-warmup"],
        "bench_disagreement": ["bench", "--from", str(saved), "--plot", str(tmp_path / "figure.svg")],
        "bench_bad_option": ["bench", "--d", "2", "--widths", "6", "--seeds", "0"],
    }, tmp_path)
    codes = {name: process.returncode for name, process in done.items()}
    assert codes == {
        "verify_holds": 0, "verify_fails": 1, "verify_corrupt": 2, "info": 0, "info_corrupt": 2,
        "scan_absorbable": 0, "scan_not": 1, "scan_bad_layers": 2, "scan_out_of_time": 3,
        "bench": 0, "bench_disagreement": 1, "bench_bad_option": 2,
    }, {name: done[name].stderr for name in codes}
    for name in ("verify_corrupt", "info_corrupt", "scan_bad_layers", "bench_bad_option"):
        assert done[name].stdout == "" and len(done[name].stderr.splitlines()) == 1, (name, done[name].stderr)
    assert f["corrupt"] in done["verify_corrupt"].stderr and f["corrupt"] in done["info_corrupt"].stderr


def test_batch_status_is_the_worst_answer():
    """2 if any bad input, else 3 if any unknown, else 1 if any not absorbable, else 0 (every combination of up to 3 files)."""
    import itertools

    from indexset.cli.common import aggregate

    for size in (1, 2, 3):
        for codes in itertools.product((0, 1, 2, 3), repeat=size):
            expected = 2 if 2 in codes else 3 if 3 in codes else 1 if 1 in codes else 0
            assert aggregate(list(codes)) == expected, codes


def test_batch_in_process(files, tmp_path, capsys):
    """The same rules through main(): a bad option refuses the batch before any file; --witness takes one file."""
    from indexset.cli.main import main

    f = files
    for argv in (["solve", f["yes"], f["no"], "--tol", "x"], ["solve", f["yes"], f["no"], "--witness", str(tmp_path / "w.npz")]):
        capsys.readouterr()
        assert main(argv) == 2
        out, err = capsys.readouterr()
        assert out == "" and len(err.splitlines()) == 1 and err.startswith("indexset: error: --")
    assert list(tmp_path.iterdir()) == []
    capsys.readouterr()
    assert main(["solve", f["yes"], f["no"]]) == 1
    firsts = [line for line in capsys.readouterr().out.splitlines() if not line.startswith(" ")]
    assert firsts == [f"{f['yes']}: ABSORBABLE", f"{f['no']}: NOT ABSORBABLE (extension beyond the paper)"]
