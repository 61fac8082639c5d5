"""The exact 0/1 system of condition (★) (MATH.md §5).

Column i of M is ``vec(W_down[:,i] · W_up[i,:])`` and ``t = vec(−A/c)``,
both cleared to integers (Python ints, unbounded). With a tolerance τ each
equation becomes ``|M_r z − t_r| ≤ δ_r``, a relaxation that contains every S
with ``max |c·W_down[:,S]·W_up[S,:] + A| ≤ τ`` (δ_r is τ scaled to the row
exactly, rounded down only where the left side is an integer).
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass, field
from fractions import Fraction

import numpy as np

from indexset.exact.verify import require_odd_linear
from indexset.model.instance import Instance


@dataclass
class System:
    """An integer system ``M z = t`` (or ``|M z − t| ≤ slack``) over z ∈ {0,1}^n.

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
    """

    M: np.ndarray
    t: np.ndarray
    slack: np.ndarray | None = None
    rows: list = field(default_factory=list)
    infeasible_row: int | None = None

    @property
    def n(self) -> int:
        """Number of 0/1 unknowns."""
        return int(self.M.shape[1])

    @property
    def m(self) -> int:
        """Number of equations."""
        return int(self.M.shape[0])

    def max_abs(self) -> int:
        """Largest absolute coefficient of M and t."""
        values = [abs(int(v)) for v in self.M.ravel()] + [abs(int(v)) for v in self.t.ravel()]
        return max(values, default=0)

    def fits_int64(self) -> bool:
        """Whether every partial sum of a row fits int64 (safe for kernels)."""
        return self.max_abs() * (self.n + 2) < 2**62

    def residual(self, support) -> np.ndarray:
        """Exact ``M z − t`` for the 0/1 vector with this support.

        In int64 when every partial row sum fits (:meth:`fits_int64`, checked
        once per system), else in Python integers.
        """
        columns = list(support)
        narrow = self._int64_copy
        if narrow is not None:
            M64, t64 = narrow
            return M64[:, columns].sum(axis=1) - t64
        z = np.zeros(self.n, dtype=object)
        z[columns] = 1
        return self.M.dot(z) - self.t

    @functools.cached_property
    def _int64_copy(self):
        """``(M, t)`` as int64 when :meth:`fits_int64`, else None (computed once; M and t are not changed after building)."""
        return (self.M.astype(np.int64), self.t.astype(np.int64)) if self.fits_int64() else None

    def is_solution(self, support) -> bool:
        """Whether the support satisfies every row exactly (within slack)."""
        residual = self.residual(support)
        if self.slack is None:
            return all(int(v) == 0 for v in residual)
        return all(abs(int(r)) <= int(s) for r, s in zip(residual, self.slack))


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


def plain_system(A, b) -> System:
    """A plain 0/1 system ``A x = b`` (market split and friends)."""
    M = np.array([[int(v) for v in row] for row in np.asarray(A)], dtype=object)
    t = np.array([int(v) for v in np.asarray(b).ravel()], dtype=object)
    return System(M.reshape(len(t), -1), t, None, list(range(len(t))))


def fit_coefficients(system: System, bits: int = 50) -> System:
    """A relaxation with coefficients below ``2^bits`` that keeps every solution.

    Rows of a tolerance system whose numbers are too large for a 64-bit
    model are divided by ``F = 2^k`` and rounded. For a 0/1 vector z,
    ``|round(M/F)·z − round(t/F)| ≤ |Mz − t|/F + (n + 1)/2``, so the relaxed
    slack ``floor(slack/F + (n + 1)/2)`` admits every original solution;
    extra solutions it admits are removed by the exact verifier.

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
        rows_s.append(math.floor(Fraction(int(system.slack[r]), scale) + Fraction(system.n + 1, 2)))
    return System(
        np.array(rows_M, dtype=object).reshape(system.m, system.n),
        np.array(rows_t, dtype=object),
        np.array(rows_s, dtype=object),
        list(system.rows),
        system.infeasible_row,
    )


def _round_div(value: int, scale: int) -> int:
    """value / scale rounded to nearest (ties away from zero is fine: error ≤ 1/2)."""
    q, r = divmod(value, scale)
    return q + (1 if 2 * r >= scale else 0)
