"""The bias-free class on R (no bias inside σ): Theorem 9.15 and Propositions 9.15b–9.15d of MATH.md §9.5 (extension).

A bias-free ReLU block of width n ≥ 2 on R is a map with at most one
breakpoint, at its input 0. :func:`decide` answers about stacks of them:
exactly for a strictly monotone composite and for two blocks (Theorem
9.15), by counting (Propositions 9.15b, 9.15c) for three or more, with
witness searches beyond (Propositions 9.9b, 9.9c, 9.15d), and otherwise
through the affine class (:func:`indexset.theory.line_stacks.decide`).
"""

from __future__ import annotations

import itertools
import threading
from fractions import Fraction

from indexset.budget import Budget
from indexset.result import ABSORBABLE, NOT_ABSORBABLE, UNKNOWN
from indexset.theory import line_regroup, line_stacks, line_turns
from indexset.theory.line import LineMap, bias_free_values, block_map, half_line, line_map
from indexset.theory.line_stacks import WIDTH_ONE, LineVerdict

BIAS_FREE_LINE = "MATH.md §9.5, Theorem 9.15 (the bias-free class on R: F strictly monotone, or two blocks)"
BIAS_FREE_COUNT = "MATH.md §9.5, Proposition 9.15b (L bias-free blocks on R break at most 2^L − 1 times)"
BIAS_FREE_FOLD = "MATH.md §9.5, Proposition 9.15c (past 2^(L−1) breakpoints the first bias-free block folds F onto itself at 0)"
BIAS_FREE_THREE = "MATH.md §9.5, Theorem 9.15e (three bias-free blocks on R, decided by Lemma 9.15f)"


def decide(stack, *, time_limit: float | None = None, stop: threading.Event | None = None) -> LineVerdict:
    """The bias-free class on R (no bias inside σ): decided for strictly monotone F and for two or three blocks, else searched.

    A bias-free block of width n ≥ 2 on R is a map with at most one
    breakpoint, at 0. For strictly monotone F (m breakpoints, L blocks) a
    stack of them equals F iff m ≤ L − 1, or m = L and 0 is a breakpoint of
    F; two blocks are decided for any F by :func:`bias_free_pair`, three by
    :func:`three_bias_free` (Theorem 9.15e). For L ≥ 3, more than 2^L − 1
    breakpoints prove that none does (Proposition 9.15b), and so do more
    than 2^(L−1) when F is not folded onto itself at 0 (Proposition 9.15c,
    :func:`folding_ratio`); for L ≥ 4, so do more than L turning values
    (Proposition 9.19: each block turns at most once) and turns that match
    at none of them (Proposition 9.20). Beyond these, groups
    and rewrites of pairs (Propositions 9.9b, 9.9c) and a monotone first
    block (Proposition 9.15d, :func:`bias_free_maps`) look for a witness.
    Otherwise an affine-class ``not_absorbable`` carries over (bias-free
    blocks are affine blocks), and an affine witness counts only if it has
    no bias inside σ.

    Returns
    -------
    LineVerdict
    """
    target = line_map(stack)
    n, layers, m = stack.n, stack.L, len(target.breakpoints)
    facts = {"L": layers, "n": n, "m": m, "class": "bias-free"}
    if n == 1 and target.slopes[0] != 0 and target.slopes[-1] != 0:
        return LineVerdict(NOT_ABSORBABLE, "every bias-free ReLU block of width 1 on R is constant on a half-line, so is every "
                                           "stack of them, and F is constant on neither", WIDTH_ONE, facts=facts)
    if target.strictly_monotone() and n >= 2:
        at_zero = Fraction(0) in target.breakpoints
        if m <= layers - 1 or (m == layers and at_zero):
            witness = [bias_free_values(g, n) for g in _bias_free_factors(target, layers)]
            if any(w is None for w in witness):
                raise AssertionError("bug: a factor of Theorem 9.15 is not a bias-free block")
            return LineVerdict(ABSORBABLE, f"F is strictly monotone with m = {m} breakpoints{' (one at 0)' if at_zero else ''}; one "
                                           f"per block, each block breaking at its input 0, gives {layers} bias-free blocks "
                                           f"(Theorem 9.15)", witness=witness, facts=facts)
        return LineVerdict(NOT_ABSORBABLE, f"F is strictly monotone with m = {m} breakpoints" + ("" if at_zero else ", none at 0")
                                           + f"; {layers} bias-free blocks break at most once each, the first only at x = 0",
                           BIAS_FREE_LINE, facts=facts)
    if layers == 2 and n >= 2:
        pair = bias_free_pair(target)
        if pair is None:
            return LineVerdict(NOT_ABSORBABLE, "two bias-free blocks on R break at most once each, the first at x = 0; no first block "
                                               "of that form (a homeomorphism, a fold at 0, or flat on a side) leaves a second with at "
                                               "most one breakpoint", BIAS_FREE_LINE, facts=facts)
        return LineVerdict(ABSORBABLE, f"g_1 breaking at 0 only (slopes {[str(s) for s in pair[0].slopes]}) and g_2 with at most one "
                                       "breakpoint, moved to its input 0 by g_1's output bias, are bias-free blocks (Theorem 9.15)",
                           witness=[bias_free_values(g, n) for g in _at_zero(*pair)], facts=facts)
    if m > 2 ** layers - 1:
        return LineVerdict(NOT_ABSORBABLE, f"F has m = {m} breakpoints, and a stack of {layers} bias-free blocks on R, each breaking "
                                           f"at most once, breaks at most 2^L − 1 = {2 ** layers - 1} times", BIAS_FREE_COUNT, facts=facts)
    if layers > 2 and m > 2 ** (layers - 1) and folding_ratio(target) is None:
        return LineVerdict(NOT_ABSORBABLE, f"F has m = {m} > 2^(L−1) = {2 ** (layers - 1)} breakpoints, so the first of {layers} "
                                           "bias-free blocks must fold at 0 and F(x) = F(λx) for x ≥ 0 with some λ < 0; no λ "
                                           "maps F's right half onto its left", BIAS_FREE_FOLD, facts=facts)
    if layers > 3:
        proven = line_turns.proven_impossible(target, layers=layers, per_block=1, blocks="a bias-free block on R, breaking at most once,")
        if proven is not None:
            return LineVerdict(NOT_ABSORBABLE, proven[1], proven[0], facts=facts)
    if layers == 3 and n >= 2:
        return _three_blocks(target, n, facts)
    clock = Budget.of(time_limit, stop)
    found = _bias_free_regrouped(stack, n, clock) if layers > 2 and n >= 2 else None
    if found is None and layers > 2 and n >= 2:
        maps = bias_free_maps(target, layers, clock)
        found = None if maps is None else ("first block", "a monotone first block at 0, shifted (Proposition 9.15d), then",
                                           [bias_free_values(g, n) for g in maps])
    if found is not None:
        facts["witness_search"], kind, witness = found
        return LineVerdict(ABSORBABLE, f"{kind} bias-free blocks (Theorem 9.15 for pairs, one breakpoint at 0 for one block) give "
                                       f"{layers} bias-free blocks of width {n}", witness=witness, facts=facts)
    affine = line_stacks.decide(stack, time_limit=clock.remaining(), stop=clock.stop)
    facts["affine"] = affine.to_json()
    if affine.status == NOT_ABSORBABLE:
        return LineVerdict(NOT_ABSORBABLE, f"no residual-free stack with biases equals F ({affine.reason}), so none without them "
                                           "does (bias-free blocks are affine blocks)", affine.theorem, facts=facts)
    if affine.status == ABSORBABLE and all(not any(values["b_up"]) for values in affine.witness):
        return LineVerdict(ABSORBABLE, f"{affine.reason}; the witness has no bias inside σ", witness=affine.witness, facts=facts)
    return LineVerdict(UNKNOWN, "F on R is not strictly monotone, so Theorem 9.15 does not apply, and the affine class "
                                f"({affine.status}) gives no bias-free answer", facts=facts)


def folding_ratio(target: LineMap) -> Fraction | None:
    """The λ < 0 with F(x) = F(λx) for every x ≥ 0 (F folded onto itself at 0), or None when there is none.

    λ must map F's breakpoints right of 0 onto those left of it, the nearest
    onto the nearest; with none off 0, λ is the ratio of the end slopes.
    """
    right = [t for t in target.breakpoints if t > 0]
    left = [t for t in target.breakpoints if t < 0]
    if len(right) != len(left):
        return None
    if right:
        ratio = left[-1] / right[0]
    else:
        slope_left, slope_right = target.slopes[0], target.slopes[-1]
        if slope_left == 0:
            return None
        ratio = slope_right / slope_left
    if ratio >= 0 or any(ratio * a != b for a, b in zip(right, reversed(left))):
        return None
    # Both sides are linear between matched breakpoints: equal at them and one step beyond, equal everywhere.
    probes = [*right, (right[-1] if right else Fraction(0)) + 1]
    return ratio if all(target(x) == target(ratio * x) for x in probes) else None


def bias_free_maps(target: LineMap, layers: int, clock: Budget) -> list | None:
    """Proposition 9.15d (witnesses only): F = H ∘ (P − s), P increasing with slopes p, 1 around 0, H a stack of L − 1 bias-free blocks.

    The p tried are 1, 2, 1/2 and the positive ratios of F's nonzero slopes;
    the shifts s are 0 and the breakpoints of F ∘ P⁻¹ (where H's first block
    must break unless it is affine). Two blocks are Theorem 9.15 (b), one a
    map breaking at most at 0. Returns the L maps, each breaking at most at
    its input 0, or None.
    """
    zero, one = Fraction(0), Fraction(1)
    if layers == 1:
        return [target] if set(target.breakpoints) <= {zero} else None
    if layers == 2:
        pair = bias_free_pair(target)
        return None if pair is None else list(_at_zero(*pair))
    if layers == 3:
        return three_bias_free(target)
    slopes = [v for v in target.slopes if v != 0]
    for p in sorted({one, Fraction(2), Fraction(1, 2), *(a / b for a in slopes for b in slopes if a / b > 0)}):
        first = LineMap.of((zero,), (p, one), zero)
        outer = target.after(first.inverse())
        for shift in sorted({zero, *outer.breakpoints}):
            if clock.expired():
                return None
            rest = bias_free_maps(outer.after(LineMap.of((), (one,), shift)), layers - 1, clock)
            if rest is not None:  # F = H ∘ (P − s) with H(y) = outer(y + s)
                return [LineMap.of((zero,), (p, one), -shift), *rest]
    return None


def _three_blocks(target: LineMap, n: int, facts: dict) -> LineVerdict:
    """Theorem 9.15e's verdict for three bias-free blocks of width n ≥ 2 on R."""
    maps = three_bias_free(target)
    if maps is None:
        return LineVerdict(NOT_ABSORBABLE, "no first bias-free block (a homeomorphism breaking at 0 with one of the slope ratios "
                                           "Theorem 9.15e names, a fold of F onto itself at 0, or flat on a half-line) leaves a "
                                           "composite of two maps breaking once each (Lemma 9.15f)", BIAS_FREE_THREE, facts=facts)
    facts["witness_search"] = "three blocks"
    return LineVerdict(ABSORBABLE, "a first bias-free block breaking at 0, then two maps breaking once each (Theorem 9.15e), "
                                   f"give 3 bias-free blocks of width {n}", witness=[bias_free_values(g, n) for g in maps], facts=facts)


def three_bias_free(target: LineMap) -> list | None:
    """Theorem 9.15e: three maps, each breaking at most at its input 0, whose composite is F; None when there are none.

    The first block P_1 is, up to what the second absorbs, a homeomorphism
    with slopes (p, 1) around 0 (p from :func:`_first_ratios`), a fold of F
    onto itself at 0, or flat on a half-line. The other two compose to
    R = F ∘ P_1⁻¹ (on P_1's image [0, ∞) in the last two cases, where
    :func:`_extensions` gives every R that can serve), decided by
    :func:`two_one_kink` (Lemma 9.15f).

    >>> from fractions import Fraction as Q
    >>> hat = LineMap.of((Q(-1), Q(0), Q(1)), (Q(0), Q(1), Q(-1), Q(0)), Q(0))    # a hat on [−1, 1]
    >>> maps = three_bias_free(hat)
    >>> maps[2].after(maps[1]).after(maps[0]) == hat
    True
    >>> three_bias_free(LineMap.of((Q(1), Q(2), Q(3)), (Q(1), Q(-1), Q(1), Q(-1)), Q(0))) is None   # a W: a fold, then a fold
    False
    >>> three_bias_free(LineMap.of((Q(1), Q(2), Q(3)), (Q(1), Q(-1), Q(2), Q(-1)), Q(0))) is None   # F(1) ≠ F(3): no fold
    True
    """
    for first, outer in _first_blocks(target):
        found = two_one_kink(outer)
        if found is not None:
            shift, inner, last = found
            maps = [LineMap.of(first.breakpoints, first.slopes, first.anchor - shift), inner, last]
            if maps[2].after(maps[1]).after(maps[0]) != target:
                raise AssertionError("bug: the three maps of Theorem 9.15e do not compose to F")
            return maps
    return None


def two_one_kink(target: LineMap) -> tuple | None:
    """Lemma 9.15f: R = P_3 ∘ P_2 with P_2, P_3 breaking at most once each, anywhere; (s, g_1, g_2) with g_2 ∘ g_1 = R(· + s).

    g_1 breaks at most at 0 and g_2 at most at 0. Every such R has a witness
    whose P_2 breaks at 0, at a breakpoint of R, or, when R has two and is
    flat between slopes of opposite signs, at the point where a fold maps
    one onto the other; Theorem 9.15 (b) decides each. None when no shift
    works.
    """
    for shift in _kink_candidates(target):
        pair = bias_free_pair(target.after(LineMap.of((), (Fraction(1),), shift)))
        if pair is not None:
            return (shift, *_at_zero(*pair))
    return None


def _kink_candidates(target: LineMap) -> list:
    """Where P_2 may break (Lemma 9.15f): 0, R's breakpoints, and the fold point of each flat piece between opposite slopes."""
    points, slopes = target.breakpoints, target.slopes
    out = {Fraction(0), *points}
    for j in range(1, len(points)):
        left, right = slopes[j - 1], slopes[j + 1]
        if slopes[j] == 0 and left * right < 0:
            # A fold at t with slopes −a, b sends both ends to one value: (t − y_1)/(y_2 − t) = b/a = −right/left.
            ratio = -right / left
            out.add((points[j - 1] + ratio * points[j]) / (1 + ratio))
    return sorted(out)


def _first_blocks(target: LineMap):
    """Theorem 9.15e's first blocks P_1 (breaking at 0, value 0 there), each with the R that R ∘ P_1 = F asks of the other two."""
    zero, one = Fraction(0), Fraction(1)
    for p in _first_ratios(target):
        first = LineMap.of((zero,), (p, one), zero)
        yield first, target.after(first.inverse())
    points = target.breakpoints
    ratio = folding_ratio(target)
    if ratio is not None:  # F(x) = F(λx) for x ≥ 0, so F = R ∘ P_1 with P_1 = x on the right, x/λ on the left
        for outer in _extensions(target):
            yield LineMap.of((zero,), (1 / ratio, one), zero), outer
    if target.slopes[0] == 0 and all(t >= 0 for t in points):  # F constant on (−∞, 0]: P_1 = max(x, 0)
        for outer in _extensions(target):
            yield LineMap.of((zero,), (zero, one), zero), outer
    if target.slopes[-1] == 0 and all(t <= 0 for t in points):  # F constant on [0, ∞): P_1 = max(−x, 0), R read off F(−x)
        mirrored = target.after(LineMap.of((), (-one,), zero))
        for outer in _extensions(mirrored):
            yield LineMap.of((zero,), (-one, zero), zero), outer


def _first_ratios(target: LineMap) -> list:
    """The slopes p of a homeomorphic first block worth trying: R = F ∘ P_1⁻¹ is in Lemma 9.15f's set for all p or none off these.

    p only divides R's slopes left of 0. It matters where it removes R's
    breakpoint at 0 (p = F′(0−)/F′(0+)) or where it meets the one product
    condition of a fold with three breakpoints (r_0 r_2 = r_1 r_3, when p
    enters it); one more p stands for every other value.
    """
    zero = Fraction(0)
    left, right = target.slopes_at(zero)
    special = set()
    if left * right > 0:
        special.add(left / right)
    kinks = sorted({*target.breakpoints, zero}) if (left, right) != (zero, zero) else list(target.breakpoints)
    if len(kinks) == 3:
        inside = [kinks[0] - 1, *((a + b) / 2 for a, b in itertools.pairwise(kinks)), kinks[-1] + 1]  # a point of each piece of R
        slopes = [target.slopes_at(x)[0] for x in inside]
        exponent = sum((1 if j % 2 == 0 else -1) * (x < 0) for j, x in enumerate(inside))  # e: pieces left of 0 have slope g_j / p
        top, bottom = slopes[0] * slopes[2], slopes[1] * slopes[3]
        if exponent and top and bottom:  # g_0 g_2 = g_1 g_3 p^e
            value = (top / bottom) ** exponent
            if value > 0:
                special.add(value)
    generic = next(Fraction(k) for k in itertools.count(1) if Fraction(k) not in special)
    return sorted({*special, generic})


def _extensions(target: LineMap) -> list:
    """Every R that can agree with F on [0, ∞) inside Lemma 9.15f's set: F's right half continued linearly, and the fold through it.

    R breaks at most three times. With two breakpoints u < v of F right of 0
    and slopes f_0, f_1 of opposite signs, R may add y_1 ≤ 0 with
    R(y_1) = R(v) and slope f_0 f_2 / f_1 left of it (a fold at u).
    """
    right = [t for t in target.breakpoints if t > 0]
    out = [half_line(target)]
    if len(right) == 2:
        u, v = right
        f0, f1 = (target.slopes_at(t)[0] for t in (u, v))
        f2 = target.slopes[-1]
        if f0 * f1 < 0:
            y1 = u + f1 * (v - u) / f0
            if y1 <= 0:
                out.append(LineMap.of((y1, u, v), (f0 * f2 / f1, f0, f1, f2), target(u) + f0 * (y1 - u)))
    return out


def _bias_free_regrouped(stack, n: int, clock: Budget) -> tuple | None:
    """Propositions 9.9b and 9.9c in the bias-free class (L ≥ 3, n ≥ 2): which search found it, a description and the witness weights, or None."""
    def decide_group(group, time_limit=None, stop=None, width=None):
        return decide(group, time_limit=time_limit, stop=stop)

    found = line_regroup.grouped(stack, n, clock, decide_group, single=bias_free_values)
    if found is not None:
        return "groups", f"the groups {found[0]} (Proposition 9.9b) of", found[1]

    def pair(first, second):
        found = bias_free_pair(second.after(first))
        return None if found is None else _at_zero(*found)

    maps = line_regroup.rewritten([block_map(block) for block in stack.blocks], n, clock, pair, 2 * stack.L, single=bias_free_values)
    return None if maps is None else ("rewrites", "rewrites of adjacent pairs (Proposition 9.9c) to", [bias_free_values(g, n) for g in maps])


def bias_free_pair(target: LineMap) -> tuple | None:
    """Theorem 9.15 (b): g_1 breaking at most at 0 and g_2 with at most one breakpoint, g_2 ∘ g_1 = F; None when there are none.

    Up to scaling and shifting g_1's output (which g_2 absorbs), g_1 is the
    identity, a map with slopes (p, 1) and value 0 at 0 (p > 0: p = 1/r_0,
    F's ratio at 0; p < 0: the fold with F(x) = F(p·x) for x ≤ 0), or
    min(x, 0) or max(x, 0); then g_2 is forced on g_1's image and continued
    linearly (MATH.md §9.5).
    """
    zero, one = Fraction(0), Fraction(1)
    left, right = target.slopes_at(zero)
    candidates = [LineMap.of((), (one,), zero), LineMap.of((zero,), (one, zero), zero), LineMap.of((zero,), (zero, one), zero)]
    positive = [t for t in target.breakpoints if t > 0]
    negative = [t for t in target.breakpoints if t < 0]
    if left * right != 0:  # p = 1/r_0 when positive; the fold's p when F breaks nowhere off 0
        candidates.append(LineMap.of((zero,), (left / right, one), zero))
    if len(positive) == len(negative) == 1:  # the fold's p when F breaks once on each side
        candidates.append(LineMap.of((zero,), (positive[0] / negative[0], one), zero))
    for first in candidates:
        second = _second_on_image(target, first)
        if len(second.breakpoints) <= 1 and second.after(first) == target:
            return first, second
    return None


def _second_on_image(target: LineMap, first: LineMap) -> LineMap:
    """g_2 = F ∘ g_1⁻¹ on g_1's image (g_1 breaking at most at 0, value 0 there), continued linearly past it."""
    if first.strictly_monotone():
        return target.after(first.inverse())
    _p, q = first.slopes
    side = [t for t in target.breakpoints if (t > 0 if q != 0 else t < 0)]
    # g_1 is the identity on the side where its slope is 1, so g_2 = F there; past g_1's image F's slope at 0 goes on.
    slope = target.slopes_at(Fraction(0))[1 if q != 0 else 0]
    if not side:
        return LineMap.of((), (slope,), target(0))
    return LineMap.sampled(side, lambda y: target(y) if (y >= 0 if q != 0 else y <= 0) else target(0) + slope * y)


def _at_zero(first: LineMap, second: LineMap) -> tuple:
    """The pair with g_2's breakpoint moved to 0: g_1 − t and g_2(· + t)."""
    if not second.breakpoints:
        return first, second
    t = second.breakpoints[0]
    shifted_first = LineMap.of(first.breakpoints, first.slopes, first.anchor - t)
    shifted_second = LineMap.of((Fraction(0),), second.slopes, second(t))
    return shifted_first, shifted_second


def _bias_free_factors(target: LineMap, layers: int) -> list:
    """Theorem 9.15's witness: block 1 takes the breakpoint at 0 (if F has one), the others one each; H_l shifted so the next one lands on 0."""
    points = list(target.breakpoints)
    owners = [Fraction(0)] if Fraction(0) in points else [None]
    owners += [t for t in points if t != 0]
    owners += [None] * (layers - len(owners))
    ratios = dict(zip(points, target.ratios()))
    chain, previous = [], LineMap.of((), (Fraction(1),), Fraction(0))
    for index in range(layers - 1):
        mine = sorted(t for t in owners[: index + 1] if t is not None)
        slopes = [Fraction(1)]
        for t in mine:
            slopes.append(slopes[-1] * ratios[t])
        current = LineMap.of(mine, slopes, Fraction(0))
        following = owners[index + 1]
        shift = -current(following) if following is not None else Fraction(0)
        current = LineMap.of(current.breakpoints, current.slopes, current.anchor + shift)
        chain.append(current.after(previous.inverse()))
        previous = current
    chain.append(target.after(previous.inverse()))
    return chain
