"""First-block rows that meet F's Jacobians far out in the plane (MATH.md §9.2, Theorem 9.2c, extension).

Lemma 9.2b ties the Jacobian J_C of F's region C, far out along w, to the
first block g_1 of any residual-free stack equal to F: ``J_C k = 0`` for
every k in the kernel of the rows ``p_i`` of g_1 active along w
(``p_i·w > 0``). In d = 2 whether some n rows meet that for every w
depends on their directions only through finitely many combinatorial
types, so the search here is exhaustive: None is a proof that no row
configuration does, hence that no such stack equals F.

The types. Let Σ be the directions perpendicular to some region's
constraint (with the axes; closed under negation): between consecutive
ones the far region is one. A row p switches on and off at ±p⊥, so what
matters is where p⊥ falls among Σ, and, for rows of rank-1 far Jacobians
``J = a·bᵀ``, whether p is ±b (a single active row must be). So each row
takes a *point class* (p⊥ in Σ, or p = ±b) or an *arc class* (p⊥ strictly
inside an arc). Rows whose switch points share an arc (same or opposite arc
classes) can still be ordered, or coincide, in every way: all weak orders
of them are tried. More active rows only shrink the kernel, so a row is
never better left out, and zero rows need no trial.
"""

from __future__ import annotations

import bisect
import itertools
import math
import threading
import time
from fractions import Fraction

import flint


def _angle(v: tuple) -> Fraction:
    """An exact monotone stand-in for the angle of v ≠ 0 in [0, 4): the diamond angle, quadrant by quadrant."""
    x, y = v
    if y >= 0 and x > 0:
        return Fraction(y, x + y)
    if x <= 0 and y > 0:
        return 1 + Fraction(-x, y - x)
    if y <= 0 and x < 0:
        return 2 + Fraction(-y, -x - y)
    return 3 + Fraction(x, x - y)


def _primitive(v: tuple) -> tuple:
    g = math.gcd(v[0], v[1])
    return (v[0] // g, v[1] // g)


def circle(vectors) -> list:
    """The distinct directions of nonzero integer vectors, counterclockwise from the positive x-axis (exact)."""
    return sorted({_primitive(v) for v in vectors if v != (0, 0)}, key=_angle)


def arcs(directions: list) -> list:
    """Consecutive pairs of a circle of directions (each less than π apart when the axes are among them)."""
    return list(zip(directions, directions[1:] + directions[:1]))


def kernel_annihilated(jacobian: flint.fmpq_mat, rows: list) -> bool:
    """Whether ``J k = 0`` for every k in the kernel of the 2-column matrix of ``rows`` (Lemma 9.2b's condition)."""
    if not rows:
        return all(v == 0 for v in jacobian.entries())
    a, b = rows[0]
    if any(a * y - b * x for x, y in rows[1:]):
        return True  # rank 2: the kernel is 0
    return all(jacobian[i, 0] * -b + jacobian[i, 1] * a == 0 for i in range(jacobian.nrows()))


class _Plane:
    """F far out in the plane: its critical directions Σ, and the far region's Jacobian on each arc between them."""

    def __init__(self, regions: list, far: list):
        forms = [c.form[:-1] for region in regions for c in region.constraints]
        self.sigma = circle([(1, 0), (0, 1), (-1, 0), (0, -1), *((-b, a) for a, b in forms), *((b, -a) for a, b in forms)])
        self.members = set(self.sigma)
        self.keys = [_angle(v) for v in self.sigma]  # the axes are in Σ, so no arc wraps past the positive x-axis
        self.far = [region for region, _ in far]
        self.arcs = arcs(self.sigma)
        self.jacobians = [self.jacobian_along((u[0] + v[0], u[1] + v[1])) for u, v in self.arcs]
        self.order = list(range(len(self.arcs)))  # the order the arcs are checked in
        self.arc_of = {}  # switch point -> the arc of Σ it lies in
        self.pins = set()
        for region, rank in far:
            if rank == 1:
                jacobian = region.maps[0][0]
                row = next(r for r in range(jacobian.nrows()) if any(jacobian[r, j] != 0 for j in range(2)))
                scale = math.lcm(int(jacobian[row, 0].q), int(jacobian[row, 1].q))
                b = tuple(int(jacobian[row, j] * scale) for j in range(2))
                self.pins |= {_primitive(b), _primitive((-b[0], -b[1]))}

    def jacobian_along(self, w: tuple) -> flint.fmpq_mat:
        """J_C of the one far region along w (w off Σ)."""
        return next(r for r in self.far if all(c.form[0] * w[0] + c.form[1] * w[1] > 0 for c in r.constraints)).maps[0][0]

    def passes(self, rows: list) -> bool:
        """Whether the rows meet Lemma 9.2b's condition along every direction (one w inside each arc of Σ and the rows' switch points)."""
        inside = {}
        for point in {_primitive(d) for p in rows for d in ((-p[1], p[0]), (p[1], -p[0]))} - self.members:
            if point not in self.arc_of:
                self.arc_of[point] = bisect.bisect_right(self.keys, _angle(point)) - 1
            inside.setdefault(self.arc_of[point], []).append(point)
        for position, k in enumerate(self.order):
            u, v = self.arcs[k]
            for a, b in itertools.pairwise([u, *sorted(inside.get(k, ()), key=_angle), v]):
                w = (a[0] + b[0], a[1] + b[1])
                if not kernel_annihilated(self.jacobians[k], [p for p in rows if p[0] * w[0] + p[1] * w[1] > 0]):
                    # Configurations tried in turn share rows: the arc that failed is tried first next time.
                    self.order.insert(0, self.order.pop(position))
                    return False
        return True


def _weak_orders(a: int, b: int):
    """Sequences of groups ``(a_j, b_j)``, each nonempty, summing to (a, b): rows of an arc class and of its opposite, in order, ties as groups."""
    if a == 0 and b == 0:
        yield ()
        return
    for x in range(a + 1):
        for y in range(b + 1):
            if x + y:
                for rest in _weak_orders(a - x, b - y):
                    yield ((x, y), *rest)


def _placements(arc: tuple, order: tuple) -> list:
    """Rows for one weak order inside an arc (u, v) of row directions: group j at u·(j + 1) + v·(G − j), its opposite rows negated."""
    (u, v), groups, rows = arc, len(order), []
    for j, (here, opposite) in enumerate(order):
        p = (u[0] * (j + 1) + v[0] * (groups - j), u[1] * (j + 1) + v[1] * (groups - j))
        rows += [p] * here + [(-p[0], -p[1])] * opposite
    return rows


def row_configuration(regions: list, far: list, n: int, deadline: float | None = None, stop: threading.Event | None = None) -> tuple:
    """Rows of a width-n first block that pass Lemma 9.2b along every direction, by exhaustive search over their types.

    Parameters
    ----------
    regions : list of Region
        F's complete region enumeration (d = 2).
    far : list
        Its far regions, ``(region, rank)`` (:func:`indexset.theory.deep.far_regions`).
    n : int
        The width of the first block.
    deadline : float, optional
        ``time.monotonic()`` past which the search stops unfinished.
    stop : threading.Event, optional
        Stop early, unfinished.

    Returns
    -------
    (rows, complete) : (list or None, bool)
        Passing rows, or None; ``complete`` False when the deadline came first
        (then None proves nothing).
    """
    plane = _Plane(regions, far)
    # Row directions whose switch points ±p⊥ lie in Σ, and the pins: point classes; the arcs between them: arc classes.
    points = circle([*((-c[1], c[0]) for c in plane.sigma), *plane.pins])
    between = arcs(points)
    opposite = {arc: between.index(((-arc[0][0], -arc[0][1]), (-arc[1][0], -arc[1][1]))) for arc in between}
    classes = len(points) + len(between)
    for tried, combo in enumerate(itertools.combinations_with_replacement(range(classes), n)):
        if tried % 256 == 0 and ((deadline is not None and time.monotonic() > deadline) or (stop is not None and stop.is_set())):
            return None, False
        counts = {c: combo.count(c) for c in set(combo)}
        parts, seen = [], set()
        for c, k in sorted(counts.items()):
            if c < len(points):
                parts.append([[points[c]] * k])
            elif c not in seen:
                arc = between[c - len(points)]
                mate = len(points) + opposite[arc]
                seen |= {c, mate}
                parts.append([_placements(arc, order) for order in _weak_orders(k, counts.get(mate, 0))])
        for choice in itertools.product(*parts):
            rows = [p for part in choice for p in part]
            if plane.passes(rows):
                return rows, True
    return None, True
