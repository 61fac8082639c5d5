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

A level whose flats are too many to examine, or a sub-case past its
budget, is *open*; the outcome names each open case.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, field
from fractions import Fraction

import flint
import numpy as np

from indexset.budget import Budget
from indexset.result import FEASIBLE, INFEASIBLE
from indexset.search.decide import decide_system
from indexset.search.system import System
from indexset.theory.canonical import Classes
from indexset.theory.degenerate_tuning import DegenerateTuning
from indexset.theory.lowrank import RankQuestion, decide_rank


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


@dataclass
class Level:
    """What the analysis did at one level u (q = ⌊(s − u)/2⌋).

    Attributes
    ----------
    u, q : int
    flats : int
        Flats examined.
    refuted : dict
        Flats refuted, by how (``system``, ``bound``, ``enumeration``, ``meet``, ``constant``).
    open : list
        Why the level is not complete (empty when it is).
    done : set
        Bases of the flats already refuted (by the probe pass).
    reached : bool
        Whether the complete pass examined the level.
    """

    u: int
    q: int
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
                "open": list(self.open)}


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


# ====================================================== the analysis
def decide_classes(data: ClassData, budget: Budget, tuning: DegenerateTuning):
    """Absorbable, NotAbsorbable or Undecided for the classes as given (MATH.md §7).

    A probe pass tries a few flats of every level for a positive (within a
    share of the time, or all of it when some level has too many flats to
    complete, since then only a positive can come); the complete pass then
    examines every flat, rank levels first (they fail fast), and stops at
    the first open case: past it no negative is possible, and the probe has
    already looked for positives. When every level can be completed, the
    probe leaves out the rank levels (q ≥ 1): the complete pass examines
    them first anyway, and a rank sub-case cut short by the probe's share
    would be examined twice.
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
    levels = [Level(u, (s - u) // 2) for u in levels_of(s, top)]
    plans = {id(level): _flats(data, level.u, top, tuning, rng) for level in levels}
    for level in levels:
        if not plans[id(level)][0]:
            level.open.append(f"more than {tuning.max_flats} flats")
    negative_possible = not any(level.open for level in levels)
    # With a level that cannot be completed only a positive can come: the probe may use all the time.
    probing = budget.within(budget.share(tuning.probe_share)) if negative_possible else budget
    plan = _probe(data, [level for level in levels if level.q == 0 or not negative_possible], plans, probing, tuning)
    if plan is not None:
        return Absorbable(plan, tuple(levels))
    if not negative_possible:
        return Undecided(tuple(levels))
    for level in sorted(levels, key=lambda item: (item.q == 0, len(plans[id(item)][1]))):
        rest = [basis for basis in plans[id(level)][1] if tuple(basis) not in level.done]
        plan = _run_level(data, level, rest, budget, tuning)
        if plan is not None:
            return Absorbable(plan, tuple(levels))
        if level.open:
            return Undecided(tuple(levels))
    return NotAbsorbable(tuple(levels))


def _probe(data: ClassData, levels: list, plans: dict, probing: Budget, tuning: DegenerateTuning) -> Plan | None:
    """Try the first flats of every level of ``levels`` (q = 0 first) for a positive; record the flats it refutes."""
    for level in sorted(levels, key=lambda item: item.q):
        complete, bases = plans[id(level)]
        for basis in bases[: tuning.probe_flats]:
            if probing.expired():
                return None
            flipped, how = _sub_case(data, basis, level.q, probing.within(probing.share(tuning.probe_share)), tuning)
            if flipped is not None:
                return Plan(basis, flipped, level.q)
            if complete and how in REFUTED:
                level.flats += 1
                level.refuted[how] = level.refuted.get(how, 0) + 1
                level.done.add(tuple(basis))
    return None


def levels_of(s: int, top: int) -> list[int]:
    """Levels u to examine: u ≤ min(s, top) with s − u even, and the top flat itself (MATH.md §7.3)."""
    return [u for u in range(min(s, top) + 1) if (s - u) % 2 == 0 or u == top]


def _run_level(data: ClassData, level: Level, bases: list, budget: Budget, tuning: DegenerateTuning) -> Plan | None:
    """Examine every flat of one level: a plan, or None with the level's record filled in (open at the first open case)."""
    level.reached = True
    for basis in bases:
        if budget.expired():
            level.open.append(budget.halt_reason())
            return None
        flipped, how = _sub_case(data, basis, level.q, budget, tuning)
        level.flats += 1
        if flipped is not None:
            return Plan(basis, flipped, level.q)
        if how in REFUTED:
            level.refuted[how] = level.refuted.get(how, 0) + 1
        else:
            level.open.append(f"flat spanned by classes {basis}: {how}")
            return None
    return None


REFUTED = ("system", "bound", "enumeration", "meet", "constant")
"""How a sub-case is refuted: a 0/1 system without solution, the rank bound, every sign vector screened, the meet
in the middle mod p, a constant entry."""


def _flats(data: ClassData, u: int, top: int, tuning: DegenerateTuning, rng):
    """``(complete, bases)``: one independent basis per flat of dimension u (in a seeded order), or a probe of them."""
    lines = sorted(set(data.lines))
    first = {line: data.lines.index(line) for line in lines}
    if u == 0:
        return True, [[]]
    if u == top:
        return True, [_independent(data.lines, list(range(data.m)), data.d)]
    if math.comb(len(lines), u) <= tuning.max_flats:
        bases = _all_flats(lines, first, u, data.d)
        return True, [bases[i] for i in rng.permutation(len(bases))]
    return False, _probe_flats(lines, first, u, data.d, tuning, rng)


def _all_flats(lines: list, first: dict, u: int, d: int) -> list:
    seen, bases = set(), []
    for combo in itertools.combinations(lines, u):
        _keep_new_flat(combo, first, d, seen, bases)
    return bases


def _probe_flats(lines: list, first: dict, u: int, d: int, tuning: DegenerateTuning, rng) -> list:
    bases, seen, attempts = [], set(), 0
    while len(bases) < tuning.probe_flats and attempts < 50 * tuning.probe_flats:
        attempts += 1
        combo = [lines[i] for i in sorted(rng.choice(len(lines), size=u, replace=False))]
        _keep_new_flat(combo, first, d, seen, bases)
    return bases


def _keep_new_flat(combo, first: dict, d: int, seen: set, bases: list) -> None:
    """Append the classes of ``combo`` to ``bases`` when its lines are independent and span a flat not ``seen`` yet."""
    matrix = flint.fmpz_mat(len(combo), d, [v for line in combo for v in line])
    if matrix.rank() < len(combo):
        return
    key = _span_key(matrix)
    if key not in seen:
        seen.add(key)
        bases.append([first[line] for line in combo])


def _span_key(matrix: flint.fmpz_mat) -> tuple:
    """The flat's reduced row echelon form over Q (one key per span)."""
    reduced, _rank = flint.fmpq_mat(matrix).rref()
    return tuple(reduced.entries())


# ====================================================== one sub-case
def _sub_case(data: ClassData, basis: list, q: int, budget: Budget, tuning: DegenerateTuning):
    """``(flipped, how)``: the signs that absorb for this flat, or None and how it was refuted / why open."""
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
    answer = decide_rank(RankQuestion(base, columns, rows, q), tuning, budget)
    if answer.status == "found":
        return [active[i] for i in answer.chosen], "found"
    if answer.status == "refuted":
        return None, answer.how
    return None, f"rank ≤ {q} over {len(active)} signs: {answer.how}"


def _zero_case(base, active, columns, rows, budget: Budget, tuning: DegenerateTuning):
    """(L + Σ z_K T_K) Q_V = 0 as a 0/1 system: every entry is one equation."""
    d, w = len(base), len(base[0]) if base else 0
    M, t = [], []
    for i in range(d):
        for j in range(w):
            coefficients = [columns[k][i] * rows[k][j] for k in range(len(active))]
            if not any(coefficients):
                if base[i][j] != 0:
                    return None, "constant"  # an entry no sign reaches is nonzero
                continue
            M.append(coefficients)
            t.append(-base[i][j])
    if not M:
        return [], "found"
    system = System(np.array(M, dtype=object), np.array(t, dtype=object), None, list(range(len(M))))
    result = decide_system(system, time_limit=budget.remaining(), stop=budget.stop, brute_width=tuning.brute_width)
    if result.status == FEASIBLE:
        return [active[i] for i in result.index_set], "found"
    if result.status == INFEASIBLE:
        return None, "system"
    return None, f"a 0/1 system with {len(active)} unknowns undecided ({result.reason})"


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
