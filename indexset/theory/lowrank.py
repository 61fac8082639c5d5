"""Rank ≤ q of a signed sum of rank-one terms, exactly (MATH.md §7.4, the rank sub-cases).

The question: given an integer matrix B0 (d × w) and integer rank-one
terms T_k = e_k r_kᵀ, is there a 0/1 vector z with

    rank(B0 + Σ_k z_k T_k) ≤ q ?

Four exact tools, each proven in MATH.md §7.4, tried in this order:

- *Grouping.* Terms equal up to sign act only through an integer
  coefficient: a group of p copies of T and m copies of −T contributes
  a·T for every a in [−m, p], and nothing else.
- *Rank bound.* Every sum lies in B0 + {U X Rᵀ}, U and R bases of the
  spans of the e_k and the r_k, so
  ``rank ≥ rank[B0, U] + rank[B0; Rᵀ] − rank[[B0, U], [Rᵀ, 0]]``;
  when that exceeds q, no sign vector works.
- *Screening.* For integer X ((q+1) × d) and Y (w × (q+1)), rank(B) ≤ q
  forces det(X B Y) ≡ 0 mod p; every coefficient vector is screened so
  (vectorised, in int64 mod p < 2³¹), and the few that pass are checked
  exactly with python-flint. For few coefficient vectors.
- *Meet in the middle mod a small prime.* rank ≤ q over Q forces the
  columns of B mod p into one of finitely many q-dim subspaces C; for
  each, X_{C^⊥}·B ≡ 0 is a linear system mod p, solved by matching the
  sums of one half of the groups against the other. Every match is checked
  exactly. For more coefficient vectors, up to the tuning's budget.

Past them, a q = 1 question goes to Lemma 7.7e (MATH.md §7.7,
:mod:`indexset.theory.shortside`): one 0/1 system per short column or row
direction, when their number and predicted time fit.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass

import flint
import numpy as np

from indexset.budget import INTERRUPTED, TIME_LIMIT, Budget
from indexset.theory.degenerate_tuning import DegenerateTuning
from indexset.theory.shortrun import Workers, run_short_side
from indexset.theory.shortside import short_plan

PRIME = 2_147_483_647
"""The modulus of the filter (2³¹ − 1: products of two residues fit int64)."""


@dataclass(frozen=True)
class Group:
    """Terms equal up to sign: coefficient a·term for a in [low, high].

    Attributes
    ----------
    term : tuple
        The d × w integer matrix (rows of Python ints) of the group.
    plus, minus : tuple of int
        Positions (in the caller's list) of the terms equal to ``term``
        and of those equal to its negative.
    """

    term: tuple
    plus: tuple
    minus: tuple

    @property
    def low(self) -> int:
        """Smallest coefficient."""
        return -len(self.minus)

    @property
    def high(self) -> int:
        """Largest coefficient."""
        return len(self.plus)

    def signs(self, coefficient: int) -> list:
        """Positions of the terms that take sign 1 to realise ``coefficient``."""
        return list(self.plus[:coefficient]) if coefficient >= 0 else list(self.minus[:-coefficient])


@dataclass(frozen=True)
class RankQuestion:
    """Is rank(B0 + Σ z_k e_k r_kᵀ) ≤ q for some z ∈ {0,1}?

    Attributes
    ----------
    base : list of list of int
        B0, d × w.
    columns : list of tuple of int
        e_k (d entries each).
    rows : list of tuple of int
        r_k (w entries each).
    q : int
        The rank allowed.
    """

    base: list
    columns: list
    rows: list
    q: int

    @property
    def d(self) -> int:
        """Rows of B0."""
        return len(self.base)

    @property
    def w(self) -> int:
        """Columns of B0."""
        return len(self.base[0]) if self.base else 0


@dataclass(frozen=True)
class RankAnswer:
    """The answer to a :class:`RankQuestion`.

    Attributes
    ----------
    status : str
        ``found``, ``refuted`` or ``open``.
    chosen : list of int or None
        Positions of the terms with z_k = 1 (``found``).
    how : str
        ``bound`` (the rank bound), ``enumeration`` (every coefficient
        vector screened), ``budget`` or the budget's halt reason (``open``).
    screened : int
        Coefficient vectors screened.
    work : dict or None
        For an answer left open past the budgets, the size of its work:
        ``terms`` and their ``groups``; ``coefficient_vectors``, more than the
        tuning's ``max_combinations``; ``half_rows``, the rows of the meet
        in the middle's larger half table; ``meet_entries``, the table
        entries of its cheapest prime over every subspace (None when the
        halves exceed ``meet_rows``); and ``limit``, what stopped it:
        ``meet_rows`` (the halves), ``max_meet`` (every prime's tables) or
        ``unsplit`` (every affordable prime left a subspace on which all
        terms vanish). For q = 1, ``short``: Lemma 7.7e's ``systems``, how
        many were decided (``done``), the predicted ``seconds`` for all of
        them (None before any prediction) and what stopped them
        (``limit``: ``max_short_systems``, ``time`` for a prediction past
        the time left, or ``undecided`` for a system no engine decided);
        None for q ≥ 2.
    """

    status: str
    chosen: list | None
    how: str
    screened: int = 0
    work: dict | None = None


def groups_of(question: RankQuestion) -> list[Group]:
    """The terms grouped by equality up to sign (zero terms dropped)."""
    table: dict = {}
    order = []
    for k, (e, r) in enumerate(zip(question.columns, question.rows)):
        term = tuple(tuple(a * b for b in r) for a in e)
        flat = [v for row in term for v in row]
        lead = next((v for v in flat if v != 0), 0)
        if lead == 0:
            continue
        key = term if lead > 0 else tuple(tuple(-v for v in row) for row in term)
        if key not in table:
            table[key] = ([], [])
            order.append(key)
        table[key][0 if lead > 0 else 1].append(k)
    return [Group(key, tuple(table[key][0]), tuple(table[key][1])) for key in order]


def combinations(groups: list[Group]) -> int:
    """Number of coefficient vectors of the groups."""
    return math.prod(group.high - group.low + 1 for group in groups)


def rank_bound(question: RankQuestion) -> int:
    """A lower bound on rank(B0 + Σ z_k e_k r_kᵀ) valid for every real z (MATH.md §7)."""
    d, w = question.d, question.w
    base = flint.fmpz_mat(d, w, [v for row in question.base for v in row]) if d and w else None
    if base is None:
        return 0
    U = _basis_columns(question.columns, d)
    R = _basis_columns(question.rows, w)
    left = _hstack(base, U)
    top = _vstack(base, R.transpose()) if R.ncols() else base
    bordered = _vstack(left, _hstack(R.transpose(), flint.fmpz_mat(R.ncols(), U.ncols()))) if R.ncols() else left
    return _rank(left) + _rank(top) - _rank(bordered)


def decide_rank(question: RankQuestion, tuning: DegenerateTuning, budget: Budget, workers: Workers | None = None) -> RankAnswer:
    """Decide a :class:`RankQuestion` exactly, or leave it open past the tuning's budgets.

    ``workers``: where Lemma 7.7e's systems may run and who hears of their
    progress (default: every core, no progress).
    """
    groups = groups_of(question)
    base = flint.fmpz_mat(question.d, question.w, [v for row in question.base for v in row])
    if _rank(base) <= question.q:
        return RankAnswer("found", [], "base")
    if rank_bound(question) > question.q:
        return RankAnswer("refuted", None, "bound")
    if combinations(groups) <= tuning.max_combinations:
        return _enumerate(question, groups, base, tuning, budget)
    plans = meet_plans(question, groups, tuning.meet_rows, tuning.check_weight)
    met = False
    for plan in plans:
        if plan.entries > tuning.max_meet:
            continue
        met = True
        answer = _meet(question, groups, base, plan, tuning, budget)
        if answer.status != "open" or answer.how != UNSPLIT:
            return answer
    limit = "unsplit" if met else "max_meet" if plans else "meet_rows"
    short = None
    if question.q == 1:
        plan = short_plan(question)
        if plan.count > tuning.max_short_systems:
            short = {"systems": plan.count, "done": 0, "seconds": None, "limit": "max_short_systems"}
        else:
            answer = run_short_side(question, plan, tuning, budget, workers)
            if answer.status != "open":
                return RankAnswer(answer.status, answer.chosen, answer.how)
            if answer.how in (TIME_LIMIT, INTERRUPTED):
                return RankAnswer("open", None, answer.how)
            short = {"systems": plan.count, "done": answer.done, "seconds": answer.seconds, "limit": answer.how}
    return RankAnswer("open", None, "budget", work=_work(question, groups, plans, limit, short))


def _work(question: RankQuestion, groups: list, plans: list, limit: str, short: dict | None) -> dict:
    """The size of an open question's work, and the budget or obstacle that stopped it (:attr:`RankAnswer.work`)."""
    return {"terms": len(question.columns), "groups": len(groups), "coefficient_vectors": combinations(groups),
            "half_rows": max(half_sizes(groups)), "meet_entries": min((plan.entries for plan in plans), default=None), "limit": limit,
            "short": short}


# ------------------------------------------------------------ enumeration
def _enumerate(question: RankQuestion, groups: list, base, tuning: DegenerateTuning, budget: Budget) -> RankAnswer:
    """Screen every coefficient vector mod p; check the survivors exactly."""
    rng, chunk = np.random.default_rng(tuning.seed), tuning.chunk
    k = question.q + 1
    screens = [_projection(question, groups, k, rng) for _ in range(tuning.screens)]
    inner, outer = _split(groups, chunk)
    inner_values = _value_table([groups[g] for g in inner])  # N × |inner| coefficients
    inner_sums = [_table_sums(screen, inner, inner_values) for screen in screens]
    screened = 0
    for outer_coefficients in itertools.product(*[range(groups[g].low, groups[g].high + 1) for g in outer]):
        if budget.expired():
            return RankAnswer("open", None, budget.halt_reason(), screened)
        alive = np.ones(len(inner_values), dtype=bool)
        for screen, sums in zip(screens, inner_sums):
            offset = _offset(screen, outer, outer_coefficients)
            alive &= det_mod(((sums + offset) % PRIME).reshape(-1, k, k)) == 0
        screened += len(inner_values)
        for index in np.flatnonzero(alive):
            coefficients = dict(zip(inner, (int(v) for v in inner_values[index])))
            coefficients.update(zip(outer, outer_coefficients))
            if _exact_rank(base, groups, coefficients) <= question.q:
                chosen = sorted(p for g, a in coefficients.items() for p in groups[g].signs(a))
                return RankAnswer("found", chosen, "enumeration", screened)
    return RankAnswer("refuted", None, "enumeration", screened)


def _projection(question: RankQuestion, groups: list, k: int, rng) -> dict:
    """X B0 Y and X T_g Y mod p (flattened k × k) for random X (k × d), Y (w × k)."""
    X = rng.integers(0, PRIME, size=(k, question.d), dtype=np.int64)
    Y = rng.integers(0, PRIME, size=(question.w, k), dtype=np.int64)

    def project(matrix) -> np.ndarray:
        M = np.array([[v % PRIME for v in row] for row in matrix], dtype=np.int64)
        return _matmul_mod(_matmul_mod(X, M), Y).ravel()

    return {"base": project(question.base), "terms": [project(group.term) for group in groups]}


def _split(groups: list, chunk: int) -> tuple[list, list]:
    """Group positions for the precomputed table (product ≤ chunk) and for the outer loop."""
    inner, size = [], 1
    order = sorted(range(len(groups)), key=lambda g: groups[g].high - groups[g].low)
    for g in order:
        span = groups[g].high - groups[g].low + 1
        if size * span > chunk:
            break
        inner.append(g)
        size *= span
    return inner, [g for g in order if g not in inner]


def _value_table(groups: list) -> np.ndarray:
    """Every coefficient vector of the groups, one per row."""
    ranges = [np.arange(group.low, group.high + 1, dtype=np.int64) for group in groups]
    if not ranges:
        return np.zeros((1, 0), dtype=np.int64)
    grids = np.meshgrid(*ranges, indexing="ij")
    return np.stack([grid.ravel() for grid in grids], axis=1)


def _table_sums(screen: dict, inner: list, values: np.ndarray) -> np.ndarray:
    """Σ a_g·(X T_g Y) mod p over the table's rows, plus X B0 Y."""
    total = np.tile(screen["base"], (len(values), 1))
    for column, g in enumerate(inner):
        coefficient = values[:, column] % PRIME
        total = (total + _mul_mod(coefficient[:, None], screen["terms"][g][None, :])) % PRIME
    return total


def _offset(screen: dict, outer: list, coefficients) -> np.ndarray:
    total = np.zeros_like(screen["base"])
    for g, a in zip(outer, coefficients):
        total = (total + _mul_mod(np.int64(a % PRIME), screen["terms"][g])) % PRIME
    return total


def _exact_rank(base, groups: list, coefficients: dict) -> int:
    total = base
    for g, a in coefficients.items():
        if a:
            term = groups[g].term
            total = total + a * flint.fmpz_mat(len(term), len(term[0]), [v for row in term for v in row])
    return _rank(total)


# ------------------------------------------------------------ meet in the middle mod p
MEET_PRIMES = (2, 3, 5, 7, 11, 13)
"""Primes the meet in the middle may work modulo (residues fit int8)."""

UNSPLIT = "every term vanishes mod p on one subspace"
"""Why a prime cannot split a question (the next prime is tried)."""


@dataclass(frozen=True)
class MeetPlan:
    """How a rank question is met in the middle: the prime, the side and the work.

    Attributes
    ----------
    p : int
        The prime.
    transpose : bool
        Work on Bᵀ (row spaces) instead of B (column spaces), the smaller side.
    subspaces : int
        (size − q)-dim subspaces of F_p^size, one modular system each.
    entries : int
        Table entries over every subspace (both halves).
    """

    p: int
    transpose: bool
    subspaces: int
    entries: int


def meet_plans(question: RankQuestion, groups: list, max_rows: int, check_weight: int) -> list[MeetPlan]:
    """The primes for :func:`_meet`, cheapest first (none when a half's table would exceed ``max_rows``)."""
    transpose = question.w < question.d
    size, other = (question.w, question.d) if transpose else (question.d, question.w)
    n1, n2 = half_sizes(groups)
    if max(n1, n2) > max_rows:
        return []
    equations = (size - question.q) * other
    plans = []
    for p in MEET_PRIMES:
        subspaces = _gaussian_binomial(size, question.q, p)
        matches = subspaces * n1 * n2 / p ** equations
        plans.append((subspaces * (n1 + n2) + matches * check_weight, MeetPlan(p, transpose, subspaces, subspaces * (n1 + n2))))
    return [plan for _, plan in sorted(plans, key=lambda item: item[0])]


def half_sizes(groups: list[Group]) -> tuple[int, int]:
    """Rows of the meet in the middle's two half tables: the coefficient vectors of each half of the groups."""
    first, second = _halves(list(range(len(groups))), groups)
    return combinations([groups[g] for g in first]), combinations([groups[g] for g in second])


def _meet(question: RankQuestion, groups: list, base, plan: MeetPlan, tuning: DegenerateTuning, budget: Budget) -> RankAnswer:
    """Every subspace W of dimension size − q over F_p: solve X_W·B(z) ≡ 0 by meet in the middle (MATH.md §7.4).

    rank_Q(B) ≤ q forces rank_{F_p}(B mod p) ≤ q, so the columns of B mod p
    lie in a q-dim subspace C and X·B ≡ 0 for a basis X of C^⊥ (Rᵀ of B
    with ``transpose``). Groups whose term vanishes mod p on X take no part
    in the match; each match leaves them to a smaller rank question, decided
    exactly.
    """
    p = plan.p
    terms = [np.array(group.term, dtype=object) for group in groups]
    base_array = np.array(question.base, dtype=object)
    if plan.transpose:
        terms, base_array = [term.T for term in terms], base_array.T
    size = base_array.shape[0]
    screens = _match_screens(question, groups, tuning)
    screened = 0
    for X in _subspace_bases(size, size - question.q, p):
        if budget.expired():
            return RankAnswer("open", None, budget.halt_reason(), screened)
        start = _project(X, base_array, p)
        projected = [_project(X, term, p) for term in terms]
        live = [g for g in range(len(groups)) if projected[g].any()]
        if not live:
            if start.any():
                continue  # X·B(z) ≡ X·B0 ≢ 0 for every z
            return RankAnswer("open", None, UNSPLIT, screened)
        first, second = _halves(live, groups)
        left = _half_table(start, [(groups[g], projected[g]) for g in first], p)
        right = _half_table(np.zeros_like(start), [(groups[g], projected[g]) for g in second], p)
        screened += len(left) + len(right)
        dead = [g for g in range(len(groups)) if g not in live]
        survivors = _screened_matches(left, ((-right.astype(np.int16)) % p).astype(np.int8), p, screens, (first, second, dead), groups,
                                      tuning)
        for i, j in survivors:
            coefficients = dict(zip(first, _decode(i, [groups[g] for g in first])))
            coefficients.update(zip(second, _decode(j, [groups[g] for g in second])))
            answer = _complete(question, groups, coefficients, dead, tuning, budget)
            if answer.status != "refuted":
                return RankAnswer(answer.status, answer.chosen, "meet" if answer.status == "found" else answer.how, screened)
    return RankAnswer("refuted", None, "meet", screened)


def _match_screens(question: RankQuestion, groups: list, tuning: DegenerateTuning) -> list:
    """``tuning.screens`` random projections X B Y mod 2³¹ − 1 (Lemma 7.4c) of the base and of every group's term."""
    rng = np.random.default_rng(tuning.seed)
    return [_projection(question, groups, question.q + 1, rng) for _ in range(tuning.screens)]


def _screened_matches(left: np.ndarray, right: np.ndarray, p: int, screens: list, split: tuple, groups: list,
                      tuning: DegenerateTuning):
    """The matches (i, j) of the two halves whose sum may have rank ≤ q: each pair is screened by Lemma 7.4c.

    A pair passes when, for some coefficients of the groups left out of the
    match, every screen's determinant vanishes mod 2³¹ − 1; rank ≤ q makes
    every one vanish, so no pair with a solution is dropped. With more than
    ``tuning.max_left_out`` coefficient vectors left out, every match passes.
    """
    first, second, dead = split
    k = math.isqrt(len(screens[0]["base"])) if screens else 0  # the projections are (q + 1) × (q + 1)
    dead_values = _value_table([groups[g] for g in dead])
    tables = None
    if screens and len(dead_values) <= tuning.max_left_out:
        tables = [(_screen_sums(screen["base"], [(groups[g], screen["terms"][g]) for g in first]),
                   _screen_sums(np.zeros_like(screen["base"]), [(groups[g], screen["terms"][g]) for g in second]),
                   _table_sums(dict(screen, base=np.zeros_like(screen["base"])), dead, dead_values)) for screen in screens]
    for lefts, rights in _matched_pairs(left, right, p, max(1, 8 * tuning.chunk // len(dead_values))):
        if tables is not None:
            alive = np.zeros(len(lefts), dtype=bool)
            for offset in range(len(dead_values)):
                passing = np.ones(len(lefts), dtype=bool)
                for sums_left, sums_right, dead_sums in tables:
                    total = (sums_left[lefts] + sums_right[rights] + dead_sums[offset][None, :]) % PRIME
                    passing &= det_mod(total.reshape(-1, k, k)) == 0
                alive |= passing
            lefts, rights = lefts[alive], rights[alive]
        yield from zip(lefts.tolist(), rights.tolist())


def _screen_sums(start: np.ndarray, members: list) -> np.ndarray:
    """Every sum start + Σ a_g·s_g mod 2³¹ − 1, in the row order of :func:`_half_table` (last group slowest)."""
    table = (start[None, :] % PRIME).astype(np.int64)
    for group, vector in members:
        table = np.concatenate([(table + _mul_mod(np.int64(a % PRIME), vector)[None, :]) % PRIME
                                for a in range(group.low, group.high + 1)])
    return table


def _halves(live: list, groups: list) -> tuple[list, list]:
    """Split groups into two halves with balanced numbers of choices (largest first)."""
    first, second, n1, n2 = [], [], 1, 1
    for g in sorted(live, key=lambda g: groups[g].high - groups[g].low, reverse=True):
        span = groups[g].high - groups[g].low + 1
        if n1 <= n2:
            first.append(g)
            n1 *= span
        else:
            second.append(g)
            n2 *= span
    return first, second


def _complete(question: RankQuestion, groups: list, coefficients: dict, dead: list, tuning: DegenerateTuning,
              budget: Budget) -> RankAnswer:
    """The rank question left once the live groups' coefficients are fixed: the dead groups decide."""
    positions = [k for g in dead for k in groups[g].plus + groups[g].minus]
    fixed = [[question.base[i][j] + sum(a * groups[g].term[i][j] for g, a in coefficients.items())
              for j in range(question.w)] for i in range(question.d)]
    sub = RankQuestion(fixed, [question.columns[k] for k in positions], [question.rows[k] for k in positions], question.q)
    answer = decide_rank(sub, tuning, budget)
    if answer.status != "found":
        return answer
    chosen = [pos for g, a in coefficients.items() for pos in groups[g].signs(a)] + [positions[k] for k in answer.chosen]
    return RankAnswer("found", sorted(chosen), answer.how)


def _project(X: np.ndarray, matrix: np.ndarray, p: int) -> np.ndarray:
    """X·matrix mod p, flattened (exact: Python ints, then residues)."""
    return np.array((X.astype(object).dot(matrix) % p).ravel(), dtype=np.int64)


def _half_table(start: np.ndarray, members: list, p: int) -> np.ndarray:
    """All sums start + Σ a_g·t_g mod p (int8 residues); row index = mixed radix of the choices, last group slowest."""
    table = (start[None, :] % p).astype(np.int8)
    for group, vector in members:
        parts = []
        for a in range(group.low, group.high + 1):
            part = table + ((a * vector) % p).astype(np.int8)[None, :]  # two residues: below 2p ≤ 26, no int8 overflow
            part -= np.int8(p) * (part >= p)
            parts.append(part)
        table = np.concatenate(parts)
    return table


def _decode(index: int, members: list) -> list:
    """The coefficients of row ``index`` of :func:`_half_table` over ``members``."""
    sizes = [1]
    for group in members:
        sizes.append(sizes[-1] * (group.high - group.low + 1))
    out = []
    for position in range(len(members) - 1, -1, -1):
        digit, index = divmod(index, sizes[position])
        out.append(members[position].low + digit)
    return out[::-1]


def _matched_pairs(left: np.ndarray, right: np.ndarray, p: int, chunk: int = 1 << 18):
    """Arrays (lefts, rights), a chunk at a time, of every pair with left[lefts] == right[rights] (rows of residues mod ``p``).

    Each row gets an int64 key: its digits in base p when p^width < 2⁶²
    (then equal keys are equal rows), else a random linear form (then
    rows of equal keys are compared). The right keys are sorted once and
    every left key is looked up by binary search.
    """
    width = left.shape[1]
    exact = width * math.log2(max(p, 2)) < 62
    weights = p ** np.arange(width, dtype=np.int64) if exact else np.random.default_rng(0).integers(1, 1 << 40, size=width, dtype=np.int64)

    def keys(rows: np.ndarray) -> np.ndarray:
        return np.concatenate([rows[k:k + (1 << 16)].astype(np.int64).dot(weights) for k in range(0, len(rows), 1 << 16)])

    left_keys, right_keys = keys(left), keys(right)
    order = np.argsort(right_keys, kind="stable")
    ordered = right_keys[order]
    low = np.searchsorted(ordered, left_keys)
    counts = np.searchsorted(ordered, left_keys, "right") - low
    hits = np.flatnonzero(counts)
    ends = np.cumsum(counts[hits])
    begin = 0
    while begin < len(hits):
        stop = int(np.searchsorted(ends, (ends[begin - 1] if begin else 0) + chunk, "right"))
        stop = max(stop, begin + 1)
        rows = hits[begin:stop]
        lefts = np.repeat(rows, counts[rows])
        within = np.arange(len(lefts)) - np.repeat(np.cumsum(counts[rows]) - counts[rows], counts[rows])
        rights = order[np.repeat(low[rows], counts[rows]) + within]
        if not exact:
            same = np.all(left[lefts] == right[rights], axis=1)
            lefts, rights = lefts[same], rights[same]
        yield lefts, rights
        begin = stop


def _subspace_bases(size: int, dim: int, p: int):
    """A basis (dim × size, int64, reduced row echelon form) of every dim-dimensional subspace of F_p^size."""
    for pivots in itertools.combinations(range(size), dim):
        free = [(r, c) for r, pivot in enumerate(pivots) for c in range(pivot + 1, size) if c not in pivots]
        for values in itertools.product(range(p), repeat=len(free)):
            X = np.zeros((dim, size), dtype=np.int64)
            for r, pivot in enumerate(pivots):
                X[r, pivot] = 1
            for (r, c), v in zip(free, values):
                X[r, c] = v
            yield X


def _gaussian_binomial(size: int, dim: int, p: int) -> int:
    """Number of dim-dimensional subspaces of F_p^size."""
    top = math.prod(p ** (size - i) - 1 for i in range(dim))
    bottom = math.prod(p ** (dim - i) - 1 for i in range(dim))
    return top // bottom


# ------------------------------------------------------------ modular arithmetic
def _mul_mod(a, b):
    """a·b mod p for residues (int64; p < 2³¹ keeps the product below 2⁶²)."""
    return (a * b) % PRIME


def _matmul_mod(A: np.ndarray, B: np.ndarray) -> np.ndarray:
    out = np.zeros((A.shape[0], B.shape[1]), dtype=np.int64)
    for j in range(A.shape[1]):
        out = (out + _mul_mod(A[:, j:j + 1] % PRIME, B[j:j + 1, :] % PRIME)) % PRIME
    return out


def _pow_mod(base: np.ndarray, exponent: int) -> np.ndarray:
    result = np.ones_like(base)
    power = base % PRIME
    while exponent:
        if exponent & 1:
            result = _mul_mod(result, power)
        power = _mul_mod(power, power)
        exponent >>= 1
    return result


def det_mod(matrices: np.ndarray) -> np.ndarray:
    """Determinants mod :data:`PRIME` of a stack of k × k residue matrices: the screen of MATH.md Lemma 7.4c.

    Parameters
    ----------
    matrices : numpy.ndarray
        int64, shape (count, k, k), entries in [0, PRIME).

    Returns
    -------
    numpy.ndarray
        int64, shape (count,): each determinant mod PRIME, in [0, PRIME),
        by Gaussian elimination vectorised over the stack.
    """
    count, k, _ = matrices.shape
    if k <= 2:  # the closed forms
        if k == 1:
            return matrices[:, 0, 0] % PRIME
        return (_mul_mod(matrices[:, 0, 0], matrices[:, 1, 1]) - _mul_mod(matrices[:, 0, 1], matrices[:, 1, 0])) % PRIME
    A = matrices.copy()
    det = np.ones(count, dtype=np.int64)
    rows = np.arange(count)
    for col in range(k):
        nonzero = A[:, col:, col] != 0
        has = nonzero.any(axis=1)
        det[~has] = 0
        pivot = col + np.argmax(nonzero, axis=1)
        swap = has & (pivot != col)
        if swap.any():
            top, other = A[rows[swap], col].copy(), A[rows[swap], pivot[swap]].copy()
            A[rows[swap], col], A[rows[swap], pivot[swap]] = other, top
            det[swap] = (PRIME - det[swap]) % PRIME
        value = np.where(has, A[:, col, col], 1)
        det = _mul_mod(det, value)
        inverse = _pow_mod(value, PRIME - 2)
        for r in range(col + 1, k):
            factor = _mul_mod(A[:, r, col], inverse)
            A[:, r, :] = (A[:, r, :] - _mul_mod(factor[:, None], A[:, col, :])) % PRIME
    return det


# ------------------------------------------------------------ exact helpers
def _rank(matrix) -> int:
    if matrix.nrows() == 0 or matrix.ncols() == 0:
        return 0
    return matrix.rank()


def _basis_columns(vectors: list, size: int) -> flint.fmpz_mat:
    """Independent columns spanning ``vectors`` (size × r, r the rank)."""
    chosen: list = []
    current = 0
    for vector in vectors:
        trial = chosen + [list(vector)]
        rank = flint.fmpz_mat(len(trial), size, [v for row in trial for v in row]).rank()
        if rank > current:
            chosen, current = trial, rank
            if current == size:
                break
    if not chosen:
        return flint.fmpz_mat(size, 0)
    return flint.fmpz_mat(len(chosen), size, [v for row in chosen for v in row]).transpose()


def _hstack(A, B):
    if B.ncols() == 0:
        return A
    return flint.fmpz_mat(A.nrows(), A.ncols() + B.ncols(),
                          [x for r in range(A.nrows()) for x in [A[r, j] for j in range(A.ncols())] + [B[r, j] for j in range(B.ncols())]])


def _vstack(A, B):
    if B.nrows() == 0:
        return A
    return flint.fmpz_mat(A.nrows() + B.nrows(), A.ncols(), list(A.entries()) + list(B.entries()))
