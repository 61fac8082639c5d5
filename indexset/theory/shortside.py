"""A rank-one question as one 0/1 system per short primitive vector (MATH.md §7.7, Lemma 7.7e).

The question: is rank(B(z)) ≤ 1 for some z ∈ {0,1}ᵐ, with
B(z) = B0 + Σ_k z_k e_k r_kᵀ (d × w, integer)? Each entry B_ij(z) ranges
exactly over [lo_ij, hi_ij], so |B_ij(z)| ≤ N_ij = max(hi_ij, −lo_ij). If
B(z) = a·b'ᵀ ≠ 0 with a and b = b'/λ primitive, then
‖a‖∞·‖b‖∞ ≤ N_ij at the first indices i, j of their largest entries. So for
thresholds t_i, either ‖a‖∞ ≤ t_{ι(a)}, or ‖b‖∞ ≤ u_{ι(b)} with
u_j = max_i ⌊N_ij/(t_i + 1)⌋; every short a gives the 0/1 system
X_a·B(z) = 0 (columns in span a), every short b the system B(z)·X_bᵀ = 0
(rows in span b), and B(z) = 0 is one more. The question has a solution
iff one of these systems does.

All the systems share one map, z ↦ vec(Σ_k z_k e_k r_kᵀ). When it sends
Z^m onto Z^{d·w} (:class:`SharedKernel`, MATH.md Lemma 7.7f), each system's
integer kernel and a solution follow from that map's kernel and a right
inverse, so the lattice engine starts from them; otherwise each system is
reduced on its own by :func:`~indexset.search.decide.decide_system`.
"""

from __future__ import annotations

import itertools
import math
import time
from dataclasses import dataclass

import flint
import numpy as np

from indexset.budget import Budget
from indexset.result import FEASIBLE, INFEASIBLE
from indexset.search.decide import decide_system
from indexset.search.lattice import search as lattice_search
from indexset.search.reduce import Reduction, known_kernel
from indexset.search.system import plain_system
from indexset.theory.degenerate_tuning import DegenerateTuning

__all__ = ["SharedKernel", "ShortAnswer", "ShortPlan", "annihilator", "decide_directions", "decide_short_side", "direction_system", "directions",
           "entry_bounds", "primitive_with_max", "rank_at_most_one", "shared_kernel", "short_plan", "short_vectors"]

DESCENT_LIMIT = 1000
"""Largest uniform threshold from which the thresholds are tuned one index at a time (above it the count is far past any budget)."""


@dataclass(frozen=True)
class ShortPlan:
    """The boxes of Lemma 7.7e for one question.

    Attributes
    ----------
    count : int
        Systems to decide: one per vector of the two boxes, and B(z) = 0.
    a_limits : tuple of int
        The largest ‖a‖∞ for a whose largest entry is first at index i.
    b_limits : tuple of int
        The same for b, by the index j of its largest entry.
    """

    count: int
    a_limits: tuple
    b_limits: tuple


@dataclass(frozen=True)
class ShortAnswer:
    """What Lemma 7.7e's systems answered.

    Attributes
    ----------
    status : str
        ``found``, ``refuted`` or ``open``.
    chosen : list of int or None
        Positions of the terms with z_k = 1 (``found``; rank ≤ 1 checked exactly).
    how : str
        ``short`` when decided; ``time`` when the predicted time exceeds the
        time left, ``undecided`` when a system was left undecided, or the
        budget's halt reason (``open``).
    done : int
        Systems decided.
    seconds : float or None
        Predicted seconds for every system, from the first ones decided.
    """

    status: str
    chosen: list | None
    how: str
    done: int
    seconds: float | None = None


def entry_bounds(question) -> list[list[int]]:
    """N_ij = max over z ∈ {0,1}ᵐ of |B_ij(z)|, exactly: max(hi_ij, −lo_ij)."""
    bounds = []
    for i in range(question.d):
        row = []
        for j in range(question.w):
            products = [e[i] * r[j] for e, r in zip(question.columns, question.rows)]
            high = question.base[i][j] + sum(v for v in products if v > 0)
            low = question.base[i][j] + sum(v for v in products if v < 0)
            row.append(max(high, -low))
        bounds.append(row)
    return bounds


def _mobius(n: int) -> int:
    sign, rest, p = 1, n, 2
    while p * p <= rest:
        if rest % p == 0:
            rest //= p
            if rest % p == 0:
                return 0
            sign = -sign
        p += 1
    return -sign if rest > 1 else sign


def primitive_with_max(s: int, i: int, k: int) -> int:
    """Primitive vectors of Zᵏ up to sign whose largest |entry| is s, reached first at index i (0-based).

    >>> primitive_with_max(1, 0, 2), primitive_with_max(1, 1, 2)  # (1, −1), (1, 0), (1, 1); and (0, 1)
    (3, 1)
    >>> primitive_with_max(2, 0, 2)  # (2, −1), (2, 1); (2, ±2) and (2, 0) are not primitive
    2
    """

    def every(top: int) -> int:  # all vectors with largest |entry| top, reached first at index i
        return (2 * top - 1) ** i * 2 * (2 * top + 1) ** (k - 1 - i)

    return sum(_mobius(g) * every(s // g) for g in range(1, s + 1) if s % g == 0) // 2


def _count(bounds: list, limits: list) -> tuple[int, list]:
    """Systems for row thresholds ``limits`` on ``bounds``, and the column thresholds they imply."""
    d, w = len(bounds), len(bounds[0])
    columns = [max(bounds[i][j] // (limits[i] + 1) for i in range(d)) for j in range(w)]
    count = 1 + sum(primitive_with_max(s, i, d) for i in range(d) for s in range(1, limits[i] + 1))
    return count + sum(primitive_with_max(s, j, w) for j in range(w) for s in range(1, columns[j] + 1)), columns


def _descend(bounds: list) -> tuple[int, list, list]:
    """Row thresholds that make the count least, by coordinate descent from ⌊√max N⌋: (count, rows, columns)."""
    limits = [math.isqrt(max(max(row) for row in bounds))] * len(bounds)
    best, columns = _count(bounds, limits)
    improved = limits[0] <= DESCENT_LIMIT
    while improved:
        improved = False
        for i in range(len(limits)):
            for step in (-1, 1):
                trial = limits[:i] + [max(0, limits[i] + step)] + limits[i + 1 :]
                count, trial_columns = _count(bounds, trial)
                if count < best:
                    best, limits, columns, improved = count, trial, trial_columns, True
    return best, limits, columns


def short_plan(question) -> ShortPlan:
    """Lemma 7.7e's boxes with the fewest systems: thresholds on a, or (the lemma on Bᵀ) on b.

    >>> from indexset.theory.lowrank import RankQuestion
    >>> question = RankQuestion([[1, 0], [0, 1]], [(1, 0), (0, 1)], [(0, 1), (1, 0)], q=1)
    >>> plan = short_plan(question)  # every |B_ij(z)| ≤ 1
    >>> plan.count == 1 + len(list(short_vectors(plan.a_limits))) + len(list(short_vectors(plan.b_limits)))
    True
    >>> list(short_vectors(plan.a_limits))
    [(0, 1), (1, -1), (1, 0), (1, 1)]
    """
    bounds = entry_bounds(question)
    count, a_limits, b_limits = _descend(bounds)
    transposed = [list(column) for column in zip(*bounds)]
    count_t, b_limits_t, a_limits_t = _descend(transposed)
    if count_t < count:
        count, a_limits, b_limits = count_t, a_limits_t, b_limits_t
    return ShortPlan(count, tuple(a_limits), tuple(b_limits))


def short_vectors(limits: tuple):
    """Primitive integer vectors v up to sign (first nonzero entry positive) with ‖v‖∞ ≤ limits[ι(v)], smallest ‖v‖∞ first."""
    k = len(limits)
    for top in range(1, max(limits, default=0) + 1):
        for v in itertools.product(range(-top, top + 1), repeat=k):
            sizes = [abs(x) for x in v]
            first = sizes.index(top) if top in sizes else -1
            if first < 0 or top > limits[first] or next(x for x in v if x) < 0 or math.gcd(*v) != 1:
                continue
            yield v


def annihilator(v) -> list[list[int]]:
    """Integer rows spanning v^⊥ over Q: v_p·e_j − v_j·e_p for j ≠ p, p the index of v's largest |entry|."""
    p = max(range(len(v)), key=lambda i: abs(v[i]))
    rows = []
    for j in range(len(v)):
        if j != p:
            row = [0] * len(v)
            row[j], row[p] = v[p], -v[j]
            rows.append(row)
    return rows


def direction_system(question, vector=None, side: str = "column"):
    """The 0/1 system of one direction of Lemma 7.7e.

    Parameters
    ----------
    question
        The rank question (``base``, ``columns``, ``rows``).
    vector : sequence of int, optional
        A primitive direction; None: the system B(z) = 0.
    side : str
        ``column``: every column of B(z) in span(vector), X_v·B(z) = 0;
        ``row``: every row in span(vector), B(z)·X_vᵀ = 0.

    Returns
    -------
    System
        One equation per entry of the product, over the 0/1 signs.
    """
    if side not in ("column", "row"):
        raise ValueError(f"side must be 'column' or 'row', got {side!r}")
    d, w = len(question.base), len(question.base[0])
    left = np.eye(d, dtype=object) if vector is None or side == "row" else np.array(annihilator(vector), dtype=object)
    right = np.eye(w, dtype=object) if vector is None or side == "column" else np.array(annihilator(vector), dtype=object)
    terms = [(left @ np.array(e, dtype=object))[:, None] * (right @ np.array(r, dtype=object))[None, :] for e, r in zip(question.columns, question.rows)]
    M = np.array([term.reshape(-1) for term in terms], dtype=object).T.reshape(-1, len(terms))
    return plain_system(M, -(left @ np.array(question.base, dtype=object) @ right.T).reshape(-1))


def directions(plan: ShortPlan):
    """Every direction of the plan, lazily: None (B(z) = 0), then the short columns', then the short rows'."""
    yield None, "column"
    for a in short_vectors(plan.a_limits):
        yield a, "column"
    for b in short_vectors(plan.b_limits):
        yield b, "row"


@dataclass(frozen=True)
class SharedKernel:
    """The map Φ: z ↦ vec(Σ_k z_k e_k r_kᵀ) (row-major), when it sends Z^m onto Z^{d·w}.

    Attributes
    ----------
    right_inverse : ndarray of object, shape (m, d·w)
        G with Φ·G = I, exactly.
    kernel : list of list of int
        An LLL-reduced basis of the integer kernel of Φ (m − d·w vectors).
    solution : list of int
        −G·vec(B0), which makes B(z) = 0 and so solves every system.
    """

    right_inverse: np.ndarray
    kernel: list
    solution: list

    def reduction(self, question, vector, side: str) -> Reduction:
        """The reduction of :func:`direction_system` (``vector``, ``side``), from Φ's kernel and right inverse.

        Its integer kernel is {z : Φz = vec(a·βᵀ), β ∈ Z^w} for side
        ``column`` (a primitive, so integer columns in span a are integer
        multiples of a); with Φ onto, that is Φ's kernel plus
        G·vec(a·e_jᵀ) for each j. Rows likewise. :attr:`solution` solves
        every system.
        """
        d, w = len(question.base), len(question.base[0])
        G = self.right_inverse
        extra = []
        if vector is not None and side == "column":
            extra = [sum(vector[i] * G[:, i * w + j] for i in range(d)) for j in range(w)]
        elif vector is not None:
            extra = [sum(vector[j] * G[:, i * w + j] for j in range(w)) for i in range(d)]
        return known_kernel(self.kernel + [list(column) for column in extra], self.solution)


def shared_kernel(question) -> SharedKernel | None:
    """Φ's kernel and a right inverse, when Φ sends Z^m onto Z^{d·w}; else None.

    LLL of Φᵀ with its unimodular transform U gives U·Φᵀ = L: the rows of U
    whose row of L is zero span Φ's kernel, and the other rows L₁ of L
    span Φ's image. The image is all of Z^{d·w} exactly when L₁ is square
    with determinant ±1; then G = U₁ᵀ·L₁ᵀ⁻¹ (U₁ the matching rows of U) is
    integer and Φ·G = L₁ᵀ·L₁ᵀ⁻¹ = I, checked exactly.
    """
    d, w, m = len(question.base), len(question.base[0]), len(question.columns)
    if m <= d * w:
        return None
    phi_t = flint.fmpz_mat([[int(e[i] * r[j]) for i in range(d) for j in range(w)] for e, r in zip(question.columns, question.rows)])
    reduced, transform = phi_t.lll(transform=True)
    zero = [k for k in range(m) if all(reduced[k, c] == 0 for c in range(d * w))]
    image = [k for k in range(m) if k not in zero]
    if len(image) != d * w:
        return None
    L1 = flint.fmpz_mat([[reduced[k, c] for c in range(d * w)] for k in image])
    if abs(L1.det()) != 1:
        return None
    U1 = flint.fmpz_mat([[transform[k, c] for c in range(m)] for k in image])
    inverse = flint.fmpq_mat(L1.transpose()).inv()  # integer, since det L₁ = ±1
    G = U1.transpose() * flint.fmpz_mat(d * w, d * w, [int(v.p) for v in inverse.entries()])
    if phi_t.transpose() * G != flint.fmpz_mat(d * w, d * w, [int(r == c) for r in range(d * w) for c in range(d * w)]):
        raise ArithmeticError("bug: the right inverse of Φ fails its exact check")  # never expected
    kernel = flint.fmpz_mat([[transform[k, c] for c in range(m)] for k in zero]).lll()
    K = np.array([[int(kernel[r, c]) for c in range(m)] for r in range(kernel.nrows())], dtype=object)  # kernel vectors as rows
    right_inverse = np.array([[int(G[r, c]) for c in range(d * w)] for r in range(m)], dtype=object)
    # Shorten G's columns by kernel vectors (Babai rounding; any integer shift keeps Φ·G = I), so that the
    # few vectors each system adds to the kernel are short and its LLL is quick.
    shift = np.rint(np.linalg.lstsq(K.T.astype(np.float64), right_inverse.astype(np.float64), rcond=None)[0]).astype(np.int64)
    right_inverse = right_inverse - K.T.dot(shift.astype(object))
    base = np.array([v for row in question.base for v in row], dtype=object)
    return SharedKernel(right_inverse, K.tolist(), [-int(v) for v in right_inverse.dot(base)])


def _decide(question, shared: SharedKernel | None, direction: tuple, tuning: DegenerateTuning, budget: Budget):
    """One direction's system, decided: by the lattice engine from the shared kernel when it exists, else (or when
    the engine leaves it undecided) by decide_system."""
    vector, side = direction
    system = direction_system(question, vector, side)
    if shared is not None:
        result = lattice_search(system, shared.reduction(question, vector, side), budget=budget, seed=tuning.seed, tuning=tuning.short_lattice)
        if result.status in (FEASIBLE, INFEASIBLE):
            return result
    return decide_system(system, budget=budget, seed=tuning.seed)


def rank_at_most_one(question, chosen: list) -> bool:
    """rank B(z) ≤ 1 for z the indicator of ``chosen``, exactly."""
    total = flint.fmpz_mat([[int(v) for v in row] for row in question.base])
    for k in chosen:
        e, r = question.columns[k], question.rows[k]
        total += flint.fmpz_mat([[int(x * y) for y in r] for x in e])
    return total.rank() <= 1


def decide_directions(question, shared: SharedKernel | None, batch: list, tuning: DegenerateTuning, budget: Budget) -> tuple:
    """Decide the systems of the directions in ``batch`` in turn; stop at the first solution or the first left undecided.

    Returns ``(status, chosen, done, how)``: ``found`` with the chosen
    terms (rank ≤ 1 checked exactly), ``open`` with the budget's halt
    reason or ``undecided``, or ``refuted`` (every system infeasible);
    ``done`` counts the systems decided.
    """
    for done, direction in enumerate(batch, 1):
        if budget.halt_reason() is not None:
            return "open", None, done - 1, budget.halt_reason()
        result = _decide(question, shared, direction, tuning, budget)
        if result.status == FEASIBLE:
            chosen = list(result.index_set)
            if not rank_at_most_one(question, chosen):
                raise ArithmeticError("bug: a solution of Lemma 7.7e's system has rank above 1")  # never expected
            return "found", chosen, done, "short"
        if result.status != INFEASIBLE:
            return "open", None, done - 1, budget.halt_reason() or "undecided"
    return "refuted", None, len(batch), "short"


def decide_short_side(question, plan: ShortPlan, tuning: DegenerateTuning, budget: Budget, part: tuple = (0, 1), start: int = 0,
                      shared: SharedKernel | None = None) -> ShortAnswer:
    """Decide the systems of ``plan`` in this process (MATH.md Lemma 7.7e); stop at the first solution.

    After ``tuning.short_probe`` systems the whole is predicted from their
    mean time; a prediction past the time allowed (the time left under a
    time limit, else ``tuning.max_short_seconds``) stops the work
    (``open``, how ``time``). :func:`~indexset.theory.shortrun.run_short_side`
    runs them on every core.

    Parameters
    ----------
    question
        The rank question (q = 1).
    plan : ShortPlan
        From :func:`short_plan`.
    tuning : DegenerateTuning
    budget : Budget
    part : (int, int)
        (k, K): decide only the systems whose position in the plan is k mod K,
        so that K processes can share the work; ``refuted`` then speaks for
        that part only. (0, 1): every system.
    start : int
        Skip the systems before this position (decided already); ``refuted``
        then speaks for the others only.
    shared : SharedKernel, optional
        :func:`shared_kernel` of the question, when the caller has it.
    """
    index, parts = part
    shared = shared_kernel(question) if shared is None else shared
    began = time.perf_counter()
    predicted, done = None, 0
    for position, direction in enumerate(directions(plan)):
        if position < start or position % parts != index:
            continue
        if done == tuning.short_probe and done:
            spent = time.perf_counter() - began
            predicted = spent / done * (plan.count - start) / parts
            remaining = budget.remaining()
            if predicted - spent > (tuning.max_short_seconds if remaining is None else remaining):
                return ShortAnswer("open", None, "time", done, predicted)
        status, chosen, decided, how = decide_directions(question, shared, [direction], tuning, budget)
        done += decided
        if status != "refuted":
            return ShortAnswer(status, chosen, how, done, predicted)
    return ShortAnswer("refuted", None, "short", done, predicted)
