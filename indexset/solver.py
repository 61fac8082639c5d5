"""The one front door: ``solve(obj)`` for a block, a hyper-connection layer or a stack.

One data path, whatever the object (docs/DESIGN.md)::

    solve(obj, target_class=...)
      stack  → every block along the path below → theory.stacks.combine
      block  → theory: activation class, theorem verdicts stop here
             → large.gram: big blocks, certified distance, M never formed
             → theory.rank: hyper-connection layers, no S by ranks alone
             → search.decide_system: (★) as a 0/1 system (algebra, pruning, engines)
             → theory.degenerate: "no S" on degenerate weights (MATH.md §7)
             → exact.verify on every hit → Result

Every option reaches every kind of object; the ones that mean nothing for
a stack (``find_all``, ``tol``) are refused there, not ignored.
"""

from __future__ import annotations

import itertools
import time
from dataclasses import dataclass, replace
from fractions import Fraction

import numpy as np

from indexset.budget import Budget
from indexset.classes import AFFINE, BIAS_FREE, check_class
from indexset.errors import InputError
from indexset.exact.verify import failing_index_sets, verify
from indexset.large.gram_tuning import DEFAULT_TUNING as GRAM_TUNING
from indexset.model.activations import ODD_LINEAR, UNCOVERED
from indexset.model.hyper import hyper_info
from indexset.model.instance import Instance
from indexset.model.stack import Stack
from indexset.result import ABSORBABLE, FEASIBLE, INFEASIBLE, NOT_ABSORBABLE, UNKNOWN, Result
from indexset.search.decide import decide_system
from indexset.search.system import Ties, build_system, tie_columns
from indexset.search.tuning import DEFAULT as SEARCH_TUNING
from indexset.theory import stacks
from indexset.theory.degenerate import decide_degenerate
from indexset.theory.nondegeneracy import find_degeneracy
from indexset.theory.rank import rank_argument
from indexset.theory.shortrun import Workers
from indexset.theory.theorems import bias_inside_verdict, linear_fallback, necessity, theorem_result, theorem_verdict
from indexset.trace import Trace

ABLATIONS = ("prune", "lattice", "gram", "ties")
"""Stages that ``solve(..., ablate=...)`` can switch off (for benchmarks)."""


@dataclass(frozen=True)
class Options:
    """What a caller asks for; the same for every block of a stack."""

    target_class: str = AFFINE
    find_all: bool = False
    tol: Fraction | None = None
    seed: int = 0
    engines: tuple | None = None
    progress: object = None
    ablate: frozenset = frozenset()
    cluster: object = None
    engine_options: tuple = ()


def solve(obj, *, target_class=AFFINE, time_limit=None, find_all=False, tol=None, seed=0, engines=None, stop=None, progress=None, ablate=(), cluster=None,
          lattice_tuning=None) -> Result:
    """Decide whether a block, hyper-connection layer or stack can absorb its skip connection.

    Parameters
    ----------
    obj : Instance or Stack
        A block (an effective hyper-connection layer is a block too, see
        :func:`indexset.model.hyper.effective_instance`) or a stack.
    target_class : {"affine", "bias-free"}
        Which residual-free blocks count (:mod:`indexset.classes`): with
        biases (default) or without a bias inside σ.
    time_limit : float, optional
        Seconds for the whole call; past it the answer is ``unknown``
        (with whatever was proven so far).
    find_all : bool
        Enumerate every index set S (``count`` and ``solutions`` filled
        when the enumeration completes). Blocks only.
    tol : Fraction, optional
        Accept ``max |c·W_down[:,S]·W_up[S,:] + A| ≤ tol``. Blocks only.
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
    cluster : indexset.search.cluster.Cluster, optional
        Lets the lattice engine run a long enumeration as Dask tasks there;
        answers are the same.
    lattice_tuning : indexset.search.lattice.LatticeTuning, optional
        The lattice engine's tunables (speed only; answers are the same).

    Returns
    -------
    Result
        ``absorbable`` only with an exactly verified S or witness;
        ``not_absorbable`` only with a proof; otherwise ``unknown`` with the
        reason. ``target_class`` names the class the verdict is about.

    Raises
    ------
    InputError
        Bad options, a residual-free block, a stack with ``find_all`` or ``tol``.
    """
    options = _options(target_class, find_all, tol, seed, engines, progress, ablate, cluster)
    if lattice_tuning is not None:
        options = replace(options, engine_options=(("tuning", lattice_tuning),))
    clock = Budget.of(time_limit, stop)
    if isinstance(obj, Stack):
        result = _solve_stack(obj, options, clock)
    elif isinstance(obj, Instance):
        result = _solve_block(obj, options, clock)
    else:
        raise InputError("obj", f"expected an Instance or a Stack, got {type(obj).__name__}")
    result.time_s = clock.elapsed()
    result.target_class = options.target_class
    return result.note_halt(clock.halt_reason(), find_all)


def _options(target_class, find_all, tol, seed, engines, progress, ablate, cluster) -> Options:
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise InputError("seed", f"must be an integer ≥ 0, got {seed!r}")
    ablate = frozenset(ablate)
    if not ablate <= set(ABLATIONS):
        raise InputError("ablate", f"unknown ablation {sorted(ablate - set(ABLATIONS))}; choose from {ABLATIONS}")
    if "lattice" in ablate:
        from indexset.search.portfolio import available_engines

        engines = [name for name in (engines or available_engines()) if name != "lattice"]
    return Options(check_class(target_class), bool(find_all), None if tol is None else Fraction(tol), int(seed),
                   None if engines is None else tuple(engines), progress, ablate, cluster)


# ================================================================== stacks
def _solve_stack(stack: Stack, options: Options, clock: Budget) -> Result:
    if stack.residual_free:
        raise InputError(stack.source, "the stack is residual-free (block = residual_free): there is no skip to absorb")
    if options.find_all or options.tol is not None:
        raise InputError("find_all" if options.find_all else "tol", "a stack is decided block by block: it takes neither find_all nor tol")
    by_theorem = stacks.depth_corollary(stack, options.target_class)
    if by_theorem is None and stack.act.kind == UNCOVERED:
        by_theorem = theorem_verdict(stack.act, False, None, options.target_class)
        by_theorem.reason = f"stack of {stack.L} block(s): {by_theorem.reason}"
    if by_theorem is not None:
        return by_theorem
    results = []
    for index, block in enumerate(stack.blocks):
        # Each block gets an equal share of what is left.
        remaining = clock.remaining()
        share = None if remaining is None else max(remaining / (stack.L - index), 1e-3)
        results.append(_solve_block(block, options, Budget.of(share, clock.stop)))
    return stacks.combine(stack, results)


# ================================================================== blocks
def _solve_block(instance: Instance, options: Options, clock: Budget) -> Result:
    act = instance.act
    if instance.residual_free:
        raise InputError(instance.source, "the block is residual-free (block = residual_free): there is no skip to absorb")
    if act.kind != ODD_LINEAR:
        return theorem_result(instance, options.target_class, budget=clock, seed=options.seed)
    trace = Trace({"classify": act.kind, "activation": act.name, "c": str(act.c), "class": options.target_class})
    stages = trace.record  # every stage below records into the one trace, the searches' and §7's too
    degeneracy = find_degeneracy(instance)
    stages["weights"] = degeneracy.describe()
    if options.target_class == BIAS_FREE and instance.b_up is not None and bool(np.any(instance.b_up != 0)):
        decided = bias_inside_verdict(instance, degeneracy, stages)
        if decided is not None:
            return decided
    if "gram" not in options.ablate and instance.n <= instance.d**2 and instance.d**2 * instance.n > GRAM_TUNING.first_from_cells:
        # Large blocks: the exact d² × n system is too big to form (MATH.md §6).
        from indexset.large.gram import gram_decide  # scipy's sparse eigensolver, only for large blocks

        result = gram_decide(instance, tol=options.tol, target_class=options.target_class)
        if result.decided:
            return result
        stages["gram"] = {"reason": result.reason, "certificate": result.certificate}  # kept for distance()
    verdict = _Verdict(instance, degeneracy, trace, options, clock)
    if options.tol is None and hyper_info(instance) is not None:
        rank = rank_argument(instance)
        if rank["applies"]:
            stages.update(path="hyper-connection rank argument", rank_write=rank["rank_write"], rank_read=rank["rank_read"])
            return verdict.negative(rank["text"], {"kind": "rank", "rank_write": rank["rank_write"], "rank_read": rank["rank_read"], "d": rank["d"]}, "rank")
    return _by_index_sets(instance, verdict, options, clock, trace)


def _by_index_sets(instance: Instance, verdict: _Verdict, options: Options, clock: Budget, trace: Trace) -> Result:
    """Decide (★) as a 0/1 system and turn the system's answer into the block's.

    Tied units (equal columns of M) are one bounded unknown each
    (:func:`indexset.search.system.tie_columns`); its solutions are turned
    back into index sets.
    """
    began, stages = time.perf_counter(), trace.record
    system = build_system(instance, options.tol)
    # Merged only to count or list: a solution then stands for many index sets. A first solution
    # comes sooner from the 0/1 system, whose tied columns give it more solutions (BENCHMARKS.md).
    merge = options.find_all and "ties" not in options.ablate
    ties = tie_columns(system) if merge else Ties(system, tuple((j,) for j in range(system.n)))
    stages["system"] = {"equations": system.m, "unknowns": ties.system.n, "units": system.n, "max_bits": system.max_abs().bit_length(),
                        "time_s": round(time.perf_counter() - began, 6)}

    def rank_test(fixed):
        rank = rank_argument(instance, ties.unit_fixings(fixed))
        return rank["text"] if rank["applies"] else None

    decided = decide_system(
        ties.system, find_all=options.find_all, min_size=instance.d, budget=clock, seed=options.seed, engines=options.engines,
        progress=options.progress, cluster=options.cluster, prune_system="prune" not in options.ablate,
        use_lattice="lattice" not in options.ablate, check_fixed=rank_test if options.tol is None else None,
        brute_width=SEARCH_TUNING.brute_width if not options.ablate else 0, engine_options=dict(options.engine_options), trace=trace,
    )
    decided = _as_index_sets(ties, decided)
    if decided.status == FEASIBLE:
        return verdict.positive(decided)
    if decided.status == INFEASIBLE:
        return verdict.negative(_proof(decided, options.tol, instance.d), decided.certificate, decided.engine)
    return Result(UNKNOWN, decided.reason, stages=stages, engine=decided.engine)


def _as_index_sets(ties: Ties, decided: Result) -> Result:
    """The merged system's solutions (units per group) as index sets, and their number."""
    if not ties.merged or decided.status != FEASIBLE:
        return decided
    solutions = decided.solutions or [decided.index_set]
    # Lazily: a solution may stand for many supports, and only the first max_listed of all are kept.
    listed = list(itertools.islice(itertools.chain.from_iterable(ties.supports(values, SEARCH_TUNING.max_listed) for values in solutions), SEARCH_TUNING.max_listed))
    # Each merged solution stands for its multiplicity of index sets: a count needs every merged solution listed.
    every = decided.count is not None and decided.solutions is not None and len(decided.solutions) == decided.count
    count = sum(ties.multiplicity(values) for values in solutions) if every else None
    return replace(decided, index_set=ties.support(solutions[0]), solutions=listed if decided.solutions else None, count=count)


def _proof(decided: Result, tol, d: int) -> str:
    """The system's reason for "no solution", in the words of (★)."""
    kind = (decided.certificate or {}).get("kind")
    if kind == "zero_row":
        a, b = decided.certificate["row"]
        return f"entry ({a}, {b}) of c·W_down[:,S]·W_up[S,:] is 0 for every S but A[{a},{b}]/c ≠ 0" + (" beyond τ" if tol else "")
    if kind == "span":
        return "t = vec(−A/c) is outside the column space of M (certificate y: yᵀM = 0, yᵀt ≠ 0)"
    if kind == "size":
        return f"the only sets left by the search have fewer than d = {d} units"
    return decided.reason


class _Verdict:
    """Turns facts about index sets into a verdict about the block, for its class."""

    def __init__(self, instance: Instance, degeneracy, trace: Trace, options: Options, clock: Budget) -> None:
        self.instance, self.degeneracy, self.trace = instance, degeneracy, trace
        self.options, self.clock = options, clock

    @property
    def stages(self) -> dict:
        """The block's stages: the record of its one trace."""
        return self.trace.record

    def negative(self, proof: str, certificate: dict | None = None, engine: str = "exact") -> Result:
        """``not_absorbable`` with its proof; on degenerate weights the §7 decision, else ``unknown``."""
        tol, find_all, instance = self.options.tol, self.options.find_all, self.instance
        listing = {"count": 0, "solutions": [] if find_all else None}
        scope = f"no index set S with |S| ≥ d satisfies (★) within τ = {tol}" if tol is not None else "no index set S satisfies (★)"
        if instance.act.linear:
            return linear_fallback(instance, tol, f"{scope} ({proof})", self.stages)
        if not self.degeneracy.nondegenerate:
            # The exact decision for degenerate weights (MATH.md §7, an extension):
            # only its proven answers replace "unknown". It spends the caller's remaining time.
            decided = decide_degenerate(instance, tol=tol, budget=self.clock.timed_from_now(), trace=self.trace,
                                         workers=Workers(cluster=self.options.cluster, progress=self.options.progress))
            if decided is not None and decided.status == ABSORBABLE and self.options.target_class == BIAS_FREE and not _bias_free_witness(decided):
                decided = None  # the §7 witness needs a bias inside σ: it says nothing about bias-free blocks
            if decided is not None and decided.decided:
                decided.reason = f"{scope} ({proof}); {decided.reason}"
                decided.stages = self.stages
                decided.count, decided.solutions = listing["count"], listing["solutions"]
                return decided
            open_cases = "" if decided is None else f"; {decided.reason}"
            return Result(
                UNKNOWN,
                f"{scope} ({proof}), but the weights are {self.degeneracy.describe()}: (★) is sufficient, "
                f"not necessary, for degenerate weights (MATH.md §3){open_cases}",
                stages=self.stages,
                certificate=certificate, engine=engine, complete=True, **listing,
            )
        reason = f"{scope}: {proof}; {necessity(instance, self.options.target_class)}"
        extension = instance.act.extension or self.options.target_class == AFFINE or instance.has_biases
        return Result(NOT_ABSORBABLE, reason, stages=self.stages, certificate=certificate, engine=engine,
                      extension=extension, complete=True, **listing)

    def positive(self, decided: Result) -> Result:
        """``absorbable`` after every support the search found passes the exact verifier."""
        tol, find_all = self.options.tol, self.options.find_all
        supports = decided.solutions or [decided.index_set]
        # The first set through the verifier that reports; every set through its bulk form.
        failing = ([] if verify(self.instance, supports[0], tol=tol).holds else [supports[0]]) or failing_index_sets(self.instance, supports, tol=tol)
        if failing:
            raise AssertionError(f"engine {decided.engine} reported S = {list(failing[0])}, which fails the exact verifier")
        checked = [sorted(int(i) for i in support) for support in supports]
        what = "(★) holds exactly" if tol is None else f"max residual ≤ τ = {tol}"
        reason = f"S = {checked[0]} verified exactly: {what}; witness by the flip construction (MATH.md §2)"
        if decided.reason and not decided.reason.startswith("complete enumeration"):
            reason += f"; {decided.reason}"
        return Result(
            ABSORBABLE, reason, index_set=checked[0], verified=True,
            count=decided.count if find_all else None, solutions=checked if find_all else None,
            stages=self.stages, engine=decided.engine, extension=self.instance.act.extension, complete=decided.complete,
        )


def _bias_free_witness(result: Result) -> bool:
    """Whether a §7 witness has no bias inside σ."""
    block = (result.certificate or {}).get("witness", {})
    return all(Fraction(v) == 0 for v in block.get("b_up", []))


# ================================================================ distance
FLOAT_KEYS = ("W_up", "W_down", "skip", "b_up", "b_down", "W_gate")


def distance(obj, result: Result | None = None, tol=None):
    """The certified distance to (★) of a block with float weights (MATH.md §6), or why there is none.

    ``min over S of ‖c·W_down[:,S]·W_up[S,:] + A‖_F`` is bracketed by the
    Gram bound of :mod:`indexset.large.gram`: how far a float block is from
    the exact equality that an exact-mode ``not_absorbable`` refuses. On
    nondegenerate weights (★) is the criterion of absorbability, so this is
    the distance to it in that sense.

    Parameters
    ----------
    obj : Instance or Stack
    result : Result, optional
        What :func:`solve` answered for ``obj``: a Gram certificate it
        carries is reused, and an exactly verified S (without ``tol``)
        gives the distance 0.
    tol : Fraction, optional
        The tolerance ``result`` was found with.

    Returns
    -------
    dict, list or None
        None when no weight array is float (integer and rational weights
        are decided exactly); for a block ``{"applies": True, "lower",
        "upper", "relative_lower", "relative_upper", "nearest_S",
        "upper_exact"}`` (relative: divided by ``‖A‖_F``) or
        ``{"applies": False, "why"}``; for a stack a list of those, one
        per block (``"block"``: its index).
    """
    if isinstance(obj, Stack):
        per_block = [distance(block) for block in obj.blocks]
        if all(entry is None for entry in per_block):
            return None
        return [dict(entry or {"applies": False, "why": "exact weights: decided exactly"}, block=index) for index, entry in enumerate(per_block)]
    if not any(getattr(obj, key) is not None and getattr(obj, key).dtype.kind == "f" for key in FLOAT_KEYS):
        return None
    act = obj.act
    if act.kind != ODD_LINEAR:
        return {"applies": False, "why": f"σ = {act.name} is not odd-linear: (★), whose distance the Gram bound measures, is not its criterion"}
    if obj.n > obj.d**2:
        return {"applies": False, "why": f"n = {obj.n} > d² = {obj.d**2}: the real solution of M z = t is not unique, so the Gram bound (MATH.md §6) does not apply"}
    if result is not None and result.verified and result.index_set is not None and tol is None:
        return {"applies": True, "lower": 0.0, "upper": 0.0, "relative_lower": 0.0, "relative_upper": 0.0,
                "nearest_S": list(result.index_set), "upper_exact": True}
    certificate = _gram_certificate(obj, result)
    if certificate is None:
        from indexset.large.gram import gram_decide  # scipy, only for float blocks

        gram = gram_decide(obj)
        certificate = gram.certificate
        if certificate is None:
            return {"applies": False, "why": gram.reason}
    return {
        "applies": True,
        "lower": certificate["distance_lower"], "upper": certificate["distance_upper"],
        "relative_lower": certificate["relative_lower"], "relative_upper": certificate["relative_upper"],
        "nearest_S": certificate["rounded_set"], "upper_exact": certificate["rounded_upper_exact"],
    }


def _gram_certificate(instance: Instance, result: Result | None) -> dict | None:
    """The Gram certificate :func:`solve` already computed without a tolerance, if any."""
    if result is None:
        return None
    for certificate in (result.certificate, (result.stages or {}).get("gram", {}).get("certificate")):
        if certificate and certificate.get("kind") == "gram_distance_bound" and certificate.get("tolerance") is None:
            return certificate
    return None
