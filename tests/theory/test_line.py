"""Stacks on R (MATH.md §9.5): Lemma 9.5, Theorem 9.6 and the whole-stack family.

References, none of them the code under test: a plain Fraction loop over
the raw arrays and an independent kink finder (``reference.line_equal``),
the (★) brute force of a block on R (``reference.line_block_absorbs``), the
solver's own verdict on single blocks, and, for negatives, a naive
enumeration of every assignment of F's breakpoints to the two blocks
(:func:`naive_two_block`), written from the statement of Theorem 9.6 with
its own arithmetic.
"""

from __future__ import annotations

import itertools
from fractions import Fraction

import numpy as np
import pytest
from reference import fractions, line_block_absorbs, line_equal

from indexset.exact.witness import block_instance
from indexset.model.instance import Instance
from indexset.model.stack import Stack
from indexset.result import ABSORBABLE, NOT_ABSORBABLE, UNKNOWN
from indexset.solver import solve
from indexset.theory import line_stacks
from indexset.theory.line import LineMap, block_values, line_map
from indexset.workflows import construct
from indexset.workflows.explore import explore, witness_from_certificate


def residual_block(rng, n, bound=3, kinks=None):
    """A ReLU block on R with integer weights; ``kinks``: distinct integer kinks −b_i/u_i drawn from that many values."""
    up = rng.choice([-2, -1, 1, 2], size=n)
    if kinks is None:
        b_up = rng.integers(-bound, bound + 1, n)
    else:
        b_up = -up * rng.choice(np.arange(-kinks, kinks + 1), size=n, replace=False)
    down = rng.choice([v for v in range(-bound, bound + 1) if v], size=n)
    skip = rng.choice([v for v in range(-bound, bound + 1) if v])
    return Instance(up.reshape(n, 1), down.reshape(1, n), skip=np.array([[skip]]), b_up=b_up, b_down=rng.integers(-bound, bound + 1, 1))


def free_stack(stack, values):
    return Stack([block_instance(block, v, "test") for block, v in zip(stack.blocks, values)])


# ================================================================ Lemma 9.5
def test_line_map_is_the_forward_pass():
    rng = np.random.default_rng(0)
    for _ in range(20):
        stack = Stack([residual_block(rng, 3) for _ in range(2)])
        phi = line_map(stack)
        free = free_stack(stack, [block_values(phi, 2 * len(phi.breakpoints) + 2),
                                  block_values(LineMap.of((), (Fraction(1),), Fraction(0)), 2 * len(phi.breakpoints) + 2)])
        assert line_equal(stack, free)


def test_a_map_is_a_block_exactly_when_the_solver_says_its_block_absorbs():
    """For k = n kinks, Lemma 9.5's subset condition is the solver's (★) on a residual block with those kinks."""
    rng = np.random.default_rng(1)
    seen = {True: 0, False: 0}
    for _ in range(60):
        n = int(rng.integers(1, 5))
        block = residual_block(rng, n, kinks=6)
        phi = line_map(block)
        values = block_values(phi, n)
        absorbs = line_block_absorbs(block)
        assert (values is not None) == absorbs == (solve(block).status == ABSORBABLE)
        if values is not None:
            assert line_equal(block, free_stack(Stack([block]), [values]))
        seen[absorbs] += 1
    assert min(seen.values()) > 5


@pytest.mark.parametrize("n", [1, 2, 4])
def test_fewer_kinks_than_units_is_always_a_block(n):
    rng = np.random.default_rng(n)
    for _ in range(20):
        k = int(rng.integers(0, n))
        points = sorted({Fraction(int(v), 3) for v in rng.integers(-20, 20, k)})
        phi = LineMap.of(points, [Fraction(int(v)) for v in rng.integers(-4, 5, len(points) + 1)], Fraction(int(rng.integers(-5, 5))))
        values = block_values(phi, n)
        linear = not phi.breakpoints and phi.slopes[0] != 0
        assert (values is None) == (linear and n == 1)
        if values is not None:
            template = Instance(np.zeros((n, 1), np.int64), np.zeros((1, n), np.int64))
            assert line_equal(free_stack(Stack([template]), [values]), _as_stack(phi))


def _as_stack(phi):
    """phi as a residual-free block of width k + 2 built by hand: slope at −∞ by a ± pair, then one unit per kink."""
    k = len(phi.breakpoints)
    up = [1, -1] + [1] * k
    b_up = [Fraction(0), Fraction(0)] + [-t for t in phi.breakpoints]
    down = [phi.slopes[0], -phi.slopes[0]] + list(phi.jumps())
    offset = phi(0) - sum(w * max(b, 0) for b, w in zip(b_up, down))
    den = int(np.lcm.reduce([Fraction(v).denominator for v in [*b_up, *down, offset]]))

    def scaled(values):
        return np.array([int(Fraction(v) * den) for v in values], dtype=np.int64)

    return Instance(scaled(up).reshape(-1, 1), scaled(down).reshape(1, -1), b_up=scaled(b_up), b_down=scaled([offset]),
                    residual_free=True, denominator=den)


# ================================================================ Theorem 9.6
def _residue(kinks, choice):
    """Σ over the chosen kinks of the slope jumps, minus the slope at +∞ (slope 1 at −∞): zero iff the choice balances."""
    slopes = [Fraction(1)]
    for r in kinks:
        slopes.append(slopes[-1] * r)
    return sum((b - a for a, b, c in zip(slopes, slopes[1:], choice) if c), Fraction(0)) - slopes[-1]


def _kinks(ratios, where, block, shared=None, q=None):
    """One block's ratios left to right: F's where the block alone has the breakpoint, q or r_c/q at the shared one."""
    out = []
    for j, (r, w) in enumerate(zip(ratios, where)):
        if j == shared:
            out.append(q if block == 1 else ratios[j] / q)
        else:
            out.append(r if w == block else Fraction(1))
    return [r for r in out if r != 1]


def _block_ok(kinks, n):
    return len(kinks) < n or (len(kinks) == n and any(_residue(kinks, c) == 0 for c in itertools.product((0, 1), repeat=n)))


def naive_two_block(phi, n):
    """Theorem 9.6 for L = 2 by naive enumeration: each breakpoint of F in block 1, block 2 or both (3, ratio q in block 1).

    The residue of a choice is affine in q for block 1 and in 1/q for
    block 2, so two evaluations find its zero.
    """
    ratios = [b / a for a, b in zip(phi.slopes, phi.slopes[1:])]
    for where in itertools.product((1, 2, 3), repeat=len(ratios)):
        if sum(w != 2 for w in where) > n or sum(w != 1 for w in where) > n:
            continue
        shared = [j for j, w in enumerate(where) if w == 3]
        if not shared:
            if all(_block_ok(_kinks(ratios, where, block), n) for block in (1, 2)):
                return True
            continue
        (c,) = shared  # a second shared breakpoint would need n + 1 kinks in a block when m ≥ 2n − 1
        candidates = {Fraction(1), ratios[c]}
        for block, (qa, qb) in ((1, (Fraction(1, 7), Fraction(2, 7))), (2, (Fraction(7), Fraction(7, 2)))):
            ka, kb = _kinks(ratios, where, block, c, qa), _kinks(ratios, where, block, c, qb)
            if len(ka) != n or len(kb) != n:
                continue
            xa, xb = (qa, qb) if block == 1 else (1 / qa, 1 / qb)
            for choice in itertools.product((0, 1), repeat=n):
                ya, yb = _residue(ka, choice), _residue(kb, choice)
                if ya != yb:
                    root = xa - ya * (xb - xa) / (yb - ya)
                    if root > 0:
                        candidates.add(root if block == 1 else 1 / root)
        if any(all(_block_ok(_kinks(ratios, where, block, c, q), n) for block in (1, 2)) for q in candidates):
            return True
    return False


def test_two_block_verdicts_against_the_naive_enumeration():
    rng = np.random.default_rng(7)
    verdicts = {ABSORBABLE: 0, NOT_ABSORBABLE: 0}
    for trial in range(400):
        n = int(rng.integers(2, 4))
        stack = Stack([residual_block(rng, n, kinks=4) for _ in range(2)])
        phi = line_map(stack)
        if not phi.strictly_monotone() or len(phi.breakpoints) < 2 * n - 1:
            continue
        verdict = line_stacks.decide(stack)
        assert verdict.status in (ABSORBABLE, NOT_ABSORBABLE)
        assert (verdict.status == ABSORBABLE) == naive_two_block(phi, n), trial
        if verdict.status == ABSORBABLE:
            assert line_equal(stack, free_stack(stack, verdict.witness))
        verdicts[verdict.status] += 1
    assert min(verdicts.values()) >= 3, verdicts


def test_not_monotone_is_unknown():
    down = np.array([[-3]])
    block = Instance(np.array([[1]]), down, skip=np.array([[1]]))  # x − 3 relu(x): slopes 1, −2
    verdict = line_stacks.decide(Stack([block, block]))
    assert verdict.status == UNKNOWN and verdict.witness is None


def test_three_blocks_with_every_block_full():
    """L = 3, m = 3n: no breakpoint can be shared, so the split search decides; witnesses hold up independently."""
    rng = np.random.default_rng(11)
    decided = set()
    for _ in range(300):
        stack = Stack([residual_block(rng, 2, kinks=6) for _ in range(3)])
        phi = line_map(stack)
        if not phi.strictly_monotone() or len(phi.breakpoints) != 6:
            continue
        verdict = line_stacks.decide(stack)
        decided.add(verdict.status)
        if verdict.status == ABSORBABLE:
            assert line_equal(stack, free_stack(stack, verdict.witness))
        else:
            assert verdict.status == NOT_ABSORBABLE
    assert decided


# ================================================================ the family
@pytest.mark.parametrize("n, seed", [(2, 0), (2, 5), (3, 1), (4, 2), (5, 3), (7, 4)])
def test_whole_stack_family(n, seed):
    stack = construct.whole_stack(n=n, seed=seed)
    assert stack.L == 2 and stack.n == n and stack.d == 1
    assert line_equal(stack, construct.witness_of(stack))
    for block in stack.blocks:
        assert not line_block_absorbs(block)
        assert solve(block).status == NOT_ABSORBABLE
    assert solve(stack).status != ABSORBABLE
    result = explore(stack, starts=1, iterations=1)
    assert result.status == ABSORBABLE and result.extension and result.target_class == "affine"
    assert line_equal(stack, witness_from_certificate(stack, result.certificate))


def test_whole_stack_family_is_seeded():
    first, again = construct.whole_stack(n=3, seed=9), construct.whole_stack(n=3, seed=9)
    other = construct.whole_stack(n=3, seed=10)
    same = all((fractions(a, k) == fractions(b, k)).all() for a, b in zip(first.blocks, again.blocks) for k in ("W_up", "b_up", "W_down"))
    assert same
    assert not all(np.array_equal(fractions(a, "b_up"), fractions(b, "b_up")) for a, b in zip(first.blocks, other.blocks))


def test_explore_proves_a_negative_on_the_line():
    rng = np.random.default_rng(3)
    for _ in range(400):
        stack = Stack([residual_block(rng, 2, kinks=4) for _ in range(2)])
        phi = line_map(stack)
        if phi.strictly_monotone() and len(phi.breakpoints) == 4 and line_stacks.decide(stack).status == NOT_ABSORBABLE:
            assert not naive_two_block(phi, 2)
            result = explore(stack, starts=1, iterations=1)
            assert result.status == NOT_ABSORBABLE and result.complete and result.extension
            return
    pytest.fail("no negative drawn")
