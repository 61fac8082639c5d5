"""Two ReLU blocks on R, F flat at most on its end pieces: the complete search of MATH.md §9.5, Theorem 9.12 (extension).

Every witness g_2 ∘ g_1 = F is, for the set T of g_1's turning points,
``g_1 = h ∘ ℓ`` and ``g_2 = G ∘ h⁻¹`` with (ℓ, G) the fold walk of
:mod:`indexset.theory.line_walk` and h an increasing homeomorphism of ℓ's
image. Only h's slope ratios η(y) at the *levels* Y* (the images of ℓ's
breakpoints and G's breakpoints) matter; elsewhere η = 1 (Lemma 9.14).

At a level y, g_1 breaks at each non-turning x with ℓ(x) = y unless
ρ(x)·η^{±1} = 1 (ρ: ℓ's ratio at x, the sign ℓ's direction), and g_2 at
h(y) unless η equals G's ratio there. So per level the breakpoint counts
are constant in η except at finitely many *special* values: the search
tries each, and one *generic* η left free. With the generic levels as
variables u (h's slope on each run of pieces between them), g_1's slopes
are linear in u and g_2's in 1/u, so Lemma 9.5's subset condition of a
block with n breakpoints is one homogeneous linear equation. When both
blocks have n breakpoints and two or more levels are free, the pair of
equations is decided by :mod:`indexset.theory.line_positive` (Lemma
9.14b): a rational solution, none, a real one with none rational found
(*irrational*: a witness exists, with irrational weights), or *undecided*.

Where F is flat on an end piece the walk covers the rest, and g_1 there is
flat, or goes on into levels no other point reaches, where g_2 is flat, at
its own slope or at a free one (:class:`Ends`, Lemma 9.16). Bounded flat
pieces are collapsed first (:mod:`indexset.theory.line_plateaus`); each
plateau point is flat in g_1, or passes through a range of levels
inserted where g_2 is flat (Lemma 9.17). Plateau points sharing a range
take paths of one kink each that fit one length, or paths of more kinks,
at least one breakpoint of g_1 more; the search does not build the latter,
so a leaf that needs them is open (Lemma 9.18).

>>> from fractions import Fraction as Q
>>> from indexset.theory.line import LineMap
>>> F = LineMap.of((Q(-2), Q(0), Q(1), Q(3)), (Q(1), Q(-1), Q(2), Q(-2), Q(-3)), Q(-4))
>>> found = two_blocks(F, 2)            # three turning points; g_1 turns at one of them
>>> found.status, [str(t) for t in found.turning]
('found', ['0'])
>>> g1, g2 = found.maps
>>> all(g2(g1(x)) == F(x) for x in range(-4, 5))
True
"""

from __future__ import annotations

import bisect
import itertools
from dataclasses import dataclass, field
from fractions import Fraction

from indexset.budget import Budget
from indexset.theory.line import LineMap, block_values, preimages
from indexset.theory.line_balance import IRRATIONAL, UNDECIDED, critical_ratios, dedupe, fits_alone, forms_at, middle_slopes, solve
from indexset.theory.line_plateaus import Collapsed, collapse, uncollapse
from indexset.theory.line_positive import PositiveTuning
from indexset.theory.line_walk import Folding, level_map, turning_points

FOUND, NONE, STOPPED = "found", "none", "stopped"
__all__ = ["FOUND", "IRRATIONAL", "NONE", "STOPPED", "UNDECIDED", "Ends", "Level", "TwoBlocks", "levels_of", "two_blocks"]


@dataclass(frozen=True)
class Level:
    """A level y of the image and what g_1, g_2 do there as functions of h's ratio η (Lemmas 9.14, 9.17).

    Attributes
    ----------
    value : Fraction
        y.
    crossings : tuple
        ``(ρ, direction)`` for each non-turning x with ℓ(x) = y that is no plateau point.
    profile_ratio : Fraction
        G's slope ratio at y (1 where G does not break; negative where it turns).
    plateau_crossings : tuple
        ``(ρ, direction, c)`` for the plateau points c that ℓ crosses y at.
    plateau_turns : tuple
        The plateau points where ℓ turns at y.
    """

    value: Fraction
    crossings: tuple
    profile_ratio: Fraction
    plateau_crossings: tuple = ()
    plateau_turns: tuple = ()

    def counts(self, eta: Fraction | None, passing: tuple) -> tuple:
        """Breakpoints of g_1 and of g_2 at this level for ratio η (None: generic) and the plateau points passing (() for none)."""
        def breaks(rho, direction):
            return 1 if eta is None else int(rho * eta ** direction != 1)

        first = sum(breaks(rho, d) for rho, d in self.crossings)
        if not passing:  # every plateau point here flat: two breakpoints at a crossing, one more at a turn
            first += 2 * len(self.plateau_crossings) + len(self.plateau_turns)
            return first, 1 if eta is None else int(self.profile_ratio != eta)
        first += sum(breaks(rho, d) for rho, d, c in self.plateau_crossings if c in passing)
        first += sum(1 for c in self.plateau_turns if c not in passing)
        return first, 2

    def passings(self) -> list:
        """Which plateau points may pass through a range inserted here: every crossing must, and any set of the turns dips (Lemma 9.18)."""
        if self.crossings:
            return [()]
        crossing = tuple(c for _, _, c in self.plateau_crossings)
        dips = itertools.chain.from_iterable(itertools.combinations(self.plateau_turns, k) for k in range(len(self.plateau_turns) + 1))
        return [(), *(crossing + chosen for chosen in dips if crossing + chosen)]

    def choices(self) -> list:
        """Every :class:`Choice` here: special ratios, then the generic one, per passing set; cheapest first."""
        out = []
        for passing in self.passings():
            special = {rho ** -d for rho, d in self.crossings} | {Fraction(1)}
            special |= {rho ** -d for rho, d, c in self.plateau_crossings if c in passing}
            if not passing and self.profile_ratio > 0:
                special.add(self.profile_ratio)
            options = [Choice(eta, passing, *self.counts(eta, passing)) for eta in [*sorted(special), None]]
            out += options
            if self.plateau_crossings and len(passing) >= 2:
                # Paths of more kinks through a shared range: at least one breakpoint of g_1 more (Lemma 9.18).
                out += [Choice(c.eta, passing, c.first + 1, c.second, more_kinks=True) for c in options]
        return sorted(out, key=lambda c: c.first + c.second)

    def flat_turns(self, passing: tuple) -> tuple:
        """The turns left flat beside a range crossings pass: each could dip with two kinks instead, at the same count (Lemma 9.18)."""
        return tuple(c for c in self.plateau_turns if c not in passing) if passing and self.plateau_crossings else ()


@dataclass(frozen=True)
class Choice:
    """One option at a level (Lemmas 9.14, 9.17, 9.18).

    Attributes
    ----------
    eta : Fraction or None
        h's ratio there (None: generic, a variable).
    passing : tuple
        The plateau points passing through a range of levels inserted there, where g_2 is flat.
    first, second : int
        The breakpoints g_1 and g_2 gain there (for ``more_kinks``, a lower bound for g_1).
    more_kinks : bool
        The shared range's paths are not all of one kink: a leaf that reaches it is open.
    """

    eta: Fraction | None
    passing: tuple
    first: int
    second: int
    more_kinks: bool = False


@dataclass(frozen=True)
class TwoBlocks:
    """The search's answer for one F and width n.

    Attributes
    ----------
    status : str
        ``found`` (``maps`` is a witness), ``none`` (no witness exists:
        Theorem 9.12), ``irrational`` (no rational witness was found, but
        a leaf of two full blocks has a real solution, so a witness with
        irrational slope ratios exists: Lemma 9.14b), ``undecided`` (some
        leaf is open: two full blocks and two or more free levels with no
        proof either way, or a range shared by plateau points whose paths
        the search does not build), or ``stopped`` (the budget ran out).
    maps : tuple or None
        ``(g_1, g_2)`` as LineMaps, g_2 ∘ g_1 = F, each a residual-free
        block of width n.
    turning : tuple
        Where g_1 turns (found; a plateau by its start), else ().
    leaves : int
        Ratio assignments checked.
    undecided : int
        Leaves left undecided.
    irrational : int
        Leaves with a real solution and no rational one found.
    shared : int
        Leaves left open by a range that plateau points share (Lemma 9.18).
    turning_points : int
        F's turning points once its flat pieces are collapsed (the candidates for g_1's).
    """

    status: str
    maps: tuple | None = None
    turning: tuple = ()
    leaves: int = 0
    undecided: int = 0
    irrational: int = 0
    shared: int = 0
    turning_points: int = 0


@dataclass(frozen=True)
class Ends:
    """What g_1 does past F's flat ends (Lemma 9.16), and where g_2 is flat past an edge of ℓ's image.

    ``left``/``right``: ``flat`` (g_1 constant there, breaking at the end),
    ``through`` (on at its slope into levels no other point reaches, where
    g_2 is flat) or ``free`` (the same at a free slope: a breakpoint with a
    free ratio); None where F has no flat end. ``edges``: the edges
    (``low``/``high``) past which g_2 is flat, one breakpoint of g_2 each;
    plateau points turning at such an edge dip beyond it (Lemma 9.17).
    """

    left: str | None = None
    right: str | None = None
    edges: frozenset = field(default_factory=frozenset)

    def variables(self) -> list:
        return [side for side in ("left", "right") if getattr(self, side) == "free"]


def two_blocks(target: LineMap, n: int, clock: Budget | None = None, tuning: PositiveTuning | None = None) -> TwoBlocks:
    """Decide whether F = ``target`` equals g_2 ∘ g_1 for residual-free ReLU blocks of width n ≥ 2 on R.

    Parameters
    ----------
    target : LineMap
        F, not constant.
    n : int
        The width, at least 2.
    clock : Budget, optional
        Deadline and stop request; past it the answer is ``stopped``.
    tuning : PositiveTuning, optional
        Budgets of Lemma 9.14b's decision at leaves with two full blocks.

    Returns
    -------
    TwoBlocks
    """
    if n < 2:
        raise ValueError("n must be at least 2")
    collapsed = collapse(target)
    if collapsed is None:
        raise ValueError("target must not be constant")
    clock = clock or Budget.of()
    reduced, points = collapsed.reduced, set(collapsed.points())
    turns = turning_points(reduced)
    tally = {"leaves": 0, "undecided": 0, "irrational": 0, "shared": 0, "turning_points": len(turns)}
    for size in range(min(n, len(turns)) + 1):
        for turning in itertools.combinations(turns, size):
            fold = level_map(reduced, turning, collapsed.domain)
            if fold is None:
                continue
            levels = levels_of(fold, points)
            for ends in end_options(fold, points):
                search = _LevelSearch(_Problem(collapsed, target, fold, levels, ends), n, clock, tuning)
                answer = search.run()
                tally["leaves"] += search.leaves
                tally["undecided"] += search.undecided
                tally["irrational"] += search.irrational
                tally["shared"] += search.shared
                if answer is not None:
                    return TwoBlocks(FOUND, answer, tuple(collapsed.expand(t) for t in turning), **tally)
                if clock.expired():
                    return TwoBlocks(STOPPED, **tally)
    if tally["irrational"]:
        return TwoBlocks(IRRATIONAL, **tally)
    open_cases = tally["undecided"] or tally["shared"]
    return TwoBlocks(UNDECIDED if open_cases else NONE, **tally)


def end_options(fold: Folding, points: set) -> list:
    """Every :class:`Ends` the folding allows: going on past an end, or dipping past an edge, needs ℓ there at that edge."""
    lo, hi = fold.domain
    left = [None] if lo is None else ["flat", "through", "free"] if fold.level(lo) == fold.low else ["flat"]
    right = [None]
    if hi is not None:
        right = ["flat", "through", "free"] if fold.level(hi) == getattr(fold, _edge_of(fold, "right")) else ["flat"]
    dips = {edge for edge, value in (("low", fold.low), ("high", fold.high))
            if value is not None and any(fold.level(c) == value for c in points if c in fold.turning)}
    out = []
    for a in left:
        for b in right:
            needed = {_edge_of(fold, side) for side, choice in (("left", a), ("right", b)) if choice in ("through", "free")}
            for extra in itertools.chain.from_iterable(itertools.combinations(sorted(dips - needed), k) for k in range(len(dips - needed) + 1)):
                out.append(Ends(a, b, frozenset(needed | set(extra))))
    return out


def _edge_of(fold: Folding, side: str) -> str:
    """Which edge of ℓ's image g_1 leaves through past the ``side`` end: ``low`` or ``high``."""
    if side == "left":
        return "low"
    return "high" if fold.level.slopes_at(fold.domain[1])[0] > 0 else "low"


def levels_of(fold: Folding, points: set = frozenset()) -> list:
    """The levels Y* of a folding, sorted, each with its crossings, G's ratio and its plateau points (Lemmas 9.14, 9.17)."""
    level, profile = fold.level, fold.profile
    lo, hi = fold.domain
    values = {level(t) for t in level.breakpoints if _within(fold.domain, t)} | set(profile.breakpoints)
    values |= {level(t) for t in (lo, hi) if t is not None} | {level(c) for c in points}
    out = []
    for y in sorted(v for v in values if fold.inside(v)):
        crossings, plateau_crossings = [], []
        for x in _crossing_points(level, y):
            if x in fold.turning or not _within(fold.domain, x) or x in (lo, hi):
                continue
            left, right = level.slopes_at(x)
            record = (right / left, 1 if right > 0 else -1)
            (plateau_crossings.append((*record, x)) if x in points else crossings.append(record))
        turns = tuple(c for c in fold.turning if c in points and level(c) == y)
        left, right = profile.slopes_at(y)
        out.append(Level(y, tuple(crossings), right / left, tuple(plateau_crossings), turns))
    return out


def _inside(low: Fraction | None, high: Fraction | None) -> Fraction:
    """A point strictly inside the interval from low to high (None: unbounded)."""
    if low is None:
        return Fraction(0) if high is None else high - 1
    return low + 1 if high is None else (low + high) / 2


def _crossing_points(phi: LineMap, y: Fraction) -> list:
    """Every x with φ(x) = y (φ without a zero slope), each once, sorted."""
    return sorted(set(preimages(phi, y)))


def _within(domain: tuple, x: Fraction) -> bool:
    lo, hi = domain
    return (lo is None or x >= lo) and (hi is None or x <= hi)




@dataclass(frozen=True)
class _Problem:
    """One leaf family: the collapsed F, the original F, a folding, its levels and a choice of ends."""

    collapsed: Collapsed
    target: LineMap
    fold: Folding
    levels: list
    ends: Ends

    def edge_turns(self) -> dict:
        """Edge → the plateau points where ℓ turns at that edge of its image."""
        points = set(self.collapsed.points())
        out = {}
        for edge, value in (("low", self.fold.low), ("high", self.fold.high)):
            out[edge] = [c for c in self.fold.turning if c in points and value is not None and self.fold.level(c) == value]
        return out


class _LevelSearch:
    """Depth-first search over η (and the passing plateau point) at each level, pruned by the breakpoint counts."""

    def __init__(self, problem: _Problem, n: int, clock: Budget, tuning: PositiveTuning | None):
        self.problem, self.n, self.clock, self.tuning = problem, n, clock, tuning
        self.options = [level.choices() for level in problem.levels]
        # Fewest breakpoints the levels from i on can add, per block: the pruning bound.
        self.floor = [(0, 0)] * (len(self.options) + 1)
        for i in range(len(self.options) - 1, -1, -1):
            a, b = self.floor[i + 1]
            self.floor[i] = (a + min(c.first for c in self.options[i]), b + min(c.second for c in self.options[i]))
        self.leaves = self.undecided = self.irrational = self.shared = 0

    def run(self) -> tuple | None:
        problem, ends = self.problem, self.problem.ends
        flat_turns = sum(len(turns) for edge, turns in problem.edge_turns().items() if edge not in ends.edges)
        first = len(problem.fold.turning) + sum(side in ("flat", "free") for side in (ends.left, ends.right)) + flat_turns
        return self._descend(0, [], first, len(ends.edges))

    def _descend(self, i: int, chosen: list, first: int, second: int) -> tuple | None:
        if first + self.floor[i][0] > self.n or second + self.floor[i][1] > self.n or self.clock.expired():
            return None
        if i == len(self.options):
            self.leaves += 1
            return self._leaf(chosen)
        for choice in self.options[i]:
            found = self._descend(i + 1, chosen + [choice], first + choice.first, second + choice.second)
            if found is not None:
                return found
        return None

    def _leaf(self, chosen: list) -> tuple | None:
        """The witness for this assignment, or None (after counting it open when that is what it is)."""
        shape = _Shape(self.problem, chosen)
        first, second = shape.first_forms(), shape.second_forms()
        more_kinks = any(choice.more_kinks for choice in chosen)
        if more_kinks and len(first) == self.n:
            # One more breakpoint fills g_1: one path of two kinks, its middle slope held by the subset condition.
            return self._middle(shape, first, second, shape.kinked(chosen), exact=not shape.flat_turns(chosen))
        values = solve(first, second, self.n, shape.size, self.tuning, self.clock)
        if values == IRRATIONAL and not self.problem.collapsed.plateaus:
            self.irrational += 1  # a real witness exists (Lemma 9.14b): no plateau point needs a fit
            return None
        if values in (UNDECIDED, IRRATIONAL):
            self.undecided += 1
            return None
        found = None if values is None else shape.witness(values, self.n, more_kinks)
        if found is None and values is not None and shape.size == 2:
            found = self._slices(shape, first, second, more_kinks)
        if found is None and values is not None and more_kinks and len(first) == self.n - 1:
            # Two more breakpoints fill g_1: a straight crossing bent twice is one middle slope (two paths bent: left open).
            return self._middle(shape, first, second, shape.kinked(chosen), exact=False, straight=True)
        turns = shape.flat_turns(chosen) if len(first) - 1 == self.n else []
        if found is None and turns:
            # g_1 is full, so a flat turn dipping with two kinks instead changes its subset condition.
            return self._middle(shape, first, second, turns, exact=len(turns) == 1)
        if found is None and values is not None and (shape.size > 2 or more_kinks):
            self.shared += 1
        return found

    def _middle(self, shape: _Shape, first: list, second: list, points: list, exact: bool, straight: bool = False) -> tuple | None:
        """g_1 full with one path of two kinks, at one of ``points``: its middle slope from the subset condition (Lemma 9.18 (d)).

        Searched with no variable left (else the leaf is open); ``exact``:
        no other path could take a middle slope too, so no witness here
        means none in this leaf. ``straight``: only crossings with equal
        slopes either side, whose two kinks are both new.
        """
        u = (Fraction(1),)
        if shape.size != 1 or not fits_alone(second, self.n):
            self.shared += shape.size != 1
            return None
        collapsed_first, _ = shape.collapsed_maps(u)
        slopes = [form[0] for form in first]
        jumps = [b - a for a, b in itertools.pairwise(slopes)]
        lengths = sorted(set(shape.plateau_ends(u)))
        spans = [*lengths, *((a + b) / 2 for a, b in itertools.pairwise(lengths)), lengths[-1] + 1, lengths[0] / 2]
        for c in points:
            entry, leave = collapsed_first.slopes_at(c)
            own = [leave - entry] if c in shape.passing else [-entry, leave]  # a crossing's kink or a dip's turn, or a flat turn's two breakpoints
            if straight != (shape.passing.get(c) == "cross" and entry == leave):
                continue  # a straight crossing takes two breakpoints more, any other path one
            own = [] if straight else own
            rest = list(jumps)
            for jump in own:
                rest.remove(jump)
            free, values = middle_slopes(rest, slopes[-1], entry, leave)
            length = shape.problem.collapsed.points()[c].length
            if free:  # any middle balances: one reaching each candidate length (a dip: flat)
                values |= {Fraction(0)} if c not in shape.passing or shape.passing[c] == "dip" else {span / length * (1 if entry > 0 else -1) for span in spans}
            for middle in sorted(values - {entry, leave}):
                found = shape.witness(u, self.n, middles={c: middle})
                if found is not None:
                    return found
        self.shared += not exact
        return None

    def _slices(self, shape: _Shape, first: list, second: list, more_kinks: bool) -> tuple | None:
        """A shared range that misfits at the solver's u, with one variable q: every q where a condition or a fit can change (Lemma 9.18)."""
        ends = [shape.plateau_ends((Fraction(1), Fraction(q))) for q in (1, 2)]
        steady = [a for a, b in zip(*ends) if a == b]
        moving = [a for a, b in zip(*ends) if a != b]
        points = sorted(critical_ratios(first, second) | {a / b for a in steady for b in moving})
        tried = [*points, *((a + b) / 2 for a, b in itertools.pairwise(points))]
        tried += [points[0] / 2, points[-1] * 2] if points else [Fraction(1)]
        for q in tried:
            u = (Fraction(1), q)
            if solve(forms_at(first, u), forms_at(second, u, inverse=True), self.n, 1) is not None:
                found = shape.witness(u, self.n, more_kinks)
                if found is not None:
                    return found
        return None


class _Shape:
    """Slopes of g_1 and g_2 as linear forms in the free variables, for one assignment and one choice of ends.

    Variables: u_0 = 1 below the first generic level, one u per generic
    level (h's slopes above it carry it), then one per ``free`` end (g_1's
    slope there). Flat plateau points put a zero slope into g_1's forms, an
    inserted range one into g_2's.
    """

    def __init__(self, problem: _Problem, chosen: list):
        self.problem = problem
        self.values = [level.value for level in problem.levels]
        coefficient, group, self.pieces = Fraction(1), 0, [(Fraction(1), 0)]
        self.passing, self.inserted = {}, []
        for level, choice in zip(problem.levels, chosen):
            eta, passing = choice.eta, choice.passing
            if eta is None:
                group += 1
            else:
                coefficient *= eta
            self.pieces.append((coefficient, group))
            if passing:
                self.inserted.append(level.value)
                crossing = {c for *_, c in level.plateau_crossings}
                self.passing.update((c, "cross" if c in crossing else "dip") for c in passing)
        for edge, turns in problem.edge_turns().items():
            if edge in problem.ends.edges:
                self.passing.update((c, "beyond") for c in turns)
        self.flat_points = [c for c in problem.collapsed.points() if c not in self.passing]
        self.end_variable = {side: group + 1 + k for k, side in enumerate(problem.ends.variables())}
        self.size = group + 1 + len(self.end_variable)

    def _unit(self, index: int, scale: Fraction) -> tuple:
        out = [Fraction(0)] * self.size
        out[index] = scale
        return tuple(out)

    def _end_sign(self, side: str) -> int:
        """The sign of g_1's slope past the ``side`` end: it goes on toward the edge it leaves through."""
        return 1 if side == "left" or _edge_of(self.problem.fold, side) == "high" else -1

    def first_forms(self) -> list:
        """g_1's slopes left to right as linear forms, one per piece where the form changes."""
        fold = self.problem.fold
        level, domain = fold.level, fold.domain
        cuts = {t for t in level.breakpoints if _within(domain, t)} | {t for t in domain if t is not None} | set(self.flat_points)
        for y in self.values:
            cuts.update(x for x in _crossing_points(level, y) if _within(domain, x))
        cuts = sorted(cuts)
        inner = [(a + b) / 2 for a, b in itertools.pairwise(cuts)]
        samples = ([cuts[0] - 1] if domain[0] is None else []) + inner + ([cuts[-1] + 1] if domain[1] is None else []) if cuts else [Fraction(0)]
        entries = []
        for x in samples:
            _, slope = level.slopes_at(x)
            coefficient, group = self.pieces[bisect.bisect_right(self.values, level(x))]
            entries.append(((0, x), self._unit(group, slope * coefficient)))
        entries += [((0, c), self._unit(0, Fraction(0))) for c in self.flat_points]
        for side, key in (("left", (-1, 0)), ("right", (1, 0))):
            choice = getattr(self.problem.ends, side)
            if choice == "flat":
                entries.append((key, self._unit(0, Fraction(0))))
            elif choice == "free":
                entries.append((key, self._unit(self.end_variable[side], Fraction(self._end_sign(side)))))
        return dedupe([form for _, form in sorted(entries, key=lambda e: e[0])])

    def second_forms(self) -> list:
        """g_2's slopes (on h's image, flat on inserted ranges and past chosen edges, else continued linearly) in 1/u."""
        fold, ends = self.problem.fold, self.values
        low, high = fold.low, fold.high
        if ends:
            below = ends[0] - 1 if low is None else (low + ends[0]) / 2
            above = ends[-1] + 1 if high is None else (ends[-1] + high) / 2
            samples = [below, *[(a + b) / 2 for a, b in itertools.pairwise(ends)], above]
        else:
            samples = [_inside(low, high)]
        entries = []
        for piece, y in enumerate(samples):
            _, slope = fold.profile.slopes_at(y)
            coefficient, group = self.pieces[piece]
            entries.append(((0, y), self._unit(group, slope / coefficient)))
        entries += [((0, y), self._unit(0, Fraction(0))) for y in self.inserted]
        entries += [(key, self._unit(0, Fraction(0))) for edge, key in (("low", (-1, 0)), ("high", (1, 0))) if edge in self.problem.ends.edges]
        return dedupe([form for _, form in sorted(entries, key=lambda e: e[0])])

    def witness(self, u: tuple, n: int, more_kinks: bool = False, middles: dict | None = None) -> tuple | None:
        """(g_1, g_2) on the original line for positive values u, checked to compose to F and to be blocks.

        None if a shared range does not fit: with paths of one kink, or with
        ``more_kinks`` paths of two within the breakpoints g_1 has to spare
        below n, or with ``middles`` (plateau point → the fixed middle slope
        of its path of two kinks; a flat turn there dips) (Lemma 9.18).
        """
        problem = self.problem
        first, second = self.collapsed_maps(u)
        if problem.collapsed.plateaus:
            spare = n - len(forms_at(self.first_forms(), u)) if more_kinks and not middles else 0
            passing = {**{c: "dip" for c in middles or {}}, **self.passing}
            maps = uncollapse(problem.collapsed, first, second, passing, spare, middles)
            if maps is None:
                return None
            first, second = maps
        if second.after(first) != problem.target or block_values(first, n) is None or block_values(second, n) is None:
            raise AssertionError("bug: a leaf of Theorem 9.12's search gave maps that are not two blocks composing to F")
        return first, second

    def plateau_ends(self, u: tuple) -> list:
        """The lengths where a passing plateau point's fit can change at u: |slope|·L at a crossing's two sides, a dip's depth."""
        first, _ = self.collapsed_maps(u)
        lengths = self.problem.collapsed.points()
        out = []
        for c, kind in sorted(self.passing.items()):
            entry, leave = map(abs, first.slopes_at(c))
            out += [entry * lengths[c].length, leave * lengths[c].length] if kind == "cross" else [lengths[c].length * entry * leave / (entry + leave)]
        return out

    def flat_turns(self, chosen: list) -> list:
        """The turns left flat that could instead dip with two kinks into a range crossings pass (Lemma 9.18)."""
        return [c for level, choice in zip(self.problem.levels, chosen) for c in level.flat_turns(choice.passing)]

    def kinked(self, chosen: list) -> list:
        """The plateau points passing where ``more_kinks`` was chosen."""
        return [c for choice in chosen if choice.more_kinks for c in choice.passing]

    def collapsed_maps(self, u: tuple) -> tuple:
        """g̃_1 = h ∘ ℓ (with its ends as chosen) and g̃_2 = G ∘ h⁻¹ on the collapsed line, for positive values u."""
        fold, (lo, hi) = self.problem.fold, self.problem.fold.domain
        slopes = [coefficient * u[group] for coefficient, group in self.pieces]
        h = LineMap.of(self.values, slopes, self.values[0]) if self.values else LineMap.of((), (Fraction(1),), Fraction(0))
        inner = h.after(fold.level)
        first = LineMap.sampled([*inner.breakpoints, *(t for t in (lo, hi) if t is not None)], lambda x: self._first_at(inner, x, u))
        return first, self._second(h)

    def _first_at(self, inner: LineMap, x: Fraction, u: tuple) -> Fraction:
        """g̃_1 at a collapsed x: h ∘ ℓ on the domain; past a flat end constant, or on at its slope or at the free one."""
        lo, hi = self.problem.fold.domain
        for side, end, outside in (("left", lo, lo is not None and x < lo), ("right", hi, hi is not None and x > hi)):
            if not outside:
                continue
            choice = getattr(self.problem.ends, side)
            if choice == "flat":
                return inner(end)
            if choice == "free":
                return inner(end) + self._end_sign(side) * u[self.end_variable[side]] * (x - end)
        return inner(x)

    def _second(self, h: LineMap) -> LineMap:
        """G ∘ h⁻¹ on h's image, flat past each chosen edge, linear elsewhere."""
        fold = self.problem.fold
        outer = fold.profile.after(h.inverse())
        edges = self.problem.ends.edges
        bottom = None if fold.low is None else h(fold.low)
        top = None if fold.high is None else h(fold.high)

        def value(y):
            if "low" in edges and y < bottom:
                return outer(bottom)
            if "high" in edges and y > top:
                return outer(top)
            return outer(y)

        return LineMap.sampled([*outer.breakpoints, *(v for v in (bottom, top) if v is not None)], value)
