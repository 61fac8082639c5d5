"""Two blocks on R, F without a zero slope (MATH.md §9.5, Theorem 9.12): the fold walk and the level search.

References, none of them the code under test: composites computed by a
plain Fraction loop over the raw weights (``reference.stack_point_value``
at every kink ``reference.line_kinks`` finds); planted witnesses (F built
as g_2 ∘ g_1, so a pair exists); Theorem 9.11's own search at width two
(``line_pairs.width_two_pair``); the naive enumeration of Theorem 9.6 on
strictly monotone F (``reference.naive_two_block``); and brute force over
every first block with small integer weights, each tried by reading g_2
off level by level (``line_pairs.second_block_for``).
"""

from __future__ import annotations

import itertools
from fractions import Fraction

import numpy as np
import pytest
from line_pairs import second_block_for, small_first_blocks, width_two_pair
from reference import line_equal, line_kinks, naive_two_block, stack_point_value

from indexset.budget import Budget
from indexset.exact.witness import block_instance
from indexset.model.instance import Instance
from indexset.model.stack import Stack
from indexset.result import ABSORBABLE, NOT_ABSORBABLE
from indexset.theory import line_stacks
from indexset.theory.line import LineMap, block_values, line_map
from indexset.theory.line_levels import FOUND, NONE, STOPPED, UNDECIDED, two_blocks
from indexset.theory.line_walk import level_map, turning_points


def free_block(rng, n, bound=3):
    """A residual-free ReLU block on R of width n with small integer weights (no zero unit row or output weight)."""
    template = Instance(np.zeros((n, 1), dtype=np.int64), np.zeros((1, n), dtype=np.int64))
    values = {"W_up": rng.choice([-2, -1, 1, 2], (n, 1)), "b_up": rng.integers(-bound, bound + 1, n),
              "W_down": rng.choice([v for v in range(-bound, bound + 1) if v], (1, n)), "b_down": rng.integers(-bound, bound + 1, 1)}
    return block_instance(template, values, "test")


def clamped_block(rng, n):
    """A residual-free block of width n on R with a flat end: two units δ·relu(±(x − t)) − δ·relu(±(x − t′)) at its ends."""
    block = free_block(rng, n)
    up, b_up, down = (np.array(block.W_up), np.array(block.b_up), np.array(block.W_down))
    side = int(rng.choice([-1, 1]))
    up[:2, 0] = side
    b_up[1] = b_up[0] - side * int(rng.integers(1, 4))
    down[0, 1] = -down[0, 0]
    template = Instance(np.zeros((n, 1), dtype=np.int64), np.zeros((1, n), dtype=np.int64))
    return block_instance(template, {"W_up": up, "b_up": b_up, "W_down": down, "b_down": np.array(block.b_down)}, "test")


def composite(blocks) -> LineMap:
    """The stack's function on R, by the plain forward pass at every kink."""
    return LineMap.sampled(line_kinks(Stack(blocks)), lambda x: stack_point_value(blocks, [x])[0])


def folding_without_flat(target: LineMap) -> bool:
    return not target.strictly_monotone() and all(slope != 0 for slope in target.slopes)


def flat_inside(target: LineMap) -> bool:
    """Not strictly monotone, and flat on some bounded interval (Lemma 9.17)."""
    return any(s == 0 for s in target.slopes[1:-1]) and any(s != 0 for s in target.slopes)


def flat_at_the_ends(target: LineMap) -> bool:
    """Not constant, flat somewhere, and flat only on an end piece (Theorem 9.12 with Lemma 9.16)."""
    inner = target.slopes[1:-1]
    return any(s == 0 for s in target.slopes) and all(s != 0 for s in inner) and any(s != 0 for s in target.slopes)


def shared_flat(target: LineMap) -> bool:
    """Two bounded flat pieces at one value: one range of levels where g_2 is flat could serve both (Lemma 9.18)."""
    values = [target(target.breakpoints[i]) for i in range(1, len(target.slopes) - 1) if target.slopes[i] == 0]
    return len(values) != len(set(values))


def flat_range_map(rng, first: LineMap, n: int) -> LineMap:
    """A second map flat on a bounded range of levels near one of g_1's kink values, with at most n − 1 breakpoints (so a block, Lemma 9.5)."""
    values = sorted({first(t) for t in first.breakpoints})
    centre = values[int(rng.integers(len(values)))] + Fraction(int(rng.integers(-2, 3)), 4)
    radius = Fraction(int(rng.integers(1, 9)), 4)
    points = [centre - radius, centre + radius]
    slopes = [Fraction(int(v)) for v in rng.choice([-3, -2, -1, 1, 2, 3], 2)]
    slopes.insert(1, Fraction(0))
    if n >= 4 and rng.random() < 0.5:
        points.append(points[-1] + Fraction(int(rng.integers(1, 5)), 2))
        slopes.append(Fraction(int(rng.choice([-2, -1, 1, 2]))))
    return LineMap.of(tuple(points), tuple(slopes), Fraction(int(rng.integers(-3, 4))))


def check_pair(target: LineMap, pair: tuple, n: int) -> None:
    """The pair is two residual-free blocks of width n whose forward pass is F at every kink and between."""
    blocks = [block_instance(Instance(np.zeros((n, 1), dtype=np.int64), np.zeros((1, n), dtype=np.int64)), block_values(phi, n), "test")
              for phi in pair]
    probe = sorted(set(target.breakpoints) | set(line_kinks(Stack(blocks)))) or [Fraction(0)]
    probe = [probe[0] - 1, *probe, *((a + b) / 2 for a, b in itertools.pairwise(probe)), probe[-1] + 1]
    assert all(stack_point_value(blocks, [x])[0] == target(x) for x in probe)


# ================================================================ the fold walk (Lemma 9.13)
def test_the_walk_for_a_planted_first_block_factors_the_composite():
    """For g_1's own turning set the walk succeeds, ℓ turns exactly there, and G ∘ ℓ = F everywhere."""
    rng = np.random.default_rng(31)
    walked = 0
    for _ in range(800):
        n = int(rng.integers(2, 5))
        blocks = [free_block(rng, n), free_block(rng, n)]
        target, first = composite(blocks), composite(blocks[:1])
        if not folding_without_flat(target):
            continue
        fold = level_map(target, turning_points(first))
        assert fold is not None
        assert turning_points(fold.level) == turning_points(first)
        assert fold.profile.after(fold.level) == target
        walked += 1
    assert walked >= 40


# ================================================================ completeness on planted witnesses
@pytest.mark.parametrize("n, seed, shape", [(2, 1, "fold"), (3, 2, "fold"), (4, 3, "fold"), (5, 4, "fold"), (2, 5, "ends"), (3, 6, "ends"),
                                            (4, 7, "ends"), (2, 8, "inside"), (3, 9, "inside"), (4, 10, "inside")])
def test_every_planted_pair_is_found(n, seed, shape):
    """F = g_2 ∘ g_1 for random blocks of width n: a pair is found and holds up; flat inside, never a no (at most undecided)."""
    rng = np.random.default_rng(seed)
    found, folded = 0, 0
    wanted = {"fold": folding_without_flat, "ends": flat_at_the_ends, "inside": flat_inside}[shape]
    for _ in range(700):
        blocks = [free_block(rng, n), free_block(rng, n)]
        if shape != "fold":
            blocks[int(rng.integers(2))] = clamped_block(rng, n)
        target = composite(blocks)
        if not wanted(target):
            continue
        answer = two_blocks(target, n)
        if shape == "inside" and answer.status == UNDECIDED:
            continue
        assert answer.status == FOUND, blocks
        check_pair(target, answer.maps, n)
        found += 1
        folded += bool(answer.turning)
    assert found >= 15 and (folded >= 1 or shape != "fold"), (found, folded)


@pytest.mark.parametrize("n, seed", [(3, 71), (4, 72), (5, 73)])
def test_planted_pairs_through_one_shared_range_are_found(n, seed):
    """g_2 flat on a range of levels g_1 passes on two or more of F's flat pieces: a pair is always found, and holds up (Lemma 9.18)."""
    rng = np.random.default_rng(seed)
    found = 0
    for _ in range(400):
        first = composite([free_block(rng, n)])
        if len({first(t) for t in first.breakpoints}) < 2:
            continue
        target = flat_range_map(rng, first, n).after(first)
        if not shared_flat(target):
            continue
        answer = two_blocks(target, n)
        assert answer.status == FOUND, target
        check_pair(target, answer.maps, n)
        found += 1
    assert found >= 15, found


# ================================================================ against Theorem 9.11 and Theorem 9.6
def residual_pair(rng, n):
    """Two residual ReLU blocks on R with small integer weights and distinct kinks drawn from few values."""
    out = []
    for _ in range(2):
        up = rng.choice([-2, -1, 1, 2], size=n)
        b_up = -up * rng.choice(np.arange(-4, 5), size=n, replace=False)
        out.append(Instance(up.reshape(n, 1), rng.choice([-3, -2, -1, 1, 2, 3], size=(1, n)), skip=np.array([[1]]),
                            b_up=b_up, b_down=rng.integers(-3, 4, 1)))
    return out


def agreement(seed: int, trials: int, widths: tuple, wanted, reference) -> dict:
    """Random residual pairs F of the shape ``wanted``: a pair found iff ``reference(F, n)`` says one exists; counts of each."""
    rng = np.random.default_rng(seed)
    seen = {True: 0, False: 0}
    for _ in range(trials):
        n = int(rng.choice(widths))
        target = composite(residual_pair(rng, n))
        if not wanted(target):
            continue
        expected = reference(target, n)
        answer = two_blocks(target, n)
        assert answer.status == (FOUND if expected else NONE), target
        if expected:
            check_pair(target, answer.maps, n)
        seen[expected] += 1
    return seen


def test_width_two_agrees_with_theorem_9_11_both_ways():
    """n = 2, F folding without a zero slope: a pair iff Theorem 9.11's own search finds one."""
    seen = agreement(37, 600, (2,), folding_without_flat, lambda target, n: width_two_pair(target) is not None)
    assert min(seen.values()) >= 10, seen


def test_strictly_monotone_composites_agree_with_theorem_9_6():
    """F strictly monotone (the walk is the identity): a pair iff the naive enumeration of Theorem 9.6 finds a split."""
    seen = agreement(41, 400, (2, 3), LineMap.strictly_monotone, naive_two_block)
    assert min(seen.values()) >= 5, seen


# ================================================================ negatives against brute force
@pytest.mark.parametrize("n, shape", [(3, "fold"), (2, "ends"), (3, "ends"), (2, "inside"), (3, "inside"), (3, "shared")])
def test_negatives_hold_against_brute_force_over_small_first_blocks(n, shape):
    """Whenever the search says no pair exists, no first block with small weights, nor its mirror, admits a second."""
    rng = np.random.default_rng(43 + n)
    firsts = list(small_first_blocks(n, mirrored=True))
    wanted = {"fold": folding_without_flat, "ends": flat_at_the_ends, "inside": flat_inside, "shared": shared_flat}[shape]
    negatives = 0
    for _ in range(3000):
        target = composite(residual_pair(rng, n))
        if not wanted(target) or two_blocks(target, n).status != NONE:
            continue
        for first in firsts:
            # Any affine change of the first block's output is absorbed by the second block's input: try the shapes as they are.
            assert second_block_for(target, first, n) is None, (target, first)
        negatives += 1
        if negatives == 6:
            break
    assert negatives == 6


def test_brute_force_finds_the_planted_first_block():
    """The brute force can fail: for a planted pair with a small first block it finds a second block."""
    rng = np.random.default_rng(47)
    firsts = list(small_first_blocks(2))
    hits = 0
    for first in firsts[::7]:
        second = composite([free_block(rng, 2)])
        target = second.after(first)
        hits += second_block_for(target, first, 2) is not None
    assert hits == len(firsts[::7])


# ================================================================ through decide, with a budget
def test_decide_uses_theorem_9_12_and_every_witness_holds_up():
    """Two residual blocks, F folding without a zero slope: never unknown; witnesses equal the stack (independent check)."""
    rng = np.random.default_rng(53)
    statuses = {ABSORBABLE: 0, NOT_ABSORBABLE: 0}
    for _ in range(300):
        n = int(rng.integers(2, 5))
        stack = Stack(residual_pair(rng, n))
        if not folding_without_flat(line_map(stack)):
            continue
        verdict = line_stacks.decide(stack)
        assert verdict.status in statuses
        statuses[verdict.status] += 1
        if verdict.status == ABSORBABLE:
            witness = Stack([block_instance(block, values, "witness") for block, values in zip(stack.blocks, verdict.witness)])
            assert line_equal(stack, witness)
        else:
            assert verdict.theorem == line_stacks.TWO_BLOCKS
    assert min(statuses.values()) >= 5, statuses


def test_a_spent_budget_stops_the_search():
    rng = np.random.default_rng(59)
    while True:
        target = composite(residual_pair(rng, 3))
        if folding_without_flat(target):
            break
    clock = Budget.of(0.0)
    assert two_blocks(target, 3, clock).status == STOPPED
