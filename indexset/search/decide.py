"""The one decision of a 0/1 system ``M z = t``: exact algebra, pruning, then the engines.

Every caller whose question has become a 0/1 system comes here: the block
solver (condition (★), MATH.md §5–6), the degenerate-weights decision
(MATH.md §7), the affine-class criteria (MATH.md §8) and
``indexset solve-system``. Stages, in order:

1. a row ``0 = t ≠ 0`` found while building the system;
2. exact linear algebra (exact mode): span certificate, unique real
   solution, integer lattice (:mod:`indexset.search.reduce`); a small
   system that is still open is then enumerated directly;
3. pruning: interval fixings (Numba), an optional caller's check of the
   fixings (the block solver's rank test), independent parts;
4. the portfolio of engines on each part (:mod:`indexset.search.portfolio`);
5. the parts' solutions joined with the fixed and free units.

Every solution returned satisfies the system exactly; ``infeasible`` comes
with a certificate or a complete search. This module knows nothing about
blocks: reasons speak of the system.
"""

from __future__ import annotations

import itertools
import time

from indexset.budget import Budget
from indexset.result import FEASIBLE, INFEASIBLE, UNKNOWN, Result
from indexset.search.engines.brute import solve_system_brute
from indexset.search.reduce import algebra_answer, reduce_system
from indexset.search.system import System
from indexset.search.tuning import DEFAULT as TUNING
from indexset.trace import Trace


def decide_system(system: System, *, reduction=None, find_all: bool = False, min_size: int = 0, budget: Budget | None = None,
                  time_limit: float | None = None, stop=None, seed: int = 0, engines=None, progress=None, cluster=None,
                  prune_system: bool = True, use_lattice: bool = True, check_fixed=None, brute_width: int = 0,
                  engine_options: dict | None = None, count_only: bool = False, trace: Trace | None = None) -> Result:
    """Decide a system over 0/1 unknowns, or over bounded integers 0 ≤ z_j ≤ u_j.

    Parameters
    ----------
    system : System
        Exact equations, or rows with a ``slack`` (tolerance mode).
    reduction : Reduction, optional
        Its exact reduction, when the caller has it.
    find_all : bool
        Every solution instead of the first.
    min_size : int
        Only solutions whose values sum to at least this count (``|S| ≥ d``).
    budget : Budget, optional
        Deadline and stop request (else built from ``time_limit`` and ``stop``).
    seed, engines, progress, cluster
        Passed to the portfolio (:func:`indexset.search.portfolio.run_portfolio`).
    prune_system : bool
        Interval fixings and the split into independent parts (the ``prune``
        ablation switches them off).
    use_lattice : bool
        Exact reduction and kernel coordinates (the ``lattice`` ablation).
    check_fixed : callable, optional
        ``check_fixed(fixed) -> str | None``: a caller's proof that no
        solution exists once the fixings are known (None: no proof).
    brute_width : int
        Exact systems whose box has at most 2^brute_width points (0/1
        systems with at most this many unknowns) that linear algebra
        leaves open are enumerated directly instead of searched (0: never).
    engine_options : dict, optional
        Engine-specific options (``workers`` for a lattice engine alone, ...).
    count_only : bool
        With ``find_all``: count every solution without holding them (the
        result lists the first); a count of millions then costs no memory.
    trace : Trace, optional
        Where the stages are recorded as they go (``system``, ``reduce``,
        ``prune``, ``engines``, and ``search`` with each engine's stages and
        the ``portfolio``; ``search.part k`` for several independent parts);
        the result's ``stages`` is its record.

    Returns
    -------
    Result
        ``feasible`` with exactly checked solutions (``solutions``: supports
        of a 0/1 system, values of a bounded one; and ``count`` when
        complete), ``infeasible`` with its reason and a ``certificate``
        naming its kind, or ``unknown``.
    """
    budget = budget or Budget.of(time_limit, stop)
    run = _Decision(system, find_all, min_size, budget, seed, engines, progress, cluster, dict(engine_options or {}, count_only=count_only and find_all), trace or Trace())
    result = run.decide(reduction, prune_system, use_lattice, check_fixed, brute_width)
    result.time_s = budget.elapsed()
    run.trace.merge(result.stages)
    result.stages = run.trace.record
    return result.note_halt(budget.halt_reason(), find_all)


def _box_size(system: System) -> int:
    """The number of points of the box: Π (u_j + 1)."""
    size = 1
    for u in system.bounds():
        size *= u + 1
    return size


class _Decision:
    """One run of :func:`decide_system`: the stages and what they found."""

    def __init__(self, system, find_all, min_size, budget, seed, engines, progress, cluster, engine_options, trace: Trace) -> None:
        self.system, self.find_all, self.min_size, self.budget = system, find_all, min_size, budget
        self.seed, self.engines, self.progress, self.cluster = seed, engines, progress, cluster
        self.engine_options, self.trace = engine_options, trace
        # A caller's trace may have described the system already.
        trace.record.setdefault("system", {"equations": system.m, "unknowns": system.n, "max_bits": system.max_abs().bit_length()})

    def infeasible(self, reason: str, certificate: dict, engine: str = "exact") -> Result:
        return Result(INFEASIBLE, reason, certificate=certificate, engine=engine, complete=True, count=0, solutions=[])

    def decide(self, reduction, prune_system, use_lattice, check_fixed, brute_width) -> Result:
        system = self.system
        if system.infeasible_row is not None:
            label = system.rows[system.infeasible_row]
            return self.infeasible(f"row {label} reads 0 = t ≠ 0" + (" beyond its slack" if system.slack is not None else ""),
                                   {"kind": "zero_row", "row": list(label) if isinstance(label, tuple) else label})
        if system.slack is None:
            if reduction is None:
                began = time.perf_counter()
                reduction = reduce_system(system.M, system.t, lattice=use_lattice, upper=system.upper)
                self.trace.note(reduce=dict(reduction.stages(), time_s=round(time.perf_counter() - began, 6)))
            decided = algebra_answer(reduction, system, self.min_size)
            if decided is not None:
                return decided
            if brute_width and system.n > 0 and _box_size(system) <= 2**brute_width:
                return self._brute()  # a few thousand points: cheaper than starting the engines
        if not use_lattice:
            reduction = None  # no kernel coordinates: CP-SAT models M z = t directly
        return self._search(reduction, prune_system, check_fixed)

    def _brute(self) -> Result:
        system = self.system
        solutions = [s for s in solve_system_brute(system.M, system.t, upper=system.upper) if system.size(s) >= self.min_size]
        reason = f"complete enumeration of all {_box_size(system)} points of the box"
        if not solutions:
            return self.infeasible(f"{reason} found no solution", {"kind": "search"}, "brute")
        listed = solutions if self.find_all and not self.engine_options["count_only"] else solutions[:1]
        return Result(FEASIBLE, reason, index_set=listed[0], solutions=listed, count=len(solutions), engine="brute", complete=True)

    def _search(self, reduction, prune_system, check_fixed) -> Result:
        from indexset.search.prune import no_pruning, prune, subsystem, whole_part  # the Numba kernels, only when searching

        system = self.system
        began = time.perf_counter()
        pruning = prune(system) if prune_system else no_pruning(system)
        self.trace.note(prune=dict(pruning.stages(), time_s=round(time.perf_counter() - began, 6)))
        if pruning.infeasible:
            return self.infeasible(pruning.reason, {"kind": "interval"}, "prune")
        proof = check_fixed(pruning.fixed) if check_fixed is not None and prune_system else None
        if proof:
            return self.infeasible(proof, {"kind": "rank"}, "prune")
        if system.slack is not None:
            # With a slack, |S| ≥ min_size is a constraint on the whole set: keep one part.
            pruning.components = whole_part(system, pruning.free())
        from indexset.search.portfolio import available_engines  # OR-Tools and the kernels, only when searching

        names = list(self.engines or available_engines())
        self.trace.note(engines=names)
        parts = [part for part in pruning.components if part[0] and part[1]]
        if len(parts) > 1 and self.min_size:
            self.engine_options["count_only"] = False  # |S| ≥ min_size binds the parts together: their solutions are listed and combined
        per_part = []
        search = self.trace.child("search")
        for k, (rows, columns) in enumerate(parts):
            sub = subsystem(system, pruning, rows, columns)
            result = self._search_part(sub, reduction, pruning, len(parts) == 1, names, search if len(parts) == 1 else search.child(f"part {k + 1}"))
            # Each solution of the part as the values it adds to the part's unknowns (above their lower ends).
            offsets = [{columns[i]: v for i, v in enumerate(sub.values(solution)) if v} for solution in (result.solutions or [])]
            per_part.append((result, offsets))
            if result.status == INFEASIBLE:
                return self.infeasible(f"complete search ({result.engine}) of an independent part with unknowns {columns} found no solution: {result.reason}",
                                       {"kind": "search", "part": columns}, result.engine)
            if result.status == UNKNOWN and not (self.find_all and per_part[-1][1]):
                return Result(UNKNOWN, f"{self.budget.halt_reason() or 'no engine could decide'} before a proof: {result.reason}", engine=result.engine)
        return self._combine(pruning, per_part)

    def _search_part(self, sub, reduction, pruning, whole, names, trace: Trace) -> Result:
        """Search one independent part, reusing the whole system's reduction when nothing was removed."""
        from indexset.search.portfolio import run_portfolio

        part_reduction = None
        if sub.slack is None and reduction is not None:
            untouched = whole and sub.n == self.system.n and sub.m == self.system.m and all(int(a) == int(b) for a, b in zip(sub.t, self.system.t))
            part_reduction = reduction if untouched else reduce_system(sub.M, sub.t, upper=sub.upper)
            if part_reduction.integer_feasible is False or not part_reduction.span_feasible:
                trace.note(reduce=part_reduction.stages())
                return Result(INFEASIBLE, part_reduction.lattice_reason or "t outside the span after fixings", engine="exact", complete=True, solutions=[], count=0)
        fixed_in = sum(int(v) for v in pruning.low)
        min_size = max(0, self.min_size - fixed_in) if whole else 0
        return run_portfolio(sub, part_reduction, engines=names, find_all=self.find_all, budget=self.budget, seed=self.seed,
                             progress=self.progress, min_size=min_size, cluster=self.cluster, trace=trace, **self.engine_options)

    def _combine(self, pruning, per_part) -> Result:
        """Join the parts' solutions with the fixed unknowns into solutions of the whole system.

        Each part's solutions are values above the part's lower ends (a
        support of a 0/1 part: ones); an unknown in no equation takes any
        value of its domain. Counting only, a part's count stands for
        its solutions, of which the first is listed.
        """
        system, counting = self.system, self.engine_options["count_only"]
        base = [int(v) for v in pruning.low]
        free_alone = []  # unknowns in no equation: every value of their domain works
        engines = sorted({r.engine for r, _ in per_part if r.engine}) or ["prune"]
        complete = all(r.complete or not self.find_all for r, _ in per_part)
        choices = [offsets for _, offsets in per_part]
        total = 1
        for result, offsets in per_part:
            total *= (result.count or 0) if counting and result.complete else len(offsets)
        for rows, columns in pruning.components:
            if not rows:
                free_alone.extend(columns)
                domains = [[{i: k} for k in range(int(pruning.high[i]) - int(pruning.low[i]) + 1)] for i in columns]
                choices.extend(domains)
                for domain in domains:
                    total *= len(domain)
        found = []
        listed = TUNING.max_listed if self.find_all and not counting else 1
        for combo in itertools.product(*choices):
            values = list(base)
            for offsets in combo:
                for i, k in offsets.items():
                    values[i] += k
            if sum(values) >= self.min_size:  # only a slack admits solutions below the minimum size
                found.append(system.solution(values))
            if len(found) >= listed:
                break
        engine = "+".join(engines)
        if not found:
            return self.infeasible(f"the only solutions left by the search have fewer than {self.min_size} ones", {"kind": "size"}, engine)
        bad = [solution for solution in found if not system.is_solution(solution)]
        if bad:
            raise AssertionError(f"engine {engine} reported {bad[0]}, which does not solve the system")
        incomplete = not complete or self.budget.stopped()
        reason = f"unknowns {free_alone} appear in no equation: each may take any value of its domain" if free_alone else ""
        result = Result(FEASIBLE, reason, index_set=found[0], solutions=found if self.find_all else found[:1], engine=engine,
                        complete=not incomplete)
        if self.find_all:
            result.count = total if complete else None
            if incomplete:
                result.reason = "; ".join(filter(None, [reason, f"enumeration incomplete ({'interrupted' if self.budget.stopped() else 'time limit'}): {len(found)} found so far"]))
        return result
