"""Limited-discrepancy walks: incomplete, nested in their limit, complete at an unbounded one, and only true solutions."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from indexset.native import enumerate as kernel
from systems import random_system, steiner_triple_system
from tunings import KERNEL_WALK
from walks import kernel_walk

from indexset.budget import Budget
from indexset.search import lattice
from indexset.search.engines.brute import solve_system_brute
from indexset.search.lattice import search
from indexset.search.reduce import reduce_system

UNBOUNDED = 10**9
"""A discrepancy limit no path of these small trees reaches."""


def systems_with_lattices(seed, count, planted_every=2):
    """Seeded random 2 × 14 systems whose lattice has a tree to walk, with their brute-force solutions."""
    rng = np.random.default_rng(seed)
    for trial in range(count):
        system = random_system(rng, 2, 14, -12, 12, planted=trial % planted_every == 0)
        built = lattice.build_lattice(reduce_system(system.M, system.t), 0)
        if not built.infeasible and built.D > 0:
            yield system, built, {tuple(support) for support in solve_system_brute(system.M, system.t)}


def walked(system, built, limit):
    """Every support a walk of the whole tree with ``limit`` finds, its node count, and its leaf count."""
    run = lattice.Run(system, built, True, Budget(), KERNEL_WALK, limit=limit)
    walk = run.new_walk()
    assert run.drive(walk, built.D, -1)
    return {tuple(support) for support in run.solutions}, run.nodes, int(walk.istate[kernel.LEAVES])


def test_discrepancy_walks_are_nested_and_the_unbounded_one_is_the_complete_walk():
    checked = 0
    for system, built, expected in systems_with_lattices(3, 40):
        complete, complete_nodes, _ = walked(system, built, None)
        assert complete == expected  # the walk itself, against brute force
        found, nodes, leaves = walked(system, built, 0)
        assert leaves <= 1  # limit 0: the first passing child at every level, one path
        for limit in (1, 2, 4, UNBOUNDED):
            more, more_nodes, _ = walked(system, built, limit)
            assert found <= more <= expected and nodes <= more_nodes
            found, nodes = more, more_nodes
        assert found == expected and nodes == complete_nodes  # no limit reached: the same tree, node for node
        checked += bool(expected)
    assert checked >= 10


@pytest.mark.parametrize("workers", [1, 2])
@pytest.mark.parametrize("slacks", [(), (0.1, 0.5)])
def test_discrepancy_passes_report_only_true_solutions_and_leave_no_thread(workers, slacks):
    tuning = replace(KERNEL_WALK, max_discrepancies=3)
    for system, built, expected in systems_with_lattices(5, 30):
        reduction = reduce_system(system.M, system.t)
        found, facts = lattice.discrepancy_passes(lattice.Job(system, reduction, tuning=tuning), built, 60.0, workers, slacks)
        assert {tuple(support) for support in found} <= expected
        assert facts["found"] == bool(found)
        if not found:  # nothing ends them early: every pass, of either kind, ran to its end
            assert facts["passes"] == 4 + len(slacks) and facts["discrepancies"] == 3
        assert not [thread for thread in threading.enumerate() if thread.name.startswith("indexset-pruned")]


def test_a_first_solution_from_the_discrepancy_passes_is_checked_and_they_can_be_switched_off():
    from indexset.search.system import build_system
    from indexset.workflows import construct

    system = build_system(construct.planted(d=2, n=40, range=30, seed=2))
    generous = replace(KERNEL_WALK, discrepancy_share=1e9, max_discrepancies=60)
    result = search(system, workers=2, tuning=generous)
    assert result.status == "feasible" and system.is_solution(result.index_set)
    assert result.stages["discrepancy"]["found"] and result.stages["nodes"] == result.stages["discrepancy"]["nodes"]
    off = search(system, workers=2, tuning=replace(generous, max_discrepancies=-1))
    assert off.status == "feasible" and system.is_solution(off.index_set) and "discrepancy" not in off.stages


def test_on_a_hopeless_tree_the_trials_start_at_once_and_the_discrepancy_passes_run_beside_them():
    """In a fresh process (the kernels load beside the stronger basis): the discrepancy passes run in a thread of their own."""
    code = f"""
import sys, json
sys.path.insert(0, {str(Path(__file__).parents[1])!r})
from dataclasses import replace
from tunings import KERNEL_WALK
from indexset.search.lattice import search
from indexset.search.system import build_system
from indexset.workflows import construct
system = build_system(construct.planted(d=2, n=50, range=30, seed=2))
result = search(system, workers=2, tuning=replace(KERNEL_WALK, node_seconds=10.0))  # every tree predicted to take years
import threading
facts = result.stages["discrepancy"]
print(json.dumps([result.status, system.is_solution(result.index_set), facts["beside"], facts["bkz"],
                  [t.name for t in threading.enumerate() if t.name.startswith("indexset")]]))
"""
    process = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert process.returncode == 0, process.stderr
    assert json.loads(process.stdout) == ["feasible", True, True, KERNEL_WALK.stronger_block, []]


def test_discrepancy_passes_beside_end_when_halted_and_leave_no_thread():
    from systems import star_system

    from indexset.search.lattice.pruned import discrepancy_beside

    # A (★) system of random weights, with no solution to end the passes: unhalted, they would walk every limit
    # up to max_discrepancies within their (long) time; halted at once, they end at their next chunk.
    system = star_system(np.random.default_rng(5), 2, 70, 1000)
    reduction = reduce_system(system.M, system.t)
    basis = lattice.build_lattice(reduction, 20)
    job = lattice.Job(system, reduction, seed=0, tuning=KERNEL_WALK, bkz_block=20, embedding="cvp")
    beside = discrepancy_beside(job, basis, 1e6)
    beside.halt()
    assert beside.ended.wait(120), "halted passes should end at their next chunk"
    found, facts = beside.join()
    assert not found and not facts["found"]
    assert facts.get("discrepancies", -1) < KERNEL_WALK.max_discrepancies  # not every pass ended
    assert not [thread for thread in threading.enumerate() if thread.name.startswith("indexset-")]


def test_the_per_coordinate_bounds_only_cut_and_once_settled_are_no_longer_counted():
    from indexset.search.lattice.tuning import DEFAULT

    for system, built, expected in systems_with_lattices(7, 20):
        walks = {}
        for name, mask in (("on", np.ones(built.D, dtype=np.int64)), ("off", np.zeros(built.D, dtype=np.int64))):
            run = lattice.Run(system, built, True, Budget(), DEFAULT, coord_mask=mask)
            assert run.drive(run.new_walk(), built.D, -1)
            walks[name] = ({tuple(support) for support in run.solutions}, run.nodes, run.tree.coord[1:].copy())
        assert walks["on"][0] == walks["off"][0] == expected
        assert walks["on"][1] <= walks["off"][1]  # they only remove values
        assert not walks["on"][2].any() and not walks["off"][2].any()  # a fixed mask is settled: nothing counted
    run = lattice.Run(system, built, True, Budget(), replace(DEFAULT, coord_sample=0, coord_min_gain=0.0))
    assert run.drive(run.new_walk(), built.D, -1)  # adapts at its first chunk: every counted level stays on, settled
    assert run.coord_levels_off() == int((run.tree.coord[1] < 100).sum())


def test_once_the_kernels_are_loaded_the_kernel_walks_small_trees_and_first_solutions_are_checked():
    from reference import mitm_solutions

    from indexset.search.system import build_system
    from indexset.workflows import construct

    lattice.estimate_nodes(lattice.build_lattice(reduce_system(*_tiny())), 1, 0)  # an earlier search of the process loaded them
    for family, seed in (("planted", 2), ("planted", 3), ("random", 2), ("random", 1)):
        instance = getattr(construct, family)(d=2, n=40, range=1000, seed=seed)
        system, expected = build_system(instance), mitm_solutions(instance)
        result = search(system, workers=2)
        assert "walk" not in result.stages  # no NumPy walk: the kernel's passes and walk answered
        if expected:
            assert result.status == "feasible" and system.is_solution(result.index_set) and result.index_set in expected
        else:
            assert result.status == "infeasible" and result.complete


def _tiny():
    """A 1 × 3 system with a one-dimensional lattice: the cheapest kernel call loads the kernels."""
    return np.array([[1, 1, 1]], dtype=object), np.array([1], dtype=object)


@pytest.mark.parametrize(("v", "designs", "smaller"), [(7, 30, False), (9, 840, True)])  # v!/|Aut|: 7!/168 Fano planes, 9!/432 AG(2, 3)
def test_the_determined_coordinates_cut_only_nodes_without_solutions(v, designs, smaller):
    system = steiner_triple_system(v)
    built = lattice.build_lattice(reduce_system(system.M, system.t), 20)
    tree = built.tree(coord=np.zeros((3, built.D), dtype=np.int64))  # per-coordinate bounds off, as the engine leaves them on these trees
    without = tree._replace(det_start=np.full(built.D + 1, built.N, dtype=np.int64))  # no coordinate determined
    found, nodes = kernel_walk(system, built, tree)
    found_without, nodes_without = kernel_walk(system, built, without)
    assert len(found) == designs and found == found_without and all(system.is_solution(list(support)) for support in found)
    assert nodes < nodes_without if smaller else nodes <= nodes_without  # on the 9-point tree the cut does cut
    # The float leaf test (the kernel's path when int64 could overflow) checks the columns the cut did not.
    assert kernel_walk(system, built, tree._replace(exact=False)) == (found, nodes)
    assert kernel_walk(system, built, without._replace(exact=False)) == (found, nodes_without)
