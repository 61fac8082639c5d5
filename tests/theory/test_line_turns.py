"""Proposition 9.19 (turns of maps of the line, MATH.md §9.5).

References, none of them the code under test: the plain forward pass over
the raw arrays (``reference.stack_point_value`` at ``reference.line_kinks``'s
points), and turns counted from the values alone: the local extrema of the
sequence of values at the breakpoints and one step beyond each end.
"""

from __future__ import annotations

import itertools

import numpy as np
from reference import line_function, turns_by_values, values_at_kinks

from indexset.model.instance import Instance
from indexset.model.stack import Stack
from indexset.result import NOT_ABSORBABLE
from indexset.theory import line_bias_free, line_stacks, line_turns


def _free_block(rng, n: int) -> Instance:
    """A residual-free ReLU block on R of width n with small integer weights (zero output weights allowed)."""
    up = rng.choice([-2, -1, 1, 2], size=(n, 1))
    return Instance(up, rng.integers(-3, 4, size=(1, n)), b_up=rng.integers(-4, 5, n), b_down=rng.integers(-3, 4, 1), residual_free=True)


def _residual_block(rng, n: int) -> Instance:
    up = rng.choice([-2, -1, 1, 2], size=(n, 1))
    return Instance(up, rng.choice([-3, -2, -1, 1, 2, 3], size=(1, n)), skip=np.array([[int(rng.choice([-2, -1, 1, 2]))]]),
                    b_up=rng.integers(-4, 5, n), b_down=rng.integers(-3, 4, 1))


def test_turning_values_match_the_values_reference():
    """``turning_values`` of a stack's map equals the local extrema of its values at the kinks (flat runs merged)."""
    rng = np.random.default_rng(51)
    for _ in range(120):
        n = int(rng.integers(1, 4))
        stack = Stack([_residual_block(rng, n) for _ in range(int(rng.integers(1, 4)))])
        target = line_function(stack)
        assert line_turns.turning_values(target) == turns_by_values(values_at_kinks(stack))


def test_residual_free_stacks_stay_within_the_bounds():
    """Planted residual-free stacks (L = 1–4, n = 1–4): turns and turning values within the bounds, never ruled out by them; one block
    reaches its τ at n = 2, and a built one at n = 3 (slopes 2, −4, 1, −1)."""
    rng = np.random.default_rng(53)
    reached = set()
    for _ in range(300):
        n, layers = int(rng.integers(1, 5)), int(rng.integers(1, 5))
        stack = Stack([_free_block(rng, n) for _ in range(layers)])
        values = turns_by_values(values_at_kinks(stack))
        tau = line_turns.block_turns(n)
        assert len(values) <= (tau + 1) ** layers - 1 and len(set(values)) <= layers * tau, (n, layers, values)
        if layers == 1 and len(values) == tau and n == 2:
            reached.add(n)
        target = line_function(stack)
        assert line_turns.ruled_out(target, layers=layers, per_block=tau) is None
        if layers >= 3 and n >= 2 and not target.strictly_monotone():
            assert line_stacks.decide(stack, time_limit=5).theorem != line_turns.TURNS
    three = Instance(np.array([[-1], [1], [1]]), np.array([[-2, -6, 5]]), b_up=np.array([3, -1, -2]), residual_free=True)
    if len(turns_by_values(values_at_kinks(Stack([three])))) == line_turns.block_turns(3):
        reached.add(3)
    assert reached == {2, 3}, reached


def test_residual_stacks_past_the_bounds_are_proven_not_absorbable():
    """Three residual blocks of width 2 on R whose values reference turns past 7 times or at more than 3 values: not absorbable."""
    rng = np.random.default_rng(57)
    proven = 0
    for _ in range(1200):
        stack = Stack([_residual_block(rng, 2) for _ in range(3)])
        values = turns_by_values(values_at_kinks(stack))
        if len(values) > 7 or len(set(values)) > 3:
            verdict = line_stacks.decide(stack, time_limit=5)
            assert verdict.status == NOT_ABSORBABLE, verdict.reason
            proven += verdict.theorem == line_turns.TURNS
    assert proven >= 5, proven


def _zigzag_stack(rng, layers: int, n: int) -> Stack:
    """L residual blocks of width n on R: L − 1 identities, then a map with n integer kinks and slopes of alternating signs."""
    kinks = np.sort(rng.choice(np.arange(-6, 7), n, replace=False))
    slopes = [int(rng.integers(1, 4)) * (-1) ** j for j in range(n + 1)]
    jumps = [b - a for a, b in itertools.pairwise(slopes)]
    ones = np.ones((n, 1), dtype=np.int64)
    identity = Instance(ones, np.zeros((1, n), dtype=np.int64), skip=np.array([[1]]), b_up=np.zeros(n, dtype=np.int64))
    last = Instance(ones, np.array([jumps]), skip=np.array([[slopes[0]]]), b_up=-kinks, b_down=np.array([int(rng.integers(-3, 4))]))
    return Stack([identity] * (layers - 1) + [last])


def test_bias_free_stacks_of_four_with_more_than_four_turning_values_are_ruled_out():
    """Proposition 9.19 in the bias-free class (each block turns at most once): four blocks whose map turns at more than four values,
    by the values reference, are proven not absorbable; with at most four, never by it."""
    rng = np.random.default_rng(59)
    proven, spared = 0, 0
    for _ in range(60):
        stack = _zigzag_stack(rng, 4, int(rng.integers(4, 8)))
        values = set(turns_by_values(values_at_kinks(stack)))
        verdict = line_bias_free.decide(stack, time_limit=5)
        if len(values) > 4:
            assert verdict.status == NOT_ABSORBABLE, verdict.reason
            proven += verdict.theorem == line_turns.TURNS
        else:
            assert verdict.theorem != line_turns.TURNS
            spared += 1
    assert proven >= 10 and spared >= 5, (proven, spared)


def unmatched_by_values(values: list) -> bool:
    """Proposition 9.20's hypothesis from the values alone: the ends move, two turns or more, and no turn with equal sides outward."""
    if values[0] == values[1] or values[-1] == values[-2]:
        return False
    turning = turns_by_values(values)
    return len(turning) >= 2 and not any(turning[:i][::-1] == turning[i + 1:] for i in range(len(turning)))


def test_unmatched_turns_hold_against_the_exact_decisions_and_planted_stacks():
    """Proposition 9.20. Planted stacks of width-2 residual-free blocks and of bias-free maps (L = 2–4) never meet its hypothesis;
    random residual stacks that do are not absorbable by the exact decisions it does not use (Theorem 9.12 for two blocks of width 2,
    Theorem 9.15e for three bias-free blocks), and ``line_stacks.decide`` proves three blocks of width 2 not absorbable by it
    (or by Proposition 9.19 first)."""
    rng = np.random.default_rng(61)
    seen = {"two": 0, "three": 0, "planted": 0}
    for _ in range(600):
        layers = int(rng.integers(2, 5))
        planted = Stack([_free_block(rng, 2) for _ in range(layers)])
        values = values_at_kinks(planted)
        assert not unmatched_by_values(values)
        seen["planted"] += len(turns_by_values(values)) >= 2
    for _ in range(200):
        maps = [Instance(np.array([[int(rng.choice([-2, -1, 1, 2]))]] * 2), np.array([[int(rng.integers(-3, 4)), 0]]),
                         b_up=np.array([0, 0]), b_down=rng.integers(-3, 4, 1), residual_free=True) for _ in range(3)]
        shifted = [maps[0]] + [Instance(m.W_up, m.W_down, b_up=-m.W_up[:, 0] * int(rng.integers(-2, 3)), b_down=m.b_down,
                                        residual_free=True) for m in maps[1:]]
        assert not unmatched_by_values(values_at_kinks(Stack(shifted)))
    for _ in range(800):
        layers = 2 + int(rng.integers(0, 2))
        stack = Stack([_residual_block(rng, 2) for _ in range(layers)])
        if not unmatched_by_values(values_at_kinks(stack)):
            continue
        if layers == 2:
            assert line_stacks.decide(stack, time_limit=10).status == NOT_ABSORBABLE
            seen["two"] += 1
        else:
            assert line_bias_free.decide(stack, time_limit=10).status == NOT_ABSORBABLE
            verdict = line_stacks.decide(stack, time_limit=10)
            assert verdict.theorem in (line_turns.TURNS, line_turns.UNMATCHED)
            seen["three"] += verdict.theorem == line_turns.UNMATCHED
    assert min(seen.values()) >= 10, seen
