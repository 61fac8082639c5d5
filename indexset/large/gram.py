"""The Gram path for large blocks (MATH.md §6): decide without forming M.

For a block with ``n ≤ d²`` units the d² × n matrix ``M`` of (★) (column i
is ``vec(W_down[:,i] W_up[i,:])``) generically has rank n, so the real
solution of ``M z = t`` is unique. Everything needed is available from

    G = (W_downᵀ W_down) ∘ (W_up W_upᵀ)          (n × n, Hadamard product)
    (Mᵀ t)_i = W_down[:,i]ᵀ T W_up[i,:]ᵀ,          T = −A/c

so the cost is two n × n × d matrix products and one n × n Cholesky
factorisation; ``M`` is never built.

Decision
--------
1. ``ẑ`` solves ``G z = Mᵀ t`` in float64 (conjugate gradients on G above
   n = 400 when they converge within a budget, else Cholesky).
2. ``S = {i : ẑ_i > 1/2}``. The block is reported **absorbable** only when
   the exact rational verifier (:func:`indexset.exact.verify.verify`) accepts S.
3. It is reported **not absorbable** only when a *certified* lower bound on
   the distance to absorbability is positive (or, with a tolerance τ on the
   largest entry, larger than ``d·τ``: ``max|R| ≤ τ`` implies
   ``‖R‖_F ≤ d·τ`` for a d × d matrix R).
4. Otherwise the answer is **unknown**. A numerically singular ``G`` (or
   ``n > d²``) is reported as unknown: the combinatorial path of MATH.md §6
   is needed. (A singular G can still give a *proof* of "not absorbable":
   the bound below holds for any ``ẑ`` with ``λ = 0``, so a ridge-regularised
   ``ẑ`` certifies that t is far from the column space of M when it is.)

Distances are Frobenius norms of ``c·W_down[:,S]W_up[S,:] + A``, i.e.
``|c|·‖M z − t‖``, minimised over S (``z`` the indicator of S).

The certified lower bound
-------------------------
For *any* real vector ``ẑ`` (not only the exact least-squares solution)
and every ``z``, with ``r = Mẑ − t`` and ``g = Mᵀ r``,

    ‖Mz − t‖² = ‖r‖² + 2 gᵀ(z − ẑ) + (z − ẑ)ᵀ G (z − ẑ)
              ≥ ‖r‖² + Σ_i [ λ (z_i − ẑ_i)² + 2 g_i (z_i − ẑ_i) ]

for every ``λ ≤ λ_min(G)``. The right-hand side is separable, so its
minimum over ``z ∈ {0,1}^n`` is a sum of n two-way minima. With ``ẑ = z*``
exactly, ``g = 0`` and this is MATH.md §6's
``‖Mz* − t‖² + λ_min(G)·Σ min(z*_i², (1 − z*_i)²)``. Working with the
computed ``ẑ`` and an explicit ``g`` removes the need to know ``z*``.

Every float quantity in the bound is replaced by a rigorous bracket, using
the standard model of IEEE double arithmetic (round to nearest, unit
roundoff ``u = 2⁻⁵³``, ``γ_k = k·u/(1 − k·u)``) and the classical a-priori
bounds (Higham, *Accuracy and Stability of Numerical Algorithms*, 2nd ed.,
eq. (3.13) for inner products and Thm 10.3 for Cholesky); ``a_i`` denotes
``‖W_down[:,i]‖·‖W_up[i,:]‖``:

* **Data.** ``W_up``, ``W_down`` are used at their exact float64 value (a
  common denominator moves into T and into the final scale); T is rounded,
  with ``|T̃ − T| ≤ γ_3 |T̃|`` entrywise.
* **λ_min(G).** ``G̃ = fl(fl(W_downᵀW_down) ∘ fl(W_up W_upᵀ))`` satisfies
  ``|G̃ − G| ≤ γ_{2d+2} (|W_down|ᵀ|W_down|) ∘ (|W_up||W_up|ᵀ) ≤ γ_{2d+2} a aᵀ``
  entrywise, so ``‖G̃ − G‖₂ ≤ γ_{2d+2} Σ a_i²``. A shift ``s`` slightly below
  a Lanczos estimate of ``λ_min(G̃)`` is then *checked*: if the
  floating-point Cholesky factorisation of ``H̃ = fl(G̃ − sI)`` runs to
  completion, its factor satisfies ``R̂ᵀR̂ = H̃ + ΔH`` with
  ``|ΔH| ≤ γ_{n+3}|R̂ᵀ||R̂|`` (Thm 10.3 with two extra roundings for a
  blocked implementation that multiplies by reciprocal pivots), and
  ``‖R̂‖_F² = tr(R̂ᵀR̂) ≤ tr|H̃| / (1 − γ_{n+3})``. As ``R̂ᵀR̂ ⪰ 0``,
  ``λ_min(H̃) ≥ −γ_{n+3} tr|H̃| / (1 − γ_{n+3})`` (the argument of Rump,
  "Verification of positive definiteness", BIT 46, 2006). Adding the
  rounding of the diagonal shift (``u·max|H̃_ii|``) and ``‖G̃ − G‖₂`` gives a
  certified ``λ ≤ λ_min(G)``; ``λ = 0`` when the check fails (G is a Gram
  matrix, so ``λ_min(G) ≥ 0`` always holds).
* **‖r‖.** ``R̃ = fl(W_down diag(ẑ) W_up − T̃)`` has
  ``‖R̃ − R‖_F ≤ γ_{n+2}(Σ|ẑ_i| a_i + ‖T̃‖_F) + ‖T̃ − T‖_F =: e`` (the
  Frobenius norm of ``|W_down| diag|ẑ| |W_up|`` is at most ``Σ|ẑ_i| a_i``).
* **g.** ``g̃_i = fl(W_down[:,i]ᵀ R̃ W_up[i,:]ᵀ)`` has
  ``|g̃_i − g_i| ≤ a_i (e + γ_{2d} ‖R̃‖_F) =: δ_i``, and the two-way minima use
  ``2g_iΔ ≥ 2g̃_iΔ − 2δ_i|Δ|``.

Each error term is computed in float64 and then doubled, which absorbs the
(relative O(n·u)) rounding in evaluating the error terms themselves; the
final sums and square roots carry explicit ``(1 ± γ)`` factors.

When the float64 bound is inconclusive, the residual and gradient are
recomputed in x87 extended precision (``numpy.longdouble``, ``u = 2⁻⁶⁴``,
where the platform has it; numpy's non-BLAS loops, so only for
``d²·n ≤ 10⁸``) with the same bounds for that unit roundoff: a check in
higher precision that rescues near-absorbable blocks with large weights.

Assumptions (stated, not checked): conventional ``O(n³)`` BLAS/LAPACK
kernels (no Strassen-like products; FMA only tightens the bounds), round to
nearest, and no underflow inside the products or the factorisation (every
computed value is checked to be finite, which excludes overflow). The upper
bound is the Frobenius norm of the residual of the rounded set S: exact when
the exact verifier ran, otherwise the float value plus the same a-priori
error bound.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from fractions import Fraction

import numpy as np

from indexset.classes import AFFINE, BIAS_FREE, phrase
from indexset.errors import InputError
from indexset.exact.verify import verify
from indexset.model.activations import ODD_LINEAR
from indexset.model.instance import Instance
from indexset.rational import as_fraction
from indexset.result import ABSORBABLE, NOT_ABSORBABLE, UNKNOWN, Result
from indexset.theory.nondegeneracy import SCREEN_FROM, Degeneracy, collinear_groups, find_degeneracy
from indexset.theory.theorems import bias_inside_verdict, linear_fallback, necessity, theorem_result

UNIT_ROUNDOFF = 2.0**-53
"""Unit roundoff u of IEEE double precision (round to nearest)."""

SHIFT_FACTORS = (0.98, 0.9, 0.5)
"""Shifts ``s = factor·λ̂`` tried, in order, to certify ``λ_min(G) ≥ s − margin``."""

SMALL_EIGEN = 400
"""Up to this width λ_min(G̃) is estimated by a dense eigensolver, above by Lanczos."""

LANCZOS_TOL = 1e-2
"""Relative accuracy of the λ_min estimate. It only picks the shift that the
Cholesky check then certifies (0.98 of the estimate first), so 1 % is
enough; 1e-4 cost twice the Lanczos iterations on d = 768, n = 3072."""

ITERATIVE_PRODUCTS = 150
"""Budget of products ``G·v`` for each of Lanczos on G (the λ_min estimate)
and conjugate gradients (ẑ) before the factorisation of G takes over. One
product costs about 1/150 of a Cholesky factorisation at n = 1536 (it is
memory-bound). Measured at d = 384, n = 1536: Lanczos 21–41 products,
Jacobi-preconditioned CG 15; Lanczos needs thousands when unit norms
spread widely (then the factorisation is cheaper)."""

CG_RTOL = 1e-14
"""Relative residual ``‖Gẑ − Mᵀt‖ ≤ CG_RTOL·‖Mᵀt‖`` that conjugate gradients
must reach, close to what the Cholesky solve gives (the bound holds for any
ẑ; a less accurate ẑ only weakens it)."""

EXACT_UPPER_WORK = 2_000_000
"""Run the exact verifier on the rounded set whenever d²·|S| and 10·n·d are at most this."""

SINGULAR_REASON = (
    "G = (W_downᵀW_down)∘(W_up W_upᵀ) is {why}: the real solution of M z = t is not "
    "unique, so the Gram path cannot decide; the combinatorial path of MATH.md §6 "
    "(kernel lattice) is needed"
)

BOUND_FORMULA = (
    "for every z in {0,1}^n: ‖Mz − t‖² ≥ ‖Mẑ − t‖² + Σ_i min over z_i of "
    "[λ(z_i − ẑ_i)² + 2g_i(z_i − ẑ_i)], g = Mᵀ(Mẑ − t), λ ≤ λ_min(G) certified by a "
    "shifted Cholesky check; all rounding errors bounded a priori (see indexset.large.gram)"
)


def gamma(k: int, unit: float = UNIT_ROUNDOFF) -> float:
    """The constant ``γ_k = k·u / (1 − k·u)`` of rounding-error analysis."""
    ku = k * unit
    return ku / (1.0 - ku)


def unit_roundoff(dtype) -> float:
    """Unit roundoff ``2^-(p)`` of a numpy float type with p mantissa bits (incl. hidden)."""
    return 2.0 ** -(np.finfo(dtype).nmant + 1)


# ---------------------------------------------------------------- float data
@dataclass
class FloatData:
    """The block as float64 arrays, scaled so that the weights are exact.

    ``c·W_down diag(z) W_up + A = ±kappa · (D diag(z) U − T)`` exactly, with
    ``U``, ``D`` the stored arrays (exact in float64) and ``T`` rounded.

    Attributes
    ----------
    U : ndarray, shape (n, d)
    D : ndarray, shape (d, n)
    T : ndarray, shape (d, d)
        float64 value of the exact target.
    T_error : float
        Bound on the Frobenius norm of ``T − T_exact``.
    kappa : float
        ``|c| / denominator²`` (rounded to nearest).
    skip_norm : float
        ``‖A‖_F``.
    a : ndarray, shape (n,)
        Upper bounds on ``‖D[:,i]‖·‖U[i,:]‖``.
    """

    U: np.ndarray
    D: np.ndarray
    T: np.ndarray
    T_error: float
    kappa: float
    skip_norm: float
    a: np.ndarray


def _exact_float(array: np.ndarray) -> np.ndarray | None:
    """``array`` as float64 when that is exact, else None."""
    if array.dtype.kind == "f":
        return np.asarray(array, dtype=np.float64)
    if array.size and (int(array.max()) > 2**53 or int(array.min()) < -(2**53)):
        return None
    return array.astype(np.float64)


def float_data(instance: Instance) -> FloatData | None:
    """Float64 data of the Gram path, or None when the weights are not float64-exact.

    Parameters
    ----------
    instance : Instance
        An odd-linear, skip-connected block.
    """
    U = _exact_float(instance.W_up)
    D = _exact_float(instance.W_down)
    if U is None or D is None:
        return None
    den = instance.denominator
    c = instance.act.c
    if instance.skip is None:
        factor = float(Fraction(den * den) / c)
        T = np.eye(instance.d) * -factor
        skip_norm = math.sqrt(instance.d)
    else:
        skip = _exact_float(instance.skip)
        if skip is None:
            return None
        T = skip * -float(Fraction(den) / c)
        skip_norm = float(np.linalg.norm(skip)) / den
    norms = np.linalg.norm(D, axis=0) * np.linalg.norm(U, axis=1)
    a = norms * (1.0 + gamma(2 * instance.d + 4))
    T_error = 2.0 * gamma(3) * float(np.linalg.norm(T))
    return FloatData(U, D, T, T_error, abs(float(c / (den * den))), skip_norm, a)


# ------------------------------------------------------------- Gram and λ
def gram_matrix(U: np.ndarray, D: np.ndarray) -> np.ndarray:
    """``G = (DᵀD) ∘ (U Uᵀ)`` in float64, exactly symmetric.

    NumPy computes ``Xᵀ·X`` and ``X·Xᵀ`` by BLAS syrk (half the work of a
    general product) and mirrors the triangle, so both factors and their
    Hadamard product are exactly symmetric.

    The main Gram path runs in NumPy alone, so that ``scan`` does not pay
    for SciPy's import (about 0.35 s here); SciPy is loaded only for the
    factorisation of a large G (:func:`_solve_by_factor`).
    """
    G = D.T @ D
    G *= U @ U.T
    return G


def gram_rhs(data: FloatData) -> np.ndarray:
    """``(Mᵀt)_i = D[:,i]ᵀ T U[i,:]ᵀ`` without forming M.

    A diagonal T (every identity skip) takes O(nd) instead of a d × d × n
    product.
    """
    diagonal = np.diagonal(data.T)
    if np.count_nonzero(data.T) == np.count_nonzero(diagonal):
        return np.einsum("ai,a,ia->i", data.D, diagonal, data.U)
    return np.einsum("ai,ai->i", data.D, data.T @ data.U.T)


def lanczos_smallest(G: np.ndarray, budget: int, tol: float, seed: int = 0) -> float | None:
    """The smallest Ritz value of the Lanczos iteration on symmetric ``G``.

    Lanczos with full reorthogonalisation (Golub & Van Loan, *Matrix
    Computations*, 4th ed., §10.1), stopped when the smallest Ritz value θ
    has residual ``|β_k s_k| ≤ tol·|θ|``. Ritz values lie in the spectrum's
    hull, so θ ≥ λ_min(G): an estimate that only proposes a shift for
    :func:`certify_lambda_min` to check.

    Returns
    -------
    float or None
        θ, or None when ``budget`` products did not reach ``tol``.
    """
    n = G.shape[0]
    basis = np.empty((min(budget, n), n))
    q = np.random.default_rng(seed).standard_normal(n)
    q /= np.linalg.norm(q)
    alphas, betas = [], []
    for k in range(len(basis)):
        basis[k] = q
        w = G @ q
        alphas.append(float(q @ w))
        for _ in range(2):  # "twice is enough" (Kahan–Parlett)
            w -= basis[: k + 1].T @ (basis[: k + 1] @ w)
        beta = float(np.linalg.norm(w))
        ritz, vectors = np.linalg.eigh(np.diag(alphas) + np.diag(betas, 1) + np.diag(betas, -1))
        theta = float(ritz[0])
        if beta * abs(vectors[-1, 0]) <= tol * abs(theta) or beta == 0.0:
            return theta
        betas.append(beta)
        q = w / beta
    return None


def conjugate_gradients(G: np.ndarray, rhs: np.ndarray, budget: int, rtol: float) -> np.ndarray | None:
    """Solve ``G z = rhs`` by conjugate gradients preconditioned by diag(G).

    Returns
    -------
    ndarray or None
        z with ``‖rhs − G z‖ ≤ rtol·‖rhs‖`` (recursive residual), or None
        when ``budget`` products did not reach it or G showed a direction
        of zero or negative curvature.
    """
    diagonal = np.diagonal(G).copy()
    z = np.zeros_like(rhs)
    residual = rhs.copy()
    target = rtol * float(np.linalg.norm(rhs))
    preconditioned = residual / diagonal
    direction = preconditioned.copy()
    inner = float(residual @ preconditioned)
    for _ in range(budget):
        if float(np.linalg.norm(residual)) <= target:
            return z
        product = G @ direction
        curvature = float(direction @ product)
        if not curvature > 0:  # G is not positive definite along this direction
            return None
        step = inner / curvature
        z += step * direction
        residual -= step * product
        preconditioned = residual / diagonal
        inner, previous = float(residual @ preconditioned), inner
        direction = preconditioned + (inner / previous) * direction
    return z if float(np.linalg.norm(residual)) <= target else None


def solve_iteratively(G: np.ndarray, rhs: np.ndarray) -> tuple[np.ndarray, float] | None:
    """A λ_min estimate by Lanczos and ẑ by conjugate gradients, both on G itself.

    For a well-conditioned G each takes tens of products ``G·v``, much less
    than the Cholesky factorisation of G and the Lanczos iteration on
    ``G⁻¹`` that they replace; the certifying factorisation of ``G̃ − sI``
    is still done. Conjugate gradients are preconditioned by diag(G), which
    removes the spread of unit norms (15 products at d = 384, n = 1536 with
    unit norms spread over e⁴). Neither result needs to be exact: ẑ enters
    the bound as any real vector, the estimate only proposes the shift.
    Lanczos runs first, so a G it cannot handle costs at most its budget.

    Returns
    -------
    (z_hat, estimate) or None
        None when either method exceeds :data:`ITERATIVE_PRODUCTS` products
        (then the caller factors G).
    """
    if not (np.diagonal(G) > 0).all():
        return None
    theta = lanczos_smallest(G, ITERATIVE_PRODUCTS, LANCZOS_TOL)
    if theta is None:
        return None
    z_hat = conjugate_gradients(G, rhs, ITERATIVE_PRODUCTS, CG_RTOL)
    if z_hat is None or not np.isfinite(z_hat).all():
        return None
    return z_hat, theta


def _inverse_lanczos(G: np.ndarray, factor, linalg) -> float:
    """``λ_min(G)`` estimated by SciPy's ARPACK Lanczos on ``G⁻¹`` (applied through ``factor``)."""
    from scipy.sparse.linalg import ArpackNoConvergence, LinearOperator, eigsh

    n = G.shape[0]
    op = LinearOperator((n, n), matvec=lambda v: linalg.cho_solve(factor, v, check_finite=False), dtype=np.float64)
    v0 = np.random.default_rng(0).standard_normal(n)
    try:
        theta = eigsh(op, k=1, which="LA", tol=LANCZOS_TOL, v0=v0, maxiter=20 * n, return_eigenvectors=False)[0]
    except ArpackNoConvergence as exc:
        if len(exc.eigenvalues) == 0:
            return float(np.linalg.eigvalsh(G)[0])
        theta = exc.eigenvalues[0]
    return float(1.0 / theta) if theta > 0 else 0.0


def _cholesky(H: np.ndarray) -> np.ndarray:
    """Lower Cholesky factor of the symmetric ``H`` (LinAlgError when not positive definite).

    ``H.T`` is the same matrix in Fortran order, which NumPy hands to LAPACK
    without a transposing copy (0.35 s against 0.44 s at n = 3072 here).
    """
    return np.linalg.cholesky(H.T)


def cholesky_margin(H: np.ndarray) -> float:
    """Bound on ``−λ_min(H)`` when the float Cholesky of ``H`` runs to completion.

    ``γ_{n+3}·tr|H| / (1 − γ_{n+3})`` (Higham Thm 10.3, Rump 2006), doubled.
    """
    n = H.shape[0]
    g = gamma(n + 3)
    trace = float(np.abs(np.diagonal(H)).sum()) * (1.0 + gamma(n))
    return 2.0 * g * trace / (1.0 - g)


def certify_lambda_min(G: np.ndarray, estimate: float, gram_error: float) -> tuple[float, float | None]:
    """A rigorous lower bound on ``λ_min`` of the exact Gram matrix.

    Parameters
    ----------
    G : ndarray
        The computed Gram matrix ``G̃`` (:func:`gram_matrix`); its diagonal
        is shifted in place during the check and restored exactly.
    estimate : float
        An estimate of ``λ_min(G̃)``.
    gram_error : float
        Bound on ``‖G̃ − G‖₂``.

    Returns
    -------
    lower : float
        ``λ`` with ``0 ≤ λ ≤ λ_min(G)``; 0 when nothing positive was certified.
    shift : float or None
        The shift whose Cholesky check succeeded.
    """
    diagonal = np.diagonal(G).copy()
    where = np.diag_indices_from(G)
    try:
        for factor in SHIFT_FACTORS:
            shift = factor * estimate
            if not shift > 0:
                break
            G[where] = diagonal - shift  # H̃ = fl(G̃ − sI) in place: one n × n copy fewer
            margin = cholesky_margin(G) + 2.0 * UNIT_ROUNDOFF * float(np.abs(np.diagonal(G)).max()) + gram_error
            if margin >= shift:
                break
            try:
                _cholesky(G)  # LAPACK potrf: its completion is the check
            except np.linalg.LinAlgError:
                continue
            return shift - margin, shift
        return 0.0, None
    finally:
        G[where] = diagonal  # G̃ exactly as it was


# ------------------------------------------------------------ the bound
@dataclass
class GramBounds:
    """Everything the Gram path computed, with certified brackets.

    Attributes
    ----------
    z_hat : ndarray
        The computed real solution ``ẑ``.
    lambda_estimate : float
        Estimate of ``λ_min(G)``.
    lambda_lower : float
        Certified ``0 ≤ λ ≤ λ_min(G)``.
    shift : float or None
        Shift of the successful Cholesky check.
    lower_sq : float
        Certified lower bound on ``min ‖D diag(z) U − T‖_F²`` over 0/1 z
        (unscaled).
    distance_lower : float
        Certified lower bound on ``min_S ‖c·W_down[:,S]W_up[S,:] + A‖_F``.
    residual_norm : float
        ``‖R̃‖_F`` at ``ẑ`` (unscaled).
    margins : dict
        The error terms used.
    timings : dict
        Seconds per stage.
    method : {"iterative", "cholesky"}
        How ẑ and the λ_min estimate were found (:func:`solve_iteratively`,
        or the Cholesky factor of G).
    """

    z_hat: np.ndarray
    lambda_estimate: float
    lambda_lower: float
    shift: float | None
    lower_sq: float
    distance_lower: float
    residual_norm: float
    margins: dict = field(default_factory=dict)
    timings: dict = field(default_factory=dict)
    method: str = "cholesky"

    @property
    def nonsingular(self) -> bool:
        """Whether ``λ_min(G) > 0`` (rank n) is certified."""
        return self.lambda_lower > 0


def _residual(data: FloatData, z: np.ndarray, dtype=np.float64) -> tuple[np.ndarray, float]:
    """``R̃ = fl(D diag(z) U − T)`` in ``dtype`` and a bound ``e`` on ``‖R̃ − R_exact‖_F``."""
    unit = unit_roundoff(dtype)
    z = np.asarray(z, dtype=dtype)
    support = np.flatnonzero(z)
    if len(support) < len(z) // 2:  # a rounded set: only its columns (the bound counts k terms either way)
        R = (data.D[:, support].astype(dtype) * z[support]) @ data.U[support].astype(dtype)
    else:
        R = (data.D.astype(dtype, copy=False) * z) @ data.U.astype(dtype, copy=False)
    R -= data.T
    k = len(support)
    scale = float(np.abs(z).astype(np.float64) @ data.a) + float(np.linalg.norm(data.T))
    error = 2.0 * gamma(k + 2, unit) * scale * (1.0 + 4.0 * UNIT_ROUNDOFF) + data.T_error
    return R, error


def _coordinate_minima(z_hat, g, delta, lam) -> np.ndarray:
    """``min over z_i ∈ {0,1}`` of ``λΔ² + 2g_iΔ − 2δ_i|Δ|``, ``Δ = z_i − ẑ_i``."""
    terms = []
    for target in (0.0, 1.0):
        step = target - z_hat
        terms.append(lam * step * step + 2.0 * g * step - 2.0 * delta * np.abs(step))
    return np.minimum(terms[0], terms[1])


def lower_bound(data: FloatData, z_hat: np.ndarray, lam: float, dtype=np.float64) -> tuple[float, float, dict]:
    """Certified lower bound on ``min over z ∈ {0,1}^n`` of ``‖D diag(z) U − T‖_F²``.

    Parameters
    ----------
    data : FloatData
    z_hat : ndarray
        Any real vector (ideally the least-squares solution).
    lam : float
        Certified ``0 ≤ λ ≤ λ_min(G)``.
    dtype : numpy float type
        Precision of the residual and gradient (float64, or
        :data:`EXTENDED` for the recheck); the error terms use its unit
        roundoff.

    Returns
    -------
    lower_sq : float
        The certified bound (≥ 0).
    residual_norm : float
        ``‖R̃‖_F`` at ``z_hat``.
    margins : dict
        The error terms (``e``, largest ``δ_i``, the summation slack).
    """
    n, d = data.U.shape
    unit = unit_roundoff(dtype)
    R, e = _residual(data, z_hat, dtype)
    norm = np.sqrt((R * R).sum())
    g = np.einsum("ai,ai->i", data.D.astype(dtype, copy=False), R @ data.U.astype(dtype, copy=False).T)
    if not (np.isfinite(norm) and np.isfinite(g).all()):
        return 0.0, float(norm), {"overflow": True}
    z = np.asarray(z_hat, dtype=dtype)
    delta = 2.0 * data.a.astype(dtype) * (dtype(e) + dtype(gamma(2 * d, unit)) * norm)
    norm_low = max(dtype(0), norm * (1 - dtype(gamma(d * d + 2, unit))) - dtype(e))
    terms = _coordinate_minima(z, g, delta, dtype(lam))
    total = norm_low * norm_low + terms.sum()
    slack = 2 * dtype(gamma(n + 4, unit)) * (norm_low * norm_low + np.abs(terms).sum())
    lower = max(0.0, float(total - slack) * (1.0 - 4.0 * UNIT_ROUNDOFF))
    margins = {
        "precision": np.dtype(dtype).name,
        "residual_error": e,
        "gradient_error_max": float(delta.max(initial=0)),
        "summation_slack": float(slack),
        "gradient_norm": float(np.sqrt((g * g).sum())),
    }
    return lower, float(norm), margins


EXTENDED = np.longdouble if np.finfo(np.longdouble).nmant >= 63 else None
"""x87 80-bit extended precision (u = 2⁻⁶⁴) when the platform has it, else None."""

EXTENDED_WORK = 100_000_000
"""Largest d²·n for the extended-precision recheck (numpy's longdouble matmul is not BLAS)."""


RIDGES = (1e-10, 1e-6)
"""Relative ridges ``ε/mean(diag G)`` tried when G is singular to working precision."""


def _first_factor(G: np.ndarray, factorise):
    """``(factorise(G̃ + εI), ε)`` for the first ε of 0, then :data:`RIDGES` (relative), that factorises; None if none does."""
    scale = float(np.abs(np.diagonal(G)).mean())
    for ridge in (0.0, *(relative * scale for relative in RIDGES)):
        shifted = G
        if ridge:
            shifted = G.copy()
            shifted[np.diag_indices_from(shifted)] += ridge
        try:
            return factorise(shifted), ridge
        except np.linalg.LinAlgError:
            continue
    return None


def _solve_by_factor(G: np.ndarray, rhs: np.ndarray) -> tuple[np.ndarray, float, float] | None:
    """ẑ and a λ_min estimate through a Cholesky factorisation of ``G̃`` or ``G̃ + εI``.

    The ridge ε (:data:`RIDGES`) is used when ``G̃`` is numerically
    singular: the lower bound holds for *any* ``ẑ``, so a ridge-regularised
    ``ẑ`` still gives a valid (λ = 0) bound, which can prove that t is far
    from the column space of M even when G is singular. Up to
    :data:`SMALL_EIGEN` units NumPy does it all (the estimate from the dense
    spectrum); above, SciPy's triangular solves and ARPACK on ``G⁻¹``
    (SciPy is imported only here).

    Returns
    -------
    (z_hat, estimate, ridge) or None
        None when no float Cholesky factorisation (even with a ridge) succeeds.
    """
    if G.shape[0] <= SMALL_EIGEN:
        found = _first_factor(G, _cholesky)
        if found is None:
            return None
        (L, ridge) = found
        z_hat = np.linalg.solve(L.T, np.linalg.solve(L, rhs))  # L Lᵀ ẑ = rhs (small n: LU on L costs nothing)
        estimate = 0.0 if ridge else float(np.linalg.eigvalsh(G)[0])
    else:
        import scipy.linalg as linalg

        found = _first_factor(G, lambda H: linalg.cho_factor(H, check_finite=False))
        if found is None:
            return None
        (factor, ridge) = found
        z_hat = linalg.cho_solve(factor, rhs, check_finite=False)
        estimate = 0.0 if ridge else _inverse_lanczos(G, factor, linalg)
    return (z_hat, estimate, ridge) if np.isfinite(z_hat).all() else None


def _solve_and_certify(G, rhs, gram_error, timings, method):
    """ẑ, the λ_min estimate and its certified bound, by one of two methods.

    ``"iterative"``: :func:`solve_iteratively`, accepted only when its shift
    certifies (an estimate from Lanczos on G could have settled above
    λ_min); ``"cholesky"``: the Cholesky factor of G (with a ridge when G is
    numerically singular) gives ẑ and the estimate (:func:`_solve_by_factor`).

    Returns
    -------
    (z_hat, estimate, ridge, lam, shift) or None
        None when the method fails; for the factor method that means no
        float Cholesky factorisation of G succeeded.
    """
    clock = time.perf_counter()
    if method == "iterative":
        found = solve_iteratively(G, rhs)
        if found is None:
            return None
        (z_hat, estimate), ridge = found, 0.0
    else:
        found = _solve_by_factor(G, rhs)
        if found is None:
            return None
        z_hat, estimate, ridge = found
    timings["solve_s"] = _lap(clock)
    clock = time.perf_counter()
    lam, shift = certify_lambda_min(G, estimate, gram_error)
    timings["lambda_certify_s"] = _lap(clock)
    if method == "iterative" and shift is None:
        return None
    return z_hat, estimate, ridge, lam, shift


def gram_bounds(data: FloatData) -> GramBounds | None:
    """Solve the Gram system and certify the distance lower bound.

    Returns None when no float Cholesky factorisation of ``G̃`` (even with
    a ridge) succeeds.
    """
    timings = {}
    clock = time.perf_counter()
    G = gram_matrix(data.U, data.D)
    rhs = gram_rhs(data)
    timings["gram_s"] = _lap(clock)
    if not (np.isfinite(G).all() and np.isfinite(rhs).all()):
        return None
    d = data.U.shape[1]
    gram_error = 2.0 * gamma(2 * d + 2) * float(data.a @ data.a)
    method = "iterative" if G.shape[0] > SMALL_EIGEN else "cholesky"
    solved = _solve_and_certify(G, rhs, gram_error, timings, method)
    if solved is None and method == "iterative":
        method = "cholesky"
        timings["iterative_unused_s"] = timings.pop("solve_s", 0.0) + timings.pop("lambda_certify_s", 0.0)
        solved = _solve_and_certify(G, rhs, gram_error, timings, method)
    if solved is None:
        return None
    del G
    z_hat, estimate, ridge, lam, shift = solved
    clock = time.perf_counter()
    lower_sq, norm, margins = lower_bound(data, z_hat, lam)
    margins["gram_error"] = gram_error
    margins["ridge"] = ridge
    timings["bound_s"] = _lap(clock)
    distance = data.kappa * math.sqrt(lower_sq) * (1.0 - 4.0 * UNIT_ROUNDOFF)
    return GramBounds(z_hat, estimate, lam, shift, lower_sq, abs(distance), norm, margins, timings, method)


def recheck_extended(data: FloatData, bounds: GramBounds) -> bool:
    """Recompute the lower bound with residual and gradient in extended precision.

    Used when the float64 bound is inconclusive: the a-priori error terms
    shrink by a factor 2¹¹. Only on platforms with 80-bit ``longdouble``
    and when ``d²·n`` is at most :data:`EXTENDED_WORK`. Updates ``bounds``
    in place when the bound improves.

    Returns
    -------
    bool
        Whether the recheck ran.
    """
    n, d = data.U.shape
    if EXTENDED is None or d * d * n > EXTENDED_WORK:
        return False
    clock = time.perf_counter()
    lower_sq, _, margins = lower_bound(data, bounds.z_hat, bounds.lambda_lower, EXTENDED)
    bounds.timings["extended_recheck_s"] = _lap(clock)
    if lower_sq > bounds.lower_sq:
        margins["gram_error"] = bounds.margins.get("gram_error")
        margins["ridge"] = bounds.margins.get("ridge")
        bounds.margins = margins
        bounds.lower_sq = lower_sq
        bounds.distance_lower = data.kappa * math.sqrt(lower_sq) * (1.0 - 4.0 * UNIT_ROUNDOFF)
    return True


def _lap(start: float) -> float:
    return round(time.perf_counter() - start, 6)


# ------------------------------------------------------- the rounded set
@dataclass
class RoundedCheck:
    """The rounded set S and what is known about its residual.

    Attributes
    ----------
    index_set : list of int
    holds : bool
        The exact verifier accepted S (within τ when given).
    exact : bool
        Whether the exact verifier ran.
    distance_upper : float
        Upper bound on ``‖c·W_down[:,S]W_up[S,:] + A‖_F`` (exact value rounded
        up when ``exact``).
    max_abs_lower : float
        Certified lower bound on the largest residual entry.
    """

    index_set: list
    holds: bool
    exact: bool
    distance_upper: float
    max_abs_lower: float


def check_rounded(instance: Instance, data: FloatData, z_hat: np.ndarray, tau: Fraction | None, exact: bool | None = None) -> RoundedCheck:
    """Round ``ẑ`` to S, bound its residual in float, verify exactly when it may hold.

    Parameters
    ----------
    exact : bool or None
        True: always run the exact verifier; False: only when the float
        bound cannot rule S out; None: also when the exact check is cheap
        (``d²·|S|`` and ``10·n·d`` at most :data:`EXACT_UPPER_WORK`).
    """
    index_set = [int(i) for i in np.flatnonzero(z_hat > 0.5)]
    z = np.zeros_like(z_hat)
    z[index_set] = 1.0
    R, e = _residual(data, z)
    kappa = data.kappa
    upper = kappa * (float(np.linalg.norm(R)) * (1.0 + gamma(instance.d**2 + 2)) + e) * (1.0 + 4.0 * UNIT_ROUNDOFF)
    max_low = kappa * max(0.0, float(np.abs(R).max()) - e) * (1.0 - 4.0 * UNIT_ROUNDOFF)
    threshold = 0.0 if tau is None else float(tau)
    ruled_out = len(index_set) < instance.d or max_low > threshold * (1.0 + 4.0 * UNIT_ROUNDOFF)
    work = max(instance.d**2 * len(index_set), 10 * instance.n * instance.d)
    small = work <= EXACT_UPPER_WORK
    run_exact = exact is True or not ruled_out or (exact is None and small)
    if not run_exact:
        return RoundedCheck(index_set, False, False, abs(upper), abs(max_low))
    report = verify(instance, index_set, tol=tau)
    squares = sum((value * value for value in report.residual.ravel()), Fraction(0))
    exact_upper = math.sqrt(float(squares)) * (1.0 + 4.0 * UNIT_ROUNDOFF)
    return RoundedCheck(index_set, report.holds, True, exact_upper, float(report.max_residual))


# ---------------------------------------------------------- degeneracy
def screen_degeneracy(instance: Instance) -> Degeneracy:
    """:func:`indexset.theory.nondegeneracy.find_degeneracy`, fast for float weights.

    Zero rows and columns are found exactly in float64; collinear rows by
    :func:`indexset.theory.nondegeneracy.collinear_groups` (a float key screen, then
    exact checks).
    """
    U = _exact_float(instance.W_up)
    D = _exact_float(instance.W_down)
    if U is None or D is None or instance.n * instance.d <= SCREEN_FROM:
        return find_degeneracy(instance)
    zero_rows = [int(i) for i in np.flatnonzero(~U.any(axis=1))]
    zero_columns = [int(i) for i in np.flatnonzero(~D.any(axis=0))]
    return Degeneracy(zero_rows, collinear_groups(U), zero_columns, instance.d == 1)


# ------------------------------------------------------------ decision
def gram_applies(instance: Instance) -> bool:
    """Whether the Gram path can decide this block at all: odd-linear and ``n ≤ d²``.

    (It may still answer unknown for a numerically singular G.)
    """
    return instance.act.kind == ODD_LINEAR and not instance.residual_free and instance.n <= instance.d**2


def gram_decide(instance: Instance, tol=None, *, exact_upper: bool | None = None, target_class: str = AFFINE) -> Result:
    """Decide absorbability by the Gram path of MATH.md §6, never forming M.

    Parameters
    ----------
    instance : Instance
        A skip-connected block.
    tol : Fraction, str, int or float, optional
        Accept ``max |c·W_down[:,S]W_up[S,:] + A| ≤ tol``; "not absorbable"
        then means the certified Frobenius distance exceeds ``d·tol``.
    exact_upper : bool or None
        Force (True) or avoid (False) the exact verifier on the rounded set
        when the float bound already rules it out; None decides by size.
    target_class : {"affine", "bias-free"}
        Which residual-free blocks count (:mod:`indexset.classes`).

    Returns
    -------
    Result
        ``absorbable`` only with an exactly verified S; ``not_absorbable``
        only with a certified positive distance (or > d·τ) on nondegenerate
        weights, or by theorem; ``unknown`` otherwise (singular G:
        combinatorial path needed). ``stages`` and ``certificate`` carry the
        distance interval ``[distance_lower, distance_upper]`` and the same
        relative to ``‖A‖_F``.

    Raises
    ------
    InputError
        Residual-free block, or a negative tolerance.
    """
    start = time.perf_counter()
    if instance.residual_free:
        raise InputError(instance.source, "the block is residual-free: there is no skip to absorb")
    tau = None if tol is None else as_fraction(tol)
    if tau is not None and tau < 0:
        raise InputError("tol", "tolerance must be ≥ 0")
    if instance.act.kind != ODD_LINEAR:
        return theorem_result(instance, target_class, start=start)
    stages = {"path": "gram", "class": target_class, "classify": instance.act.kind, "activation": instance.activation, "c": str(instance.act.c), "n": instance.n, "d": instance.d}
    if instance.n > instance.d**2:
        return _finish(Result(UNKNOWN, SINGULAR_REASON.format(why=f"singular (n = {instance.n} > d² = {instance.d**2})"), stages=stages, engine="gram"), start)
    data = float_data(instance)
    if data is None:
        reason = "weights are integers beyond 2^53, not exact in float64: the Gram path does not apply; use the exact path"
        return _finish(Result(UNKNOWN, reason, stages=stages, engine="gram"), start)
    bounds = gram_bounds(data)
    if bounds is None:
        return _finish(Result(UNKNOWN, SINGULAR_REASON.format(why="numerically singular (float Cholesky failed)"), stages=stages, engine="gram"), start)
    clock = time.perf_counter()
    rounded = check_rounded(instance, data, bounds.z_hat, tau, exact_upper)
    bounds.timings["rounded_check_s"] = _lap(clock)
    threshold = Fraction(0) if tau is None else instance.d * tau
    if not rounded.holds and Fraction(bounds.distance_lower) <= threshold:
        recheck_extended(data, bounds)
    result = _decide(instance, data, bounds, rounded, tau, stages, target_class)
    result.target_class = target_class
    return _finish(result, start)


def _decide(instance, data, bounds, rounded, tau, stages, target_class=AFFINE) -> Result:
    lower = 0.0 if rounded.holds else bounds.distance_lower
    certificate = _certificate(instance, data, bounds, rounded, tau, lower)
    stages.update(
        regime="unique real solution (rank n certified)" if bounds.nonsingular else "rank n not certified",
        rank=instance.n if bounds.nonsingular else None,
        lambda_min_estimate=bounds.lambda_estimate,
        solve_method=bounds.method,
        lambda_min_lower=bounds.lambda_lower,
        distance_lower=lower,
        distance_upper=rounded.distance_upper,
        relative_lower=certificate["relative_lower"],
        relative_upper=certificate["relative_upper"],
        rounded_set_size=len(rounded.index_set),
        upper_exact=rounded.exact,
        timings=bounds.timings,
    )
    common = dict(stages=stages, engine="gram", certificate=certificate)
    extension = instance.act.extension
    if target_class == BIAS_FREE and instance.b_up is not None and bool(np.any(instance.b_up != 0)) and not instance.act.linear:
        verdict = bias_inside_verdict(instance, screen_degeneracy(instance), stages)
        if verdict is not None:
            verdict.certificate = certificate  # the distance interval stays informative
            return verdict
        return Result(UNKNOWN, f"degenerate weights with a bias inside σ: no theorem decides them against {phrase(BIAS_FREE)} on the Gram path", **common)
    if rounded.holds:
        within = f" within τ = {_show(tau)}" if tau is not None else ""
        reason = (
            f"rounding the real solution z* of the Gram system gives S with |S| = {len(rounded.index_set)}, "
            f"and c·W_down[:,S]·W_up[S,:] = −A holds{within} (exact rational verifier)"
        )
        return Result(ABSORBABLE, reason, index_set=rounded.index_set, verified=True, extension=extension, complete=True, **common)
    threshold = Fraction(0) if tau is None else instance.d * tau
    if Fraction(lower) > threshold:
        return _negative(instance, lower, certificate, tau, common, target_class)
    if not bounds.nonsingular:
        why = f"not certified nonsingular (λ_min estimate {bounds.lambda_estimate:.3g}, certified lower bound 0)"
        return Result(UNKNOWN, SINGULAR_REASON.format(why=why), **common)
    reason = (
        f"the rounded real solution fails the exact verifier, but the certified distance lower bound "
        f"{lower:.3g} does not exceed {float(threshold):.3g}: inconclusive at float64 precision "
        "(the exact path can decide)"
    )
    return Result(UNKNOWN, reason, **common)


def _negative(instance, lower, certificate, tau, common, target_class=AFFINE) -> Result:
    act = instance.act
    if tau is None:
        claim = f"certified distance to absorbability ≥ {lower:.6g} (Frobenius; {certificate['relative_lower']:.3g} relative to ‖A‖_F) > 0, so no index set S satisfies (★)"
    else:
        claim = f"certified distance ≥ {lower:.6g} > d·τ = {float(instance.d * tau):.6g}, so no S has max|c·W_down[:,S]W_up[S,:] + A| ≤ τ = {_show(tau)}"
    if act.linear:
        return linear_fallback(instance, tau, claim, common["stages"])
    degeneracy = screen_degeneracy(instance)
    common["stages"]["weights"] = degeneracy.describe()
    if not degeneracy.nondegenerate:
        reason = f"{claim}; but the weights are {degeneracy.describe()}, where (★) is not necessary (MATH.md §3): absorption is not ruled out"
        return Result(UNKNOWN, reason, **common)
    reason = f"{claim} (MATH.md §6 Gram bound); {necessity(instance, target_class)}"
    return Result(NOT_ABSORBABLE, reason, extension=act.extension or target_class == AFFINE, complete=True, **common)


def _certificate(instance, data, bounds, rounded, tau, lower) -> dict:
    norm = data.skip_norm
    return {
        "kind": "gram_distance_bound",
        "formula": BOUND_FORMULA,
        "distance_lower": lower,
        "distance_upper": rounded.distance_upper,
        "relative_lower": lower / norm,
        "relative_upper": rounded.distance_upper / norm,
        "skip_norm": norm,
        "lower_squared_unscaled": bounds.lower_sq,
        "scale": data.kappa,
        "lambda_min_lower": bounds.lambda_lower,
        "cholesky_shift": bounds.shift,
        "residual_norm_at_z": bounds.residual_norm * data.kappa,
        "margins": bounds.margins,
        "rounded_set": rounded.index_set,
        "rounded_upper_exact": rounded.exact,
        "rounded_max_abs_lower": rounded.max_abs_lower,
        "tolerance": None if tau is None else str(tau),
        "frobenius_threshold": 0.0 if tau is None else float(instance.d * tau),
        "unit_roundoff": UNIT_ROUNDOFF,
    }


def _show(value: Fraction) -> str:
    """A Fraction as ``p/q`` when short, else as a decimal."""
    return str(value) if value.denominator <= 10**6 else f"{float(value):.6g}"


def _finish(result: Result, start: float) -> Result:
    result.time_s = time.perf_counter() - start
    return result
