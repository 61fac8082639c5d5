"""The §7 case analysis of degenerate weights: levels, flats of class directions, sub-cases (MATH.md §7).

With m classes that need a unit and s spare units, f is absorbable iff
for some *flat* V (a subspace spanned by class directions, dim V = u ≤ s)
and some signs z of the classes off V,

    rank((L + Σ_K z_K T_K) Q_V) ≤ q = ⌊(s − u)/2⌋,          T_K = c·E_K·ρ_Kᵀ,

Q_V a basis of V^⊥ (MATH.md §7.2). The analysis, in the order it runs:

1. *Trivial levels* (§7.3): when d − u ≤ q for some level, any flat and
   any signs absorb.
2. *Levels* (§7.3): only u ≡ s (mod 2) and the top flat (u = rank of all
   directions) need examining; the other levels are dominated.
3. *Sub-cases* (V, q): q = 0 is a 0/1 linear system, decided by
   :func:`indexset.search.decide.decide_system`; q ≥ 1 is a rank question
   (:mod:`indexset.theory.lowrank`): the rank bound, then screening every
   sign vector, or the meet in the middle mod a small prime.

A sub-case that no exact tool here decides (a rank question past the meet
in the middle, a 0/1 system the engines leave undecided) or that the time
limit cuts short leaves its level *open*; the outcome names each open case
and its kind (:data:`OPEN_KINDS`).
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, field
from fractions import Fraction

import flint
import numpy as np

from indexset.budget import INTERRUPTED, TIME_LIMIT, Budget
from indexset.result import FEASIBLE, INFEASIBLE
from indexset.search.decide import decide_system
from indexset.search.system import System
from indexset.text import count
from indexset.theory.canonical import Classes
from indexset.theory.degenerate_tuning import DegenerateTuning
from indexset.theory.lowrank import RankQuestion, decide_rank
from indexset.theory.shortrun import Workers


# ====================================================== integer data
@dataclass(frozen=True)
class ClassData:
    """The classes as integers: T_K = e_K p_Kᵀ / D and L = L_int / D, one common D.

    Attributes
    ----------
    lines : list of tuple of int
        Primitive integer directions p_K (positive multiples of ρ_K).
    columns : list of tuple of int
        e_K = D·c·λ_K·E_K where ρ_K = λ_K·p_K (so c·E_K·ρ_Kᵀ = e_K·p_Kᵀ / D).
    linear : list of list of int
        D·L.
    d, spare : int
    """

    lines: list
    columns: list
    linear: list
    d: int
    spare: int

    @property
    def m(self) -> int:
        """Number of classes that need a unit."""
        return len(self.lines)


def class_data(classes: Classes) -> ClassData:
    """Integer data of the classes (every condition below is invariant under the common scale D)."""
    lines, scaled = [], []
    for k in range(classes.m):
        rho = [Fraction(v) for v in classes.direction(k)]
        den = math.lcm(*[v.denominator for v in rho])
        ints = [int(v * den) for v in rho]
        g = math.gcd(*ints)
        lam = Fraction(g, den)  # ρ = λ·p with p primitive, λ > 0
        lines.append(tuple(v // g for v in ints))
        scaled.append([classes.c * Fraction(v) * lam for v in classes.columns[k]])
    linear = [[Fraction(v) for v in row] for row in classes.linear]
    D = math.lcm(1, *[v.denominator for col in scaled for v in col], *[v.denominator for row in linear for v in row])
    return ClassData(lines, [tuple(int(v * D) for v in col) for col in scaled],
                     [[int(v * D) for v in row] for row in linear], classes.d, classes.spare)


# ====================================================== outcomes
@dataclass(frozen=True)
class Plan:
    """A choice that absorbs.

    Attributes
    ----------
    upgraded : list of int
        Classes given two units (independent directions spanning V).
    flipped : list of int
        Classes whose single unit sits on −h_K (adds −c·E_K·ρ_Kᵀ).
    rank_budget : int
        Rank-one pairs the spare units allow, ⌊(spare − |U|)/2⌋.
    """

    upgraded: list
    flipped: list
    rank_budget: int


@dataclass(frozen=True)
class OpenCase:
    """Why a level is not complete.

    Attributes
    ----------
    kind : str
        One of :data:`OPEN_KINDS`.
    why : str
        The case in words (the flat, the question, the budget).
    work : dict or None
        For a ``minrank`` case, the size of the work past the budgets
        (:attr:`~indexset.theory.lowrank.RankAnswer.work`).
    """

    kind: str
    why: str
    work: dict | None = None

    def __post_init__(self) -> None:
        if self.kind not in OPEN_KINDS:
            raise ValueError(f"kind: {self.kind!r} is not one of {sorted(OPEN_KINDS)}")

    def to_json(self) -> dict:
        """The case as a JSON-ready dict."""
        return {"kind": self.kind, "why": self.why, **({"work": self.work} if self.work else {})}


OPEN_KINDS = {
    "minrank": "a rank sub-case (q ≥ 1) that the rank bound, the screening and the meet in the middle cannot decide (MATH.md §7.6)",
    "system": "a 0/1 sub-case (q = 0) that the engines left undecided",
    "halted": "the time limit or a stop request",
}
"""What can leave a level open."""


@dataclass
class Level:
    """What the analysis did at one level u (q = ⌊(s − u)/2⌋).

    Attributes
    ----------
    u, q : int
    most : int
        How many flats the level can have at most: the subsets of u distinct class directions.
    flats : int
        Flats examined.
    refuted : dict
        Flats refuted, by how (``system``, ``bound``, ``enumeration``, ``meet``, ``constant``).
    open : list of OpenCase
        Why the level is not complete (empty when it is).
    done : set
        Span keys of the flats already refuted (by the probe pass).
    reached : bool
        Whether the complete pass examined the level.
    """

    u: int
    q: int
    most: int = 1
    flats: int = 0
    refuted: dict = field(default_factory=dict)
    open: list = field(default_factory=list)
    done: set = field(default_factory=set)
    reached: bool = False

    @property
    def state(self) -> str:
        """``refuted`` (every flat examined and refuted), ``open``, ``probed`` (some flats, by the probe) or ``not reached``."""
        if self.open:
            return "open"
        if self.reached:
            return "refuted"
        return "probed" if self.flats else "not reached"

    def to_json(self) -> dict:
        """The level as a JSON-ready dict."""
        return {"u": self.u, "q": self.q, "state": self.state, "flats": self.flats, "refuted": dict(self.refuted),
                "open": [case.to_json() for case in self.open]}


@dataclass(frozen=True)
class Absorbable:
    """Positive outcome: a plan that absorbs (its witness is built and checked by the caller)."""

    plan: Plan
    levels: tuple


@dataclass(frozen=True)
class NotAbsorbable:
    """Negative outcome: every sub-case of every level refuted (or the levels trivially empty)."""

    levels: tuple


@dataclass(frozen=True)
class Undecided:
    """Open outcome: the levels, some with open sub-cases named in ``Level.open``."""

    levels: tuple


@dataclass(frozen=True)
class SubCase:
    """What one flat's sub-case gave: the signs that absorb, or how it was refuted, or why it is open."""

    flipped: list | None
    how: str
    open_kind: str | None = None
    work: dict | None = None


# ====================================================== the analysis
def decide_classes(data: ClassData, budget: Budget, tuning: DegenerateTuning, workers: Workers | None = None):
    """Absorbable, NotAbsorbable or Undecided for the classes as given (MATH.md §7).

    A probe pass tries a few random flats of every 0/1 level (q = 0) for a
    positive, within a share of the time; the complete pass then examines
    every flat of every level, rank levels first (they are decided or open
    at once), and stops at the first open case. Past it no negative is
    possible, so a second probe draws random flats of the 0/1 levels for a
    positive (at most ``second_probe_flats`` of each, within a share of the
    time left) before the answer is ``Undecided``. The flats of a level are produced one at a time, so a
    level of many flats costs only the time its sub-cases take.
    """
    s, d = data.spare, data.d
    if s < 0:
        raise ValueError(f"spare = {s}: more classes than units")
    top = _rank_of(data.lines, d)
    trivial = next((u for u in range(min(s, top) + 1) if d - u <= (s - u) // 2), None)
    if trivial is not None:
        basis = _independent(data.lines, list(range(data.m)), d)[:trivial]
        return Absorbable(Plan(basis, [], (s - trivial) // 2), ())
    rng = np.random.default_rng(tuning.seed)
    distinct = len(set(data.lines))
    levels = [Level(u, (s - u) // 2, 1 if u in (0, top) else math.comb(distinct, u)) for u in levels_of(s, top)]
    zero_levels = [level for level in levels if level.q == 0]
    plan = _probe(data, zero_levels, top, budget.within(budget.share(tuning.probe_share)), tuning, rng, tuning.probe_flats, workers)
    if plan is not None:
        return Absorbable(plan, tuple(levels))
    for level in sorted(levels, key=lambda item: (item.q == 0, item.most)):
        plan = _run_level(data, level, _flat_bases(data, level.u, top), budget, tuning, workers)
        if plan is not None:
            return Absorbable(plan, tuple(levels))
        if level.open:
            if budget.expired():
                return Undecided(tuple(levels))
            unfinished = [other for other in zero_levels if not other.reached or other is level]
            plan = _probe(data, unfinished, top, budget.within(budget.share(tuning.probe_share)), tuning, rng, tuning.second_probe_flats, workers)
            return Absorbable(plan, tuple(levels)) if plan is not None else Undecided(tuple(levels))
    return NotAbsorbable(tuple(levels))


def _probe(data: ClassData, levels: list, top: int, probing: Budget, tuning: DegenerateTuning, rng, count: int, workers: Workers | None) -> Plan | None:
    """Try random flats of the levels in turn (at most ``count`` of each, fewer when ``probing`` ends) for a positive.

    Each sub-case gets at most a share of the probe's time left; the flats
    it refutes are recorded, so the complete pass skips them.
    """
    sources = [(level, _drawn_flats(data, level.u, top, rng)) for level in levels]
    tried = 0
    while sources and tried < count:
        tried += 1
        for level, source in list(sources):
            drawn = next(source, None)
            if drawn is None:
                sources.remove((level, source))
                continue
            if probing.expired():
                return None
            key, basis = drawn
            if key in level.done:
                continue
            outcome = _sub_case(data, basis, level.q, probing.within(probing.share(tuning.probe_share)), tuning, workers)
            if outcome.flipped is not None:
                return Plan(basis, outcome.flipped, level.q)
            if outcome.how in REFUTED:
                level.flats += 1
                level.refuted[outcome.how] = level.refuted.get(outcome.how, 0) + 1
                level.done.add(key)
    return None


def levels_of(s: int, top: int) -> list[int]:
    """Levels u to examine: u ≤ min(s, top) with s − u even, and the top flat itself (MATH.md §7.3)."""
    return [u for u in range(min(s, top) + 1) if (s - u) % 2 == 0 or u == top]


def _run_level(data: ClassData, level: Level, bases, budget: Budget, tuning: DegenerateTuning, workers: Workers | None) -> Plan | None:
    """Examine every flat of one level: a plan, or None with the level's record filled in (open at the first open case)."""
    level.reached = True
    for key, basis in bases:
        if key in level.done:
            continue
        if budget.expired():
            level.open.append(OpenCase("halted", f"{budget.halt_reason()} after {level.flats} of at most {level.most} flats"))
            return None
        outcome = _sub_case(data, basis, level.q, budget, tuning, workers)
        level.flats += 1
        if outcome.flipped is not None:
            return Plan(basis, outcome.flipped, level.q)
        if outcome.how in REFUTED:
            level.refuted[outcome.how] = level.refuted.get(outcome.how, 0) + 1
        else:
            flat = f"the flat spanned by classes {basis}" if basis else "the flat V = 0"
            level.open.append(OpenCase(outcome.open_kind, f"{flat}: {outcome.how}", outcome.work))
            return None
    return None


REFUTED = ("system", "bound", "enumeration", "meet", "short", "constant")
"""How a sub-case is refuted: a 0/1 system without solution, the rank bound, every sign vector screened, the meet
in the middle mod p, Lemma 7.7e's systems, a constant entry."""


def _flat_bases(data: ClassData, u: int, top: int):
    """``(key, basis)`` for every flat of dimension u, one basis (class positions) and one span key each, lazily."""
    if u == 0:
        yield (), []
        return
    if u == top:
        basis = _independent(data.lines, list(range(data.m)), data.d)
        yield ("top",), basis
        return
    lines = sorted(set(data.lines))
    first = {line: data.lines.index(line) for line in lines}
    seen: set = set()
    for combo in itertools.combinations(lines, u):
        key = _span_key(combo, data.d)
        if key is not None and key not in seen:
            seen.add(key)
            yield key, [first[line] for line in combo]


def _drawn_flats(data: ClassData, u: int, top: int, rng):
    """Distinct flats of dimension u in a random order (``(key, basis)``), lazily.

    A level of few flats is listed whole and shuffled; from a level of many,
    flats are drawn as random sets of u lines, and the draws stop once many
    in a row give no new flat.
    """
    lines = sorted(set(data.lines))
    if u == 0 or u == top or math.comb(len(lines), u) <= SHUFFLED_FLATS:
        every = list(_flat_bases(data, u, top))
        for i in rng.permutation(len(every)):
            yield every[i]
        return
    first = {line: data.lines.index(line) for line in lines}
    seen: set = set()
    misses = 0
    while misses < 1000:
        combo = [lines[i] for i in sorted(rng.choice(len(lines), size=u, replace=False))]
        key = _span_key(combo, data.d)
        if key is None or key in seen:
            misses += 1
            continue
        misses = 0
        seen.add(key)
        yield key, [first[line] for line in combo]


SHUFFLED_FLATS = 64
"""Levels with at most this many sets of u lines are listed whole and shuffled instead of drawn."""


def _span_key(combo, d: int) -> tuple | None:
    """One key per span of the lines of ``combo``, None when they are dependent.

    Two lines: their Plücker coordinates (the 2 × 2 minors) divided by their
    gcd and signed so that the first nonzero one is positive, which
    determine the plane. More: the reduced row echelon form over Q.
    """
    if len(combo) == 2:
        a, b = combo
        minors = [a[i] * b[j] - a[j] * b[i] for i in range(d) for j in range(i + 1, d)]
        g = math.gcd(*minors)
        if g == 0:
            return None
        lead = next(v for v in minors if v)
        return tuple(v // g if lead > 0 else -v // g for v in minors)
    matrix = flint.fmpz_mat(len(combo), d, [v for line in combo for v in line])
    reduced, rank = flint.fmpq_mat(matrix).rref()
    if rank < len(combo):
        return None
    return tuple(reduced.entries())


# ====================================================== one sub-case
def _sub_case(data: ClassData, basis: list, q: int, budget: Budget, tuning: DegenerateTuning, workers: Workers | None) -> SubCase:
    """The signs that absorb for this flat, or how it was refuted, or why it is open."""
    d = data.d
    Q = _complement([data.lines[k] for k in basis], d)  # d × w integer
    w = len(Q[0]) if Q else 0
    base = _times(data.linear, Q)
    active, columns, rows = [], [], []
    for k in range(data.m):
        r = tuple(sum(data.lines[k][i] * Q[i][j] for i in range(d)) for j in range(w))
        if any(r):
            active.append(k)
            columns.append(data.columns[k])
            rows.append(r)
    if q == 0:
        return _zero_case(base, active, columns, rows, budget, tuning)
    answer = decide_rank(RankQuestion(base, columns, rows, q), tuning, budget, workers)
    if answer.status == "found":
        return SubCase([active[i] for i in answer.chosen], "found")
    if answer.status == "refuted":
        return SubCase(None, answer.how)
    if answer.how in (TIME_LIMIT, INTERRUPTED):
        return SubCase(None, f"rank ≤ {q} over {len(active)} signs: {answer.how}", "halted")
    return SubCase(None, f"rank ≤ {q} over {len(active)} signs, a 0/1 MinRank question past the rank bound, the screening and "
                         f"the meet in the middle ({_work_words(answer.work)}; MATH.md §7.6–7.7)", "minrank", answer.work)


def _work_words(work: dict | None) -> str:
    """What stopped a rank question, with its size."""
    if work is None:
        return "budget"
    vectors = f"{count(work['coefficient_vectors'])} coefficient vectors"
    if work["limit"] == "meet_rows":
        meet = f"{vectors}; a meet in the middle would hold {count(work['half_rows'])} rows per half table"
    elif work["limit"] == "max_meet":
        meet = f"{vectors}; the cheapest meet in the middle would hold {count(work['meet_entries'])} table entries"
    else:
        meet = f"{vectors}; every affordable prime leaves a subspace on which all terms vanish"
    return meet + _short_words(work.get("short"))


def _short_words(short: dict | None) -> str:
    """What stopped Lemma 7.7e's systems, with their number and predicted time."""
    if short is None:
        return ""
    systems = f"Lemma 7.7e's {count(short['systems'])} 0/1 systems"
    if short["limit"] == "max_short_systems":
        return f"; {systems} exceed the budget of the tuning's max_short_systems"
    if short["limit"] == "time":
        return (f"; {systems} are predicted to take {short['seconds']:.0f} s ({short['done']} decided), more than the time allowed "
                "(the time left, or the tuning's max_short_seconds without a time limit)")
    return f"; one of {systems} was left undecided ({short['done']} decided)"


def _zero_case(base, active, columns, rows, budget: Budget, tuning: DegenerateTuning) -> SubCase:
    """(L + Σ z_K T_K) Q_V = 0 as a 0/1 system: every entry is one equation."""
    d, w = len(base), len(base[0]) if base else 0
    M, t = [], []
    for i in range(d):
        for j in range(w):
            coefficients = [columns[k][i] * rows[k][j] for k in range(len(active))]
            if not any(coefficients):
                if base[i][j] != 0:
                    return SubCase(None, "constant")  # an entry no sign reaches is nonzero
                continue
            M.append(coefficients)
            t.append(-base[i][j])
    if not M:
        return SubCase([], "found")
    system = System(np.array(M, dtype=object), np.array(t, dtype=object), None, list(range(len(M))))
    result = decide_system(system, budget=budget.timed_from_now(), brute_width=tuning.brute_width)
    if result.status == FEASIBLE:
        return SubCase([active[i] for i in result.index_set], "found")
    if result.status == INFEASIBLE:
        return SubCase(None, "system")
    halted = budget.halt_reason() is not None
    return SubCase(None, f"a 0/1 system with {len(active)} unknowns undecided ({result.reason})", "halted" if halted else "system")


# ====================================================== integer linear algebra
def _rank_of(vectors: list, d: int) -> int:
    if not vectors:
        return 0
    return flint.fmpz_mat(len(vectors), d, [v for vector in vectors for v in vector]).rank()


def _independent(vectors: list, order: list, d: int) -> list:
    """Positions (from ``order``) of a maximal independent subset, greedily."""
    chosen: list = []
    for k in order:
        if _rank_of([vectors[j] for j in chosen] + [vectors[k]], d) > len(chosen):
            chosen.append(k)
            if len(chosen) == d:
                break
    return chosen


def _complement(directions: list, d: int) -> list:
    """An integer basis of span(directions)^⊥, as a d × (d − u) list of rows."""
    if not directions:
        return [[int(i == j) for j in range(d)] for i in range(d)]
    basis, dim = flint.fmpz_mat(len(directions), d, [v for row in directions for v in row]).nullspace()
    return [[int(basis[i, j]) for j in range(dim)] for i in range(d)]


def _times(A: list, B: list) -> list:
    """A·B for lists of Python ints."""
    if not B or not B[0]:
        return [[] for _ in A]
    return [[sum(a * B[i][j] for i, a in enumerate(row)) for j in range(len(B[0]))] for row in A]
