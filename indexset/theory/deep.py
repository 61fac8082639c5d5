"""Deep ReLU stacks that no residual-free stack of the same width equals (MATH.md §9, extension).

Five necessary conditions, each a theorem of MATH.md §9 whose hypotheses are
checked exactly here. All are about the *function* F of the given stack
and the first block g_1 of a candidate residual-free stack G = g_L ∘ … ∘ g_1
of width n (biases anywhere, so they hold for the ``affine`` class and
therefore for ``bias-free`` too):

- **Theorem 9.2 (rank at infinity; ReLU, any d, any depth).** Far out in a
  generic direction w only the units of g_1 with ``p_i·w > 0`` are active,
  and for w or −w that is at most ⌊n/2⌋ of them, so G has an open set where
  its Jacobian has rank ≤ ⌊n/2⌋. If every region of F has Jacobian rank
  ρ > n/2 (that is, n < 2ρ), no such G equals F.
- **Theorem 9.2b (ranks far out; ReLU, any d, any depth).** The same count
  direction by direction: far out along w, G's Jacobian has rank at most
  the number of g_1's units active along w, and those along w and −w are
  at most n together. If F's Jacobian ranks far out along some w and along
  −w sum past n, no such G equals F.
- **Theorem 9.2c (rows far out; ReLU, d = 2, any depth).** The same tie
  row by row: along each w, F's Jacobian far out must vanish on the kernel
  of g_1's rows active along w. :mod:`indexset.theory.far_rows` searches
  every combinatorial type of n rows (n ≤ ``ROW_SEARCH_MAX_WIDTH``); if
  none passes, no such G equals F.
- **Theorem 9.2a (width two; ReLU, any d ≥ 2, any depth).** With n = 2 and
  rank ≥ 1 far out in every direction (ρ∞ ≥ 1) the same count forces g_1's
  two rows to be antiparallel, so g_1,
  and with it G, depends on x through one linear form p·x only: every
  Jacobian of F has its rows in one line. If two regions' Jacobian rows
  span a plane, no such G equals F.
- **Theorem 9.3 (odd tangent parts; ReLU, d = 2, two blocks, n = 2ρ∞).** At a
  point p off g_1's lines, G = g_2 ∘ (affine map) near p, and its tangent map
  ``T_p(v) = lim (G(p + εv) − G(p))/ε`` has a linear odd part
  ``T_p(v) − T_p(−v)``. So every point where F's tangent map has a nonlinear
  odd part lies on a line of g_1. With n = 2ρ∞, the rank argument forces
  g_1's rows into ρ∞ antipodal pairs, i.e. its lines into ρ∞ families of at
  most two parallel lines with different directions; if those points
  cannot be covered so, no such G equals F.

Everything rests on the complete region enumeration of F alone
(:func:`indexset.exact.pwl.enumerate_regions`): ranks, tangent cones and
the points, all exact; ρ is the least Jacobian rank over all regions, ρ∞
over the regions that hold a cone far out (:func:`far_regions`). An
incomplete enumeration (time limit) proves nothing.
"""

from __future__ import annotations

import itertools
import math
import threading
import time
from dataclasses import dataclass, field
from fractions import Fraction

import flint

from indexset.exact import pwl
from indexset.model.stack import Stack
from indexset.theory.far_rows import row_configuration

RANK_THEOREM = "MATH.md §9.2, Theorem 9.2 (rank at infinity)"
RIDGE_THEOREM = "MATH.md §9.2, Theorem 9.2a (width two: one linear form)"
FAR_THEOREM = "MATH.md §9.2, Theorem 9.2b (ranks far out in opposite directions)"
ROWS_THEOREM = "MATH.md §9.2, Theorem 9.2c (first-block rows far out in the plane)"
ROW_SEARCH_MAX_WIDTH = 3
"""Widest first block whose rows are searched (Theorem 9.2c): the types grow as the classes to the power n."""
FAR_OUT_MAX_DIMENSION = 3
"""Largest d whose far regions are found: their strict systems are solved by Fourier–Motzkin elimination, whose rows multiply with every variable eliminated."""
ODD_THEOREM = "MATH.md §9.3, Theorem 9.3 (odd tangent parts and parallel families)"


@dataclass
class DeepVerdict:
    """What the necessary conditions of MATH.md §9 say about a stack.

    Attributes
    ----------
    proven : bool
        True: no residual-free stack of width n equals the stack (a proof).
    reason : str
        The theorem and its checked hypotheses, or why nothing is proven.
    theorem : str or None
        Which theorem proves it.
    facts : dict
        Exact data the argument used: regions of F, the minimal Jacobian
        rank ρ, the odd points (as strings), the covering search.
    complete : bool
        The enumeration of F's regions finished (the facts are complete).
    """

    proven: bool
    reason: str
    theorem: str | None = None
    facts: dict = field(default_factory=dict)
    complete: bool = False

    def to_json(self) -> dict:
        """JSON-ready dict."""
        return {"proven": self.proven, "reason": self.reason, "theorem": self.theorem, "facts": self.facts, "complete": self.complete}


def min_rank(regions: list) -> int:
    """The smallest Jacobian rank of the model over its regions (exact)."""
    return min(region.maps[0][0].rank() for region in regions)


def decide(stack: Stack, *, seed: int = 0, time_limit: float | None = None, stop: threading.Event | None = None,
           max_regions: int | None = None) -> DeepVerdict:
    """Try the necessary conditions of MATH.md §9 on a ReLU stack.

    Parameters
    ----------
    stack : Stack
        The residual stack F (the conditions are about its function only).
    seed : int
        Seed of the region enumeration's starting point.
    time_limit : float, optional
        Seconds for the region enumeration; past it nothing is proven.
    stop : threading.Event, optional
        Stop early (nothing proven).
    max_regions : int, optional
        Give up (nothing proven) beyond this many regions of F.

    Returns
    -------
    DeepVerdict
        ``proven`` only when a theorem's hypotheses were all checked.
    """
    n, d, L = stack.n, stack.d, stack.L
    began = time.monotonic()
    if stack.activation != "relu":
        return DeepVerdict(False, f"{stack.activation}: the necessary conditions of MATH.md §9 are proven for ReLU only "
                                  "(a leaky unit is never inactive, so no rank is lost far out)")
    if n >= 2 * d and not (d == 2 and L == 2 and n == 2 * d):
        # ρ ≤ d: Theorem 9.2 needs n < 2ρ ≤ 2d, Theorem 9.3 needs d = 2, L = 2 and n = 2ρ ≤ 4.
        return DeepVerdict(False, f"width n = {n} ≥ 2d = {2 * d}: Theorem 9.2 needs n < 2ρ ≤ 2d and Theorem 9.3 needs d = 2, "
                                  "two blocks and n = 2ρ ≤ 4, so no condition of MATH.md §9 can apply")
    enumeration = pwl.enumerate_regions(stack, names=("stack",), seed=seed, time_limit=time_limit, stop=stop, max_regions=max_regions)
    facts = {"regions": enumeration.count}
    if not enumeration.complete:
        return DeepVerdict(False, f"the regions of the stack were not all enumerated ({enumeration.stopped} after "
                                  f"{enumeration.count}): no condition of MATH.md §9 can be checked", facts=facts)
    rho = min_rank(enumeration.regions)
    facts["min_rank"] = rho
    if n < 2 * rho:
        reason = (f"{RANK_THEOREM}: every one of the {enumeration.count} regions of the stack has a Jacobian of rank ≥ {rho} "
                  f"(exact), while every stack of residual-free ReLU blocks whose first block has width n = {n} < 2·{rho} has an "
                  f"open set where its Jacobian has rank ≤ ⌊n/2⌋ = {n // 2}; so none equals it")
        return DeepVerdict(True, reason, RANK_THEOREM, facts, True)
    if d > FAR_OUT_MAX_DIMENSION:
        # ρ ≤ ρ∞ stands in for ρ∞ in Theorems 9.2a and 9.3, and Theorem 9.2b is not tried.
        far, rho_far, opposite = None, rho, None
    else:
        far = far_regions(enumeration.regions, d)
        rho_far = min(rank for _, rank in far)
        facts["min_rank_far"] = rho_far
        opposite = opposite_ranks(far, d, more_than=n)
    if opposite is not None:
        direction, ranks = opposite
        facts["far_direction"], facts["far_ranks"] = [str(v) for v in direction], list(ranks)
        reason = (f"{FAR_THEOREM}: far out along w = {facts['far_direction']} the stack has a Jacobian of rank {ranks[0]} and "
                  f"along −w of rank {ranks[1]} (exact, {enumeration.count} regions), {sum(ranks)} > n = {n}, while along w and −w "
                  f"the first block of a stack of residual-free ReLU blocks of width n has at most n active units between them; "
                  f"so none equals it")
        return DeepVerdict(True, reason, FAR_THEOREM, facts, True)
    if n == 2 and d >= 2 and rho_far >= 1:  # ρ∞ ≥ 2 is Theorem 9.2b's
        plane = two_row_directions(enumeration.regions)
        if plane is not None:
            facts["row_directions"] = [[str(v) for v in row] for row in plane]
            reason = (f"{RIDGE_THEOREM}: far out in every direction the stack has a Jacobian of rank ≥ 1 (exact, "
                      f"{enumeration.count} regions), so the first block of any stack of residual-free ReLU blocks of width n = 2 "
                      f"that equals it has antiparallel rows and the stack depends on one linear form of x only; but the stack's "
                      f"Jacobians have rows in two directions, {facts['row_directions'][0]} and {facts['row_directions'][1]}; "
                      f"so none equals it")
            return DeepVerdict(True, reason, RIDGE_THEOREM, facts, True)
    if d == 2 and n <= ROW_SEARCH_MAX_WIDTH:
        rows, finished = row_configuration(enumeration.regions, far, n, None if time_limit is None else began + time_limit, stop)
        facts["row_search"] = "complete" if finished else "stopped"
        if rows is None and finished:
            reason = (f"{ROWS_THEOREM}: no {n} rows of a first block meet the stack's Jacobians far out in every direction (exact, "
                      f"{enumeration.count} regions; every combinatorial type of the rows tried), as the first block of any stack of "
                      f"residual-free ReLU blocks of width n = {n} that equals it must; so none equals it")
            return DeepVerdict(True, reason, ROWS_THEOREM, facts, True)
        if rows is not None:
            facts["far_rows"] = [list(row) for row in rows]
    if d != 2 or L != 2 or n != 2 * rho_far:
        why = ("d ≠ 2" if d != 2 else "L ≠ 2" if L != 2 else f"n = {n} ≠ 2ρ∞ = {2 * rho_far}")
        far_out = (f"ρ∞ = {rho_far} far out, and no direction w has ranks far out along w and −w summing past n = {n}" if far is not None
                   else f"far out not examined for d = {d} > {FAR_OUT_MAX_DIMENSION}")
        return DeepVerdict(False, f"minimal Jacobian rank ρ = {rho} over {enumeration.count} regions and {far_out}; Theorems 9.2 and 9.2b "
                                  f"need that, 9.2a n = 2 with rows in two directions, and 9.3 d = 2, two blocks and n = 2ρ∞ ({why}): "
                                  "nothing is proven", facts=facts, complete=True)
    points, evidence = odd_points(enumeration.regions, first_block_only=True)
    facts["odd_points"] = [[str(v) for v in p] for p in points]
    facts["odd_evidence"] = evidence[:4]
    cover = parallel_cover(points, families=rho_far)
    if cover is not None:
        facts["cover"] = cover
        return DeepVerdict(False, f"minimal Jacobian rank far out ρ∞ = {rho_far} = n/2; the {len(points)} points where the tangent map's "
                                  f"odd part is nonlinear can be covered by {rho_far} families of ≤ 2 parallel lines, so Theorem 9.3 does "
                                  "not apply", facts=facts, complete=True)
    families = "one pair of parallel lines" if rho_far == 1 else "two pairs of parallel lines with different directions"
    reason = (f"{ODD_THEOREM}: far out in every direction the stack has a Jacobian of rank ≥ {rho_far} (exact, {enumeration.count} "
              f"regions), so the first block of any residual-free ReLU stack of width n = {n} = 2·{rho_far} that equals it has its rows "
              f"in {rho_far} antipodal pair(s) and its lines in {families}; but the stack's tangent map has a nonlinear odd part at {len(points)} exact "
              f"points, which all lie on those lines (two blocks), and no such {families} cover them (exhaustive search); so none equals it")
    return DeepVerdict(True, reason, ODD_THEOREM, facts, True)


def far_regions(regions: list, d: int) -> list:
    """The regions that hold a cone far out, ``(region, rank)``: those with some w such that ``a·w > 0`` for each of their constraints.

    Such a region contains a ball around t·w of radius proportional to t
    for every large t (MATH.md §9.2, Lemma 9.2b); every direction off the
    finitely many hyperplanes ``a·w = 0`` lies in exactly one.
    """
    far = []
    for region in regions:
        if pwl.strict_point([(*c.form[:-1], 0) for c in region.constraints], d) is not None:
            far.append((region, region.maps[0][0].rank()))
    return far


def opposite_ranks(far: list, d: int, more_than: int) -> tuple | None:
    """A direction w whose far regions along w and along −w have Jacobian ranks summing past ``more_than``: ``(w, (rank, rank))``, or None.

    Exhaustive over the pairs of far regions (exact strict feasibility), so
    None means no such direction exists.
    """
    pairs = sorted(itertools.combinations_with_replacement(far, 2), key=lambda pair: -(pair[0][1] + pair[1][1]))
    for (first, r1), (second, r2) in pairs:
        if r1 + r2 <= more_than:
            break
        for (one, k1), (other, k2) in (((first, r1), (second, r2)), ((second, r2), (first, r1))):
            rows = [(*c.form[:-1], 0) for c in one.constraints] + [(*(-a for a in c.form[:-1]), 0) for c in other.constraints]
            direction = pwl.strict_point(rows, d)
            if direction is not None:
                if not any(direction):  # a region with no constraint (F affine): every direction is far out in it
                    direction = [Fraction(1)] + [Fraction(0)] * (d - 1)
                return direction, (k1, k2)
    return None


def two_row_directions(regions: list) -> tuple | None:
    """Two linearly independent Jacobian rows of the model over its regions (exact), or None when all its rows lie in one line.

    Examples
    --------
    >>> import flint
    >>> from types import SimpleNamespace as Region
    >>> def region(rows):
    ...     return Region(maps=[(flint.fmpq_mat(rows), None)])
    >>> two_row_directions([region([[1, 2], [2, 4]]), region([[0, 0], [-3, -6]])]) is None
    True
    >>> [[str(v) for v in row] for row in two_row_directions([region([[1, 2], [0, 0]]), region([[1, 0], [0, 0]])])]
    [['1', '2'], ['1', '0']]
    """
    first = None
    for region in regions:
        jacobian = region.maps[0][0]
        for i in range(jacobian.nrows()):
            row = tuple(jacobian[i, j] for j in range(jacobian.ncols()))
            if not any(row):
                continue
            if first is None:
                first = row
            elif flint.fmpq_mat([list(first), list(row)]).rank() == 2:
                return tuple(Fraction(int(v.p), int(v.q)) for v in first), tuple(Fraction(int(v.p), int(v.q)) for v in row)
    return None


# ====================================================================== odd points
def odd_points(regions: list, first_block_only: bool = True) -> tuple[list, list]:
    """Points where the tangent map's odd part ``T_p(v) − T_p(−v)`` is nonlinear (exact, from a complete enumeration).

    Candidates are the vertices of the regions (for d = 2: intersections of
    two constraint lines that lie in the region), on a first-block line when
    ``first_block_only`` (MATH.md §9.3: off those lines the odd part of a
    two-block stack is linear). At a candidate p, with C_i the regions that
    contain p, J_i their Jacobians and K_i their tangent cones at p, the odd
    part equals (J_i + J_j)·v on the interior of K_i ∩ (−K_j); p is returned
    when two non-empty such interiors carry different matrices.

    Returns
    -------
    points : list of tuple of Fraction
    evidence : list of dict
        For each point: two directions and their matrices J_i + J_j.
    """
    candidates = []
    seen = set()
    for region in regions:
        constraints = list(region.constraints)
        for first, second in itertools.combinations(constraints, 2):
            if first_block_only and first.unit[1] != 0 and second.unit[1] != 0:
                continue
            point = _meet(first.form, second.form)
            if point is None or point in seen or not region.contains(point):
                continue
            seen.add(point)
            candidates.append(point)
    points, evidence = [], []
    for point in candidates:
        found = _odd_evidence(regions, point)
        if found is not None:
            points.append(point)
            evidence.append(found)
    return points, evidence


def _meet(first: tuple, second: tuple) -> tuple | None:
    """The intersection of two lines ``a·x + b = 0`` in the plane, or None when parallel."""
    (a1, b1, e1), (a2, b2, e2) = first, second
    det = a1 * b2 - a2 * b1
    if det == 0:
        return None
    return (Fraction(b1 * e2 - b2 * e1, det), Fraction(a2 * e1 - a1 * e2, det))


def _odd_evidence(regions: list, point: tuple) -> dict | None:
    around = []
    for region in regions:
        if region.contains(point):
            cone = [c.form[:-1] for c in region.tight(point)]
            around.append((cone, region.maps[0][0]))
    matrices = {}
    for (cone_i, J_i), (cone_j, J_j) in itertools.product(around, repeat=2):
        rows = [(*a, 0) for a in cone_i] + [(*(-v for v in a), 0) for a in cone_j]
        direction = pwl.strict_point(rows, len(point))
        if direction is None:
            continue
        key = tuple(str(v) for v in (J_i + J_j).entries())
        matrices.setdefault(key, (direction, J_i + J_j))
        if len(matrices) > 1:
            (v1, M1), (v2, M2) = list(matrices.values())[:2]
            return {"point": [str(v) for v in point], "directions": [[str(x) for x in v1], [str(x) for x in v2]],
                    "odd_jacobians": [_rows(M1), _rows(M2)]}
    return None


def _rows(matrix: flint.fmpq_mat) -> list:
    return [[str(matrix[i, j]) for j in range(matrix.ncols())] for i in range(matrix.nrows())]


# ====================================================================== covering
def parallel_cover(points: list, families: int) -> list | None:
    """Cover plane points by ``families`` families of ≤ 2 parallel lines with pairwise different directions.

    Exhaustive and exact (integer arithmetic). Returns the lines of one
    cover as ``[direction, point on the line]`` strings, or None when no
    cover exists (a proof by exhaustion: MATH.md §9.3 explains the search).

    Parameters
    ----------
    points : list of pairs of Fraction
    families : int
        1 or 2.
    """
    if families not in (1, 2):
        raise ValueError("families must be 1 or 2")
    pts = _integer_points(points)
    if families == 1:
        cover = _two_parallel(pts, forbidden=None)
        return None if cover is None else _describe(cover, points)
    if len(pts) <= 4:
        return _describe(_small_cover(pts), points)
    # ≥ 5 points on 4 lines: some line holds two of them; call its family the first.
    lines = set()
    for a, b in itertools.combinations(range(len(pts)), 2):
        direction = _direction(pts[a], pts[b])
        key = (direction, _offset(direction, pts[a]))
        if key in lines:
            continue
        lines.add(key)
        rest = [i for i in range(len(pts)) if _offset(direction, pts[i]) != key[1]]
        offsets = {_offset(direction, pts[i]) for i in rest}
        for second in [None, *sorted(offsets)]:
            remaining = [i for i in rest if _offset(direction, pts[i]) != second]
            other = _two_parallel([pts[i] for i in remaining], forbidden=direction, labels=remaining)
            if other is not None:
                first_family = [("line", direction, a)] + ([("line", direction, next(i for i in rest if _offset(direction, pts[i]) == second))] if second is not None else [])
                return _describe(first_family + other, points)
    return None


def _integer_points(points: list) -> list:
    den = 1
    for p in points:
        for v in p:
            den = math.lcm(den, Fraction(v).denominator)
    return [tuple(int(Fraction(v) * den) for v in p) for p in points]


def _direction(p: tuple, q: tuple) -> tuple:
    """The primitive direction of the line through p and q, with a canonical sign."""
    dx, dy = q[0] - p[0], q[1] - p[1]
    g = math.gcd(dx, dy)
    dx, dy = dx // g, dy // g
    return (dx, dy) if (dx, dy) > (0, 0) else (-dx, -dy)


def _offset(direction: tuple, p: tuple) -> int:
    """Which line of that direction p is on: the cross product direction × p."""
    return direction[0] * p[1] - direction[1] * p[0]


def _two_parallel(pts: list, forbidden: tuple | None, labels: list | None = None) -> list | None:
    """At most two parallel lines, direction not ``forbidden``, through all the points (exact), or None."""
    labels = list(range(len(pts))) if labels is None else labels
    if len(pts) <= 2:
        direction = _free_direction(pts, forbidden)
        return [("line", direction, labels[i]) for i in range(len(pts))]
    for a, b in itertools.combinations(range(3), 2):
        if pts[a] == pts[b]:
            continue
        direction = _direction(pts[a], pts[b])
        if forbidden is not None and direction == forbidden:
            continue
        offsets = {_offset(direction, p) for p in pts}
        if len(offsets) <= 2:
            chosen = [next(i for i, p in enumerate(pts) if _offset(direction, p) == o) for o in sorted(offsets)]
            return [("line", direction, labels[i]) for i in chosen]
    return None


def _free_direction(pts: list, forbidden: tuple | None) -> tuple:
    """A direction for ≤ 2 points: along them when allowed, else any other."""
    if len(pts) == 2 and pts[0] != pts[1]:
        along = _direction(pts[0], pts[1])
        if along != forbidden:
            return along
    for candidate in ((1, 0), (0, 1), (1, 1)):
        if candidate != forbidden:
            return candidate
    raise AssertionError("unreachable")


def _small_cover(pts: list) -> list:
    """Four points or fewer: two lines per family, each through one point."""
    first = _free_direction(pts[:2], None)
    second = _free_direction(pts[2:4], first)
    return [("line", first, i) for i in range(min(2, len(pts)))] + [("line", second, i) for i in range(2, len(pts))]


def _describe(cover: list, points: list) -> list:
    return [{"direction": list(direction), "through": [str(v) for v in points[index]]} for _, direction, index in cover]
