"""The §7 decision on degenerate weights (MATH.md §7): against brute force, forward passes and invariance.

- the rank sub-cases (theory/lowrank) against exhaustive enumeration with exact ranks;
- the whole decision against :func:`reference.section_7_reference` (every
  upgrade set and sign vector, written independently of indexset.theory);
- positives by the witness's forward pass at random rational points (exact for ReLU);
- verdicts invariant under permuting units and rescaling each unit by a
  positive rational (the same ReLU function written differently);
- open cases named through the result's stages, with a small tuning.
"""

from __future__ import annotations

import itertools
import threading
from dataclasses import replace
from fractions import Fraction

import flint
import numpy as np
import pytest
from reference import rank_question_brute, section_7_reference

from indexset.budget import TIME_LIMIT, Budget
from indexset.exact.witness import check_forward, result_witness
from indexset.model.instance import Instance
from indexset.search.reduce import reduce_system
from indexset.solver import solve
from indexset.theory.degenerate import decide_degenerate
from indexset.theory.degenerate_tuning import DegenerateTuning
from indexset.theory.flats import levels_of
from indexset.theory.lowrank import PRIME, RankQuestion, decide_rank, det_mod, groups_of, meet_plans, rank_bound
from indexset.theory.nondegeneracy import find_degeneracy
from indexset.theory.shortside import direction_system, entry_bounds, shared_kernel, short_plan, short_vectors


def low_precision(rng, d, n, bound, biases=False, activation="relu"):
    """A block with integer weights in [−bound, bound] and identity skip, as the survey draws them."""
    return Instance(rng.integers(-bound, bound + 1, size=(n, d)), rng.integers(-bound, bound + 1, size=(d, n)),
                    b_up=rng.integers(-1, 2, size=n) if biases else None, activation=activation)


def rational_instance(up, down, b_up, activation="relu"):
    """An instance from object arrays of Fractions (numerators over their common denominator)."""
    den = math_lcm(v.denominator for v in [*up.ravel(), *down.ravel(), *b_up.ravel()])

    def num(array):
        return np.array([[int(v * den) for v in row] for row in array], dtype=np.int64)

    return Instance(num(up), num(down), b_up=np.array([int(v * den) for v in b_up], dtype=np.int64),
                    skip=np.eye(up.shape[1], dtype=np.int64) * den, activation=activation, denominator=den)


def math_lcm(values):
    out = 1
    for v in values:
        out = out * v // np.gcd(out, v)
    return int(out)


def exact_arrays(instance):
    den = instance.denominator
    up = np.array([[Fraction(int(v), den) for v in row] for row in instance.W_up], dtype=object)
    down = np.array([[Fraction(int(v), den) for v in row] for row in instance.W_down], dtype=object)
    b_up = np.array([Fraction(int(v), den) for v in (instance.b_up if instance.b_up is not None else np.zeros(instance.n, dtype=np.int64))], dtype=object)
    return up, down, b_up


def rewritten(instance, rng):
    """The same ReLU function with units permuted and each unit rescaled by a positive rational a."""
    up, down, b_up = exact_arrays(instance)
    order = rng.permutation(instance.n)
    scales = [Fraction(int(rng.integers(1, 6)), int(rng.integers(1, 6))) for _ in range(instance.n)]
    up2 = np.array([[v * scales[i] for v in up[i]] for i in order], dtype=object)
    b2 = np.array([b_up[i] * scales[i] for i in order], dtype=object)
    down2 = np.array([[down[a][i] / scales[i] for i in order] for a in range(instance.d)], dtype=object)
    return rational_instance(up2, down2, b2, instance.activation)


def assert_witness(instance, result):
    block = result_witness(instance, result)
    assert block.n == instance.n and block.residual_free
    check = check_forward(instance, block, points=16, seed=3)
    assert check.ok, check.describe()
    if instance.activation == "relu":
        assert check.exact


# ====================================================== the rank sub-cases
def random_question(rng, q, most_terms=8):
    d, w, count = int(rng.integers(2, 5)), int(rng.integers(2, 5)), int(rng.integers(0, most_terms + 1))
    base = rng.integers(-3, 4, size=(d, w))
    if rng.random() < 0.5:  # a low-rank target made reachable: base = −(sum of some terms) + rank ≤ q part
        base = rng.integers(-2, 3, size=(d, q)) @ rng.integers(-2, 3, size=(q, w))
    columns = [tuple(int(v) for v in rng.integers(-2, 3, size=d)) for _ in range(count)]
    rows = [tuple(int(v) for v in rng.integers(-2, 3, size=w)) for _ in range(count)]
    if count >= 2 and rng.random() < 0.4:  # equal and opposite terms, to exercise the grouping
        columns[1], rows[1] = columns[0], tuple(-v for v in rows[0]) if rng.random() < 0.5 else rows[0]
    if rng.random() < 0.5:
        chosen = [k for k in range(count) if rng.random() < 0.5]
        base = base - sum((np.outer(columns[k], rows[k]) for k in chosen), np.zeros((d, w), dtype=np.int64))
    return RankQuestion([[int(v) for v in row] for row in base], columns, rows, q)


def decided_as_brute(question, tuning: DegenerateTuning):
    """decide_rank's answer, held to the brute force: its status, and a found z among the brute force's solutions."""
    brute = rank_question_brute(question.base, question.columns, question.rows, question.q)
    answer = decide_rank(question, tuning, Budget.of())
    assert answer.status == ("found" if brute else "refuted"), (question, answer)
    if answer.status == "found":
        assert tuple(int(k in answer.chosen) for k in range(len(question.columns))) in brute
    return answer


def test_rank_questions_match_brute_force():
    rng = np.random.default_rng(7)
    seen = {"found": 0, "refuted": 0}
    for trial in range(300):
        question = random_question(rng, q=1 + trial % 2)
        brute = rank_question_brute(question.base, question.columns, question.rows, question.q)
        answer = decide_rank(question, DegenerateTuning(max_combinations=1 << 12, chunk=8, seed=trial), Budget.of())
        assert answer.status == ("found" if brute else "refuted"), (question, answer)
        seen[answer.status] += 1
        if answer.status == "found":
            z = [int(k in answer.chosen) for k in range(len(question.columns))]
            assert tuple(z) in brute
    assert min(seen.values()) >= 60, seen


def test_the_meet_in_the_middle_mod_p_matches_brute_force():
    """With screening switched off, every rank question goes to the modular meet in the middle (both sides, q = 1, 2)."""
    rng = np.random.default_rng(17)
    meet_only = DegenerateTuning(max_combinations=0)
    seen = {"found": 0, "refuted": 0}
    for trial in range(160):
        question = random_question(rng, q=1 + trial % 2)
        answer = decided_as_brute(question, meet_only)
        if answer.how == "meet":
            seen[answer.status] += 1
    assert min(seen.values()) >= 20, seen


@pytest.mark.parametrize("screens", [2, 0])
def test_the_meet_mod_2_with_screened_matches_matches_brute_force(screens):
    """Matches counted as free make p = 2 the cheapest prime: few subspaces, many matches, each screened mod 2³¹ − 1
    (with the groups that vanish mod 2 left out of the match and screened over their coefficients), or, with no
    screen, each checked exactly."""
    rng = np.random.default_rng(18)
    screened_meet = DegenerateTuning(max_combinations=0, check_weight=0, screens=screens)
    seen = {"found": 0, "refuted": 0}
    for trial in range(120):
        question = random_question(rng, q=1 + trial % 2)
        plans = meet_plans(question, groups_of(question), screened_meet.meet_rows, screened_meet.check_weight)
        assert plans and plans[0].p == 2
        answer = decided_as_brute(question, screened_meet)
        if answer.how == "meet":
            seen[answer.status] += 1
    assert min(seen.values()) >= 15, seen


def test_the_rank_bound_never_exceeds_a_reachable_rank():
    """The bound holds for every real z; checked on 0/1 and on random rational z."""
    rng = np.random.default_rng(8)
    for _ in range(200):
        question = random_question(rng, q=1)
        bound = rank_bound(question)
        for _ in range(6):
            z = [Fraction(int(rng.integers(-3, 4)), int(rng.integers(1, 4))) for _ in question.columns]
            total = [[Fraction(question.base[i][j]) + sum(z[k] * question.columns[k][i] * question.rows[k][j] for k in range(len(z)))
                      for j in range(question.w)] for i in range(question.d)]
            matrix = flint.fmpq_mat(question.d, question.w, [flint.fmpq(v.numerator, v.denominator) for row in total for v in row])
            assert bound <= matrix.rank()


def test_the_rank_bound_refutes_what_terms_cannot_reach():
    # B0 = I (rank 3); every term lives in the first row and column: rank ≥ 3 − 1 = 2 for every z, so rank ≤ 1 is refuted
    question = RankQuestion([[1, 0, 0], [0, 1, 0], [0, 0, 1]], [(1, 0, 0), (2, 0, 0)], [(1, 1, 0), (0, 1, 1)], q=1)
    assert rank_bound(question) == 2
    assert decide_rank(question, DegenerateTuning(chunk=8), Budget.of()).how == "bound"
    assert rank_question_brute(question.base, question.columns, question.rows, 1) == []


def test_modular_determinants_match_exact_ones():
    rng = np.random.default_rng(9)
    for k in (1, 2, 3, 4):
        stack = rng.integers(-50, 51, size=(200, k, k))
        stack[::7, 1 % k] = stack[::7, 0]  # singular ones too
        got = det_mod(stack % PRIME)
        for matrix, value in zip(stack, got):
            exact = flint.fmpz_mat(k, k, [int(v) for v in matrix.ravel()]).det()
            assert int(exact) % PRIME == int(value)


def test_a_rank_question_past_its_budget_is_open():
    rng = np.random.default_rng(10)
    columns = [tuple(int(v) for v in rng.integers(-2, 3, size=3)) for _ in range(12)]
    rows = [tuple(int(v) for v in rng.integers(-2, 3, size=3)) for _ in range(12)]
    question = RankQuestion([[1, 0, 0], [0, 1, 0], [0, 0, 1]], columns, rows, q=1)
    answer = decide_rank(question, DegenerateTuning(max_combinations=100, max_meet=0, chunk=8, max_short_systems=0), Budget.of())
    assert answer.status == "open" and answer.how == "budget"
    assert answer.work["short"]["limit"] == "max_short_systems" and answer.work["short"]["systems"] > 0
    stopped = Budget.of(stop=threading.Event())
    stopped.stop.set()
    answer = decide_rank(question, DegenerateTuning(max_combinations=1 << 13, chunk=8), stopped)
    assert answer.status == "open" and answer.how == "interrupted"


# ====================================================== the decision
def test_levels_skip_the_dominated_ones():
    assert levels_of(1, 5) == [1]
    assert levels_of(2, 5) == [0, 2]
    assert levels_of(5, 5) == [1, 3, 5]
    assert levels_of(2, 1) == [0, 1]  # the top flat (all directions) cannot be extended
    assert levels_of(0, 0) == [0]


@pytest.mark.parametrize("activation", ["relu", "leaky_relu:1/2", "gelu"])
def test_section_7_matches_the_brute_force_reference(activation):
    rng = np.random.default_rng({"relu": 1, "leaky_relu:1/2": 2, "gelu": 3}[activation])
    seen = {"absorbable": 0, "not_absorbable": 0}
    for trial in range(90):
        d = int(rng.integers(1, 4))
        n = int(rng.integers(d, 3 * d + 2))
        instance = low_precision(rng, d, n, bound=int(rng.integers(1, 3)), biases=trial % 3 == 0, activation=activation)
        if n >= 2 and trial % 2:
            up = instance.W_up.copy()
            up[1] = up[0] * int(rng.choice([1, -1, 2]))
            instance = Instance(up, instance.W_down, b_up=instance.b_up, activation=activation)
        if len(section_7_reference_classes_cap(instance)) > 11:
            continue
        result = decide_degenerate(instance)
        assert result.decided, result.reason
        assert (result.status == "absorbable") == section_7_reference(instance), (instance.W_up, instance.W_down, instance.b_up)
        seen[result.status] += 1
        if result.status == "absorbable":
            assert_witness(instance, result)
    assert min(seen.values()) >= 15, seen


def section_7_reference_classes_cap(instance):
    from reference import section_7_classes

    return section_7_classes(instance)[0]


def test_verdicts_are_invariant_under_rewriting_the_same_function():
    """Units permuted and rescaled by positive rationals: the same ReLU block, so the same verdict."""
    rng = np.random.default_rng(11)
    verdicts = {"absorbable": 0, "not_absorbable": 0}
    checked = 0
    for trial in range(40):
        d = int(rng.integers(2, 5))
        instance = low_precision(rng, d, int(rng.integers(2 * d, 4 * d + 1)), bound=1 + trial % 2, biases=trial % 4 == 0)
        if find_degeneracy(instance).nondegenerate:
            continue
        first = decide_degenerate(instance)
        assert first.decided, first.reason
        for _ in range(2):
            other = rewritten(instance, rng)
            again = decide_degenerate(other)
            assert again.status == first.status, (instance.W_up, instance.W_down, again.reason)
            if again.status == "absorbable":
                assert_witness(other, again)
        verdicts[first.status] += 1
        checked += 1
    assert checked >= 25 and min(verdicts.values()) >= 5, verdicts


@pytest.mark.slow
def test_survey_sized_verdicts_are_invariant_too():
    """The same check on blocks of the survey's family (d = 5, 6; n = 4d; ternary and [−2, 2])."""
    rng = np.random.default_rng(19)
    checked = 0
    for trial in range(12):
        d = 5 + trial % 2
        instance = low_precision(rng, d, 4 * d, bound=1 + (trial // 2) % 2)
        if find_degeneracy(instance).nondegenerate:
            continue
        first = decide_degenerate(instance)
        assert first.decided, first.reason
        again = decide_degenerate(rewritten(instance, rng))
        assert again.status == first.status
        checked += 1
    assert checked >= 4


def test_rewriting_keeps_the_function():
    """The rewriting used above is the same function (else the invariance test would prove nothing)."""
    rng = np.random.default_rng(12)
    instance = low_precision(rng, 3, 9, bound=2, biases=True)
    other = rewritten(instance, rng)
    x = rng.uniform(-3, 3, size=(32, 3))

    def forward(block):
        up, down, b_up = (np.array(a, dtype=float) for a in exact_arrays(block))
        return x + np.maximum(x @ up.T + b_up, 0) @ down.T

    assert np.allclose(forward(instance), forward(other), atol=1e-9)
    assert not np.array_equal(instance.W_up, other.W_up)


def test_survey_sized_positives_carry_checked_witnesses():
    """Wide ternary blocks with a few spare units absorb, found on the first flats; the witness is exact."""
    rng = np.random.default_rng(13)
    found = 0
    for _ in range(6):
        instance = low_precision(rng, 6, 60, bound=1)
        result = decide_degenerate(instance)
        if result.status == "absorbable":
            assert_witness(instance, result)
            found += 1
    assert found >= 3


def test_positives_past_an_open_rank_level_are_found_whatever_the_seed():
    """d = 5, n = 60, weights in [−2, 2]: three spare units; level 1 (q = 1) is a MinRank question over 56 signs that
    stays open, and about one plane in fifty of level 3 absorbs. The probe after the open case keeps drawing planes,
    so every seed finds one, and each witness equals the block."""
    rng = np.random.default_rng([0, 5, 2, 12, 0])
    instance = Instance(rng.integers(-2, 3, size=(60, 5)), rng.integers(-2, 3, size=(5, 60)))
    for seed in range(3):
        result = decide_degenerate(instance, time_limit=60, tuning=DegenerateTuning(seed=seed))
        assert result.status == "absorbable", result.reason
        assert_witness(instance, result)


@pytest.mark.slow
def test_a_negative_that_needs_the_meet_mod_2_is_invariant_under_rewriting():
    """d = 5, n = 40, weights in [−2, 2]: two spare units; rank ≤ 1 over 38 signs, refuted by the meet in the middle
    with screened matches, then every plane by a 0/1 system. Written differently, the same function gets the same
    proof, and the levels refuted name the meet."""
    rng = np.random.default_rng([0, 5, 2, 8, 0])
    instance = Instance(rng.integers(-2, 3, size=(40, 5)), rng.integers(-2, 3, size=(5, 40)))
    first = decide_degenerate(instance, time_limit=120)
    assert first.status == "not_absorbable", first.reason
    assert {"meet"} <= {how for level in first.certificate["levels"] for how in level["refuted"]}
    again = decide_degenerate(rewritten(instance, np.random.default_rng(21)), time_limit=120)
    assert again.status == "not_absorbable", again.reason


def test_open_cases_are_named_in_the_stages():
    """A tuning too small for the rank levels leaves them open; the result names the level, why and the size of
    the work, and the default tuning decides the same blocks as the brute-force reference."""
    rng = np.random.default_rng(14)
    tight = DegenerateTuning(max_combinations=1, max_meet=0, probe_flats=0, max_short_systems=0)
    named = 0
    for _ in range(12):
        instance = low_precision(rng, 3, 7, bound=2)
        up = instance.W_up.copy()
        up[1], up[3] = 2 * up[0], -up[2]  # two merges: two spare units, levels u = 0 (q = 1) and u = 2 (q = 0)
        instance = Instance(up, instance.W_down)
        result = decide_degenerate(instance, tuning=tight)
        if result.status != "unknown":
            continue
        named += 1
        open_levels = [(case["u"], case["q"]) for case in result.stages["open"]]
        assert open_levels and all(q >= 1 for _, q in open_levels), result.stages
        assert all(case["kind"] == "minrank" for case in result.stages["open"])
        for case in result.stages["open"]:  # level 0: every class is active, each term at most doubles the vectors
            work = case["work"]
            assert work["terms"] == result.stages["classes"]
            assert tight.max_combinations < work["coefficient_vectors"] <= 2 ** work["terms"]
            assert work["limit"] == "max_meet" and work["meet_entries"] > tight.max_meet
        halves = decide_degenerate(instance, tuning=replace(tight, meet_rows=1))  # no half table fits: the halves' limit
        assert [case["work"]["limit"] for case in halves.stages["open"]] == ["meet_rows"] * len(halves.stages["open"])
        assert all(case["work"]["meet_entries"] is None for case in halves.stages["open"])
        states = {level["state"] for level in result.stages["levels"]}
        assert "open" in states
        again = decide_degenerate(rewritten(instance, np.random.default_rng(named)), tuning=tight)  # units permuted and rescaled
        assert again.status == "unknown"
        assert sorted((c["u"], c["q"], c["kind"], c["work"]["terms"], c["work"]["coefficient_vectors"]) for c in again.stages["open"]) \
            == sorted((c["u"], c["q"], c["kind"], c["work"]["terms"], c["work"]["coefficient_vectors"]) for c in result.stages["open"])
        full = decide_degenerate(instance)
        assert full.decided and (full.status == "absorbable") == section_7_reference(instance)
    assert named >= 6


def test_a_stop_request_leaves_the_decision_open():
    rng = np.random.default_rng(15)
    for _ in range(20):
        instance = low_precision(rng, 4, 12, bound=2)
        if find_degeneracy(instance).nondegenerate:
            continue
        stopped = Budget.of(stop=threading.Event())
        stopped.stop.set()
        result = decide_degenerate(instance, budget=stopped)
        assert result.status in ("unknown", "absorbable")  # a trivial level needs no search
        if result.status == "unknown":
            assert any(case["kind"] == "halted" for case in result.stages["open"])
            return
    raise AssertionError("no block needed a search")


def test_the_solver_reaches_the_same_verdicts():
    rng = np.random.default_rng(16)
    by_section_7 = 0
    for _ in range(16):
        instance = low_precision(rng, 3, 8, bound=1)
        result = solve(instance)
        if result.index_set is not None or find_degeneracy(instance).nondegenerate:
            continue
        assert result.decided
        assert (result.status == "absorbable") == section_7_reference(instance)
        by_section_7 += 1
    assert by_section_7 >= 4


def test_flats_are_counted_once_per_span():
    """Lines e1, e2, e1 + e2, e3 span four planes, not six: {e1, e2} holds e1 + e2 (MATH.md §7.2: only V matters)."""
    up = np.array([[1, 0, 0], [2, 0, 0], [0, 1, 0], [1, 1, 0], [0, 0, 1], [0, 0, 3]])  # two merges: s = 2
    rng = np.random.default_rng(18)
    negatives = 0
    for _ in range(12):
        instance = Instance(up, rng.integers(-2, 3, size=(3, 6)))
        result = decide_degenerate(instance)
        assert (result.status == "absorbable") == section_7_reference(instance)
        if result.status == "not_absorbable" and result.stages["classes"] == 4:
            planes = next(level for level in result.stages["levels"] if level["u"] == 2)
            assert planes["state"] == "refuted" and planes["flats"] == 4
            assert result.certificate["levels"] == result.stages["levels"]
            negatives += 1
    assert negatives >= 5


def test_units_are_counted_once_per_class_whatever_their_order():
    # the same two collinear units written in every order give one class and one spare unit
    for order in itertools.permutations(range(3)):
        up = np.array([[1, 0], [2, 0], [0, 1]])[list(order)]
        down = np.array([[1, 1, 0], [0, 0, 1]])[:, list(order)]
        result = decide_degenerate(Instance(up, down))
        assert result.status == "not_absorbable" and result.stages["classes"] == 2 and result.stages["spare"] == 1


def test_the_solver_keeps_the_section_7_record_beside_its_search():
    """x + σ(x) + σ(2x) on R: no S satisfies (★), §7 decides it; the block's stages hold the search and §7's record,
    the same record as §7 alone gives."""
    instance = Instance(np.array([[1], [2]]), np.array([[1, 1]]))
    solved = solve(instance)
    alone = decide_degenerate(instance)
    assert solved.status == alone.status == "absorbable" and solved.engine == "degenerate"
    assert solved.stages["reduce"]["n"] == instance.n  # the search that found no S recorded itself in the same stages
    record = solved.stages["degenerate"]
    assert (record["classes"], record["spare"]) == (alone.stages["classes"], alone.stages["spare"]) == (1, 1)
    assert record["levels"] == alone.stages["levels"]


# ---------------------------------------------------------------- Lemma 7.7e: one of a and b is short
def test_the_short_side_systems_match_brute_force():
    """With screening and the meet switched off, every q = 1 question past the rank bound goes to Lemma 7.7e."""
    rng = np.random.default_rng(23)
    short_only = DegenerateTuning(max_combinations=0, max_meet=0)
    seen = {"found": 0, "refuted": 0}
    for _ in range(120):
        question = random_question(rng, q=1, most_terms=13)
        answer = decided_as_brute(question, short_only)
        if answer.how == "short":
            seen[answer.status] += 1
    assert min(seen.values()) >= 15, seen


def test_the_short_boxes_cover_every_rank_one_matrix_within_the_bounds():
    """Lemma 7.7e's covering, checked directly: every a·b'ᵀ ≠ 0 with |a_i·b'_j| ≤ N_ij has a in a's box or b in b's box."""
    rng = np.random.default_rng(5)
    for _ in range(6):
        d, w = int(rng.integers(2, 4)), int(rng.integers(2, 4))
        base = rng.integers(-4, 5, size=(d, w))
        question = RankQuestion([[int(v) for v in row] for row in base], [tuple(int(v) for v in rng.integers(-1, 2, size=d))],
                                [tuple(int(v) for v in rng.integers(-1, 2, size=w))], 1)
        N = entry_bounds(question)
        plan = short_plan(question)
        a_box, b_box = set(short_vectors(plan.a_limits)), set(short_vectors(plan.b_limits))
        assert plan.count == 1 + len(a_box) + len(b_box)
        top = max(max(row) for row in N)

        def canonical(v):
            g = np.gcd.reduce(np.abs(v))
            v = tuple(int(x) // int(g) for x in v)
            return v if next(x for x in v if x) > 0 else tuple(-x for x in v)

        for a in itertools.product(range(-top, top + 1), repeat=d):
            if not any(a) or np.gcd.reduce(np.abs(a)) != 1:
                continue
            for b in itertools.product(range(-top, top + 1), repeat=w):
                if any(b) and all(abs(a[i] * b[j]) <= N[i][j] for i in range(d) for j in range(w)):
                    assert canonical(a) in a_box or canonical(b) in b_box, (N, a, b)


def test_the_short_side_decides_blocks_the_meet_leaves_open():
    """Blocks whose level 0 (q = 1) the meet cannot afford: Lemma 7.7e decides them as the reference does, and the
    same blocks with units permuted and rescaled get the same verdict; with no systems allowed they stay open and
    the work names Lemma 7.7e's count."""
    rng = np.random.default_rng(14)
    no_meet = DegenerateTuning(max_combinations=1, max_meet=0, probe_flats=0)
    decided = 0
    for _ in range(10):
        instance = low_precision(rng, 3, 7, bound=2)
        up = instance.W_up.copy()
        up[1], up[3] = 2 * up[0], -up[2]  # two merges: two spare units, levels u = 0 (q = 1) and u = 2 (q = 0)
        instance = Instance(up, instance.W_down)
        closed = decide_degenerate(instance, tuning=replace(no_meet, max_short_systems=0))
        if closed.status != "unknown":
            continue
        shorts = [case["work"]["short"] for case in closed.stages["open"] if case["q"] == 1]
        assert shorts and all(s["limit"] == "max_short_systems" and s["systems"] > 0 for s in shorts)
        result = decide_degenerate(instance, tuning=no_meet)
        assert result.status == ("absorbable" if section_7_reference(instance) else "not_absorbable")
        again = decide_degenerate(rewritten(instance, np.random.default_rng(decided)), tuning=no_meet)
        assert again.status == result.status
        decided += 1
    assert decided >= 3


def test_the_short_side_stops_when_its_predicted_time_exceeds_the_limit():
    """Thousands of systems with no time allowed: the first few predict the rest, and the question stays open with
    that prediction, never decided wrongly; under a one-second limit it stays open too."""
    rng = np.random.default_rng(3)
    question = RankQuestion([[int(v) for v in row] for row in rng.integers(-3, 4, (4, 4))],
                            [tuple(int(v) for v in rng.integers(-2, 3, 4)) for _ in range(30)],
                            [tuple(int(v) for v in rng.integers(-2, 3, 4)) for _ in range(30)], 1)
    plan = short_plan(question)
    tuning = DegenerateTuning(max_combinations=0, max_meet=0, short_probe=4, max_short_seconds=0.0)
    answer = decide_rank(question, tuning, Budget.of())
    assert answer.status == "open" and answer.how == "budget"
    short = answer.work["short"]
    assert short["limit"] == "time" and short["systems"] == plan.count and short["done"] == tuning.short_probe
    assert short["seconds"] > tuning.max_short_seconds
    limited = decide_rank(question, replace(tuning, max_short_seconds=600.0), Budget.of(1.0))
    assert limited.status == "open" and (limited.how == TIME_LIMIT or limited.work["short"]["limit"] == "time")


def test_the_shared_kernel_gives_each_direction_its_whole_integer_kernel():
    """Where Φ maps onto Z^{d·w}, every direction's kernel basis built from Φ's spans the same lattice as
    reduce_system's basis of that system (equal Hermite normal forms), and its z0 solves the system."""
    rng = np.random.default_rng(31)
    checked = 0
    for _ in range(40):
        d, w, m = int(rng.integers(2, 4)), int(rng.integers(2, 4)), int(rng.integers(10, 16))
        question = RankQuestion([[int(v) for v in row] for row in rng.integers(-3, 4, size=(d, w))],
                                [tuple(int(v) for v in rng.integers(-2, 3, size=d)) for _ in range(m)],
                                [tuple(int(v) for v in rng.integers(-2, 3, size=w)) for _ in range(m)], 1)
        shared = shared_kernel(question)
        if shared is None:
            continue
        plan = short_plan(question)
        directions = [(None, "column")] + [(a, "column") for a in short_vectors(plan.a_limits)][:3] + [(b, "row") for b in short_vectors(plan.b_limits)][:3]
        for vector, side in directions:
            system = direction_system(question, vector, side)
            built = shared.reduction(question, vector, side)
            reference = reduce_system(system.M, system.t)
            assert built.kernel.shape == reference.kernel.shape
            hnf = [flint.fmpz_mat([[int(v) for v in column] for column in basis.T]).hnf() for basis in (built.kernel, reference.kernel)]
            assert hnf[0] == hnf[1]
            assert all(sum(int(system.M[r, k]) * int(built.z0[k]) for k in range(m)) == int(system.t[r]) for r in range(system.m))
            checked += 1
    assert checked >= 20


def test_the_short_side_from_the_shared_kernel_matches_brute_force():
    """Questions whose terms map onto every d × w matrix, so each system starts from the shared kernel: the answers
    match the brute force, a third of them with a planted rank-one sum."""
    rng = np.random.default_rng(37)
    short_only = DegenerateTuning(max_combinations=0, max_meet=0)
    seen = {"found": 0, "refuted": 0}
    for _ in range(300):
        if min(seen.values()) >= 5:
            break
        d, w, m = int(rng.integers(2, 4)), int(rng.integers(2, 4)), int(rng.integers(9, 12))
        columns = [tuple(int(v) for v in rng.integers(-2, 3, size=d)) for _ in range(m)]
        rows = [tuple(int(v) for v in rng.integers(-2, 3, size=w)) for _ in range(m)]
        base = rng.integers(-9, 10, size=(d, w))
        if rng.random() < 0.3:  # B(z) = a·bᵀ at a random z
            chosen = [k for k in range(m) if rng.random() < 0.5]
            base = np.outer(rng.integers(-2, 3, size=d), rng.integers(-2, 3, size=w)) - sum(
                (np.outer(columns[k], rows[k]) for k in chosen), np.zeros((d, w), dtype=np.int64))
        question = RankQuestion([[int(v) for v in row] for row in base], columns, rows, 1)
        if shared_kernel(question) is None or rank_bound(question) > 1:
            continue
        answer = decided_as_brute(question, short_only)
        if answer.how == "short":
            seen[answer.status] += 1
    assert min(seen.values()) >= 5, seen
