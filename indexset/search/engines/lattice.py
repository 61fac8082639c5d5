"""Lattice enumeration engine: reduced kernel lattice + box-pruned enumeration.

Every integer solution of ``M z = t`` is ``z = z0 + K y`` (K an integer
kernel basis, :mod:`indexset.search.reduce`), so z ∈ {0,1}^n exactly when the
lattice vector ``2K y`` lies within the box ``[−1, 1]^n`` of the target
``c = 1 − 2z0``: ``w = 2K y − c = 2z − 1`` has every coordinate ±1
(Aardal–Hurkens–Lenstra). The basis 2K is reduced with python-flint's LLL
and fpylll's BKZ (it pays from dimension ~30 on; see :data:`BKZ_BLOCK`),
the target is reduced by Babai rounding, and the Numba kernel
:func:`indexset.native.enumerate.enumerate_box` enumerates every lattice
vector whose w lies in the box, depth first in Schnorr–Euchner order, with
norm, Hölder, per-coordinate interval and dual bounds.

The homogeneous (Kannan) embedding ``[[2K, 2z0 − 1], [0, 1]]``, which puts
the target inside the lattice and enumerates one of each ±v, is available
too (``embedding="homogeneous"``); on the (★) families its trees were 2–2.5×
larger, so the kernel lattice with an outside target is the default.

Each leaf is checked with exact integers and every reported z is checked
against ``M z = t`` with Python ints, so floating point can only ever cost
time, never a solution or a wrong answer.

Small trees first: before Numba is loaded, the LLL tree and then the
BKZ tree are walked breadth-first in NumPy (:mod:`indexset.search.breadth`)
when a NumPy estimate puts them within a budget, and, for a first
solution, the BKZ tree under the tightest pruning profile
(:func:`_small_tree_answer`). A whole walk decides; a pruned one may only
find.

Search: the basis is the default LLL + BKZ-20 one, or the best of a few
re-reduced candidates by the Gaussian-heuristic size of its tree
(:func:`profile_score`), as many as a Knuth estimate of the tree pays for
when it predicts a long search, or as Numba's load pays for when it runs
in another thread beside them (:func:`choose_lattice`). Looking for a
first solution, the engine first walks those bases under linear pruning
profiles (:func:`pruned_passes`: incomplete, a few per cent of the
predicted time, finding planted solutions orders of magnitude sooner),
and, when that time is long, goes on with randomised extreme-pruning
trials on fresh bases (:class:`_Trials`).
The tree is walked in chunks (time limit, ``stop``, progress between
them) by one thread, or by several sharing the subtrees of one level
(``workers``; the kernel releases the GIL), or, given a
``cluster``, by Dask tasks, one per subtree (:func:`split_tree`,
:func:`search_subtree`, :mod:`indexset.search.distributed`).
"""

from __future__ import annotations

import collections
import contextlib
import math
import threading
import time

import flint
import numpy as np

from indexset.native import config
from indexset.native import enumerate as native
from indexset.result import FEASIBLE, INFEASIBLE, UNKNOWN, Result
from indexset.search import bkz, breadth, extreme
from indexset.search.reduce import Reduction, reduce_system
from indexset.search.system import System

NAME = "lattice"

MARGIN = 1e-7
"""Absolute slack added to every float pruning bound. Gram–Schmidt data of a
reduced basis with small entries is accurate to ~1e-12, so this margin
cannot cut a true box vertex; :func:`_check_numerics` refuses bases where
that is not evident."""

MAX_GS_RATIO = 1e4
"""Largest ratio of Gram–Schmidt norms accepted for float pruning (above it,
huge top levels are fixed exactly, else the engine answers unknown)."""

BKZ_BLOCK = 20
"""Block size of the fpylll BKZ pass after LLL (0: LLL only), used for
lattices of dimension ≥ :data:`BKZ_FROM`. Measured (benchmarks/lattice_bench.py):
on d = 2, n = 60 BKZ-20 cuts the enumeration tree 18× (3.0M → 0.17M nodes)
for 0.08 s of reduction; BKZ-30 saves another ~1.1–1.4× at 4–6× the
reduction time."""

BKZ_FROM = 30
"""Below this lattice dimension LLL alone is used (BKZ costs more than it saves)."""

COORD_SAMPLE = 1 << 20
"""Nodes after which the per-coordinate bounds stay on only at levels where
they narrowed at least :data:`COORD_MIN_GAIN` of the intervals. They cost
~60% of a node where applied; on BKZ-reduced kernel lattices the Hölder test
already catches nearly everything they would (ms_07_100_002: 18.9M nodes
with them, 19.5M without, 0.76 s instead of 1.2 s)."""

COORD_MIN_GAIN = 0.2

CANDIDATES_FROM = 40
"""Lattice dimension from which several reduced bases may be tried."""

MAX_CANDIDATES = 8
"""Most reduced bases compared by :func:`profile_score`."""

CANDIDATE_SHARE = 0.05
"""Share of the estimated enumeration time spent on candidate bases
(d = 3, n = 80, seed 1: 194M nodes with the first basis, 109M with the best
of 8; on d = 2, n = 70 the candidates differ by ±15% only). The Knuth
estimates ran about 4× high on these families, hence a small share."""

ESTIMATE_PROBES = 4000
"""Random probes of the tree-size estimate (a few ms at dimension 70)."""

BASIS_SECONDS = 3.5e-5
"""Cost model of one LLL + BKZ-20 candidate: ``BASIS_SECONDS · D²`` (0.15 s at D = 66)."""

NODE_SECONDS = 5e-8
"""Measured cost of one enumeration node (d = 2, n = 70, one core: 42 ns)."""

KERNEL_LOAD_SECONDS = 0.7
"""Numba's import and first load of a cached kernel (0.65–0.8 s here). While a
thread does it, the search has a core it could not use otherwise: up to
this many seconds of candidate bases by the cost model are reduced beside
it (their BKZ releases the GIL; python-flint's LLL and the matrix
conversions do not, so the two slow each other a little)."""

HOPELESS_SECONDS = 1e5
"""Predicted enumeration times beyond this get no candidate bases paid for by
the estimate (a 2× gain on a day-long search does not change the answer
within any time limit); those that Numba's load pays for are still built."""

SPLIT_FROM = 24
"""Lattices of lower dimension are searched by one thread (too small to split)."""

SUBTREES_PER_WORKER = 32
"""Split level: the highest with this many nodes per worker (load balance)."""

CHUNK_SECONDS = 0.05
"""Target wall time of one kernel call between time-limit / stop checks."""

SMALL_TREE_NODES = 40_000
"""Node budget of the NumPy breadth-first walk of the LLL tree, tried
before anything loads Numba: it decides trees of a few thousand nodes in
milliseconds (d = 2, n = 50: 2 345 nodes, 7 ms here) where loading Numba
takes 0.65–0.8 s."""

REDUCED_TREE_NODES = 400_000
"""Node budget of the same walk of the BKZ tree, tried next when the
lattice is wide enough for BKZ: BKZ-20 shrinks the (★) trees of d = 2,
n = 60 to 100–160 K nodes, walked in 0.06–0.1 s here (0.35–1.5 µs a node),
against 0.65–0.8 s for Numba. The BKZ basis is kept for the kernel's search."""

PRUNED_WALK_NODES = 400_000
"""Node budget of the pruned NumPy walk (first solution only; started when
its estimate, which came within 1.3× of the pruned trees' sizes here, is
under it). At slack 0.1 it found the planted sets of d = 2, n = 70 in
57 K nodes (0.16 s) and of d = 3, n = 80 in 15 K (0.05 s); on unplanted
d = 2, n = 70 it gave up after 16 K nodes (0.03 s)."""

FIRST_WALK_SLACK = 1.0
"""Slack of the pruning profile of the NumPy walk that, for a first solution,
comes before the complete walk of the BKZ tree: on BKZ-20 bases of d = 2,
R = 1000, n = 60 its tree was 5–8 K nodes, 4–8 % of the complete tree
(100–170 K), and held the planted set in 5 of 6 instances (seeds 1–6); an
unplanted one pays its 0.02–0.04 s. At slack 0.1 those trees held 0–150
nodes and one planted set of 6. On wider lattices this tree is far over
:data:`FIRST_WALK_NODES` and only its estimate runs (2–8 ms)."""

FIRST_WALK_NODES = 50_000
"""Node budget of that walk (its estimate must be under the budget / :data:`WALK_HEADROOM`)."""

WALK_PROBES = 512
"""Descents of the NumPy tree-size estimate that decides whether a walk starts (2–8 ms)."""

WALK_HEADROOM = 4.0
"""A walk starts only when the estimate is at most its budget / this: on the
trees of the benchmark families the estimate of 512 descents came out 2–10×
below the size (d = 2, n = 60: 6–84 K for 100–160 K nodes), while trees
far over the budget were estimated at ≥ 175 K; a walk that does start
still stops at its budget."""


def search(system: System, reduction: Reduction | None = None, *, find_all: bool = False, time_limit: float | None = None, seed: int = 0, stop=None, progress=None, bkz_block: int | None = None, embedding: str = "cvp", workers: int = 1, cluster=None, plan=None) -> Result:
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
    time_limit : float, optional
        Seconds; the search stops with ``unknown`` (and what it found) after it.
    seed : int
        Seed of the tree-size estimate and of the candidate bases (see
        :func:`choose_lattice`).
    stop : threading.Event, optional
        Stops the search soon after it is set.
    progress : callable, optional
        Called about once a second with a dict of counters.
    bkz_block : int, optional
        fpylll BKZ block size after LLL (default :data:`BKZ_BLOCK`).
    embedding : {"cvp", "homogeneous"}
        See :func:`build_lattice`; the kernel lattice with the target outside
        (``cvp``) gave 2–2.5× smaller trees on the (★) families.
    workers : int
        Threads of the pruned passes (one pass each) and of the enumeration
        (sharing the tree: subtrees of one level handed out dynamically),
        unless ``plan`` decides the enumeration's. 1 by default; the
        staged portfolio passes its cores (the engine is alone until
        ``plan`` starts CP-SAT).
    cluster : indexset.search.distributed.Cluster, optional
        Where to send the subtrees as independent Dask tasks when the cluster
        accepts the search (by its size); otherwise the search stays in this
        process. The engine only calls the cluster's ``accepts`` and
        ``enumerate_split``: the split search builds on this engine, never
        the other way round.
    plan : callable, optional
        ``plan(predicted_seconds) -> workers``, called once the basis is
        reduced, with the predicted enumeration time (None when the tree is
        too small to estimate); it overrides ``workers`` (the portfolio
        schedules CP-SAT from it). Not called when a NumPy walk answers
        before the kernel's search.

    Returns
    -------
    Result
        ``feasible`` with the solutions found, ``infeasible`` after a
        complete search (or an exact certificate), else ``unknown``.
    """
    start = time.perf_counter()
    if system.slack is not None:
        return _unknown(start, "the lattice engine decides exact equations only; tolerance systems (slack) are left to the CP-SAT engine")
    if reduction is None or (reduction.span_feasible and reduction.integer_feasible is None):
        reduction = reduce_system(system.M, system.t)  # none given, or one without its lattice
    decided = _decided_without_search(system, reduction, start)
    if decided is not None:
        return decided
    block = bkz_block
    if block is None:
        block = BKZ_BLOCK if reduction.kernel_dimension >= BKZ_FROM else 0
    prepared = time.perf_counter()
    deadline = None if time_limit is None else start + float(time_limit)
    walked, lll, reduced = _small_tree_answer(system, reduction, block, embedding, find_all, seed, deadline, stop, start)
    if walked is not None:
        return walked
    why = _halt_reason(stop, deadline)
    if why is not None:  # before the kernel's search: loading Numba alone would take KERNEL_LOAD_SECONDS more
        return _result([], False, find_all, why, start, {**reduction.stages(), "basis_s": round(time.perf_counter() - prepared, 4)})
    with _kernels_loading(lll if reduced is None or reduced.problem else reduced) as loading:
        lattice, facts, bases = choose_lattice(reduction, block, embedding, seed, deadline, stop, lll, reduced, loading)
    stages = {**reduction.stages(), "bkz_block": block, "lattice_dim": lattice.D, **facts, "basis_s": round(time.perf_counter() - prepared, 4)}
    if lattice.problem:
        return _unknown(start, lattice.problem, stages)
    if lattice.infeasible or lattice.D == 0:
        support = None if lattice.infeasible else _decode(lattice, np.zeros(0, dtype=np.int64), system)
        stages["nodes"] = 0
        return _result([support] if support is not None else [], True, find_all, None, start, stages)
    if not find_all and "estimated_nodes" in facts:
        predicted = facts["estimated_nodes"] * NODE_SECONDS
        hopeless = predicted >= EXTREME_FROM_SECONDS
        seconds = min(PRUNED_SHARE * predicted, EXTREME_MAX_SECONDS if hopeless else PRUNED_MAX_SECONDS)
        if deadline is not None:
            left = deadline - time.perf_counter()
            # A complete walk that cannot end in time proves nothing in time: the passes, which may find, get more of it.
            seconds = min(seconds, (PRUNED_SHARE_OF_LIMIT_HOPELESS if predicted > left else 0.1) * left)
        trials = _Trials(reduction, block, embedding, lattice, seed) if hopeless else None
        found, stages["pruned"] = pruned_passes(system, bases, seconds, deadline, stop, progress, start, workers, trials)
        if found:
            stages["nodes"] = stages["pruned"]["nodes"]
            return _result(found, False, False, None, start, stages)
    seconds_left = None if deadline is None else deadline - time.perf_counter()
    if cluster is not None and lattice.D > SPLIT_FROM and cluster.accepts(stages.get("estimated_nodes"), seconds_left):
        outcome = cluster.enumerate_split(system, lattice, find_all, deadline, stop, progress)
        if outcome is not None:
            solutions, complete, interrupted, facts = outcome
            return _result(solutions, complete, find_all, interrupted, start, {**stages, **facts})
        stages["cluster"] = cluster.problem or "not started (stopped first)"
    if plan is not None:
        estimated = stages.get("estimated_nodes")
        workers = plan(None if estimated is None else estimated * NODE_SECONDS)
    return _enumerate(system, lattice, find_all, deadline, stop, progress, start, stages, max(1, int(workers)))


def _small_tree_answer(system, reduction, block, embedding, find_all, seed, deadline, stop, start):
    """NumPy breadth-first walks that may answer before the kernel is needed.

    The LLL tree, then the BKZ tree, each walked whole within its budget
    (for a first solution, until the first chunk of leaves holding one);
    for a first solution, the BKZ tree under a wide pruning profile
    (:data:`FIRST_WALK_SLACK`) before its whole walk, and after it the BKZ
    (else LLL) tree under the tightest profile. A pruned walk may find a
    solution but proves nothing.

    Returns
    -------
    result : Result or None
        The answer of the first walk that gave one, else None.
    lll, reduced : Lattice or None
        The bases built (``reduced`` None when BKZ is off or was not
        reached), for the search that follows.
    """
    began = time.perf_counter()

    def answer(lattice, walked, bkz_block, slack=None):
        solutions, nodes = walked
        walk = "breadth-first (NumPy)" if slack is None else f"breadth-first (NumPy), pruned (slack {slack})"
        # A whole walk that found nothing ran over every leaf: complete. One that found may have
        # ended at its first solution, and a pruned walk proves nothing.
        complete = slack is None and (find_all or not solutions)
        stages = {**reduction.stages(), "bkz_block": bkz_block, "lattice_dim": lattice.D, "basis_s": round(time.perf_counter() - began, 4), "walk": walk, "nodes": nodes}
        return _result(solutions if find_all else solutions[:1], complete, find_all, None, start, stages)

    lll = build_lattice(reduction, 0, embedding, deadline=deadline)
    walked = _breadth_first(system, lll, SMALL_TREE_NODES, WALK_HEADROOM, seed, deadline, stop, first=not find_all)
    if walked is not None:
        return answer(lll, walked, 0), lll, None
    # As in _basis_that_pays: no BKZ for a lattice that cannot be searched anyway.
    reduced = build_lattice(reduction, block, embedding, deadline=deadline) if block and not (lll.problem or lll.infeasible or lll.D == 0) else None
    if reduced is not None and not find_all:
        walked = _breadth_first(system, reduced, FIRST_WALK_NODES, WALK_HEADROOM, seed, deadline, stop, FIRST_WALK_SLACK, first=True)
        if walked is not None and walked[0]:
            return answer(reduced, walked, block, FIRST_WALK_SLACK), lll, reduced
    if reduced is not None:
        walked = _breadth_first(system, reduced, REDUCED_TREE_NODES, WALK_HEADROOM, seed, deadline, stop, first=not find_all)
        if walked is not None:
            return answer(reduced, walked, block), lll, reduced
    if not find_all:
        basis = reduced if reduced is not None and not reduced.problem else lll
        walked = _breadth_first(system, basis, PRUNED_WALK_NODES, 1.0, seed, deadline, stop, PRUNING_SLACKS[0], first=True)
        if walked is not None and walked[0]:
            return answer(basis, walked, block if basis is reduced else 0, PRUNING_SLACKS[0]), lll, reduced
    return None, lll, reduced


def _breadth_first(system, lattice, budget, headroom, seed, deadline, stop, slack=None, first=False):
    """Solutions and nodes of a NumPy walk of ``lattice``'s tree (pruned when ``slack`` is given).

    None when the lattice cannot be walked this way, when its estimated
    size exceeds ``budget / headroom``, or when the walk stops short.
    ``first``: the walk ends at the first chunk of leaves that holds a
    solution (checked exactly), so it is whole only when it found none.
    """
    if lattice.problem or lattice.infeasible or lattice.symmetric or lattice.D == 0:
        return None
    arrays = lattice.arrays if slack is None else dict(lattice.arrays, bound2=pruning_profile(lattice, slack))
    if breadth.estimate_nodes(arrays, WALK_PROBES, seed, MARGIN) > budget / headroom:
        return None
    found = []

    def until(leaves) -> bool:  # every chunk of leaves passes here, so ``found`` ends up with every solution walked
        found.extend(support for support in (_decode(lattice, x, system) for x in leaves) if support is not None)
        return bool(found)

    leaves, nodes = breadth.walk_breadth_first(arrays, budget, MARGIN, deadline, stop, until if first else None)
    if leaves is None:
        return None
    return sorted(found if first else (support for support in (_decode(lattice, x, system) for x in leaves) if support is not None)), nodes


def _halt_reason(stop, deadline: float | None) -> str | None:
    """"stopped" once ``stop`` is set, "time limit reached" once ``deadline`` has passed, else None."""
    if stop is not None and stop.is_set():
        return "stopped"
    if deadline is not None and time.perf_counter() >= deadline:
        return "time limit reached"
    return None


def _unknown(start: float, reason: str, stages: dict | None = None) -> Result:
    return Result(UNKNOWN, reason, time_s=time.perf_counter() - start, stages=stages or {}, engine=NAME)


def _decided_without_search(system: System, reduction: Reduction, start: float) -> Result | None:
    """Answers exact linear algebra gives directly (no enumeration needed)."""
    stages = reduction.stages()

    def done(status, reason, solutions=(), certificate=None):
        solutions = [list(s) for s in solutions]
        return Result(
            status,
            reason,
            index_set=solutions[0] if solutions else None,
            verified=bool(solutions),
            count=len(solutions),
            solutions=solutions,
            time_s=time.perf_counter() - start,
            stages=stages,
            engine=NAME,
            certificate=certificate,
            complete=True,
        )

    if not reduction.span_feasible:
        return done(INFEASIBLE, "t is not in the column space of M (span certificate y: yᵀM = 0, yᵀt ≠ 0)", certificate={"span_certificate": reduction.span_certificate})
    if reduction.integer_feasible is False:
        return done(INFEASIBLE, f"no integer solution: {reduction.lattice_reason}", certificate={"lattice_reason": reduction.lattice_reason})
    if reduction.kernel_dimension == 0:
        z = [int(v) for v in reduction.z0]
        support = [i for i, v in enumerate(z) if v == 1]
        if all(v in (0, 1) for v in z) and system.is_solution(support):
            return done(FEASIBLE, "rank M = n: the unique solution is a 0/1 vector", [support])
        return done(INFEASIBLE, "rank M = n: the unique solution is not a 0/1 vector")
    return None


class Lattice:
    """Integer basis and the float pruning data of the enumeration.

    A leaf x is the vector ``w = basis·x + offset``; it answers the system
    when every coordinate of w is ±1.

    Attributes
    ----------
    basis : ndarray of object, shape (N, D)
        Reduced integer basis (columns), exact.
    offset : ndarray of object, shape (N,)
        Exact integer offset (−c, c the target; zero when homogeneous).
    n : int
        Number of 0/1 unknowns.
    symmetric : bool
        Homogeneous embedding (N = n + 1): x and −x give the same z, and
        ``z = (s·w[:n] + 1)/2`` with ``s = w[n]``; else ``z = (w + 1)/2``.
    arrays : dict
        Kernel inputs (float64 / int64).
    exact : bool
        int64 leaf arithmetic cannot overflow.
    problem : str or None
        Why the float data cannot be trusted (the engine then answers unknown).
    infeasible : bool
        Exact arithmetic proved that no box point exists (no search needed).
    """

    def __init__(self, basis: np.ndarray, offset: np.ndarray, n: int, symmetric: bool) -> None:
        self.basis = basis
        self.offset = offset
        self.n = n
        self.symmetric = symmetric
        self.N, self.D = basis.shape
        self.problem = None
        self.infeasible = False
        self.arrays = {}
        self.exact = False

    def payload(self) -> dict:
        """Plain data (numpy arrays, ints, bools) from which :meth:`from_payload` rebuilds it.

        The float pruning data travels as computed here, so another process
        walks exactly the same tree (no recomputation with another BLAS).
        """
        return {"basis": self.basis, "offset": self.offset, "n": int(self.n), "symmetric": bool(self.symmetric), "exact": bool(self.exact), "arrays": dict(self.arrays)}

    @classmethod
    def from_payload(cls, data: dict) -> Lattice:
        """The lattice :meth:`payload` describes (its search data, ready to enumerate)."""
        lattice = cls(np.asarray(data["basis"], dtype=object), np.asarray(data["offset"], dtype=object), int(data["n"]), bool(data["symmetric"]))
        lattice.arrays = dict(data["arrays"])
        lattice.exact = bool(data["exact"])
        return lattice


def build_lattice(reduction: Reduction, bkz_block: int = 0, embedding: str = "cvp", shuffle=None, deadline: float | None = None) -> Lattice:
    """Embed, reduce and prepare the pruning data for ``reduction``'s lattice.

    Parameters
    ----------
    reduction : Reduction
        With an integer particular solution z0 and kernel basis K.
    bkz_block : int
        fpylll BKZ block size after LLL (0: LLL only).
    embedding : {"cvp", "homogeneous"}
        The kernel lattice 2K with the target ``1 − 2z0`` outside, or the
        (n + 1)-dimensional Kannan embedding with the target inside.
    shuffle : numpy.random.Generator, optional
        Permute the input vectors before reduction (another reduced basis
        of the same lattice: a candidate for :func:`choose_lattice`).
    deadline : float, optional
        ``time.perf_counter()`` value that bounds the BKZ pass (a basis
        reduced less is still a basis: only speed changes).
    """
    n = reduction.n
    if embedding == "homogeneous":
        rows = _reduce_rows(_permuted(_embedding_rows(reduction), shuffle), bkz_block, deadline)
        lattice = Lattice(_columns(rows), np.zeros(n + 1, dtype=object), n, True)
    elif embedding == "cvp":
        K = reduction.kernel
        rows = flint.fmpz_mat([[2 * int(K[i, j]) for i in range(n)] for j in range(K.shape[1])])
        basis = _columns(_reduce_rows(_permuted(rows, shuffle), bkz_block, deadline))
        target = _babai(basis, np.array([1 - 2 * int(v) for v in reduction.z0], dtype=object))
        lattice = Lattice(basis, -target, n, False)
    else:
        raise ValueError(f"unknown embedding {embedding!r}")
    _float_data(lattice)
    if lattice.problem and lattice.symmetric:
        # Only the outside-target form has the exact treatment of huge levels.
        return build_lattice(reduction, bkz_block, "cvp", shuffle, deadline)
    if lattice.problem:
        lattice = _fix_rigid_levels(lattice)
    return lattice


def _permuted(rows: flint.fmpz_mat, rng) -> flint.fmpz_mat:
    if rng is None:
        return rows
    order = rng.permutation(rows.nrows())
    return flint.fmpz_mat([[rows[int(r), c] for c in range(rows.ncols())] for r in order])


def profile_score(lattice: Lattice) -> float:
    """Minus the log of the Gaussian-heuristic size of the enumeration tree (higher: smaller tree).

    Level k from the top holds about ``V_k(R) / Π_{j ≥ D−k} ‖b*_j‖`` nodes
    (V_k the volume of the k-ball of the search radius R): the sum over k
    ranks reduced bases of one lattice. The box cuts shrink every tree, but
    alike: over 20 BKZ bases of d = 2, R = 1000, n = 70 its rank
    correlation with the walked tree sizes was 0.93 (0.71–0.79 for the sum
    of ``log ‖b*_j‖`` over the upper half of the levels, the score before),
    over 12 of d = 3, R = 30, n = 80 0.85 (0.71); the best-scored of 5
    BKZ-20 bases had the smallest tree in 2 000 random draws of 5 (26.8 M
    and 84.6 M nodes on average, against 28.7 M and 92.2 M). On the
    candidate sets the engine builds for d = 2, n = 70/76/78 and d = 3,
    n = 80 both scores pick the same basis.
    """
    rr = lattice.arrays["rr"]
    radius2 = float(lattice.arrays["bound2"][0])
    depth = np.arange(1, len(rr) + 1)
    log_ball = 0.5 * depth * np.log(np.pi * radius2) - np.array([math.lgamma(k / 2 + 1) for k in depth])
    log_levels = log_ball - 0.5 * np.cumsum(np.log(rr[::-1]))
    top = log_levels.max()
    return -float(top + np.log(np.exp(log_levels - top).sum()))


def choose_lattice(reduction: Reduction, bkz_block: int, embedding: str, seed: int, deadline: float | None = None, stop=None,
                   lll: Lattice | None = None, reduced: Lattice | None = None, loading: bool = False):
    """The default reduced basis, or the best of several when they pay.

    A Knuth estimate of the tree size of the default basis decides how much
    time further candidates (other orders of the input vectors, reduced the
    same way) may take: :data:`CANDIDATE_SHARE` of the predicted enumeration
    time, none when the search looks hopeless anyway
    (:data:`HOPELESS_SECONDS`). ``loading`` says that the kernels are
    loading in another thread (:func:`_kernels_loading`): the estimate waits
    for them, so first the candidates that :data:`KERNEL_LOAD_SECONDS` pays
    for are reduced, beside the load, and the estimate then pays for the
    rest, if more. At most a tenth of the time left before ``deadline``, at
    most :data:`MAX_CANDIDATES` bases in all; the candidate with the best
    :func:`profile_score` wins. ``lll`` and ``reduced`` are the default
    input order's LLL and BKZ bases when the caller has built them already;
    a BKZ basis without a numerics problem is then the default basis (BKZ
    is paid for), else the LLL basis when its tree is predicted shorter
    than a BKZ pass (:func:`_basis_that_pays`).

    Returns
    -------
    lattice : Lattice
    facts : dict
        Estimated nodes and the number of bases tried.
    bases : list of Lattice
        Every searchable basis built, the chosen one first (for
        :func:`pruned_passes`).
    """
    if reduced is not None and not reduced.problem:
        lattice, facts = reduced, {"candidates": 1, "bkz": bkz_block}
    elif lll is not None and not bkz_block:
        lattice, facts = lll, {"candidates": 1, "bkz": "off"}
    else:  # estimates the LLL tree first: nothing left for the loading to hide
        lattice, facts = _basis_that_pays(reduction, bkz_block, embedding, seed, deadline, lll, reduced)
    if lattice.problem or lattice.infeasible or lattice.D <= SPLIT_FROM or lattice.D < CANDIDATES_FROM:
        return lattice, _estimated(lattice, seed, facts), [lattice]
    # Knuth's estimate is unbiased but heavy-tailed: with this few probes it
    # was within ~4× either way on the benchmark trees; candidates pay only
    # when the tree is long, since each costs a full LLL + BKZ. The cost
    # model (not a clock) keeps the choice reproducible for a given seed.
    cost = BASIS_SECONDS * lattice.D**2
    free = KERNEL_LOAD_SECONDS if loading and "estimated_nodes" not in facts else 0.0
    rng = np.random.default_rng(seed)  # one stream: the k-th candidate is the same in either phase
    others, tried = _candidates(reduction, bkz_block, embedding, rng, _affordable(free, cost, deadline), deadline, stop)
    facts = _estimated(lattice, seed, facts)
    predicted = facts["estimated_nodes"] * NODE_SECONDS
    spend = CANDIDATE_SHARE * predicted if predicted < HOPELESS_SECONDS else 0.0
    more, tried_more = _candidates(reduction, bkz_block, embedding, rng, _affordable(max(spend, free), cost, deadline) - tried, deadline, stop)
    others, tried = others + more, tried + tried_more
    if not tried:
        return lattice, facts, [lattice]
    facts["candidates"] = tried + 1
    best = max([lattice, *others], key=profile_score)  # the first of equals: the default basis
    return best, facts, [best] + [basis for basis in [lattice, *others] if basis is not best]


def _affordable(seconds: float, cost: float, deadline: float | None) -> int:
    """Candidate bases that ``seconds`` pay for at ``cost`` each (at most a tenth of the time left; at most :data:`MAX_CANDIDATES` − 1)."""
    if deadline is not None:
        seconds = min(seconds, 0.1 * (deadline - time.perf_counter()))
    return max(0, min(MAX_CANDIDATES - 1, int(seconds / cost)))


def _candidates(reduction: Reduction, bkz_block: int, embedding: str, rng, count: int, deadline: float | None, stop) -> tuple[list, int]:
    """Up to ``count`` re-reduced bases from shuffled input orders: the searchable ones, and how many were tried."""
    built, tried = [], 0
    for _ in range(count):
        if _halt_reason(stop, deadline) is not None:
            break
        tried += 1
        other = build_lattice(reduction, bkz_block, embedding, shuffle=rng, deadline=deadline)
        if not (other.problem or other.infeasible):
            built.append(other)
    return built, tried


@contextlib.contextmanager
def _kernels_loading(lattice: Lattice):
    """Load the kernels in a thread while the caller goes on; True inside when that thread runs.

    Importing Numba and loading the first cached kernel take 0.65–0.8 s
    (:data:`KERNEL_LOAD_SECONDS`) of one core, while the caller can reduce
    candidate bases on the other. The thread is joined on exit (after an
    exception too), so none outlives the block.
    """
    if config.is_loaded(native.estimate_tree) or lattice.problem or lattice.infeasible or lattice.D == 0:
        yield False
        return
    thread = threading.Thread(target=_load_kernels, args=(lattice,), name="indexset-kernel-load")
    thread.start()
    try:
        yield True
    finally:
        thread.join()


def _load_kernels(lattice: Lattice) -> None:
    """One probe of the tree estimate: the cheapest call that loads the kernels."""
    with contextlib.suppress(Exception):  # the caller's own first kernel call meets the same error and reports it
        estimate_nodes(lattice, 1, 0)


def _basis_that_pays(reduction: Reduction, bkz_block: int, embedding: str, seed: int, deadline, lll: Lattice | None = None, reduced: Lattice | None = None):
    """The LLL basis when its predicted tree costs less than a BKZ pass would; else the BKZ one.

    BKZ-20 costs about ``BASIS_SECONDS · D²`` (0.15 s at D = 66) and cuts
    the trees of the (★) families 10–20×; on trees a few milliseconds long
    it only adds its own cost. ``lll`` and ``reduced``: the bases, when the
    caller has built them already.
    """
    if lll is None:
        lll = build_lattice(reduction, 0, embedding, deadline=deadline)
    if not bkz_block:
        return lll, _estimated(lll, seed, {"candidates": 1, "bkz": "off"})
    facts = _estimated(lll, seed, {"candidates": 1})
    if lll.problem or lll.infeasible:
        facts["bkz"] = "skipped (the LLL lattice decides without a search, or cannot be searched)"
        return lll, facts
    if "estimated_nodes" in facts and facts["estimated_nodes"] * NODE_SECONDS < BASIS_SECONDS * lll.D**2:
        facts["bkz"] = "skipped (the LLL tree is predicted shorter than a BKZ pass)"
        return lll, facts
    lattice = reduced or build_lattice(reduction, bkz_block, embedding, deadline=deadline)
    return lattice, _estimated(lattice, seed, {"candidates": 1, "bkz": bkz_block})


def _estimated(lattice: Lattice, seed: int, facts: dict) -> dict:
    """``facts`` with the tree-size estimate of a searchable lattice of more than :data:`SPLIT_FROM` levels."""
    if not (lattice.problem or lattice.infeasible) and lattice.D > SPLIT_FROM and "estimated_nodes" not in facts:
        facts["estimated_nodes"] = int(estimate_nodes(lattice, ESTIMATE_PROBES, seed))
    return facts


def estimate_nodes(lattice: Lattice, probes: int, seed: int, bound2: np.ndarray | None = None) -> float:
    """Knuth's random-probe estimate of the enumeration tree size (under the per-level bounds ``bound2``, if given)."""
    a = lattice.arrays if bound2 is None else dict(lattice.arrays, bound2=bound2)
    coord = np.zeros((3, lattice.D), dtype=np.int64)
    coord[0] = 1
    state = native.new_state(lattice.D, a["top"].shape[0], a["top"], a["tgt"])
    return float(native.estimate_tree(a["muT"], a["rr"], a["bstar"], a["cinv"], a["chalf"], a["hold"], a["ylo"], a["yhi"], a["bound2"], a["cperp2"], MARGIN, lattice.symmetric, coord, probes, seed, *state))


def _fix_rigid_levels(lattice: Lattice) -> Lattice:
    """Decide the levels with huge Gram–Schmidt norms exactly, keep the rest.

    Huge coefficients give a lattice with a few enormous basis vectors (LLL
    puts them last) whose float data is not trustworthy. A level j with
    ``‖b*_j‖² > 4N`` admits at most one coefficient (the interval has width
    ``2√(N/‖b*_j‖²) < 1``), so exact rational Gram–Schmidt fixes those
    levels along a single path; what remains is the small sublattice
    b_0 … b_{p−1} with a shifted target, or an exact proof that no box point
    exists (``lattice.infeasible``).
    """
    basis, N, D = lattice.basis, lattice.N, lattice.D
    c = [-int(v) for v in lattice.offset]
    mu, r, tgt, cperp2 = _exact_gram_schmidt(basis, c)
    p = D
    while p > 0 and r[p - 1] > 4 * N:
        p -= 1
    if p == D:
        return lattice  # nothing rigid: the float problem stands
    rem = N - cperp2
    x = [0] * D
    for j in range(D - 1, p - 1, -1):
        centre = tgt[j] - sum((mu[k][j] * x[k] for k in range(j + 1, D)), flint.fmpq(0))
        low = int(centre.floor())
        fits = [v for v in (low, low + 1) if (v - centre) ** 2 * r[j] <= rem]
        if rem < 0 or not fits:
            rigid = Lattice(basis[:, :0], lattice.offset, lattice.n, False)
            rigid.infeasible = True
            return rigid
        x[j] = fits[0]
        rem -= (x[j] - centre) ** 2 * r[j]
    shifted = np.array([c[i] - sum(int(basis[i, j]) * x[j] for j in range(p, D)) for i in range(N)], dtype=object)
    short = basis[:, :p]
    target = _babai(short, shifted) if p else shifted
    smaller = Lattice(short, -target, lattice.n, False)
    _float_data(smaller)
    return smaller


def _exact_gram_schmidt(basis: np.ndarray, c: list[int]):
    """Exact μ, ‖b*_j‖², target coordinates and ‖c⊥‖² from the Gram matrix (fmpq)."""
    _N, D = basis.shape
    cols = [[int(v) for v in basis[:, j]] for j in range(D)]
    gram = [[sum(a * b for a, b in zip(cols[i], cols[j])) for j in range(D)] for i in range(D)]
    cb = [sum(a * b for a, b in zip(cols[j], c)) for j in range(D)]
    mu = [[flint.fmpq(0)] * D for _ in range(D)]
    r = [flint.fmpq(0)] * D
    tgt = [flint.fmpq(0)] * D
    for j in range(D):
        for i in range(j):
            # μ_{j,i} r_i = ⟨b_j, b*_i⟩ = G_{j,i} − Σ_{k<i} μ_{i,k} μ_{j,k} r_k
            acc = flint.fmpq(gram[j][i]) - sum((mu[i][k] * mu[j][k] * r[k] for k in range(i)), flint.fmpq(0))
            mu[j][i] = acc / r[i]
        r[j] = flint.fmpq(gram[j][j]) - sum((mu[j][k] ** 2 * r[k] for k in range(j)), flint.fmpq(0))
        tgt[j] = (flint.fmpq(cb[j]) - sum((mu[j][k] * tgt[k] * r[k] for k in range(j)), flint.fmpq(0))) / r[j]
    cperp2 = flint.fmpq(sum(v * v for v in c)) - sum((tgt[j] ** 2 * r[j] for j in range(D)), flint.fmpq(0))
    return mu, r, tgt, cperp2


def _columns(rows: flint.fmpz_mat) -> np.ndarray:
    """Rows of an fmpz_mat as the columns of an object array."""
    return np.array([[int(rows[r, c]) for c in range(rows.ncols())] for r in range(rows.nrows())], dtype=object).reshape(rows.nrows(), rows.ncols()).T


def _babai(basis: np.ndarray, target: np.ndarray) -> np.ndarray:
    """``target − basis·q`` for q from Babai rounding (exact integers; any q is fine)."""
    B = basis.astype(np.float64)
    q = np.rint(np.linalg.lstsq(B, target.astype(np.float64), rcond=None)[0]).astype(np.int64)
    shift = basis.dot(np.array([int(v) for v in q], dtype=object))
    return target - shift


def _embedding_rows(reduction: Reduction) -> flint.fmpz_mat:
    """Rows ``(2K_j, 0)`` and ``(2z0 − 1, 1)``: the homogeneous embedding."""
    n = reduction.n
    K = reduction.kernel
    rows = [[2 * int(K[i, j]) for i in range(n)] + [0] for j in range(K.shape[1])]
    rows.append([2 * int(v) - 1 for v in reduction.z0] + [1])
    return flint.fmpz_mat(rows)


BKZ_LOOPS = 8
"""Most BKZ tours. One tour of BKZ-20 takes 15–30 ms at dimension 66–91 here,
so a whole pass (0.08–0.17 s) stays within the engines' stop latency."""


_BKZ_LOCK = threading.Lock()
"""fpylll's BKZ runs one reduction at a time: it installs process-wide
signal handling (cysignals) around each call, and two reductions at once
in two threads crashed the process here."""


def _reduce_rows(rows: flint.fmpz_mat, bkz_block: int, deadline: float | None = None) -> flint.fmpz_mat:
    """LLL (δ = 0.99) with python-flint, then optionally BKZ with fpylll (at most until ``deadline``)."""
    rows = rows.lll(delta=0.99)
    fpylll = bkz.load()
    if bkz_block and bkz_block > 2 and rows.nrows() > 2 and fpylll is not None:
        BKZ, IntegerMatrix = fpylll
        A = IntegerMatrix.from_matrix([[int(rows[r, c]) for c in range(rows.ncols())] for r in range(rows.nrows())])
        with _BKZ_LOCK:
            budget = {} if deadline is None else {"max_time": max(0.001, deadline - time.perf_counter())}  # the wait for the lock counts
            BKZ.reduction(A, BKZ.Param(block_size=min(bkz_block, rows.nrows()), max_loops=BKZ_LOOPS, flags=BKZ.AUTO_ABORT, **budget))
        rows = flint.fmpz_mat([[int(A[r, c]) for c in range(A.ncols)] for r in range(A.nrows)])
    return rows


def _float_data(lattice: Lattice) -> None:
    """Gram–Schmidt data, box bounds, dual bounds, all with safety margins."""
    basis = lattice.basis
    N, D = lattice.N, lattice.D
    if D == 0:
        return
    B = basis.astype(np.float64)
    Q, R = np.linalg.qr(B)
    diag = np.diag(R).copy()
    lattice.problem = _check_numerics(basis, lattice.offset, B, Q, R)
    if lattice.problem:
        return
    c = -lattice.offset.astype(np.float64)  # the target
    inside = Q.T @ c
    outside = c - Q @ inside
    bstar = (Q * diag).T.copy()
    rr = diag**2
    mu = (R / diag[:, None]).T.copy()  # mu[l, j] = R[j, l] / R[j, j]
    hold = np.abs(bstar).sum(axis=1) / rr * (1 + 1e-9) + MARGIN
    ylo, yhi = _dual_bounds(Q, R, c)
    lbox = _box_bounds(Q)
    tiny = np.abs(bstar) <= 1e-12
    safe = np.where(tiny, 1.0, bstar)
    a = lattice.arrays
    a.update(muT=mu.T.copy(), rr=rr, bstar=bstar, tgt=inside / diag, hold=hold, ylo=ylo, yhi=yhi)
    a["cinv"] = np.where(tiny, 0.0, 1.0 / safe)
    a["chalf"] = np.where(tiny, np.inf, lbox / np.abs(safe))
    a["cperp2"] = float(outside @ outside)
    a["radius2"] = max(float(N) - float(outside @ outside), 0.0) * (1 + 1e-9) + MARGIN
    a["bound2"] = np.full(D, a["radius2"])  # the complete search: the radius at every level
    a["top"] = -outside
    _pad(a, N)
    a["basis"] = np.zeros((N, D), dtype=np.int64)
    a["offset"] = np.zeros(N, dtype=np.int64)
    bound = max(max(-int(lo), int(hi)) for lo, hi in zip(ylo, yhi))
    widest = max(sum(abs(int(v)) for v in basis[r]) + abs(int(lattice.offset[r])) for r in range(N))
    lattice.exact = widest * max(bound, 1) < 2**62
    if lattice.exact:
        a["basis"] = basis.astype(np.int64)
        a["offset"] = lattice.offset.astype(np.int64)


def _pad(a: dict, N: int) -> None:
    """Pad the ambient dimension to a multiple of 4 for the unrolled kernel loops.

    Zero columns of b*, W and 1/b*, and ∞ half-widths, change no bound.
    """
    extra = -N % 4
    if not extra:
        return
    for key, fill in (("bstar", 0.0), ("cinv", 0.0), ("chalf", np.inf)):
        a[key] = np.hstack([a[key], np.full((a[key].shape[0], extra), fill)])
    a["top"] = np.concatenate([a["top"], np.zeros(extra)])


def _check_numerics(basis: np.ndarray, offset: np.ndarray, B: np.ndarray, Q: np.ndarray, R: np.ndarray) -> str | None:
    """Refuse float Gram–Schmidt data whose error could approach the margins."""
    if max(abs(int(v)) for v in np.concatenate([basis.ravel(), offset])) >= 2**40:
        return "the reduced basis or target has entries too large for safe float pruning"
    diag = np.abs(np.diag(R))
    # Forward errors of R grow with this ratio (~ its condition): 1e4 keeps
    # them near 1e-12, far inside MARGIN, at every level of the tree.
    if diag.min() <= 0 or diag.max() / diag.min() > MAX_GS_RATIO:
        return "the reduced basis is too ill-conditioned for safe float pruning"
    error = np.abs(Q @ R - B).max() + np.abs(Q.T @ Q - np.eye(Q.shape[1])).max() * np.abs(B).max()
    if error > 1e-9:
        return f"Gram–Schmidt reconstruction error {error:.2e} is too large for safe float pruning"
    return None


def _box_bounds(Q: np.ndarray) -> np.ndarray:
    """``lbox[i, r] = ‖P_i e_r‖₁`` (P_i: projection orthogonal to b_0 … b_{i−1}), with margin."""
    N, D = Q.shape
    P = np.eye(N)
    lbox = np.empty((D, N))
    for i in range(D):
        lbox[i] = np.abs(P).sum(axis=1)
        P -= np.outer(Q[:, i], Q[:, i])
    lbox[0] = 1.0  # P_0 = I exactly
    return lbox * (1 + 1e-9) + MARGIN


def _dual_bounds(Q: np.ndarray, R: np.ndarray, c: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``x_j = ⟨d_j, w + c⟩`` with w in the box: ``|x_j − ⟨d_j, c⟩| ≤ ‖d_j‖₁``.

    The dual basis ``D = B (BᵀB)⁻¹ = Q R⁻ᵀ`` comes from the triangular factor
    (no normal equations, whose condition is squared).
    """
    # R is exactly upper triangular, so LU with partial pivoting leaves it as
    # it is: this is a triangular solve (SciPy's would cost its 0.15 s import).
    dual = Q @ np.linalg.solve(R, np.eye(R.shape[0])).T
    centre = dual.T @ c
    radius = np.abs(dual).sum(axis=0) * (1 + 1e-9) + 1e-6 * (1 + np.abs(centre))
    return np.ceil(centre - radius).astype(np.int64), np.floor(centre + radius).astype(np.int64)


# ------------------------------------------------- incomplete pruned passes
PRUNING_SLACKS = (0.1, 0.25, 0.5)
"""Slacks of the linear pruning profiles tried, in order, on every basis.
On planted d = 2, n = 70 (BKZ-20, eight bases) the whole pruned tree took
2–80 K nodes at slack 0.1 and held the planted set in two bases of eight,
0.06–0.4 M nodes at 0.25 and held it in four; the complete tree is
170–240 M nodes and its first solution came after 69 M on one core."""

PRUNED_SHARE = 0.02
"""Share of the predicted complete enumeration time that the pruned passes
may take before the complete search starts (first-solution mode only).
The prediction ran 2–5× high on the benchmark families, so on a tree
without solutions the passes cost about 5–10 % of the complete search."""

PRUNED_MAX_SECONDS = 30.0
"""Most seconds for the pruned passes, however long the complete search looks."""

EXTREME_FROM_SECONDS = 300.0
"""Predicted complete-walk seconds from which the pruned passes go on, once
the linear ones are done, with randomised extreme-pruning trials
(:class:`_Trials`) until their time is up. Below it their budget (a share
of the prediction) would pay for too few trials to matter."""

MAX_UNUSABLE_IN_A_ROW = 3
"""Trial bases in a row that cannot be searched after which the trials stop."""

LINEAR_SHARE_WITH_TRIALS = 0.1
"""With trials to follow, a linear pass is walked only when its tree is
predicted to take at most this share of the passes' time: at D = 91
(d = 3, n = 100) the linear trees are 10¹⁰ nodes and more, which would
take the whole budget before the first trial."""

EXTREME_MAX_SECONDS = 600.0
"""Most seconds for the pruned passes with trials (:data:`PRUNED_MAX_SECONDS`
without). On the planted d = 3, R = 30, n = 100 block, whose complete walk
is predicted at ~10⁶ s, a trial kept the solution in 6.7 % of the bases
and took about 50 s (:data:`indexset.search.extreme.TRIAL_PROBABILITY`):
about 6 minutes on two threads are expected."""

PRUNED_SHARE_OF_LIMIT_HOPELESS = 0.5
"""Under a time limit the passes take at most a tenth of the time left, or
this share of it when the complete walk is predicted to outlast the limit
(planted d = 3, n = 90: found after 13 s of passes, which a tenth of a
120 s limit cut short, so the answer was unknown)."""


def pruning_profile(lattice: Lattice, slack: float) -> np.ndarray:
    """Linear pruning: ``lpart[i] ≤ R² · min(1, (1 + slack)(D − i)/D)`` at level i.

    The bound grows linearly with the number of fixed levels ``D − i``, as
    the share of ‖w‖² that a random-looking w puts on the last ``D − i``
    Gram–Schmidt directions (Gama, Nguyen and Regev, "Lattice enumeration
    using extreme pruning", EUROCRYPT 2010). A walk under it is
    incomplete: it may miss solutions, never invent one.
    """
    D, radius2 = lattice.D, lattice.arrays["radius2"]
    fixed = D - np.arange(D)
    return np.minimum(radius2, radius2 * (1.0 + slack) * fixed / D + MARGIN)


def pruned_passes(system: System, bases: list, seconds: float, deadline: float | None = None, stop=None, progress=None, start: float | None = None, workers: int = 1,
                  trials: _Trials | None = None) -> tuple[list, dict]:
    """Look for a first solution by pruned walks of several bases, within ``seconds``.

    Each pass walks one basis's tree under :func:`pruning_profile`, a tiny
    part of the whole tree; over several bases (each a different tree, so
    a different chance to keep the solution's path) and growing slacks
    (:data:`PRUNING_SLACKS`), planted solutions turn up orders of magnitude
    sooner than in the complete walk. Given ``trials``, the passes then go
    on with its randomised extreme-pruning trials until the time is up.
    Every leaf is checked exactly as in the complete search; finding
    nothing proves nothing.

    Parameters
    ----------
    system : System
    bases : list of Lattice
        Reduced bases of the same lattice (:func:`choose_lattice`).
    seconds : float
        Time for all passes together.
    deadline : float, optional
        ``time.perf_counter()`` value that ends the passes earlier.
    stop : threading.Event, optional
    progress : callable, optional
        As for :func:`search`: about once a second, with the nodes of all
        passes so far.
    start : float, optional
        ``time.perf_counter()`` value the reported ``elapsed_s`` counts from
        (default: the start of the passes).
    workers : int
        Passes walked at once, each in its own thread (the kernel releases
        the GIL); the first solution stops them all. Which pass finds first
        may then depend on timing, never whether what it reports is a solution.
    trials : _Trials, optional
        Fresh bases under an extreme pruning profile, walked once the
        linear passes are done.

    Returns
    -------
    solutions : list
        Supports found (checked exactly), empty when the passes found none.
    facts : dict
        Passes run, nodes, seconds, and whether a solution was found.
    """
    began = time.perf_counter()
    start = began if start is None else start
    give_up = began + max(0.0, seconds)
    if deadline is not None:
        give_up = min(give_up, deadline)
    found = threading.Event()
    jobs = [(slack, lattice) for slack in PRUNING_SLACKS for lattice in bases]
    if trials is not None and not trials.prepare():
        trials = None  # no profile: the linear passes alone, as without trials
    if trials is not None:
        jobs = _short_linear_jobs(jobs, LINEAR_SHARE_WITH_TRIALS * seconds, trials.seed)
    passes = _Passes(system, collections.deque(jobs), give_up, _AnyEvent(stop, found), found, trials)
    threads = [threading.Thread(target=passes.work, name=f"indexset-pruned-{k}") for k in range(max(1, int(workers)) - 1)]
    for thread in threads:
        thread.start()
    try:
        passes.work(lambda: passes.report(progress, start))
    finally:
        for thread in threads:
            thread.join()
    if passes.failures:
        raise passes.failures[0]
    facts = {"passes": passes.passes, "nodes": passes.nodes, "seconds": round(time.perf_counter() - began, 4), "found": bool(passes.solutions)}
    if trials is not None:
        facts.update(trials.facts())
    return passes.solutions, facts


def _short_linear_jobs(jobs: list, seconds: float, seed: int) -> list:
    """The (slack, basis) passes whose walk is predicted to take at most ``seconds``."""
    return [(slack, lattice) for slack, lattice in jobs if _walk_seconds(lattice, pruning_profile(lattice, slack), seed) <= seconds]


def _walk_seconds(lattice: Lattice, bound2: np.ndarray, seed: int) -> float:
    """Predicted seconds of one walk of ``lattice`` under ``bound2`` (a quick estimate: :data:`WALK_PROBES` descents)."""
    return estimate_nodes(lattice, WALK_PROBES, seed, bound2) * NODE_SECONDS


class _AnyEvent:
    """Set when any of its events is (``None`` entries ignored): the stop test of :class:`_Run`."""

    def __init__(self, *events) -> None:
        self.events = [event for event in events if event is not None]

    def is_set(self) -> bool:
        return any(event.is_set() for event in self.events)


class _Passes:
    """The queue of pruned passes (slack, basis) that :func:`pruned_passes` hands to its threads, and their results."""

    def __init__(self, system, jobs, give_up, halt, found, trials=None) -> None:
        self.system, self.jobs, self.give_up, self.halt, self.found = system, jobs, give_up, halt, found
        self.trials = trials
        self.lock = threading.Lock()
        self.running = []
        self.passes = self.nodes = 0
        self.solutions, self.failures = [], []
        self.last_report = time.perf_counter()

    def work(self, on_chunk=None) -> None:
        """Walk passes from the queue until it is empty, the time is up, or something halts them."""
        try:
            while True:
                job = self._next_job()
                if job is None:
                    return
                lattice, bound2 = job
                run = _Run(self.system, lattice, False, self.give_up, self.halt, bound2=bound2)
                with self.lock:
                    self.running.append(run)
                run.drive(run.new_state(), lattice.D, -1, progress=on_chunk)
                with self.lock:
                    self.running.remove(run)
                    self.passes, self.nodes = self.passes + 1, self.nodes + run.nodes
                    if run.solutions and not self.solutions:
                        self.solutions = run.solutions
                        self.found.set()
                if on_chunk is not None:
                    on_chunk()  # trials whose walks end in one chunk spend their time in BKZ: report between passes too
        except BaseException as exc:  # surfaced in the calling thread
            self.failures.append(exc)
            self.found.set()

    def _next_job(self) -> tuple | None:
        """The next (basis, bounds) to walk: a linear pass, else a trial; None when the passes are over."""
        with self.lock:
            if self.halt.is_set() or time.perf_counter() >= self.give_up:
                return None
            if self.jobs:
                slack, lattice = self.jobs.popleft()
                return lattice, pruning_profile(lattice, slack)
        if self.trials is None:
            return None
        return self.trials.job(self.give_up)  # outside the lock: a fresh basis takes a BKZ reduction

    def report(self, progress, start: float) -> None:
        """Nodes of every pass so far to ``progress``, at most once a second."""
        now = time.perf_counter()
        if progress is None or now - self.last_report < 1.0:
            return
        self.last_report = now
        with self.lock:
            nodes = self.nodes + sum(run.nodes for run in self.running)
        counters = {"engine": NAME, "nodes": nodes, "solutions": len(self.solutions), "elapsed_s": round(now - start, 3), "stage": "pruned passes"}
        if self.trials is not None:
            counters["trials"] = self.trials.walked
        progress(counters)


class _Trials:
    """Randomised extreme pruning: trial k walks a fresh basis under one tight profile.

    Trial k's basis is the lattice's input vectors in an order drawn from
    ``(seed, k)``, reduced as the default basis is (LLL, then BKZ), so the
    trials are different trees, and each is reproducible unless a time
    limit cuts its reduction short. The profile
    (:func:`indexset.search.extreme.extreme_profile`, relative to the
    radius, so one serves every basis of the lattice) is computed on the
    first basis by :meth:`prepare`, before any thread takes a trial.
    """

    def __init__(self, reduction: Reduction, bkz_block: int, embedding: str, lattice: Lattice, seed: int) -> None:
        self.reduction, self.bkz_block, self.embedding, self.first, self.seed = reduction, bkz_block, embedding, lattice, seed
        self.coefficients = None
        self.taken = self.walked = self.unusable_in_a_row = 0
        self.lock = threading.Lock()

    def prepare(self) -> bool:
        """Compute the profile; False when there is none (the Pruner failed), and then no trial runs."""
        first = self.first
        basis_nodes = BASIS_SECONDS * first.D**2 / NODE_SECONDS
        self.coefficients = extreme.extreme_profile(first.arrays["rr"], first.arrays["radius2"], basis_nodes)
        return self.coefficients is not None

    def job(self, deadline: float | None) -> tuple | None:
        """``(basis, bounds)`` of the next trial; None when trials are over.

        They are over after :data:`MAX_UNUSABLE_IN_A_ROW` bases in a row
        that cannot be searched (numerics), which no later one is likely to
        change.
        """
        while True:
            with self.lock:
                if self.unusable_in_a_row >= MAX_UNUSABLE_IN_A_ROW:
                    return None
                index, self.taken = self.taken, self.taken + 1
            order = np.random.default_rng([self.seed, index])
            lattice = build_lattice(self.reduction, self.bkz_block, self.embedding, shuffle=order, deadline=deadline)
            usable = not (lattice.problem or lattice.infeasible or lattice.D != self.first.D)
            with self.lock:
                self.unusable_in_a_row = 0 if usable else self.unusable_in_a_row + 1
                self.walked += usable
            if usable:
                radius2 = lattice.arrays["radius2"]
                return lattice, np.minimum(radius2, radius2 * self.coefficients + MARGIN)

    def facts(self) -> dict:
        """Trials walked and the success probability of one by the pruning model."""
        return {"trials": self.walked, "trial_probability": extreme.TRIAL_PROBABILITY}


def _enumerate(system, lattice, find_all, deadline, stop, progress, start, stages, workers) -> Result:
    """Run the enumeration (split over threads when ``workers > 1``)."""
    began = time.perf_counter()
    run = _Run(system, lattice, find_all, deadline, stop)
    run.estimate = stages.get("estimated_nodes")
    if workers > 1 and lattice.D > SPLIT_FROM:
        complete = _parallel(run, workers, progress, start)
    else:
        complete = run.drive(run.new_state(), lattice.D, -1, progress=lambda: run.report(progress, start))
    stages = {**stages, "nodes": run.nodes, "workers": run.workers or max(1, workers), "coord_levels_off": int((run.coord[0] == 0).sum()), "enumerate_s": round(time.perf_counter() - began, 4)}
    if run.split_level is not None:
        stages.update(split_level=run.split_level, subtrees=run.subtrees)
    solutions = sorted(run.solutions) if run.workers > 1 else run.solutions
    return _result(solutions, complete and run.interrupted is None, find_all, run.interrupted, start, stages)


class _Run:
    """Shared state of one enumeration: solutions, counters, the stop rule.

    Every kernel call goes through :meth:`drive`, which runs chunks of
    :data:`CHUNK_SECONDS`, checks each leaf exactly, and stops when the time
    limit passes, ``stop`` is set, or (first-solution mode) a solution exists.
    """

    def __init__(self, system, lattice, find_all, deadline, stop, coord_mask=None, bound2=None) -> None:
        self.system, self.lattice, self.find_all = system, lattice, find_all
        self.deadline, self.stop = deadline, stop
        self.solutions, self.seen = [], set()
        self.nodes = 0
        self.interrupted = None
        self.lock = threading.Lock()
        self.last_report = time.perf_counter()
        self.split_level = None
        self.subtrees = 0
        self.estimate = None
        self.workers = 0  # threads that walked the tree (0: the calling thread alone)
        a = lattice.arrays
        # Shared by the threads: racing counter updates only blur a heuristic.
        self.coord = np.zeros((3, lattice.D), dtype=np.int64)
        self.coord[0] = 1 if coord_mask is None else coord_mask
        self.adapted = coord_mask is not None
        bound2 = a["bound2"] if bound2 is None else bound2  # a pruning profile makes the walk incomplete
        self.data = (a["muT"], a["rr"], a["bstar"], a["cinv"], a["chalf"], a["hold"], a["ylo"], a["yhi"], bound2, a["cperp2"], MARGIN, lattice.symmetric, self.coord, a["basis"], a["offset"], lattice.exact)
        self.start_data = (a["muT"], a["rr"], a["bstar"], a["cinv"], a["chalf"], a["hold"], a["ylo"], a["yhi"], bound2, lattice.symmetric, self.coord)

    def new_state(self) -> tuple:
        a = self.lattice.arrays
        return native.new_state(self.lattice.D, a["top"].shape[0], a["top"], a["tgt"])

    def halted(self) -> bool:
        """Whether to stop now (recording why, once)."""
        if self.interrupted is not None:
            return True
        if not self.find_all and self.solutions:
            return True
        if self.deadline is not None and time.perf_counter() >= self.deadline:
            self.interrupted = "time limit reached"
        elif self.stop is not None and self.stop.is_set():
            self.interrupted = "stopped"
        return self.interrupted is not None

    def drive(self, state, floor: int, split: int, on_prefix=None, progress=None) -> bool:
        """Run the kernel on ``state`` until DONE (True) or a halt (False)."""
        budget = 1 << 12
        istate = state[0]
        counted = int(istate[native.NODES])
        while not self.halted():
            t0 = time.perf_counter()
            status = native.enumerate_box(*self.data, *state, floor, split, budget)
            budget = _next_budget(budget, time.perf_counter() - t0)
            with self.lock:
                self.nodes += int(istate[native.NODES]) - counted
                if not self.adapted and self.nodes >= COORD_SAMPLE:
                    self._adapt()
            counted = int(istate[native.NODES])
            if status == native.FOUND:
                self._record(state[1])
            elif status == native.PREFIX:
                on_prefix(state[1][split:].copy())
            elif status == native.DONE:
                return True
            if progress is not None:
                progress()
        return False

    def _adapt(self) -> None:
        """Switch the per-coordinate bounds off where they have not paid."""
        self.adapted = True
        tries, cuts = self.coord[1], self.coord[2]
        self.coord[0, (tries < 100) | (cuts < COORD_MIN_GAIN * tries)] = 0

    def _record(self, x: np.ndarray) -> None:
        support = _decode(self.lattice, x, self.system)
        if support is None:
            return
        with self.lock:
            if tuple(support) not in self.seen:
                self.seen.add(tuple(support))
                self.solutions.append(support)

    def report(self, progress, start: float) -> None:
        """Counters to ``progress`` at most once a second."""
        now = time.perf_counter()
        if progress is not None and now - self.last_report >= 1.0:
            self.last_report = now
            counters = {"engine": NAME, "nodes": self.nodes, "solutions": len(self.solutions), "elapsed_s": round(now - start, 3)}
            if self.estimate:
                counters["estimated_nodes"] = self.estimate
            progress(counters)


def _parallel(run: _Run, workers: int, progress, start: float) -> bool:
    """Hand subtrees of one split level to worker threads (the kernel releases the GIL)."""
    prefixes, level = _split(run, SUBTREES_PER_WORKER * workers)
    if prefixes is None:
        return False  # halted while splitting
    run.split_level, run.subtrees = level, len(prefixes)
    queue = collections.deque(prefixes)
    failures, finished = [], []

    def worker():
        try:
            while True:
                with run.lock:
                    if not queue:
                        return
                    prefix = queue.popleft()
                if not _walk(run, prefix, level):
                    return
                finished.append(prefix)
        except BaseException as exc:  # surfaced in the calling thread
            failures.append(exc)
            run.interrupted = "failed"

    threads = [threading.Thread(target=worker, name=f"indexset-enumerate-{k}") for k in range(workers)]
    run.workers = workers
    for thread in threads:
        thread.start()
    alive = threads
    while alive:
        alive[0].join(0.2)
        run.report(progress, start)
        alive = [thread for thread in threads if thread.is_alive()]
    if failures:
        raise failures[0]
    return len(finished) == len(prefixes)


def _walk(run: _Run, prefix: np.ndarray, level: int) -> bool:
    """Search the subtree below the fixed top coordinates ``x[level:] = prefix`` (True when exhausted)."""
    state = run.new_state()
    state[1][level:] = prefix
    native.start_below(level, *run.start_data, *state)
    return run.drive(state, level, -1)


def split_tree(system: System, lattice: Lattice, target: int, deadline: float | None = None, stop=None) -> tuple:
    """Cut the enumeration tree into independent subtrees (fixed top coordinates).

    Every leaf of the tree lies below exactly one node of the returned
    level, and :func:`search_subtree` on each prefix walks exactly the
    subtree the whole enumeration would walk below it, in the same order:
    the subtrees partition the search.

    Parameters
    ----------
    system : System
    lattice : Lattice
    target : int
        Wanted number of subtrees: the highest level with at least this many
        nodes is used (not below level ``SPLIT_FROM // 2``).
    deadline : float, optional
        ``time.perf_counter()`` value past which to give up.
    stop : threading.Event, optional

    Returns
    -------
    prefixes : list of ndarray or None
        ``x[level:]`` of every node of the level, in enumeration order;
        empty when the tree has no node there (nothing to search), None when
        halted by ``deadline`` or ``stop``.
    level : int
    nodes : int
        Nodes visited while splitting.
    """
    run = _Run(system, lattice, True, deadline, stop)
    prefixes, level = _split(run, max(1, int(target)))
    return prefixes, level, run.nodes


def coordinate_mask(system: System, lattice: Lattice) -> np.ndarray:
    """Levels where the per-coordinate bounds stay on, as the one-process engine settles them.

    Runs the enumeration from the root for :data:`COORD_SAMPLE` nodes (or
    to its end) and keeps the bounds where they paid (:meth:`_Run._adapt`).
    The parts of a split search share this mask instead of each paying the
    bounds at every level for its own first ``COORD_SAMPLE`` nodes (+14 %
    time on d = 2, n = 74 with 754 parts).
    """
    run = _Run(system, lattice, True, None, None)
    state = run.new_state()
    while int(state[0][native.NODES]) < COORD_SAMPLE:
        if native.enumerate_box(*run.data, *state, lattice.D, -1, COORD_SAMPLE) == native.DONE:
            break
    run._adapt()
    return run.coord[0].copy()


def search_subtree(system: System, lattice: Lattice, prefix, level: int, *, find_all: bool = False, deadline: float | None = None, stop=None, coord_mask=None) -> dict:
    """Walk the subtree below ``x[level:] = prefix`` (a prefix from :func:`split_tree`).

    ``coord_mask`` (from :func:`coordinate_mask`) fixes where the
    per-coordinate bounds apply; without it the walk adapts them itself.

    Returns
    -------
    dict
        ``solutions`` (supports, checked exactly, in enumeration order),
        ``nodes``, ``complete`` (the subtree was exhausted) and
        ``interrupted`` (``time limit reached``, ``stopped`` or None; a
        first-solution search that found one is neither complete nor
        interrupted).
    """
    run = _Run(system, lattice, find_all, deadline, stop, coord_mask)
    done = _walk(run, np.asarray(prefix, dtype=np.int64), int(level))
    return {"solutions": run.solutions, "nodes": run.nodes, "complete": bool(done and run.interrupted is None), "interrupted": run.interrupted}


def _split(run: _Run, target: int):
    """Prefixes at the highest level with at least ``target`` tree nodes.

    Returns ``(prefixes, level)``; ``([], D − 1)`` when the tree has no node
    there (the search is complete), ``(None, level)`` when halted.
    """
    D = run.lattice.D
    level = D - 1
    while True:
        found = []
        if not run.drive(run.new_state(), D, level, on_prefix=found.append):
            return None, level
        if len(found) >= target or level <= SPLIT_FROM // 2 or not found:
            return found, level
        level -= 1


def _next_budget(budget: int, elapsed: float) -> int:
    """Aim each kernel call at :data:`CHUNK_SECONDS`."""
    if elapsed < CHUNK_SECONDS / 4:
        return min(budget * 4, 1 << 30)
    if elapsed > CHUNK_SECONDS * 4:
        return max(budget // 4, 1 << 10)
    return budget


def _decode(lattice: Lattice, x: np.ndarray, system: System) -> list[int] | None:
    """Exact vector ``B x``; the support of its z if it is a solution, else None."""
    coeffs = [int(v) for v in x]
    vector = [sum(int(lattice.basis[r, j]) * coeffs[j] for j in range(lattice.D)) + int(lattice.offset[r]) for r in range(lattice.N)]
    if any(v not in (1, -1) for v in vector):
        return None
    s = vector[-1] if lattice.symmetric else 1
    support = [i for i in range(lattice.n) if s * vector[i] == 1]
    return support if system.is_solution(support) else None


def _result(solutions, complete, find_all, interrupted, start, stages) -> Result:
    elapsed = time.perf_counter() - start
    common = dict(time_s=elapsed, stages=stages, engine=NAME)
    if solutions:
        reason = f"{len(solutions)} solution(s) found by lattice enumeration, each checked exactly against M z = t"
        if find_all and complete:
            reason = f"complete lattice enumeration: exactly {len(solutions)} solution(s), each checked exactly"
        elif find_all and interrupted:
            reason += f" ({interrupted}: the enumeration is incomplete)"
        return Result(FEASIBLE, reason, index_set=solutions[0], verified=True, count=len(solutions) if complete else None, solutions=solutions, complete=complete, **common)
    if complete:
        return Result(INFEASIBLE, "complete lattice enumeration of the box found no 0/1 solution", count=0, solutions=[], complete=True, **common)
    return Result(UNKNOWN, f"lattice enumeration {interrupted} before finding a solution or completing the search", **common)


class LatticeEngine:
    """The lattice enumeration engine as an :class:`indexset.search.engines.Engine`."""

    name = NAME
    options = ("bkz_block", "embedding", "workers", "cluster", "plan")

    def search(self, system, reduction=None, **options) -> Result:
        """See :func:`search`."""
        return search(system, reduction, **options)


ENGINE = LatticeEngine()
