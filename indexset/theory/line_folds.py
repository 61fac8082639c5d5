"""Folding composites on R: sufficient searches for a residual-free stack equal to them (MATH.md §9.5, extension).

When F = f_2 ∘ f_1 on R is not strictly monotone, Theorem 9.6 does not
apply. Two families of witnesses are searched, each exhaustively within
itself, neither covering every witness (so "none" proves nothing):

- :func:`one_fold` (Proposition 9.7): g_1 = h ∘ f_1 and g_2 = f_2 ∘ h⁻¹ for
  a homeomorphism h with one breakpoint;
- :func:`homeomorphic_first` (Proposition 9.9): g_1 = H a homeomorphism
  taking some of F's breakpoints, g_2 = F ∘ H⁻¹ the rest.

For two blocks Theorem 9.12 (:mod:`indexset.theory.line_levels`) decides
instead; these searches serve where it is undecided, and L ≥ 3.

In both, the one free slope ratio q enters every jump and every subset
condition of Lemma 9.5 affinely (in q or in 1/q), so the candidate q are
the positive roots of those forms and one q off them.

>>> from fractions import Fraction as Q
>>> from indexset.theory.line import LineMap
>>> F = LineMap.of((Q(0), Q(1), Q(2)), (Q(-2), Q(-1), Q(-2), Q(1)), Q(0))   # falls, then turns at 2
>>> first, last = homeomorphic_first(F, 2)
>>> [str(t) for t in first.breakpoints], [str(t) for t in last.breakpoints]
(['1', '2'], ['-1', '2'])
>>> all(F(x) == last(first(x)) for x in range(-3, 5))
True
"""

from __future__ import annotations

import bisect
import itertools
from fractions import Fraction

from indexset.budget import Budget
from indexset.theory.line import LineMap, block_values, preimages

IDENTITY = LineMap.of((), (Fraction(1),), Fraction(0))


def one_fold(first: LineMap, second: LineMap, n: int, clock: Budget | None = None) -> tuple | None:
    """A fold h (one breakpoint y*, slopes 1 and q) with h ∘ first and second ∘ h⁻¹ residual-free blocks of width n.

    The folds tried are at the breakpoints of ``second`` and the images of
    those of ``first`` (elsewhere both maps gain a breakpoint); ``q = 1``
    is the pair itself. The slopes of h ∘ first are first's, times q where
    first > y*, and those of second ∘ h⁻¹ are second's, times 1/q right of
    y*: every jump and every subset condition of Lemma 9.5 is affine in q
    (respectively 1/q), so their positive roots are the only q at which
    either map can lose a breakpoint or become balanced. Those, q = 1 and
    one q off them are checked, exactly: for each y* tried this covers every
    q > 0. Other witnesses exist that are not of this form, so None proves
    nothing.

    Returns
    -------
    tuple or None
        ``(y*, q, [h ∘ first, second ∘ h⁻¹])``.
    """
    clock = clock or Budget.of(None, None)
    folds = sorted(set(second.breakpoints) | set(first.values()))
    for fold in folds:
        if clock.expired():
            return None
        inner = sorted(set(first.breakpoints) | set(preimages(first, fold)))
        outer = sorted(set(second.breakpoints) | {fold})
        ratios = _roots(_scaled_slopes(first, inner, first, fold))
        ratios |= {1 / p for p in _roots(_scaled_slopes(second, outer, IDENTITY, fold))}
        for ratio in _candidates(ratios):
            h = LineMap.of((fold,), (Fraction(1), ratio), fold)
            maps = [h.after(first), second.after(h.inverse())]
            if all(block_values(g, n) is not None for g in maps):
                return fold, ratio, maps
    return None


def _candidates(roots: set) -> list:
    """The q to check: the roots, q = 1 and one q off the roots.

    Away from the roots every map's status is constant in q, so one q off
    them stands for all the others.
    """
    generic = next(Fraction(k) for k in itertools.count(2) if Fraction(k) not in roots)
    return sorted(roots | {Fraction(1), generic})


def _scaled_slopes(phi: LineMap, points: list, level: LineMap, fold: Fraction) -> list:
    """Each piece's slope of phi as an affine form (a, b) = a + b·t, scaled by t on the pieces where ``level`` > ``fold``."""
    if not points:
        return [(Fraction(0), phi.slopes[0]) if level(Fraction(0)) > fold else (phi.slopes[0], Fraction(0))]
    inside = [(a + b) / 2 for a, b in itertools.pairwise(points)]
    forms = []
    for x in [points[0] - 1, *inside, points[-1] + 1]:
        slope = phi.slopes[bisect.bisect_right(phi.breakpoints, x)]
        forms.append((Fraction(0), slope) if level(x) > fold else (slope, Fraction(0)))
    return forms


def _roots(forms: list) -> set:
    """The t > 0 where some jump of the piecewise slopes ``forms`` vanishes or some subset of jumps sums to the last slope."""
    jumps = [(c - a, d - b) for (a, b), (c, d) in itertools.pairwise(forms)]
    equations = list(jumps)
    for choice in itertools.product((0, 1), repeat=len(jumps)):
        picked = [j for j, x in zip(jumps, choice) if x]
        equations.append((sum((j[0] for j in picked), Fraction(0)) - forms[-1][0],
                          sum((j[1] for j in picked), Fraction(0)) - forms[-1][1]))
    return {-a / b for a, b in equations if b != 0 and -a / b > 0}


def homeomorphic_first(target: LineMap, n: int, clock: Budget | None = None) -> tuple | None:
    """A homeomorphism H and F ∘ H⁻¹, both residual-free blocks of width n, or None.

    H breaks at a set U of F's breakpoints (at most n). Where F keeps its
    direction (a positive slope ratio r), H may take the whole ratio, so
    that F ∘ H⁻¹ does not break there; at most one point c of U has a free
    ratio q instead, which F ∘ H⁻¹ then shares. Every U and c is tried, the
    q as in :func:`one_fold`.

    Returns
    -------
    tuple or None
        ``(H, F ∘ H⁻¹)`` as :class:`LineMap`.
    """
    clock = clock or Budget.of(None, None)
    points = target.breakpoints
    keeps = set(kept_directions(target))
    # F ∘ H⁻¹ keeps every breakpoint H does not take, so H takes at least m − n of them.
    for size in range(max(0, len(points) - n), min(n, len(points)) + 1):
        for chosen in itertools.combinations(range(len(points)), size):
            for free in (None, *chosen):
                if clock.expired():
                    return None
                if free is None and not keeps.issuperset(chosen):
                    continue
                if free is not None and not keeps.issuperset(set(chosen) - {free}):
                    continue
                found = _first_with(target, chosen, free, n)
                if found is not None:
                    return found
    return None


def _first_with(target: LineMap, chosen: tuple, free: int | None, n: int) -> tuple | None:
    """H through ``chosen`` with F's ratios there (ratio q at ``free``), and F ∘ H⁻¹, if both are blocks for some q."""
    points, slopes = target.breakpoints, target.slopes
    base = homeomorphism(points, slopes, chosen, free, Fraction(1))
    ratios = [Fraction(1)]
    if free is not None:
        at, outer = points[free], target.after(base.inverse())
        roots = _roots(_scaled_slopes(base, sorted(set(base.breakpoints) | {at}), IDENTITY, at))
        image = sorted(set(outer.breakpoints) | set(base(t) for t in points))
        ratios = _candidates(roots | {1 / p for p in _roots(_scaled_slopes(outer, image, IDENTITY, base(at)))})
    for ratio in ratios:
        first = homeomorphism(points, slopes, chosen, free, ratio)
        last = target.after(first.inverse())
        if block_values(first, n) is not None and block_values(last, n) is not None:
            return first, last
    return None


def kept_directions(target: LineMap) -> list:
    """The indices of F's breakpoints where F keeps its direction (a positive slope ratio), increasing."""
    slopes = target.slopes
    return [j for j in range(len(target.breakpoints)) if slopes[j] * slopes[j + 1] > 0]


def homeomorphism(points, slopes, chosen: tuple, free: int | None = None, ratio: Fraction = Fraction(1)) -> LineMap:
    """Slope 1 at −∞; at each chosen breakpoint (indices into ``points``) F's ratio (``slopes``: F's), or ``ratio`` at ``free``."""
    current, pieces = Fraction(1), [Fraction(1)]
    for j in chosen:
        current *= ratio if j == free else slopes[j + 1] / slopes[j]
        pieces.append(current)
    return LineMap.of([points[j] for j in chosen], pieces, Fraction(0))
