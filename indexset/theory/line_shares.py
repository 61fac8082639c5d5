"""Splits of Theorem 9.6 with free ratios: the ratios that balance a set, and the splits with two extra incidences.

MATH.md §9.5, Theorem 9.6 (the case m = L·n − 2) and Lemma 9.6a. A block's
ratio list may hold *slots*, positions whose ratio is a free positive
variable. Its slopes are then single terms c·M_i, with M_0 = 1 and M_i the
product of the slot ratios up to the i-th, so each subset P of Lemma 9.5
gives one linear form in (1, M_1, …, M_k) (:func:`slot_forms`).

When F has m = L·n − 2 breakpoints (L ≥ 3), a split with two extra
incidences fills every block. By Lemma 9.6a only three kinds need a search
(:func:`two_extra`): one breakpoint in three blocks, or two breakpoints
each in two blocks, along a chain of three blocks or in two disjoint
pairs; an extra point in two blocks, or two breakpoints in the same pair
of blocks, leave a split without sharing. Every ratio found is rational.
"""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

from indexset.theory.line_positive import positive_root


def slot_forms(ratios, slots) -> frozenset:
    """The forms Σ_{j∈P} jump_j − last slope, over every subset P, as coefficients of (1, M_1, …, M_k).

    ``slots``: increasing positions of ``ratios`` whose ratio is free (their
    entries are ignored); M_i is the product of the first i slot ratios.
    """
    k = len(slots)
    slopes = [(Fraction(1), 0)]  # slope = coefficient · M_index
    for i, r in enumerate(ratios):
        c, index = slopes[-1]
        slopes.append((c, index + 1) if i in slots else (c * r, index))

    def vector(term, sign):
        out = [Fraction(0)] * (k + 1)
        out[term[1]] = sign * term[0]
        return out

    sums = {tuple(vector(slopes[-1], -1))}
    for left, right in itertools.pairwise(slopes):
        jump = [a + b for a, b in zip(vector(right, 1), vector(left, -1))]
        sums |= {tuple(s + j for s, j in zip(total, jump)) for total in sums}
    return frozenset(sums)


def balancing_ratios(ratios, at: int) -> set | None:
    """The q > 0 for which the set with ratio q at position ``at`` is balanced (None: every q).

    Slopes right of ``at`` carry the factor q, so each subset P gives one
    linear equation α + β·q = 0.
    """
    out = set()
    for alpha, beta in slot_forms(ratios, (at,)):
        if beta == 0:
            if alpha == 0:
                return None
            continue
        if -alpha / beta > 0:
            out.add(-alpha / beta)
    return out


def two_extra(search) -> list | None:
    """A split with two extra incidences of F's m = L·n − 2 breakpoints, every block full and balanced, or None.

    ``search``: the split search of :mod:`indexset.theory.line_stacks`
    (its ``ratios``, ``n``, ``layers``, ``clock``, ``admissible`` and
    ``full_sets``). The split gives, per block, its ratio at each of F's
    breakpoints (1 where it does not break). None proves that there is
    none (Lemma 9.6a), unless the clock stopped the search: the caller checks.
    """
    finder = _TwoExtra(search)
    for kind in (finder.one_in_three, finder.chain, finder.two_pairs):
        found = kind()
        if found is not None:
            return found
    return None


class _TwoExtra:
    """The kinds of two extra incidences that Lemma 9.6a leaves, each with the other breakpoints in full balanced blocks."""

    def __init__(self, search) -> None:
        self.search, self.m, self.n, self.layers = search, len(search.ratios), search.n, search.layers

    def _sets(self, available, size: int, after: tuple = ()):
        """The ``size``-subsets of ``available``, not before ``after`` (unordered pairs of blocks are met once)."""
        for members in itertools.combinations(available, size):
            if self.search.clock.expired():
                return
            if members >= after:
                yield members

    def _without(self, points, *used) -> tuple:
        taken = {j for group in used for j in group}
        return tuple(j for j in points if j not in taken)

    def _split(self, values: list, rest: tuple, blocks: int) -> list | None:
        """The split of ``values`` (per block, its ratio at each breakpoint it holds) with ``rest`` in ``blocks`` full balanced sets."""
        groups = self.search.full_sets(rest, blocks)
        if groups is None:
            return None
        ratios = self.search.ratios
        values = [*values, *({j: ratios[j] for j in group} for group in groups)]
        return [[layer.get(j, Fraction(1)) for j in range(self.m)] for layer in values]

    def one_in_three(self) -> list | None:
        """A breakpoint c in three blocks, its ratio r_c split as ρ_1 ρ_2 ρ_3, each ρ_k balancing its block."""
        ratios, n = self.search.ratios, self.n
        for c in range(self.m):
            others = self._without(range(self.m), (c,))
            for first in self._sets(others, n - 1):
                ones = self._admissible(first, c)
                for second in self._sets(self._without(others, first), n - 1, first) if ones != set() else ():
                    twos = self._admissible(second, c)
                    for third in self._sets(self._without(others, first, second), n - 1, second) if twos != set() else ():
                        values = _product_of_three([ones, twos, self._admissible(third, c)], ratios[c])
                        if values is None:
                            continue
                        blocks = [{**{j: ratios[j] for j in group}, c: v} for group, v in zip((first, second, third), values)]
                        found = self._split(blocks, self._without(others, first, second, third), self.layers - 3)
                        if found is not None:
                            return found
        return None

    def two_pairs(self) -> list | None:
        """Breakpoints c < c′, each in two blocks, the two pairs of blocks disjoint (L ≥ 4)."""
        if self.layers < 4:
            return None
        for c, d in itertools.combinations(range(self.m), 2):
            others = self._without(range(self.m), (c, d))
            for first, second, q in self._pairs_at(c, others):
                for third, fourth, p in self._pairs_at(d, self._without(others, first, second)):
                    blocks = [self._values(first, {c: q}), self._values(second, {c: self.search.ratios[c] / q}),
                              self._values(third, {d: p}), self._values(fourth, {d: self.search.ratios[d] / p})]
                    found = self._split(blocks, self._without(others, first, second, third, fourth), self.layers - 4)
                    if found is not None:
                        return found
        return None

    def _pairs_at(self, c: int, available: tuple):
        """Disjoint (n − 1)-sets of ``available`` and a q balancing the first with q at c and the second with r_c/q."""
        for first in self._sets(available, self.n - 1):
            ones = self._admissible(first, c)
            for second in self._sets(self._without(available, first), self.n - 1, first) if ones != set() else ():
                q = _reciprocal(ones, _scaled(self._admissible(second, c), 1 / self.search.ratios[c]))
                if q is not None:
                    yield first, second, q

    def chain(self) -> list | None:
        """Breakpoints c < c′: c in blocks 1 and 2, c′ in blocks 2 and 3."""
        ratios, n = self.search.ratios, self.n
        for c, d in itertools.combinations(range(self.m), 2):
            others = self._without(range(self.m), (c, d))
            for first in self._sets(others, n - 1):
                ones = self._admissible(first, c)
                for third in self._sets(self._without(others, first), n - 1) if ones != set() else ():
                    threes = self._admissible(third, d)
                    for middle in self._sets(self._without(others, first, third), n - 2) if threes != set() else ():
                        members = tuple(sorted((*middle, c, d)))
                        slots = (members.index(c), members.index(d))
                        found = two_slots(slot_forms([ratios[j] for j in members], slots),
                                          _scaled(ones, ratios[c], inverse=True), _scaled(threes, ratios[d], inverse=True))
                        if found is None:
                            continue
                        at_c, at_d = found
                        blocks = [self._values(first, {c: ratios[c] / at_c}), self._values(middle, {c: at_c, d: at_d}),
                                  self._values(third, {d: ratios[d] / at_d})]
                        split = self._split(blocks, self._without(others, first, third, middle), self.layers - 3)
                        if split is not None:
                            return split
        return None

    def _admissible(self, group: tuple, c: int) -> set | None:
        return self.search.admissible(tuple(sorted((*group, c))), c)

    def _values(self, group: tuple, shared: dict) -> dict:
        return {**{j: self.search.ratios[j] for j in group}, **shared}


def _scaled(values: set | None, factor: Fraction, inverse: bool = False) -> set | None:
    """``{factor·v}`` (``{factor/v}`` with ``inverse``); None (every value) stays None."""
    return None if values is None else {factor / v if inverse else factor * v for v in values}


def _reciprocal(ones: set | None, twos: set | None) -> Fraction | None:
    """A q in ``ones`` with 1/q in ``twos`` (None: every value), or None."""
    if ones is None:
        return Fraction(2) if twos is None else (1 / min(twos) if twos else None)
    common = sorted(q for q in ones if twos is None or 1 / q in twos)
    return common[0] if common else None


def _product_of_three(sets: list, product: Fraction) -> list | None:
    """Values ρ_k in ``sets[k]`` (None: any positive value) with ρ_1 ρ_2 ρ_3 = ``product``, or None."""
    if any(s == set() for s in sets):
        return None
    free = [k for k, s in enumerate(sets) if s is None]
    if free:
        values = [Fraction(1) if s is None else min(s) for s in sets]
        values[free[0]] = product / math.prod(values)
        return values
    first, second, third = sets
    for a, b in itertools.product(sorted(first), sorted(second)):
        if product / (a * b) in third:
            return [a, b, product / (a * b)]
    return None


def two_slots(forms, firsts: set | None, seconds: set | None) -> tuple | None:
    """Ratios (a, b) at a block's two slots, a in ``firsts`` and b in ``seconds`` (None: any positive), that balance it; or None.

    ``forms``: the block's :func:`slot_forms`, coefficients of (1, a, a·b).
    """
    for g0, g1, g2 in sorted(forms):
        if firsts is not None and seconds is not None:
            for a, b in itertools.product(sorted(firsts), sorted(seconds)):
                if g0 + g1 * a + g2 * a * b == 0:
                    return a, b
        elif firsts is not None:  # g0 + g1 a + g2 a b = 0 for b > 0
            for a in sorted(firsts):
                if g2 != 0 and -(g0 + g1 * a) / (g2 * a) > 0:
                    return a, -(g0 + g1 * a) / (g2 * a)
                if g2 == 0 and g0 + g1 * a == 0:
                    return a, Fraction(1)
        elif seconds is not None:  # g0 + a (g1 + g2 b) = 0 for a > 0
            for b in sorted(seconds):
                if g1 + g2 * b != 0 and -g0 / (g1 + g2 * b) > 0:
                    return -g0 / (g1 + g2 * b), b
                if g1 + g2 * b == 0 and g0 == 0:
                    return Fraction(1), b
        else:
            u = positive_root((g0, g1, g2))
            if u is not None:
                return u[1] / u[0], u[2] / u[1]
    return None
