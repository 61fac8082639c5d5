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
from pathlib import Path

import numpy as np
import pytest
from line_pairs import width_two_pair
from line_splits import naive_two_extra
from reference import fractions, line_block_absorbs, line_equal, line_kinks, naive_split, naive_two_block, stack_point_value

from indexset.exact.witness import block_instance
from indexset.model.instance import Instance
from indexset.model.stack import Stack
from indexset.result import ABSORBABLE, NOT_ABSORBABLE, UNKNOWN
from indexset.solver import solve
from indexset.theory import line_folds, line_stacks
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


def test_width_one_not_constant_on_a_half_line_is_not_absorbable():
    """Corollary 9.8, also for a folding F; its premise checked on random residual-free width-one stacks."""
    block = Instance(np.array([[1]]), np.array([[-3]]), skip=np.array([[1]]))  # x − 3 relu(x): slopes 1, −2
    assert line_stacks.decide(Stack([block, block])).status == NOT_ABSORBABLE
    rng = np.random.default_rng(4)
    for _ in range(30):
        blocks = [block_instance(residual_block(rng, 1), {"W_up": rng.integers(-3, 4, (1, 1)), "b_up": rng.integers(-3, 4, 1),
                                                          "W_down": rng.integers(-3, 4, (1, 1)), "b_down": rng.integers(-3, 4, 1)}, "test")
                  for _ in range(2)]
        probe = [Fraction(x) for x in (-1000, -999, 999, 1000)]
        values = [stack_point_value(blocks, [x])[0] for x in probe]
        assert values[0] == values[1] or values[2] == values[3]


def test_folding_composites_are_witnessed_or_unknown():
    """F not monotone: exact witnesses, Theorem 9.12's no, or unknown only when F is flat on a bounded interval."""
    rng = np.random.default_rng(13)
    statuses, whole_only = {ABSORBABLE: 0, NOT_ABSORBABLE: 0, UNKNOWN: 0}, 0
    for _ in range(100):
        n = int(rng.integers(2, 5))
        stack = Stack([residual_block(rng, n, kinks=5) for _ in range(2)])
        if line_map(stack).strictly_monotone():
            continue
        verdict = line_stacks.decide(stack)
        flat = any(slope == 0 for slope in line_map(stack).slopes[1:-1])
        assert verdict.status != NOT_ABSORBABLE or verdict.theorem == line_stacks.TWO_BLOCKS
        assert verdict.status != UNKNOWN or flat
        statuses[verdict.status] += 1
        if verdict.status == ABSORBABLE:
            assert line_equal(stack, free_stack(stack, verdict.witness))
            whole_only += not all(line_block_absorbs(block) for block in stack.blocks)
    assert statuses[ABSORBABLE] >= 3 and statuses[NOT_ABSORBABLE] >= 3 and whole_only >= 3, (statuses, whole_only)


def _random_map(rng, kinks, increasing):
    points = sorted(set(Fraction(int(v), 2) for v in rng.choice(np.arange(-12, 13), size=kinks, replace=False)))
    slopes = [Fraction(int(v)) for v in rng.choice([1, 2, 3] if increasing else [-3, -2, -1, 1, 2, 3], size=len(points) + 1)]
    return LineMap.of(points, slopes, Fraction(int(rng.integers(-3, 4))))


def test_homeomorphic_first_finds_a_planted_factorisation():
    """F = g ∘ h with h increasing and g folding, n − 1 breakpoints each: the search must find a pair, and the pair is F."""
    rng = np.random.default_rng(17)
    found = 0
    for _ in range(40):
        n = int(rng.integers(2, 5))
        h, g = _random_map(rng, n - 1, True), _random_map(rng, n - 1, False)
        target = g.after(h)
        if target.strictly_monotone():
            continue
        pair = line_folds.homeomorphic_first(target, n)
        assert pair is not None
        first, last = (block_instance(Instance(np.zeros((n, 1), dtype=np.int64), np.zeros((1, n), dtype=np.int64)),
                                      block_values(phi, n), "test") for phi in pair)
        assert all(s > 0 for s in pair[0].slopes)
        probe = [Fraction(k, 4) for k in range(-80, 81)]
        assert all(stack_point_value([first, last], [x])[0] == g(h(x)) for x in probe)
        found += 1
    assert found >= 10


def _free_width_two(rng):
    return block_instance(Instance(np.zeros((2, 1), dtype=np.int64), np.zeros((1, 2), dtype=np.int64)),
                          {"W_up": rng.choice([-2, -1, 1, 2], (2, 1)), "b_up": rng.integers(-3, 4, 2),
                           "W_down": rng.choice([-3, -2, -1, 1, 2, 3], (1, 2)), "b_down": rng.integers(-3, 4, 1)}, "test")


def test_width_two_searches_find_every_planted_pair():
    """The reference of Theorem 9.11 (``line_pairs``) on planted witnesses: F = g_2 ∘ g_1 (width 2, folding, no zero slope) is found."""
    rng = np.random.default_rng(21)
    planted = 0
    for _ in range(1500):
        blocks = [_free_width_two(rng), _free_width_two(rng)]
        stack = Stack(blocks)
        target = LineMap.sampled(line_kinks(stack), lambda x, blocks=blocks: stack_point_value(blocks, [x])[0])
        if target.strictly_monotone() or any(slope == 0 for slope in target.slopes):
            continue
        pair = width_two_pair(target)
        assert pair is not None, blocks
        assert all(pair[1](pair[0](x)) == stack_point_value(blocks, [x])[0] for x in (Fraction(k, 3) for k in range(-40, 41)))
        planted += 1
    assert planted >= 60


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


def three_blocks_against_naive_split(seed: int, trials: int, kinks: int, third_kinks: int) -> dict:
    """Three width-2 blocks with a strictly monotone composite of ``kinks`` breakpoints, against the naive enumerations.

    Absorbable iff the naive enumeration of splits with at most one shared
    breakpoint, or (m = L·n − 2) the naive one of splits with two extra
    incidences, finds one (with real ratios: then the decision must find a
    rational one); else not absorbable. Then planted stacks, absorbable, for the same m.
    """
    rng = np.random.default_rng(seed)
    verdicts = {ABSORBABLE: 0, NOT_ABSORBABLE: 0}
    for _ in range(trials):
        stack = Stack([residual_block(rng, 2, kinks=6) for _ in range(3)])
        phi = line_map(stack)
        if not phi.strictly_monotone() or len(phi.breakpoints) != kinks:
            continue
        verdict = line_stacks.decide(stack)
        extra = naive_two_extra(phi.ratios(), 2, 3) if kinks == 3 * 2 - 2 else None
        assert verdict.status == (ABSORBABLE if naive_split(phi, 2, 3) or extra is not None else NOT_ABSORBABLE), verdict.reason
        if verdict.status == ABSORBABLE:
            assert line_equal(stack, free_stack(stack, verdict.witness))
        verdicts[verdict.status] += 1
    for _ in range(40):  # planted: increasing width-2 blocks, g_2 breaking where g_1 sends a breakpoint
        stack = _planted_three(rng, third_kinks)
        phi = line_map(stack)
        if len(phi.breakpoints) != kinks:
            continue
        verdict = line_stacks.decide(stack)
        assert verdict.status == ABSORBABLE and naive_split(phi, 2, 3)
        assert line_equal(stack, free_stack(stack, verdict.witness))
        verdicts[ABSORBABLE] += 1
    return verdicts


def test_three_blocks_with_one_breakpoint_short_against_the_naive_enumeration():
    """L = 3, m = 3n − 1: one breakpoint may be shared by two blocks; decided exactly, as a naive enumeration says."""
    verdicts = three_blocks_against_naive_split(29, 1000, 5, third_kinks=2)
    assert min(verdicts[ABSORBABLE], verdicts[NOT_ABSORBABLE]) >= 3, verdicts


def test_three_blocks_with_two_breakpoints_short_against_the_naive_enumerations():
    """L = 3, m = 3n − 2: two extra incidences may fill every block; decided exactly, as the naive enumerations say."""
    verdicts = three_blocks_against_naive_split(31, 3000, 4, third_kinks=1)
    assert min(verdicts[ABSORBABLE], verdicts[NOT_ABSORBABLE]) >= 3, verdicts


def test_groups_rewrites_and_first_blocks_give_witnesses_for_three_blocks():
    """Propositions 9.9b, 9.9c and 9.9d on random three-block stacks on R: every such witness passes the independent line check.

    Each group of one block absorbs by the (★) brute force of a block on R;
    witnesses of both kinds must be met.
    """
    rng = np.random.default_rng(5)
    met = {"groups": 0, "rewritten": 0, "first_block": 0}
    for _ in range(200):
        stack = Stack([residual_block(rng, 3, kinks=6) for _ in range(3)])
        verdict = line_stacks.decide(stack)
        kind = next((k for k in met if verdict.facts.get(k)), None)
        if verdict.status != ABSORBABLE or kind is None:
            continue
        assert line_equal(stack, free_stack(stack, verdict.witness))
        if kind == "groups":
            groups = verdict.facts["groups"]
            assert [a for a, _ in groups] == [1, *(b + 1 for _, b in groups[:-1])] and groups[-1][1] == 3 and len(groups) > 1
            assert all(line_block_absorbs(stack.blocks[a - 1]) for a, b in groups if a == b)
        met[kind] += 1
    assert min(met["groups"], met["rewritten"]) >= 5 and met["first_block"] >= 1, met


def _increasing_balanced(rng, points):
    """An increasing map on R breaking at each of the n sorted ``points``, balanced (Lemma 9.5: its first jump is its last slope).

    For two points its slopes are s₀, s₀ + s₂, s₂.
    """
    while True:
        first = Fraction(int(rng.integers(1, 4)))
        slopes = [first, first + int(rng.integers(1, 4)), *(Fraction(int(v)) for v in rng.integers(1, 5, len(points) - 2))]
        slopes.append(slopes[1] - slopes[0])
        if all(a != b for a, b in itertools.pairwise(slopes)):
            return LineMap.of(sorted(points), slopes, Fraction(int(rng.integers(-3, 4))))


def _as_residual_block(phi, width=2):
    """phi (at most ``width`` breakpoints) as a residual block: skip = slope at −∞, one unit relu(x − t) per breakpoint."""
    points, jumps = list(phi.breakpoints), list(phi.jumps())
    points += [Fraction(0)] * (width - len(points))
    jumps += [Fraction(0)] * (width - len(jumps))
    offset = phi(0) - sum(j * max(-t, 0) for t, j in zip(points, jumps))
    den = int(np.lcm.reduce([Fraction(v).denominator for v in [*points, *jumps, offset, phi.slopes[0]]]))
    return Instance(np.full((width, 1), den, dtype=np.int64), np.array([[int(j * den) for j in jumps]]),
                    skip=np.array([[int(phi.slopes[0] * den)]]), b_up=np.array([int(-t * den) for t in points]),
                    b_down=np.array([int(offset * den)]), denominator=den)


def _planted_incidences(rng, incidences: list, n: int) -> Stack:
    """Increasing balanced blocks g_l of width n, g_l breaking at the images of the x-points ``incidences[l]`` (labels), as a stack."""
    labels = sorted({label for block in incidences for label in block})
    where = dict(zip(labels, (Fraction(int(v)) for v in rng.choice(np.arange(-12, 13), len(labels), replace=False))))
    maps, inner = [], LineMap.of((), (Fraction(1),), Fraction(0))
    for block in incidences:
        g = _increasing_balanced(rng, [inner(where[label]) for label in block])
        maps.append(g)
        inner = g.after(inner)
    return Stack([_as_residual_block(g, n) for g in maps])


# The kinds of two extra incidences that need a search (Lemma 9.6a), and two that do not.
TWO_EXTRA_KINDS = {
    "one in three": (3, ["ca", "cb", "cd"]),
    "chain": (3, ["ac", "cd", "db"]),
    "two disjoint pairs": (4, ["ca", "cb", "de", "df"]),
    "same pair": (3, ["cd", "cd", "ab"]),
    "one in three, width 3": (3, ["cab", "cde", "cfg"]),
}


@pytest.mark.parametrize("kind", sorted(TWO_EXTRA_KINDS))
def test_planted_splits_with_two_extra_incidences(kind):
    """Stacks planted with two extra incidences (m = L·n − 2 when no ratios cancel): absorbable, witnesses checked independently.

    The naive enumerations agree, also on perturbed copies (one block's
    slope changed), most of them not absorbable. Each kind that needs the
    search must be met at least once where the split found uses both extra
    incidences (the decision tries every simpler split first).
    """
    layers, incidences = TWO_EXTRA_KINDS[kind]
    n = len(incidences[0])
    rng = np.random.default_rng(sum(map(ord, kind)))
    seen = {ABSORBABLE: 0, NOT_ABSORBABLE: 0, "needs two extra": 0}
    wanted = 0 if kind == "same pair" else 1
    for _ in range(800):
        if seen[ABSORBABLE] >= 6 and seen["needs two extra"] >= wanted:
            break
        stack = _planted_incidences(rng, incidences, n)
        phi = line_map(stack)
        if len(phi.breakpoints) != layers * n - 2:
            continue  # ratios cancelled at a shared point
        # Perturbed copies only where the naive enumerations of a negative are quick (n = 2, L = 3).
        for candidate in (stack, _perturbed(rng, stack)) if (n, layers) == (2, 3) else (stack,):
            target = line_map(candidate)
            if not target.strictly_monotone() or len(target.breakpoints) != layers * n - 2:
                continue
            verdict = line_stacks.decide(candidate)
            absorbable = naive_two_extra(target.ratios(), n, layers) is not None or naive_split(target, n, layers)
            if kind == "same pair" and candidate is stack:  # Lemma 9.6a: a split without sharing exists
                assert naive_split(target, n, layers)
            assert verdict.status == (ABSORBABLE if absorbable else NOT_ABSORBABLE)
            if verdict.status == ABSORBABLE:
                assert line_equal(candidate, free_stack(candidate, verdict.witness))
                seen["needs two extra"] += _extra_incidences(verdict.facts["split"]) == 2
            seen[verdict.status] += 1
    assert seen[ABSORBABLE] >= 6 and seen["needs two extra"] >= wanted, seen
    assert seen[NOT_ABSORBABLE] >= (1 if wanted and (n, layers) == (2, 3) else 0), seen


def _extra_incidences(split) -> int:
    """Σ over F's breakpoints of (blocks breaking there − 1), read off a verdict's split (ratio strings per block)."""
    return sum(sum(layer[j] != "1" for layer in split) - 1 for j in range(len(split[0])))


def _perturbed(rng, stack):
    """The stack with one block's skip changed by ±1/denominator (kept nonzero)."""
    blocks = list(stack.blocks)
    k = int(rng.integers(len(blocks)))
    block = blocks[k]
    skip = block.skip + int(rng.choice([-1, 1]))
    blocks[k] = Instance(block.W_up, block.W_down, skip=skip if skip[0, 0] else block.skip + 2 * skip - 2 * block.skip,
                         b_up=block.b_up, b_down=block.b_down, denominator=block.denominator)
    return Stack(blocks)


def _planted_three(rng, third_kinks=2):
    kinks = [Fraction(int(v)) for v in rng.choice(np.arange(-6, 7), 2, replace=False)]
    first = _increasing_balanced(rng, kinks)
    meet = first(kinks[int(rng.integers(2))])
    second = _increasing_balanced(rng, [meet, meet + int(rng.choice([-3, -2, -1, 1, 2, 3]))])
    points = [Fraction(int(v)) for v in rng.choice(np.arange(-20, 21), 2, replace=False)]
    third = _increasing_balanced(rng, points) if third_kinks == 2 else \
        LineMap.of(points[:1], (Fraction(int(rng.integers(1, 4))), Fraction(int(rng.integers(1, 4)))), Fraction(int(rng.integers(-3, 4))))
    return Stack([_as_residual_block(g) for g in (first, second, third)])


# ================================================================ the bundled survey examples
SURVEY_EXAMPLES = sorted((Path(__file__).resolve().parents[2] / "instances" / "stacks").glob("whole_only_*[0-9].npz"))


@pytest.mark.parametrize("path", SURVEY_EXAMPLES, ids=[p.name for p in SURVEY_EXAMPLES])
def test_bundled_survey_examples_absorb_only_as_a_whole(path):
    """Each kept survey stack: its witness is the same function (independent check), and no block absorbs on its own."""
    stack, witness = Stack.load(path), Stack.load(path.with_name(path.stem + "_witness.npz"))
    assert witness.residual_free and line_equal(stack, witness)
    assert all(solve(block).status == NOT_ABSORBABLE for block in stack.blocks)


def test_survey_examples_are_bundled():
    assert len(SURVEY_EXAMPLES) >= 3


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


@pytest.mark.parametrize("d, n, seed", [(2, 4, 0), (2, 6, 1), (3, 7, 2)])
def test_lifted_whole_stack_family(d, n, seed):
    """Parallel units on R^d (Proposition 9.10): witness equal at every x_1-kink of either, with random other coordinates."""
    stack = construct.whole_stack(n=n, d=d, seed=seed)
    assert stack.d == d and stack.n == n
    assert all(not fractions(block, "W_up")[:, 1:].any() for block in stack.blocks)  # rank-one W_up: rows on e_1
    witness = construct.witness_of(stack)
    found = witness_from_certificate(stack, explore(stack, starts=1, iterations=1).certificate)
    rng = np.random.default_rng(seed)
    line = Stack([block_instance(Instance(np.zeros((n, 1), dtype=np.int64), np.zeros((1, n), dtype=np.int64)),
                                 {"W_up": fractions(b, "W_up")[:, :1], "b_up": fractions(b, "b_up"), "W_down": fractions(b, "W_down")[:1],
                                  "b_down": fractions(b, "b_down")[:1]}, "test") for b in witness.blocks])
    kinks = sorted(set(line_kinks(line)) | {Fraction(0)})
    for x1 in [kinks[0] - 1, *kinks, *[(a + b) / 2 for a, b in itertools.pairwise(kinks)], kinks[-1] + 1]:
        point = [x1, *(Fraction(int(v), 7) for v in rng.integers(-50, 51, d - 1))]
        value = stack_point_value(stack.blocks, point)
        assert value == stack_point_value(witness.blocks, point) == stack_point_value(found.blocks, point)
        assert value[1:] == point[1:]
    for block in stack.blocks:
        assert solve(block).status == NOT_ABSORBABLE


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
