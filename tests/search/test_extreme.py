"""Randomised extreme pruning: the profile's choice, the trials' answers, when the engine runs them."""

from __future__ import annotations

import threading
import time
from dataclasses import replace

import numpy as np
import pytest
from processes import children
from systems import star_system
from tunings import KERNEL_WALK

from indexset.budget import Budget
from indexset.search import lattice
from indexset.search.lattice import engine, extreme
from indexset.search.lattice.tuning import DEFAULT
from indexset.search.reduce import reduce_system
from indexset.search.system import build_system
from indexset.workflows import construct


def reduced_lattice(system):
    reduction = reduce_system(system.M, system.t)
    return reduction, lattice.build_lattice(reduction, DEFAULT.bkz_block)


def trials_job(system, reduction, tuning, seed=0, progress=None):
    """The search record the passes and trials read (BKZ as the default basis, as the engine builds it)."""
    return lattice.Job(system, reduction, seed=seed, tuning=tuning, bkz_block=DEFAULT.bkz_block, embedding="cvp", progress=progress)


@pytest.mark.parametrize("probability", [0.05, 0.2])
def test_a_direction_uniform_on_the_sphere_stays_within_the_profile_with_about_its_probability(probability):
    system = star_system(np.random.default_rng(3), 2, 50, 1000)
    _, basis = reduced_lattice(system)
    rr, radius2 = basis.data.rr, basis.data.radius2
    coefficients = extreme.extreme_profile(rr, radius2, 1e6, probability, DEFAULT.pruner_seconds)
    assert coefficients[0] == pytest.approx(1.0) and (np.diff(coefficients) <= 1e-12).all() and (coefficients > 0).all()
    # Monte Carlo, independent of fpylll's model: in Gram–Schmidt coordinates a uniform direction
    # has i.i.d. normal coordinates; level i bounds the share of the norm on b*_i, …, b*_{D−1}.
    normal = np.random.default_rng(0).standard_normal((20_000, basis.D)) ** 2
    share = np.cumsum(normal[:, ::-1], axis=1)[:, ::-1] / normal.sum(axis=1, keepdims=True)

    def kept(bounds):
        return (share <= bounds).all(axis=1).mean()

    # The model and a direction uniform on the sphere agree within a few times
    # (0.014 against 0.05 here, at D = 48; 0.055 against 0.048 at D = 91, d = 3, n = 100).
    assert probability / 5 < kept(coefficients) < 2 * probability
    assert kept(extreme.extreme_profile(rr, radius2, 1e6, probability / 4, DEFAULT.pruner_seconds)) < kept(coefficients)


@pytest.mark.parametrize("on_thread", [False, True])
def test_no_profile_where_the_model_fails_and_the_process_lives_on(on_thread):
    # Norms on which fplll's optimiser meets NaN and aborts the process it runs in: here the child.
    rr = np.exp(-0.08 * np.arange(91)) * 100.0
    answers = []
    if on_thread:
        thread = threading.Thread(target=lambda: answers.append(extreme.extreme_profile(rr, 50.0, 1e6, DEFAULT.trial_probability, DEFAULT.pruner_seconds)))
        thread.start()
        thread.join()
    else:
        answers.append(extreme.extreme_profile(rr, 50.0, 1e6, DEFAULT.trial_probability, DEFAULT.pruner_seconds))
    assert answers == [None]


@pytest.mark.parametrize("linear_share, linear_passes", [(-1.0, False), (1e9, True)])
def test_trials_find_a_planted_set_and_the_linear_passes_go_first_only_when_short(linear_share, linear_passes):
    # The trials are walked by the kernel; a linear pass that walks almost nothing and finds nothing.
    tuning = replace(KERNEL_WALK, linear_share_with_trials=linear_share, pruning_slacks=(-0.999,))
    system = build_system(construct.planted(d=2, n=50, range=1000, seed=3))
    reduction, basis = reduced_lattice(system)
    job = trials_job(system, reduction, tuning, seed=0)
    found, facts = lattice.pruned_passes(job, [basis], seconds=300.0, workers=2, trials=lattice.Trials(job, basis))
    assert found and all(system.is_solution(support) for support in found)
    assert facts["found"] and facts["trials"] >= 1 and 0 < facts["trial_probability"] < 1
    assert facts["passes"] - facts["trials"] == (1 if linear_passes else 0)  # a pass that is no trial was the linear one
    assert not [thread for thread in threading.enumerate() if thread.name.startswith("indexset-pruned")]


@pytest.mark.parametrize("share", [1e-12, 1e9])
def test_a_linear_pass_that_walks_past_its_share_waits_until_the_trials_are_over(share):
    # Predicted at no time at all (a node costs 1e-15 s by the model; the trials' basis cost in nodes is the
    # default's), the linear pass walks first; past a share of picoseconds it stops and is put off, and the
    # trials find; with a share of 10^11 s it walks to its end first.
    scale = 1e-15 / DEFAULT.node_seconds
    tuning = replace(KERNEL_WALK, node_seconds=1e-15, basis_seconds=DEFAULT.basis_seconds * scale, linear_share_with_trials=share,
                     pruning_slacks=(-0.999,))
    system = build_system(construct.planted(d=2, n=50, range=1000, seed=3))
    reduction, basis = reduced_lattice(system)
    job = trials_job(system, reduction, tuning, seed=0)
    found, facts = lattice.pruned_passes(job, [basis], seconds=300.0, workers=2, trials=lattice.Trials(job, basis))
    assert found and all(system.is_solution(support) for support in found)
    assert facts["trials"] >= 1 and facts["passes"] - facts["trials"] == 1
    assert facts.get("outrun", 0) == (1 if share < 1 else 0)


def passes_until_two_trials(pruning_slacks, worth, hold_a_thread=False, seconds=60.0):
    """Linear passes of a lattice with no solution (slacks of 10⁹: the whole radius at every level, long walks), then trials, on two threads, stopped once two trials have ended."""
    system = build_system(construct.random(d=3, n=80, range=30, seed=1))
    reduction, basis = reduced_lattice(system)
    stop = threading.Event()

    def report(facts):  # about once a second
        if facts["trials"] >= 2:
            stop.set()

    tuning = replace(KERNEL_WALK, linear_share_with_trials=1e9, linear_trials_worth=worth, pruning_slacks=pruning_slacks)
    job = replace(trials_job(system, reduction, tuning, seed=1, progress=report), budget=Budget.of(seconds, stop=stop))
    trials = lattice.Trials(job, basis, hold_a_thread=hold_a_thread)
    found, facts = lattice.pruned_passes(job, [basis], seconds=seconds, workers=2, trials=trials)
    assert found == [] and facts["trials"] >= 2 and stop.is_set()
    return facts


@pytest.mark.parametrize("worth", [0.0, float("inf")])
def test_a_linear_pass_beside_the_trials_waits_once_it_has_walked_their_worth(worth):
    # Admitted by its share (10^9 times the passes' time), the full-radius linear pass walks far longer than
    # a trial; past a worth of no trials it stops at the first trial's end and is put off (outrun), and
    # with no bound it is still walking when the stop ends every pass.
    facts = passes_until_two_trials((1e9,), worth)
    assert facts.get("outrun", 0) == (1 if worth == 0.0 else 0)


@pytest.mark.parametrize("hold_a_thread", [False, True])
def test_trials_that_hold_a_thread_walk_beside_the_linear_passes_from_the_start(hold_a_thread):
    # Two long linear passes and two threads. Trials that hold a thread walk on one from the start, and
    # the second pass never starts before the stop; otherwise both passes walk first, to their ends, and
    # the trials follow (passes counts the walks that ended or were stopped).
    facts = passes_until_two_trials((1e9, 1e9), float("inf"), hold_a_thread)
    assert facts["passes"] - facts["trials"] == (1 if hold_a_thread else 2) and facts.get("outrun", 0) == 0


def test_trials_without_a_solution_to_find_report_none_and_run_until_stopped():
    from reference import mitm_solutions

    instance = construct.random(d=2, n=40, range=1000, seed=2)
    assert mitm_solutions(instance) == []
    system = build_system(instance)
    reduction, basis = reduced_lattice(system)
    reports, stop = [], threading.Event()

    def report(facts):  # once a second: stop the trials once two reports have seen trials walked
        reports.append(facts)
        if sum(1 for seen in reports if seen["trials"] >= 1) >= 2:
            stop.set()

    job = replace(trials_job(system, reduction, KERNEL_WALK, seed=1, progress=report), budget=Budget.of(stop=stop))
    found, facts = lattice.pruned_passes(job, [], seconds=60.0, workers=2, trials=lattice.Trials(job, basis))
    assert found == [] and not facts["found"] and facts["passes"] == facts["trials"] >= 1
    assert all(report["stage"] == "pruned passes" for report in reports)
    assert stop.is_set()  # the stop request ended them, not the trials running out


@pytest.mark.parametrize("hopeless", [False, True])
def test_trials_follow_the_linear_passes_only_when_the_complete_walk_is_predicted_long(monkeypatch, hopeless):
    handed = []

    def recorded(job, bases, seconds, *args, **kwargs):  # a spy: the time and trials handed to the passes show in no result
        handed.append((seconds, kwargs["trials"]))
        return [], {"passes": 0, "nodes": 0, "seconds": 0.0, "found": False}

    monkeypatch.setattr(engine, "pruned_passes", recorded)
    tuning = replace(KERNEL_WALK, node_seconds=1e3 if hopeless else 1e-12, pruned_share=1e20,  # the cap binds ...
                     trials_take_the_limit_beyond=float("inf"))  # ... and not the time limit
    system = star_system(np.random.default_rng(2), 2, 40, 1000)
    lattice.search(system, time_limit=3600.0, tuning=tuning)
    (seconds, trials), = handed
    assert (trials is not None) == hopeless
    assert seconds == (tuning.extreme_max_seconds if hopeless else tuning.pruned_max_seconds)


def test_without_a_profile_the_linear_passes_run_as_without_trials():
    # The Pruner fails (its child process cannot even start within a microsecond), and with
    # trials every linear pass would be skipped.
    tuning = replace(KERNEL_WALK, pruner_seconds=1e-6, linear_share_with_trials=-1.0)
    system = build_system(construct.planted(d=2, n=50, range=1000, seed=3))
    reduction, basis = reduced_lattice(system)
    job = trials_job(system, reduction, tuning, seed=0)
    trials = lattice.Trials(job, basis)
    assert extreme.extreme_profile(basis.data.rr, basis.data.radius2, 1e6, tuning.trial_probability, tuning.pruner_seconds) is None
    found, facts = lattice.pruned_passes(job, [basis], seconds=60.0, workers=2, trials=trials)
    assert facts["passes"] == len(tuning.pruning_slacks) or found
    assert "trials" not in facts and all(system.is_solution(support) for support in found)


def test_a_profile_whose_child_has_ended_counts_however_late_it_is_asked_for():
    # The linear passes before the trials may outlast the Pruner's time; the answer of a child that has
    # ended still counts. Its time here is a millisecond, long past when it is asked.
    system = star_system(np.random.default_rng(3), 2, 50, 1000)
    _, basis = reduced_lattice(system)
    rr, radius2 = basis.data.rr, basis.data.radius2
    before = children()
    began = time.perf_counter()
    pending = extreme.PendingProfile(rr, radius2, 1e6, DEFAULT.trial_probability, 1e-3)
    while children(running=True) - before and time.perf_counter() - began < DEFAULT.pruner_seconds:  # until the child ends
        time.sleep(0.02)
    coefficients = pending.result()
    pending.close()
    assert coefficients is not None
    assert np.array_equal(coefficients, extreme.extreme_profile(rr, radius2, 1e6, DEFAULT.trial_probability, DEFAULT.pruner_seconds))
    assert children() <= before


def test_a_pending_profile_closed_at_once_leaves_no_child_process():
    # The child needs a Python start and fpylll's import before it can answer: closing at once ends it.
    before = children()  # earlier tests may have left helpers of their own (multiprocessing's resource tracker)
    pending = extreme.PendingProfile(np.linspace(4.0, 1.0, 30), 10.0, 1e6, DEFAULT.trial_probability, DEFAULT.pruner_seconds)
    pending.close()
    assert children() <= before and pending.result() is None


def test_passes_that_find_before_the_profile_is_needed_leave_no_child_process():
    # The profile's child starts with the trials' plan; a linear pass of this planted system finds
    # within milliseconds, before any trial, and the child, running or done, is ended and reaped.
    system = build_system(construct.planted(d=2, n=50, range=1000, seed=0))
    reduction, basis = reduced_lattice(system)
    job = trials_job(system, reduction, KERNEL_WALK)
    lattice.pruned_passes(job, [basis], seconds=60.0, workers=2)  # loads the kernels: the pass below then takes milliseconds
    before = children()
    found, facts = lattice.pruned_passes(job, [basis], seconds=60.0, workers=2, trials=lattice.Trials(job, basis))
    assert found and all(system.is_solution(support) for support in found) and facts["trials"] == 0
    assert children() <= before and not _engine_threads()


def _engine_threads():
    return [thread for thread in threading.enumerate() if thread.name.startswith("indexset-")]


@pytest.mark.parametrize("family", ["planted", "random"])
@pytest.mark.parametrize("share", [1e9, 1e-9])
def test_trials_beside_the_complete_walk_leave_its_answer_exact_and_complete(family, share):
    from reference import mitm_solutions

    # Trials beside the walk from its first node, for all of it (1e9: no share of the prediction ends
    # them) or for a moment (1e-9: the thread they took joins the walk at once); nothing before the walk.
    instance = getattr(construct, family)(d=2, n=40, range=1000, seed=1)
    system = build_system(instance)
    expected = mitm_solutions(instance)
    tuning = replace(KERNEL_WALK, trials_beside_from_seconds=0.0, trials_beside_share=share, max_discrepancies=-1, pruned_share=0.0)
    result = lattice.search(system, workers=2, tuning=tuning)
    if expected:
        assert result.status == "feasible" and result.index_set in expected
    else:
        assert result.status == "infeasible" and result.complete
    beside = result.stages["trials_beside"]  # they ran, and every pass they walked was a trial
    assert beside["passes"] == beside["trials"]
    assert not _engine_threads()


def test_trials_beside_find_alone_and_end_their_thread():
    from indexset.search.lattice.pruned import trials_beside

    # No walk beside them: the trials alone, one thread, until one finds (each a fresh basis).
    instance = construct.planted(d=2, n=50, range=1000, seed=3)
    system = build_system(instance)
    reduction, basis = reduced_lattice(system)
    beside = trials_beside(trials_job(system, reduction, KERNEL_WALK), basis, 120.0)
    found, facts = beside.join()
    assert found and all(system.is_solution(support) for support in found)
    assert facts["found"] and facts["trials"] >= 1  # ended by a find, not by the budget
    assert beside.ended.is_set() and not _engine_threads()
