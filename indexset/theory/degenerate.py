"""Exact decision for degenerate weights (MATH.md §7, an **extension**).

On degenerate weights (zero or collinear rows, zero columns, d = 1) the
condition (★) is sufficient but not necessary. This module decides such
blocks exactly, for odd-linear activations whose even part is not zero.

The argument
------------
Write σ(z) = (c/2)·z + e(z) with e even and not affine.

1. *Canonical form.* Every block is ``Σ_K E_K σ(h_K(x)) + L x + const``
   over pairwise distinct *classes* h_K(x) = ρ_K·x + β_K, because units that
   σ cannot tell apart merge: for ReLU-like σ (positively homogeneous) units
   on one affine hyperplane (σ(λh) = λσ(h) for λ > 0, and
   σ(−h) = σ(h) − c·h), for GELU-like σ (analytic) units equal up to sign.
   A class with E_K = 0 is *free*: it only adds to L.
2. *Units are pinned.* If a residual-free block g of width n equals f, then
   g has, for every class K of f with E_K ≠ 0, at least one unit on h_K,
   and the units of g elsewhere cancel in even part. For ReLU-like σ this is
   the jump of the gradient across each hyperplane; for analytic σ the
   linear independence of the even parts e(h(x)) for distinct h up to sign
   (the paper's even-part argument, MATH.md §3).
3. *What the spare units buy.* With m classes that need a unit and
   s = n − m spare units: a class with one unit contributes ±: 0 or
   −c·E_K·ρ_Kᵀ to the linear part (a sign, "flipped" or not); a class with
   two units contributes −c·N·ρ_Kᵀ for any column N ("upgraded"); two
   units on a new line contribute any rank-one term; one unit alone
   elsewhere contributes nothing. Constants are free (c_down).
4. *The decision.* f is absorbable iff for some set U of upgraded classes
   (w.l.o.g. with linearly independent ρ_K, so |U| = dim V, V = span ρ_U)
   and signs z of the other classes,
   ``rank((L + c·Σ_{K∉U} z_K E_K ρ_Kᵀ)·Q_V) ≤ ⌊(s − |U|)/2⌋``
   where Q_V is a basis of V^⊥ (the best upgrade columns remove exactly the
   part of the mismatch whose rows lie in V). With s = 0 this is (★) on the
   merged classes.

Positive answers come with a witness block of the same width n whose
canonical form equals f's exactly and which passes
:func:`indexset.exact.witness.check_forward` (exact for ReLU). Negative answers
state the exhaustive case analysis they rest on. Searches that exceed their
budget give ``unknown``.
"""

from __future__ import annotations

import itertools
import math
import threading
import time
from dataclasses import dataclass, field
from fractions import Fraction

import flint
import numpy as np

from indexset.model.activations import ODD_LINEAR
from indexset.model.instance import Instance, exact_value
from indexset.rational import as_fmpq, as_fraction
from indexset.result import ABSORBABLE, NOT_ABSORBABLE, UNKNOWN, Result

MAX_ENUMERATION = 1 << 17
"""Most sign vectors tried in the rank ≥ 1 cases before answering unknown."""

MAX_CASES = 20_000
"""Most upgrade sets U examined before answering unknown."""

_ANALYTIC = ("gelu", "gelu_tanh", "silu", "softplus")
_ZERO_AT_ZERO = ("gelu", "gelu_tanh", "silu")  # σ(0) = 0 exactly

EXTENSION_NOTE = "MATH.md §7 (extension beyond the paper)"


# ====================================================== canonical form
@dataclass
class Form:
    """A block as ``Σ_K E_K σ(h_K(x)) + L x + const (+ Σ_b S_b σ(b))``.

    Attributes
    ----------
    even : dict
        Class key ``(ρ, β)`` (tuples of Fractions, canonical scale/sign)
        to its nonzero column E_K (tuple of Fractions).
    linear : ndarray of Fraction, (d, d)
    constant : ndarray of Fraction, (d,)
    symbolic : dict
        β ≥ 0 to a nonzero column: constant units σ(β)·S_β whose value is
        irrational (GELU at β ≠ 0, softplus), kept symbolic to stay exact.
    free : list
        Keys of classes whose units cancel in even part (E_K = 0).
    """

    even: dict
    linear: np.ndarray
    constant: np.ndarray
    symbolic: dict
    free: list = field(default_factory=list)

    def same_as(self, other: Form) -> bool:
        """Exact equality: same classes, columns, linear part and constants."""
        return (
            self.even == other.even
            and self.symbolic == other.symbolic
            and bool(np.all(self.linear == other.linear))
            and bool(np.all(self.constant == other.constant))
        )


def merge_kind(act) -> str | None:
    """How σ merges units: ``homogeneous`` (ReLU-like), ``analytic`` or None.

    None for activations the argument does not cover: not odd-linear, or a
    leaky ReLU with α = 1 (σ(z) = z has no even part at all).
    """
    if act.kind != ODD_LINEAR:
        return None
    if act.name == "relu" or act.name.startswith("leaky_relu:"):
        return "homogeneous" if act.c != 2 else None  # c = 1 + α; α = 1 is linear
    return "analytic" if act.name in _ANALYTIC else None


def block_values(instance: Instance) -> dict:
    """Exact arrays (Fractions) of a block; ``skip`` is None when residual-free."""
    values = {key: exact_value(instance, key) for key in ("W_up", "b_up", "W_down", "b_down")}
    values["skip"] = None if instance.residual_free else exact_value(instance, "skip")
    return values


def canonical_form(values: dict, act) -> Form:
    """The canonical form of a block given by exact arrays (see :class:`Form`).

    Parameters
    ----------
    values : dict
        ``W_up`` (n, d), ``b_up`` (n,), ``W_down`` (d, n), ``b_down`` (d,)
        object arrays of Fractions, ``skip`` (d, d) or None.
    act : Activation
        Odd-linear with :func:`merge_kind` not None.
    """
    kind = merge_kind(act)
    up, b_up, down = values["W_up"], values["b_up"], values["W_down"]
    d, n = down.shape
    c = act.c
    linear = _zeros((d, d)) if values["skip"] is None else values["skip"].copy()
    constant = values["b_down"].copy()
    even: dict = {}
    symbolic: dict = {}
    for i in range(n):
        w = down[:, i]
        if not any(w):
            continue
        row, bias = tuple(up[i]), b_up[i]
        if not any(row):
            constant = constant + _constant_unit(act, kind, bias, w, symbolic)
            continue
        scale = _scale(kind, row)
        key = (tuple(v / scale for v in row), bias / scale)
        weight = abs(scale) * w
        _add(even, key, weight)
        if scale < 0:
            # σ(−h) = σ(h) − c·h: the unit is weight·σ(h) minus a linear term.
            linear = linear - c * np.outer(weight, np.array(key[0], dtype=object))
            constant = constant - c * key[1] * weight
    free = [key for key, column in even.items() if not any(column)]
    even = {key: tuple(column) for key, column in even.items() if any(column)}
    symbolic = {key: tuple(column) for key, column in symbolic.items() if any(column)}
    return Form(even, linear, constant, symbolic, free)


def _zeros(shape) -> np.ndarray:
    out = np.empty(shape, dtype=object)
    out.fill(Fraction(0))
    return out


def _add(table: dict, key, column) -> None:
    table[key] = table[key] + column if key in table else np.array(column, dtype=object)


def _scale(kind: str, row) -> Fraction:
    """ReLU-like: the first nonzero entry (any scale merges); analytic: its sign."""
    first = next(v for v in row if v != 0)
    return first if kind == "homogeneous" else Fraction(1 if first > 0 else -1)


def _constant_unit(act, kind, bias, w, symbolic) -> np.ndarray:
    """A zero-row unit w·σ(b): its exact constant, or a symbolic σ(|b|) term."""
    if kind == "homogeneous":
        return act.exact_relu_like(bias) * w
    if bias == 0 and act.name in _ZERO_AT_ZERO:
        return 0 * w
    # σ(b) = σ(−b) + c·b keeps every symbolic term at a nonnegative argument.
    _add(symbolic, abs(bias), w)
    return act.c * bias * w if bias < 0 else 0 * w


# ====================================================== linear algebra
def _mat(array) -> flint.fmpq_mat:
    array = np.asarray(array, dtype=object)
    rows, cols = array.shape
    return flint.fmpq_mat(rows, cols, [as_fmpq(Fraction(v)) for v in array.ravel()])


def _rank(matrix: flint.fmpq_mat) -> int:
    if matrix.nrows() == 0 or matrix.ncols() == 0:
        return 0
    return matrix.rank()


def _complement(directions: list) -> flint.fmpq_mat:
    """A basis of span(directions)^⊥ as the columns of a d × (d − u) matrix."""
    if not directions:
        raise ValueError("empty direction list: the complement is all of R^d")
    d = len(directions[0])
    rows = []
    for direction in directions:
        den = math.lcm(*[Fraction(v).denominator for v in direction])
        rows.append([int(v * den) for v in direction])
    basis, dim = flint.fmpz_mat(rows).nullspace()
    columns = [[basis[r, j] for j in range(dim)] for r in range(d)]
    return flint.fmpq_mat(d, dim, [flint.fmpq(int(v)) for row in columns for v in row])


# ====================================================== the decision
@dataclass
class Classes:
    """The classes of f that need a unit, and what the decision needs."""

    keys: list
    columns: list  # E_K as object arrays
    linear: np.ndarray
    n: int
    d: int
    c: Fraction
    reserve: int = 0

    @property
    def m(self) -> int:
        """Number of classes that need a unit."""
        return len(self.keys)

    @property
    def spare(self) -> int:
        """Units not needed by any class (minus those reserved for exact constants)."""
        return self.n - self.m - self.reserve

    def direction(self, k: int) -> tuple:
        """ρ_K of class k."""
        return self.keys[k][0]

    def term(self, k: int) -> flint.fmpq_mat:
        """c·E_K·ρ_Kᵀ (d × d), computed once per class."""
        cache = self.__dict__.setdefault("_terms", {})
        if k not in cache:
            cache[k] = _mat(self.c * np.outer(self.columns[k], np.array(self.direction(k), dtype=object)))
        return cache[k]


@dataclass
class Plan:
    """A choice that absorbs.

    Attributes
    ----------
    upgraded : list of int
        Classes given two units (their column becomes free).
    flipped : list of int
        Classes whose single unit sits on −h_K (adds −c·E_K·ρ_Kᵀ).
    rank_budget : int
        Most rank-one pairs the spare units allow, ⌊(spare − |U|)/2⌋.
    """

    upgraded: list
    flipped: list
    rank_budget: int


@dataclass
class _Search:
    """Time, stop request and counters shared by the cases of one decision."""

    deadline: float | None
    stop: threading.Event
    enumerated: int = 0
    cases: int = 0
    combinations: int = 0
    systems: int = 0
    undecided: list = field(default_factory=list)

    def expired(self) -> bool:
        """Stop requested or past the deadline."""
        return self.stop.is_set() or (self.deadline is not None and time.perf_counter() > self.deadline)

    def remaining(self):
        """Seconds left (None: no limit)."""
        return None if self.deadline is None else max(0.0, self.deadline - time.perf_counter())


def classes_of(instance: Instance) -> tuple[Form, Classes]:
    """Canonical form of f and its classes that need a unit."""
    form = canonical_form(block_values(instance), instance.act)
    keys = sorted(form.even)
    columns = [np.array(form.even[key], dtype=object) for key in keys]
    return form, Classes(keys, columns, form.linear, instance.n, instance.d, instance.act.c)


def _upgrade_sets(classes: Classes, search: _Search):
    """Independent upgrade sets U, one per subspace V, by size (complete)."""
    yield []
    top = min(classes.spare, classes.d)
    seen = set()
    for size in range(1, top + 1):
        for combo in itertools.combinations(range(classes.m), size):
            search.combinations += 1
            if search.combinations > MAX_CASES or search.expired():
                search.undecided.append(f"more than {MAX_CASES} upgrade sets or out of time")
                return
            rows = _mat([classes.direction(k) for k in combo])
            if _rank(rows) < size:
                continue  # dependent: a smaller U spans the same V for fewer units
            span = tuple(rows.rref()[0].entries())
            if span in seen:
                continue
            seen.add(span)
            yield list(combo)


def _decide_case(classes: Classes, upgraded: list, search: _Search):
    """Plan, False (no z works for this U) or None (undecided)."""
    budget = (classes.spare - len(upgraded)) // 2
    width = classes.d - len(upgraded)
    if width <= budget:
        return Plan(upgraded, [], budget)  # any signs: rank ≤ width ≤ budget
    Q = _complement([classes.direction(k) for k in upgraded]) if upgraded else None
    base = _mat(classes.linear)
    base = base * Q if Q is not None else base
    active, terms = [], []
    for k in range(classes.m):
        if k in upgraded:
            continue
        term = classes.term(k) * Q if Q is not None else classes.term(k)
        if not term.entries() or all(v == 0 for v in term.entries()):
            continue  # ρ_K ∈ V: its sign cannot matter
        active.append(k)
        terms.append(term)
    if budget == 0:
        found = _zero_system(base, terms, search)
    else:
        found = _low_rank(base, terms, budget, search)
    if found is None or found is False:
        return found
    return Plan(upgraded, [active[i] for i in found], budget)


def _low_rank(base, terms, budget, search: _Search):
    """Signs z with rank(base + Σ z_i terms_i) ≤ budget, by Gray code; None if too many."""
    if (1 << len(terms)) + search.enumerated > MAX_ENUMERATION:
        search.undecided.append(f"rank ≤ {budget} case with {len(terms)} signs exceeds the enumeration budget")
        return None
    current, z = base, [0] * len(terms)
    if _rank(current) <= budget:
        return []
    for step in range(1, 1 << len(terms)):
        search.enumerated += 1
        if step % 4096 == 0 and search.expired():
            search.undecided.append("out of time in a rank ≤ q enumeration")
            return None
        bit = (step & -step).bit_length() - 1
        z[bit] ^= 1
        current = current + terms[bit] if z[bit] else current - terms[bit]
        if _rank(current) <= budget:
            return [i for i, v in enumerate(z) if v]
    return False


def _zero_system(base, terms, search: _Search):
    """A 0/1 z with base + Σ z_i terms_i = 0 (exact), False if none, None if undecided."""
    search.systems += 1
    rows_M, rows_t = [], []
    entries_base = [as_fraction(v) for v in base.entries()]
    entries_terms = [[as_fraction(v) for v in term.entries()] for term in terms]
    for r, target in enumerate(entries_base):
        row = [entries[r] for entries in entries_terms]
        if not any(row):
            if target != 0:
                return False  # 0 = −target ≠ 0 for every z
            continue
        den = math.lcm(target.denominator, *[v.denominator for v in row])
        rows_M.append([int(v * den) for v in row])
        rows_t.append(int(-target * den))
    if not terms:
        return [] if not rows_M else False
    if not rows_M:
        return []
    M = np.array(rows_M, dtype=object)
    t = np.array(rows_t, dtype=object)
    return _solve_01(M, t, search)


def _solve_01(M: np.ndarray, t: np.ndarray, search: _Search):
    """One 0/1 solution of M z = t (exact), False when none exists, None if undecided."""
    from indexset.result import FEASIBLE, INFEASIBLE
    from indexset.search.decide import decide_system
    from indexset.search.system import System

    result = decide_system(System(M, t, None, list(range(M.shape[0]))), time_limit=search.remaining(), stop=search.stop)
    if result.status == FEASIBLE:
        return list(result.index_set)
    if result.status == INFEASIBLE:
        return False
    search.undecided.append(f"a 0/1 subsystem with {M.shape[1]} unknowns was not decided ({result.reason})")
    return None


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
    units += [(_zero_row(d), Fraction(0), _zeros((d,)))] * (classes.n - len(units))
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
        "b_down": _zeros((d,)),
        "skip": None,
    }


def _zero_row(d: int) -> tuple:
    return tuple([Fraction(0)] * d)


def _neg(row) -> tuple:
    return tuple(-v for v in row)


def _residual_before_upgrades(classes: Classes, plan: Plan) -> flint.fmpq_mat:
    """L + c·Σ_{flipped} E_K ρ_Kᵀ: what upgrades and pairs must produce."""
    residual = _mat(classes.linear)
    for k in plan.flipped:
        residual = residual + classes.term(k)
    return residual


def _upgrade_columns(residual: flint.fmpq_mat, upgraded: list, classes: Classes):
    """Columns N_K of the upgraded classes and the leftover R·(I − Π_V)."""
    if not upgraded:
        return {}, residual
    P = _mat([classes.direction(k) for k in upgraded])  # u × d, independent rows
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
def decide_degenerate(instance: Instance, tol=None, time_limit=None, stop=None) -> Result | None:
    """Decide absorbability exactly on (possibly) degenerate weights (MATH.md §7).

    Parameters
    ----------
    instance : Instance
        A skip-connected block. Biases are handled: classes are affine
        hyperplanes, and constants are free through c_down.
    tol : optional
        The decision is exact; with a tolerance it does not apply (None).
    time_limit : float, optional
        Seconds; past it the answer is ``unknown``.
    stop : threading.Event, optional

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
    start = time.perf_counter()
    search = _Search(None if time_limit is None else start + time_limit, stop or threading.Event())
    form, classes = classes_of(instance)
    stages = {"path": "degenerate (MATH.md §7)", "classes": classes.m, "spare": classes.spare,
              "free_classes": len(form.free), "merge": merge_kind(instance.act)}
    plan = _plan_with_exact_constants(form, classes, search)
    stages.update(upgrade_sets=search.cases, enumerated=search.enumerated, systems=search.systems)
    elapsed = time.perf_counter() - start
    if isinstance(plan, Plan):
        return _positive(instance, form, classes, plan, stages, elapsed)
    if plan is False and not search.undecided:
        return _negative(instance, classes, stages, elapsed)
    reason = f"{EXTENSION_NOTE}: the degenerate-weights decision did not finish: " + "; ".join(dict.fromkeys(search.undecided))
    return Result(UNKNOWN, reason, stages=stages, engine="degenerate", extension=True, time_s=elapsed)


def _plan_with_exact_constants(form: Form, classes: Classes, search: _Search):
    """Prefer a plan that leaves a unit for every irrational constant σ(b)."""
    reserve = len(form.symbolic)
    if 0 < reserve <= classes.spare:
        classes.reserve = reserve
        plan = _find_plan(classes, search)
        classes.reserve = 0
        if isinstance(plan, Plan):
            return plan
        search.undecided.clear()  # the reserve was a preference, not part of the question
    return _find_plan(classes, search)


def _find_plan(classes: Classes, search: _Search):
    """A Plan, False when every case fails, None when some case is undecided."""
    for upgraded in _upgrade_sets(classes, search):
        search.cases += 1
        outcome = _decide_case(classes, upgraded, search)
        if isinstance(outcome, Plan):
            return outcome
        if search.expired():
            search.undecided.append("time limit")
            return None
    return None if search.undecided else False


def argument(instance: Instance) -> str:
    """Why each class of f with E_K ≠ 0 needs a unit of g (the pinning step)."""
    if merge_kind(instance.act) == "homogeneous":
        return ("σ is positively homogeneous: a residual-free block equal to f has the same gradient "
                "jumps across every hyperplane, so each class of f with E_K ≠ 0 holds ≥ 1 of its units")
    return ("σ is analytic with a non-affine even part: the even parts e(h(x)) of distinct affine "
            "maps h (up to sign) are independent (the paper's even-part argument, MATH.md §3), "
            "so each class of f with E_K ≠ 0 holds ≥ 1 unit of g")


def _positive(instance, form, classes, plan, stages, elapsed) -> Result:
    from indexset.exact.witness import block_instance, check_forward, encode_block

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


def _negative(instance, classes, stages, elapsed) -> Result:
    reason = (
        f"{EXTENSION_NOTE}: {argument(instance)}; f has {classes.m} such class(es) in width n = {classes.n}, "
        f"so {classes.spare} spare unit(s). A class with one unit adds 0 or −c·E_K·ρ_Kᵀ to the linear part, "
        "an upgraded class (two units) any column times ρ_Kᵀ, two units on a new line any rank-one term. "
        f"For every independent upgrade set U (|U| ≤ {min(classes.spare, classes.d)}) and every choice of signs, "
        "the linear mismatch restricted to span(ρ_U)^⊥ has rank > ⌊(spare − |U|)/2⌋ "
        f"(exhaustive: {stages['upgrade_sets']} upgrade set(s), {stages['systems']} exact 0/1 system(s), "
        f"{stages['enumerated']} sign vector(s)); no residual-free block of width n equals f"
    )
    certificate = {"kind": "degenerate", "argument": "MATH.md §7", "classes": classes.m, "spare": classes.spare,
                   "upgrade_sets": stages["upgrade_sets"]}
    return Result(NOT_ABSORBABLE, reason, stages=stages, engine="degenerate", certificate=certificate,
                  extension=True, complete=True, time_s=elapsed)


def report(instance: Instance) -> dict:
    """Classes, free classes and spare units of a block (for ``info``)."""
    if merge_kind(instance.act) is None or instance.residual_free:
        return {"applies": False}
    form, classes = classes_of(instance)
    return {"applies": True, "merge": merge_kind(instance.act), "classes_needing_a_unit": classes.m,
            "free_classes": len(form.free), "spare_units": classes.spare,
            "irrational_constants": len(form.symbolic)}
