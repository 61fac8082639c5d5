"""The staged portfolio: CP-SAT joins a long enumeration late, and only then.

Every answer is checked exactly against the system (planted solutions);
nothing here measures time (the delays are 0 or an hour, so the behaviour
does not depend on the machine's speed).
"""

from __future__ import annotations

import threading

import numpy as np
from systems import random_system
from tunings import KERNEL_WALK

import indexset.search.portfolio as portfolio
from indexset.search.portfolio import PortfolioTuning
from indexset.search.reduce import reduce_system


def planted_system(seed: int):
    """A dense 3 × 30 system with a planted solution, large enough to be estimated (kernel dimension > 24)."""
    return random_system(np.random.default_rng(seed), 3, 30, 0, 59, planted=True)


def predicted_long(cpsat_after: float) -> dict:
    """Options of a race in which every estimated tree counts as long, so the portfolio schedules CP-SAT after ``cpsat_after`` seconds.

    The kernel walks the tree: the NumPy walk of small trees schedules nothing.
    """
    return {"portfolio_tuning": PortfolioTuning(cpsat_from=0.0, cpsat_after=cpsat_after), "tuning": KERNEL_WALK}


def _cpsat_threads():
    return [thread for thread in threading.enumerate() if thread.name == "indexset-cpsat"]


def test_cpsat_waits_and_never_starts_when_the_enumeration_decides_first(monkeypatch):
    from indexset.search.engines import get_engine

    calls = []
    monkeypatch.setattr(get_engine("cpsat"), "search", lambda *args, **kwargs: calls.append(kwargs))
    system = planted_system(1)
    result = portfolio.run_portfolio(system, reduce_system(system.M, system.t), **predicted_long(3600.0))
    assert result.engine == "lattice" and result.status == "feasible" and system.is_solution(result.index_set)
    assert result.stages["portfolio"]["cpsat"]["status"] == "unknown"  # scheduled, answered "not started"
    assert calls == []  # woken by the lattice's answer, not by the end of its delay
    assert not _cpsat_threads()


def test_cpsat_started_without_delay_races_and_both_answers_hold():
    for seed in range(3):
        system = planted_system(seed)
        result = portfolio.run_portfolio(system, reduce_system(system.M, system.t), **predicted_long(0.0))
        assert result.status == "feasible" and system.is_solution(result.index_set)
        assert set(result.stages["portfolio"]) == {"lattice", "cpsat"}
        assert not _cpsat_threads()


def test_short_trees_never_load_cpsat():
    system = planted_system(4)
    result = portfolio.run_portfolio(system, reduce_system(system.M, system.t), portfolio_tuning=PortfolioTuning(cpsat_from=float("inf")))
    assert result.status == "feasible" and system.is_solution(result.index_set)
    assert set(result.stages["portfolio"]) == {"lattice"}


def test_cpsat_delay_ends_at_the_time_limit(monkeypatch):
    from systems import star_system

    from indexset.search.engines import get_engine

    calls = []
    monkeypatch.setattr(get_engine("cpsat"), "search", lambda *args, **kwargs: calls.append(kwargs))
    system = star_system(np.random.default_rng(0), 2, 76, 1000)  # minutes of enumeration: the limit ends it
    answers = []
    options = predicted_long(3600.0)
    race = threading.Thread(target=lambda: answers.append(portfolio.run_portfolio(system, reduce_system(system.M, system.t), time_limit=1.0, **options)))
    race.start()
    race.join(600)  # an hour if the delay ignored the time limit
    assert not race.is_alive() and answers[0].status == "unknown"
    assert answers[0].stages["portfolio"]["cpsat"]["status"] == "unknown" and calls == []  # scheduled, never started
    assert not _cpsat_threads()

