"""Verdicts by theorem for activations that are not odd-linear (MATH.md §4).

No search is involved: ReLU², ReGLU (degree 2 homogeneous) and SwiGLU,
GeGLU (gate differentiable at 0 with g(0) = 0) never absorb their skip when
σ sees no bias; everything else that is not odd-linear is unknown.
"""

from __future__ import annotations

import time

import flint
import numpy as np

from .activations import GATED, HOMOGENEOUS, UNCOVERED
from .instance import Instance
from .result import ABSORBABLE, NOT_ABSORBABLE, UNKNOWN, Result


def theorem_result(instance: Instance, start: float | None = None) -> Result:
    """The verdict for activations that are not odd-linear (MATH.md §4).

    See :func:`theorem_verdict`; the bias inside σ is ``instance.b_up``.
    """
    bias_inside = instance.b_up is not None and bool(np.any(instance.b_up != 0))
    return theorem_verdict(instance.act, bias_inside, start)


def linear_verdict(instance: Instance, start: float | None = None) -> Result:
    """Decide a block with σ(z) = z exactly: absorbable iff rank(A + W_down·W_up) ≤ n.

    A residual-free block of width n computes ``V_down V_up x + const``,
    whose linear part has rank ≤ n; conversely any L of rank r ≤ n factors
    exactly as ``L = C R`` (R the nonzero rows of rref(L), C the pivot
    columns of L), padded with zero units to width n. The factorisation is
    checked exactly and returned in the certificate.
    """
    linear = instance.exact_fraction_matrix("skip") + instance.exact_fraction_matrix("W_down") * instance.exact_fraction_matrix("W_up")
    rank = linear.rank()
    stages = {"path": "theorem", "classify": "linear", "rank_L": rank}
    elapsed = 0.0 if start is None else time.perf_counter() - start
    if rank > instance.n:
        proof = f"σ(z) = z is linear and rank(A + W_down·W_up) = {rank} > n = {instance.n}, the largest rank a residual-free block of width n has (extension beyond the paper)"
        return Result(NOT_ABSORBABLE, proof, stages=stages, engine="theorem", complete=True, extension=True, time_s=elapsed, certificate={"kind": "linear_rank", "rank": rank})
    echelon, _ = linear.rref()
    rows = [r for r in range(echelon.nrows()) if any(echelon[r, j] != 0 for j in range(echelon.ncols()))]
    pivots = [next(j for j in range(echelon.ncols()) if echelon[r, j] != 0) for r in rows]
    d = linear.nrows()
    R = flint.fmpq_mat([[echelon[r, j] for j in range(d)] for r in rows]) if rows else flint.fmpq_mat(0, d)
    C = flint.fmpq_mat([[linear[i, j] for j in pivots] for i in range(d)]) if rows else flint.fmpq_mat(d, 0)
    if C * R != linear:
        raise ArithmeticError("rank factorisation failed its exact check")  # never expected
    reason = f"σ(z) = z is linear and rank(A + W_down·W_up) = {rank} ≤ n = {instance.n}: L = C·R exactly (checked), so V_up = R, V_down = C padded with zero units (extension beyond the paper)"
    return Result(ABSORBABLE, reason, verified=True, stages=stages, engine="theorem", complete=True, extension=True, time_s=elapsed, certificate={"kind": "linear_rank", "rank": rank, "V_down": _strings(C), "V_up": _strings(R)})


def linear_fallback(instance: Instance, tol, no_set: str, stages: dict) -> Result:
    """The verdict for σ(z) = z once the search has shown that no S satisfies (★).

    Exactly: :func:`linear_verdict`. With a tolerance an exactly absorbable
    block is still reported absorbable; otherwise the answer is unknown (a
    rank-≤ n approximation within τ is not ruled out).
    """
    result = linear_verdict(instance)
    result.stages = dict(stages, **result.stages)
    result.reason = f"{no_set}; {result.reason}"
    if tol is not None and result.status == NOT_ABSORBABLE:
        return Result(UNKNOWN, result.reason + "; with a tolerance an approximate factorisation is not ruled out", stages=result.stages, engine="theorem", extension=True)
    return result


def _strings(matrix) -> list[list[str]]:
    """A rational matrix as nested lists of exact strings (JSON-ready)."""
    return [[str(matrix[i, j]) for j in range(matrix.ncols())] for i in range(matrix.nrows())]


def theorem_verdict(act, bias_inside: bool, start: float | None = None) -> Result:
    """The verdict by theorem for a non-odd-linear activation.

    Homogeneous and gated activations: not absorbable, provided there is no
    bias inside σ (the degree and linearisation arguments of MATH.md §4
    need ``σ(W_up x)`` without ``b_up``); with one the answer is unknown.
    Uncovered activations (sigmoid-GLU): unknown.

    Parameters
    ----------
    act : Activation
    bias_inside : bool
        Whether a nonzero bias sits inside σ (up, or gate, projection).
    start : float, optional
        ``time.perf_counter()`` at the start, for ``time_s``.
    """
    stages = {"path": "theorem", "classify": act.kind}
    elapsed = 0.0 if start is None else time.perf_counter() - start
    if act.kind in (HOMOGENEOUS, GATED):
        if bias_inside:
            reason = (
                f"{act.name} with a nonzero bias inside σ: MATH.md §4's argument needs σ(W_up x) "
                "without a bias, so no theorem decides this block"
            )
            return Result(UNKNOWN, reason, stages=stages, engine="theorem", time_s=elapsed)
        return Result(NOT_ABSORBABLE, act.reason, stages=stages, engine="theorem", complete=True, time_s=elapsed)
    reason = act.reason if act.kind == UNCOVERED else f"activation class {act.kind} is not covered"
    return Result(UNKNOWN, reason, stages=stages, engine="theorem", time_s=elapsed)


