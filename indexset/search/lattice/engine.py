"""The lattice engine: the plan of one search, top-down.

1. Exact algebra may answer at once (:func:`answers.by_algebra`).
2. Small trees are walked in NumPy before Numba is loaded (:mod:`.small`);
   once an earlier search of the process has loaded it, or once the
   process's NumPy walks have cost as much as its load, the kernel walks them.
3. For a first solution, limited-discrepancy passes, with linear pruned
   passes beside them, look for one in a few per cent of the predicted
   walk (:mod:`.pruned`): of a strongly reduced basis built beside the
   kernels' load; once loaded, of the default basis first. When that
   basis's complete walk is hopeless, its discrepancy passes run in a
   thread of their own beside step 4, on the core it leaves idle.
4. A basis is chosen while the kernels load in a thread (:mod:`.choose`).
5. For a first solution, pruned passes (and, for hopeless trees,
   extreme-pruning trials) look for one in a few per cent of the
   predicted time (:mod:`.pruned`). Passes prove nothing.
6. The whole tree is walked by the kernel: in this thread, shared by
   several, or as Dask tasks on a cluster the caller hands in (:mod:`.walk`);
   a shared walk far past its prediction may restart once on a stronger
   basis (:mod:`.rung`). For a first solution of a long walk, one of its
   threads walks extreme-pruning trials for a share of the predicted time
   first, and joins the walk after them.

Each leaf is checked with exact integers and every reported z is checked
against ``M z = t`` with Python ints, so floating point can only ever
cost time, never a solution or a wrong answer (MATH.md §6.1).
"""

from __future__ import annotations

import functools
import threading
import time
from dataclasses import replace

import numpy as np

from indexset.budget import Budget
from indexset.result import FEASIBLE, Result
from indexset.search.lattice import answers
from indexset.search.lattice.basis import Lattice, decode
from indexset.search.lattice.choose import Choice, choose_lattice, default_choice, estimated, stronger_basis, stronger_pays
from indexset.search.lattice.job import Job
from indexset.search.lattice.pruned import Beside, Trials, discrepancy_beside, discrepancy_passes, passes_seconds, pruned_passes, trials_beside
from indexset.search.lattice.rung import RESTART, Rung
from indexset.search.lattice.small import SmallTrees, numpy_walks_pay, small_tree_answer
from indexset.search.lattice.tuning import DEFAULT, LatticeTuning
from indexset.search.lattice.walk import NAME, Run, kernels_loaded, kernels_loading, walk_shared, walk_whole
from indexset.search.reduce import Reduction, reduce_system
from indexset.search.system import System
from indexset.trace import Trace


def search(system: System, reduction: Reduction | None = None, *, find_all: bool = False, budget: Budget | None = None, time_limit: float | None = None,
           seed: int = 0, stop=None, progress=None, bkz_block: int | None = None, embedding: str = "cvp", workers: int = 1, cluster=None, plan=None,
           tuning: LatticeTuning = DEFAULT, count_only: bool = False, trace: Trace | None = None) -> Result:
    """Decide ``M z = t`` over z ∈ {0,1}^n by lattice enumeration.

    Parameters
    ----------
    system : System
        Exact integer system; tolerance systems (``slack``) are not supported
        and answer ``unknown``.
    reduction : Reduction, optional
        ``reduce_system(system.M, system.t)`` if the caller has it.
    find_all : bool
        Enumerate every solution (each exactly once) instead of stopping at
        the first.
    budget : Budget, optional
        The caller's deadline and stop request (then ``time_limit`` and
        ``stop`` are not read).
    time_limit : float, optional
        Seconds; the search stops with ``unknown`` (and what it found) after it.
    seed : int
        Seed of the tree-size estimates, the candidate bases and the trials.
    stop : threading.Event, optional
        Stops the search soon after it is set.
    progress : callable, optional
        Called about once a second with a dict of counters.
    bkz_block : int, optional
        fpylll BKZ block size after LLL (default ``tuning.bkz_block`` for
        lattices of dimension ≥ ``tuning.bkz_from``, else LLL only).
    embedding : {"cvp", "homogeneous"}
        The kernel lattice with the target outside (``cvp``), or the Kannan
        embedding with the target inside (see :func:`.basis.build_lattice`).
    workers : int
        Threads of the pruned passes (one pass each) and of the enumeration
        (sharing the tree: subtrees of one level handed out dynamically),
        unless ``plan`` decides the enumeration's.
    cluster : indexset.search.cluster.Cluster, optional
        Where to send the subtrees as independent Dask tasks when the cluster
        accepts the search (by its size); otherwise the search stays in this
        process. The engine only calls the cluster's ``accepts`` and
        ``enumerate_split``: the split search builds on this engine, never
        the other way round.
    plan : callable, optional
        ``plan(predicted_seconds) -> workers``, called once the basis is
        chosen, with the predicted enumeration time (None when the tree is
        too small to estimate); it overrides ``workers``. Not called when a
        NumPy walk answers before the kernel's search.
    tuning : LatticeTuning
        The engine's tunables (speed only, never the answer).
    count_only : bool
        With ``find_all``: count every solution, listing only the first few
        (the kernel counts the others itself).
    trace : Trace, optional
        Where the search records its stages as it goes (basis, estimate,
        passes, trials, nodes): a caller's, so that a search stopped or
        failed still shows what it did.

    Returns
    -------
    Result
        ``feasible`` with the solutions found, ``infeasible`` after a
        complete search (or an exact certificate), else ``unknown``.
    """
    budget = budget or Budget.of(time_limit, stop)
    if system.slack is not None:
        return answers.unknown(Job(system, None, budget=budget), "the lattice engine decides exact equations only; tolerance systems (slack) are left to the CP-SAT engine")
    if reduction is None or (reduction.span_feasible and reduction.integer_feasible is None):
        reduction = reduce_system(system.M, system.t, upper=system.upper)  # none given, or one without its lattice
    if bkz_block is None:
        bkz_block = tuning.bkz_block if reduction.kernel_dimension >= tuning.bkz_from else 0
    job = Job(system, reduction, find_all, seed, budget, tuning, bkz_block, embedding, progress, count_only and find_all)
    decided = answers.by_algebra(job)
    if decided is not None:
        return decided
    trace = trace or Trace()
    trace.merge(reduction.stages())
    with _one_blas_thread():
        return _search_lattice(job, trace, workers, cluster, plan)


def _one_blas_thread():
    """BLAS on one thread while the engine searches.

    Its linear algebra is small (QR and least squares of one basis, the
    NumPy walk's products over a chunk of nodes), where waking a BLAS
    thread pool costs more than the work (BENCHMARKS.md, "Evidence for tuning
    values", one BLAS thread), and the engine's own threads already use the cores. The
    limit holds for the process while the search runs (BLAS has no
    per-thread setting).
    """
    return _blas_controller().limit(limits=1, user_api="blas")


@functools.cache
def _blas_controller():
    """The process's thread pools, found once (finding them reads every loaded library)."""
    from threadpoolctl import ThreadpoolController

    return ThreadpoolController()


def _search_lattice(job: Job, trace: Trace, workers: int, cluster, plan) -> Result:
    """The search once exact algebra has left a lattice to walk (steps 2–6 of the module's plan)."""
    system, budget, tuning, find_all, progress = job.system, job.budget, job.tuning, job.find_all, job.progress
    bkz_block = job.bkz_block
    prepared = time.perf_counter()
    # The NumPy walks exist to answer before Numba loads: once it is loaded (an earlier search of this process),
    # or once this process's NumPy walks have cost one load (ski rental), the kernel walks every tree.
    numpy_walks = tuning.numpy_walks_once_loaded or (not kernels_loaded() and numpy_walks_pay(job))
    small = small_tree_answer(job) if numpy_walks else SmallTrees(None, job.build(bkz_block=0))
    if small.answer is not None:
        return small.answer
    halted = budget.halt_reason()
    if halted is not None:  # before the kernel's search: loading Numba alone would take longer
        trace.seconds("basis", prepared)
        return answers.walked(job, [], False, halted, trace.record)
    beside, early = None, None
    try:
        with kernels_loading(small.default_basis()) as loading:
            default = default_choice(job, small.lll, small.reduced)
            stronger = None
            if not find_all:
                found, stronger, beside = _discrepancy_first(job, default, loading, trace, workers)
                if found:
                    trace.seconds("basis", prepared)
                    trace.note(nodes=trace.get("discrepancy")["nodes"])
                    early = answers.walked(job, found, False, None, trace.record)
            # Passes beside that find end the candidates and the pruned stage too.
            ahead = job if beside is None else replace(job, budget=job.budget.also_stopped_by(beside.found))
            if early is None:
                choice = choose_lattice(ahead, default, loading and stronger is None, stronger)
        if early is None:
            lattice = choice.lattice
            trace.note(bkz_block=bkz_block, lattice_dim=lattice.D, **choice.facts)
            trace.seconds("basis", prepared)
            early = _decided_by_basis(job, lattice, trace)
        if early is None and not find_all and "estimated_nodes" in choice.facts and not (beside is not None and beside.found.is_set()):
            found = _pruned_first(ahead, choice, trace, workers, beside)
            if found:
                trace.note(nodes=trace.get("pruned")["nodes"])
                early = answers.walked(job, found, False, None, trace.record)
    finally:
        if beside is not None:
            beside.halt()  # the pruned stage has halted them already, unless the engine ended before it
            found_beside, facts = beside.join()
            trace.note(discrepancy=dict(facts, beside=True, bkz=stronger.bkz_block))
    if beside is not None and found_beside:
        trace.note(nodes=facts["nodes"])
        return answers.walked(job, found_beside, False, None, trace.record)
    if early is not None:
        return early
    if cluster is not None and tuning.split_from < lattice.D and cluster.accepts(choice.predicted_seconds(job), budget.remaining()):
        outcome = cluster.enumerate_split(system, lattice, find_all, budget, progress, tuning, job.count_only)
        if outcome is not None:
            solutions, complete, interrupted, facts = outcome
            trace.merge(facts)
            return answers.walked(job, solutions, complete, interrupted, trace.record, facts.get("count") if job.count_only else None)
        trace.note(cluster=cluster.problem or "not started (stopped first)")
    if plan is not None:
        workers = plan(choice.predicted_seconds(job))
    return _walk_with_trials_beside(job, choice, trace, max(1, int(workers)))


def _walk_with_trials_beside(job: Job, choice: Choice, trace: Trace, workers: int) -> Result:
    """The complete walk; for a first solution of a long one, with trials on one of its threads for a while (:func:`trials_beside`)."""
    tuning = job.tuning
    predicted = choice.predicted_seconds(job)
    if (job.find_all or not _shared(job, choice.lattice, workers) or predicted is None or predicted < tuning.trials_beside_from_seconds
            or tuning.trials_beside_share <= 0):
        return _enumerate(job, choice, trace, workers)
    beside = trials_beside(job, choice.lattice, tuning.trials_beside_share * predicted, trace.get("pruned", {}).get("trials", 0))
    try:
        walked = _enumerate(replace(job, budget=job.budget.also_stopped_by(beside.found)), choice, trace, workers, late=beside.ended)
    finally:
        beside.halt()  # the walk has ended: the trials too
        found, facts = beside.join()
    trace.note(trials_beside=facts)
    if found and walked.status != FEASIBLE:
        trace.note(nodes=trace.get("nodes", 0) + facts["nodes"])
        return answers.walked(job, found, False, None, trace.record)
    return walked


def _decided_by_basis(job: Job, lattice: Lattice, trace: Trace) -> Result | None:
    """The answer a reduced basis gives without a walk (float data refused, no box point, a point lattice), else None."""
    if lattice.problem:
        return answers.unknown(job, lattice.problem, trace.record)
    if lattice.infeasible or lattice.D == 0:
        support = None if lattice.infeasible else _root_solution(job, lattice)
        trace.note(nodes=0)
        return answers.walked(job, [support] if support is not None else [], True, None, trace.record)
    return None


def _root_solution(job: Job, lattice: Lattice) -> list[int] | None:
    """The one point of a 0-dimensional lattice, when it is a solution."""
    return decode(lattice, np.zeros(0, dtype=np.int64), job.system)


def _discrepancy_first(job: Job, default: Choice, loading: bool, trace: Trace, workers: int) -> tuple[list, Lattice | None, Beside | None]:
    """Limited-discrepancy and linear passes for a first solution: the supports found, the stronger basis if built, and passes left running beside.

    While the kernels load, the stronger basis (:func:`stronger_basis`) is
    reduced beside the load and its passes come first; it is then also the
    first candidate of :func:`choose_lattice`. Once they are loaded,
    nothing hides that reduction: the default basis's passes come first,
    for at most the time the cost model gives one reduction, and the
    stronger basis follows only when the default basis's estimate pays for
    it as a candidate. Each basis's passes take ``discrepancy_share`` of
    its predicted walk (:func:`passes_seconds`), so on trees that the
    complete walk finishes quickly they cost little. When the stronger
    basis's complete walk is hopeless (``extreme_from_seconds``), its
    discrepancy passes run in a thread of their own (:class:`Beside`)
    while the engine goes on at once to its candidates, until the pruned
    stage halts them (:func:`_pruned_first`) or for at most
    ``hopeless_discrepancy_seconds``.
    """
    lattice, tuning = default.lattice, job.tuning
    if tuning.max_discrepancies < 0 or not lattice.searchable or tuning.split_from >= lattice.D:
        return [], None, None
    wide = tuning.candidates_from <= lattice.D
    found, facts = [], {}
    if not loading:
        found, facts = _discrepancy_passes(job, estimated(job, default), workers, job.basis_seconds(lattice.D))
        if found or not (wide and stronger_pays(job, default)):
            trace.note(discrepancy=facts)
            return found, None, None
    stronger = stronger_basis(job) if wide else None
    if stronger is not None and stronger.searchable:
        basis = estimated(job, Choice(stronger, {}, [stronger]))
        if _hopeless(job, basis):
            if facts:
                trace.note(discrepancy=facts)
            return [], stronger, discrepancy_beside(job, stronger, tuning.hopeless_discrepancy_seconds)
        found, more = _discrepancy_passes(job, basis, workers)
        facts = _merged_passes(facts, more)
    elif loading:
        found, facts = _discrepancy_passes(job, estimated(job, default), workers)
    trace.note(discrepancy=facts)
    return found, stronger, None


def _hopeless(job: Job, basis: Choice) -> bool:
    """Whether the complete walk of an estimated basis is predicted to take ``extreme_from_seconds`` or more (trials follow its passes)."""
    predicted = basis.predicted_seconds(job)
    return predicted is not None and predicted >= job.tuning.extreme_from_seconds


def _discrepancy_passes(job: Job, basis: Choice, workers: int, most_seconds: float | None = None) -> tuple[list, dict]:
    """The passes of one estimated basis within ``discrepancy_share`` of its predicted walk (and at most ``most_seconds``).

    Their facts name the basis walked: its BKZ block and tree estimate.
    """
    seconds = passes_seconds(job, basis.predicted_seconds(job), False, job.tuning.discrepancy_share)
    if most_seconds is not None:
        seconds = min(seconds, most_seconds)
    found, facts = discrepancy_passes(job, basis.lattice, seconds, workers, job.tuning.pruning_slacks)
    facts.update(bkz=basis.lattice.bkz_block, estimated_nodes=basis.facts.get("estimated_nodes"))
    return found, facts


def _merged_passes(first: dict, second: dict) -> dict:
    """The facts of two rounds of passes as one: counts and seconds added, the second's limit."""
    if not first:
        return second
    merged = {**second, **{key: first[key] + second[key] for key in ("passes", "nodes")}}
    merged["seconds"] = round(first["seconds"] + second["seconds"], 4)
    return merged


def _pruned_first(job: Job, choice: Choice, trace: Trace, workers: int, beside: Beside | None = None) -> list:
    """Pruned passes over the bases built (and trials on hopeless trees): the supports found, if any.

    ``beside``: discrepancy passes running in a thread of their own
    (:func:`_discrepancy_first`), on the core that the reduction of the
    candidate bases left idle. They end here: the passes and trials take
    every core.
    """
    if beside is not None:
        beside.halt()
    predicted = choice.predicted_seconds(job)
    hopeless = predicted >= job.tuning.extreme_from_seconds
    trials = Trials(job, choice.lattice, hold_a_thread=predicted >= job.tuning.trials_hold_a_thread_beyond) if hopeless else None
    found, facts = pruned_passes(job, choice.bases, passes_seconds(job, predicted, hopeless), workers, trials=trials,
                                 found=None if beside is None else beside.found)
    trace.note(pruned=facts)
    return found


def _shared(job: Job, lattice: Lattice, workers: int) -> bool:
    """Whether ``workers`` threads share the walk: more than one, and a tree deep enough to split."""
    return workers > 1 and job.tuning.split_from < lattice.D


def _enumerate(job: Job, choice: Choice, trace: Trace, workers: int, late: threading.Event | None = None) -> Result:
    """The kernel's walk of the whole tree (shared by ``workers`` threads when the tree is wide enough).

    A shared walk that runs far past its prediction may restart once on a
    stronger basis (:mod:`.rung`). With ``late``, the last thread joins the
    shared walk once it is set (:func:`walk_shared`).
    """
    lattice = choice.lattice
    run = Run(job.system, lattice, job.find_all, job.budget, job.tuning, count_only=job.count_only)
    run.estimate = trace.get("estimated_nodes")
    start = job.budget.start
    shared = _shared(job, lattice, workers)
    rung = Rung(job, choice, workers) if shared and "rung" not in trace.record else None
    with trace.stage("enumerate"):
        try:
            if shared:
                complete = walk_shared(run, workers, job.progress, start, rung.watch(run, time.perf_counter()) if rung else None, late)
            else:
                complete = walk_whole(run, lambda: run.report(job.progress, start))
        finally:
            if rung is not None:
                rung.join()
        trace.note(nodes=run.nodes, workers=run.workers or max(1, workers), coord_levels_off=run.coord_levels_off())
    if rung is not None and rung.facts:
        trace.note(rung=dict(rung.facts, restarted=rung.better is not None, nodes_before=run.nodes))
    if rung is not None and rung.better is not None and run.interrupted == RESTART:
        stronger = rung.choice()
        trace.note(bkz_block=stronger.lattice.bkz_block, estimated_nodes=stronger.facts.get("estimated_nodes"))
        return _enumerate(job, stronger, trace, workers)
    if run.split_level is not None:
        trace.note(split_level=run.split_level, subtrees=run.subtrees)
    solutions = sorted(run.solutions) if run.workers > 1 else run.solutions
    return answers.walked(job, solutions, complete and run.interrupted is None, run.interrupted, trace.record, run.count())


class LatticeEngine:
    """The lattice enumeration engine as an :class:`indexset.search.engines.Engine`."""

    name = NAME
    options = ("bkz_block", "embedding", "workers", "cluster", "plan", "tuning", "count_only", "trace")

    def search(self, system, reduction=None, **options) -> Result:
        """See :func:`search`."""
        return search(system, reduction, **options)


ENGINE = LatticeEngine()
