"""Positive solutions of the subset conditions of two blocks whose slopes are linear forms (MATH.md §9.5, Theorem 9.12).

g_1's slopes are linear forms in positive variables u and g_2's in 1/u;
Lemma 9.5's condition for a block with n breakpoints is then one
homogeneous linear equation per subset. :func:`solve` finds positive u
satisfying every full block's condition, proves there are none, or says
``irrational`` (both blocks full, two or more variables free, and a real
solution exists but none rational was found: Lemma 9.14b) or
``undecided`` (no proof either way).
"""

from __future__ import annotations

import itertools
from fractions import Fraction

from indexset.budget import Budget
from indexset.theory import line_positive
from indexset.theory.line import balanced
from indexset.theory.line_positive import both_signs, positive_root

UNDECIDED, IRRATIONAL = "undecided", "irrational"


def dedupe(forms: list) -> list:
    """The forms with each run of equal neighbours kept once (a breakpoint is where the form changes)."""
    out = [forms[0]]
    for form in forms[1:]:
        if form != out[-1]:
            out.append(form)
    return out


def forms_at(forms: list, u: tuple, inverse: bool = False) -> list:
    """The forms' values at u (at 1/u with ``inverse``, g_2's), as one-variable forms, equal neighbours kept once."""
    return dedupe([(sum(c / v if inverse else c * v for c, v in zip(form, u)),) for form in forms])


def _subset_forms(forms: list) -> list:
    """For a block with slopes ``forms``: Σ_{j∈P} jump_j − last slope, for every subset P of its breakpoints."""
    jumps = [tuple(b - a for a, b in zip(left, right)) for left, right in itertools.pairwise(forms)]
    last = forms[-1]
    out = []
    for choice in itertools.product((0, 1), repeat=len(jumps)):
        total = [-v for v in last]
        for c, jump in zip(choice, jumps):
            if c:
                total = [t + v for t, v in zip(total, jump)]
        out.append(tuple(total))
    return out


def solve(first: list, second: list, n: int, size: int, tuning: line_positive.PositiveTuning | None = None,
          clock: Budget | None = None):
    """Positive values of the variables making every block with n breakpoints balanced; None, IRRATIONAL or UNDECIDED.

    ``clock``: past it the pairs of two full blocks not yet tried leave the answer UNDECIDED.
    """
    full = [len(first) - 1 == n, len(second) - 1 == n]
    if len(first) - 1 > n or len(second) - 1 > n:
        return None
    ones = tuple(Fraction(1) for _ in range(size))
    if not any(full):
        return ones
    if size == 1:
        return ones if fits_alone(first, n) and fits_alone(second, n) else None
    if full[0] != full[1]:
        forms = first if full[0] else second
        for form in _subset_forms(forms):
            u = positive_root(form)
            if u is not None:
                return u if full[0] else tuple(1 / v for v in u)
        return None
    return _both_full(_subset_forms(first), _subset_forms(second), size, tuning, clock)


def fits_alone(forms: list, n: int) -> bool:
    """Whether one block of these forms, with no variable left, is a block of width n: fewer than n breakpoints, or n and balanced."""
    if len(forms) - 1 != n:
        return len(forms) - 1 < n
    return balanced([b[0] - a[0] for a, b in itertools.pairwise(forms)], forms[-1][0]) is not None


def critical_ratios(first: list, second: list) -> set:
    """Every q > 0 where, at u = (1, q), a jump or a subset form of either block vanishes (two variables; g_2's forms in 1/u)."""
    out = set()
    for forms, inverse in ((first, False), (second, True)):
        jumps = [tuple(b - a for a, b in zip(left, right)) for left, right in itertools.pairwise(forms)]
        for c0, c1 in [*jumps, *_subset_forms(forms)]:
            root = (-c1 / c0 if c0 else None) if inverse else (-c0 / c1 if c1 else None)
            if root is not None and root > 0:
                out.add(root)
    return out


def middle_slopes(jumps: list, last: Fraction, entry: Fraction, leave: Fraction) -> tuple:
    """Lemma 9.5 for a full block whose other jumps are ``jumps`` (numbers), slope ``last`` at +∞, and two more breakpoints entry → s → leave.

    Returns
    -------
    tuple
        ``(free, values)``: whether some set of breakpoints balances for
        every s (it holds both new ones or neither), and the s that balance
        a set holding exactly one of them (s − entry, or leave − s).
    """
    free, values = False, set()
    for choice in itertools.product((0, 1), repeat=len(jumps)):
        rest = sum((jump for c, jump in zip(choice, jumps) if c), Fraction(0)) - last
        free = free or rest == 0 or rest + leave - entry == 0
        values |= {entry - rest, leave + rest}
    return free, values


def _both_full(first: list, second: list, size: int, tuning: line_positive.PositiveTuning | None = None,
               clock: Budget | None = None):
    """u > 0 with a·u = 0 for some a in ``first`` and b·(1/u) = 0 for some b in ``second``; None, IRRATIONAL or UNDECIDED."""
    first = [a for a in first if not any(a) or both_signs(a)]
    second = [b for b in second if not any(b) or both_signs(b)]
    if not first or not second:
        return None
    if size == 2:
        # u = (1, q): a_0 + a_1 q = 0 and b_0 + b_1 / q = 0.
        def roots(forms, inverse):
            out = set()
            for c0, c1 in forms:
                if c0 == 0 and c1 == 0:
                    return None
                out.add(-c1 / c0 if inverse else -c0 / c1)
            return out
        q_first, q_second = roots(first, False), roots(second, True)
        if q_first is None or q_second is None:
            q = next(iter((q_second if q_first is None else q_first) or {Fraction(1)}))
            return (Fraction(1), q)
        common = sorted(q_first & q_second)
        return (Fraction(1), common[0]) if common else None
    kinds = set()
    for a, b in itertools.product(first, second):
        if clock is not None and clock.expired():
            kinds.add(line_positive.OPEN)  # the pairs not tried
            break
        sliced = _slice(a, b, size)
        if sliced is not None:
            return sliced
        answer = line_positive.two_full(a, b, tuning)
        if answer.kind == line_positive.RATIONAL:
            return answer.u
        kinds.add(answer.kind)
    return IRRATIONAL if line_positive.IRRATIONAL in kinds else UNDECIDED if line_positive.OPEN in kinds else None


def _slice(a: tuple, b: tuple, size: int) -> tuple | None:
    """A rational solution with every variable but one equal to u_0, if some such slice has one."""
    for free in range(size):
        a2 = (sum(v for i, v in enumerate(a) if i != free), a[free])
        b2 = (sum(v for i, v in enumerate(b) if i != free), b[free])
        if (any(a2) and not both_signs(a2)) or (any(b2) and not both_signs(b2)):
            continue
        found = _both_full([a2], [b2], 2)
        if found is not None:
            return tuple(found[1] if i == free else Fraction(1) for i in range(size))
    return None
