"""Necessary conditions for deep ReLU stacks (indexset.theory.deep, MATH.md §9.2–9.3, Theorem 9.2a).

The theorems say what no residual-free stack can do, so residual-free
stacks are their test bed: a residual-free stack of width n must never be
"proven" unequal to itself, its Jacobian rank must obey the bound of
Lemma 9.2, and its odd-part points must lie on its first block's lines
(Lemma 9.3). The covering search is checked against a brute force over
directions and classes.
"""

from __future__ import annotations

import itertools
import threading
from fractions import Fraction

import numpy as np
import pytest
from reference import rank, sampled_jacobian

from indexset.exact import pwl
from indexset.model.instance import Instance
from indexset.model.stack import Stack
from indexset.theory import deep
from indexset.theory.nondegeneracy import find_degeneracy


def free_block(rng, n, up=None, b_up=None, down=None, bound=3):
    return Instance(rng.integers(-bound, bound + 1, (n, 2)) if up is None else np.asarray(up),
                    rng.integers(-bound, bound + 1, (2, n)) if down is None else np.asarray(down),
                    b_up=rng.integers(-bound, bound + 1, n) if b_up is None else np.asarray(b_up),
                    b_down=rng.integers(-bound, bound + 1, 2), residual_free=True)


def antipodal_block(rng, bound=3):
    """Rows ±v₁, ±v₂ (v₁, v₂ independent), nonnegative biases (no slab where a pair is off): rank 2 everywhere."""
    while True:
        v1, v2 = rng.integers(-bound, bound + 1, 2), rng.integers(-bound, bound + 1, 2)
        a1, a2 = rng.integers(-bound, bound + 1, 2), rng.integers(-bound, bound + 1, 2)
        if v1[0] * v2[1] != v1[1] * v2[0] and a1[0] * a2[1] != a1[1] * a2[0]:
            break
    s, t = rng.integers(1, 3, 4), rng.integers(1, 3, 4)
    up = np.array([v1 * s[0], -v1 * s[1], v2 * s[2], -v2 * s[3]])
    down = np.stack([a1 * t[0], -a1 * t[1], a2 * t[2], -a2 * t[3]], axis=1)
    return free_block(rng, 4, up=up, b_up=rng.integers(0, bound + 1, 4), down=down)


def relu_identity_stack():
    """f₂ ∘ f₁ = id on R² with f₁ = x + diag(2, 3)·σ(x), f₂ = y − diag(2/3, 3/4)·σ(y): nondegenerate blocks, n = d = 2."""
    first = Instance(np.eye(2, dtype=np.int64), np.array([[2, 0], [0, 3]]))
    second = Instance(np.eye(2, dtype=np.int64) * 12, np.array([[-8, 0], [0, -9]]), denominator=12)
    return Stack([first, second])


# ================================================================ Theorem 9.2
def test_relu_identity_stack_is_not_absorbable_at_width_two():
    stack = relu_identity_stack()
    assert all(find_degeneracy(b).nondegenerate for b in stack.blocks)
    identity = Instance(np.zeros((2, 2), dtype=np.int64), np.zeros((2, 2), dtype=np.int64))
    assert pwl.compare(stack, identity, probes=0).equal is True
    verdict = deep.decide(stack)
    assert verdict.proven and verdict.theorem == deep.RANK_THEOREM and verdict.facts["min_rank"] == 2
    # The bound is sharp: at width 4 = 2d a residual-free stack is the identity.
    units = Instance(np.array([[1, 0], [-1, 0], [0, 1], [0, -1]]), np.array([[1, -1, 0, 0], [0, 0, 1, -1]]), residual_free=True)
    assert pwl.compare(stack, Stack([units, units]), probes=0).equal is True


@pytest.mark.parametrize("n", [2, 3, 4, 5])
def test_residual_free_stacks_lose_rank_as_lemma_9_2_says(n):
    rng = np.random.default_rng(n)
    for _ in range(4):
        g = Stack([free_block(rng, n), free_block(rng, n)])
        regions = pwl.enumerate_regions(g).regions
        assert deep.min_rank(regions) <= n // 2


# ================================================================ Theorem 9.2b
@pytest.mark.parametrize("n", [2, 3, 4])
def test_far_ranks_of_residual_free_stacks_obey_lemma_9_2b(n):
    rng = np.random.default_rng(60 + n)
    for _ in range(4):
        g = Stack([free_block(rng, n), free_block(rng, n)])
        far = deep.far_regions(pwl.enumerate_regions(g).regions, 2)
        assert far and deep.opposite_ranks(far, 2, more_than=n) is None
        assert not deep.decide(g).proven


def first_decided_by(theorem, n, rng, draws):
    """The first of ``draws`` seeded residual stacks on R² (two blocks of width n, entries in [−3, 3]) that ``theorem`` decides."""
    for _ in range(draws):
        blocks = [Instance(rng.integers(-3, 4, (n, 2)), rng.integers(-3, 4, (2, n)), b_up=rng.integers(-3, 4, n),
                           b_down=rng.integers(-3, 4, 2)) for _ in range(2)]
        verdict = deep.decide(Stack(blocks))
        if verdict.theorem == theorem:
            return blocks, verdict
    pytest.fail(f"no residual stack of width {n} in {draws} draws was decided by {theorem}")


def test_theorem_9_2b_on_a_residual_stack():
    blocks, verdict = first_decided_by(deep.FAR_THEOREM, 3, np.random.default_rng(11), 100)
    assert verdict.proven and sum(verdict.facts["far_ranks"]) > 3
    # The ranks far out, read off an independent forward pass at ±10⁶·w.
    w = [Fraction(v) for v in verdict.facts["far_direction"]]
    ranks = [rank(sampled_jacobian(blocks, [sign * 10**6 * v for v in w])) for sign in (1, -1)]
    assert ranks == verdict.facts["far_ranks"]


# ================================================================ Theorem 9.2a
def antiparallel_block(rng, d, bound=3):
    """Width 2, rows v and −λv, biases ≥ 0: no point where both units are off, so the block has rank ≥ 1 wherever its output weights do."""
    v = rng.integers(-bound, bound + 1, d)
    while not v.any():
        v = rng.integers(-bound, bound + 1, d)
    up = np.array([v, -v * rng.integers(1, 3)])
    return Instance(up, rng.integers(-bound, bound + 1, (d, 2)), b_up=rng.integers(0, bound + 1, 2),
                    b_down=rng.integers(-bound, bound + 1, d), residual_free=True)


@pytest.mark.parametrize("d", [2, 3])
def test_theorem_9_2a_never_rules_out_a_residual_free_stack_of_width_two(d):
    rng = np.random.default_rng(40 + d)
    ridge = 0
    for _ in range(8):
        g = Stack([antiparallel_block(rng, d), antiparallel_block(rng, d)])
        verdict = deep.decide(g)
        assert not verdict.proven, verdict.reason
        ridge += verdict.facts.get("min_rank") == 1
    assert ridge > 0  # the theorem's hypothesis ρ ≥ 1 held, and its test ran, on some of them


def test_theorem_9_2a_on_a_residual_stack():
    rng = np.random.default_rng(7)
    blocks, verdict = first_decided_by(deep.RIDGE_THEOREM, 2, rng, 200)
    assert verdict.proven and verdict.facts["min_rank"] == 1
    # Its hypothesis seen by an independent forward pass: Jacobian rows in two directions at sampled points.
    rows = []
    for _ in range(40):
        point = [Fraction(int(v), 64) for v in rng.integers(-640, 641, 2)]
        jacobian = sampled_jacobian(blocks, point)
        if jacobian is not None:
            assert any(any(row) for row in jacobian)  # rank ≥ 1 wherever sampled
            rows += [row for row in jacobian if any(row)]
    assert any(a[0] * b[1] != a[1] * b[0] for a, b in itertools.combinations(rows, 2))


# ================================================================ Lemma 9.3 and Theorem 9.3
def test_odd_points_of_a_two_block_stack_lie_on_its_first_lines():
    rng = np.random.default_rng(21)
    seen = 0
    for _ in range(6):
        g = Stack([free_block(rng, 4), free_block(rng, 4)])
        points, evidence = deep.odd_points(pwl.enumerate_regions(g).regions, first_block_only=False)
        lines = [(list(map(int, g.blocks[0].W_up[i])), int(g.blocks[0].b_up[i])) for i in range(4)]
        for p in points:
            assert any(u[0] * p[0] + u[1] * p[1] + b == 0 for u, b in lines if any(u))
        assert len(evidence) == len(points)
        seen += len(points)
    assert seen > 0


def test_theorem_9_3_never_rules_out_a_residual_free_stack_of_width_four():
    rng = np.random.default_rng(3)
    with_points = 0
    for _ in range(6):
        g = Stack([antipodal_block(rng), antipodal_block(rng)])
        verdict = deep.decide(g)
        assert verdict.complete and verdict.facts["min_rank"] == 2
        assert not verdict.proven, verdict.reason
        with_points += bool(verdict.facts["odd_points"])
    assert with_points > 0


def test_theorem_9_3_on_a_residual_stack():
    rng = np.random.default_rng(0)
    for _ in range(40):
        blocks = [Instance(rng.integers(-3, 4, (4, 2)), rng.integers(-3, 4, (2, 4)), b_up=rng.integers(-3, 4, 4),
                           b_down=rng.integers(-3, 4, 2)) for _ in range(2)]
        if not all(find_degeneracy(b).nondegenerate for b in blocks):
            continue
        verdict = deep.decide(Stack(blocks))
        if verdict.proven:
            break
    else:
        pytest.fail("no residual stack of width 4 in 40 draws was decided by Theorem 9.3")
    assert verdict.theorem == deep.ODD_THEOREM and verdict.facts["min_rank"] == 2
    points = [tuple(Fraction(v) for v in p) for p in verdict.facts["odd_points"]]
    lines = [(list(map(int, blocks[0].W_up[i])), int(blocks[0].b_up[i])) for i in range(4)]
    for p in points:  # Lemma 9.3 for the stack itself
        assert any(u[0] * p[0] + u[1] * p[1] + b == 0 for u, b in lines)
    # The shortest prefix that the search cannot cover, cross-checked by the brute force (a subset that cannot be covered is enough).
    prefix = next(k for k in range(1, len(points) + 1) if deep.parallel_cover(points[:k], 2) is None)
    assert prefix <= 10 and not brute_cover_exists(points[:prefix], 2)


# ================================================================ the covering search
def brute_cover_exists(points, families):
    """Reference: directions of point pairs plus two generic ones; ≤ 2 classes per family, tried exhaustively."""
    directions = set()
    for p, q in itertools.combinations(points, 2):
        dx, dy = q[0] - p[0], q[1] - p[1]
        scale = 1 / (dx if dx != 0 else dy)
        directions.add((dx * scale, dy * scale))
    directions |= {(Fraction(1), Fraction(1000003)), (Fraction(1), Fraction(-999983))}
    directions = sorted(directions)
    labels = {}
    for direction in directions:
        offsets = [direction[0] * p[1] - direction[1] * p[0] for p in points]
        index = {value: k for k, value in enumerate(sorted(set(offsets)))}
        labels[direction] = [index[value] for value in offsets]
    everything = set(range(len(points)))

    def covered_by_two_classes(direction, subset):
        return len({labels[direction][i] for i in subset}) <= 2

    if families == 1:
        return any(covered_by_two_classes(d, everything) for d in directions)
    for d1, d2 in itertools.permutations(directions, 2):
        if d1[0] * d2[1] == d1[1] * d2[0]:
            continue
        groups = {}
        for i, label in enumerate(labels[d1]):
            groups.setdefault(label, set()).add(i)
        chosen = [set()] + list(groups.values()) + [a | b for a, b in itertools.combinations(groups.values(), 2)]
        if any(covered_by_two_classes(d2, everything - c) for c in chosen):
            return True
    return False


def check_cover(points, cover, families):
    assert cover is not None
    directions = {tuple(line["direction"]) for line in cover}
    assert len(directions) <= families and len(cover) <= 2 * families
    for direction in directions:
        assert sum(tuple(line["direction"]) == direction for line in cover) <= 2
    for p in points:
        assert any(_on(line, p) for line in cover)


def _on(line, p):
    (dx, dy), q = line["direction"], [Fraction(v) for v in line["through"]]
    return dx * (p[1] - q[1]) == dy * (p[0] - q[0])


@pytest.mark.parametrize("families", [1, 2])
def test_parallel_cover_against_brute_force(families):
    rng = np.random.default_rng(families)
    outcomes = set()
    for _ in range(30):
        count = int(rng.integers(3, 11))
        grid = rng.integers(-3, 4, (count, 2))
        points = sorted({(Fraction(int(a)), Fraction(int(b), 2)) for a, b in grid})
        cover = deep.parallel_cover(points, families)
        expected = brute_cover_exists(points, families)
        assert (cover is not None) == expected, points
        if cover is not None:
            check_cover(points, cover, families)
        outcomes.add(expected)
    assert outcomes == {True, False}


def test_parallel_cover_of_two_crossing_pairs():
    # Four lines x = 0, x = 1, y = 0, y = 2 and points on each: coverable; one point more off them: not.
    points = [(Fraction(0), Fraction(5)), (Fraction(0), Fraction(-3)), (Fraction(1), Fraction(7)), (Fraction(1), Fraction(9)),
              (Fraction(4), Fraction(0)), (Fraction(-6), Fraction(0)), (Fraction(3), Fraction(2)), (Fraction(5), Fraction(2))]
    check_cover(points, deep.parallel_cover(points, 2), 2)
    assert deep.parallel_cover([*points, (Fraction(7), Fraction(7))], 2) is None
    assert deep.parallel_cover(points, 1) is None


# ================================================================ scope and limits
def test_leaky_stacks_and_wide_stacks_get_no_verdict():
    rng = np.random.default_rng(1)
    leaky = Stack([Instance(rng.integers(-3, 4, (2, 2)), rng.integers(-3, 4, (2, 2)), activation="leaky_relu:1/2") for _ in range(2)])
    wide = Stack([Instance(rng.integers(-3, 4, (5, 2)), rng.integers(-3, 4, (2, 5))) for _ in range(2)])
    for stack in (leaky, wide):
        verdict = deep.decide(stack)
        # Out of §9's scope: no verdict, and no region was enumerated to look for one.
        assert not verdict.proven and not verdict.complete and verdict.theorem is None and "regions" not in verdict.facts


def test_an_interrupted_enumeration_proves_nothing():
    stop = threading.Event()
    stop.set()
    verdict = deep.decide(relu_identity_stack(), stop=stop)
    assert not verdict.proven and not verdict.complete and "min_rank" not in verdict.facts
