"""Exact decision for degenerate weights (MATH.md §7, an **extension**): the verdict and its witness.

On degenerate weights (zero or collinear rows, zero columns, d = 1) the
condition (★) is sufficient but not necessary. This module decides such
blocks exactly, for odd-linear activations whose even part is not zero:

1. the canonical form merges the units σ cannot tell apart into classes
   (:mod:`indexset.theory.canonical`, MATH.md §7.1);
2. f is absorbable iff for a flat V of class directions (dim u ≤ s, the
   spare units) and signs of the other classes
   ``rank((L + Σ z_K T_K)·Q_V) ≤ ⌊(s − u)/2⌋`` (Theorem 7.2); the case
   analysis over levels and flats is :mod:`indexset.theory.flats`, the
   rank sub-cases :mod:`indexset.theory.lowrank`;
3. this module turns the outcome into a :class:`~indexset.result.Result`.

Positive answers come with a witness block of the same width n whose
canonical form equals f's exactly and which passes
:func:`indexset.exact.witness.check_forward` (exact for ReLU). Negative
answers list the levels they refuted and how. Cases past the tuning's
budgets, or the time limit, give ``unknown`` naming each open case.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from fractions import Fraction

import flint
import numpy as np

from indexset.budget import Budget
from indexset.exact.witness import block_instance, check_forward, encode_block
from indexset.model.instance import Instance
from indexset.rational import as_fraction
from indexset.result import ABSORBABLE, NOT_ABSORBABLE, UNKNOWN, Result
from indexset.theory.canonical import HOMOGENEOUS, Classes, Form, canonical_form, classes_of, fmpq_array, merge_kind, zeros
from indexset.theory.degenerate_tuning import DegenerateTuning
from indexset.theory.flats import Absorbable, NotAbsorbable, Plan, class_data, decide_classes
from indexset.theory.shortrun import Workers
from indexset.trace import Trace

__all__ = ["DegenerateTuning", "Plan", "argument", "build_witness", "decide_degenerate", "report"]

EXTENSION_NOTE = "MATH.md §7 (extension beyond the paper)"


# ====================================================== witness
@dataclass
class Witness:
    """Exact arrays of the witness block and how its constant was obtained.

    Attributes
    ----------
    values : dict
        ``W_up``, ``b_up``, ``W_down``, ``b_down`` as Fractions.
    rounded_constant : bool
        True when irrational constants σ(b) of zero-row units had no unit
        left to carry them and were rounded into ``b_down`` (float64).
    """

    values: dict
    rounded_constant: bool = False


def build_witness(instance: Instance, plan: Plan, form: Form, classes: Classes) -> Witness:
    """A residual-free block of width n that equals f (exactly, up to a rounded constant).

    Units: one per class (flipped or not), two per upgraded class, two per
    rank-one term of the leftover linear part, one per symbolic constant
    when there is room; the rest are zero. ``b_down`` matches the constant.
    """
    c, d = classes.c, classes.d
    residual = _residual_before_upgrades(classes, plan)
    columns_n, leftover = _upgrade_columns(residual, plan.upgraded, classes)
    units = _class_units(classes, plan, columns_n)
    for a, b in _rank_one_terms(leftover):
        units += [(b, Fraction(0), a / c), (_neg(b), Fraction(0), -a / c)]
    room = classes.n - len(units)
    carried = sorted(form.symbolic.items()) if len(form.symbolic) <= room else []
    for beta, column in carried:
        units.append((_zero_row(d), beta, np.array(column, dtype=object)))
    units += [(_zero_row(d), Fraction(0), zeros((d,)))] * (classes.n - len(units))
    values = _pack_units(units, classes.n, d)
    shifted = canonical_form(values, instance.act)
    constant = form.constant - shifted.constant
    if not carried and form.symbolic:
        # σ(b) is irrational here: c_down can only hold a float64 rounding.
        for beta, column in form.symbolic.items():
            value = Fraction(float(instance.act.forward(np.array([float(beta)]))[0]))
            constant = constant + value * np.array(column, dtype=object)
    values["b_down"] = constant
    return Witness(values, rounded_constant=bool(form.symbolic) and not carried)


def _class_units(classes: Classes, plan: Plan, columns_n: dict) -> list:
    units = []
    for k in range(classes.m):
        row, bias = classes.keys[k]
        E = classes.columns[k]
        if k in plan.upgraded:
            N = columns_n[k]
            # N·σ(−h) + (E − N)·σ(h) = E·σ(h) − c·N·h: any column N for ρ_K.
            units += [(row, bias, E - N), (_neg(row), -bias, N)]
        elif k in plan.flipped:
            units.append((_neg(row), -bias, E))
        else:
            units.append((row, bias, E))
    return units


def _pack_units(units: list, n: int, d: int) -> dict:
    return {
        "W_up": np.array([list(row) for row, _, _ in units], dtype=object).reshape(n, d),
        "b_up": np.array([bias for _, bias, _ in units], dtype=object),
        "W_down": np.array([list(col) for _, _, col in units], dtype=object).reshape(n, d).T.copy(),
        "b_down": zeros((d,)),
        "skip": None,
    }


def _zero_row(d: int) -> tuple:
    return tuple([Fraction(0)] * d)


def _neg(row) -> tuple:
    return tuple(-v for v in row)


def _residual_before_upgrades(classes: Classes, plan: Plan) -> flint.fmpq_mat:
    """L + c·Σ_{flipped} E_K ρ_Kᵀ: what upgrades and pairs must produce."""
    residual = fmpq_array(classes.linear)
    for k in plan.flipped:
        residual = residual + classes.term(k)
    return residual


def _upgrade_columns(residual: flint.fmpq_mat, upgraded: list, classes: Classes):
    """Columns N_K of the upgraded classes and the leftover R·(I − Π_V)."""
    if not upgraded:
        return {}, residual
    P = fmpq_array([classes.direction(k) for k in upgraded])  # u × d, independent rows
    coefficients = residual * P.transpose() * (P * P.transpose()).inv()  # d × u: R·Π_V = coefficients·P
    leftover = residual - coefficients * P
    columns = {}
    for j, k in enumerate(upgraded):
        # R + c·Σ N_K ρ_Kᵀ must equal the leftover, so c·N_K = −coefficient.
        columns[k] = np.array([-as_fraction(coefficients[r, j]) / classes.c for r in range(classes.d)], dtype=object)
    return columns, leftover


def _rank_one_terms(matrix: flint.fmpq_mat) -> list:
    """``matrix = Σ_t a_t b_tᵀ`` with as many terms as its rank (CR decomposition)."""
    reduced, rank = matrix.rref()
    terms = []
    for t in range(rank):
        row = [as_fraction(reduced[t, j]) for j in range(matrix.ncols())]
        pivot = next(j for j, v in enumerate(row) if v != 0)
        a = np.array([as_fraction(matrix[r, pivot]) for r in range(matrix.nrows())], dtype=object)
        terms.append((a, tuple(row)))
    return terms


def _matches(form: Form, values: dict, act, rounded: bool) -> bool:
    """Exact check of the witness: equal canonical forms (constants aside when rounded)."""
    other = canonical_form(values, act)
    if not rounded:
        return other.same_as(form)
    return other.even == form.even and bool(np.all(other.linear == form.linear))


# ====================================================== public entry
def decide_degenerate(instance: Instance, tol=None, time_limit=None, stop=None, *, budget: Budget | None = None,
                      tuning: DegenerateTuning | None = None, trace: Trace | None = None, workers: Workers | None = None) -> Result | None:
    """Decide absorbability exactly on (possibly) degenerate weights (MATH.md §7).

    Parameters
    ----------
    instance : Instance
        A skip-connected block. Biases are handled: classes are affine
        hyperplanes, and constants are free through c_down.
    tol : optional
        The decision is exact; with a tolerance it does not apply (None).
    time_limit : float, optional
        Seconds; past it the answer is ``unknown`` (ignored when ``budget`` is given).
    stop : threading.Event, optional
        Stop request (ignored when ``budget`` is given).
    budget : Budget, optional
        Deadline and stop request shared with the caller.
    tuning : DegenerateTuning, optional
        Budgets of the case analysis (default :class:`DegenerateTuning`).
    trace : Trace, optional
        The caller's trace: the decision records under its ``degenerate``
        key (created only when the argument applies), and the result's
        ``stages`` is that record.
    workers : Workers, optional
        Where long work (Lemma 7.7e's systems) may run, and who hears of
        its progress (default: every core, no progress).

    Returns
    -------
    Result or None
        ``absorbable`` with a witness block in ``certificate["witness"]``
        (checked exactly by canonical form and by
        :func:`~indexset.exact.witness.check_forward`), ``not_absorbable`` with the
        exhaustive argument, ``unknown`` when the search budget ran out; None
        when the argument does not apply (tolerance, residual-free block,
        activation without a usable even part).
    """
    if tol is not None or instance.residual_free or merge_kind(instance.act) is None:
        return None
    budget = budget or Budget.of(time_limit, stop)
    tuning = tuning or DegenerateTuning()
    trace = Trace() if trace is None else trace.child("degenerate")
    trace.note(path="degenerate (MATH.md §7)")
    with trace.stage("decide"):
        form, classes = classes_of(instance)
        trace.note(classes=classes.m, spare=classes.spare, free_classes=len(form.free), merge=merge_kind(instance.act))
        outcome = _with_exact_constants(form, classes, budget, tuning, workers)
        trace.note(levels=[level.to_json() for level in outcome.levels])
    stages = trace.record
    elapsed = budget.elapsed()
    if isinstance(outcome, Absorbable):
        return _positive(instance, form, classes, outcome.plan, stages, elapsed)
    if isinstance(outcome, NotAbsorbable):
        return _negative(instance, classes, outcome.levels, stages, elapsed)
    open_cases = [f"level u = {level.u} (q = {level.q}): {'; '.join(case.why for case in level.open)}" for level in outcome.levels if level.open]
    unreached = [f"u = {level.u} (q = {level.q})" for level in outcome.levels if level.state == "not reached"]
    stages["open"] = [{"u": level.u, "q": level.q, **case.to_json()} for level in outcome.levels for case in level.open]
    reason = (f"{EXTENSION_NOTE}: the degenerate-weights decision left open cases ({classes.m} classes, "
              f"{classes.spare} spare units): " + "; ".join(open_cases)
              + (f"; levels not examined after it: {', '.join(unreached)}" if unreached else ""))
    return Result(UNKNOWN, reason, stages=stages, engine="degenerate", extension=True, time_s=elapsed)


def _with_exact_constants(form: Form, classes: Classes, budget: Budget, tuning: DegenerateTuning, workers: Workers | None):
    """Prefer a plan that leaves a unit for every irrational constant σ(b)."""
    reserve = len(form.symbolic)
    if 0 < reserve <= classes.spare:
        outcome = decide_classes(class_data(replace(classes, reserve=reserve)), budget, tuning, workers)
        if isinstance(outcome, Absorbable):
            return outcome
        # The reserve was a preference, not part of the question: decide without it.
    return decide_classes(class_data(classes), budget, tuning, workers)


def argument(instance: Instance) -> str:
    """Why each class of f with E_K ≠ 0 needs a unit of g (the pinning step)."""
    if merge_kind(instance.act) == HOMOGENEOUS:
        return ("σ is positively homogeneous: a residual-free block equal to f has the same gradient "
                "jumps across every hyperplane, so each class of f with E_K ≠ 0 holds ≥ 1 of its units")
    return ("σ is analytic with a non-affine even part: the even parts e(h(x)) of distinct affine "
            "maps h (up to sign) are independent (the paper's even-part argument, MATH.md §3), "
            "so each class of f with E_K ≠ 0 holds ≥ 1 unit of g")


def _positive(instance, form, classes, plan, stages, elapsed) -> Result:
    built = build_witness(instance, plan, form, classes)
    if not _matches(form, built.values, instance.act, built.rounded_constant):
        raise AssertionError("bug: the §7 witness does not have f's canonical form")
    block = block_instance(instance, built.values, "degenerate (MATH.md §7)", built.rounded_constant)
    check = check_forward(instance, block)
    if not check.ok:
        raise AssertionError(f"bug: the §7 witness fails the forward check: {check.describe()}")
    pairs = len(_rank_one_terms(_upgrade_columns(_residual_before_upgrades(classes, plan), plan.upgraded, classes)[1]))
    exactness = ("checked exactly (canonical form)" if not built.rounded_constant else
                 "checked exactly up to c_down, which holds irrational values σ(b) of zero-row units rounded to float64")
    reason = (
        f"{EXTENSION_NOTE}: merging the units σ cannot tell apart leaves {classes.m} class(es) that need a unit "
        f"and {classes.spare} spare unit(s); flipping classes {plan.flipped}, upgrading classes {plan.upgraded} "
        f"(two units each) and {pairs} rank-one pair(s) on new lines reproduce the linear part exactly; "
        f"witness of width n = {classes.n} {exactness}, and {check.describe()}"
    )
    certificate = {
        "kind": "degenerate", "argument": "MATH.md §7", "classes": classes.m, "spare": classes.spare,
        "flipped": plan.flipped, "upgraded": plan.upgraded, "pairs": pairs,
        "rounded_constant": built.rounded_constant, "forward_check": check.to_json(),
        "witness": encode_block(built.values),
    }
    return Result(ABSORBABLE, reason, verified=True, stages=stages, engine="degenerate", certificate=certificate,
                  extension=True, complete=False, time_s=elapsed)


def _negative(instance, classes, levels, stages, elapsed) -> Result:
    examined = "; ".join(_level_words(level) for level in levels) or "no level needs examining"
    reason = (
        f"{EXTENSION_NOTE}: {argument(instance)}; f has {classes.m} such class(es) in width n = {classes.n}, "
        f"so {classes.spare} spare unit(s). A class with one unit adds 0 or −c·E_K·ρ_Kᵀ to the linear part, "
        "an upgraded class (two units) any column times ρ_Kᵀ, two units on a new line any rank-one term; "
        "so f is absorbable iff for a flat V spanned by u class directions and signs of the other classes the "
        "linear mismatch restricted to V^⊥ has rank ≤ q = ⌊(spare − u)/2⌋, and only the levels u below need "
        f"examining. Refuted exhaustively: {examined}; no residual-free block of width n equals f"
    )
    certificate = {"kind": "degenerate", "argument": "MATH.md §7", "classes": classes.m, "spare": classes.spare,
                   "levels": [level.to_json() for level in levels]}
    return Result(NOT_ABSORBABLE, reason, stages=stages, engine="degenerate", certificate=certificate,
                  extension=True, complete=True, time_s=elapsed)


def _level_words(level) -> str:
    how = ", ".join(f"{count} by {WORDS[kind]}" for kind, count in sorted(level.refuted.items()))
    return f"level u = {level.u}, q = {level.q}: {level.flats} flat(s) ({how})"


WORDS = {"system": "a 0/1 system without solution", "bound": "the rank bound",
         "enumeration": "enumerating every sign vector", "meet": "a meet in the middle mod p",
         "short": "a 0/1 system per short column or row direction (MATH.md Lemma 7.7e)",
         "constant": "an entry no sign changes"}


def report(instance: Instance) -> dict:
    """Classes, free classes and spare units of a block (for ``info``)."""
    if merge_kind(instance.act) is None or instance.residual_free:
        return {"applies": False}
    form, classes = classes_of(instance)
    return {"applies": True, "merge": merge_kind(instance.act), "classes_needing_a_unit": classes.m,
            "free_classes": len(form.free), "spare_units": classes.spare,
            "irrational_constants": len(form.symbolic)}
