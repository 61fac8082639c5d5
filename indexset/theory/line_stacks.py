"""ReLU stacks on R that absorb as a whole: the exact decision of MATH.md §9.5 (extension).

On R a stack F = f_L ∘ … ∘ f_1 is one piecewise-linear function
(:func:`indexset.theory.line.line_map`). When F is strictly monotone, every
residual-free stack G = g_L ∘ … ∘ g_1 equal to it is a chain of
homeomorphisms of R, and Theorem 9.6 turns the question into finite
combinatorics on F's breakpoints b_1 < … < b_m and slope ratios
r_j = F'(b_j+)/F'(b_j−):

- each breakpoint of F is a breakpoint of some g_l (pulled back to x), and
  each g_l has at most n (m ≤ L·n holds anyway: each f_l is injective);
- a set Q of F's breakpoints is *balanced* when the map with slope 1 at −∞
  and ratio r_j at each b_j in Q passes the subset condition of Lemma 9.5;
- a *split* gives every block a set of breakpoints; a block with n of them
  needs its set balanced, one with fewer needs nothing. For two blocks one
  breakpoint b_c may be shared, its ratio split as q · (r_c/q), q > 0 free:
  the intermediate reparametrisation of Proposition 9.7; the same holds for
  L blocks and m = L·n − 1, and for m = L·n − 2 two extra incidences may
  fill every block (Lemma 9.6a, :mod:`indexset.theory.line_shares`).

``decide`` answers ``absorbable`` with the witness blocks built from the
split (checked exactly by the caller), ``not_absorbable`` when Theorem 9.6
rules every split out or, for width one, by Corollary 9.8, and ``unknown``
where no theorem reaches: L ≥ 4 with L(n − 1) < m < L·n − 2 and no split
without a shared breakpoint, or F not strictly monotone outside the next
case. For two blocks and F not strictly monotone, Theorem 9.12
(:mod:`indexset.theory.line_levels`) decides (undecided only where two of
F's flat pieces could share a range of levels, or a leaf has two full
blocks and two free ratios); there, and for L ≥ 3, the sufficient searches
of :mod:`indexset.theory.line_folds` look for a witness.
"""

from __future__ import annotations

import itertools
import threading
from dataclasses import dataclass, field
from fractions import Fraction

import numpy as np

from indexset.budget import Budget
from indexset.model.instance import Instance, exact_value
from indexset.model.stack import Stack
from indexset.result import ABSORBABLE, NOT_ABSORBABLE, UNKNOWN
from indexset.theory import line_folds, line_levels, line_regroup
from indexset.theory.line import LineMap, balanced, bias_free_values, block_map, block_values, lift, lifted_width, line_map
from indexset.theory.line_shares import balancing_ratios, two_extra

THEOREM = "MATH.md §9.5, Theorem 9.6 (stacks on R with a strictly monotone composite)"
WIDTH_ONE = "MATH.md §9.5, Corollary 9.8 (width one on R)"
TWO_BLOCKS = "MATH.md §9.5, Theorem 9.12 (two blocks on R)"
BIAS_FREE_LINE = "MATH.md §9.5, Theorem 9.15 (the bias-free class on R: F strictly monotone, or two blocks)"
BIAS_FREE_COUNT = "MATH.md §9.5, Proposition 9.15b (L bias-free blocks on R break at most 2^L − 1 times)"
BIAS_FREE_FOLD = "MATH.md §9.5, Proposition 9.15c (past 2^(L−1) breakpoints the first bias-free block folds F onto itself at 0)"


@dataclass
class LineVerdict:
    """What Theorem 9.6 says about a ReLU stack on R (affine class).

    Attributes
    ----------
    status : str
        ``absorbable``, ``not_absorbable`` or ``unknown``.
    reason : str
        The argument, with the numbers it used.
    theorem : str or None
        The statement that proves a ``not_absorbable``.
    witness : list of dict or None
        Per block, the residual-free weights (object arrays of Fractions)
        of the witness stack; the caller checks it exactly.
    facts : dict
        m, n, L, the ratios and the split found (JSON-ready strings).
    """

    status: str
    reason: str
    theorem: str | None = None
    witness: list | None = None
    facts: dict = field(default_factory=dict)

    def to_json(self) -> dict:
        """JSON-ready dict (without the witness arrays)."""
        return {"status": self.status, "reason": self.reason, "theorem": self.theorem, "facts": self.facts}


def applies(stack) -> bool:
    """Whether the stack is one §9.5 speaks about: ReLU, on R, at least two residual blocks."""
    return stack.d == 1 and stack.activation == "relu" and stack.L >= 2 and not stack.residual_free


def decide(stack, *, time_limit: float | None = None, stop: threading.Event | None = None, width: int | None = None) -> LineVerdict:
    """Decide by Theorem 9.6 whether a ReLU stack on R equals a residual-free stack of the same width.

    Parameters
    ----------
    stack : Stack
        ReLU, d = 1, L ≥ 2 residual blocks of width n (see :func:`applies`).
    time_limit : float, optional
        Seconds for the split search; past it the answer is ``unknown``.
    stop : threading.Event, optional
        Set it to stop the search (``unknown``).
    width : int, optional
        Width of the residual-free blocks sought (default: the stack's).

    Returns
    -------
    LineVerdict
    """
    clock = Budget.of(time_limit, stop)
    target = line_map(stack)
    n, layers, m = width or stack.n, stack.L, len(target.breakpoints)
    facts = {"L": layers, "n": n, "m": m, "ratios": [str(r) for r in target.ratios()] if target.strictly_monotone() else None}
    if n == 1 and target.slopes[0] != 0 and target.slopes[-1] != 0:
        return LineVerdict(NOT_ABSORBABLE, "every residual-free ReLU block of width 1 on R is constant on a half-line, so is every "
                                           "stack of them, and F is constant on neither", WIDTH_ONE, facts=facts)
    if not target.strictly_monotone():
        return _folding(stack, target, n, clock, facts)
    search = _Search(target.ratios(), layers, n, clock)
    split = search.without_sharing()
    # A shared breakpoint makes m + 1 incidences, which L blocks of n hold only when m ≤ L·n − 1.
    if split is None and 2 * n - 1 <= m <= layers * n - 1 and not clock.expired():
        split = search.shared()
    if split is None and layers > 2 and m == layers * n - 2 and not clock.expired():
        split = two_extra(search)  # two extra incidences, every block full (Lemma 9.6a)
    facts["balanced_checks"] = len(search.memo)
    if split is not None:
        facts["split"] = [[str(v) for v in layer] for layer in split]
        witness = [block_values(g, n) for g in _factors(target, split)]
        if any(w is None for w in witness):
            raise AssertionError("bug: a split of Theorem 9.6 gave a factor that is not a residual-free block")
        return LineVerdict(ABSORBABLE, f"F is strictly monotone with m = {m} breakpoints; the split {_describe(split)} gives "
                                       f"{layers} residual-free blocks of width {n} (Theorem 9.6, Proposition 9.7)", witness=witness, facts=facts)
    if clock.expired():
        return LineVerdict(UNKNOWN, f"the split search of Theorem 9.6 stopped ({clock.halt_reason()}) after {len(search.memo)} "
                                    "balanced checks", facts=facts)
    regrouped = _regrouped(stack, n, clock, facts) if layers > 2 and m < layers * n - 2 else None
    if regrouped is not None:
        return regrouped
    if layers > 2 and m < layers * n - 2:
        return LineVerdict(UNKNOWN, f"no split of F's m = {m} breakpoints with at most one extra incidence works, and for L = {layers} "
                                    f"with L(n − 1) < m < L·n − 2 splits with two or more extra incidences leave several free ratios "
                                    "that Theorem 9.6's search does not decide", facts=facts)
    return LineVerdict(NOT_ABSORBABLE, f"F is strictly monotone with m = {m} breakpoints and ratios {facts['ratios']}; no split of "
                                       f"them among {layers} blocks of width {n} has every full block balanced", THEOREM, facts=facts)


def _folding(stack, target: LineMap, n: int, clock: Budget, facts: dict) -> LineVerdict:
    """F not strictly monotone: constant; Theorem 9.12 for two blocks; where it is undecided, or L ≥ 3, Propositions 9.7 and 9.9; else unknown."""
    layers = stack.L
    if all(slope == 0 for slope in target.slopes):
        constant = block_values(target, n)
        return LineVerdict(ABSORBABLE, "F is constant: every block constant is a residual-free stack equal to it",
                           witness=[constant] * layers, facts=facts)
    if layers == 2:
        decided = _two_blocks(target, n, clock, facts)
        if decided.status != UNKNOWN or clock.expired():
            return decided
    found = line_folds.one_fold(*(block_map(block) for block in stack.blocks), n, clock) if layers == 2 else None
    if found is not None:
        fold, ratio, maps = found
        facts.update(fold=str(fold), fold_ratio=str(ratio))
        return LineVerdict(ABSORBABLE, f"F is not monotone; the fold h at y* = {fold} with slope ratio {ratio} makes h ∘ f_1 and "
                                       f"f_2 ∘ h⁻¹ residual-free blocks of width {n} (Proposition 9.7)",
                           witness=[block_values(g, n) for g in maps], facts=facts)
    found = line_folds.homeomorphic_first(target, n, clock)
    if found is not None:
        first, last = found
        facts.update(first_block_breakpoints=[str(t) for t in first.breakpoints])
        identity = block_values(line_folds.IDENTITY, n)
        return LineVerdict(ABSORBABLE, f"F is not strictly monotone; the homeomorphism H with breakpoints "
                                       f"{[str(t) for t in first.breakpoints]} and F ∘ H⁻¹ are residual-free blocks of width {n}"
                                       + (", the blocks between them identities" if layers > 2 else "") + " (Proposition 9.9)",
                           witness=[block_values(first, n), *[identity] * (layers - 2), block_values(last, n)], facts=facts)
    regrouped = _regrouped(stack, n, clock, facts) if layers > 2 else None
    if regrouped is not None:
        return regrouped
    tried = "one-fold reparametrisations of the two blocks (Proposition 9.7) and " if layers == 2 else ""
    open_case = (decided.reason if layers == 2 else f"for L = {layers} blocks and F not strictly monotone no theorem of "
                 "MATH.md §9.5 decides")
    why = clock.halt_reason() or f"{tried}homeomorphic first blocks (Proposition 9.9) gave no witness; {open_case}"
    return LineVerdict(UNKNOWN, why, facts=facts)


def _regrouped(stack, n: int, clock: Budget, facts: dict) -> LineVerdict | None:
    """L ≥ 3: a witness from groups of blocks (Proposition 9.9b), else from rewrites of adjacent pairs (Proposition 9.9c), or None."""
    layers = stack.L
    found = line_regroup.grouped(stack, n, clock, decide)
    if found is not None:
        groups, witness = found
        facts["groups"] = [list(g) for g in groups]
        described = ", ".join(f"blocks {a}–{b}" if b > a else f"block {a}" for a, b in groups)
        return LineVerdict(ABSORBABLE, f"the groups {described} each equal a residual-free stack of their own length (Lemma 9.5 for "
                                       f"one block, MATH.md §9.5 for two or more); their witnesses in turn are a residual-free stack of "
                                       f"{layers} blocks of width {n} (Proposition 9.9b)", witness=witness, facts=facts)
    maps = line_regroup.rewritten([block_map(block) for block in stack.blocks], n, clock,
                                  lambda first, second: _pair_maps(first, second, n, clock), most_rewrites=2 * layers)
    if maps is None:
        return None
    facts["rewritten"] = True
    return LineVerdict(ABSORBABLE, f"adjacent blocks replaced, pair by pair, by two residual-free blocks of width {n} with the same "
                                   f"composite (MATH.md §9.5) until all {layers} are residual-free (Proposition 9.9c)",
                       witness=[block_values(g, n) for g in maps], facts=facts)


def _pair_maps(first: LineMap, second: LineMap, n: int, clock: Budget) -> tuple | None:
    """Two residual-free block maps of width n composing to ``second ∘ first`` (Theorems 9.6, 9.12, Propositions 9.7, 9.9), or None."""
    target = second.after(first)
    if all(slope == 0 for slope in target.slopes):
        return target, line_folds.IDENTITY
    if target.strictly_monotone():
        search = _Search(target.ratios(), 2, n, clock)
        split = search.without_sharing()
        if split is None and len(target.breakpoints) == 2 * n - 1:
            split = search.shared()
        return None if split is None else tuple(_factors(target, split))
    found = line_levels.two_blocks(target, n, clock)
    if found.status == line_levels.FOUND:
        return tuple(found.maps)
    folded = line_folds.one_fold(first, second, n, clock)
    return folded[2] if folded is not None else line_folds.homeomorphic_first(target, n, clock)


def _two_blocks(target: LineMap, n: int, clock: Budget, facts: dict) -> LineVerdict:
    """Theorem 9.12: two blocks; exact but for the leaves and the shared ranges it leaves undecided."""
    found = line_levels.two_blocks(target, n, clock)
    turns = found.turning_points
    facts.update(turning_points=turns, ratio_assignments=found.leaves)
    if found.status == line_levels.FOUND:
        facts.update(first_block_turning=[str(t) for t in found.turning])
        return LineVerdict(ABSORBABLE, f"F is not strictly monotone; a first block turning at {[str(t) for t in found.turning]} "
                                       f"(the fold walk, Lemma 9.13) with slope ratios chosen at the levels (Lemma 9.14) and F's flat "
                                       f"pieces placed (Lemmas 9.16, 9.17) gives two residual-free blocks of width {n} (Theorem 9.12)",
                           witness=[block_values(g, n) for g in found.maps], facts=facts)
    if found.status == line_levels.NONE:
        return LineVerdict(NOT_ABSORBABLE, f"F on R is not strictly monotone; for no set T of its {turns} turning points (flat pieces "
                                           f"collapsed) with |T| ≤ {n} do the fold walk, a choice of slope ratios at the levels and a "
                                           f"placing of F's flat pieces give two residual-free blocks of width {n} ({found.leaves} ratio "
                                           "assignments checked)",
                           TWO_BLOCKS, facts=facts)
    if found.status == line_levels.STOPPED:
        return LineVerdict(UNKNOWN, f"the search of Theorem 9.12 stopped ({clock.halt_reason()}) after {found.leaves} ratio "
                                    "assignments", facts=facts)
    parts = []
    if found.undecided:
        parts.append(f"{found.undecided} ratio assignments have both blocks with n = {n} breakpoints and two or more free level "
                     "ratios, with no rational solution found and none ruled out")
    if found.shared:
        parts.append(f"{found.shared} ratio assignments have flat pieces of F sharing one range of levels where g_2 is flat, "
                     "with paths the search does not decide (two or more bent at once, or two or more free level ratios; Lemma 9.18)")
    return LineVerdict(UNKNOWN, "Theorem 9.12's search found no witness, but " + "; and ".join(parts), facts=facts)


def decide_bias_free(stack, *, time_limit: float | None = None, stop: threading.Event | None = None) -> LineVerdict:
    """The bias-free class on R (no bias inside σ): Theorem 9.15 for strictly monotone F or two blocks, else what the affine class implies.

    A bias-free block of width n ≥ 2 on R is a map with at most one
    breakpoint, at 0. For strictly monotone F (m breakpoints, L blocks) a
    stack of them equals F iff m ≤ L − 1, or m = L and 0 is a breakpoint of
    F; two blocks are decided for any F by :func:`bias_free_pair`. For
    L ≥ 3, more than 2^L − 1 breakpoints prove that none does (Proposition
    9.15b), and so do more than 2^(L−1) when F is not folded onto itself at
    0 (Proposition 9.15c, :func:`folding_ratio`); groups and rewrites of
    pairs (Propositions 9.9b, 9.9c) and a monotone first block
    (Proposition 9.15d, :func:`bias_free_maps`) look for a witness. Otherwise an affine-class ``not_absorbable`` carries
    over (bias-free blocks are affine blocks), and an affine witness counts
    only if it has no bias inside σ.

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
    affine = decide(stack, time_limit=clock.remaining(), stop=clock.stop)
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


def _bias_free_regrouped(stack, n: int, clock: Budget) -> tuple | None:
    """Propositions 9.9b and 9.9c in the bias-free class (L ≥ 3, n ≥ 2): which search found it, a description and the witness weights, or None."""
    def decide_group(group, time_limit=None, stop=None, width=None):
        return decide_bias_free(group, time_limit=time_limit, stop=stop)

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


def line_part(stack) -> Stack | None:
    """The stack on R of x_1 when every block of a ReLU stack on R^d is x ↦ (φ(x_1), x_2, …, x_d), else None.

    Read off the weights exactly: unit rows and the first output only on
    e_1, no bias into the other outputs, skip diag(a, 1, …, 1).
    """
    if stack.d < 2 or stack.activation != "relu" or stack.residual_free:
        return None
    blocks = []
    for block in stack.blocks:
        up, down, skip, b_down = (np.asarray(exact_value(block, key), dtype=object) for key in ("W_up", "W_down", "skip", "b_down"))
        rest = skip.copy()
        rest[0, 0] = 1
        if up[:, 1:].any() or down[1:, :].any() or b_down[1:].any() or not (rest == np.eye(stack.d, dtype=np.int64)).all():
            return None
        scale = block.denominator
        skip_first = np.array([[scale]]) if block.skip is None else np.asarray(block.skip)[:1, :1]
        b_first = None if block.b_down is None else np.asarray(block.b_down)[:1]
        blocks.append(Instance(np.asarray(block.W_up)[:, :1], np.asarray(block.W_down)[:1, :], skip=skip_first,
                               b_up=block.b_up, b_down=b_first, denominator=scale, source=block.source))
    return Stack(blocks, source=f"x_1 of {stack.source}")


def decide_lifted(stack, *, time_limit: float | None = None, stop: threading.Event | None = None) -> LineVerdict | None:
    """Proposition 9.10 on a stack of the form (φ_l(x_1), x_2, …): a lifted witness of the line, or None (sufficient only).

    The line stack must be absorbable with width n − 2(d − 1); the other
    coordinates then pass through σ(x_k) − σ(−x_k). None proves nothing.
    """
    line = line_part(stack)
    width = lifted_width(stack.n, stack.d)
    if line is None or width < 1:
        return None
    verdict = decide(line, time_limit=time_limit, stop=stop, width=width)
    if verdict.status != ABSORBABLE:
        return None
    witness = [lift(values, stack.d, residual=False) for values in verdict.witness]
    return LineVerdict(ABSORBABLE, f"every block is (φ_l(x_1), x_2, …, x_{stack.d}); on x_1: {verdict.reason} at width {width}; "
                                   f"the other coordinates pass through two units each (Proposition 9.10)",
                       witness=witness, facts=dict(verdict.facts, lifted_from_width=width))


def _describe(split: list) -> str:
    return "; ".join(f"block {index + 1}: ratios at b_j {{{', '.join(f'{j + 1}: {r}' for j, r in enumerate(layer) if r != 1)}}}"
                     for index, layer in enumerate(split))


def set_is_balanced(ratios) -> bool:
    """Whether the map with slope 1 at −∞ and these ratios at its breakpoints (left to right) is a block of width len(ratios)."""
    slopes = list(itertools.accumulate((Fraction(1), *ratios), lambda a, b: a * b))
    jumps = [b - a for a, b in itertools.pairwise(slopes)]
    return balanced(jumps, slopes[-1]) is not None


class _Search:
    """The splits of Theorem 9.6, searched exhaustively (a split is one ratio per breakpoint per block)."""

    def __init__(self, ratios, layers: int, n: int, clock: Budget) -> None:
        self.ratios, self.layers, self.n, self.clock = tuple(ratios), layers, n, clock
        self.memo: dict = {}
        self.admissible_memo: dict = {}
        self.cover_memo: dict = {}

    def is_balanced(self, members: tuple) -> bool:
        if members not in self.memo:
            self.memo[members] = set_is_balanced([self.ratios[j] for j in members])
        return self.memo[members]

    def without_sharing(self) -> list | None:
        """A split where every breakpoint belongs to one block: t full balanced sets, the rest in blocks of < n."""
        groups = self._groups(tuple(range(len(self.ratios))), self.layers)
        return None if groups is None else [self._layer(group) for group in groups]

    def _groups(self, points: tuple, layers: int, room: bool = False) -> list | None:
        """``points`` in ``layers`` blocks, none shared: some full balanced n-sets, the rest in blocks of fewer than n.

        With ``room``, one of the blocks of fewer than n keeps a slot free (at most n − 2 of the points).
        """
        n = self.n
        for full in range(layers + 1):
            if full * n > len(points) or len(points) - full * n > (layers - full) * (n - 1) - room:
                continue
            sets = self._disjoint_full(points, full, 0)
            if sets is not None:
                rest = [j for j in points if not any(j in s for s in sets)]
                chunks = [rest[i:i + n - 1] for i in range(0, len(rest), n - 1)] if rest else []
                return [*sets, *chunks] + [[]] * (layers - len(sets) - len(chunks))
        return None

    def _disjoint_full(self, available: tuple, count: int, start: int):
        if count == 0:
            return []
        for members in itertools.combinations(available, self.n):
            if members[0] < start:
                continue
            if self.clock.expired():
                return None
            if self.is_balanced(members):
                rest = self._disjoint_full(tuple(j for j in available if j not in members), count - 1, members[0] + 1)
                if rest is not None:
                    return [members, *rest]
        return None

    def full_sets(self, points: tuple, count: int) -> list | None:
        """``points`` (count·n of them, increasing) as ``count`` disjoint balanced n-sets, or None."""
        key = (points, count)
        if key not in self.cover_memo:
            self.cover_memo[key] = self._cover(points, count)
        return self.cover_memo[key]

    def _cover(self, points: tuple, count: int) -> list | None:
        if len(points) != count * self.n:
            return None
        if not points:
            return []
        head, tail = points[0], points[1:]  # the set holding the first point, then the others
        for others in itertools.combinations(tail, self.n - 1):
            if self.clock.expired():
                return None
            if self.is_balanced((head, *others)):
                rest = self.full_sets(tuple(j for j in tail if j not in others), count - 1)
                if rest is not None:
                    return [(head, *others), *rest]
        return None

    def shared(self) -> list | None:
        """A breakpoint c in two blocks, its ratio split q · (r_c/q) (Proposition 9.7), the rest split without sharing.

        Either both blocks are full (both balanced, q common to both), or one
        is full and the other has room (fewer than n with c), which then
        takes r_c/q for any q that balances the full one.
        """
        m, n, layers = len(self.ratios), self.n, self.layers
        for c in range(m):
            others = [j for j in range(m) if j != c]
            for first in itertools.combinations(others, n - 1):
                found = self._shared_with_room(c, first, [j for j in others if j not in first])
                if found is not None:
                    return found
                rest = [j for j in others if j not in first]
                for second in itertools.combinations(rest, n - 1):
                    if self.clock.expired():
                        return None
                    if second < first:  # the pair is unordered: q ↦ r_c/q swaps the two
                        continue
                    q = self._common_ratio(tuple(sorted((*first, c))), tuple(sorted((*second, c))), c)
                    if q is None:
                        continue
                    groups = self._groups(tuple(j for j in rest if j not in second), layers - 2)
                    if groups is not None:
                        return [self._layer(first, c, q), self._layer(second, c, self.ratios[c] / q), *(self._layer(s) for s in groups)]
        return None

    def _shared_with_room(self, c: int, first: tuple, rest: list) -> list | None:
        """The full block ``first`` + c at a ratio q ≠ r_c that balances it; c's other factor r_c/q in a block with room."""
        members = tuple(sorted((*first, c)))
        ratios = self.admissible(members, c)
        q = Fraction(2) * self.ratios[c] if ratios is None else next((p for p in sorted(ratios) if p != self.ratios[c]), None)
        if q is None or self.clock.expired():
            return None
        groups = self._groups(tuple(rest), self.layers - 1, room=True)
        if groups is None:
            return None
        roomy = next(i for i, g in enumerate(groups) if len(g) < self.n - 1)
        layers = [self._layer(first, c, q)]
        layers += [self._layer(g, c, self.ratios[c] / q) if i == roomy else self._layer(g) for i, g in enumerate(groups)]
        return layers

    def admissible(self, members: tuple, c: int) -> set | None:
        """``_admissible`` of the set ``members`` with the ratio q at its breakpoint c, kept: the shared search asks each set many times."""
        key = (members, c)
        if key not in self.admissible_memo:
            self.admissible_memo[key] = balancing_ratios([self.ratios[j] for j in members], members.index(c))
        return self.admissible_memo[key]

    def _layer(self, members, shared: int | None = None, ratio: Fraction | None = None) -> list:
        """One block's ratios: F's at ``members``, ``ratio`` at the shared breakpoint, 1 elsewhere."""
        return [ratio if j == shared else (self.ratios[j] if j in members else Fraction(1)) for j in range(len(self.ratios))]

    def _common_ratio(self, first: tuple, second: tuple, c: int) -> Fraction | None:
        """A q > 0 with ``first`` balanced at ratio q at c and ``second`` at r_c/q, or None."""
        r_c = self.ratios[c]
        ones, twos = self.admissible(first, c), self.admissible(second, c)
        # q = 1 (c only in the second block) and q = r_c (only in the first) need nothing of the block that lost it.
        ones = None if ones is None else ones | {Fraction(1)}
        twos = None if twos is None else {r_c / p for p in twos} | {r_c}
        if ones is None and twos is None:
            return Fraction(1)
        if ones is None or twos is None:
            return min(ones if twos is None else twos)
        common = ones & twos
        return min(common) if common else None


def _factors(target: LineMap, split: list) -> list:
    """The witness maps g_1, …, g_L of a split: g_l = H_l ∘ H_{l−1}⁻¹, H_l the map of the first l blocks' ratios, g_L = F ∘ H_{L−1}⁻¹."""
    cumulative = [Fraction(1)] * len(target.breakpoints)
    previous = LineMap.of((), (Fraction(1),), Fraction(0))
    maps = []
    for layer in split[:-1]:
        cumulative = [c * r for c, r in zip(cumulative, layer)]
        slopes = list(itertools.accumulate((Fraction(1), *cumulative), lambda a, b: a * b))
        current = LineMap.of(target.breakpoints, slopes, Fraction(0))
        maps.append(current.after(previous.inverse()))
        previous = current
    maps.append(target.after(previous.inverse()))
    return maps
