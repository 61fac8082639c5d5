"""The Gram path's tunables, in one frozen record.

Each field says its rule; the measurements behind the defaults are in
BENCHMARKS.md ("Checkpoints: scan and the Gram path", and the `GramTuning` rows of "Evidence for tuning values"). Hand :func:`indexset.large.gram.gram_decide` (or the
functions of :mod:`indexset.large.certified`) a modified copy
(``dataclasses.replace(DEFAULT_TUNING, small_eigen=...)``) to change one.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class GramTuning:
    """The Gram path's tunables: they change how fast it answers, never what the bounds certify.

    Attributes
    ----------
    shift_factors : tuple of float
        Shifts ``s = factor·λ̂`` tried, in order, to certify ``λ_min(G) ≥ s − margin``.
    small_eigen : int
        Up to this many units G is factored and λ_min estimated densely; above, Lanczos and CG on G come first.
    lanczos_tol : float
        Relative accuracy of the λ_min estimate: it only proposes the shift that the Cholesky check certifies.
    iterative_products : int
        Products ``G·v`` allowed to each of Lanczos and CG before the factorisation of G takes over.
    cg_rtol : float
        Relative residual ``‖Gẑ − Mᵀt‖ ≤ cg_rtol·‖Mᵀt‖`` that CG must reach (near a Cholesky solve's).
    ridges : tuple of float
        Relative ridges ``ε/mean(diag G)`` tried, in order, when G is singular to working precision.
    exact_upper_work : int
        The exact verifier checks the rounded set whenever ``d²·|S|`` and ``10·n·d`` are at most this.
    extended_work : int
        Largest ``d²·n`` for the extended-precision recheck (NumPy's longdouble products are not BLAS).
    first_from_cells : int
        ``solve`` takes the Gram path first for blocks with ``n ≤ d²`` and more than this many entries ``d²·n`` of M.
    """

    shift_factors: tuple = (0.98, 0.9, 0.5)
    small_eigen: int = 400
    lanczos_tol: float = 1e-2
    iterative_products: int = 150
    cg_rtol: float = 1e-14
    ridges: tuple = (1e-10, 1e-6)
    exact_upper_work: int = 2_000_000
    extended_work: int = 100_000_000
    first_from_cells: int = 50_000


DEFAULT_TUNING = GramTuning()
"""The tuning every public function uses unless handed another."""
