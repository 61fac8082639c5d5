"""Each stage of the solve pipeline against an independent reference.

Stages: exact reduction (span certificate, unique solution, lattice),
certified kernel bounds, interval pruning, the scaled relaxation, CP-SAT and
the portfolio. The reference is brute force over all 2^n 0/1 vectors.
"""

from __future__ import annotations

import threading
from fractions import Fraction

import flint
import numpy as np
import pytest

from indexset.search.bounds import kernel_bounds
from indexset.search.decide import decide_system
from indexset.search.engines import cpsat
from indexset.search.engines.brute import solve_system_brute
from indexset.search.portfolio import run_portfolio
from indexset.search.prune import prune
from indexset.search.reduce import check_span_certificate, reduce_system
from indexset.search.system import System, fit_coefficients, plain_system
from indexset.search.tuning import SearchTuning


def random_system(rng, m, n, bound, planted):
    """A random integer system, with a planted 0/1 solution when asked."""
    M = rng.integers(-bound, bound + 1, size=(m, n)).astype(object)
    z = rng.integers(0, 2, size=n).astype(object)
    t = M.dot(z)
    if not planted:
        t = t + rng.integers(-2, 3, size=m).astype(object)
    return M, t


def systems(seed, count):
    rng = np.random.default_rng(seed)
    for k in range(count):
        m = int(rng.integers(1, 5))
        n = int(rng.integers(2, 13))
        yield random_system(rng, m, n, int(rng.integers(1, 40)), planted=k % 2 == 0)


def supports(solutions):
    return sorted(tuple(s) for s in solutions)


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(4))
def test_reduction_agrees_with_brute_force(seed):
    for M, t in systems(seed, 40):
        reference = solve_system_brute(M, t)
        red = reduce_system(M, t)
        n = M.shape[1]
        if not red.span_feasible:
            assert reference == []
            assert check_span_certificate(M, t, red.span_certificate)
            continue
        if red.unique_solution is not None:
            z = red.unique_solution
            assert all(sum(Fraction(int(M[r, j])) * z[j] for j in range(n)) == t[r] for r in range(M.shape[0]))
            zero_one = all(v in (0, 1) for v in z)
            assert zero_one == bool(reference)
            continue
        if red.integer_feasible is False:
            assert reference == []
            continue
        assert all(M.dot(red.z0) == t)
        K = red.kernel
        assert K.shape == (n, n - red.rank)
        assert (M.dot(K) == 0).all()
        # Every solution is z0 + K y for an integer y inside the certified bounds.
        bounds = kernel_bounds(red.z0, K)
        Kq = np.array(K, dtype=float)
        for support in reference:
            z = np.zeros(n, dtype=object)
            z[support] = 1
            y = np.linalg.lstsq(Kq, np.array(z - red.z0, dtype=float), rcond=None)[0]
            y_int = np.rint(y).astype(int)
            assert (K.dot(y_int.astype(object)) == z - red.z0).all(), "kernel basis must span every integer solution"
            assert all(lo <= int(v) <= hi for v, (lo, hi) in zip(y_int, bounds))


def test_equations_that_all_read_zero_equal_zero_leave_every_vector():
    """M = 0 and t = 0: the whole integer lattice; every 0/1 vector solves it, and the decision counts them all."""
    M = np.zeros((2, 4), dtype=object)
    t = np.zeros(2, dtype=object)
    red = reduce_system(M, t)
    assert red.span_feasible and red.integer_feasible and red.rank == 0
    assert all(M.dot(red.z0) == t) and red.kernel.shape == (4, 4)
    assert flint_rank(red.kernel) == 4
    result = decide_system(System(M, t, None, [0, 1]), find_all=True, prune_system=False)
    assert result.status == "feasible" and result.count == len(solve_system_brute(M, t)) == 16


def flint_rank(kernel) -> int:
    return flint.fmpz_mat([[int(v) for v in row] for row in kernel]).rank()


def test_span_certificate_is_checked_independently():
    M = np.array([[1, 2, 3], [2, 4, 6]], dtype=object)
    t = np.array([1, 3], dtype=object)
    red = reduce_system(M, t)
    assert not red.span_feasible
    y = red.span_certificate
    assert sum(y[r] * M[r, j] for r in range(2) for j in [0]) == 0
    assert check_span_certificate(M, t, y)
    assert not check_span_certificate(M, t, [0, 0])


def test_lattice_infeasible_is_genuine():
    # 2 z1 + 4 z2 = 3 has real solutions but no integer ones.
    M = np.array([[2, 4, 6]], dtype=object)
    t = np.array([3], dtype=object)
    red = reduce_system(M, t)
    assert red.span_feasible and red.integer_feasible is False
    assert solve_system_brute(M, t) == []


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("kernel", ["vectorized", "compiled"])
def test_pruning_never_cuts_a_solution(seed, kernel):
    for M, t in systems(100 + seed, 60):
        reference = solve_system_brute(M, t)
        pruning = prune(plain_system(M, t), SearchTuning(vectorized_cells=10**9 if kernel == "vectorized" else 0))
        if pruning.infeasible:
            assert reference == []
            continue
        for support in reference:
            for i, value in enumerate(pruning.fixed):
                if value >= 0:
                    assert (i in support) == bool(value)


@pytest.mark.parametrize("upper", [1, 4])
def test_the_kernel_compiled_its_python_source_and_the_numpy_rounds_reach_the_same_fixpoint(upper):
    from indexset.native.prune import propagate_bounds

    from indexset.search.prune import propagate_vectorized

    outcomes = []
    for M, t in systems(7, 80):
        M, t = np.asarray(M, dtype=np.int64), np.asarray(t, dtype=np.int64)
        domains = []
        for run in (propagate_bounds, propagate_bounds.py_func, propagate_vectorized):
            low, high = np.zeros(M.shape[1], dtype=np.int64), np.full(M.shape[1], upper, dtype=np.int64)
            count = run(M, t, t, low, high, 10**6)
            domains.append((count, (low.tolist(), high.tolist()) if count >= 0 else None))  # an infeasible row may be met at any point of the rounds
        assert domains[0] == domains[1] == domains[2]
        outcomes.append(domains[0][0])
    assert min(outcomes) == -1 and max(outcomes) > 0  # both kinds of answer were compared


def test_the_numpy_rounds_follow_a_chain_that_fixes_one_unit_a_round():
    from indexset.search.prune import propagate_vectorized

    n = 12  # z0 = 1, and z_i = z_{i-1} for every i: each round can only fix the next unit
    M = np.zeros((n, n), dtype=np.int64)
    M[0, 0] = 1
    for i in range(1, n):
        M[i, i], M[i, i - 1] = 1, -1
    t = np.zeros(n, dtype=np.int64)
    t[0] = 1
    low, high = np.zeros(n, dtype=np.int64), np.ones(n, dtype=np.int64)
    assert propagate_vectorized(M, t, t, low, high, 10**6) == n and low.tolist() == high.tolist() == [1] * n


@pytest.mark.parametrize("seed", range(3))
def test_bounded_domains_keep_every_solution_and_python_integers_reach_the_same_fixpoint(seed):
    """Propagation over 0 ≤ z ≤ u against brute force; the object-array rounds (huge numbers) against the int64 ones."""
    from indexset.search.prune import propagate_vectorized

    rng = np.random.default_rng(300 + seed)
    for _ in range(40):
        m, n = int(rng.integers(1, 4)), int(rng.integers(2, 7))
        M = rng.integers(-3, 6, size=(m, n))
        upper = rng.integers(0, 5, size=n)
        t = M @ np.array([rng.integers(0, u + 1) for u in upper]) if rng.random() < 0.7 else rng.integers(-5, 20, size=m)
        system = plain_system(M, t, upper)
        reference = solve_system_brute(system.M, system.t, upper=upper)
        pruning = prune(system)
        if pruning.infeasible:
            assert reference == []
            continue
        for values in reference:
            assert all(int(pruning.low[j]) <= v <= int(pruning.high[j]) for j, v in enumerate(values))
        low, high = np.zeros(n, dtype=object), np.array([int(u) for u in upper], dtype=object)
        assert propagate_vectorized(M.astype(object), t.astype(object), t.astype(object), low, high, 10**6) >= 0
        assert low.tolist() == [int(v) for v in pruning.low] and high.tolist() == [int(v) for v in pruning.high]


@pytest.mark.parametrize("seed", range(3))
def test_scaled_relaxation_keeps_every_solution(seed):
    rng = np.random.default_rng(200 + seed)
    for _ in range(20):
        n = int(rng.integers(3, 11))
        M, t = random_system(rng, 2, n, 40, planted=True)
        big = 2**70 + int(rng.integers(0, 1000))
        system = System(M * big, t * big, np.array([int(rng.integers(0, 3)) * big] * 2, dtype=object))
        relaxed = fit_coefficients(system, bits=20)
        assert relaxed.max_abs().bit_length() <= 21 + n.bit_length()
        for mask in range(1 << n):
            support = [i for i in range(n) if mask >> i & 1]
            if system.is_solution(support):
                assert relaxed.is_solution(support)


@pytest.mark.parametrize("use_reduction", [False, True])
def test_cpsat_enumerates_exactly_the_solutions(use_reduction):
    for M, t in systems(300, 30):
        reference = solve_system_brute(M, t)
        red = reduce_system(M, t) if use_reduction else None
        if red is not None and red.z0 is None:
            red = None
        result = cpsat.search(plain_system(M, t), red, find_all=True)
        assert result.complete
        assert supports(result.solutions) == supports(reference)
        assert result.status == ("feasible" if reference else "infeasible")


def test_cpsat_relaxed_model_filters_to_exact_solutions():
    rng = np.random.default_rng(7)
    for _ in range(10):
        M, t = random_system(rng, 2, 9, 30, planted=True)
        big = 2**80 + 12345
        system = System(M * big, t * big)
        result = cpsat.search(system, None, find_all=True)
        assert result.stages["model"] == "relaxed"
        assert supports(result.solutions) == supports(solve_system_brute(M, t))


def test_portfolio_stopped_early_claims_nothing_unproven():
    rng = np.random.default_rng(11)
    M, t = random_system(rng, 2, 40, 1000, planted=False)
    stop = threading.Event()
    stop.set()
    system = plain_system(M, t)
    result = run_portfolio(system, reduce_system(M, t), stop=stop, engines=["cpsat"])
    if result.status == "infeasible":
        assert result.complete
    if result.status == "feasible":
        assert system.is_solution(result.index_set)


@pytest.mark.parametrize("engines", [["lattice"], None])
def test_a_search_stopped_by_its_time_limit_reports_what_it_walked(engines):
    # An unplanted (★) block whose lattice walk is predicted at about 10⁹ nodes: no engine decides
    # in a second and a half, and the answer still carries what the lattice engine did.
    from indexset.search.system import build_system
    from indexset.solver import solve
    from indexset.workflows import construct

    instance = construct.random(d=2, n=74, range=1000, seed=1)
    result = solve(instance, time_limit=1.5, engines=engines)
    assert result.status == "unknown" and not result.complete
    M = np.array(build_system(instance).M, dtype=np.float64)
    lattice = result.stages["search"]["lattice"]
    assert lattice["lattice_dim"] == M.shape[1] - np.linalg.matrix_rank(M)
    assert "nodes" in lattice and lattice["estimated_nodes"] > 0
    summary = result.stages["search"]["portfolio"]
    assert summary["lattice"]["status"] == "unknown"


def _components_by_union_find(M, fixed):
    """Reference: the variable–equation graph's components, by union–find over plain lists."""
    m, n = M.shape
    parent = list(range(m + n))  # rows 0..m-1, variables m..m+n-1

    def root(a):
        while parent[a] != a:
            parent[a] = parent[parent[a]]
            a = parent[a]
        return a

    free = [i for i in range(n) if fixed[i] < 0]
    for r in range(m):
        for i in free:
            if M[r, i] != 0:
                parent[root(r)] = root(m + i)
    groups = {}
    for node in list(range(m)) + [m + i for i in free]:
        groups.setdefault(root(node), []).append(node)
    return sorted((sorted(k for k in g if k < m), sorted(k - m for k in g if k >= m)) for g in groups.values())


@pytest.mark.parametrize("density", [0.15, 0.5, 1.0])
def test_components_match_union_find(density):
    from indexset.search.prune import components

    rng = np.random.default_rng(int(density * 100))
    for _ in range(60):
        m, n = int(rng.integers(1, 5)), int(rng.integers(1, 12))
        M = rng.integers(-3, 4, (m, n)) * (rng.random((m, n)) < density)
        if density == 1.0 and rng.random() < 0.5:
            M[int(rng.integers(m))] = rng.choice([-2, -1, 1, 2], n)  # a row on every variable: the dense shortcut
        fixed = np.where(rng.random(n) < 0.2, rng.integers(0, 2, n), -1).astype(np.int8)
        system = System(M.astype(object), np.zeros(m, dtype=object))
        assert sorted(components(system, [i for i in range(n) if fixed[i] < 0])) == _components_by_union_find(M, fixed)
