"""Progress off a terminal: plain stderr lines about every ``interval`` seconds, from solve, solve-system, bench and scan.

The interval is shortened here (the ``interval`` argument, or INDEXSET_PROGRESS_SECONDS for the CLI); no assertion is about how long anything
takes (the wait for a heartbeat line has a generous guard only).
"""

from __future__ import annotations

import io
import sys
import threading
import time

import numpy as np

from indexset.cli.common import PLAIN_SECONDS, PLAIN_SECONDS_VARIABLE, Progress, plain_seconds
from indexset.cli.main import main


def test_heartbeat_writes_lines_without_callbacks_and_joins(monkeypatch):
    stream = io.StringIO()
    monkeypatch.setattr(sys, "stderr", stream)
    with Progress("working", enabled=False, interval=0.05) as progress:
        progress({"nodes": 7})
        deadline = time.monotonic() + 60  # a guard, not a timing assertion
        while stream.getvalue().count("\n") < 2 and time.monotonic() < deadline:
            time.sleep(0.01)
    lines = stream.getvalue().splitlines()
    assert len(lines) >= 3  # the call, at least one heartbeat, the done line
    assert all(line.startswith("indexset: working [") for line in lines)
    assert "nodes 7" in lines[-2] and lines[-1].endswith(" done")
    assert not any(thread.name == "indexset-progress" for thread in threading.enumerate())


def test_short_runs_write_nothing(monkeypatch):
    stream = io.StringIO()
    monkeypatch.setattr(sys, "stderr", stream)
    with Progress("working", enabled=False, interval=3600.0) as progress:
        for k in range(100):
            progress({"k": k})
    assert stream.getvalue() == ""


def test_bench_solve_and_solve_system_use_it(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv(PLAIN_SECONDS_VARIABLE, "0")  # every callback and the end write a line
    assert main(["bench", "--d", "2", "--widths", "4,5", "--seeds", "1", "--methods", "brute", "--no-warmup"]) == 0
    err = capsys.readouterr().err.splitlines()
    assert any(line.startswith("indexset: bench [") and "done 2/2" in line and "last brute n=5 seed=0" in line for line in err), err
    assert err[-1].startswith("indexset: bench [") and err[-1].endswith(" done")

    system = tmp_path / "system.npz"
    np.savez(system, A=np.array([[3, 5, 7, 2]]), b=np.array([10]))
    assert main(["solve-system", str(system)]) == 0
    err = capsys.readouterr().err.splitlines()
    assert err and err[-1].startswith(f"indexset: solving {system} [") and err[-1].endswith(" done")

    from indexset.workflows import construct

    block = tmp_path / "block.npz"
    construct.write_reproducible(construct.planted(d=2, n=8, seed=1), block)
    assert main(["solve", str(block)]) == 0
    err = capsys.readouterr().err.splitlines()
    assert err and err[-1].startswith(f"indexset: solving {block} [") and err[-1].endswith(" done")


def test_scan_writes_plain_lines_off_a_terminal(tmp_path, capsys, monkeypatch):
    from checkpoints import bert

    monkeypatch.setenv(PLAIN_SECONDS_VARIABLE, "0")
    folder = bert(tmp_path)
    assert main(["scan", str(folder), "--json"]) in (0, 1, 3)
    err = capsys.readouterr().err.splitlines()
    assert err and all(line.startswith("indexset: scan [") for line in err), err
    assert any(f"model {folder}" in line and "last layer 1 " in line for line in err), err
    assert err[-1].endswith(" done")


def test_the_interval_comes_from_the_environment_when_it_holds_a_number(monkeypatch):
    for value, expected in (("2.5", 2.5), ("0", 0.0), ("-1", PLAIN_SECONDS), ("soon", PLAIN_SECONDS), ("nan", PLAIN_SECONDS)):
        monkeypatch.setenv(PLAIN_SECONDS_VARIABLE, value)
        assert plain_seconds() == expected
        assert Progress("working", enabled=False).interval == expected
    monkeypatch.delenv(PLAIN_SECONDS_VARIABLE)
    assert Progress("working", enabled=False).interval == PLAIN_SECONDS
