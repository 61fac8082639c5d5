"""Certified bounds on kernel coordinates: every z = z0 + K y in the box 0 ≤ z ≤ u.

The tightest interval for y_j is an LP (min/max y_j over the box), solved in
floating point by HiGHS. Its dual is turned into a *proof*: any λ with
``Kᵀλ = e_j`` gives ``y_j = λᵀ(z − z0) ≥ Σ_i min(−λ_i z0_i, λ_i(u_i − z0_i))``
for every box point (u = 1 for 0/1 unknowns). We project the float dual onto ``Kᵀλ = e_j`` in exact
rationals, so the bound holds whatever the LP's rounding errors were; a bad
dual only makes the bound looser, never wrong.

The LPs run in the caller's thread, one after another, each with a HiGHS
time limit, and the caller's stop request and deadline are looked at
between them: a coordinate whose LP was not solved keeps a looser bound
(the trivial dual), which is still certified.
"""

from __future__ import annotations

import math
from fractions import Fraction

import flint
import numpy as np

from indexset.budget import Budget
from indexset.rational import as_fraction, fraction_rows
from indexset.search.system import upper_ends
from indexset.search.tuning import DEFAULT as TUNING


def _exact_projector(K: np.ndarray):
    """Rational matrices (KᵀK)⁻¹ and K for the exact projection."""
    n, k = K.shape
    kq = flint.fmpq_mat(n, k, [int(v) for v in K.ravel()])
    return kq, (kq.transpose() * kq).inv()


def _box_bound(lam: list[Fraction], z0: list[int], upper: list[int]) -> tuple[Fraction, Fraction]:
    """Range of λᵀ(z − z0) over z in the box 0 ≤ z ≤ u."""
    low = high = Fraction(0)
    for coefficient, center, bound in zip(lam, z0, upper):
        at_zero, at_top = -coefficient * center, coefficient * (bound - center)
        low += min(at_zero, at_top)
        high += max(at_zero, at_top)
    return low, high


def _certify(lam_float: np.ndarray, j: int, kq, gram_inverse) -> list[Fraction]:
    """An exact λ with Kᵀλ = e_j, close to the float dual λ."""
    n, k = kq.nrows(), kq.ncols()
    lam = flint.fmpq_mat(n, 1, [flint.fmpq(*as_fraction(float(v)).as_integer_ratio()) for v in lam_float])
    target = flint.fmpq_mat(k, 1, [1 if i == j else 0 for i in range(k)])
    lam = lam + kq * (gram_inverse * (target - kq.transpose() * lam))
    return [row[0] for row in fraction_rows(lam)]




def kernel_bounds(z0: np.ndarray, K: np.ndarray, *, budget: Budget | None = None, upper=None) -> list[tuple[int, int]] | None:
    """Certified integer bounds ``lo_j ≤ y_j ≤ hi_j`` for every solution in the box.

    Parameters
    ----------
    z0 : ndarray of int, shape (n,)
    K : ndarray of int, shape (n, k), full column rank
    budget : Budget, optional
        Give up soon after its deadline passes or its stop is set.
    upper : array_like of int, optional
        The box's upper ends u (None: the 0/1 box).

    Returns
    -------
    list of (int, int)
        One interval per kernel coordinate; an interval with lo > hi means
        no integer point of ``z0 + K y`` lies in the box. None when stopped
        or past the deadline before every bound was computed.
    """
    n, k = K.shape
    if k == 0:
        return []
    z0_int = [int(v) for v in z0]
    bounds_u = upper_ends(upper, n)
    kq, gram_inverse = _exact_projector(K)
    Kf = K.astype(np.float64)
    z0f = np.array(z0_int, dtype=np.float64)
    A_ub = np.vstack([Kf, -Kf])
    b_ub = np.concatenate([np.array(bounds_u, dtype=np.float64) - z0f, z0f])
    bounds = []
    for j in range(k):
        interval = []
        for sign in (1.0, -1.0):
            if budget is not None and budget.expired():
                return None
            c = np.zeros(k)
            c[j] = sign
            lam = _lp_dual(c, A_ub, b_ub, n, _lp_seconds(budget))
            exact = _certify(sign * lam, j, kq, gram_inverse)
            low, high = _box_bound(exact, z0_int, bounds_u)
            interval.append(low if sign > 0 else high)
        bounds.append((math.ceil(interval[0]), math.floor(interval[1])))
    return bounds


def _lp_seconds(budget: Budget | None) -> float:
    left = None if budget is None else budget.remaining()
    return TUNING.lp_seconds if left is None else max(0.001, min(TUNING.lp_seconds, left))


def _lp_dual(c: np.ndarray, A_ub: np.ndarray, b_ub: np.ndarray, n: int, seconds: float) -> np.ndarray:
    """λ with c ≈ Kᵀλ from the LP min cᵀy s.t. A_ub y ≤ b_ub (zeros if it fails or times out)."""
    from scipy.optimize import linprog  # SciPy is slow to import: only when bounds are needed

    res = linprog(c, A_ub=A_ub, b_ub=b_ub, bounds=[(None, None)] * len(c), method="highs", options={"time_limit": seconds})
    if res.status != 0 or res.ineqlin is None:
        return np.zeros(n)
    mu = -np.asarray(res.ineqlin.marginals)  # ≥ 0, c = A_ubᵀ mu
    return mu[:n] - mu[n:]
