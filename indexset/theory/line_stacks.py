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
from indexset.theory import line_folds, line_levels, line_regroup, line_turns, line_width_two
from indexset.theory.line import LineMap, balanced, block_map, block_values, half_line, lift, lifted_width, line_map
from indexset.theory.line_shares import balancing_ratios, two_extra

THEOREM = "MATH.md §9.5, Theorem 9.6 (stacks on R with a strictly monotone composite)"
WIDTH_ONE = "MATH.md §9.5, Corollary 9.8 (width one on R)"
TWO_BLOCKS = "MATH.md §9.5, Theorem 9.12 (two blocks on R)"
FIRST_BLOCKS = 64  # most first blocks Proposition 9.9d tries per level (its search is sufficient only; this keeps it short)


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
    else:  # two blocks are decided above; for more, count turns first
        proven = line_turns.proven_impossible(target, layers=layers, per_block=line_turns.block_turns(n),
                                              blocks=f"a residual-free ReLU block of width {n} on R")
        if proven is not None:
            return LineVerdict(NOT_ABSORBABLE, proven[1], proven[0], facts=facts)
        if layers == 3 and n == 2 and line_width_two.applies(target):
            return _three_width_two(target, facts)
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


def fold_first_then(target: LineMap, layers: int, n: int, clock: Budget) -> list | None:
    """Proposition 9.9e (witnesses only): a first block folding at a turn of F whose sides match, then F's half as L − 1 blocks.

    For F with no zero slope: each fold of :func:`line_width_two.first_folds`
    that is a block of width n, and the half it leaves, continued linearly,
    as L − 1 blocks (two by :func:`_pair_of`, more by
    :func:`first_block_then` or this search again). Returns the L maps, or
    None.
    """
    if any(slope == 0 for slope in target.slopes):
        return None
    for first, half in line_width_two.first_folds(target, n):
        if clock.expired():
            return None
        rest = _rest_of(half_line(half), layers - 1, n, clock)
        if rest is not None and _composed(rest).after(first) == target:
            return [first, *rest]
    return None


def _rest_of(half: LineMap, layers: int, n: int, clock: Budget) -> list | None:
    """The half a folding first block leaves, as ``layers`` block maps (Proposition 9.9e), or None."""
    if layers == 2:
        pair = _pair_of(half, n, clock, homeomorphic=False)
        return None if pair is None else list(pair)
    return first_block_then(half, layers, n, clock) or fold_first_then(half, layers, n, clock)


def _composed(maps: list) -> LineMap:
    result = maps[0]
    for phi in maps[1:]:
        result = phi.after(result)
    return result


def _three_width_two(target: LineMap, facts: dict) -> LineVerdict:
    """Theorem 9.21's verdict: three blocks of width 2, F turning four times or more with no zero slope."""
    maps = line_width_two.three_blocks(target)
    if maps is None:
        return LineVerdict(NOT_ABSORBABLE, "F turns four times or more with no zero slope, so the first two blocks of width 2 must "
                                           "fold at turns whose sides match; no such pair of folds leaves a third block",
                           line_width_two.THREE_WIDTH_TWO, facts=facts)
    return LineVerdict(ABSORBABLE, "F turns four times or more; a fold at a turn whose sides match, a fold at a turn of the half "
                                   "it leaves, and the third block read off (Theorem 9.21) give 3 residual-free blocks of width 2",
                       witness=[block_values(g, 2) for g in maps], facts=facts)


def _regrouped(stack, n: int, clock: Budget, facts: dict) -> LineVerdict | None:
    """L ≥ 3: a witness from groups of blocks (Proposition 9.9b), rewrites of adjacent pairs (9.9c) or a homeomorphic first block (9.9d), or None."""
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
    if maps is not None:
        facts["rewritten"] = True
        return LineVerdict(ABSORBABLE, f"adjacent blocks replaced, pair by pair, by two residual-free blocks of width {n} with the same "
                                       f"composite (MATH.md §9.5) until all {layers} are residual-free (Proposition 9.9c)",
                           witness=[block_values(g, n) for g in maps], facts=facts)
    target = line_map(stack)
    maps = first_block_then(target, layers, n, clock)
    if maps is not None:
        facts["first_block"] = [str(t) for t in maps[0].breakpoints]
        return LineVerdict(ABSORBABLE, f"an increasing first block breaking at {facts['first_block']} with F's ratios there, then F "
                                       f"read through it as {layers - 1} residual-free blocks (Proposition 9.9d)",
                           witness=[block_values(g, n) for g in maps], facts=facts)
    maps = fold_first_then(target, layers, n, clock)
    if maps is None:
        return None
    facts["folding_first_block"] = [str(t) for t in maps[0].breakpoints]
    return LineVerdict(ABSORBABLE, f"a first block folding at a turn of F whose sides match (breakpoints {facts['folding_first_block']}), "
                                   f"then the half of F it leaves as {layers - 1} residual-free blocks (Proposition 9.9e)",
                       witness=[block_values(g, n) for g in maps], facts=facts)


def _pair_maps(first: LineMap, second: LineMap, n: int, clock: Budget) -> tuple | None:
    """Two residual-free block maps of width n composing to ``second ∘ first`` (:func:`_pair_of`, else Proposition 9.7), or None."""
    found = _pair_of(second.after(first), n, clock)
    if found is not None:
        return found
    folded = line_folds.one_fold(first, second, n, clock)
    return None if folded is None else folded[2]


def _pair_of(target: LineMap, n: int, clock: Budget, homeomorphic: bool = True) -> tuple | None:
    """Two residual-free block maps of width n composing to ``target`` (Theorems 9.6, 9.12, and with ``homeomorphic`` Proposition 9.9), or None."""
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
    return line_folds.homeomorphic_first(target, n, clock) if homeomorphic else None


def first_block_then(target: LineMap, layers: int, n: int, clock: Budget) -> list | None:
    """Proposition 9.9d (witnesses only): an increasing first block taking F's ratios at some of its breakpoints, then L − 1 blocks.

    The first block H (slope 1 at −∞) breaks at a set U of at most n of F's
    breakpoints where F keeps its direction, with F's ratios there (a
    residual-free block by Lemma 9.5), so that F ∘ H⁻¹ no longer breaks at
    H(U); F ∘ H⁻¹ is then decided as a stack of L − 1 blocks (two by
    :func:`_pair_of`, more by this search again). Returns the L maps, or None.
    """
    if layers == 2:  # Proposition 9.9's search is left out here: it costs more than all the rest
        found = _pair_of(target, n, clock, homeomorphic=False)
        return None if found is None else list(found)
    keeps = line_folds.kept_directions(target)
    # The identity first (F itself as L − 1 blocks), then the largest sets: they leave F ∘ H⁻¹ the fewest breakpoints.
    sizes = [0, *range(min(n, len(keeps)), 0, -1)]
    sets = itertools.chain.from_iterable(itertools.combinations(keeps, size) for size in sizes)
    for chosen in itertools.islice(sets, FIRST_BLOCKS):
        if clock.expired():
            return None
        first = line_folds.homeomorphism(target.breakpoints, target.slopes, chosen)
        if block_values(first, n) is None:
            continue
        rest = first_block_then(target.after(first.inverse()), layers - 1, n, clock)
        if rest is not None:
            return [first, *rest]
    return None


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
    if found.status == line_levels.IRRATIONAL:
        facts.update(irrational_assignments=found.irrational)
        return LineVerdict(UNKNOWN, f"F equals two residual-free blocks of width {n} on R, but only with irrational slope ratios "
                                    f"found: in {found.irrational} ratio assignments both blocks have n = {n} breakpoints and their "
                                    "two subset conditions have a real positive solution and no rational one was found (Theorem "
                                    "9.12, Lemma 9.14b); the exact check works over the rationals, so no witness is reported",
                           facts=facts)
    parts = []
    if found.undecided:
        parts.append(f"{found.undecided} ratio assignments have both blocks with n = {n} breakpoints and two or more free level "
                     "ratios, with neither a Pólya certificate nor a sign change of the second condition (Lemma 9.14b)")
    if found.shared:
        parts.append(f"{found.shared} ratio assignments have flat pieces of F sharing one range of levels where g_2 is flat, "
                     "with paths the search does not decide (two or more bent at once, or two or more free level ratios; Lemma 9.18)")
    return LineVerdict(UNKNOWN, "Theorem 9.12's search found no witness, but " + "; and ".join(parts), facts=facts)


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
