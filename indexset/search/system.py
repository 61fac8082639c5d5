"""The exact 0/1 system of condition (★) (MATH.md §5).

Column i of M is ``vec(W_down[:,i] · W_up[i,:])`` and ``t = vec(−A/c)``,
both cleared to integers (Python ints, unbounded). With a tolerance τ each
equation becomes ``|M_r z − t_r| ≤ δ_r``, a relaxation that contains every S
with ``max |c·W_down[:,S]·W_up[S,:] + A| ≤ τ`` (δ_r is τ scaled to the row
exactly, rounded down only where the left side is an integer).
"""

from __future__ import annotations

import functools
import itertools
import math
from dataclasses import dataclass, field
from fractions import Fraction

import numpy as np

from indexset.exact.verify import require_odd_linear
from indexset.model.instance import Instance


@dataclass
class System:
    """An integer system ``M z = t`` (or ``|M z − t| ≤ slack``) over 0 ≤ z_j ≤ u_j.

    A solution of a 0/1 system (every u_j = 1, ``upper`` None) is written
    as its *support*, the sorted indices of its ones; a solution of a
    bounded system as its *values*, one integer per unknown
    (:meth:`solution`, :meth:`values`).

    Attributes
    ----------
    M : ndarray of object, shape (m, n)
        Integer coefficients (Python ints).
    t : ndarray of object, shape (m,)
        Integer right-hand side.
    slack : ndarray of object, shape (m,) or None
        Allowed absolute deviation per row (tolerance mode), else None.
    rows : list of tuple
        Which entry (a, b) of the d × d residual each row came from
        (plain systems: the row number).
    infeasible_row : int or None
        A row ``0 = t_r ≠ 0`` (or outside its slack) found while building.
    upper : ndarray of object, shape (n,), or None
        The bounds u_j ≥ 0 of bounded integer unknowns (Python ints); None
        when every unknown is 0/1 (:func:`bounded` normalises all-ones to None).
    """

    M: np.ndarray
    t: np.ndarray
    slack: np.ndarray | None = None
    rows: list = field(default_factory=list)
    infeasible_row: int | None = None
    upper: np.ndarray | None = None

    @property
    def n(self) -> int:
        """Number of unknowns."""
        return int(self.M.shape[1])

    @property
    def m(self) -> int:
        """Number of equations."""
        return int(self.M.shape[0])

    @property
    def is_binary(self) -> bool:
        """Whether every unknown is 0/1 (solutions are supports)."""
        return self.upper is None

    def bound(self, j: int) -> int:
        """The upper bound u_j of unknown j."""
        return 1 if self.upper is None else int(self.upper[j])

    def bounds(self) -> list[int]:
        """Every u_j."""
        return upper_ends(self.upper, self.n)

    def values(self, solution) -> list[int]:
        """The value of every unknown in a solution (a support of a 0/1 system, values of a bounded one)."""
        if self.upper is not None:
            return [int(v) for v in solution]
        z = [0] * self.n
        for i in solution:
            z[i] = 1
        return z

    def solution(self, values) -> list[int]:
        """The solution with these values, as this system writes it (support or values)."""
        if self.upper is not None:
            return [int(v) for v in values]
        return [i for i, v in enumerate(values) if v]

    def size(self, solution) -> int:
        """Σ z_j of a solution (|S| for a support)."""
        return len(solution) if self.upper is None else sum(int(v) for v in solution)

    def max_abs(self) -> int:
        """Largest absolute coefficient of M and t."""
        values = [abs(int(v)) for v in self.M.ravel()] + [abs(int(v)) for v in self.t.ravel()]
        return max(values, default=0)

    def fits_int64(self) -> bool:
        """Whether every partial sum of a row over the box fits int64 (safe for kernels)."""
        reach = self.n + 2 if self.upper is None else sum(int(u) for u in self.upper) + 2
        return self.max_abs() * reach < 2**62

    def residual(self, solution) -> np.ndarray:
        """Exact ``M z − t`` for a solution (support or values).

        In int64 when every partial row sum fits (:meth:`fits_int64`, checked
        once per system), else in Python integers.
        """
        narrow = self._int64_copy
        if self.upper is None:
            columns = list(solution)
            if narrow is not None:
                M64, t64 = narrow
                return M64[:, columns].sum(axis=1) - t64
            z = np.zeros(self.n, dtype=object)
            z[columns] = 1
            return self.M.dot(z) - self.t
        if narrow is not None:
            M64, t64 = narrow
            return M64 @ np.asarray([int(v) for v in solution], dtype=np.int64) - t64
        return self.M.dot(np.array([int(v) for v in solution], dtype=object)) - self.t

    @functools.cached_property
    def _int64_copy(self):
        """``(M, t)`` as int64 when :meth:`fits_int64`, else None (computed once; M and t are not changed after building)."""
        return (self.M.astype(np.int64), self.t.astype(np.int64)) if self.fits_int64() else None

    def is_solution(self, solution) -> bool:
        """Whether the solution lies in the box and satisfies every row exactly (within slack)."""
        if self.upper is not None and (len(solution) != self.n or any(not 0 <= int(v) <= int(u) for v, u in zip(solution, self.upper))):
            return False
        residual = self.residual(solution)
        if self.slack is None:
            return all(int(v) == 0 for v in residual)
        return all(abs(int(r)) <= int(s) for r, s in zip(residual, self.slack))


def upper_ends(upper, n: int) -> list[int]:
    """The upper bound u_j of each of ``n`` unknowns as Python ints (``upper`` None: every u_j = 1, a 0/1 system)."""
    return [1] * n if upper is None else [int(u) for u in upper]


def bounded(upper) -> np.ndarray | None:
    """The ``upper`` of a :class:`System`: Python ints, or None when every bound is 1 (a 0/1 system)."""
    if upper is None:
        return None
    values = [int(u) for u in np.asarray(upper, dtype=object).ravel()]
    if any(u < 0 for u in values):
        raise ValueError("upper bounds must be nonnegative")
    return None if all(u == 1 for u in values) else np.array(values, dtype=object)


def build_system(instance: Instance, tol: Fraction | None = None) -> System:
    """The integer system of (★) for an odd-linear instance.

    Parameters
    ----------
    instance : Instance
        Odd-linear, skip-connected block.
    tol : Fraction, optional
        Tolerance on ``max |c·W_down[:,S]·W_up[S,:] + A|``.

    Returns
    -------
    System
        Rows that are identically ``0 = 0`` are dropped; each row is divided
        by the gcd of its coefficients (and of its right side, exact mode).
    """
    require_odd_linear(instance)
    up, den_up = instance.exact("W_up")
    down, den_down = instance.exact("W_down")
    skip, den_skip = instance.exact("skip")
    c = instance.act.c
    d, n = instance.d, instance.n
    # c·(Nd Nu)/(Du Dd) = −Na/Da  ⇔  p·Da·(Nd Nu) = −q·Du·Dd·Na.
    column_scale = c.numerator * den_skip
    rhs_scale = -c.denominator * den_up * den_down
    full_den = c.denominator * den_up * den_down * den_skip
    M_rows, t_rows, slack_rows, labels = [], [], [], []
    infeasible = None
    for a in range(d):
        for b in range(d):
            coefficients = [column_scale * int(down[a, i]) * int(up[i, b]) for i in range(n)]
            rhs = rhs_scale * int(skip[a, b])
            slack = None if tol is None else tol * full_den
            row = _normalise(coefficients, rhs, slack)
            if row is None:
                continue
            if row == "infeasible":
                infeasible = len(M_rows)
                row = (coefficients, rhs, None if slack is None else math.floor(slack))
            M_rows.append(row[0])
            t_rows.append(row[1])
            slack_rows.append(row[2])
            labels.append((a, b))
    return _pack(M_rows, t_rows, slack_rows if tol is not None else None, labels, infeasible, n)


def _normalise(coefficients, rhs, slack):
    """Divide a row by its gcd; None for a row that always holds."""
    g = 0
    for v in coefficients:
        g = math.gcd(g, v)
    if g == 0:
        holds = rhs == 0 if slack is None else abs(rhs) <= slack
        return None if holds else "infeasible"
    if slack is None:
        g = math.gcd(g, rhs)
        return [v // g for v in coefficients], rhs // g, None
    # Tolerance rows keep their scale: the left side is an integer, so
    # |M_r z − t_r| ≤ slack holds iff it holds with the slack rounded down.
    return coefficients, rhs, math.floor(slack)


def _pack(M_rows, t_rows, slack_rows, labels, infeasible, n) -> System:
    M = np.array(M_rows, dtype=object).reshape(len(M_rows), n)
    t = np.array(t_rows, dtype=object)
    slack = None if slack_rows is None else np.array(slack_rows, dtype=object)
    return System(M, t, slack, labels, infeasible)


def plain_system(A, b, upper=None) -> System:
    """A plain system ``A x = b`` over 0/1 unknowns, or over 0 ≤ x_j ≤ ``upper[j]``."""
    M = np.array([[int(v) for v in row] for row in np.asarray(A)], dtype=object)
    t = np.array([int(v) for v in np.asarray(b).ravel()], dtype=object)
    return System(M.reshape(len(t), -1), t, None, list(range(len(t))), upper=bounded(upper))


def fit_coefficients(system: System, bits: int = 50) -> System:
    """A relaxation with coefficients below ``2^bits`` that keeps every solution.

    Rows of a tolerance system whose numbers are too large for a 64-bit
    model are divided by ``F = 2^k`` and rounded. For z in the box,
    ``|round(M/F)·z − round(t/F)| ≤ |Mz − t|/F + (Σ u_j + 1)/2`` (n + 1 over
    2 for 0/1 z), so the relaxed slack ``floor(slack/F + (Σ u_j + 1)/2)``
    admits every original solution; extra solutions it admits are removed
    by the exact verifier.

    Parameters
    ----------
    system : System
        A system with ``slack`` (tolerance mode).
    bits : int
        Largest bit length allowed after scaling.
    """
    if system.slack is None:
        raise ValueError("only tolerance systems can be relaxed; equations must stay exact")
    rows_M, rows_t, rows_s = [], [], []
    reach = sum(system.bounds())
    for r in range(system.m):
        numbers = [abs(int(v)) for v in system.M[r]] + [abs(int(system.t[r])), int(system.slack[r])]
        shift = max(0, max(numbers).bit_length() - bits)
        if shift == 0:
            rows_M.append([int(v) for v in system.M[r]])
            rows_t.append(int(system.t[r]))
            rows_s.append(int(system.slack[r]))
            continue
        scale = 1 << shift
        rows_M.append([_round_div(int(v), scale) for v in system.M[r]])
        rows_t.append(_round_div(int(system.t[r]), scale))
        rows_s.append(math.floor(Fraction(int(system.slack[r]), scale) + Fraction(reach + 1, 2)))
    return System(
        np.array(rows_M, dtype=object).reshape(system.m, system.n),
        np.array(rows_t, dtype=object),
        np.array(rows_s, dtype=object),
        list(system.rows),
        system.infeasible_row,
        system.upper,
    )


def _round_div(value: int, scale: int) -> int:
    """value / scale rounded to nearest (ties away from zero is fine: error ≤ 1/2)."""
    q, r = divmod(value, scale)
    return q + (1 if 2 * r >= scale else 0)


@dataclass(frozen=True)
class Ties:
    """A system whose equal columns are merged: one bounded unknown per group of equal columns.

    Units whose columns of M are equal (tied units: repeated or pruned-copy
    rows of a block) are interchangeable in every solution, so a solution
    ``y`` of the merged system, ``0 ≤ y_g ≤ |group g|``, stands for the
    ``Π_g C(|g|, y_g)`` supports that take y_g units of each group g
    (MATH.md §5).

    Attributes
    ----------
    system : System
        The merged system (bounded; 0/1 when no two columns are equal).
    groups : tuple of tuple of int
        The units of each merged unknown, in increasing order.
    """

    system: System
    groups: tuple

    @property
    def merged(self) -> bool:
        """Whether some group holds more than one unit."""
        return any(len(group) > 1 for group in self.groups)

    def support(self, values) -> list[int]:
        """The first support a solution stands for: the first y_g units of each group."""
        return sorted(unit for group, y in zip(self.groups, values) for unit in group[: int(y)])

    def supports(self, values, most: int):
        """Up to ``most`` of the supports a solution stands for, in increasing order of their units' choices."""
        choices = [itertools.combinations(group, int(y)) for group, y in zip(self.groups, values)]
        for combo in itertools.islice(itertools.product(*choices), most):
            yield sorted(unit for part in combo for unit in part)

    def multiplicity(self, values) -> int:
        """How many supports a solution stands for: ``Π_g C(|g|, y_g)``."""
        return math.prod(math.comb(len(group), int(y)) for group, y in zip(self.groups, values))

    def unit_fixings(self, fixed: np.ndarray) -> np.ndarray:
        """Per unit, the fixing of its group's merged unknown (−1 free, 0 excluded, else in S)."""
        units = np.full(sum(len(group) for group in self.groups), -1, dtype=np.int64)
        for group, value in zip(self.groups, fixed):
            units[list(group)] = value
        return units


def tie_columns(system: System) -> Ties:
    """Merge the equal columns of a 0/1 system (exactly: Python ints compared) into bounded unknowns.

    Each group's unknown keeps the first unit's column; its bound is the
    group's size. Systems that are already bounded are returned as they
    are, one unit per group.
    """
    if not system.is_binary:
        return Ties(system, tuple((j,) for j in range(system.n)))
    first: dict = {}
    for j in range(system.n):
        first.setdefault(tuple(int(v) for v in system.M[:, j]), []).append(j)
    groups = tuple(tuple(units) for units in sorted(first.values()))
    if len(groups) == system.n:
        return Ties(system, groups)
    M = system.M[:, [group[0] for group in groups]]
    merged = System(M, system.t, system.slack, list(system.rows), system.infeasible_row, bounded([len(group) for group in groups]))
    return Ties(merged, groups)
