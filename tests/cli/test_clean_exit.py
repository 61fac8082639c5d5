"""``indexset solve FILE`` exits cleanly after its answer.

The default portfolio races lattice enumeration and CP-SAT in threads. An
engine thread still inside C++ (HiGHS via scipy's ``linprog``) at
interpreter exit aborts the process after the correct answer is printed:
SIGABRT, "terminate called without an active exception" on stderr and a
``cysignals_crash_logs/`` folder in the working directory. That happens in a
fraction of the runs only, so every instance here is solved several times,
two processes at a time (the load brings it out), each in its own empty
working directory, by the real CLI in a subprocess. Every run must exit with
the documented code of the status it printed and leave no crash trace.
``python benchmarks/run.py clean --part soak`` is the long version of this test (hundreds of runs).
"""

from __future__ import annotations

import json
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow  # dozens of CLI processes, two at a time

INSTANCES = Path(__file__).resolve().parents[2] / "instances"
CLI = [sys.executable, "-m", "indexset"]
EXIT = {"absorbable": 0, "not_absorbable": 1, "unknown": 3}
SIGNATURES = ("SIGABRT", "Traceback", "terminate called")
CRASH_DIR = "cysignals_crash_logs"
JOBS = 2
HANG_S = 300  # a guard against a hung run, not a timing assertion

# (family, d, n, range, seed): d = 2 at --range 1000 and d = 3 at --range 30,
# widths that solve in a few seconds; these crashed often before the fix.
GENERATED = {
    "planted_d2_n16": ("planted", 2, 16, 1000, 1),
    "random_d2_n16": ("random", 2, 16, 1000, 1),
    "planted_d3_n16": ("planted", 3, 16, 30, 1),
}

# instance -> runs (17 runs in all)
CASES = {
    "bundled:hard_d2_n16.npz": 4,
    "bundled:planted_d3_n16.npz": 3,
    "bundled:random_d2_n12.npz": 2,
    "generated:planted_d2_n16": 3,
    "generated:random_d2_n16": 3,
    "generated:planted_d3_n16": 2,
}


@pytest.fixture(scope="module")
def generated(tmp_path_factory):
    """Fresh instances written by ``indexset construct`` (the real CLI)."""
    folder = tmp_path_factory.mktemp("generated")
    paths = {}
    for name, (family, d, n, bound, seed) in GENERATED.items():
        path = folder / f"{name}.npz"
        argv = CLI + ["construct", family, "--d", str(d), "--n", str(n), "--range", str(bound),
                      "--seed", str(seed), "-o", str(path)]
        proc = subprocess.run(argv, capture_output=True, text=True, cwd=folder, stdin=subprocess.DEVNULL)
        assert proc.returncode == 0 and path.exists(), proc.stderr
        paths[name] = path
    return paths


def solve(path: Path, cwd: Path) -> list[str]:
    """Run ``indexset solve PATH --json`` in ``cwd``; the problems seen (empty when clean)."""
    cwd.mkdir()
    try:
        proc = subprocess.run(CLI + ["solve", str(path), "--json"], capture_output=True, text=True,
                              errors="replace", cwd=cwd, timeout=HANG_S, stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        return [f"no exit within {HANG_S} s"]
    problems = []
    try:
        status = json.loads(proc.stdout)["status"]
    except (ValueError, KeyError, TypeError):
        status = None
        problems.append(f"no JSON status on stdout: {proc.stdout[:200]!r}")
    if status is not None and EXIT.get(status) != proc.returncode:
        problems.append(f"status {status!r} but exit status {proc.returncode}")
    problems += [f"stderr holds {sig!r}" for sig in SIGNATURES if sig in proc.stderr]
    if (cwd / CRASH_DIR).exists():
        problems.append(f"{CRASH_DIR}/ left in the working directory")
    if problems and proc.stderr:
        problems.append("stderr starts: " + " | ".join(proc.stderr.splitlines()[:2]))
    return problems


@pytest.mark.parametrize("case", list(CASES))
def test_solve_exits_cleanly(case, generated, tmp_path):
    origin, name = case.split(":")
    path = INSTANCES / name if origin == "bundled" else generated[name]
    runs = CASES[case]
    with ThreadPoolExecutor(max_workers=JOBS) as pool:
        outcomes = list(pool.map(lambda i: solve(path, tmp_path / f"run{i}"), range(runs)))
    failures = [f"run {i}: " + "; ".join(problems) for i, problems in enumerate(outcomes) if problems]
    assert not failures, f"{len(failures)}/{runs} runs of {path.name} did not exit cleanly:\n" + "\n".join(failures)
