"""One definition of the tree: every walk of one tree visits the same nodes and leaves, on 0/1 and bounded boxes.

The walks are the kernel's depth-first walk (whole, and split into the
subtrees below one level), the NumPy breadth-first walk and Knuth's
estimate (its mean over many descents is the tree's size). The trees are
the complete one, a pruned one and the same pruned one relaxed (MATH.md
§6.1). Their solutions are held to brute force, independently of the
engine: all of them on the complete tree, some of them on a pruned one.
"""

from __future__ import annotations

import numpy as np
import pytest
from indexset.native import enumerate as kernel

from indexset.search import lattice
from indexset.search.engines.brute import solve_system_brute
from indexset.search.lattice import breadth
from indexset.search.lattice.pruned import pruning_profile
from indexset.search.reduce import reduce_system
from indexset.search.system import plain_system


def _random_lattices(seed: int, count: int):
    """Lattices of random small planted systems, 0/1 or bounded (LLL or BKZ, the per-coordinate bounds on or off), with their systems."""
    rng = np.random.default_rng(seed)
    made = 0
    while made < count:
        m, n = int(rng.integers(1, 4)), int(rng.integers(6, 15))
        A = rng.integers(-3 if rng.random() < 0.3 else 0, 8, size=(m, n))
        upper = rng.integers(1, 4, size=n) if made % 3 == 2 else np.ones(n, dtype=np.int64)
        n = n if made % 3 != 2 else min(n, 8)  # bounded boxes grow fast: keep the brute force small
        A, upper = A[:, :n], upper[:n]
        system = plain_system(A, A @ np.array([rng.integers(0, u + 1) for u in upper]), upper)
        reduction = reduce_system(system.M, system.t, upper=system.upper)
        if reduction.kernel is None or reduction.kernel.shape[1] < 2:
            continue
        built = lattice.build_lattice(reduction, int(rng.choice([0, 20])), upper=system.upper)
        if not built.searchable:
            continue
        made += 1
        coord = np.zeros((3, built.D), dtype=np.int64)
        coord[0] = 2 * int(rng.integers(0, 2))  # on (settled) or off, the same for every walk
        yield system, built, coord


def _trees(built, coord):
    """``(kind, tree)``: the complete tree, a tight linear profile's, and that profile's relaxed (each with its own counters)."""
    profile = pruning_profile(built, 0.1)
    yield "complete", built.tree(coord=coord.copy())
    yield "pruned", built.tree(profile, coord.copy())
    yield "relaxed", built.tree(profile, coord.copy(), relaxed=True)


def _add(found: set, solution) -> None:
    """Add a decoded solution (None: the leaf is no solution)."""
    if solution is not None:
        found.add(tuple(solution))


def _kernel_walk(system, built, tree, floor=None, split=-1):
    """The kernel's walk: (nodes, leaves, solutions found, prefixes at ``split``)."""
    walk, found, prefixes = built.new_walk(tree), set(), []
    while True:
        status = kernel.enumerate_box(tree, walk, built.D, split, 1 << 20)
        if status == kernel.FOUND:
            _add(found, lattice.decode(built, walk.x, system))
        elif status == kernel.PREFIX:
            prefixes.append(walk.x[split:].copy())
        elif status == kernel.DONE:
            return int(walk.istate[kernel.NODES]), int(walk.istate[kernel.LEAVES]), found, prefixes


def _subtree(system, built, tree, prefix, level):
    walk = built.new_walk(tree)
    walk.x[level:] = prefix
    kernel.start_below(level, tree, walk)
    found = set()
    while True:
        status = kernel.enumerate_box(tree, walk, level, -1, 1 << 20)
        if status == kernel.FOUND:
            _add(found, lattice.decode(built, walk.x, system))
        elif status == kernel.DONE:
            return int(walk.istate[kernel.NODES]), int(walk.istate[kernel.LEAVES]), found


@pytest.mark.parametrize("seed", range(4))
def test_every_walk_of_one_tree_visits_the_same_nodes_and_leaves(seed):
    for system, built, coord in _random_lattices(seed, 12):
        expected = {tuple(s) for s in solve_system_brute(system.M, system.t, upper=system.upper)}
        walked = {}
        for kind, tree in _trees(built, coord):
            nodes, leaves, found, _ = _kernel_walk(system, built, tree)
            walked[kind] = nodes, found
            assert found == expected if kind == "complete" else found <= expected
            numpy_leaves, numpy_nodes = breadth.walk_breadth_first(tree, built.start(), 10**7)
            assert numpy_nodes == nodes and len(numpy_leaves) == leaves
            assert {tuple(s) for s in (lattice.decode(built, x, system) for x in numpy_leaves) if s is not None} == found
            if built.D >= 3:  # split below a middle level: the prefixes' walk and the subtrees partition the tree
                level = built.D // 2
                top_nodes, _, _, prefixes = _kernel_walk(system, built, tree._replace(coord=coord.copy()), split=level)
                parts = [_subtree(system, built, tree._replace(coord=coord.copy()), prefix, level) for prefix in prefixes]
                assert top_nodes + sum(p[0] for p in parts) == nodes
                assert sum(p[1] for p in parts) == leaves and set().union(*(p[2] for p in parts)) == found
        # Relaxing adds nodes to the pruned tree and removes none.
        assert walked["relaxed"][0] >= walked["pruned"][0] and walked["relaxed"][1] >= walked["pruned"][1]


def test_relaxing_the_complete_tree_adds_no_solution():
    for system, built, coord in _random_lattices(7, 12):
        expected = {tuple(s) for s in solve_system_brute(system.M, system.t, upper=system.upper)}
        assert _kernel_walk(system, built, built.tree(coord=coord.copy(), relaxed=True))[2] == expected


def test_a_relaxed_pass_finds_a_solution_its_profile_cuts():
    found_more = 0
    for system, built, coord in _random_lattices(11, 40):
        profile = pruning_profile(built, 0.0)
        plain = _kernel_walk(system, built, built.tree(profile, coord.copy()))[2]
        relaxed = _kernel_walk(system, built, built.tree(profile, coord.copy(), relaxed=True))[2]
        found_more += relaxed > plain
    assert found_more  # the relaxation reaches solutions the tight profile alone cuts


@pytest.mark.parametrize("seed", range(2))
def test_both_estimates_average_to_the_size_of_the_tree(seed):
    sizes = []
    for system, built, coord in _random_lattices(100 + seed, 15):
        _kind, tree = list(_trees(built, coord))[len(sizes) % 3]
        nodes = _kernel_walk(system, built, tree)[0]
        if nodes < 40:
            continue
        compiled = kernel.estimate_tree(tree, built.new_walk(tree), 40_000, 7)
        vectorised = breadth.estimate_nodes(tree, built.start(), 40_000, 7)
        sizes.append(nodes)
        # Unbiased estimates of the same tree: 40 000 descents of these trees of 40–3 000 nodes stay within ±15 %.
        assert abs(compiled / nodes - 1) < 0.15 and abs(vectorised / nodes - 1) < 0.15, (nodes, compiled, vectorised)
    assert sizes
