"""Theorem 9.21 (three blocks of width two on R whose composite turns four times or more, MATH.md §9.5).

References, none of them the code under test: planted stacks of three
width-2 maps that fold (their composite is evaluated point by point); the
plain forward pass over the raw arrays (``reference.line_equal``); and a
grid brute force, first blocks from ``line_pairs.small_first_blocks`` moved
to each turn of F, the rest read off level by level
(``line_pairs.second_block_for``) and decided by Theorem 9.11's own search
(``line_pairs.width_two_pair``).
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np
from line_pairs import second_block_for, small_first_blocks, width_two_pair
from reference import line_equal, line_function

from indexset.budget import Budget
from indexset.exact.witness import block_instance
from indexset.model.instance import Instance
from indexset.model.stack import Stack
from indexset.result import ABSORBABLE, NOT_ABSORBABLE
from indexset.theory import line_stacks, line_width_two
from indexset.theory.line import LineMap, block_values

SLOPES = [Fraction(1, 3), Fraction(1, 2), Fraction(1), Fraction(3, 2), Fraction(2), Fraction(3)]


def _fold(rng, at: Fraction) -> LineMap:
    """A width-2 block map turning at ``at``: a V, or two breakpoints with slopes r_0, r_0 + r_2, r_2 (r_0 r_2 < 0)."""
    a, b = rng.choice(SLOPES), rng.choice(SLOPES)
    value = Fraction(int(rng.integers(-2, 3)))
    r0, r2 = (-a, b) if rng.random() < 0.5 else (a, -b)
    if rng.random() < 0.5 or r0 + r2 == 0:
        return LineMap.of((at,), (r0, r2), value)
    d = rng.choice(SLOPES)
    points = (at, at + d) if r0 * (r0 + r2) < 0 else (at - d, at)
    return LineMap.of(points, (r0, r0 + r2, r2), value)


def _monotone(rng, at: Fraction) -> LineMap:
    """A width-2 block map increasing through ``at``: one breakpoint, or two with slopes r_0, r_0 + r_2, r_2 of one sign."""
    r0, r2 = rng.choice(SLOPES), rng.choice(SLOPES)
    if rng.random() < 0.5:
        return LineMap.of((at,), (r0, r2), Fraction(0))
    return LineMap.of((at, at + rng.choice(SLOPES)), (r0, r0 + r2, r2), Fraction(0))


def _pointwise(maps: list, points) -> LineMap:
    """The composite of ``maps`` sampled at ``points`` (a superset of its breakpoints), by evaluation."""
    def value(x):
        for phi in maps:
            x = phi(x)
        return x

    return LineMap.sampled(points, value)


def _planted(rng) -> tuple | None:
    """Three width-2 maps, the first two folding (the second inside the first's image), and their composite; None if it does not turn 4 times."""
    first = _fold(rng, Fraction(int(rng.integers(-2, 3))))
    bottom = min(first.values())
    rising = first(Fraction(100)) > bottom
    second = _fold(rng, bottom + (rng.choice(SLOPES) if rising else -rng.choice(SLOPES)))
    inner = second.after(first)
    third = (_fold if rng.random() < 0.7 else _monotone)(rng, rng.choice(inner.values()) + rng.choice(SLOPES) * int(rng.choice([-1, 1])))
    maps = [first, second, third]
    target = third.after(inner)
    points = [*target.breakpoints, *first.breakpoints, *inner.breakpoints]
    target = _pointwise(maps, points)
    if any(block_values(g, 2) is None for g in maps) or not line_width_two.applies(target):
        return None
    return maps, target


def test_planted_folds_are_found():
    """Every planted composite of three width-2 block maps turning four times or more is found; the three maps are blocks of width 2
    and compose to it, point by point."""
    rng = np.random.default_rng(71)
    found = 0
    for _ in range(400):
        planted = _planted(rng)
        if planted is None:
            continue
        _maps, target = planted
        maps = line_width_two.three_blocks(target)
        assert maps is not None, target
        assert all(block_values(g, 2) is not None for g in maps)
        points = {*target.breakpoints, *(t for g in maps for t in g.breakpoints)}
        probes = sorted({*points, *(p + Fraction(1, 3) for p in points), *(p - Fraction(1, 3) for p in points)})
        assert all(maps[2](maps[1](maps[0](x))) == target(x) for x in probes)
        found += 1
    assert found >= 100, found


def _brute_force(target: LineMap) -> bool:
    """A grid first block (kinks at −1, 0, 1 around a turn of F, moved there), the other two by Theorem 9.11's reference search."""
    turns = [t for j, t in enumerate(target.breakpoints) if target.slopes[j] * target.slopes[j + 1] < 0]
    for x0 in turns:
        for phi in small_first_blocks(2, mirrored=True):
            first = LineMap.sampled([x0 + t for t in phi.breakpoints], lambda x, phi=phi, x0=x0: phi(x - x0))
            rest = second_block_for(target, first, 4)
            if rest is not None and all(s != 0 for s in rest.slopes) and width_two_pair(rest) is not None:
                return True
    return False


def _residual_block(rng) -> Instance:
    up = rng.choice([-2, -1, 1, 2], size=(2, 1))
    return Instance(up, rng.choice([-3, -2, -1, 1, 2, 3], size=(1, 2)), skip=np.array([[int(rng.choice([-2, -1, 1, 2]))]]),
                    b_up=rng.integers(-4, 5, 2), b_down=rng.integers(-3, 4, 1))


def test_three_residual_blocks_of_width_two_are_decided():
    """Random residual stacks of three width-2 blocks on R meeting Theorem 9.21's hypothesis get a verdict from ``line_stacks.decide``;
    each witness equals the stack by the forward pass; the first 15 noes hold against the grid brute force."""
    rng = np.random.default_rng(73)
    seen = {ABSORBABLE: 0, NOT_ABSORBABLE: 0}
    for _ in range(1500):
        stack = Stack([_residual_block(rng) for _ in range(3)])
        target = line_function(stack)
        if not line_width_two.applies(target):
            continue
        verdict = line_stacks.decide(stack, time_limit=10)
        assert verdict.status in seen, verdict.reason
        if verdict.status == ABSORBABLE:
            witness = Stack([block_instance(block, values, "line") for block, values in zip(stack.blocks, verdict.witness)])
            assert line_equal(stack, witness)
        elif seen[NOT_ABSORBABLE] < 15:  # the brute force takes most of a second a stack
            assert not _brute_force(target), target
        seen[verdict.status] += 1
    assert seen[NOT_ABSORBABLE] >= 15, seen


def test_the_brute_force_can_find_three_folds():
    """The reference is not vacuous: ||x| − 1| − 1/2| read as |·| three times is found (and by the theorem's search)."""
    def v(at):
        return LineMap.of((Fraction(at),), (Fraction(-1), Fraction(1)), Fraction(0))

    target = _pointwise([v(0), v(1), v(Fraction(1, 2))], [Fraction(k, 2) for k in range(-4, 5)])
    assert line_width_two.applies(target) and _brute_force(target) and line_width_two.three_blocks(target) is not None


def _free_block(rng, n: int, kinks) -> Instance:
    """A residual-free block of width n on R breaking at ``kinks`` (integers): two units facing apart at the first, one facing right at
    each other, random nonzero output weights (so it is not flat left of its kinks)."""
    up = np.array([[1], [-1]] + [[1]] * (n - 2), dtype=np.int64)
    b_up = np.array([-kinks[0], kinks[0]] + [-k for k in kinks[1:n - 1]], dtype=np.int64)
    return Instance(up, rng.choice([-3, -2, -1, 1, 2, 3], size=(1, n)), b_up=b_up, b_down=rng.integers(-3, 4, 1), residual_free=True)


def test_a_folding_first_block_gives_witnesses():
    """Proposition 9.9e: |x − x_0| followed by two (or three) residual-free blocks breaking right of 0 is found; every witness the
    search gives (on planted and on random residual stacks) is blocks of width n composing to F, by the forward pass."""
    rng = np.random.default_rng(79)
    found = 0
    for trial in range(120):
        n = int(rng.integers(2, 4))
        if trial % 2 == 0:
            x0 = int(rng.integers(-2, 3))
            fold = Instance(np.array([[1], [-1]] + [[1]] * (n - 2)), np.array([[1, 1] + [0] * (n - 2)]),
                            b_up=np.array([-x0, x0] + [0] * (n - 2)), residual_free=True)
            blocks = [fold] + [_free_block(rng, n, sorted(rng.choice(np.arange(1, 7), n - 1, replace=False))) for _ in range(2)]
        else:
            blocks = [Instance(rng.choice([-2, -1, 1, 2], size=(n, 1)), rng.choice([-3, -2, -1, 1, 2, 3], size=(1, n)),
                               skip=np.array([[int(rng.choice([-2, -1, 1, 2]))]]), b_up=rng.integers(-4, 5, n),
                               b_down=rng.integers(-3, 4, 1)) for _ in range(3)]
        stack = Stack(blocks)
        target = line_function(stack)
        maps = line_stacks.fold_first_then(target, 3, n, Budget.of(10, None))
        if maps is None:
            continue
        witness = Stack([block_instance(blocks[0], block_values(g, n), "line") for g in maps])
        assert all(block_values(g, n) is not None for g in maps) and line_equal(stack, witness)
        found += 1
    assert found >= 40, found
    deeper = 0
    for _ in range(30):  # four blocks: the fold, then three residual-free blocks breaking right of 0
        n, x0 = 2, int(rng.integers(-2, 3))
        fold = Instance(np.array([[1], [-1]]), np.array([[1, 1]]), b_up=np.array([-x0, x0]), residual_free=True)
        stack = Stack([fold] + [_free_block(rng, n, [int(rng.integers(1, 7))]) for _ in range(3)])
        target = line_function(stack)
        maps = line_stacks.fold_first_then(target, 4, n, Budget.of(10, None))
        if maps is not None:
            witness = Stack([block_instance(stack.blocks[0], block_values(g, n), "line") for g in maps])
            assert line_equal(stack, witness)
            deeper += 1
    assert deeper >= 10, deeper
