"""The CLI as a product: closed pipes, file modes, bad options, clusters, threads.

Exit codes and messages are checked through real subprocesses where the
behaviour is about the process (pipes, exit status); in-process where it is
about what a library call leaves behind (threads, the §7 time budget).
"""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import threading
from pathlib import Path

import pytest

from indexset import solve
from indexset.budget import INTERRUPTED
from indexset.cli.main import main
from indexset.model.instance import Instance
from indexset.search.cluster import Cluster
from indexset.workflows import construct

INSTANCES = Path(__file__).resolve().parents[2] / "instances"
CLI = [shutil.which("indexset") or "indexset"]


def _run(*argv, **options):
    return subprocess.run([*CLI, *map(str, argv)], capture_output=True, text=True, timeout=300, **options)


# ------------------------------------------------------------ closed pipes
@pytest.mark.slow
@pytest.mark.parametrize("argv", [
    ("info", INSTANCES / "planted_d2_n12.npz"),
    ("info", INSTANCES / "planted_d2_n12.npz", "--json"),
    ("solve", INSTANCES / "planted_d2_n12.npz", "--all"),
    ("solve-system", "TINY", "--all", "--json"),
    ("bench", "--d", "2", "--widths", "6,8", "--seeds", "1", "--no-warmup"),
])
def test_output_into_a_closed_pipe_ends_quietly(argv, tmp_path):
    if "TINY" in argv:
        path = tmp_path / "tiny.dat"
        path.write_text("3 6\n1 2 3 4 5 6 7\n2 3 1 1 2 1 4\n1 1 1 1 1 1 3\n")
        argv = tuple(str(path) if a == "TINY" else a for a in argv)
    reader, writer = os.pipe()
    os.close(reader)  # the reader is gone before the first byte
    process = subprocess.run([*CLI, *map(str, argv)], stdout=writer, stderr=subprocess.PIPE, text=True, timeout=300)
    os.close(writer)
    assert "Traceback" not in process.stderr and "BrokenPipe" not in process.stderr, process.stderr
    assert process.returncode in (0, 1, 3), process.stderr


@pytest.mark.slow
def test_closed_pipe_keeps_the_exit_status_of_the_answer():
    reader, writer = os.pipe()
    os.close(reader)
    process = subprocess.run([*CLI, "solve", INSTANCES / "random_d2_n12.npz"], stdout=writer, stderr=subprocess.PIPE, text=True, timeout=300)
    os.close(writer)
    assert process.returncode == 1, process.stderr  # not absorbable, as with an open pipe
    assert process.stderr == ""


# ------------------------------------------------------------- file modes
def _mode(path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


@pytest.mark.parametrize("mask", [0o022, 0o002, 0o077])
def test_written_files_get_the_mode_of_the_umask(tmp_path, mask, capsys):
    previous = os.umask(mask)
    try:
        instance = tmp_path / "x.npz"
        assert main(["construct", "planted", "--d", "2", "--n", "8", "-o", str(instance)]) == 0
        witness = tmp_path / "w.npz"
        assert main(["solve", str(instance), "--witness", str(witness)]) == 0
        report = tmp_path / "bench.json"
        assert main(["bench", "--d", "2", "--widths", "6", "--seeds", "1", "--methods", "pipeline", "--no-warmup", "--time-limit", "20", "--out", str(report)]) in (0, 1)
        for path in (instance, witness, report):
            assert _mode(path) == 0o666 & ~mask, (path.name, oct(_mode(path)))
    finally:
        os.umask(previous)
    capsys.readouterr()


# ----------------------------------------------------- out-of-range options
@pytest.mark.slow
@pytest.mark.parametrize("argv", [
    ("construct", "planted", "--range", "99999999999999999999", "-o", "x.npz"),
    ("construct", "planted", "--denominator", "99999999999999999999999", "-o", "x.npz"),
    ("construct", "gated", "--activation", "swiglu", "--range", "99999999999999999999", "-o", "x.npz"),
    ("construct", "planted", "--d", "100000", "--n", "200000", "-o", "x.npz"),
    ("construct", "random", "--n", "99999999999", "-o", "x.npz"),
    ("construct", "stack", "--layers", "100000", "-o", "x.npz"),
    ("solve", INSTANCES / "planted_d2_n12.npz", "--seed", "-1"),
    ("solve", INSTANCES / "planted_d2_n12.npz", "--time-limit", "nan"),
    ("solve", INSTANCES / "planted_d2_n12.npz", "--time-limit", "-3"),
    ("solve", INSTANCES / "planted_d2_n12.npz", "--workers", "0"),
    ("solve", INSTANCES / "planted_d2_n12.npz", "--scheduler", "tcp://127.0.0.1:9"),
    ("solve", INSTANCES / "planted_d2_n12.npz", "--scheduler", "tcp://127.0.0.1:notaport"),
    ("solve-system", INSTANCES / "planted_d2_n12.npz", "--time-limit", "0"),
])
def test_out_of_range_options_are_bad_input(argv, tmp_path):
    process = _run(*argv, cwd=tmp_path)
    assert process.returncode == 2, (process.returncode, process.stderr)
    lines = process.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("indexset: error:"), process.stderr
    assert not list(tmp_path.iterdir()), "nothing may be written on bad input"


# ------------------------------------------------- threads left behind
def _ours():
    return {t for t in threading.enumerate() if t.name.startswith("indexset")}


@pytest.mark.parametrize("name", ["planted_d2_n12.npz", "hard_d2_n16.npz", "random_d2_n12.npz", "degenerate_d2_n6.npz"])
def test_solve_leaves_no_thread_running(name):
    before = set(threading.enumerate())
    result = solve(Instance.load(INSTANCES / name))
    assert result.status in ("absorbable", "not_absorbable", "unknown")
    left = [t for t in threading.enumerate() if t not in before and t.is_alive()]
    assert not left, left


def test_stop_request_returns_promptly_with_every_thread_joined():
    instance = construct.random(d=2, n=60, range=1000, seed=3)
    stop = threading.Event()
    timer = threading.Timer(0.5, stop.set)
    timer.start()
    before = set(threading.enumerate())
    result = solve(instance, stop=stop)
    timer.join()
    assert result.status in ("not_absorbable", "unknown")
    if result.status == "unknown":
        assert result.halted == INTERRUPTED
    assert not [t for t in threading.enumerate() if t not in before and t.is_alive()]


def test_degenerate_decision_spends_the_callers_remaining_time(monkeypatch):
    import indexset.solver as solver

    seen = []
    original = solver.decide_degenerate

    def spy(instance, **options):
        seen.append(options["budget"].remaining())  # the caller's one budget, passed down whole
        return original(instance, **options)

    monkeypatch.setattr(solver, "decide_degenerate", spy)
    base = construct.random(d=2, n=8, range=20, seed=5)
    up = base.W_up.copy()
    up[1] = 2 * up[0]  # collinear rows: degenerate, and no S (random weights)
    solve(Instance(up, base.W_down, activation="relu"), time_limit=7.0)
    assert seen, "the degenerate decision was not reached"
    assert all(limit is not None and 0 < limit <= 7.0 for limit in seen), seen


# ------------------------------------------------------ local cluster fallback
def test_local_cluster_that_cannot_start_falls_back_to_threads(monkeypatch):
    from dataclasses import replace

    from tunings import KERNEL_WALK

    tuning = replace(KERNEL_WALK, split_from=0)  # a tree this small would be walked before any cluster is asked
    system_instance = construct.random(d=2, n=50, range=1000, seed=2)  # D ≥ 40: the engine estimates the tree
    messages = []
    cluster = Cluster(workers=2, min_seconds=0, on_problem=messages.append)

    def broken(self):
        raise OSError("cannot spawn worker processes")

    monkeypatch.setattr(Cluster, "_connect", broken)
    with cluster:
        with_cluster = solve(system_instance, cluster=cluster, engines=["lattice"], lattice_tuning=tuning)
    alone = solve(system_instance, engines=["lattice"], lattice_tuning=tuning)
    assert with_cluster.status == alone.status and with_cluster.status != "unknown"
    assert with_cluster.index_set == alone.index_set
    assert len(messages) == 1 and "could not start" in messages[0] and "cannot spawn" in messages[0]


@pytest.mark.parametrize("argv, cluster_expected", [
    (["solve", "FILE"], False),
    (["solve", "FILE", "--workers", "2"], True),
    (["solve-system", "SYSTEM"], False),
])
def test_a_dask_cluster_only_when_asked(argv, cluster_expected, monkeypatch, tmp_path, capsys):
    """Without --workers or --scheduler the search stays in process: no Cluster is even built."""
    made = []
    original = Cluster.__init__

    def recording(self, *args, **kwargs):
        made.append(kwargs)
        original(self, *args, **kwargs)

    monkeypatch.setattr(Cluster, "__init__", recording)
    import numpy as np

    system = tmp_path / "system.npz"
    np.savez(system, A=np.array([[1, 2, 3, 4]]), b=np.array([5]))
    argv = [str(INSTANCES / "planted_d2_n12.npz") if a == "FILE" else str(system) if a == "SYSTEM" else a for a in argv]
    assert main(argv) == 0
    capsys.readouterr()
    assert bool(made) == cluster_expected


# ------------------------------------------- library parameters, CLI flags
@pytest.mark.parametrize("call, parameter, flag_argv, flag", [
    (lambda: construct.planted(d=1), "d", ["construct", "planted", "--d", "1"], "--d"),
    (lambda: construct.hard(plant=False, k=3), "plant", ["construct", "hard", "--unplanted", "--k", "3"], "--k"),
    (lambda: solve(Instance.load(INSTANCES / "planted_d2_n12.npz"), target_class="nonsense"), "target_class", None, None),
    (lambda: solve(Instance.load(INSTANCES / "planted_d2_n12.npz"), seed=-1), "seed", ["solve", str(INSTANCES / "planted_d2_n12.npz"), "--seed", "-1"], "--seed"),
])
def test_library_errors_name_parameters_and_the_cli_names_flags(call, parameter, flag_argv, flag, tmp_path, capsys):
    from indexset.errors import InputError

    with pytest.raises(InputError) as raised:
        call()
    assert raised.value.source in (parameter, "k")
    assert not raised.value.source.startswith("--")
    if flag_argv is not None:
        assert main([*flag_argv, *(["-o", str(tmp_path / "x.npz")] if flag_argv[0] == "construct" else [])]) == 2
        assert capsys.readouterr().err.startswith(f"indexset: error: {flag}: ")
