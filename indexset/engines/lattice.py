"""Lattice enumeration engine: reduced kernel lattice + box-pruned enumeration.

Every integer solution of ``M z = t`` is ``z = z0 + K y`` (K an integer
kernel basis, :mod:`indexset.reduce`). The engine searches the lattice of
the homogeneous (Kannan) embedding of that affine lattice,

    B = [[2K, 2z0 − 1],
         [ 0,       1]]       (columns are basis vectors, N = n + 1 rows),

whose vectors ``(s(2z − 1), s)`` with ``s = ±1`` and z ∈ {0,1}^n are exactly
the vectors with every coordinate ±1 (Aardal–Hurkens–Lenstra). The target
is part of the lattice, so basis reduction (python-flint LLL, optionally
fpylll BKZ) adapts the basis to it. The Numba kernel
:func:`indexset.native.enumerate.enumerate_box` then enumerates, one of each
pair ±v, every lattice vector in the box ``[−1, 1]^N`` with norm, Hölder,
per-coordinate interval and dual bounds. Each leaf is checked with exact
integers and every reported z is checked against ``M z = t`` with Python
ints, so floating point can only ever cost time, never a solution or a
wrong answer.
"""

from __future__ import annotations

import time

import flint
import numpy as np

from ..native import enumerate as native
from ..reduce import Reduction, reduce_system
from ..result import FEASIBLE, INFEASIBLE, UNKNOWN, Result
from ..system import System

NAME = "lattice"

MARGIN = 1e-7
"""Absolute slack added to every float pruning bound. Gram–Schmidt data of a
reduced basis with small entries is accurate to ~1e-12, so this margin
cannot cut a true box vertex; :func:`_check_numerics` refuses bases where
that is not evident."""

BKZ_BLOCK = 0
"""Block size of the optional fpylll BKZ pass after LLL (0: LLL only).
Measured on the issue-8 benchmarks (see benchmarks/lattice_bench.py):
BKZ did not pay for its own time there, so it is off by default."""

CHUNK_SECONDS = 0.05
"""Target wall time of one kernel call between time-limit / stop checks."""


def search(system: System, reduction: Reduction | None = None, *, find_all: bool = False, time_limit: float | None = None, seed: int = 0, stop=None, progress=None, bkz_block: int | None = None) -> Result:
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
        Unused: the search is deterministic (kept for the engine interface).
    stop : threading.Event, optional
        Stops the search soon after it is set.
    progress : callable, optional
        Called about once a second with a dict of counters.
    bkz_block : int, optional
        fpylll BKZ block size after LLL (default :data:`BKZ_BLOCK`).

    Returns
    -------
    Result
        ``feasible`` with the solutions found, ``infeasible`` after a
        complete search (or an exact certificate), else ``unknown``.
    """
    start = time.perf_counter()
    if system.slack is not None:
        return _unknown(start, "the lattice engine decides exact equations only; tolerance systems (slack) are left to the CP-SAT engine")
    if reduction is None:
        reduction = reduce_system(system.M, system.t)
    decided = _decided_without_search(system, reduction, start)
    if decided is not None:
        return decided
    block = BKZ_BLOCK if bkz_block is None else bkz_block
    prepared = time.perf_counter()
    lattice = build_lattice(reduction, block)
    stages = {**reduction.stages(), "bkz_block": block, "lattice_dim": lattice.D, "reduce_s": round(time.perf_counter() - prepared, 4)}
    if lattice.problem:
        return _unknown(start, lattice.problem, stages)
    deadline = None if time_limit is None else start + float(time_limit)
    return _enumerate(system, lattice, find_all, deadline, stop, progress, start, stages)


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

    Attributes
    ----------
    basis : ndarray of object, shape (N, D)
        Reduced integer basis (columns), exact.
    n : int
        Number of 0/1 unknowns (N = n + 1).
    arrays : dict
        Kernel inputs (float64 / int64).
    exact : bool
        int64 leaf arithmetic cannot overflow.
    problem : str or None
        Why the float data cannot be trusted (the engine then answers unknown).
    """

    def __init__(self, basis: np.ndarray, n: int) -> None:
        self.basis = basis
        self.n = n
        self.N, self.D = basis.shape
        self.problem = None
        self.arrays = {}
        self.exact = False


def build_lattice(reduction: Reduction, bkz_block: int = 0) -> Lattice:
    """Embed, reduce and prepare the pruning data for ``reduction``'s lattice."""
    rows = _embedding_rows(reduction)
    rows = _reduce_rows(rows, bkz_block)
    basis = np.array([[int(rows[r, c]) for c in range(rows.ncols())] for r in range(rows.nrows())], dtype=object).T
    lattice = Lattice(basis, reduction.n)
    _float_data(lattice)
    return lattice


def _embedding_rows(reduction: Reduction) -> flint.fmpz_mat:
    """Rows ``(2K_j, 0)`` and ``(2z0 − 1, 1)``: the homogeneous embedding."""
    n = reduction.n
    K = reduction.kernel
    rows = [[2 * int(K[i, j]) for i in range(n)] + [0] for j in range(K.shape[1])]
    rows.append([2 * int(v) - 1 for v in reduction.z0] + [1])
    return flint.fmpz_mat(rows)


def _reduce_rows(rows: flint.fmpz_mat, bkz_block: int) -> flint.fmpz_mat:
    """LLL (δ = 0.99) with python-flint, then optionally BKZ with fpylll."""
    rows = rows.lll(delta=0.99)
    if bkz_block and bkz_block > 2 and rows.nrows() > 2:
        from fpylll import BKZ, IntegerMatrix

        A = IntegerMatrix.from_matrix([[int(rows[r, c]) for c in range(rows.ncols())] for r in range(rows.nrows())])
        BKZ.reduction(A, BKZ.Param(block_size=min(bkz_block, rows.nrows()), max_loops=8, flags=BKZ.AUTO_ABORT))
        rows = flint.fmpz_mat([[int(A[r, c]) for c in range(A.ncols)] for r in range(A.nrows)])
    return rows


def _float_data(lattice: Lattice) -> None:
    """Gram–Schmidt data, box bounds, dual bounds, all with safety margins."""
    basis = lattice.basis
    N, D = lattice.N, lattice.D
    B = basis.astype(np.float64)
    Q, R = np.linalg.qr(B)
    diag = np.diag(R).copy()
    lattice.problem = _check_numerics(basis, B, Q, R)
    if lattice.problem:
        return
    bstar = (Q * diag).T.copy()
    rr = diag**2
    mu = (R / diag[:, None]).T.copy()  # mu[l, j] = R[j, l] / R[j, j]
    lbox = _box_bounds(Q)
    hold = np.abs(bstar).sum(axis=1) / rr * (1 + 1e-9) + MARGIN
    ylo, yhi = _dual_bounds(B)
    a = lattice.arrays
    a.update(mu=mu, rr=rr, bstar=bstar, tgt=np.zeros(D), lbox=lbox, hold=hold, ylo=ylo, yhi=yhi)
    a["radius2"] = float(N) * (1 + 1e-9) + MARGIN
    a["top"] = np.zeros(N)
    a["basis"] = np.zeros((N, D), dtype=np.int64)
    a["offset"] = np.zeros(N, dtype=np.int64)
    bound = max(int(max(-lo, hi)) for lo, hi in zip(ylo, yhi))
    widest = max(sum(abs(int(v)) for v in basis[r]) for r in range(N))
    lattice.exact = widest * max(bound, 1) < 2**62
    if lattice.exact:
        a["basis"] = basis.astype(np.int64)


def _check_numerics(basis: np.ndarray, B: np.ndarray, Q: np.ndarray, R: np.ndarray) -> str | None:
    """Refuse float Gram–Schmidt data whose error could approach the margins."""
    if max(abs(int(v)) for v in basis.ravel()) >= 2**50:
        return "the reduced basis has entries beyond float64's exact range"
    diag = np.abs(np.diag(R))
    if diag.min() <= 0 or diag.max() / diag.min() > 1e8:
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


def _dual_bounds(B: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """|x_j| = |⟨d_j, v⟩| ≤ ‖d_j‖₁ for v in the box (d_j the dual basis)."""
    dual = B @ np.linalg.inv(B.T @ B)
    bound = np.floor(np.abs(dual).sum(axis=0) * (1 + 1e-9) + 1e-6).astype(np.int64)
    return -bound, bound


def _enumerate(system, lattice, find_all, deadline, stop, progress, start, stages) -> Result:
    """Drive the kernel in chunks; verify every leaf exactly."""
    a = lattice.arrays
    state = native.new_state(lattice.D, lattice.N, a["top"])
    istate = state[0]
    solutions, seen = [], set()
    budget = 1 << 12
    last_report = time.perf_counter()
    status = native.RUNNING
    interrupted = None
    while True:
        t0 = time.perf_counter()
        status = native.enumerate_box(
            a["mu"], a["rr"], a["bstar"], a["tgt"], a["lbox"], a["hold"], a["ylo"], a["yhi"], a["radius2"], MARGIN, True,
            a["basis"], a["offset"], lattice.exact, *state, budget,
        )
        elapsed = time.perf_counter() - t0
        budget = _next_budget(budget, elapsed)
        if status == native.FOUND:
            support = _decode(lattice, state[1], system)
            if support is not None and tuple(support) not in seen:
                seen.add(tuple(support))
                solutions.append(support)
                if not find_all:
                    break
        elif status == native.DONE:
            break
        now = time.perf_counter()
        if deadline is not None and now >= deadline:
            interrupted = "time limit reached"
            break
        if stop is not None and stop.is_set():
            interrupted = "stopped"
            break
        if progress is not None and now - last_report >= 1.0:
            last_report = now
            progress({"engine": NAME, "nodes": int(istate[native.NODES]), "solutions": len(solutions), "elapsed_s": round(now - start, 3)})
    stages = {**stages, "nodes": int(istate[native.NODES]), "leaves": int(istate[native.LEAVES]), "enumerate_s": round(time.perf_counter() - start - stages["reduce_s"], 4)}
    return _result(solutions, status == native.DONE, find_all, interrupted, start, stages)


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
    vector = [sum(int(lattice.basis[r, j]) * coeffs[j] for j in range(lattice.D)) for r in range(lattice.N)]
    if any(v not in (1, -1) for v in vector):
        return None
    s = vector[-1]
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
