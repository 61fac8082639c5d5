"""Randomised extreme pruning: the profile's choice, the trials' answers, when the engine runs them."""

from __future__ import annotations

import threading

import numpy as np
import pytest
from systems import star_system

from indexset.search import extreme
from indexset.search.engines import lattice
from indexset.search.reduce import reduce_system
from indexset.search.system import build_system
from indexset.workflows import construct


def reduced_lattice(system):
    reduction = reduce_system(system.M, system.t)
    return reduction, lattice.build_lattice(reduction, lattice.BKZ_BLOCK)


@pytest.mark.parametrize("probability", [0.05, 0.2])
def test_a_direction_uniform_on_the_sphere_stays_within_the_profile_with_about_its_probability(probability):
    system = star_system(np.random.default_rng(3), 2, 50, 1000)
    _, basis = reduced_lattice(system)
    rr, radius2 = basis.arrays["rr"], basis.arrays["radius2"]
    coefficients = extreme.extreme_profile(rr, radius2, 1e6, probability)
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
    assert kept(extreme.extreme_profile(rr, radius2, 1e6, probability / 4)) < kept(coefficients)


@pytest.mark.parametrize("on_thread", [False, True])
def test_no_profile_where_the_model_fails_and_the_process_lives_on(on_thread):
    # Norms on which fplll's optimiser meets NaN and aborts the process it runs in: here the child.
    rr = np.exp(-0.08 * np.arange(91)) * 100.0
    answers = []
    if on_thread:
        thread = threading.Thread(target=lambda: answers.append(extreme.extreme_profile(rr, 50.0, 1e6)))
        thread.start()
        thread.join()
    else:
        answers.append(extreme.extreme_profile(rr, 50.0, 1e6))
    assert answers == [None]


@pytest.mark.parametrize("linear_share, linear_passes", [(-1.0, False), (1e9, True)])
@pytest.mark.usefixtures("kernel_walk")  # the trials are walked by the kernel
def test_trials_find_a_planted_set_and_the_linear_passes_go_first_only_when_short(monkeypatch, linear_share, linear_passes):
    monkeypatch.setattr(lattice, "LINEAR_SHARE_WITH_TRIALS", linear_share)
    monkeypatch.setattr(lattice, "PRUNING_SLACKS", (-0.999,))  # a linear pass that walks almost nothing and finds nothing
    system = build_system(construct.planted(d=2, n=50, range=1000, seed=3))
    reduction, basis = reduced_lattice(system)
    trials = lattice._Trials(reduction, lattice.BKZ_BLOCK, "cvp", basis, seed=0)
    found, facts = lattice.pruned_passes(system, [basis], seconds=300.0, workers=2, trials=trials)
    assert found and all(system.is_solution(support) for support in found)
    assert facts["found"] and facts["trials"] >= 1 and 0 < facts["trial_probability"] < 1
    assert facts["passes"] - facts["trials"] == (1 if linear_passes else 0)  # a pass that is no trial was the linear one
    assert not [thread for thread in threading.enumerate() if thread.name.startswith("indexset-pruned")]


@pytest.mark.usefixtures("kernel_walk")
def test_trials_without_a_solution_to_find_report_none_and_end_with_their_time():
    from reference import mitm_solutions

    instance = construct.random(d=2, n=40, range=1000, seed=2)
    assert mitm_solutions(instance) == []
    system = build_system(instance)
    reduction, basis = reduced_lattice(system)
    trials = lattice._Trials(reduction, lattice.BKZ_BLOCK, "cvp", basis, seed=1)
    reports = []
    found, facts = lattice.pruned_passes(system, [], seconds=2.0, workers=2, trials=trials, progress=reports.append)
    assert found == [] and not facts["found"] and facts["passes"] == facts["trials"] >= 1
    assert reports and all(report["stage"] == "pruned passes" and report["trials"] >= 0 for report in reports)  # once a second
    assert 2.0 <= facts["seconds"] < 30.0  # the budget ends them (one BKZ reduction and one walk may run past it)


@pytest.mark.usefixtures("kernel_walk")
@pytest.mark.parametrize("hopeless", [False, True])
def test_trials_follow_the_linear_passes_only_when_the_complete_walk_is_predicted_long(monkeypatch, hopeless):
    handed = []

    def recorded(system, bases, seconds, *args, **kwargs):
        handed.append((seconds, args[-1] if args else kwargs.get("trials")))
        return [], {"passes": 0, "nodes": 0, "seconds": 0.0, "found": False}

    monkeypatch.setattr(lattice, "pruned_passes", recorded)
    monkeypatch.setattr(lattice, "NODE_SECONDS", 1e3 if hopeless else 1e-12)
    monkeypatch.setattr(lattice, "PRUNED_SHARE", 1e20)  # the cap binds
    system = star_system(np.random.default_rng(2), 2, 40, 1000)
    lattice.search(system, time_limit=3600.0)
    (seconds, trials), = handed
    assert (trials is not None) == hopeless
    assert seconds == (lattice.EXTREME_MAX_SECONDS if hopeless else lattice.PRUNED_MAX_SECONDS)


@pytest.mark.usefixtures("kernel_walk")
def test_without_a_profile_the_linear_passes_run_as_without_trials(monkeypatch):
    monkeypatch.setattr(extreme, "extreme_profile", lambda *args, **kwargs: None)  # the Pruner failed
    monkeypatch.setattr(lattice, "LINEAR_SHARE_WITH_TRIALS", -1.0)  # with trials, every linear pass would be skipped
    system = build_system(construct.planted(d=2, n=50, range=1000, seed=3))
    reduction, basis = reduced_lattice(system)
    trials = lattice._Trials(reduction, lattice.BKZ_BLOCK, "cvp", basis, seed=0)
    found, facts = lattice.pruned_passes(system, [basis], seconds=60.0, workers=2, trials=trials)
    assert facts["passes"] == len(lattice.PRUNING_SLACKS) or found
    assert "trials" not in facts and all(system.is_solution(support) for support in found)
