"""Lemma 7.7e's systems on worker processes and on Dask, held to the brute force and to the one-process run."""

from __future__ import annotations

import threading
from dataclasses import replace

import distributed
import numpy as np
import pytest
from processes import children
from reference import rank_question_brute

from indexset.budget import INTERRUPTED, Budget
from indexset.search.cluster import Cluster
from indexset.theory.degenerate_tuning import DegenerateTuning
from indexset.theory.lowrank import RankQuestion
from indexset.theory.shortrun import Workers, run_short_side
from indexset.theory.shortside import decide_short_side, short_plan

PARALLEL = DegenerateTuning(short_parallel_seconds=0.0, short_batch=3, short_probe=2)
"""Every plan goes to the workers, in batches of three systems, after two decided here."""


def question_of(rng, terms: int = 7) -> RankQuestion:
    """A rank ≤ 1 question on 3 × 3 matrices, reachable about half the time (a rank-one target less some terms)."""
    columns = [tuple(int(v) for v in rng.integers(-2, 3, 3)) for _ in range(terms)]
    rows = [tuple(int(v) for v in rng.integers(-2, 3, 3)) for _ in range(terms)]
    base = np.outer(rng.integers(-2, 3, 3), rng.integers(-2, 3, 3))
    if rng.random() < 0.5:
        chosen = [k for k in range(terms) if rng.random() < 0.5]
        base = base - sum((np.outer(columns[k], rows[k]) for k in chosen), np.zeros((3, 3), dtype=np.int64))
    else:
        base = base + rng.integers(-3, 4, (3, 3))
    return RankQuestion([[int(v) for v in row] for row in base], columns, rows, 1)


def assert_as_brute(question, answer):
    brute = rank_question_brute(question.base, question.columns, question.rows, 1)
    assert answer.status == ("found" if brute else "refuted"), answer
    if answer.status == "found":
        assert tuple(int(k in answer.chosen) for k in range(len(question.columns))) in brute


def test_worker_processes_decide_as_the_brute_force():
    before = children(running=True)  # what earlier tests left (a resource tracker, say) is not this call's
    rng = np.random.default_rng(21)
    seen = {"found": 0, "refuted": 0}
    sent = []
    for _ in range(6):
        question = question_of(rng)
        plan = short_plan(question)
        answer = run_short_side(question, plan, PARALLEL, Budget.of(), Workers(processes=2, progress=sent.append))
        assert_as_brute(question, answer)
        alone = decide_short_side(question, plan, PARALLEL, Budget.of())
        assert alone.status == answer.status
        if answer.status == "refuted":
            assert answer.done == alone.done == plan.count
            assert sent[-1]["systems"] == f"{plan.count}/{plan.count}"  # the last report counts every system
        seen[answer.status] += 1
    assert min(seen.values()) >= 1, seen
    assert all(set(counters) >= {"systems", "predicted_s"} for counters in sent)
    assert children(running=True) <= before


def test_one_process_or_a_short_plan_stays_here():
    before = children()
    rng = np.random.default_rng(4)
    question = question_of(rng)
    plan = short_plan(question)
    for workers, tuning in ((Workers(processes=1), PARALLEL), (Workers(processes=2), replace(PARALLEL, short_parallel_seconds=1e9))):
        assert_as_brute(question, run_short_side(question, plan, tuning, Budget.of(), workers))
    assert children() <= before


def test_a_stop_request_ends_the_workers_and_leaves_the_question_open():
    before = children(running=True)
    rng = np.random.default_rng(8)
    question = RankQuestion([[int(v) for v in row] for row in rng.integers(-3, 4, (4, 4))],
                            [tuple(int(v) for v in rng.integers(-2, 3, 4)) for _ in range(30)],
                            [tuple(int(v) for v in rng.integers(-2, 3, 4)) for _ in range(30)], 1)
    plan = short_plan(question)
    stop = threading.Event()
    counted = []

    def progress(counters):
        counted.append(counters)
        if len(counted) >= 2:
            stop.set()  # as Ctrl-C does, through the command line's handler

    tuning = replace(PARALLEL, max_short_seconds=float("inf"))
    answer = run_short_side(question, plan, tuning, Budget.of(stop=stop), Workers(processes=2, progress=progress))
    if answer.status == "open":
        assert answer.how == INTERRUPTED and answer.done < plan.count
    else:  # the workers finished before the stop: then the answer is the brute force's
        assert_as_brute(question, answer)
    assert children(running=True) <= before


@pytest.fixture(scope="module")
def dask_client(request):
    """A one-worker, two-thread cluster in this process, closed whatever happens."""
    local = distributed.LocalCluster(n_workers=1, threads_per_worker=2, processes=False, dashboard_address=None)
    request.addfinalizer(local.close)
    client = distributed.Client(local)
    request.addfinalizer(client.close)
    return client


def test_a_dask_cluster_decides_as_the_brute_force(dask_client):
    rng = np.random.default_rng(33)
    for _ in range(5):
        question = question_of(rng)
        answer = run_short_side(question, short_plan(question), PARALLEL, Budget.of(), Workers(cluster=Cluster(client=dask_client)))
        assert_as_brute(question, answer)


def test_a_short_plan_starts_no_local_cluster():
    """A local cluster costs seconds to start: a plan predicted shorter than its threshold stays off it (no process started)."""
    before = children()
    rng = np.random.default_rng(12)
    question = question_of(rng)
    with Cluster(workers=2, min_seconds=1e9) as cluster:
        answer = run_short_side(question, short_plan(question), PARALLEL, Budget.of(), Workers(processes=1, cluster=cluster))
        assert children() <= before
    assert_as_brute(question, answer)
