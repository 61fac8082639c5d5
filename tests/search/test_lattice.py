"""The lattice enumeration engine against brute force, and solve-system."""

from __future__ import annotations

import json
import threading
from dataclasses import replace

import numpy as np
import pytest
from reference import mitm_system_solutions
from systems import random_system, star_system
from tunings import KERNEL_WALK, NUMPY_WALK

from indexset.budget import Budget
from indexset.cli.main import main
from indexset.errors import InputError
from indexset.search import lattice
from indexset.search.decide import decide_system
from indexset.search.engines.brute import solve_system_brute
from indexset.search.lattice import breadth, search
from indexset.search.lattice.tuning import DEFAULT
from indexset.search.reduce import reduce_system
from indexset.search.system import System, plain_system
from indexset.search.systemfile import load_system


def planted_system(rng, m, n, low, high, size):
    """A system with a known solution of the given size; returns (system, support)."""
    A = rng.integers(low, high + 1, size=(m, n))
    support = sorted(rng.choice(n, size=size, replace=False).tolist())
    z = np.zeros(n, dtype=np.int64)
    z[support] = 1
    return plain_system(A, A @ z), support


def _half_sums(M, columns):
    """The row sums of every 0/1 choice of ``columns``, one row per choice (its bit mask as the row index)."""
    masks = np.arange(1 << len(columns), dtype=np.int64)
    bits = ((masks[:, None] >> np.arange(len(columns))) & 1).astype(np.int8)  # 2^20 rows: int8 keeps them small
    return bits @ M[:, columns].T


def _sum_codes(values):
    """Each vector of row sums as one int64: a field of 63 // m bits per row, exact while every |sum| is below half a field."""
    width = 63 // values.shape[1]
    assert np.abs(values).max() < 1 << (width - 1)
    return ((values + (1 << (width - 1))) << (width * np.arange(values.shape[1]))).sum(axis=1)


def has_solution(system) -> bool:
    """Whether some 0/1 z solves the system, by meet in the middle (no engine involved; sums within :func:`_sum_codes`' fields)."""
    M, t = system.M.astype(np.int64), system.t.astype(np.int64)
    half = M.shape[1] // 2
    left = _half_sums(M, list(range(half)))
    right = _half_sums(M, list(range(half, M.shape[1])))
    return bool(np.isin(_sum_codes(t - right), _sum_codes(left)).any())


WALKS = {"breadth-first": NUMPY_WALK, "kernel": KERNEL_WALK}
NUMPY_FIRST = replace(DEFAULT, numpy_walks_once_loaded=True)  # the default NumPy walks, whether an earlier test loaded the kernels or not
"""The tuning under which every small tree is walked by each walk: NumPy breadth-first, or the Numba kernel."""


@pytest.fixture(params=sorted(WALKS))
def walk(request):
    """Each test that asks for it runs once with each walk of the tree (its searches pass ``tuning=WALKS[walk]``)."""
    return request.param


def all_solutions(system, **options):
    result = search(system, find_all=True, **options)
    assert result.complete, result.reason
    assert result.count == len(result.solutions)
    return result


def walked_by(result) -> str | None:
    """Which walk decided a search: None when no tree was walked."""
    if "nodes" not in result.stages or result.stages.get("lattice_dim", 0) == 0:
        return None
    return "breadth-first" if result.stages.get("walk") == "breadth-first (NumPy)" else "kernel"


@pytest.mark.slow
@pytest.mark.parametrize("embedding", ["cvp", "homogeneous"])
def test_all_solutions_match_brute_force(embedding, walk):
    rng = np.random.default_rng(8)
    walks = set()
    for trial in range(240):
        m = int(rng.integers(1, 5))
        n = int(rng.integers(1, 17))
        low, high = [(-3, 3), (-20, 20), (0, 50), (-1000, 1000)][trial % 4]
        system = random_system(rng, m, n, low, high, planted=trial % 2 == 0)
        expected = solve_system_brute(system.M, system.t)
        result = all_solutions(system, embedding=embedding, tuning=WALKS[walk])
        walks.add(walked_by(result))
        assert sorted(result.solutions) == sorted(expected), (trial, m, n)
        assert len(set(map(tuple, result.solutions))) == len(result.solutions)
        assert result.status == ("feasible" if expected else "infeasible")
        for support in result.solutions:
            assert system.is_solution(support)
    if embedding == "cvp":
        assert walks - {None} == {walk}
    else:  # x and −x fold together, which only the kernel does (on a numerics problem the cvp form takes over)
        assert "kernel" in walks and walks - {None} <= {walk, "kernel"}


def test_star_systems_match_brute_force(walk):
    rng = np.random.default_rng(3)
    walks = set()
    for trial in range(40):
        d = 2 if trial % 3 else 3
        n = int(rng.integers(d, 15))
        system = star_system(rng, d, n, bound=2)
        expected = solve_system_brute(system.M, system.t)
        result = all_solutions(system, tuning=WALKS[walk])
        walks.add(walked_by(result))
        assert sorted(result.solutions) == sorted(expected)
    assert walks - {None} == {walk}


def test_first_solution_is_a_solution_and_infeasible_is_complete(walk):
    rng = np.random.default_rng(5)
    walks = set()
    for trial in range(60):
        system = random_system(rng, int(rng.integers(1, 4)), int(rng.integers(2, 15)), -9, 9, planted=trial % 2 == 0)
        expected = solve_system_brute(system.M, system.t)
        result = search(system, tuning=WALKS[walk])
        walks.add(walked_by(result))
        if expected:
            assert result.status == "feasible"
            assert result.index_set in expected
            assert result.verified
        else:
            assert result.status == "infeasible" and result.complete and result.count == 0
    assert walks - {None} == {walk}


def test_degenerate_systems(walk):
    # Free variables (zero columns), repeated columns, a zero row and a row
    # that pins everything: many solutions, each exactly once.
    A = np.array([[1, 1, 0, 2, 2, 0], [0, 0, 0, 0, 0, 0], [1, -1, 0, 1, -1, 0]])
    for b in ([2, 0, 0], [0, 0, 0], [4, 0, 0], [1, 0, 5]):
        system = plain_system(A, b)
        assert sorted(all_solutions(system, tuning=WALKS[walk]).solutions) == sorted(solve_system_brute(system.M, system.t))
    # Full column rank: decided without search.
    system = plain_system(np.eye(3, dtype=np.int64), [1, 0, 1])
    assert all_solutions(system, tuning=WALKS[walk]).solutions == [[0, 2]]
    assert search(plain_system(np.eye(2, dtype=np.int64), [2, 0]), tuning=WALKS[walk]).status == "infeasible"


def test_huge_coefficients_are_exact():
    # Entries beyond int64: leaves are re-checked with Python ints.
    rng = np.random.default_rng(11)
    big = 2**70
    for trial in range(10):
        n = 10
        A = [[int(v) * big + int(w) for v, w in zip(rng.integers(-5, 6, n), rng.integers(-5, 6, n))] for _ in range(2)]
        z = rng.integers(0, 2, n)
        b = [sum(a * int(zi) for a, zi in zip(row, z)) + (trial % 2) for row in A]
        system = plain_system(np.array(A, dtype=object), np.array(b, dtype=object))
        expected = solve_system_brute(system.M, system.t)
        assert sorted(all_solutions(system).solutions) == sorted(expected)


@pytest.mark.slow
def test_huge_and_mixed_coefficients_decide_exactly():
    # Rows of 30–200 bits, some mixed with a small row: the lattice has a few
    # enormous basis vectors, fixed exactly before the float search.
    import random

    rng = random.Random(1)
    for trial in range(24):
        n, m = rng.randint(6, 16), rng.randint(1, 4)
        bits = rng.choice([30, 60, 100, 200])
        A = [[rng.randint(-(2**bits), 2**bits) for _ in range(n)] for _ in range(m)]
        if trial % 3 == 0:
            A[0] = [rng.randint(-3, 3) for _ in range(n)]
        z = [rng.randint(0, 1) for _ in range(n)]
        b = [sum(a * v for a, v in zip(row, z)) + trial % 2 for row in A]
        system = plain_system(np.array(A, dtype=object), np.array(b, dtype=object))
        assert sorted(all_solutions(system).solutions) == sorted(solve_system_brute(system.M, system.t))


@pytest.mark.parametrize("n", [25, 32, 40])
def test_medium_planted_solutions_are_found(n):
    rng = np.random.default_rng(n)
    for m in (2, 4, 6):
        system, support = planted_system(rng, m, n, 0, 99, size=n // 2)
        first = search(system, time_limit=20)
        assert first.status == "feasible" and system.is_solution(first.index_set)
        if m >= 4:
            every = search(system, find_all=True, time_limit=20)
            assert every.complete and support in every.solutions
            assert all(system.is_solution(s) for s in every.solutions)


def test_medium_star_planted():
    rng = np.random.default_rng(2)
    for d, n, bound in ((2, 30, 1000), (3, 36, 30)):
        up = rng.integers(-bound, bound + 1, size=(n, d))
        down = rng.integers(-bound, bound + 1, size=(d, n))
        # Plant S = {0, …, d−1}: choose W_up[S] so that W_down[:,S]·W_up[S,:] = −I·det scale.
        S = list(range(d))
        down_S = down[:, S]
        det = round(np.linalg.det(down_S))
        if det == 0:
            continue
        adj = np.round(np.linalg.inv(down_S) * det).astype(np.int64)
        up[S] = -adj
        system = star_system_from(up, down, t_scale=det)
        result = search(system, find_all=True, time_limit=30)
        assert result.complete and S in result.solutions


def star_system_from(up, down, t_scale):
    d, n = down.shape
    M = np.array([[int(down[a, i]) * int(up[i, b]) for i in range(n)] for a in range(d) for b in range(d)], dtype=object)
    t = np.array([-int(t_scale) if a == b else 0 for a in range(d) for b in range(d)], dtype=object)
    return System(M, t, None, [])


@pytest.mark.slow
def test_a_stalled_walk_restarts_on_the_stronger_basis_and_counts_the_same():
    """No subtree finished at the first check: the rung's basis is reduced and (gain required: none) the walk restarts on it."""
    system = random_system(np.random.default_rng(0), 3, 40, 0, 100, planted=True)
    stalled = replace(KERNEL_WALK, rung_stalled_seconds=1e-9, rung_gain=float("-inf"), rung_block=30, subtrees_per_worker=1)
    result = all_solutions(system, workers=2, tuning=stalled)
    assert result.stages["rung"]["restarted"]
    assert sorted(result.solutions) == mitm_system_solutions(system.M, system.t)


@pytest.mark.slow
def test_threads_share_the_tree():
    rng = np.random.default_rng(4)
    for trial in range(12):
        m, n = int(rng.integers(3, 6)), int(rng.integers(26, 34))
        system = random_system(rng, m, n, 0, 30, planted=trial % 2 == 0)
        one = all_solutions(system, tuning=KERNEL_WALK)
        two = all_solutions(system, workers=2, tuning=KERNEL_WALK)
        assert sorted(one.solutions) == two.solutions
        first = search(system, workers=2, tuning=KERNEL_WALK)
        assert first.status == one.status
        if one.solutions:
            assert first.index_set in one.solutions and not first.complete


@pytest.mark.slow
def test_time_limit_stop_and_progress():
    # This tree takes minutes to walk here (89 s on both cores), hundreds of
    # times the limits below, so the limits are what ends these searches.
    rng = np.random.default_rng(0)
    system = star_system(rng, 2, 76, 1000)
    reduction = reduce_system(system.M, system.t)
    result = search(system, reduction, find_all=True, time_limit=0.3)
    assert result.status == "unknown" and not result.complete
    stop = threading.Event()
    stop.set()
    assert search(system, reduction, stop=stop).status == "unknown"
    seen, stop = [], threading.Event()
    # The first progress report (after about a second of enumeration) stops the search: no clock involved.
    stopped = search(system, reduction, stop=stop, progress=lambda counters: (seen.append(counters), stop.set()))
    assert stopped.status == "unknown" and seen and seen[-1]["nodes"] > 0
    assert search(system, reduction, find_all=True, time_limit=0.5, workers=2).status == "unknown"


def test_tolerance_systems_are_left_to_cpsat():
    system = plain_system([[1, 2, 3]], [3])
    system.slack = np.array([1], dtype=object)
    result = search(system)
    assert result.status == "unknown" and not result.complete
    decided = decide_system(system)  # the portfolio hands it to CP-SAT, which decides it
    assert decided.status == "feasible" and decided.engine == "cpsat"
    assert abs(int(np.dot(system.M[0], np.isin(np.arange(3), decided.index_set))) - 3) <= 1


def test_reading_system_files(tmp_path):
    dat = tmp_path / "ms.dat"
    dat.write_text("# comment\n# more\n2 3\n1 2 3 3\n4 5 6 9\n")
    system = load_system(dat)
    assert system.M.tolist() == [[1, 2, 3], [4, 5, 6]] and system.t.tolist() == [3, 9]
    npz = tmp_path / "s.npz"
    np.savez(npz, A=np.array([[1, 1, 1]]), b=np.array([2]))
    assert load_system(npz).n == 3
    bad = {
        "short.dat": "2 3\n1 2 3 3\n",
        "ragged.dat": "1 3\n1 2 3\n",
        "words.dat": "1 2\n1 x 3\n",
        "empty.dat": "# nothing\n",
    }
    for name, text in bad.items():
        (tmp_path / name).write_text(text)
        with pytest.raises(InputError, match=name):
            load_system(tmp_path / name)
    np.savez(tmp_path / "noB.npz", A=np.array([[1]]))
    np.savez(tmp_path / "float.npz", A=np.array([[0.5]]), b=np.array([1]))
    np.savez(tmp_path / "shape.npz", A=np.array([[1, 2]]), b=np.array([1, 2]))
    np.savez(tmp_path / "obj.npz", A=np.array([[1, "a"]], dtype=object), b=np.array([1]))
    (tmp_path / "junk.npz").write_bytes(b"not a zip")
    for name in ("noB.npz", "float.npz", "shape.npz", "obj.npz", "junk.npz", "missing.npz", "x.csv"):
        if name == "x.csv":
            (tmp_path / name).write_text("1,2")
        with pytest.raises(InputError):
            load_system(tmp_path / name)


def test_solve_system_cli(tmp_path, capsys):
    path = tmp_path / "s.npz"
    np.savez(path, A=np.array([[1, 1, 1, 1], [1, 2, 3, 4]]), b=np.array([2, 5]))
    assert main(["solve-system", str(path), "--json", "--all"]) == 0
    payload = json.loads(capsys.readouterr().out)
    assert payload["status"] == "feasible" and payload["count"] == 2 and payload["engine"] == "lattice"
    assert sorted(payload["solutions"]) == [[0, 1, 1, 0], [1, 0, 0, 1]]
    assert payload["solution"] in payload["solutions"] and isinstance(payload["time_s"], float)
    np.savez(path, A=np.array([[2, 2, 2]]), b=np.array([2]))
    assert main(["solve-system", str(path), "--json", "--count"]) == 0
    assert json.loads(capsys.readouterr().out)["count"] == 3
    np.savez(path, A=np.array([[2, 4, 6]]), b=np.array([5]))
    assert main(["solve-system", str(path), "--json"]) == 1
    payload = json.loads(capsys.readouterr().out)
    assert payload["status"] == "infeasible" and payload["solution"] is None
    assert main(["solve-system", str(path)]) == 1
    assert "INFEASIBLE" in capsys.readouterr().out
    assert main(["solve-system", str(tmp_path / "missing.dat")]) == 2
    assert main(["solve-system", str(path), "--time-limit", "0"]) == 2
    assert main(["solve-system", str(path), "--workers", "0"]) == 2
    assert main(["solve-system", str(path), "--workers", "1", "--json"]) == 1


def test_pruning_profiles_stay_under_the_radius_and_grow_with_the_fixed_levels():
    from indexset.search.lattice import build_lattice, pruning_profile

    system, _ = planted_system(np.random.default_rng(4), 3, 36, -50, 50, 18)
    lattice = build_lattice(reduce_system(system.M, system.t), 20)
    radius2 = lattice.data.radius2
    assert np.array_equal(lattice.data.bound2, np.full(lattice.D, radius2))  # the complete search
    for slack in DEFAULT.pruning_slacks:
        profile = pruning_profile(lattice, slack)
        assert (profile <= radius2).all() and (np.diff(profile) <= 0).all()  # level D − 1 is fixed first
        assert profile[0] == radius2 and profile[-1] < radius2


@pytest.mark.parametrize("workers", [1, 2])
@pytest.mark.parametrize("slacks, complete", [((1e9,), True), ((-0.999,), False)])
def test_pruned_passes_report_only_true_solutions(slacks, complete, workers):
    # A slack so large that the profile is the radius everywhere makes a pass
    # the complete first-solution walk (finds one iff brute force does); a
    # profile near zero walks almost nothing. Either way, anything found solves the system.
    tuning = replace(KERNEL_WALK, pruning_slacks=slacks)  # pruned passes belong to the kernel's search
    rng = np.random.default_rng(21)
    for trial in range(30):
        system = random_system(rng, 2, 16, -30, 30, planted=trial % 2 == 0)
        expected = solve_system_brute(system.M, system.t)
        reduction = reduce_system(system.M, system.t)
        bases = [lattice.build_lattice(reduction, 0)]
        if bases[0].infeasible or bases[0].D == 0:
            continue
        bases += [lattice.build_lattice(reduction, 0, shuffle=rng) for _ in range(workers - 1)]
        found, facts = lattice.pruned_passes(lattice.Job(system, reduction, tuning=tuning), bases, seconds=60.0, workers=workers)
        assert all(support in expected for support in found), trial
        assert facts["found"] == bool(found) and 1 <= facts["passes"] <= workers
        assert facts["passes"] == workers or found  # only a solution ends the passes early
        assert not [thread for thread in threading.enumerate() if thread.name.startswith("indexset-pruned")]
        if complete:
            assert bool(found) == bool(expected), trial


def test_first_solution_of_a_planted_block_comes_from_the_pruned_passes():
    from indexset.search.system import build_system
    from indexset.workflows import construct

    # Pruned passes belong to the kernel's search; a budget no machine's speed can use up here.
    tuning = replace(KERNEL_WALK, pruned_share=1e9, pruned_max_seconds=600.0, max_discrepancies=-1)

    instance = construct.planted(d=2, n=70, range=1000, seed=1)  # a complete walk: 100 M nodes to the first solution
    system = build_system(instance)
    result = search(system, workers=2, tuning=tuning)
    assert result.status == "feasible" and system.is_solution(result.index_set)
    assert result.stages["pruned"]["found"] and result.stages["nodes"] == result.stages["pruned"]["nodes"]


@pytest.mark.parametrize("find_all", [False, True])
def test_the_complete_search_still_decides_when_the_pruned_passes_miss(find_all):
    # Pruned passes belong to the kernel's search; every pass runs to its (empty) end.
    tuning = replace(KERNEL_WALK, pruning_slacks=(-0.999,), pruned_share=1e9, pruned_max_seconds=600.0, max_discrepancies=-1)
    rng = np.random.default_rng(0)
    planted, support = planted_system(rng, 4, 40, -150, 150, 20)
    # Near a planted right side but with no solution (meet in the middle says so): a tree with nodes to walk.
    nears = (plain_system(planted.M.astype(np.int64), planted.t.astype(np.int64) + np.array(shift)) for shift in ((1, 0, 0, 0), (0, 1, 0, 0), (0, 0, 1, 0), (0, 0, 0, 1)))
    near = next(system for system in nears if not has_solution(system))
    assert has_solution(planted)
    for system, status in ((planted, "feasible"), (near, "infeasible")):
        result = search(system, find_all=find_all, workers=2, tuning=tuning)
        assert result.status == status and (status == "infeasible" or system.is_solution(result.index_set))
        if find_all:
            assert "pruned" not in result.stages  # counting never prunes
            assert status == "infeasible" or support in result.solutions
        else:
            assert result.stages["pruned"]["passes"] >= 1 and not result.stages["pruned"]["found"]
            assert result.stages["estimated_nodes"] > 0


def test_the_breadth_first_walk_gives_up_past_its_budget_and_only_then():
    from indexset.search.lattice.breadth import walk_breadth_first

    rng = np.random.default_rng(6)
    system, support = planted_system(rng, 3, 26, 0, 59, size=13)
    lll = lattice.build_lattice(reduce_system(system.M, system.t))
    leaves, nodes = walk_breadth_first(lll.tree(), lll.start(), 10**7)
    assert nodes > lll.D
    assert support in [lattice.decode(lll, x, system) for x in leaves]
    assert walk_breadth_first(lll.tree(), lll.start(), nodes - 1)[0] is None
    again, counted = walk_breadth_first(lll.tree(), lll.start(), nodes)
    assert counted == nodes and np.array_equal(again, leaves)


@pytest.mark.parametrize("family", ["planted", "random"])
def test_the_bkz_tree_is_walked_breadth_first_when_the_lll_tree_is_over_budget(family):
    from reference import mitm_solutions

    from indexset.solver import solve
    from indexset.workflows import construct

    instance = getattr(construct, family)(d=2, n=36, range=1000, seed=5)
    result = solve(instance, find_all=True, engines=["lattice"], lattice_tuning=replace(NUMPY_FIRST, small_tree_nodes=-1))
    stages = result.stages["search"]["lattice"]
    assert stages["walk"] == "breadth-first (NumPy)" and stages["bkz_block"] == DEFAULT.bkz_block
    expected = mitm_solutions(instance)
    assert result.status == ("absorbable" if expected else "not_absorbable") and sorted(result.solutions) == expected


@pytest.mark.parametrize("chunk", [1, 3, 4])
def test_the_walk_in_chunks_makes_the_level_wide_tree_and_can_end_at_its_first_leaves(chunk):
    import threading

    rng = np.random.default_rng(6)
    system, support = planted_system(rng, 3, 26, 0, 59, size=13)
    lll = lattice.build_lattice(reduce_system(system.M, system.t))
    whole, nodes = breadth.walk_breadth_first(lll.tree(), lll.start(), 10**7, chunk=10**9)  # the whole level at once: the reference
    assert support in [lattice.decode(lll, x, system) for x in whole] and len(whole) > 1
    leaves, counted = breadth.walk_breadth_first(lll.tree(), lll.start(), 10**7, until=lambda leaves: False, chunk=chunk)
    assert counted == nodes and np.array_equal(leaves, whole)  # same nodes, same leaves in the same order
    # The budget binds on the running total across chunks, as on the level-wide walk.
    assert breadth.walk_breadth_first(lll.tree(), lll.start(), nodes - 1, chunk=chunk)[0] is None
    assert breadth.walk_breadth_first(lll.tree(), lll.start(), nodes, chunk=chunk)[1] == nodes
    stopped = threading.Event()
    stopped.set()
    assert breadth.walk_breadth_first(lll.tree(), lll.start(), 10**7, Budget.of(stop=stopped), chunk=chunk)[0] is None
    # Ending at the second chunk of leaves that comes: those leaves, a prefix of the whole list, and fewer nodes.
    calls = []
    early, made = breadth.walk_breadth_first(lll.tree(), lll.start(), 10**7, until=lambda leaves: calls.append(len(leaves)) or len(calls) == 2, chunk=chunk)
    assert len(calls) == 2 and len(early) == sum(calls) and np.array_equal(early, whole[: len(early)])
    assert made < nodes


def test_profile_score_is_the_gaussian_heuristic_tree_size_and_ranks_walked_trees():
    import math

    system = star_system(np.random.default_rng(3), 2, 54, 1000)  # LLL trees of 11–27 K nodes
    reduction = reduce_system(system.M, system.t)
    bases = [lattice.build_lattice(reduction, 0, shuffle=np.random.default_rng(seed)) for seed in range(8)]
    for basis in bases[:2]:  # against the sum written out: level k from the top has V_k(R) / prod of its k norms
        rr, radius2 = basis.data.rr, float(basis.data.bound2[0])
        levels = [math.pi ** (k / 2) * radius2 ** (k / 2) / math.gamma(k / 2 + 1) / math.prod(math.sqrt(v) for v in rr[len(rr) - k:]) for k in range(1, len(rr) + 1)]
        assert math.isclose(lattice.profile_score(basis), -math.log(sum(levels)), rel_tol=1e-9)
    nodes = [walk_nodes(basis) for basis in bases]
    scores = [lattice.profile_score(basis) for basis in bases]
    ranks = np.argsort(np.argsort(nodes)), np.argsort(np.argsort(scores))
    assert np.corrcoef(*ranks)[0, 1] < -0.5  # a higher score, a smaller tree
    assert nodes[int(np.argmax(scores))] <= np.median(nodes)


def test_the_breadth_first_estimate_is_near_the_size_of_the_tree_it_walks():
    for seed in (0, 2, 4):
        rng = np.random.default_rng(seed)
        system, _ = planted_system(rng, 3, 30, 0, 59, size=15)
        lll = lattice.build_lattice(reduce_system(system.M, system.t))
        nodes = breadth.walk_breadth_first(lll.tree(), lll.start(), 10**7)[1]
        estimate = breadth.estimate_nodes(lll.tree(), lll.start(), 20_000, seed)
        assert nodes > 1000 and 0.5 < estimate / nodes < 2  # unbiased; 20 000 descents keep it within ±35 % here
        assert breadth.estimate_nodes(lll.tree(), lll.start(), 20_000, seed) == estimate  # seeded


def test_a_first_solution_comes_from_the_wide_pruned_walk_before_the_whole_bkz_tree_is_walked():
    from reference import mitm_solutions

    from indexset.search.system import build_system
    from indexset.workflows import construct

    for seed in (2, 3):  # sets the slack-1.0 profile keeps on these BKZ bases
        system = build_system(construct.planted(d=2, n=60, range=1000, seed=seed))
        first = search(system, tuning=NUMPY_FIRST)
        assert first.status == "feasible" and system.is_solution(first.index_set) and not first.complete
        assert first.stages["walk"] == f"breadth-first (NumPy), pruned (slack {DEFAULT.first_walk_slack})"
        whole = lattice.build_lattice(reduce_system(system.M, system.t), DEFAULT.bkz_block)
        assert first.stages["nodes"] < walk_nodes(whole) / 4, seed  # the pruned tree is a small part of the whole one
    past_lll = replace(NUMPY_FIRST, small_tree_nodes=-1)  # past the LLL walk, to the BKZ tree
    negative = construct.random(d=2, n=40, range=1000, seed=2)  # nothing to find: the whole walk decides after it
    assert mitm_solutions(negative) == []
    none = search(build_system(negative), tuning=past_lll)
    assert none.status == "infeasible" and none.complete and none.stages["walk"] == "breadth-first (NumPy)"


def test_a_whole_numpy_walk_ends_at_its_first_solution_and_is_not_complete_then():
    from indexset.search.system import build_system
    from indexset.workflows import construct

    whole_walk = replace(NUMPY_FIRST, first_walk_nodes=-1, reduced_tree_nodes=10**6)  # no pruned walk first: the whole BKZ walk (160 K nodes) answers
    system = build_system(construct.planted(d=2, n=60, range=1000, seed=1))
    first = search(system, tuning=whole_walk)
    assert first.status == "feasible" and system.is_solution(first.index_set) and not first.complete
    assert first.stages["walk"] == "breadth-first (NumPy)"
    whole = lattice.build_lattice(reduce_system(system.M, system.t), DEFAULT.bkz_block)
    assert first.stages["nodes"] < walk_nodes(whole)  # it ended early


def walk_nodes(lattice_: lattice.Lattice) -> int:
    """Nodes of the NumPy walk of the whole tree of ``lattice_``."""
    return breadth.walk_breadth_first(lattice_.tree(), lattice_.start(), 10**7)[1]


def test_a_pruned_numpy_walk_finds_first_solutions_and_the_kernel_decides_the_rest():
    from reference import mitm_solutions

    from indexset.search.system import build_system
    from indexset.workflows import construct

    # No whole tree is walked in NumPy, nor the wide pruned one: only the tightest linear profile.
    tuning = replace(NUMPY_FIRST, small_tree_nodes=-1, reduced_tree_nodes=-1, first_walk_nodes=-1)
    for seed in (0, 1):  # planted sets that the slack-0.1 profile keeps
        system = build_system(construct.planted(d=2, n=50, range=1000, seed=seed))
        first = search(system, tuning=tuning)
        assert first.status == "feasible" and system.is_solution(first.index_set) and not first.complete
        assert first.stages["walk"].startswith("breadth-first (NumPy), pruned")
    # Nothing to find: the pruned walk proves nothing, the kernel's complete search decides.
    negative = construct.random(d=2, n=40, range=1000, seed=1)
    assert mitm_solutions(negative) == []
    none = search(build_system(negative), tuning=tuning)
    assert none.status == "infeasible" and none.complete and "walk" not in none.stages
    planted = construct.planted(d=2, n=40, range=1000, seed=1)
    every = search(build_system(planted), find_all=True, tuning=tuning)  # counting never prunes
    assert every.complete and sorted(every.solutions) == mitm_solutions(planted) and "walk" not in every.stages


@pytest.mark.parametrize("hopeless", [False, True, "far beyond"])
def test_the_passes_take_more_of_the_time_left_the_further_the_complete_walk_outlasts_it(monkeypatch, hopeless):
    from indexset.search.lattice import engine

    budgets = []

    def recorded(job, bases, seconds, *args, **kwargs):  # a spy: the seconds handed to the passes show in no result
        budgets.append(seconds)
        return [], {"passes": 0, "nodes": 0, "seconds": 0.0, "found": False}

    monkeypatch.setattr(engine, "pruned_passes", recorded)
    tuning = replace(KERNEL_WALK, pruned_max_seconds=3600.0,
                     node_seconds=1e6 if hopeless else 1e-12,  # every tree outlasts the limit, or none does
                     pruned_share=1e9 if hopeless else 1e12,  # the share of the prediction never binds
                     trials_take_the_limit_beyond=1.0 if hopeless == "far beyond" else 1e300)  # far beyond the limit, or never
    system = star_system(np.random.default_rng(2), 2, 40, 1000)
    search(system, time_limit=30.0, tuning=tuning)  # seconds to spare before the passes (a tree of n = 40)
    assert len(budgets) == 1
    share = {False: tuning.pruned_share_of_limit, True: tuning.pruned_share_of_limit_when_hopeless, "far beyond": 1.0}[hopeless]
    assert 0.5 * share * 30.0 < budgets[0] <= share * 30.0


@pytest.mark.parametrize("share", [0.0, 1e9])
def test_candidates_reduced_while_the_kernels_load_are_those_the_estimate_would_pay_for(monkeypatch, share):
    from indexset.search.lattice import choose
    from indexset.search.lattice import job as job_module

    # share 0: the estimate pays for none, so only the loading pays (3 bases); 1e9: it pays for the most, loading or not.
    system = star_system(np.random.default_rng(4), 2, 50, 1000)
    reduction = reduce_system(system.M, system.t)
    lll = lattice.build_lattice(reduction)
    reduced = lattice.build_lattice(reduction, DEFAULT.bkz_block)
    assert DEFAULT.candidates_from <= reduced.D
    tuning = replace(DEFAULT, candidate_share=share, kernel_load_seconds=3.5 * DEFAULT.basis_seconds * reduced.D**2)
    job = lattice.Job(system, reduction, seed=7, tuning=tuning, bkz_block=DEFAULT.bkz_block, embedding="cvp")
    # Spies: the order of the builds and the estimate shows in no result.
    calls = []
    build, estimate = job_module.build_lattice, choose.estimate_nodes
    monkeypatch.setattr(job_module, "build_lattice", lambda *args, **kwargs: calls.append("build") or build(*args, **kwargs))
    monkeypatch.setattr(choose, "estimate_nodes", lambda *args, **kwargs: calls.append("estimate") or estimate(*args, **kwargs))
    chosen = {}
    for loading in (False, True):
        calls.clear()
        choice = lattice.choose_lattice(job, lattice.default_choice(job, lll, reduced), loading)
        best, facts, bases = choice.lattice, choice.facts, choice.bases
        paid = tuning.max_candidates - 1 if share else 3 if loading else 0
        assert facts["candidates"] == 1 + paid and len(bases) == 1 + paid and facts["estimated_nodes"] > 0
        # The bases the loading pays for come before the first estimate, the others after it; a later
        # estimate follows a build (of a candidate that beat the best so far).
        before = 3 if loading else 0
        assert calls[:before + 1] == ["build"] * before + ["estimate"] and calls.count("build") == paid
        assert all(calls[k - 1] == "build" for k in range(before + 1, len(calls)) if calls[k] == "estimate")
        # The estimate in the facts is the chosen basis's own.
        assert facts["estimated_nodes"] == int(estimate(best, tuning.estimate_probes, job.seed))
        assert bases[0] is best and any(basis is reduced for basis in bases)
        assert lattice.profile_score(best) == max(lattice.profile_score(basis) for basis in bases)
        chosen[loading] = [basis.basis for basis in bases]
    if share:  # the k-th candidate is the same whether it was reduced before the estimate or after it
        assert len(chosen[False]) == len(chosen[True]) and all(np.array_equal(a, b) for a, b in zip(chosen[False], chosen[True], strict=True))


@pytest.mark.parametrize("paid_by_default", [2, 5])
def test_candidates_stop_once_the_chosen_basis_pays_for_no_more(paid_by_default):
    from indexset.search.lattice.walk import estimate_nodes

    system = star_system(np.random.default_rng(4), 2, 50, 1000)
    reduction = reduce_system(system.M, system.t)
    lll = lattice.build_lattice(reduction)
    reduced = lattice.build_lattice(reduction, DEFAULT.bkz_block)
    cost = DEFAULT.basis_seconds * reduced.D**2
    default_nodes = estimate_nodes(reduced, DEFAULT.estimate_probes, 3)
    # A share at which the default basis's estimate pays for ``paid_by_default`` candidates (plus a half, against rounding).
    share = (paid_by_default + 0.5) * cost / (default_nodes * DEFAULT.node_seconds)
    tuning = replace(DEFAULT, candidate_share=share)
    job = lattice.Job(system, reduction, seed=3, tuning=tuning, bkz_block=DEFAULT.bkz_block, embedding="cvp")
    choice = lattice.choose_lattice(job, lattice.default_choice(job, lll, reduced))
    chosen_nodes = estimate_nodes(choice.lattice, tuning.estimate_probes, job.seed)
    assert choice.facts["estimated_nodes"] == int(chosen_nodes)
    tried = choice.facts.get("candidates", 1) - 1
    pays = min(tuning.max_candidates - 1, int(share * int(chosen_nodes) * tuning.node_seconds / cost))
    assert pays <= tried <= tuning.max_candidates - 1
    if choice.lattice is reduced:  # no candidate beat the default: exactly what its estimate pays for
        assert tried == min(tuning.max_candidates - 1, paid_by_default)


def test_the_kernels_load_on_the_lll_basis_when_the_bkz_one_has_a_numerics_problem(monkeypatch):
    from reference import mitm_solutions

    from indexset.search.lattice import engine
    from indexset.search.lattice.small import SmallTrees
    from indexset.search.system import build_system
    from indexset.workflows import construct

    instance = construct.planted(d=2, n=40, range=1000, seed=1)
    system = build_system(instance)
    reduction = reduce_system(system.M, system.t)
    lll = lattice.build_lattice(reduction)
    reduced = lattice.build_lattice(reduction, DEFAULT.bkz_block)
    reduced.problem = "a numerics problem (made up by the test)"
    # No small-tree walk answers and these are the bases it built; a spy records the basis the kernels load on (shown in no result).
    monkeypatch.setattr(engine, "small_tree_answer", lambda job: SmallTrees(None, lll, reduced))
    handed = []
    loading = engine.kernels_loading
    monkeypatch.setattr(engine, "kernels_loading", lambda basis: handed.append(basis) or loading(basis))
    result = search(system, reduction, tuning=NUMPY_FIRST)
    assert handed == [lll]  # a basis the load's one-probe estimate can walk
    assert result.status == "feasible" and system.is_solution(result.index_set) and result.index_set in mitm_solutions(instance)


def test_a_bkz_basis_with_a_numerics_problem_is_not_the_default_basis():
    system = star_system(np.random.default_rng(4), 2, 50, 1000)
    reduction = reduce_system(system.M, system.t)
    lll = lattice.build_lattice(reduction)
    reduced = lattice.build_lattice(reduction, DEFAULT.bkz_block)
    reduced.problem = "a numerics problem (made up by the test)"
    tuning = replace(DEFAULT, node_seconds=1e-12)  # every LLL tree is shorter than a BKZ pass
    job = lattice.Job(system, reduction, seed=0, tuning=tuning, bkz_block=DEFAULT.bkz_block, embedding="cvp")
    choice = lattice.choose_lattice(job, lattice.default_choice(job, lll, reduced), True)
    best, facts, bases = choice.lattice, choice.facts, choice.bases
    assert best is lll and bases == [lll] and facts["bkz"].startswith("skipped (the LLL tree")


def test_leaves_decode_the_same_in_int64_and_in_python_integers():
    """decode's int64 path (exact lattices, x within the dual bounds) against its Python-integer path, on every leaf of a walk."""
    import copy

    from indexset.search.lattice import build_lattice, decode
    from indexset.search.lattice.breadth import walk_breadth_first

    rng = np.random.default_rng(11)
    system, support = planted_system(rng, 3, 30, 0, 30, 12)
    lattice = build_lattice(reduce_system(system.M, system.t))
    assert lattice.exact
    leaves, _ = walk_breadth_first(lattice.tree(), lattice.start(), 10**7)
    python_ints = copy.copy(lattice)
    python_ints.exact = False
    decoded = [decode(lattice, x, system) for x in leaves]
    assert decoded == [decode(python_ints, x, system) for x in leaves]
    assert support in decoded and len(leaves) > 1
