"""Ctrl-C while Lemma 7.7e's systems run on worker processes: `solve` stops, reports unknown and leaves no process behind."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import numpy as np
import pytest

from indexset import Instance

pytestmark = pytest.mark.slow  # the block's rank question takes seconds to reach


def _descendants(pid: int) -> set:
    """Every process below ``pid`` (from /proc, Linux)."""
    parents = {}
    for entry in os.listdir("/proc"):
        try:
            with open(f"/proc/{entry}/stat") as stat:
                parents[int(entry)] = int(stat.read().rsplit(")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue
    found, frontier = set(), {pid}
    while frontier:
        frontier = {child for child, parent in parents.items() if parent in frontier} - found
        found |= frontier
    return found


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def test_ctrl_c_during_lemma_7_7e_workers_reports_unknown_and_ends_them(tmp_path):
    rng = np.random.default_rng(0)  # the d = 5, n = 70 block of BENCHMARKS.md ("Degenerate weights")
    block = tmp_path / "d5n70.npz"
    Instance(rng.integers(-2, 3, (70, 5)), rng.integers(-2, 3, (5, 70))).save(block)
    env = dict(os.environ, INDEXSET_PROGRESS_SECONDS="0.5")
    process = subprocess.Popen([sys.executable, "-m", "indexset", "solve", str(block), "--time-limit", "100000", "--json"],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    workers, seen = set(), []
    try:
        for line in process.stderr:
            seen.append(line)
            if "Lemma 7.7e systems" in line:
                workers = _descendants(process.pid)
                if workers:
                    break
        assert workers, "".join(seen[-5:])  # the systems reached the worker processes
        time.sleep(1.0)
        process.send_signal(signal.SIGINT)
        out, _ = process.communicate(timeout=120)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert process.returncode == 3
    answer = json.loads(out)
    assert answer["status"] == "unknown" and "interrupted" in answer["reason"]
    assert not any(_alive(pid) for pid in workers)
