"""``solve``: decide whether a block absorbs its skip connection, with proof.

Pipeline (MATH.md §3–6, DESIGN.md):

1. classify: impossible activation classes are decided by theorem;
2. build the exact integer system ``M z = t`` of (★);
3. exact linear algebra: span certificate, unique real solution, integer
   lattice (z0 + K y);
4. pruning: interval fixings (Numba), rank feasibility, independent parts;
5. search: lattice enumeration and CP-SAT as a portfolio;
6. every hit passes the exact verifier before it is reported.

A negative answer on degenerate weights is reported as ``unknown``:
(★) is not necessary there (MATH.md §3).
"""

from __future__ import annotations

import itertools
import threading
import time
from fractions import Fraction

import numpy as np

import indexset.model.activations as activations
from indexset.theory.nondegeneracy import find_degeneracy
from indexset.classes import AFFINE, BIAS_FREE, check_class
from indexset.theory.degenerate import decide_degenerate
from indexset.errors import InputError
from indexset.large.gram import gram_applies, gram_decide
from indexset.model.instance import Instance
from indexset.search.portfolio import available_engines, run_portfolio
from indexset.search.prune import no_pruning, prune, subsystem, whole_part
from indexset.exact.rational import fmpz_matrix
from indexset.search.reduce import reduce_system
from indexset.result import ABSORBABLE, INFEASIBLE, NOT_ABSORBABLE, UNKNOWN, Result
from indexset.search.system import System, build_system
from indexset.theory.theorems import bias_inside_verdict, linear_fallback, necessity, theorem_result
from indexset.exact.verify import verify

GRAM_SIZE = 50_000
"""Above this many entries of M (d²·n) with n ≤ d², solve takes the Gram path first."""

MAX_LISTED = 100_000
"""Most solutions listed by ``find_all`` when independent parts multiply."""


class _Clock:
    """Time limit and stop request shared by the stages."""

    def __init__(self, time_limit, stop):
        self.start = time.perf_counter()
        self.time_limit = time_limit
        self.stop = stop or threading.Event()

    def elapsed(self) -> float:
        return time.perf_counter() - self.start

    def remaining(self):
        return None if self.time_limit is None else max(0.0, self.time_limit - self.elapsed())

    def expired(self) -> bool:
        return self.stop.is_set() or (self.time_limit is not None and self.elapsed() >= self.time_limit)


ABLATIONS = ("prune", "lattice", "gram")
"""Stages that ``solve(..., ablate=...)`` can switch off (for benchmarks)."""


def solve(instance: Instance, *, target_class=AFFINE, time_limit=None, find_all=False, tol=None, seed=0, engines=None, stop=None, progress=None, ablate=(), cluster=None) -> Result:
    """Decide whether ``instance`` can absorb its skip connection.

    Parameters
    ----------
    instance : Instance
    target_class : {"affine", "bias-free"}
        Which residual-free blocks count (:mod:`indexset.classes`): with
        biases (default) or without a bias inside σ.
    time_limit : float, optional
        Seconds for the whole call; past it the answer is ``unknown``
        (with whatever was proven so far).
    find_all : bool
        Enumerate every index set S (``count`` and ``solutions`` filled
        when the enumeration completes).
    tol : Fraction, optional
        Accept ``max |c·W_down[:,S]·W_up[S,:] + A| ≤ tol``.
    seed : int
        Seed for the randomised engines.
    engines : sequence of str, optional
        Engines for the search stage (default: every available engine).
    stop : threading.Event, optional
        Set it (e.g. on Ctrl-C) to stop and report what is known.
    progress : callable, optional
        Called with a dict of counters from time to time.
    ablate : iterable of str
        Stages to switch off, for benchmarks: ``prune`` (no fixings, rank
        test or split), ``lattice`` (no exact reduction: no kernel
        coordinates for CP-SAT, no lattice engine), ``gram`` (no Gram path).
        Answers stay correct; only speed changes.
    cluster : indexset.search.distributed.Cluster, optional
        Lets the lattice engine run a long enumeration as Dask tasks there
        (:mod:`indexset.search.distributed`); answers are the same.

    Returns
    -------
    Result
        ``absorbable`` only with an exactly verified S; ``not_absorbable``
        only with a proof; otherwise ``unknown`` with the reason.
    """
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise InputError("--seed", f"must be an integer ≥ 0, got {seed!r}")
    target_class = check_class(target_class)
    clock = _Clock(time_limit, stop)
    tol = None if tol is None else Fraction(tol)
    ablate = frozenset(ablate)
    if not ablate <= set(ABLATIONS):
        raise ValueError(f"unknown ablation {sorted(ablate - set(ABLATIONS))}; choose from {ABLATIONS}")
    if "lattice" in ablate:
        engines = [name for name in (engines or available_engines()) if name != "lattice"]
    result = _solve(instance, target_class, clock, find_all, tol, seed, engines, progress, ablate, cluster)
    result.time_s = clock.elapsed()
    result.target_class = target_class
    return result


def _solve(instance, target_class, clock, find_all, tol, seed, engines, progress, ablate, cluster=None) -> Result:
    act = instance.act
    if instance.residual_free:
        raise InputError(instance.source, "the block is residual-free (block = residual_free): there is no skip to absorb")
    if act.kind != activations.ODD_LINEAR:
        return theorem_result(instance, target_class, time_limit=clock.remaining(), stop=clock.stop, seed=seed)
    stages = {"classify": act.kind, "activation": act.name, "c": str(act.c), "class": target_class}
    degeneracy = find_degeneracy(instance)
    stages["weights"] = degeneracy.describe()
    if target_class == BIAS_FREE and instance.b_up is not None and bool(np.any(instance.b_up != 0)):
        decided = bias_inside_verdict(instance, degeneracy, stages)
        if decided is not None:
            return decided
    if "gram" not in ablate and gram_applies(instance) and instance.d**2 * instance.n > GRAM_SIZE:
        # Large blocks: the exact d² × n system is too big to form (MATH.md §6).
        result = gram_decide(instance, tol=tol, target_class=target_class)
        if result.decided:
            return result
    context = _Context(instance, degeneracy, stages, tol, find_all, clock, target_class, cluster)
    stage_start = time.perf_counter()
    system = build_system(instance, tol)
    stages["system"] = {"equations": system.m, "unknowns": system.n, "max_bits": system.max_abs().bit_length(), "time_s": _since(stage_start)}
    if system.infeasible_row is not None:
        a, b = system.rows[system.infeasible_row]
        return context.negative(f"entry ({a}, {b}) of c·W_down[:,S]·W_up[S,:] is 0 for every S but A[{a},{b}]/c ≠ 0" + (" beyond τ" if tol else ""), {"zero_row": [a, b]})
    reduction = None
    if tol is None:
        stage_start = time.perf_counter()
        reduction = reduce_system(system.M, system.t, lattice="lattice" not in ablate)
        stages["reduce"] = dict(reduction.stages(), time_s=_since(stage_start))
        decided = _decide_by_linear_algebra(context, system, reduction)
        if decided is not None:
            return decided
    if "lattice" in ablate and reduction is not None:
        reduction = None  # no kernel coordinates: CP-SAT models M z = t directly
    return _search(context, system, reduction, clock, seed, engines, progress, "prune" in ablate)


class _Context:
    """What every stage needs to turn facts into a verdict."""

    def __init__(self, instance, degeneracy, stages, tol, find_all, clock, target_class=AFFINE, cluster=None):
        self.instance = instance
        self.target_class = target_class
        self.degeneracy = degeneracy
        self.stages = stages
        self.tol = tol
        self.find_all = find_all
        self.clock = clock
        self.cluster = cluster  # where a long lattice enumeration may go

    @property
    def extension(self) -> bool:
        return self.instance.act.extension

    def negative(self, proof: str, certificate: dict | None = None, engine: str = "exact") -> Result:
        """``not_absorbable`` with its proof; on degenerate weights the §7 decision, else ``unknown``."""
        scope = f"no index set S with |S| ≥ d satisfies (★) within τ = {self.tol}" if self.tol is not None else "no index set S satisfies (★)"
        if self.instance.act.linear:
            return linear_fallback(self.instance, self.tol, f"{scope} ({proof})", self.stages)
        if not self.degeneracy.nondegenerate:
            # The exact decision for degenerate weights (MATH.md §7, an extension):
            # only its proven answers replace "unknown". It spends the caller's remaining time.
            decided = decide_degenerate(self.instance, tol=self.tol, time_limit=self.clock.remaining(), stop=self.clock.stop)
            if decided is not None and decided.status == ABSORBABLE and self.target_class == BIAS_FREE and not _bias_free_witness(decided):
                decided = None  # the §7 witness needs a bias inside σ: it says nothing about bias-free blocks
            if decided is not None and decided.decided:
                decided.reason = f"{scope} ({proof}); {decided.reason}"
                decided.stages = dict(self.stages, degenerate=decided.stages)
                decided.count, decided.solutions = 0, [] if self.find_all else None
                return decided
            return Result(
                UNKNOWN,
                f"{scope} ({proof}), but the weights are {self.degeneracy.describe()}: (★) is sufficient, "
                "not necessary, for degenerate weights (MATH.md §3)",
                stages=self.stages, certificate=certificate, engine=engine, complete=True, count=0, solutions=[] if self.find_all else None,
            )
        reason = f"{scope}: {proof}; {necessity(self.instance, self.target_class)}"
        return Result(
            NOT_ABSORBABLE, reason, stages=self.stages, certificate=certificate, engine=engine,
            extension=self.extension or self.target_class == AFFINE, complete=True, count=0, solutions=[] if self.find_all else None,
        )

    def positive(self, supports: list, complete: bool, engine: str, note: str = "") -> Result:
        """``absorbable`` after every support passes the exact verifier."""
        checked = []
        for support in supports:
            report = verify(self.instance, support, tol=self.tol)
            if not report.holds:
                raise AssertionError(f"engine {engine} reported S = {support}, which fails the exact verifier")
            checked.append(list(report.index_set))
        first = checked[0]
        what = "(★) holds exactly" if self.tol is None else f"max residual ≤ τ = {self.tol}"
        reason = f"S = {first} verified exactly: {what}; witness by the flip construction (MATH.md §2)"
        if note:
            reason += f"; {note}"
        return Result(
            ABSORBABLE, reason, index_set=first, verified=True,
            count=len(checked) if (self.find_all and complete) else None,
            solutions=checked if self.find_all else None, stages=self.stages, engine=engine,
            extension=self.extension, complete=complete,
        )


def _bias_free_witness(result: Result) -> bool:
    """Whether a §7 witness has no bias inside σ."""
    block = (result.certificate or {}).get("witness", {})
    return all(Fraction(v) == 0 for v in block.get("b_up", []))


def _since(start: float) -> float:
    return round(time.perf_counter() - start, 6)


def _decide_by_linear_algebra(context: _Context, system: System, reduction) -> Result | None:
    """Verdicts that need no search: span, unique solution, integer lattice."""
    if not reduction.span_feasible:
        return context.negative(
            "t = vec(−A/c) is outside the column space of M (certificate y: yᵀM = 0, yᵀt ≠ 0)",
            {"kind": "span", "y": [str(v) for v in reduction.span_certificate], "rows": [list(r) for r in system.rows]},
        )
    if reduction.unique_solution is not None:
        z = reduction.unique_solution
        if all(v in (0, 1) for v in z):
            support = [i for i, v in enumerate(z) if v == 1]
            return context.positive([support], True, "exact", "rank M = n: the only real solution is 0/1")
        bad = next(i for i, v in enumerate(z) if v not in (0, 1))
        return context.negative(
            f"rank M = n = {system.n}, so the real solution z* of M z = t is unique, and z*[{bad}] = {z[bad]} is not 0 or 1",
            {"kind": "unique_solution", "z_star": [str(v) for v in z]},
        )
    if reduction.integer_feasible is False:
        return context.negative(reduction.lattice_reason, {"kind": "lattice"})
    return None


def _search(context: _Context, system: System, reduction, clock: _Clock, seed, engines, progress, skip_pruning=False) -> Result:
    stages = context.stages
    stage_start = time.perf_counter()
    pruning = no_pruning(system) if skip_pruning else prune(system)
    stages["prune"] = dict(pruning.stages(), time_s=_since(stage_start))
    if pruning.infeasible:
        return context.negative(pruning.reason, {"kind": "interval"}, engine="prune")
    rank_failure = _rank_infeasible(context.instance, pruning.fixed) if context.tol is None and not skip_pruning else None
    if rank_failure:
        return context.negative(rank_failure, {"kind": "rank"}, engine="prune")
    if context.tol is not None:
        # With a tolerance |S| ≥ d is a constraint on the whole set: keep one part.
        pruning.components = whole_part(system, pruning.fixed)
    parts = [part for part in pruning.components if part[0] and part[1]]
    names = list(engines or available_engines())
    stages["engines"] = names
    per_part = []
    for rows, columns in parts:
        sub = subsystem(system, pruning.fixed, rows, columns)
        result = _search_part(context, sub, system, reduction, pruning, len(parts) == 1, clock, seed, names, progress)
        mapped = [[columns[i] for i in support] for support in (result.solutions or [])]
        per_part.append((result, mapped))
        if result.status == INFEASIBLE:
            return context.negative(f"complete search ({result.engine}) of an independent part with units {columns} found no solution: {result.reason}", {"kind": "search", "part": columns}, engine=result.engine)
        if result.status == UNKNOWN and not (context.find_all and mapped):
            return _unknown(context, result, clock)
    return _combine(context, pruning, per_part, clock)


def _search_part(context, sub, system, reduction, pruning, whole, clock, seed, names, progress) -> Result:
    """Search one independent part, reusing the global reduction when nothing was removed."""
    part_reduction = None
    if context.tol is None and reduction is not None:
        untouched = whole and sub.n == system.n and sub.m == system.m
        part_reduction = reduction if untouched else reduce_system(sub.M, sub.t)
        if part_reduction.integer_feasible is False or not part_reduction.span_feasible:
            return Result(INFEASIBLE, part_reduction.lattice_reason or "t outside the span after fixings", engine="exact", complete=True, solutions=[], count=0)
    fixed_in = int((pruning.fixed == 1).sum())
    # (★) needs |S| ≥ d (implied when exact, part of the definition with a tolerance).
    min_size = max(0, context.instance.d - fixed_in) if whole else 0
    return run_portfolio(sub, part_reduction, engines=names, find_all=context.find_all, time_limit=clock.remaining(), seed=seed, stop=clock.stop, progress=progress, min_size=min_size, cluster=context.cluster)


def _rank_infeasible(instance: Instance, fixed: np.ndarray) -> str | None:
    """(★) needs the selected W_up rows and W_down columns to span R^d."""
    allowed = [i for i in range(instance.n) if fixed[i] != 0]
    up, _ = instance.exact("W_up")
    down, _ = instance.exact("W_down")
    if not allowed:
        return f"every unit is excluded, but (★) needs rank d = {instance.d}"
    if fmpz_matrix(up[allowed, :]).rank() < instance.d:
        return f"the W_up rows of the units not excluded by pruning span less than R^{instance.d}, but (★) needs rank d"
    if fmpz_matrix(down[:, allowed]).rank() < instance.d:
        return f"the W_down columns of the units not excluded by pruning span less than R^{instance.d}, but (★) needs rank d"
    return None


def _unknown(context: _Context, result: Result, clock: _Clock) -> Result:
    if clock.stop.is_set():
        why = "interrupted"
    elif clock.time_limit is not None and clock.expired():
        why = "time limit reached"
    else:
        why = "no engine could decide"
    return Result(UNKNOWN, f"{why} before a proof: {result.reason}", stages=dict(context.stages, search=result.stages), engine=result.engine)


def _combine(context: _Context, pruning, per_part, clock: _Clock) -> Result:
    """Join the parts' solutions with the fixed units into index sets."""
    fixed_in = [i for i in range(len(pruning.fixed)) if pruning.fixed[i] == 1]
    free_alone = []  # free units in no equation: either choice works
    engines = sorted({r.engine for r, _ in per_part if r.engine}) or ["prune"]
    context.stages["search"] = {r.engine: r.stages for r, _ in per_part}
    complete = all(r.complete or not context.find_all for r, _ in per_part)
    choices = [mapped for _, mapped in per_part]
    for rows, columns in pruning.components:
        if not rows:
            free_alone.extend(columns)
            choices.extend([[], [i]] for i in columns)
    total = 1
    for options in choices:
        total *= len(options)
    supports = []
    for combo in itertools.islice(itertools.product(*choices), MAX_LISTED if context.find_all else 1):
        base = sorted(fixed_in + [i for part in combo for i in part])
        supports.append(base)
    # Only a tolerance admits sets smaller than d, and the definition excludes them.
    supports = [support for support in supports if len(support) >= context.instance.d]
    if not supports:
        return context.negative(f"the only sets left by the search have fewer than d = {context.instance.d} units", {"kind": "size"}, engine="+".join(engines))
    if not context.find_all:
        supports = supports[:1]
    note = ""
    if free_alone:
        note = f"units {free_alone} appear in no equation: each may be flipped or not"
    incomplete = not complete or clock.stop.is_set()
    result = context.positive(supports, complete and not incomplete, "+".join(engines), note)
    if context.find_all:
        result.count = total if complete else None
        if incomplete:
            result.reason += f"; enumeration incomplete ({'interrupted' if clock.stop.is_set() else 'time limit'}): {len(supports)} found so far"
    return result
