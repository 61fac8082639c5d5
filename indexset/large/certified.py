"""Certified numerics of the Gram path: the distance interval, never forming M.

For a block with ``n ≤ d²`` units, the distance to absorbability
``min_S ‖c·W_down[:,S]W_up[S,:] + A‖_F`` is bracketed from the Gram matrix
``G = (W_downᵀW_down) ∘ (W_up W_upᵀ)`` and ``Mᵀt`` alone:

- :func:`gram_bounds` solves ``G z = Mᵀt`` in float64 (Lanczos and
  conjugate gradients above :attr:`GramTuning.small_eigen` units, a
  Cholesky factorisation otherwise or when they fail), certifies a lower
  bound on ``λ_min(G)`` by a shifted Cholesky check, and from those a lower
  bound on the distance valid for the computed ``ẑ``;
- :func:`recheck_extended` recomputes that bound with residual and gradient
  in extended precision;
- :func:`check_rounded` rounds ``ẑ`` to a set S and bounds its residual
  from above (exactly, by the rational verifier, when asked or cheap).

Every float quantity carries an a-priori rounding-error bracket; the
argument, the error terms and the assumptions (conventional BLAS and
LAPACK kernels, round to nearest, no underflow) are in docs/MATH.md §6.2.
Which verdict the interval gives is :mod:`indexset.large.gram`'s business.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from fractions import Fraction

import numpy as np

from indexset.exact.verify import verify
from indexset.large.gram_tuning import DEFAULT_TUNING, GramTuning
from indexset.model.instance import Instance
from indexset.trace import DIGITS, Trace

UNIT_ROUNDOFF = 2.0**-53
"""Unit roundoff u of IEEE double precision (round to nearest)."""

EXTENDED = np.longdouble if np.finfo(np.longdouble).nmant >= 63 else None
"""x87 80-bit extended precision (u = 2⁻⁶⁴) when the platform has it, else None."""


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


def exact_float(array: np.ndarray) -> np.ndarray | None:
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
    U = exact_float(instance.W_up)
    D = exact_float(instance.W_down)
    if U is None or D is None:
        return None
    den = instance.denominator
    c = instance.act.c
    if instance.skip is None:
        factor = float(Fraction(den * den) / c)
        T = np.eye(instance.d) * -factor
        skip_norm = math.sqrt(instance.d)
    else:
        skip = exact_float(instance.skip)
        if skip is None:
            return None
        T = skip * -float(Fraction(den) / c)
        skip_norm = float(np.linalg.norm(skip)) / den
    norms = np.linalg.norm(D, axis=0) * np.linalg.norm(U, axis=1)
    a = norms * (1.0 + gamma(2 * instance.d + 4))
    T_error = 2.0 * gamma(3) * float(np.linalg.norm(T))
    return FloatData(U, D, T, T_error, abs(float(c / (den * den))), skip_norm, a)


# ------------------------------------------------------------- Gram and λ
@dataclass
class GramSystem:
    """The computed system ``G̃ z = Mᵀt`` and how far ``G̃`` may be from G.

    Attributes
    ----------
    G : ndarray, shape (n, n)
        ``G̃``, exactly symmetric (:func:`gram_matrix`).
    rhs : ndarray, shape (n,)
        ``Mᵀt`` in float64 (:func:`gram_rhs`).
    error : float
        Bound on ``‖G̃ − G‖₂``.
    """

    G: np.ndarray
    rhs: np.ndarray
    error: float


def gram_matrix(U: np.ndarray, D: np.ndarray) -> np.ndarray:
    """``G = (DᵀD) ∘ (U Uᵀ)`` in float64, exactly symmetric.

    NumPy computes ``Xᵀ·X`` and ``X·Xᵀ`` by BLAS syrk (half the work of a
    general product) and mirrors the triangle, so both factors and their
    Hadamard product are exactly symmetric.

    The main Gram path runs in NumPy alone, so that ``scan`` does not pay
    for SciPy's import; SciPy is loaded only for the factorisation of a
    large G (:func:`_solve_by_factor`).
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


def solve_iteratively(G: np.ndarray, rhs: np.ndarray, tuning: GramTuning = DEFAULT_TUNING) -> tuple[np.ndarray, float] | None:
    """A λ_min estimate by Lanczos and ẑ by conjugate gradients, both on G itself.

    For a well-conditioned G each takes tens of products ``G·v``, much less
    than the Cholesky factorisation of G and the Lanczos iteration on
    ``G⁻¹`` that they replace; the certifying factorisation of ``G̃ − sI``
    is still done. Conjugate gradients are preconditioned by diag(G), which
    removes the spread of unit norms. Neither result needs to be exact: ẑ
    enters the bound as any real vector, the estimate only proposes the
    shift. Lanczos runs first, so a G it cannot handle costs at most its
    budget.

    Returns
    -------
    (z_hat, estimate) or None
        None when either method exceeds ``tuning.iterative_products``
        products (then the caller factors G).
    """
    if not (np.diagonal(G) > 0).all():
        return None
    theta = lanczos_smallest(G, tuning.iterative_products, tuning.lanczos_tol)
    if theta is None:
        return None
    z_hat = conjugate_gradients(G, rhs, tuning.iterative_products, tuning.cg_rtol)
    if z_hat is None or not np.isfinite(z_hat).all():
        return None
    return z_hat, theta


def _inverse_lanczos(G: np.ndarray, factor, linalg, tol: float) -> float:
    """``λ_min(G)`` estimated by SciPy's ARPACK Lanczos on ``G⁻¹`` (applied through ``factor``)."""
    from scipy.sparse.linalg import ArpackNoConvergence, LinearOperator, eigsh

    n = G.shape[0]
    op = LinearOperator((n, n), matvec=lambda v: linalg.cho_solve(factor, v, check_finite=False), dtype=np.float64)
    v0 = np.random.default_rng(0).standard_normal(n)
    try:
        theta = eigsh(op, k=1, which="LA", tol=tol, v0=v0, maxiter=20 * n, return_eigenvectors=False)[0]
    except ArpackNoConvergence as exc:
        if len(exc.eigenvalues) == 0:
            return float(np.linalg.eigvalsh(G)[0])
        theta = exc.eigenvalues[0]
    return float(1.0 / theta) if theta > 0 else 0.0


def _cholesky(H: np.ndarray) -> np.ndarray:
    """Lower Cholesky factor of the symmetric ``H`` (LinAlgError when not positive definite).

    ``H.T`` is the same matrix in Fortran order, which NumPy hands to LAPACK
    without a transposing copy.
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


def certify_lambda_min(G: np.ndarray, estimate: float, gram_error: float, tuning: GramTuning = DEFAULT_TUNING) -> tuple[float, float | None]:
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
    tuning : GramTuning
        Its ``shift_factors`` are the shifts tried.

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
        for factor in tuning.shift_factors:
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


def _first_factor(G: np.ndarray, factorise, ridges: tuple):
    """``(factorise(G̃ + εI), ε)`` for the first ε of 0, then ``ridges`` (relative), that factorises; None if none does."""
    scale = float(np.abs(np.diagonal(G)).mean())
    for ridge in (0.0, *(relative * scale for relative in ridges)):
        shifted = G
        if ridge:
            shifted = G.copy()
            shifted[np.diag_indices_from(shifted)] += ridge
        try:
            return factorise(shifted), ridge
        except np.linalg.LinAlgError:
            continue
    return None


def _solve_by_factor(G: np.ndarray, rhs: np.ndarray, tuning: GramTuning) -> tuple[np.ndarray, float, float] | None:
    """ẑ and a λ_min estimate through a Cholesky factorisation of ``G̃`` or ``G̃ + εI``.

    The ridge ε (``tuning.ridges``) is used when ``G̃`` is numerically
    singular: the lower bound holds for *any* ``ẑ``, so a ridge-regularised
    ``ẑ`` still gives a valid (λ = 0) bound, which can prove that t is far
    from the column space of M even when G is singular. Up to
    ``tuning.small_eigen`` units NumPy does it all (the estimate from the
    dense spectrum); above, SciPy's triangular solves and ARPACK on ``G⁻¹``
    (SciPy is imported only here).

    Returns
    -------
    (z_hat, estimate, ridge) or None
        None when no float Cholesky factorisation (even with a ridge) succeeds.
    """
    if G.shape[0] <= tuning.small_eigen:
        found = _first_factor(G, _cholesky, tuning.ridges)
        if found is None:
            return None
        (L, ridge) = found
        z_hat = np.linalg.solve(L.T, np.linalg.solve(L, rhs))  # L Lᵀ ẑ = rhs (small n: LU on L costs nothing)
        estimate = 0.0 if ridge else float(np.linalg.eigvalsh(G)[0])
    else:
        import scipy.linalg as linalg

        found = _first_factor(G, lambda H: linalg.cho_factor(H, check_finite=False), tuning.ridges)
        if found is None:
            return None
        (factor, ridge) = found
        z_hat = linalg.cho_solve(factor, rhs, check_finite=False)
        estimate = 0.0 if ridge else _inverse_lanczos(G, factor, linalg, tuning.lanczos_tol)
    return (z_hat, estimate, ridge) if np.isfinite(z_hat).all() else None


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
    trace : Trace
        Seconds per stage (``gram_s``, ``solve_s``, …).
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
    trace: Trace = field(default_factory=Trace)
    method: str = "cholesky"

    @property
    def nonsingular(self) -> bool:
        """Whether ``λ_min(G) > 0`` (rank n) is certified."""
        return self.lambda_lower > 0


def residual(data: FloatData, z: np.ndarray, dtype=np.float64) -> tuple[np.ndarray, float]:
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
    R, e = residual(data, z_hat, dtype)
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


def _solve_and_certify(system: GramSystem, method: str, trace: Trace, tuning: GramTuning):
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
    with trace.stage("solve"):
        if method == "iterative":
            found = solve_iteratively(system.G, system.rhs, tuning)
            found = None if found is None else (*found, 0.0)
        else:
            found = _solve_by_factor(system.G, system.rhs, tuning)
    if found is None:
        return None
    z_hat, estimate, ridge = found
    with trace.stage("lambda_certify"):
        lam, shift = certify_lambda_min(system.G, estimate, system.error, tuning)
    if method == "iterative" and shift is None:
        return None
    return z_hat, estimate, ridge, lam, shift


def gram_system(data: FloatData) -> GramSystem | None:
    """``G̃``, ``Mᵀt`` and the bound on ``‖G̃ − G‖₂``; None when a product overflowed."""
    G = gram_matrix(data.U, data.D)
    rhs = gram_rhs(data)
    if not (np.isfinite(G).all() and np.isfinite(rhs).all()):
        return None
    d = data.U.shape[1]
    return GramSystem(G, rhs, 2.0 * gamma(2 * d + 2) * float(data.a @ data.a))


def gram_bounds(data: FloatData, tuning: GramTuning = DEFAULT_TUNING) -> GramBounds | None:
    """Solve the Gram system and certify the distance lower bound.

    Returns None when no float Cholesky factorisation of ``G̃`` (even with
    a ridge) succeeds.
    """
    trace = Trace()
    with trace.stage("gram"):
        system = gram_system(data)
    if system is None:
        return None
    method = "iterative" if system.G.shape[0] > tuning.small_eigen else "cholesky"
    solved = _solve_and_certify(system, method, trace, tuning)
    if solved is None and method == "iterative":
        method = "cholesky"
        unused = trace.record.pop("solve_s", 0.0) + trace.record.pop("lambda_certify_s", 0.0)
        trace.note(iterative_unused_s=round(unused, DIGITS))
        solved = _solve_and_certify(system, method, trace, tuning)
    if solved is None:
        return None
    gram_error = system.error
    del system
    z_hat, estimate, ridge, lam, shift = solved
    with trace.stage("bound"):
        lower_sq, norm, margins = lower_bound(data, z_hat, lam)
        margins["gram_error"] = gram_error
        margins["ridge"] = ridge
    distance = data.kappa * math.sqrt(lower_sq) * (1.0 - 4.0 * UNIT_ROUNDOFF)
    return GramBounds(z_hat, estimate, lam, shift, lower_sq, abs(distance), norm, margins, trace, method)


def recheck_extended(data: FloatData, bounds: GramBounds, tuning: GramTuning = DEFAULT_TUNING) -> bool:
    """Recompute the lower bound with residual and gradient in extended precision.

    Used when the float64 bound is inconclusive: the a-priori error terms
    shrink by a factor 2¹¹. Only on platforms with 80-bit ``longdouble``
    and when ``d²·n`` is at most ``tuning.extended_work``. Updates
    ``bounds`` in place when the bound improves.

    Returns
    -------
    bool
        Whether the recheck ran.
    """
    n, d = data.U.shape
    if EXTENDED is None or d * d * n > tuning.extended_work:
        return False
    with bounds.trace.stage("extended_recheck"):
        lower_sq, _, margins = lower_bound(data, bounds.z_hat, bounds.lambda_lower, EXTENDED)
    if lower_sq > bounds.lower_sq:
        margins["gram_error"] = bounds.margins.get("gram_error")
        margins["ridge"] = bounds.margins.get("ridge")
        bounds.margins = margins
        bounds.lower_sq = lower_sq
        bounds.distance_lower = data.kappa * math.sqrt(lower_sq) * (1.0 - 4.0 * UNIT_ROUNDOFF)
    return True


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


def check_rounded(instance: Instance, data: FloatData, z_hat: np.ndarray, tau: Fraction | None,
                  exact: bool | None = None, tuning: GramTuning = DEFAULT_TUNING) -> RoundedCheck:
    """Round ``ẑ`` to S, bound its residual in float, verify exactly when it may hold.

    Parameters
    ----------
    exact : bool or None
        True: always run the exact verifier; False: only when the float
        bound cannot rule S out; None: also when the exact check is cheap
        (``d²·|S|`` and ``10·n·d`` at most ``tuning.exact_upper_work``).
    """
    index_set = [int(i) for i in np.flatnonzero(z_hat > 0.5)]
    z = np.zeros_like(z_hat)
    z[index_set] = 1.0
    R, e = residual(data, z)
    kappa = data.kappa
    upper = kappa * (float(np.linalg.norm(R)) * (1.0 + gamma(instance.d**2 + 2)) + e) * (1.0 + 4.0 * UNIT_ROUNDOFF)
    max_low = kappa * max(0.0, float(np.abs(R).max()) - e) * (1.0 - 4.0 * UNIT_ROUNDOFF)
    threshold = 0.0 if tau is None else float(tau)
    ruled_out = len(index_set) < instance.d or max_low > threshold * (1.0 + 4.0 * UNIT_ROUNDOFF)
    work = max(instance.d**2 * len(index_set), 10 * instance.n * instance.d)
    small = work <= tuning.exact_upper_work
    run_exact = exact is True or not ruled_out or (exact is None and small)
    if not run_exact:
        return RoundedCheck(index_set, False, False, abs(upper), abs(max_low))
    report = verify(instance, index_set, tol=tau)
    squares = sum((value * value for value in report.residual.ravel()), Fraction(0))
    exact_upper = math.sqrt(float(squares)) * (1.0 + 4.0 * UNIT_ROUNDOFF)
    return RoundedCheck(index_set, report.holds, True, exact_upper, float(report.max_residual))
