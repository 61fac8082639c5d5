"""Lemma 9.14b (MATH.md §9.5): u > 0 with a·u = 0 and Σ b_i/u_i = 0, the leaf of Theorem 9.12 with two full blocks.

References, none of them the code under test: for three variables an
exact elimination of its own (u fixed to 1 in one coordinate, a·u = 0
solved for another, the quadratic in the third decided by its
discriminant with signs of p + q√D compared exactly); for more, every
rational answer checked by substitution, every irrational one by its two
bracket points (in the cone, φ of opposite signs: a proof by the
intermediate value theorem), and every "none" held against seeded
sampling of the cone by a parametrisation of its own.
"""

from __future__ import annotations

import itertools
import math
import random
from fractions import Fraction

import pytest

from indexset.budget import Budget
from indexset.theory import line_balance
from indexset.theory.line_positive import IRRATIONAL, NONE, OPEN, RATIONAL, PositiveTuning, two_full


def both_signs(form) -> bool:
    return any(v > 0 for v in form) and any(v < 0 for v in form)


def random_pair(rng: random.Random, k: int) -> tuple:
    """Integer forms a and b of length k, each with entries of both signs."""
    while True:
        a = tuple(Fraction(rng.randint(-3, 3)) for _ in range(k))
        b = tuple(Fraction(rng.randint(-5, 5)) for _ in range(k))
        if both_signs(a) and both_signs(b):
            return a, b


def phi(b, u) -> Fraction:
    return sum(v / w for v, w in zip(b, u))


def solves(a, b, u) -> bool:
    return all(v > 0 for v in u) and sum(x * y for x, y in zip(a, u)) == 0 and phi(b, u) == 0


def _sign_with_root(p: Fraction, q: Fraction, disc: Fraction) -> int:
    """The sign of p + q·√disc (disc > 0 not a square), exactly."""
    if q == 0 or p == 0:
        return (p > 0) - (p < 0) if q == 0 else (q > 0) - (q < 0)
    if (p > 0) == (q > 0):
        return 1 if p > 0 else -1
    bigger_root = q * q * disc > p * p
    return ((q > 0) - (q < 0)) if bigger_root else ((p > 0) - (p < 0))


def _square_root(value: Fraction) -> Fraction | None:
    num, den = math.isqrt(value.numerator), math.isqrt(value.denominator)
    return Fraction(num, den) if num * num == value.numerator and den * den == value.denominator else None


def three_by_elimination(a, b) -> str:
    """rational / irrational / none for k = 3: u_m = 1, u_j solved from a·u = 0 as a linear function of the last, u_s = s > 0."""
    j = next(i for i in range(3) if a[i] != 0)
    m, s_index = [i for i in range(3) if i != j]
    # u_j = c0 + c1·s, from a_j u_j + a_m·1 + a_s·s = 0.
    c0, c1 = -a[m] / a[j], -a[s_index] / a[j]
    # b_j/(c0 + c1 s) + b_m + b_s/s = 0, times s·(c0 + c1 s): b_j s + b_m s (c0 + c1 s) + b_s (c0 + c1 s) = 0.
    quad = b[m] * c1
    lin = b[j] + b[m] * c0 + b[s_index] * c1
    const = b[s_index] * c0

    def admissible(p, q, disc) -> bool:
        """s = p + q√disc is positive and gives u_j > 0."""
        return _sign_with_root(p, q, disc) > 0 and _sign_with_root(c0 + c1 * p, c1 * q, disc) > 0

    if quad == 0 and lin == 0:
        # Every s solves (or none does): some s > 0 with u_j > 0 exists iff c0 > 0 or c1 > 0.
        return "rational" if const == 0 and (c0 > 0 or c1 > 0) else "none"
    if quad == 0:
        s = -const / lin
        return "rational" if s > 0 and c0 + c1 * s > 0 else "none"
    disc = lin * lin - 4 * quad * const
    if disc < 0:
        return "none"
    root = _square_root(disc)
    if root is not None:
        roots = [(-lin + sign * root) / (2 * quad) for sign in (1, -1)]
        return "rational" if any(s > 0 and c0 + c1 * s > 0 for s in roots) else "none"
    ok = [admissible(-lin / (2 * quad), sign / (2 * quad), disc) for sign in (1, -1)]
    return "irrational" if any(ok) else "none"


def cone_samples(rng: random.Random, a, count: int) -> list:
    """Points of {u > 0 : a·u = 0}: random positive coordinates but one, the last solved from a·u = 0 when positive."""
    k, out = len(a), []
    pivots = [i for i in range(k) if a[i] != 0]
    for _ in range(count * 20):
        j = rng.choice(pivots)
        u = [Fraction(rng.randint(1, 400), rng.randint(1, 400)) for _ in range(k)]
        u[j] = -sum(a[i] * u[i] for i in range(k) if i != j) / a[j]
        if u[j] > 0:
            out.append(tuple(u))
        if len(out) == count:
            break
    return out


def test_three_variables_agree_with_the_elimination():
    """k = 3 is decided exactly: the kind equals the elimination's, rational answers solve, and all three kinds occur."""
    rng, kinds = random.Random(3), {}
    for _ in range(400):
        a, b = random_pair(rng, 3)
        answer = two_full(a, b)
        expected = three_by_elimination(a, b)
        assert answer.kind == expected, (a, b)
        if answer.kind == RATIONAL:
            assert solves(a, b, answer.u)
        kinds[expected] = kinds.get(expected, 0) + 1
    assert min(kinds.get(kind, 0) for kind in ("rational", "irrational", "none")) >= 20, kinds


@pytest.mark.parametrize("k", [4, 5])
def test_more_variables_hold_up(k):
    """k ≥ 4: a rational u solves, an irrational answer's bracket proves a root, a "none" meets no sign change in the samples."""
    rng, kinds = random.Random(k), {}
    for _ in range(120):
        a, b = random_pair(rng, k)
        answer = two_full(a, b, PositiveTuning(seed=1))
        kinds[answer.kind] = kinds.get(answer.kind, 0) + 1
        if answer.kind == RATIONAL:
            assert solves(a, b, answer.u)
        elif answer.kind == IRRATIONAL:
            low, high = answer.bracket
            for u in (low, high):
                assert all(v > 0 for v in u) and sum(x * y for x, y in zip(a, u)) == 0
            assert phi(b, low) < 0 < phi(b, high)
        elif answer.kind == NONE:
            signs = {phi(b, u) > 0 for u in cone_samples(rng, a, 60)}
            assert len(signs) <= 1 and all(phi(b, u) != 0 for u in cone_samples(rng, a, 20)), (a, b)
    assert kinds.get(RATIONAL, 0) >= 10 and kinds.get(IRRATIONAL, 0) >= 10 and kinds.get(NONE, 0) >= 3, kinds
    assert kinds.get(OPEN, 0) <= 6, kinds  # at most 5% left open by these budgets


def test_an_infimum_on_the_boundary_is_never_called_a_solution():
    """u_2 = u_0 + u_1 + 1.5·u_4 and 1/u_0 + 1/u_1 = 4/u_2 + (nothing): φ > 0 on C by AM-HM, with infimum 0 where u_4 = 0 (no Pólya certificate)."""
    assert two_full((2, 2, -2, 0, 3), (1, 1, -4, 0, 0)).kind in (NONE, OPEN)
    assert two_full((2, 2, -2, 0), (1, 1, -4, 0)).kind == RATIONAL  # u_4 gone: u_0 = u_1 solves


def test_one_sign_forms_and_void_conditions():
    """A form of one sign has no positive root; a zero form leaves the other condition alone, solved rationally."""
    assert two_full((1, 2, 3), (1, -1, 1)).kind == NONE
    assert two_full((1, -1, 1), (1, 2, 0)).kind == NONE
    for a, b in [((0, 0, 0), (1, -2, 3)), ((2, -1, 3), (0, 0, 0)), ((0, 0, 0, 0), (0, 0, 0, 0))]:
        answer = two_full(a, b)
        assert answer.kind == RATIONAL and solves(a, b, answer.u)


def test_the_solver_returns_irrational_only_when_no_pair_is_rational():
    """``line_balance.solve`` with both blocks full and three variables: irrational iff the elimination finds no rational pair and some irrational one."""
    rng, seen = random.Random(11), set()
    n = 2
    for _ in range(300):
        # Three slopes each: two breakpoints apiece, n = 2 full, forms in three variables.
        first = [tuple(Fraction(rng.randint(-2, 2)) for _ in range(3)) for _ in range(3)]
        second = [tuple(Fraction(rng.randint(-2, 2)) for _ in range(3)) for _ in range(3)]
        if any(x == y for x, y in itertools.pairwise(first)) or any(x == y for x, y in itertools.pairwise(second)):
            continue
        answer = line_balance.solve(first, second, n, 3)
        pairs = [(a, b) for a in subset_forms(first) for b in subset_forms(second)
                 if (not any(a) or both_signs(a)) and (not any(b) or both_signs(b))]
        kinds = {kind_of(a, b) for a, b in pairs}
        if isinstance(answer, tuple):
            assert answer_balances(first, second, answer)
            seen.add("rational")
        elif answer == line_balance.IRRATIONAL:
            assert kinds <= {"irrational", "none"} and "irrational" in kinds
            seen.add("irrational")
        else:
            assert answer is None and kinds <= {"none"}
            seen.add("none")
    assert seen == {"rational", "irrational", "none"}


def subset_forms(forms) -> list:
    """Σ_P jumps − last slope for every subset P, written out again for the reference."""
    jumps = [tuple(y - x for x, y in zip(left, right)) for left, right in itertools.pairwise(forms)]
    out = []
    for choice in itertools.product((0, 1), repeat=len(jumps)):
        total = [-v for v in forms[-1]]
        for c, jump in zip(choice, jumps):
            if c:
                total = [t + v for t, v in zip(total, jump)]
        out.append(tuple(total))
    return out


def kind_of(a, b) -> str:
    if not any(a) or not any(b):
        return "rational"
    return three_by_elimination(a, b)


def answer_balances(first, second, u) -> bool:
    """Both blocks, at u, have fewer than n = 2 breakpoints or a balanced subset (Lemma 9.5 written out)."""
    for forms, inverse in ((first, False), (second, True)):
        slopes = [sum(c / v if inverse else c * v for c, v in zip(form, u)) for form in forms]
        kept = [slopes[0], *(s for s, prev in zip(slopes[1:], slopes) if s != prev)]
        if len(kept) - 1 < 2:
            continue
        jumps = [y - x for x, y in itertools.pairwise(kept)]
        if not any(sum(j for c, j in zip(choice, jumps) if c) == kept[-1] for choice in itertools.product((0, 1), repeat=len(jumps))):
            return False
    return all(v > 0 for v in u)


def test_a_stop_request_leaves_two_full_blocks_undecided():
    """Two full blocks in three variables that have a solution: found with a budget, undecided once a stop is requested."""
    rng, stopped = random.Random(5), Budget.of(60)
    stopped.stop.set()
    tried = 0
    while tried < 5:
        first = [tuple(Fraction(rng.randint(-2, 2)) for _ in range(3)) for _ in range(3)]
        second = [tuple(Fraction(rng.randint(-2, 2)) for _ in range(3)) for _ in range(3)]
        if any(x == y for x, y in itertools.pairwise(first)) or any(x == y for x, y in itertools.pairwise(second)):
            continue
        answer = line_balance.solve(first, second, 2, 3, clock=Budget.of(60))
        if answer is None:
            continue
        tried += 1
        assert line_balance.solve(first, second, 2, 3, clock=stopped) == line_balance.UNDECIDED
