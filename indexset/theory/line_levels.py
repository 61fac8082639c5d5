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
block with n breakpoints is one homogeneous linear equation: decided
exactly, except when both blocks have n breakpoints and two or more levels
are free (then a rational solution is looked for, and a pair without one
is *undecided*).

Where F is flat on an end piece the walk covers the rest, and g_1 there is
flat, or goes on into levels no other point reaches, where g_2 is flat, at
its own slope or at a free one (:class:`Ends`, Lemma 9.16).

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
from dataclasses import dataclass
from fractions import Fraction

from indexset.budget import Budget
from indexset.theory.line import LineMap, balanced, block_values
from indexset.theory.line_walk import Folding, level_map, turning_points

FOUND, NONE, UNDECIDED, STOPPED = "found", "none", "undecided", "stopped"


@dataclass(frozen=True)
class Level:
    """A level y of the image and what g_1, g_2 do there as functions of h's ratio η (Lemma 9.14).

    Attributes
    ----------
    value : Fraction
        y.
    crossings : tuple
        ``(ρ, direction)`` for each non-turning x with ℓ(x) = y.
    profile_ratio : Fraction
        G's slope ratio at y (1 where G does not break; negative where it turns).
    """

    value: Fraction
    crossings: tuple
    profile_ratio: Fraction

    def counts(self, eta: Fraction | None) -> tuple:
        """Breakpoints of g_1 and of g_2 at this level for ratio η (None: a generic η)."""
        if eta is None:
            return len(self.crossings), 1
        first = sum(1 for rho, direction in self.crossings if rho * eta ** direction != 1)
        return first, int(self.profile_ratio != eta)

    def choices(self) -> list:
        """``(η, g_1 count, g_2 count)``: every special ratio, then the generic one (η None), cheapest first."""
        special = {rho ** -direction for rho, direction in self.crossings}
        if self.profile_ratio > 0:
            special.add(self.profile_ratio)
        special.add(Fraction(1))
        out = [(eta, *self.counts(eta)) for eta in sorted(special)]
        out.append((None, *self.counts(None)))
        return sorted(out, key=lambda c: c[1] + c[2])


@dataclass(frozen=True)
class TwoBlocks:
    """The search's answer for one F and width n.

    Attributes
    ----------
    status : str
        ``found`` (``maps`` is a witness), ``none`` (no witness exists:
        Theorem 9.12), ``undecided`` (some two-full-block leaf with two or
        more free levels had no rational solution and no proof of none), or
        ``stopped`` (the budget ran out).
    maps : tuple or None
        ``(g_1, g_2)`` as LineMaps, g_2 ∘ g_1 = F, each a residual-free
        block of width n.
    turning : tuple
        g_1's turning points (found), else ().
    leaves : int
        Ratio assignments checked.
    undecided : int
        Leaves left undecided.
    """

    status: str
    maps: tuple | None = None
    turning: tuple = ()
    leaves: int = 0
    undecided: int = 0


@dataclass(frozen=True)
class Ends:
    """What g_1 does on F's flat ends (Lemma 9.16): ``flat``, ``through`` (on at its slope) or ``free`` (on at a free slope).

    ``flat``: g_1 is constant there, breaking at the end. ``through`` and
    ``free``: g_1 goes on into levels no other point reaches, where g_2 is
    flat (g_2 breaks at that edge); ``free`` gives g_1 a breakpoint with a
    free ratio. None: F has no flat end on that side.
    """

    left: str | None = None
    right: str | None = None

    def first_count(self) -> int:
        return sum(side in ("flat", "free") for side in (self.left, self.right))

    def variables(self) -> list:
        return [side for side in ("left", "right") if getattr(self, side) == "free"]


def flat_ends(target: LineMap) -> tuple | None:
    """``(lo, hi)``: where F leaves its flat ends (None: no flat end that side); None if F is flat anywhere else."""
    slopes, points = target.slopes, target.breakpoints
    lo = points[0] if points and slopes[0] == 0 else None
    hi = points[-1] if points and slopes[-1] == 0 else None
    inner = slopes[(lo is not None):len(slopes) - (hi is not None)]
    return None if not inner or any(s == 0 for s in inner) else (lo, hi)


def two_blocks(target: LineMap, n: int, clock: Budget | None = None) -> TwoBlocks:
    """Decide whether F = ``target`` equals g_2 ∘ g_1 for residual-free ReLU blocks of width n ≥ 2 on R.

    Parameters
    ----------
    target : LineMap
        F, with no zero slope except on its end pieces (:func:`flat_ends`).
    n : int
        The width, at least 2.
    clock : Budget, optional
        Deadline and stop request; past it the answer is ``stopped``.

    Returns
    -------
    TwoBlocks
    """
    if n < 2:
        raise ValueError("n must be at least 2")
    domain = flat_ends(target)
    if domain is None:
        raise ValueError("target must be flat nowhere but on its end pieces, and not constant")
    clock = clock or Budget.of()
    turns = turning_points(target)
    leaves = undecided = 0
    for size in range(min(n, len(turns)) + 1):
        for turning in itertools.combinations(turns, size):
            fold = level_map(target, turning, domain)
            if fold is None:
                continue
            for ends in end_options(fold):
                search = _LevelSearch(fold, n, clock, ends)
                answer = search.run()
                leaves, undecided = leaves + search.leaves, undecided + search.undecided
                if answer is not None:
                    return TwoBlocks(FOUND, answer, turning, leaves, undecided)
                if clock.expired():
                    return TwoBlocks(STOPPED, leaves=leaves, undecided=undecided)
    return TwoBlocks(UNDECIDED if undecided else NONE, leaves=leaves, undecided=undecided)


def end_options(fold: Folding) -> list:
    """Every :class:`Ends` the folding allows: going on past an end needs ℓ there at an edge of its image, moving out."""
    lo, hi = fold.domain
    left = [None] if lo is None else ["flat", *(["through", "free"] if fold.level(lo) == fold.low else [])]
    right = [None]
    if hi is not None:
        outward = fold.high if _slopes_at(fold.level, hi)[0] > 0 else fold.low
        right = ["flat", *(["through", "free"] if fold.level(hi) == outward else [])]
    return [Ends(a, b) for a in left for b in right]


def levels_of(fold: Folding) -> list:
    """The levels Y* of a folding, sorted, each with its crossings and G's ratio (Lemma 9.14)."""
    level, profile = fold.level, fold.profile
    lo, hi = fold.domain
    values = {level(t) for t in level.breakpoints if _within(fold.domain, t)} | set(profile.breakpoints)
    values |= {level(t) for t in (lo, hi) if t is not None}
    out = []
    for y in sorted(v for v in values if fold.inside(v)):
        crossings = []
        for x in _preimages(level, y):
            if x in fold.turning or not _within(fold.domain, x) or x in (lo, hi):
                continue
            left, right = _slopes_at(level, x)
            crossings.append((right / left, 1 if right > 0 else -1))
        left, right = _slopes_at(profile, y)
        out.append(Level(y, tuple(crossings), right / left))
    return out


def _inside(low: Fraction | None, high: Fraction | None) -> Fraction:
    """A point strictly inside the interval from low to high (None: unbounded)."""
    if low is None:
        return Fraction(0) if high is None else high - 1
    return low + 1 if high is None else (low + high) / 2


def _within(domain: tuple, x: Fraction) -> bool:
    lo, hi = domain
    return (lo is None or x >= lo) and (hi is None or x <= hi)


def _preimages(phi: LineMap, y: Fraction) -> list:
    """Every x with φ(x) = y, for φ without a zero slope."""
    points, values, out = phi.breakpoints, phi.values(), set()
    if not points:
        return [(y - phi.anchor) / phi.slopes[0]]
    edges = [None, *points, None]
    for i, slope in enumerate(phi.slopes):
        base, at = (points[0], values[0]) if i == 0 else (points[i - 1], values[i - 1])
        x = base + (y - at) / slope
        lo, hi = edges[i], edges[i + 1]
        if (lo is None or x >= lo) and (hi is None or x <= hi):
            out.add(x)
    return sorted(out)


def _slopes_at(phi: LineMap, x: Fraction) -> tuple:
    """φ's slopes just left and just right of x."""
    j = bisect.bisect_left(phi.breakpoints, x)
    on_point = j < len(phi.breakpoints) and phi.breakpoints[j] == x
    return phi.slopes[j], phi.slopes[j + 1] if on_point else phi.slopes[j]


class _LevelSearch:
    """Depth-first search over η at each level, pruned by the breakpoint counts, for one folding and one choice of ends."""

    def __init__(self, fold: Folding, n: int, clock: Budget, ends: Ends):
        self.fold, self.n, self.clock, self.ends = fold, n, clock, ends
        self.levels = levels_of(fold)
        self.options = [level.choices() for level in self.levels]
        # Fewest breakpoints the levels from i on can add, per block: the pruning bound.
        self.floor = [(0, 0)] * (len(self.levels) + 1)
        for i in range(len(self.levels) - 1, -1, -1):
            a, b = self.floor[i + 1]
            self.floor[i] = (a + min(c[1] for c in self.options[i]), b + min(c[2] for c in self.options[i]))
        self.leaves = self.undecided = 0

    def run(self) -> tuple | None:
        edges = {_Shape.edge_of(self.fold, side) for side in ("left", "right") if getattr(self.ends, side) in ("through", "free")}
        return self._descend(0, [], len(self.fold.turning) + self.ends.first_count(), len(edges))

    def _descend(self, i: int, chosen: list, first: int, second: int) -> tuple | None:
        if first + self.floor[i][0] > self.n or second + self.floor[i][1] > self.n or self.clock.expired():
            return None
        if i == len(self.levels):
            self.leaves += 1
            return self._leaf(chosen)
        for eta, a, b in self.options[i]:
            found = self._descend(i + 1, chosen + [eta], first + a, second + b)
            if found is not None:
                return found
        return None

    def _leaf(self, chosen: list) -> tuple | None:
        """The witness for this assignment, or None (after counting it undecided when that is what it is)."""
        shape = _Shape(self.fold, self.levels, chosen, self.ends)
        first, second = shape.first_forms(), shape.second_forms()
        values = _solve(first, second, self.n, shape.size)
        if values == UNDECIDED:
            self.undecided += 1
            return None
        return None if values is None else shape.witness(values, self.n)


class _Shape:
    """Slopes of g_1 and g_2 as linear forms in the free variables, for one assignment of η to the levels and one choice of ends.

    Variables: u_0 = 1 below the first generic level, one u per generic
    level (h's slopes above it carry it), then one per ``free`` end (g_1's
    slope there).
    """

    def __init__(self, fold: Folding, levels: list, chosen: list, ends: Ends):
        self.fold, self.levels, self.ends = fold, levels, ends
        self.values = [level.value for level in levels]
        coefficient, group, self.pieces = Fraction(1), 0, [(Fraction(1), 0)]
        for eta in chosen:
            if eta is None:
                group += 1
            else:
                coefficient *= eta
            self.pieces.append((coefficient, group))
        self.end_variable = {side: group + 1 + k for k, side in enumerate(ends.variables())}
        self.size = group + 1 + len(self.end_variable)

    @staticmethod
    def edge_of(fold: Folding, side: str) -> str:
        """Which edge of ℓ's image g_1 leaves through past the ``side`` end: ``low`` or ``high``."""
        _lo, hi = fold.domain
        if side == "left":
            return "low"
        return "high" if _slopes_at(fold.level, hi)[0] > 0 else "low"

    def _unit(self, index: int, scale: Fraction) -> tuple:
        out = [Fraction(0)] * self.size
        out[index] = scale
        return tuple(out)

    def _cuts(self) -> list:
        level, (lo, hi) = self.fold.level, self.fold.domain
        cuts = {t for t in level.breakpoints if _within(self.fold.domain, t)} | {t for t in (lo, hi) if t is not None}
        for y in self.values:
            cuts.update(x for x in _preimages(level, y) if _within(self.fold.domain, x))
        return sorted(cuts)

    def first_forms(self) -> list:
        """g_1's slopes left to right as linear forms, one per piece where the form changes."""
        level, (lo, hi) = self.fold.level, self.fold.domain
        cuts = self._cuts()
        inner = [(a + b) / 2 for a, b in itertools.pairwise(cuts)]
        samples = ([cuts[0] - 1] if lo is None else []) + inner + ([cuts[-1] + 1] if hi is None else []) if cuts else [Fraction(0)]
        forms = []
        for x in samples:
            _, slope = _slopes_at(level, x)
            coefficient, group = self.pieces[bisect.bisect_right(self.values, level(x))]
            forms.append(self._unit(group, slope * coefficient))
        for side, at in (("left", 0), ("right", len(forms))):
            choice = getattr(self.ends, side)
            if choice == "flat":
                forms.insert(at, self._unit(0, Fraction(0)))
            elif choice == "free":
                sign = 1 if side == "left" else (1 if _slopes_at(level, hi)[0] > 0 else -1)
                forms.insert(at, self._unit(self.end_variable[side], Fraction(sign)))
        return _dedupe(forms)

    def second_forms(self) -> list:
        """g_2's slopes (on h's image, flat past an edge g_1 goes through, else continued linearly) as linear forms in 1/u."""
        profile, ends = self.fold.profile, self.values
        low, high = self.fold.low, self.fold.high
        if ends:
            below = ends[0] - 1 if low is None else (low + ends[0]) / 2
            above = ends[-1] + 1 if high is None else (ends[-1] + high) / 2
            samples = [below, *[(a + b) / 2 for a, b in itertools.pairwise(ends)], above]
        else:
            samples = [_inside(low, high)]
        forms = []
        for piece, y in enumerate(samples):
            _, slope = _slopes_at(profile, y)
            coefficient, group = self.pieces[piece]
            forms.append(self._unit(group, slope / coefficient))
        edges = {_Shape.edge_of(self.fold, side) for side in ("left", "right") if getattr(self.ends, side) in ("through", "free")}
        if "low" in edges:
            forms.insert(0, self._unit(0, Fraction(0)))
        if "high" in edges:
            forms.append(self._unit(0, Fraction(0)))
        return _dedupe(forms)

    def witness(self, u: tuple, n: int) -> tuple:
        """(g_1, g_2) for positive values u of the variables; checked to compose to F and to be blocks."""
        fold, (lo, hi) = self.fold, self.fold.domain
        slopes = [coefficient * u[group] for coefficient, group in self.pieces]
        h = LineMap.of(self.values, slopes, self.values[0]) if self.values else LineMap.of((), (Fraction(1),), Fraction(0))
        inner = h.after(fold.level)
        first = LineMap.sampled([*inner.breakpoints, *(t for t in (lo, hi) if t is not None)],
                                lambda x: self._first_at(inner, x, u))
        second = self._second(h)
        if block_values(first, n) is None or block_values(second, n) is None:
            raise AssertionError("bug: a leaf of Theorem 9.12's search gave a map that is not a residual-free block")
        return first, second

    def _first_at(self, inner: LineMap, x: Fraction, u: tuple) -> Fraction:
        """g_1 at x: h ∘ ℓ on the domain; past a flat end constant, or on at its slope or at the free one."""
        lo, hi = self.fold.domain
        for side, end, outside in (("left", lo, lo is not None and x < lo), ("right", hi, hi is not None and x > hi)):
            if not outside:
                continue
            choice = getattr(self.ends, side)
            if choice == "flat":
                return inner(end)
            if choice == "free":
                sign = 1 if side == "left" else (1 if _slopes_at(self.fold.level, hi)[0] > 0 else -1)
                return inner(end) + sign * u[self.end_variable[side]] * (x - end)
        return inner(x)

    def _second(self, h: LineMap) -> LineMap:
        """G ∘ h⁻¹ on h's image, flat past an edge some end goes through, linear elsewhere."""
        profile, low, high = self.fold.profile, self.fold.low, self.fold.high
        outer = profile.after(h.inverse())
        edges = {_Shape.edge_of(self.fold, side) for side in ("left", "right") if getattr(self.ends, side) in ("through", "free")}
        bottom = None if low is None else h(low)
        top = None if high is None else h(high)

        def value(y):
            if "low" in edges and y < bottom:
                return outer(bottom)
            if "high" in edges and y > top:
                return outer(top)
            return outer(y)

        return LineMap.sampled([*outer.breakpoints, *(v for v in (bottom, top) if v is not None)], value)


def _dedupe(forms: list) -> list:
    out = [forms[0]]
    for form in forms[1:]:
        if form != out[-1]:
            out.append(form)
    return out


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


def _both_signs(form: tuple) -> bool:
    return any(v > 0 for v in form) and any(v < 0 for v in form)


def _positive_root(form: tuple) -> tuple | None:
    """u > 0 with form·u = 0 (form zero or of both signs), else None."""
    if not any(form):
        return tuple(Fraction(1) for _ in form)
    if not _both_signs(form):
        return None
    plus = next(i for i, v in enumerate(form) if v > 0)
    minus = next(i for i, v in enumerate(form) if v < 0)
    u = [Fraction(1)] * len(form)
    u[minus] = (sum(abs(v) for i, v in enumerate(form) if i not in (plus, minus)) + 1) / -form[minus]
    u[plus] = -sum(v * w for i, (v, w) in enumerate(zip(form, u)) if i != plus) / form[plus]
    return tuple(u)


def _solve(first: list, second: list, n: int, size: int):
    """Positive values of the variables making every block with n breakpoints balanced; None, or UNDECIDED."""
    full = [len(first) - 1 == n, len(second) - 1 == n]
    if len(first) - 1 > n or len(second) - 1 > n:
        return None
    ones = tuple(Fraction(1) for _ in range(size))
    if not any(full):
        return ones
    if size == 1:
        ok = all(not f or balanced([b[0] - a[0] for a, b in itertools.pairwise(forms)], forms[-1][0]) is not None
                 for f, forms in zip(full, (first, second)))
        return ones if ok else None
    if full[0] != full[1]:
        forms = first if full[0] else second
        for form in _subset_forms(forms):
            u = _positive_root(form)
            if u is not None:
                return u if full[0] else tuple(1 / v for v in u)
        return None
    return _both_full(_subset_forms(first), _subset_forms(second), size)


def _both_full(first: list, second: list, size: int):
    """u > 0 with a·u = 0 for some a in ``first`` and b·(1/u) = 0 for some b in ``second``; None, or UNDECIDED."""
    first = [a for a in first if not any(a) or _both_signs(a)]
    second = [b for b in second if not any(b) or _both_signs(b)]
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
    for a, b in itertools.product(first, second):
        # One variable free, the others tied to u_0: a rational solution, if this slice has one.
        for free in range(size):
            a2 = (sum(v for i, v in enumerate(a) if i != free), a[free])
            b2 = (sum(v for i, v in enumerate(b) if i != free), b[free])
            found = _both_full([a2], [b2], 2) if (not any(a2) or _both_signs(a2)) and (not any(b2) or _both_signs(b2)) else None
            if found not in (None, UNDECIDED):
                return tuple(found[1] if i == free else Fraction(1) for i in range(size))
    return UNDECIDED
