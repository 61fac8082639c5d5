"""Exact equality of ReLU / leaky-ReLU stacks by region enumeration (indexset.exact.pwl, MATH.md §9.1).

References, none of them the module itself: the region count of a line or
plane arrangement in general position (Σ_{k≤d} C(n, k)), activation
patterns read off by a plain numpy forward pass at random points, the flip
identity and unit symmetries (pairs equal by construction), the exact
forward pass at the returned witness, and a float LP for the strict
systems.
"""

from __future__ import annotations

import itertools
import math
import threading
from fractions import Fraction

import numpy as np
import pytest
from reference import determinant  # Fractions only, independent of flint
from scipy.optimize import linprog

import indexset
from indexset.budget import INTERRUPTED, TIME_LIMIT
from indexset.errors import InputError
from indexset.exact import pwl
from indexset.exact.witness import result_witness, witness, witness_stack
from indexset.model.forward import forward_exact, forward_float
from indexset.model.instance import Instance
from indexset.model.stack import Stack
from indexset.solver import solve
from indexset.workflows import construct


def block(up, down, b_up=None, b_down=None, free=False, activation="relu", skip=None, denominator=1):
    arrays = {key: None if value is None else np.asarray(value, dtype=np.int64)
              for key, value in (("b_up", b_up), ("b_down", b_down), ("skip", skip))}
    return Instance(np.asarray(up, dtype=np.int64), np.asarray(down, dtype=np.int64), residual_free=free,
                    activation=activation, denominator=denominator, **arrays)


def random_block(rng, d, n, free=False, bound=3, activation="relu"):
    return block(rng.integers(-bound, bound + 1, (n, d)), rng.integers(-bound, bound + 1, (d, n)),
                 rng.integers(-bound, bound + 1, n), rng.integers(-bound, bound + 1, d), free=free, activation=activation)


def general_position(rows, offsets):
    """No two hyperplanes parallel, no d + 1 through one point (exact integer tests)."""
    d = len(rows[0])
    for subset in itertools.combinations(range(len(rows)), 2):
        if np.linalg.matrix_rank(np.array([rows[i] for i in subset], dtype=float)) < 2:
            return False
    for subset in itertools.combinations(range(len(rows)), d + 1):
        augmented = [[Fraction(v) for v in rows[i]] + [Fraction(offsets[i])] for i in subset]
        if determinant(augmented) == 0:
            return False
    return True


def numpy_patterns(model, points):
    """Activation patterns of every unit at float points, by a plain forward pass (ties have probability 0)."""
    x = np.asarray(points, dtype=float)
    alpha = float(pwl.slope(model))
    signs = []
    for b in getattr(model, "blocks", [model]):
        h = x @ b.float_array("W_up").T + b.float_array("b_up")
        signs.append(np.where(h >= 0, 1, -1))
        out = np.maximum(h, alpha * h) @ b.float_array("W_down").T + b.float_array("b_down")
        x = out if b.residual_free else out + x @ b.float_array("skip").T
    return [tuple(tuple(int(s) for s in layer[k]) for layer in signs) for k in range(len(points))]


# ================================================================ regions
@pytest.mark.parametrize("d, n, seed", [(2, 6, 0), (2, 9, 1), (3, 6, 2)])
def test_region_count_of_an_arrangement_in_general_position(d, n, seed):
    rng = np.random.default_rng(seed)
    while True:
        rows, offsets = rng.integers(-7, 8, (n, d)), rng.integers(-7, 8, n)
        if general_position(rows.tolist(), offsets.tolist()):
            break
    one_layer = block(rows, rng.integers(-3, 4, (d, n)), offsets)
    enumeration = pwl.enumerate_regions(one_layer, seed=seed)
    assert enumeration.complete
    assert enumeration.count == sum(math.comb(n, k) for k in range(d + 1))
    assert len({r.pattern for r in enumeration.regions}) == enumeration.count


@pytest.mark.parametrize("d, activation", [(1, "relu"), (1, "leaky_relu:1/3"), (2, "relu"), (2, "leaky_relu:1/3"), (2, "leaky_relu:3"), (3, "relu")])
def test_every_sampled_pattern_of_a_stack_pair_is_enumerated(d, activation):
    rng = np.random.default_rng(5)
    f = Stack([random_block(rng, d, 4 if d < 3 else 3, activation=activation) for _ in range(2)])
    g = Stack([random_block(rng, d, 3 if d < 3 else 2, free=True, activation=activation) for _ in range(2)])
    enumeration = pwl.enumerate_regions(f, g, seed=1)
    assert enumeration.complete
    found = {r.pattern for r in enumeration.regions}
    points = np.concatenate([rng.uniform(-20, 20, (4000, d)), rng.normal(size=(1000, d)) * 1e3])
    sampled = {tuple(pair) for pair in zip(numpy_patterns(f, points), numpy_patterns(g, points))}
    assert sampled <= found
    # The affine maps on the regions are the float forward passes there (σ(z) = max(z, αz), also for α > 1).
    probe = points[:200]
    values = {tuple(pair): k for k, pair in enumerate(zip(numpy_patterns(f, probe), numpy_patterns(g, probe)))}
    for region in enumeration.regions:
        if region.pattern in values:
            x = probe[values[region.pattern]]
            for model, index in ((f, 0), (g, 1)):
                affine = np.array(region.jacobian(index), dtype=float) @ x + np.array(region.offset(index), dtype=float)
                assert np.allclose(affine, forward_float(model, x[None])[0])
    for region in enumeration.regions[:25]:
        # The stored interior point is strictly inside, and the stored maps are the forward passes there.
        assert region.tight(region.point) == []
        for model, index in ((f, 0), (g, 1)):
            value = forward_exact(model, [list(region.point)])[0]
            affine = [sum(a * x for a, x in zip(row, region.point)) + c for row, c in zip(region.jacobian(index), region.offset(index))]
            assert value == affine


def test_enumeration_does_not_depend_on_the_seed():
    rng = np.random.default_rng(8)
    f = Stack([random_block(rng, 2, 5) for _ in range(2)])
    counts = {pwl.enumerate_regions(f, seed=seed).count for seed in (0, 3, 11)}
    assert len(counts) == 1


# ================================================================ equal pairs
def test_flip_witness_of_a_block_is_equal():
    instance = construct.planted(d=2, n=8, seed=2, biases=True)
    comparison = pwl.compare(instance, witness(instance, instance.planted), probes=0)
    assert comparison.equal is True and comparison.complete and comparison.regions > 1


def test_blockwise_witness_stack_is_equal():
    stack = construct.stack(layers=2, d=2, n=6, seed=4)
    result = solve(stack)
    assert result.status == "absorbable"
    comparison = pwl.compare(stack, witness_stack(stack, result.certificate), probes=0)
    assert comparison.equal is True and comparison.complete


def test_leaky_flip_witness_in_three_dimensions_is_equal():
    instance = construct.planted(d=3, n=6, seed=1, activation="leaky_relu:1/2")
    result = solve(instance)
    comparison = pwl.compare(instance, result_witness(instance, result), probes=0)
    assert comparison.equal is True


def test_permuted_and_rescaled_units_are_equal():
    rng = np.random.default_rng(3)
    f = Stack([random_block(rng, 2, 5) for _ in range(2)])
    blocks = []
    for b in f.blocks:
        order = rng.permutation(5)
        scale = rng.integers(1, 4, 5)  # σ(λz)·W/λ = σ(z)·W for λ > 0; everything over the denominator 12
        up = np.asarray(b.W_up)[order] * scale[:, None] * 12
        b_up = np.asarray(b.b_up)[order] * scale * 12
        down = np.asarray(b.W_down)[:, order] * (12 // scale)[None, :]
        blocks.append(Instance(up, down, b_up=b_up, b_down=np.asarray(b.b_down) * 12, skip=np.eye(2, dtype=np.int64) * 12, denominator=12))
    g = Stack(blocks)
    assert pwl.compare(f, g, probes=0).equal is True
    # One unit's down column changed by 1/12: different, and the witness says where.
    changed = [Instance(b.W_up, b.W_down.copy(), b_up=b.b_up, b_down=b.b_down, skip=b.skip, denominator=12) for b in blocks]
    changed[1].W_down[0, 2] += 1
    comparison = pwl.compare(f, Stack(changed), probes=0)
    assert comparison.equal is False
    x = comparison.witness
    assert forward_exact(f, [x])[0] != forward_exact(Stack(changed), [x])[0]
    assert comparison.f_value == forward_exact(f, [x])[0]


def test_relu_identity_needs_two_units_per_coordinate():
    """σ(x) − σ(−x) = x: a residual-free width-4 block is the identity of R²; dropping a unit is not."""
    identity = block(np.zeros((1, 2)), np.zeros((2, 1)))
    units = block([[1, 0], [-1, 0], [0, 1], [0, -1]], [[1, -1, 0, 0], [0, 0, 1, -1]], free=True)
    assert pwl.compare(identity, units, probes=0).equal is True
    three = block([[1, 0], [-1, 0], [0, 1]], [[1, -1, 0], [0, 0, 1]], free=True)
    comparison = pwl.compare(identity, three, probes=0)
    assert comparison.equal is False and comparison.witness[1] < 0


# ================================================================ different pairs
@pytest.mark.parametrize("activation", ["relu", "leaky_relu:1/2"])
def test_a_difference_on_a_thin_far_slab_is_found(activation):
    """g = f plus a hat on the slab 1000 < x₁ + 2x₂ < 1000 + 2/1000: the regions find it, probes do not."""
    rng = np.random.default_rng(4)
    f = Stack([random_block(rng, 2, 3, activation=activation) for _ in range(2)])
    # Over the denominator 1000: σ(z − 1000) − 2σ(z − 1000.001) + σ(z − 1000.002), z = x₁ + 2x₂.
    hat_up = np.array([[1000, 2000]] * 3)
    hat_bias = -np.array([1000000, 1000001, 1000002])
    hat_down = np.array([[1000, -2000, 1000], [0, 0, 0]])

    def padded(extra_first):
        out = []
        for index, b in enumerate(f.blocks):
            up = np.concatenate([np.asarray(b.W_up) * 1000, hat_up if extra_first and index == 0 else np.zeros((3, 2), np.int64)])
            b_up = np.concatenate([np.asarray(b.b_up) * 1000, hat_bias if extra_first and index == 0 else np.zeros(3, np.int64)])
            down = np.concatenate([np.asarray(b.W_down) * 1000, hat_down if extra_first and index == 0 else np.zeros((2, 3), np.int64)], axis=1)
            out.append(Instance(up, down, b_up=b_up, b_down=np.asarray(b.b_down) * 1000, skip=np.eye(2, dtype=np.int64) * 1000,
                                denominator=1000, activation=activation))
        return Stack(out)

    same, bumped = padded(False), padded(True)
    assert pwl.compare(f, same, probes=0).equal is True
    comparison = pwl.compare(same, bumped, probes=64, seed=2)
    assert comparison.equal is False and comparison.regions > 0  # the 64 probe points missed the slab
    x = comparison.witness
    assert 1000 < x[0] + 2 * x[1] < 1000 + Fraction(2, 1000)
    assert forward_exact(same, [x])[0] != forward_exact(bumped, [x])[0]


def test_against_dense_random_evaluation():
    """Where compare says equal, a dense float evaluation sees no difference; where it says different, the exact forward passes differ at its witness."""
    rng = np.random.default_rng(12)
    points = np.concatenate([rng.uniform(-30, 30, (20000, 2)), rng.normal(size=(2000, 2)) * 300])
    verdicts = []
    for trial in range(6):
        f = Stack([random_block(rng, 2, 3) for _ in range(2)])
        blocks = [Instance(b.W_up, b.W_down.copy(), b_up=b.b_up, b_down=b.b_down) for b in f.blocks]
        if trial % 2 == 0:
            blocks[trial % 2].W_down[0, 0] += 1
        g = Stack(blocks)
        comparison = pwl.compare(f, g, probes=0, seed=trial)
        gap = np.abs(forward_float(f, points) - forward_float(g, points)).max()
        if comparison.equal:
            assert gap < 1e-9
        else:
            assert forward_exact(f, [comparison.witness]) != forward_exact(g, [comparison.witness])
        verdicts.append(comparison.equal)
    assert True in verdicts and False in verdicts


def test_residual_and_residual_free_blocks_compare_across_depths():
    """A residual block equals the two-block stack (block, identity block) and not (block, block)."""
    rng = np.random.default_rng(2)
    f = random_block(rng, 2, 4)
    identity = block(np.zeros((4, 2)), np.zeros((2, 4)))
    assert pwl.compare(f, Stack([f, identity]), probes=0).equal is True
    assert pwl.compare(f, Stack([f, f])).equal is False


# ================================================================ limits and errors
def test_stop_and_limits_leave_it_undecided():
    rng = np.random.default_rng(9)
    f = Stack([random_block(rng, 2, 5) for _ in range(2)])
    stop = threading.Event()
    stop.set()
    comparison = pwl.compare(f, f, probes=0, stop=stop)
    assert comparison.equal is None and not comparison.complete
    capped = pwl.compare(f, f, probes=0, max_regions=2)
    assert capped.equal is None and capped.regions == 2
    enumeration = pwl.enumerate_regions(f, max_regions=3)
    assert not enumeration.complete and enumeration.count == 3
    assert pwl.enumerate_regions(f, stop=stop).stopped == INTERRUPTED
    out_of_time = pwl.enumerate_regions(f, time_limit=0)
    assert out_of_time.stopped == TIME_LIMIT and out_of_time.count == 0 and not out_of_time.complete
    assert pwl.compare(f, f, probes=0, time_limit=0).equal is None


def test_bad_inputs_name_the_parameter():
    gelu = construct.planted(d=2, n=6, seed=1, activation="gelu")
    relu = construct.planted(d=2, n=6, seed=1)
    with pytest.raises(InputError, match=r"^f:.*not piecewise linear"):
        pwl.compare(gelu, relu)
    with pytest.raises(InputError, match=r"^g:.*R\^3"):
        pwl.compare(relu, construct.planted(d=3, n=6, seed=1))
    with pytest.raises(InputError, match=r"^probes:"):
        pwl.compare(relu, relu, probes=-1)
    with pytest.raises(InputError, match=r"^seed:"):
        pwl.enumerate_regions(relu, seed=-2)


def test_public_name():
    assert indexset.pwl is pwl and "pwl" in indexset.__all__


# ================================================================ the strict systems
def test_strict_point_against_a_float_lp():
    rng = np.random.default_rng(0)
    decided = {True: 0, False: 0}
    for _ in range(150):
        k = int(rng.integers(1, 4))
        rows = [tuple(int(v) for v in rng.integers(-4, 5, k + 1)) for _ in range(int(rng.integers(2, 8)))]
        point = pwl.strict_point(rows, k)
        # max t subject to a·y + b ≥ t, |y| ≤ 1000, t ≤ 1
        A = np.array([[-a for a in row[:k]] + [1] for row in rows], dtype=float)
        b = np.array([row[k] for row in rows], dtype=float)
        lp = linprog(c=[0] * k + [-1], A_ub=A, b_ub=b, bounds=[(-1000, 1000)] * k + [(None, 1)], method="highs")
        if point is None:
            assert lp.status == 0 and -lp.fun < 1e-7
        else:
            assert all(sum(a * y for a, y in zip(row[:k], point)) + row[k] > 0 for row in rows)
        decided[point is not None] += 1
    assert decided[True] and decided[False]
