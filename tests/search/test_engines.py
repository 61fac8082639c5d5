"""One conformance suite for every search engine, against the brute force.

Every engine of :data:`indexset.search.engines.NAMES` implements the
:class:`~indexset.search.engines.Engine` protocol and must, on seeded random
0/1 systems (exact and with a slack), report only supports that solve the
system, find a solution whenever one exists, list all of them with
``find_all``, say ``infeasible`` only when the brute force finds none, and
stop when asked. The brute force itself is checked against a plain
``itertools`` enumeration written here.
"""

from __future__ import annotations

import itertools
import threading

import numpy as np
import pytest

from indexset.budget import Budget
from indexset.search.engines import NAMES, Engine, get_engine
from indexset.search.reduce import reduce_system
from indexset.search.system import System, plain_system


def _itertools_solutions(system: System) -> list[list[int]]:
    found = []
    for bits in itertools.product((0, 1), repeat=system.n):
        residual = [sum(int(system.M[r, i]) * b for i, b in enumerate(bits)) - int(system.t[r]) for r in range(system.m)]
        slack = [0] * system.m if system.slack is None else [int(s) for s in system.slack]
        if all(abs(v) <= s for v, s in zip(residual, slack)):
            found.append([i for i, b in enumerate(bits) if b])
    return sorted(found)


def _systems():
    """Seeded systems: planted solutions, likely-infeasible ones, several solutions, slack rows."""
    cases = []
    for seed in range(10):
        rng = np.random.default_rng(seed)
        m, n = int(rng.integers(1, 4)), int(rng.integers(4, 13))
        A = rng.integers(-6, 7, size=(m, n))
        planted = rng.integers(0, 2, size=n)
        b = A @ planted + (int(rng.integers(1, 3)) if seed % 4 == 3 else 0)  # every fourth one is probably infeasible
        system = plain_system(A, b)
        if seed % 5 == 4:
            system = System(system.M, system.t, np.array([1] * m, dtype=object), system.rows)
        cases.append(pytest.param(system, id=f"seed{seed}-m{m}-n{n}" + ("-slack" if system.slack is not None else "")))
    return cases


@pytest.mark.parametrize("name", NAMES)
def test_every_engine_implements_the_protocol(name):
    engine = get_engine(name)
    assert isinstance(engine, Engine) and engine.name == name
    assert isinstance(engine.options, tuple) and all(isinstance(option, str) for option in engine.options)


@pytest.mark.parametrize("system", _systems())
def test_brute_force_agrees_with_itertools(system):
    result = get_engine("brute").search(system, find_all=True)
    assert sorted(result.solutions) == _itertools_solutions(system)


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("system", _systems())
def test_engine_agrees_with_the_brute_force(name, system):
    engine = get_engine(name)
    reference = _itertools_solutions(system)
    reduction = reduce_system(system.M, system.t) if system.slack is None else None
    first = engine.search(system, reduction, time_limit=60)
    assert first.engine == name
    if first.status == "unknown":
        # Only a documented refusal: the lattice engine leaves slack systems to CP-SAT.
        assert name == "lattice" and system.slack is not None, first.reason
        return
    if reference:
        assert first.status == "feasible", first.reason
        assert sorted(first.index_set) in reference and system.is_solution(first.index_set)
    else:
        assert first.status == "infeasible" and first.complete, first.reason
    every = engine.search(system, reduction, find_all=True, time_limit=60)
    if every.complete:
        assert sorted(sorted(s) for s in every.solutions) == reference
        assert every.count == len(reference)
    assert all(system.is_solution(s) for s in (every.solutions or []))


@pytest.mark.parametrize("shared", [False, True], ids=["stop", "budget"])
@pytest.mark.parametrize("name", NAMES)
def test_engine_stops_when_asked(name, shared):
    rng = np.random.default_rng(0)
    A = rng.integers(-1000, 1001, size=(4, 20))
    system = plain_system(A, A @ rng.integers(0, 2, size=20))
    stop = threading.Event()
    stop.set()
    # The stop request alone, or inside the Budget a caller shares with every stage.
    asked = {"budget": Budget.of(None, stop)} if shared else {"stop": stop}
    result = get_engine(name).search(system, reduce_system(system.M, system.t), **asked)
    assert result.status in ("unknown", "feasible", "infeasible")
    if result.status != "unknown":
        assert result.status == "feasible" and system.is_solution(result.index_set)


def test_unknown_engine_names_are_refused():
    from indexset.errors import InputError
    from indexset.search.portfolio import run_portfolio

    system = plain_system([[1, 2]], [2])
    with pytest.raises(InputError):
        run_portfolio(system, engines=["nonsense"])
