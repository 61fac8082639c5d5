"""Split searches and sweeps on a Dask cluster started here, on loopback (issue 9).

One two-worker ``LocalCluster`` (processes, 127.0.0.1, no dashboard) serves
the module; a finalizer always closes it. The searches pass a lattice
tuning (:data:`SPLIT`) whose split threshold is lowered and whose trees are
all walked by the kernel, so searches small enough for brute force are
split too. Answers are compared with the one-process engine and with brute
force; nothing here measures time.
"""

from __future__ import annotations

import json
import os
import signal
import threading
import time
from dataclasses import replace
from pathlib import Path

import distributed
import numpy as np
import pytest
from systems import star_system
from tunings import KERNEL_WALK

from indexset.budget import INTERRUPTED, TIME_LIMIT
from indexset.cli.main import main
from indexset.search import lattice
from indexset.search.cluster import Cluster
from indexset.search.engines.brute import absorbing_sets_brute, solve_system_brute
from indexset.search.reduce import reduce_system
from indexset.search.system import plain_system
from indexset.solver import solve
from indexset.workflows import bench, construct

pytestmark = pytest.mark.slow  # local Dask clusters: seconds each

SPLIT = replace(KERNEL_WALK, split_from=4)
"""Every search here: small trees split too, and walked by the kernel (parts are the kernel's)."""


@pytest.fixture(scope="module")
def dask_client(request):
    """A two-worker local cluster on loopback, closed whatever happens."""
    local = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None, host="127.0.0.1")
    request.addfinalizer(local.close)
    client = distributed.Client(local)
    request.addfinalizer(client.close)
    return client


@pytest.fixture
def cluster(dask_client):
    """The module's cluster (searches pass :data:`SPLIT`: small trees are split too)."""
    return Cluster(client=dask_client)


@pytest.fixture
def narrow(dask_client):
    """As ``cluster``, aiming at 8 parts: narrow trees are split where they still have nodes."""
    return Cluster(client=dask_client, parts=8)


def random_system(rng, m, n, high, planted):
    A = rng.integers(0, high + 1, size=(m, n))
    b = A @ rng.integers(0, 2, size=n) if planted else rng.integers(0, high * n // 2 + 1, size=m)
    return plain_system(A, b)


def test_split_search_matches_sequential_and_brute_force(narrow):
    rng = np.random.default_rng(11)
    split = 0
    for trial in range(8):
        m, n = int(rng.integers(1, 3)), int(rng.integers(14, 19))
        system = random_system(rng, m, n, 6, planted=trial % 4 != 3)
        truth = solve_system_brute(system.M, system.t)
        one = lattice.search(system, find_all=True, tuning=SPLIT)
        parts = lattice.search(system, find_all=True, cluster=narrow, tuning=SPLIT)
        assert parts.complete and parts.count == len(truth) == one.count, trial
        assert parts.solutions == one.solutions  # the same order as one process
        assert sorted(parts.solutions) == sorted(truth)
        assert len(set(map(tuple, parts.solutions))) == len(parts.solutions)
        assert parts.status == ("feasible" if truth else "infeasible")
        first = lattice.search(system, cluster=narrow, tuning=SPLIT)
        assert first.status == one.status
        assert first.index_set == lattice.search(system, tuning=SPLIT).index_set  # the sequential first solution
        split += parts.stages.get("parts", 0) > 1
        if "part_nodes" in parts.stages:
            assert parts.stages["nodes"] == parts.stages["split_nodes"] + sum(parts.stages["part_nodes"])
    assert split >= 6  # the searches really were split


def test_none_case_needs_every_part(narrow):
    for high in (500, 1000):
        rng = np.random.default_rng(1)
        A = rng.integers(0, high + 1, size=(2, 22))
        system = plain_system(A, A @ rng.integers(0, 2, size=22) + np.array([1, 0]))
        assert solve_system_brute(system.M, system.t) == []
        parts = lattice.search(system, find_all=True, cluster=narrow, tuning=SPLIT)
        assert parts.status == "infeasible" and parts.complete and parts.count == 0
        assert parts.stages["parts"] > 1 and None not in parts.stages["part_nodes"]
        assert lattice.search(system, cluster=narrow, tuning=SPLIT).status == "infeasible"
    instance = construct.random(d=2, n=16, range=3, seed=2)  # certified negative by brute force
    assert absorbing_sets_brute(instance) == []
    result = solve(instance, find_all=True, engines=["lattice"], cluster=narrow, lattice_tuning=SPLIT)
    assert result.status == "not_absorbable" and result.count == 0


def test_block_solutions_through_solve_and_cli(narrow, dask_client, tmp_path, capsys):
    instance = construct.planted(d=2, n=16, range=3, seed=1)  # two index sets, two parts
    truth = absorbing_sets_brute(instance)
    result = solve(instance, find_all=True, engines=["lattice"], cluster=narrow, lattice_tuning=SPLIT)
    assert result.status == "absorbable" and sorted(result.solutions) == sorted(truth)
    assert result.stages["search"]["lattice"]["parts"] > 1
    path = tmp_path / "planted.npz"
    instance.save(path)
    address = dask_client.scheduler.address
    assert main(["solve", str(path), "--all", "--json", "--engines", "lattice", "--scheduler", address]) == 0
    payload = json.loads(capsys.readouterr().out)
    assert sorted(payload["solutions"]) == sorted(truth) and payload["count"] == len(truth)
    system_path = tmp_path / "system.npz"
    np.savez(system_path, A=np.array([[1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]]), b=np.array([20]))
    assert main(["solve-system", str(system_path), "--count", "--json", "--scheduler", address]) == 0
    counted = json.loads(capsys.readouterr().out)["count"]
    assert counted == len(solve_system_brute([[1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]], [20]))


def test_sweep_on_the_cluster_matches_the_sequential_sweep(dask_client, tmp_path):
    sweep = bench.Sweep(d=2, widths=[6, 8], seeds=[0, 1], family="planted", range=20, methods=("pipeline", "brute"), time_limit=20)
    sequential = bench.run_sweep(sweep, warmup=False)
    out = tmp_path / "sweep.json"
    code = main(["bench", "--d", "2", "--widths", "6,8", "--seeds", "2", "--family", "planted", "--range", "20",
                 "--methods", "pipeline,brute", "--time-limit", "20", "--no-warmup", "--out", str(out), "--scheduler", dask_client.scheduler.address])
    assert code == 0
    report = json.loads(out.read_text(encoding="utf-8"))
    assert set(report) - {"command"} == set(sequential) and report["disagreements"] == []
    assert report["machine"]["cluster"]["workers"] == 2
    key = lambda r: (r["method"], r["n"], r["seed"])  # noqa: E731
    assert [key(r) for r in report["runs"]] == [key(r) for r in sequential["runs"]]
    for mine, theirs in zip(report["runs"], sequential["runs"]):
        assert set(mine) == set(theirs)
        assert mine["status"] == theirs["status"] == "feasible" and mine["verified"]
        assert mine["params"] == theirs["params"] and mine["rerun"] == theirs["rerun"]
        if mine["method"] == "brute":
            assert mine["index_set"] == theirs["index_set"]


def test_time_limit_and_stop_cancel_the_parts(cluster, dask_client):
    system = star_system(np.random.default_rng(0), 2, 76, 1000)  # minutes of enumeration
    reduction = reduce_system(system.M, system.t)
    result = lattice.search(system, reduction, find_all=True, time_limit=4, cluster=cluster, tuning=SPLIT)
    assert result.status == "unknown" and not result.complete
    assert result.halted == TIME_LIMIT
    stop = threading.Event()
    threading.Timer(3.0, stop.set).start()
    result = lattice.search(system, reduction, stop=stop, cluster=cluster, tuning=SPLIT)
    assert result.status == "unknown" and not result.complete and result.halted == INTERRUPTED
    _wait_idle(dask_client)


def _wait_idle(client, limit=20.0):
    """Stopped parts leave the workers (Dask cannot interrupt a running task)."""
    end = time.monotonic() + limit
    while any(client.processing().values()):
        assert time.monotonic() < end, client.processing()
        time.sleep(0.2)


def test_a_killed_worker_loses_no_part(cluster, dask_client):
    system = star_system(np.random.default_rng(8), 2, 70, 1000)  # ~3 s in one process
    reduction = reduce_system(system.M, system.t)
    one = lattice.search(system, reduction, find_all=True, tuning=SPLIT)
    pids = dask_client.run(os.getpid)
    killed = []

    def kill_a_busy_worker():
        end = time.monotonic() + 30
        while time.monotonic() < end and not killed:
            busy = [w for w, keys in dask_client.processing().items() if any(str(k).startswith("indexset-part") for k in keys)]
            if busy:
                time.sleep(0.3)  # well inside a part
                os.kill(pids[busy[0]], signal.SIGKILL)
                killed.append(pids[busy[0]])
            time.sleep(0.05)

    killer = threading.Thread(target=kill_a_busy_worker)
    killer.start()
    parts = lattice.search(system, reduction, find_all=True, cluster=cluster, tuning=SPLIT)
    killer.join()
    assert killed, "no worker was killed: the search ended too soon"
    assert parts.complete and parts.status == one.status and parts.solutions == one.solutions
    assert parts.stages["parts"] > 1 and None not in parts.stages["part_nodes"]


CHILDREN_AFTER_CLOSE = """
import sys
sys.path.insert(0, {tests!r})
from processes import children
from indexset.search.cluster import Cluster

if __name__ == "__main__":
    with Cluster(workers=1, min_seconds=0.0) as cluster:
        assert cluster.client() is not None, cluster.problem
        assert children(), "the local cluster should run worker processes"
    print(len(children()))
"""


def test_a_local_cluster_leaves_no_process_behind(tmp_path):
    """Workers and multiprocessing's resource tracker have exited and been reaped on close."""
    import subprocess
    import sys

    script = tmp_path / "cluster_children.py"
    script.write_text(CHILDREN_AFTER_CLOSE.format(tests=str(Path(__file__).parents[1])))
    process = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=120, cwd=os.getcwd())
    assert process.returncode == 0, process.stderr[-2000:]
    assert process.stdout.split()[-1] == "0"
