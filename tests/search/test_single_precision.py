"""W in float32 (``single_precision``): the walks find what float64 walks and the references find, and W stays within its bound."""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pytest
from indexset.native import enumerate as kernel
from reference import mitm_solutions
from systems import random_system, steiner_triple_system
from tunings import KERNEL_WALK
from walks import kernel_walk

from indexset.search import lattice
from indexset.search.lattice import search
from indexset.search.lattice.basis import single_precision
from indexset.search.reduce import reduce_system
from indexset.search.system import build_system
from indexset.workflows import construct


def _planted(seed):
    instance = construct.planted(d=2, n=40, range=1000, seed=seed)
    return instance, build_system(instance)


@pytest.mark.parametrize("v", [7, 9])
def test_single_and_double_walks_find_every_design(v):
    system = steiner_triple_system(v)
    built = lattice.build_lattice(reduce_system(system.M, system.t), 20)
    coord = np.zeros((3, built.D), dtype=np.int64)  # per-coordinate bounds off, as the engine leaves them on these trees
    single, double = built.tree(coord=coord, single=True), built.tree(coord=coord.copy())
    assert single.bstar.dtype == np.float32 and double.bstar.dtype == np.float64
    found, _ = kernel_walk(system, built, single)
    assert found == kernel_walk(system, built, double)[0]
    assert len(found) == {7: 30, 9: 840}[v] and all(system.is_solution(list(support)) for support in found)


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_counts_in_single_and_double_precision_match_the_reference(seed):
    instance, system = _planted(seed)
    expected = sorted(mitm_solutions(instance))
    for tuning in (KERNEL_WALK, replace(KERNEL_WALK, single_precision=False)):
        result = search(system, find_all=True, workers=2, tuning=tuning)
        assert result.status == ("feasible" if expected else "infeasible") and result.complete
        assert sorted(result.solutions) == expected


def test_the_coordinate_bounds_in_single_precision_cut_no_solution():
    instance, system = _planted(4)
    tuning = replace(KERNEL_WALK, coord_min_gain=0.0)  # the kernel walks, its per-coordinate bounds on at every level
    result = search(system, find_all=True, tuning=tuning)
    assert result.complete and "walk" not in result.stages  # the kernel's walk, not a NumPy one
    assert sorted(result.solutions) == sorted(mitm_solutions(instance))


@pytest.mark.parametrize("which", ["steiner 9", "market 1", "market 2"])
def test_float32_w_stays_within_its_bound_along_the_walk(which):
    """At every stop of a walk, the float32 W of each fixed level is within the absolute margin of W recomputed in float64."""
    kind, number = which.split()
    if kind == "steiner":
        system = steiner_triple_system(int(number))
    else:  # a market-split-like system (QOBLIB's form: 4 rows, coefficients 0–99, a planted solution)
        system = random_system(np.random.default_rng(int(number)), 4, 40, 0, 99, planted=True)
    built = lattice.build_lattice(reduce_system(system.M, system.t), 20)
    data = built.data
    margins = single_precision(built, data.bound2)
    assert margins is not None
    tree = built.tree(coord=np.zeros((3, built.D), dtype=np.int64), single=True)
    walk = built.new_walk(tree)
    worst, stops = 0.0, 0
    while kernel.enumerate_box(tree, walk, built.D, -1, 7) != kernel.DONE:
        stops += 1
        level = int(walk.istate[kernel.LEVEL])
        exact = data.top.astype(np.float64).copy()
        for j in range(built.D - 1, level, -1):  # the path's fixed levels, from the top
            exact += (walk.x[j] - walk.ctr[j]) * data.bstar[j]
            live = data.det_start[j + 1]  # the columns W_j was written in (the others add their exact h_r·|w_r| each)
            worst = max(worst, float(np.abs(walk.W[j, :live].astype(np.float64) - exact[:live]).sum()))
    assert stops > 10 and worst <= margins[1], (stops, worst, margins)


def test_the_float32_l1_sum_is_within_its_relative_margin():
    rng = np.random.default_rng(0)
    N, padded = 1000, 1008  # rows padded to the kernel's ROW_PADDING
    W = np.zeros((2, padded), dtype=np.float32)
    bstar = np.zeros((1, padded), dtype=np.float32)
    W[:, :N] = rng.normal(size=(2, N))
    bstar[0, :N] = rng.normal(size=N)
    total = float(kernel.advance_l1(W, bstar, 0, 0.37, N, np.ones(padded, dtype=np.float32)))
    exact = math.fsum(abs(float(value)) for value in W[0, :N])  # the float32 entries the kernel stored, summed exactly
    relative = (N - 1) * 2.0**-24 / (1 - (N - 1) * 2.0**-24)
    assert abs(total - exact) <= relative * exact
    step = np.float32(0.37)
    formed = W[1, :N].astype(np.float64) + np.float64(step) * bstar[0, :N].astype(np.float64)  # exact: float32 products fit a double
    assert np.all(np.abs(W[0, :N] - formed) <= 2.0**-23 * np.abs(formed))  # each entry within the roundings of one multiply–add
