"""Verdicts by theorem for activations that are not odd-linear (MATH.md §4, §8).

ReLU², ReGLU (degree 2 homogeneous) and SwiGLU, GeGLU (gate differentiable
at 0 with g(0) = 0) never absorb their skip into a *bias-free* residual-free
block when σ of f sees no bias (the paper). Against residual-free blocks
with biases (the ``affine`` class) :mod:`indexset.theory.affine` decides them:
Theorems B and C on nondegenerate weights, constructions otherwise.
Everything else that is not odd-linear is unknown.
"""

from __future__ import annotations

import time

import flint
import numpy as np

from indexset.budget import Budget
from indexset.classes import AFFINE, BIAS_FREE, phrase
from indexset.model.activations import GATED, HOMOGENEOUS, UNCOVERED
from indexset.model.instance import Instance
from indexset.result import ABSORBABLE, NOT_ABSORBABLE, UNKNOWN, Result, theorem_certificate
from indexset.text import ranges
from indexset.theory.canonical import block_values, canonical_form, merge_kind


def theorem_result(instance: Instance, target_class: str = AFFINE, *, budget: Budget | None = None, seed: int = 0, start: float | None = None) -> Result:
    """The verdict for a block whose activation is not odd-linear, against ``target_class``.

    Homogeneous and gated activations go to :func:`indexset.theory.affine.decide`;
    uncovered ones (sigmoid-GLU) are unknown in both classes.
    """
    act = instance.act
    if act.kind in (HOMOGENEOUS, GATED):
        from indexset.theory.affine import decide

        result = decide(instance, target_class, budget=budget, seed=seed)
        if start is not None:
            result.time_s = time.perf_counter() - start
        return result
    result = theorem_verdict(act, instance.b_up is not None and bool(np.any(instance.b_up != 0)), start, target_class)
    return result


def necessity(instance: Instance, target_class: str) -> str:
    """Why "no S" means "not absorbable" on nondegenerate weights, for the class asked about."""
    act = instance.act
    if target_class == AFFINE:
        return (f"Theorem A (MATH.md §8.3, extension): on nondegenerate weights every block among {phrase(AFFINE)} "
                "that equals f is f with a set S of units flipped, so f is absorbable iff S satisfies (★)"
                + (f"; {act.name} itself is an extension (MATH.md §2)" if act.extension else ""))
    source = "the paper's theorem (MATH.md §3)" if not act.extension else "Theorem A (MATH.md §8.3, extension)"
    return f"{source}: against {phrase(BIAS_FREE)}, f is absorbable iff some S satisfies (★) (nondegenerate weights, no bias inside σ)"


def bias_inside_verdict(instance: Instance, degeneracy, stages: dict) -> Result | None:
    """Odd-linear f with a bias inside σ against bias-free blocks (MATH.md §8.3, extension).

    Every unit class of f whose even part is nonzero needs a unit of g on
    the same affine hyperplane (ReLU-like σ) or the same pre-activation up
    to sign (analytic σ); a bias-free g has no such unit off the origin. So
    on nondegenerate weights any nonzero ``b_up`` rules absorption out; on
    degenerate ones, a class with a nonzero bias that does not cancel does.
    Returns None when neither applies (the search then decides).
    """
    if instance.act.linear:
        return None  # σ(z) = z: biases only shift the constant, which c_down absorbs
    biased = [i for i in range(instance.n) if instance.b_up[i] != 0]
    if degeneracy.nondegenerate:
        reason = (f"Theorem A, bias-free part (MATH.md §8.3, extension): on nondegenerate weights a residual-free block "
                  f"equal to f has a unit on each unit of f, bias included, and units {ranges(biased)} of f have a "
                  f"nonzero bias inside σ; no block among {phrase(BIAS_FREE)} equals f")
        return Result(NOT_ABSORBABLE, reason, stages=dict(stages, path="theorem"), engine="theorem", complete=True, extension=True,
                      certificate=theorem_certificate("MATH.md §8.3"))
    if merge_kind(instance.act) is None:
        return None
    form = canonical_form(block_values(instance), instance.act)
    off_origin = [key for key in form.even if key[1] != 0]
    if not off_origin:
        return None
    reason = (f"MATH.md §8.3 (extension): merging the units σ cannot tell apart leaves {len(off_origin)} class(es) with a "
              "nonzero even part on a hyperplane that misses the origin; every residual-free block equal to f has a "
              f"unit on each, which needs a bias inside σ; no block among {phrase(BIAS_FREE)} equals f")
    return Result(NOT_ABSORBABLE, reason, stages=dict(stages, path="theorem"), engine="theorem", complete=True, extension=True,
                  certificate=theorem_certificate("MATH.md §8.3"))


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
    if linear != C * R:
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


def theorem_verdict(act, bias_inside: bool, start: float | None = None, target_class: str = BIAS_FREE) -> Result:
    """The verdict by the paper's theorem for a non-odd-linear activation, from its class alone.

    Homogeneous and gated activations against bias-free blocks: not
    absorbable, provided there is no bias inside σ of f (the degree and
    linearisation arguments of MATH.md §4 need ``σ(W_up x)`` without
    ``b_up``); with one the answer is unknown. Against the affine class the
    weights matter (:func:`indexset.theory.affine.decide`), so this answers unknown.
    Uncovered activations (sigmoid-GLU): unknown.

    Parameters
    ----------
    act : Activation
    bias_inside : bool
        Whether a nonzero bias sits inside σ (up, or gate, projection).
    start : float, optional
        ``time.perf_counter()`` at the start, for ``time_s``.
    """
    stages = {"path": "theorem", "classify": act.kind, "class": target_class}
    elapsed = 0.0 if start is None else time.perf_counter() - start
    if act.kind in (HOMOGENEOUS, GATED) and target_class == AFFINE:
        reason = (f"{act.name} against {phrase(AFFINE)}: the paper's theorem is about bias-free blocks; "
                  "with biases the weights decide (MATH.md §8), and they were not examined")
        return Result(UNKNOWN, reason, stages=stages, engine="theorem", time_s=elapsed, target_class=target_class)
    if act.kind in (HOMOGENEOUS, GATED):
        if bias_inside:
            reason = (
                f"{act.name} with a nonzero bias inside σ: MATH.md §4's argument needs σ(W_up x) "
                "without a bias, so no theorem decides this block"
            )
            return Result(UNKNOWN, reason, stages=stages, engine="theorem", time_s=elapsed, target_class=target_class)
        reason = f"{act.reason}; this is the paper's theorem, about {phrase(BIAS_FREE)}"
        return Result(NOT_ABSORBABLE, reason, stages=stages, engine="theorem", complete=True, time_s=elapsed, target_class=target_class,
                      certificate=theorem_certificate("MATH.md §4"))
    reason = act.reason if act.kind == UNCOVERED else f"activation class {act.kind} is not covered"
    return Result(UNKNOWN, reason, stages=stages, engine="theorem", time_s=elapsed, target_class=target_class)


