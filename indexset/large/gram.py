"""The Gram path for large blocks (MATH.md §6.2): the verdict from a certified distance.

For a block with ``n ≤ d²`` units, :mod:`indexset.large.certified`
brackets the distance to absorbability without forming M; this module
decides what that interval means:

1. **absorbable** only when the exact rational verifier
   (:func:`indexset.exact.verify.verify`) accepts the rounded real solution S;
2. **not absorbable** only when the certified lower bound on the distance
   is positive (with a tolerance τ on the largest entry: larger than
   ``d·τ``, since ``max|R| ≤ τ`` implies ``‖R‖_F ≤ d·τ`` for a d × d matrix
   R), and the weights are nondegenerate or a theorem covers them;
3. **unknown** otherwise, with the reason: ``n > d²`` or a G not certified
   nonsingular (the combinatorial path of MATH.md §6 is needed), weights
   beyond float64, degenerate weights, or a bound inconclusive at float64
   precision.

Distances are Frobenius norms of ``c·W_down[:,S]W_up[S,:] + A``, i.e.
``|c|·‖M z − t‖``, minimised over S (``z`` the indicator of S). The proof
of the bound is in docs/MATH.md §6.2.
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass
from fractions import Fraction

import numpy as np

from indexset.classes import AFFINE, BIAS_FREE, phrase
from indexset.errors import InputError
from indexset.large.certified import (
    DEFAULT_TUNING,
    UNIT_ROUNDOFF,
    FloatData,
    GramBounds,
    GramTuning,
    RoundedCheck,
    check_rounded,
    exact_float,
    float_data,
    gram_bounds,
    recheck_extended,
)
from indexset.model.activations import ODD_LINEAR
from indexset.model.instance import Instance
from indexset.rational import as_fraction
from indexset.result import ABSORBABLE, NOT_ABSORBABLE, UNKNOWN, Result
from indexset.theory.nondegeneracy import SCREEN_FROM, Degeneracy, collinear_groups, find_degeneracy
from indexset.theory.theorems import bias_inside_verdict, linear_fallback, necessity, theorem_result

__all__ = ["BOUND_FORMULA", "NOT_CERTIFIED", "SINGULAR", "SINGULAR_REASON", "UNIQUE", "GramTuning", "gram_applies", "gram_decide", "screen_degeneracy"]

UNIQUE = "unique"
"""``stages["regime"]``: G has rank n, certified; the real solution z* is unique."""
SINGULAR = "singular"
"""``stages["regime"]``: G is singular for certain (n > d²); the Gram path cannot decide."""
NOT_CERTIFIED = "not certified"
"""``stages["regime"]``: rank n not certified (Cholesky failed, or no positive lower bound on λ_min)."""

SINGULAR_REASON = (
    "G = (W_downᵀW_down)∘(W_up W_upᵀ) is {why}: the real solution of M z = t is not "
    "unique, so the Gram path cannot decide; the combinatorial path of MATH.md §6 "
    "(kernel lattice) is needed"
)

BOUND_FORMULA = (
    "for every z in {0,1}^n: ‖Mz − t‖² ≥ ‖Mẑ − t‖² + Σ_i min over z_i of "
    "[λ(z_i − ẑ_i)² + 2g_i(z_i − ẑ_i)], g = Mᵀ(Mẑ − t), λ ≤ λ_min(G) certified by a "
    "shifted Cholesky check; all rounding errors bounded a priori (see MATH.md §6.2)"
)


@dataclass
class _Case:
    """One question to the Gram path and the stages recorded while answering it."""

    instance: Instance
    tau: Fraction | None
    target_class: str
    stages: dict

    @property
    def threshold(self) -> Fraction:
        """The Frobenius distance a "not absorbable" must exceed: 0, or ``d·τ``."""
        return Fraction(0) if self.tau is None else self.instance.d * self.tau


@dataclass
class _Evidence:
    """What the certified numerics found: the float data, the lower bound, the rounded set."""

    data: FloatData
    bounds: GramBounds
    rounded: RoundedCheck


# ---------------------------------------------------------- degeneracy
def screen_degeneracy(instance: Instance) -> Degeneracy:
    """:func:`indexset.theory.nondegeneracy.find_degeneracy`, fast for float weights.

    Zero rows and columns are found exactly in float64; collinear rows by
    :func:`indexset.theory.nondegeneracy.collinear_groups` (a float key screen, then
    exact checks).
    """
    U = exact_float(instance.W_up)
    D = exact_float(instance.W_down)
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


def gram_decide(instance: Instance, tol=None, *, exact_upper: bool | None = None, target_class: str = AFFINE,
                tuning: GramTuning = DEFAULT_TUNING) -> Result:
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
    tuning : GramTuning
        How the certified numerics go about it (never what they certify).

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
    result = _gram_path(_Case(instance, tau, target_class, stages), exact_upper, tuning)
    result.time_s = time.perf_counter() - start
    return result


def _gram_path(case: _Case, exact_upper: bool | None, tuning: GramTuning) -> Result:
    """The regime of an odd-linear block, then its certified distance and what that proves."""
    instance = case.instance
    if instance.n > instance.d**2:
        case.stages["regime"] = SINGULAR
        return Result(UNKNOWN, SINGULAR_REASON.format(why=f"singular (n = {instance.n} > d² = {instance.d**2})"), stages=case.stages, engine="gram")
    data = float_data(instance)
    if data is None:
        reason = "weights are integers beyond 2^53, not exact in float64: the Gram path does not apply; use the exact path"
        return Result(UNKNOWN, reason, stages=case.stages, engine="gram")
    bounds = gram_bounds(data, tuning)
    if bounds is None:
        case.stages["regime"] = NOT_CERTIFIED
        return Result(UNKNOWN, SINGULAR_REASON.format(why="numerically singular (float Cholesky failed)"), stages=case.stages, engine="gram")
    with bounds.trace.stage("rounded_check"):
        rounded = check_rounded(instance, data, bounds.z_hat, case.tau, exact_upper, tuning)
    if not rounded.holds and Fraction(bounds.distance_lower) <= case.threshold:
        recheck_extended(data, bounds, tuning)
    result = _decide(case, _Evidence(data, bounds, rounded))
    result.target_class = case.target_class
    return result


def _decide(case: _Case, evidence: _Evidence) -> Result:
    instance, bounds, rounded = case.instance, evidence.bounds, evidence.rounded
    lower = 0.0 if rounded.holds else bounds.distance_lower
    certificate = _certificate(case, evidence, lower)
    case.stages.update(
        regime=UNIQUE if bounds.nonsingular else NOT_CERTIFIED,
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
        timings=bounds.trace.record,
    )
    common = dict(stages=case.stages, engine="gram", certificate=certificate)
    if case.target_class == BIAS_FREE and instance.b_up is not None and bool(np.any(instance.b_up != 0)) and not instance.act.linear:
        verdict = bias_inside_verdict(instance, screen_degeneracy(instance), case.stages)
        if verdict is not None:
            verdict.certificate = {**certificate, **verdict.certificate}  # the theorem's argument, and the distance interval, which stays informative
            return verdict
        return Result(UNKNOWN, f"degenerate weights with a bias inside σ: no theorem decides them against {phrase(BIAS_FREE)} on the Gram path", **common)
    if rounded.holds:
        within = f" within τ = {_show(case.tau)}" if case.tau is not None else ""
        reason = (
            f"rounding the real solution z* of the Gram system gives S with |S| = {len(rounded.index_set)}, "
            f"and c·W_down[:,S]·W_up[S,:] = −A holds{within} (exact rational verifier)"
        )
        return Result(ABSORBABLE, reason, index_set=rounded.index_set, verified=True, extension=instance.act.extension, complete=True, **common)
    if Fraction(lower) > case.threshold:
        return _negative(case, lower, common)
    if not bounds.nonsingular:
        why = f"not certified nonsingular (λ_min estimate {bounds.lambda_estimate:.3g}, certified lower bound 0)"
        return Result(UNKNOWN, SINGULAR_REASON.format(why=why), **common)
    reason = (
        f"the rounded real solution fails the exact verifier, but the certified distance lower bound "
        f"{lower:.3g} does not exceed {float(case.threshold):.3g}: inconclusive at float64 precision "
        "(the exact path can decide)"
    )
    return Result(UNKNOWN, reason, **common)


def _negative(case: _Case, lower: float, common: dict) -> Result:
    """The verdict once the certified distance exceeds the threshold: "not absorbable" on nondegenerate weights."""
    instance, tau = case.instance, case.tau
    act = instance.act
    if tau is None:
        claim = f"certified distance to absorbability ≥ {lower:.6g} (Frobenius; {common['certificate']['relative_lower']:.3g} relative to ‖A‖_F) > 0, so no index set S satisfies (★)"
    else:
        claim = f"certified distance ≥ {lower:.6g} > d·τ = {float(case.threshold):.6g}, so no S has max|c·W_down[:,S]W_up[S,:] + A| ≤ τ = {_show(tau)}"
    if act.linear:
        return linear_fallback(instance, tau, claim, case.stages)
    degeneracy = screen_degeneracy(instance)
    case.stages["weights"] = degeneracy.describe()
    case.stages["degeneracy"] = asdict(degeneracy)
    if not degeneracy.nondegenerate:
        reason = f"{claim}; but the weights are {degeneracy.describe()}, where (★) is not necessary (MATH.md §3): absorption is not ruled out"
        return Result(UNKNOWN, reason, **common)
    reason = f"{claim} (MATH.md §6 Gram bound); {necessity(instance, case.target_class)}"
    return Result(NOT_ABSORBABLE, reason, extension=act.extension or case.target_class == AFFINE, complete=True, **common)


def _certificate(case: _Case, evidence: _Evidence, lower: float) -> dict:
    data, bounds, rounded = evidence.data, evidence.bounds, evidence.rounded
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
        "tolerance": None if case.tau is None else str(case.tau),
        "frobenius_threshold": float(case.threshold),
        "unit_roundoff": UNIT_ROUNDOFF,
    }


def _show(value: Fraction) -> str:
    """A Fraction as ``p/q`` when short, else as a decimal."""
    return str(value) if value.denominator <= 10**6 else f"{float(value):.6g}"
