"""The lattice of a 0/1 system: embedding, reduction, and the float data of its tree.

Every integer solution of ``M z = t`` is ``z = z0 + K y`` (K an integer
kernel basis, :mod:`indexset.search.reduce`), so 0 ≤ z ≤ u exactly when
the lattice vector ``2SK y`` lies within the box ``|w_r| ≤ h_r = s_r·u_r``
around the target ``c = S(u − 2z0)``: ``w = 2SK y − c = S(2z − u)``
(Aardal–Hurkens–Lenstra; S = diag(s) scales each coordinate so that the
box is close to a cube, as solvediophant scales by the bounds' lcm). For
0/1 unknowns s = u = 1 and every box point has ``w ∈ {±1}^n``. The basis
2SK is reduced with python-flint's LLL and fpylll's BKZ, the target by
Babai rounding. The homogeneous (Kannan) embedding ``[[2K, 2z0 − 1], [0,
1]]``, which puts the target inside the lattice, is available for 0/1
unknowns too (``embedding="homogeneous"``).

The float data (Gram–Schmidt, box and dual bounds) carry safety margins
(:data:`MARGIN`), and bases whose float data could approach them are
refused (:attr:`Lattice.problem`); huge top levels are fixed exactly
instead (:func:`_fix_rigid_levels`). Every leaf is decoded and checked
with exact integers (:func:`decode`), so floating point can only ever cost
time, never a solution or a wrong answer (MATH.md §6.1).
"""

from __future__ import annotations

import math
import threading
from dataclasses import asdict, dataclass, replace

import flint
import numpy as np

from indexset.budget import Budget
from indexset.native import enumerate as native
from indexset.rational import largest_magnitude
from indexset.search import bkz
from indexset.search.lattice.tuning import DEFAULT, LatticeTuning
from indexset.search.reduce import Reduction
from indexset.search.system import System, upper_ends

MARGIN = 1e-7
"""Absolute slack added to every float pruning bound. Gram–Schmidt data of a
reduced basis with small entries is accurate to ~1e-12, so this margin
cannot cut a true box vertex; :func:`_check_numerics` refuses bases where
that is not evident."""

MAX_GS_RATIO = 1e4
"""Largest ratio of Gram–Schmidt norms accepted for float pruning (above it,
huge top levels are fixed exactly, else the engine answers unknown)."""

_BKZ_LOCK = threading.Lock()
"""fpylll's BKZ runs one reduction at a time: it installs process-wide
signal handling (cysignals) around each call, and two reductions at once
in two threads crash the process."""


@dataclass
class FloatData:
    """The float pruning data of a basis (with margins), and its int64 copy for exact leaf tests.

    Attributes
    ----------
    muT, rr, bstar, cinv, chalf, hold, ylo, yhi, cperp2, bound2
        As in :class:`indexset.native.enumerate.Tree`.
    tgt : ndarray of float64, shape (D,)
        Coordinates of the target along each b*_j.
    top : ndarray of float64, shape (N,)
        −c⊥, the part of −c outside the lattice span (padded).
    det_start : ndarray of int64, shape (D + 1,)
        As in :class:`indexset.native.enumerate.Tree`: the columns of the
        float arrays (bstar, cinv, chalf, top) are in the kernel's order:
        the coordinates by the level that determines them
        (:meth:`Lattice.determined`), then the padding.
    radius2 : float
        Squared search radius with margin: every box point's lattice part is within it.
    basis, offset : ndarray of int64
        The exact basis and offset when int64 leaf arithmetic cannot overflow, else zeros.
    weight, det_limit, half
        The box half-widths: as in :class:`indexset.native.tree.Tree` (float64).
    """

    muT: np.ndarray
    rr: np.ndarray
    bstar: np.ndarray
    cinv: np.ndarray
    chalf: np.ndarray
    hold: np.ndarray
    ylo: np.ndarray
    yhi: np.ndarray
    tgt: np.ndarray
    top: np.ndarray
    cperp2: float
    radius2: float
    bound2: np.ndarray
    basis: np.ndarray
    offset: np.ndarray
    det_start: np.ndarray
    weight: np.ndarray
    det_limit: np.ndarray
    half: np.ndarray

    def bounded(self, bound2: np.ndarray | None) -> FloatData:
        """The same data under the per-level bounds ``bound2`` (None: unchanged)."""
        return self if bound2 is None else replace(self, bound2=bound2)


class Lattice:
    """Integer basis and the float pruning data of the enumeration.

    A leaf x is the vector ``w = basis·x + offset``; it answers the system
    when every coordinate lies in the box, ``|w_r| ≤ half[r]`` (±1 for 0/1
    unknowns).

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
        ``z = (s·w[:n] + 1)/2`` with ``s = w[n]``; else ``z = (w/scale + upper)/2``.
    scale, upper : ndarray of object, shape (N,)
        The scale s_r and the bound u_r of each coordinate (ones for 0/1).
    half : ndarray of object, shape (N,)
        The box half-widths ``h_r = s_r·u_r``.
    data : FloatData or None
        The kernel's inputs (None when D = 0 or the numerics were refused).
    exact : bool
        int64 leaf arithmetic cannot overflow.
    bkz_block : int
        The BKZ block size it was reduced with (0: LLL only).
    problem : str or None
        Why the float data cannot be trusted (the engine then answers unknown).
    infeasible : bool
        Exact arithmetic proved that no box point exists (no search needed).
    estimates : dict
        Knuth estimates of its whole tree taken so far, by (descents, seed):
        each is a seeded function of the basis, so none is taken twice.
    """

    def __init__(self, basis: np.ndarray, offset: np.ndarray, n: int, symmetric: bool, scale=None, upper=None) -> None:
        self.basis = basis
        self.offset = offset
        self.n = n
        self.symmetric = symmetric
        self.N, self.D = basis.shape
        self.scale = np.ones(self.N, dtype=object) if scale is None else np.asarray(scale, dtype=object)
        self.upper = np.ones(self.N, dtype=object) if upper is None else np.asarray(upper, dtype=object)
        self.half = self.scale * self.upper
        self.problem = None
        self.infeasible = False
        self.data: FloatData | None = None
        self.exact = False
        self.bkz_block = 0
        self.estimates: dict = {}
        self._determined = None
        self._bstar32 = None

    @property
    def searchable(self) -> bool:
        """Whether a tree is to be walked: the float data are trusted and no exact proof already says no box point exists."""
        return self.problem is None and not self.infeasible

    def tree(self, bound2: np.ndarray | None = None, coord: np.ndarray | None = None, single: bool = False, count_only: bool = False,
             relaxed: bool = False) -> native.Tree:
        """The kernel's :class:`~indexset.native.tree.Tree` (under ``bound2``, default the radius at every level).

        ``coord`` is the per-level switch and counters of the per-coordinate
        bounds (default: on at every level, fresh counters). ``single``:
        keep W in float32 when :func:`single_precision` allows it (an exact
        leaf test and a small error bound), with margins that cover it.
        ``count_only``: the walk counts its solutions itself (only on exact
        lattices, whose leaf test is exact). ``relaxed``: a pruned tree that
        tries the integer nearest the centre where ``bound2`` leaves a level
        none (MATH.md §6.1).
        """
        data = self.data
        if coord is None:
            coord = np.zeros((3, self.D), dtype=np.int64)
            coord[0] = 1
        bound2 = data.bound2 if bound2 is None else bound2
        bstar, chalf, tol, tol_abs, weight = data.bstar, data.chalf, MARGIN, 0.0, data.weight
        margins = single_precision(self, bound2) if single else None
        if margins is not None:
            if self._bstar32 is None:
                self._bstar32 = data.bstar.astype(np.float32)
            relative, absolute, entry = margins
            bstar, tol, tol_abs, weight = self._bstar32, MARGIN + relative, absolute, weight.astype(np.float32)
            chalf = chalf + entry * np.abs(data.cinv)  # cut 3 reads W too
        return native.Tree(data.muT, data.rr, bstar, data.cinv, chalf, data.hold, data.ylo, data.yhi, bound2, data.cperp2, tol, tol_abs,
                           self.symmetric, coord, data.basis, data.offset, self.exact, data.det_start, weight, data.det_limit, data.half,
                           count_only and self.exact, relaxed)

    def determined(self) -> tuple[np.ndarray, np.ndarray]:
        """The coordinates each level determines (MATH.md §6.1, cut 6): ``(start, order)``.

        Coordinate r is determined at level i = min{j : basis[r, j] ≠ 0}
        (D − 1 for a zero row): from there on w[r] = W_i[r]. ``order`` lists
        the coordinates by that level (stably), and those of level i are
        ``order[start[i]:start[i + 1]]``. Read off the exact integer basis,
        once per lattice.
        """
        if self._determined is None:
            nonzero = np.asarray(self.basis != 0, dtype=bool)  # exact: Python ints compared with 0
            levels = np.where(nonzero.any(axis=1), nonzero.argmax(axis=1), self.D - 1)
            order = np.argsort(levels, kind="stable").astype(np.int64)
            self._determined = np.searchsorted(levels[order], np.arange(self.D + 1)).astype(np.int64), order
        return self._determined

    def start(self) -> tuple[np.ndarray, np.ndarray]:
        """What every walk starts from: W at the root (−c⊥, in the kernel's column order) and the target's coordinates along each b*_j."""
        return self.data.top, self.data.tgt

    def new_walk(self, tree: native.Tree) -> native.Walk:
        """A fresh walk of the whole tree ``tree`` (W in its precision: a walk of another precision would compile a kernel the engine never runs)."""
        return native.new_walk(self.D, self.data.top.shape[0], self.data.top, self.data.tgt, tree.bstar.dtype)

    def payload(self) -> dict:
        """Plain data (numpy arrays, ints, bools) from which :meth:`from_payload` rebuilds it.

        The float pruning data travel as computed here, so another process
        walks exactly the same tree (no recomputation with another BLAS).
        """
        data = None if self.data is None else asdict(self.data)
        return {"basis": self.basis, "offset": self.offset, "n": int(self.n), "symmetric": bool(self.symmetric), "exact": bool(self.exact), "data": data,
                "scale": self.scale, "upper": self.upper}

    @classmethod
    def from_payload(cls, payload: dict) -> Lattice:
        """The lattice :meth:`payload` describes (its search data, ready to enumerate)."""
        lattice = cls(np.asarray(payload["basis"], dtype=object), np.asarray(payload["offset"], dtype=object), int(payload["n"]), bool(payload["symmetric"]),
                      payload["scale"], payload["upper"])
        lattice.data = None if payload["data"] is None else FloatData(**payload["data"])
        lattice.exact = bool(payload["exact"])
        return lattice


SINGLE_ROUNDOFF = 2.0**-24
"""Unit roundoff of float32."""

MAX_SINGLE_ERROR = 0.2
"""Largest bound E on the error of a float32 W for which a walk keeps W in float32: cut 6
reads each entry within E plus one step's rounding, and stays sound below 1/2 (MATH.md §6.1)."""


def single_precision(lattice: Lattice, bound2: np.ndarray) -> tuple[float, float, float] | None:
    """The margins ``(relative, absolute, entry)`` that cover a float32 W, or None when W stays in float64.

    MATH.md §6.1 ("W in single precision"): along any path of the walk,
    every W_i in float32 is within ``E`` of its float64 value in ℓ1 norm,

        E = 1.001·u·(‖c⊥‖₁ + Σ_j (4.0001·hold_j·‖b*_j‖₁ + √N·ρ)),

    u = 2⁻²⁴, ρ² the largest squared norm a node's W can have (``bound2``
    plus ‖c⊥‖²), and a float32 sum of N terms in any order is within
    (N − 1)·u/(1 − (N − 1)·u) of the sum, relative. ``entry`` bounds one
    entry of W (E), ``absolute`` the weighted ℓ1 norm of cut 4 (E times the
    largest box half-width). Only for exact lattices (their leaves are
    tested with integers, not with W) and when E ≤ ``MAX_SINGLE_ERROR``
    (the determined-coordinates cut reads W to within 1/2).
    """
    data = lattice.data
    N = lattice.N
    if data is None or not lattice.exact or N * SINGLE_ROUNDOFF > 1e-3:
        return None
    u = SINGLE_ROUNDOFF
    rho = math.sqrt((float(np.max(bound2)) + data.cperp2) * (1 + 1e-6))
    steps = 4.0001 * (data.hold * 1.01) * np.abs(data.bstar).sum(axis=1)
    error = 1.001 * u * (float(np.abs(data.top).sum()) + float(steps.sum()) + lattice.D * math.sqrt(N) * rho)
    if error > MAX_SINGLE_ERROR:
        return None
    summation = (N - 1) * u / (1 - (N - 1) * u)
    widest = float(max(int(h) for h in lattice.half))
    return 1.01 * summation, 1.01 * error * widest, 1.01 * error


def build_lattice(reduction: Reduction, bkz_block: int = 0, embedding: str = "cvp", shuffle=None, budget: Budget | None = None,
                  tuning: LatticeTuning = DEFAULT, upper=None) -> Lattice:
    """Embed, reduce and prepare the pruning data for ``reduction``'s lattice.

    Parameters
    ----------
    reduction : Reduction
        With an integer particular solution z0 and kernel basis K.
    bkz_block : int
        fpylll BKZ block size after LLL (0: LLL only).
    embedding : {"cvp", "homogeneous"}
        The kernel lattice 2SK with the target ``S(u − 2z0)`` outside, or
        (0/1 unknowns only) the (n + 1)-dimensional Kannan embedding with the
        target inside.
    shuffle : numpy.random.Generator, optional
        Permute the input vectors before reduction (another reduced basis
        of the same lattice: a candidate basis).
    budget : Budget, optional
        Bounds the BKZ pass (a basis reduced less is still a basis: only speed changes).
    tuning : LatticeTuning
        Its ``bkz_loops`` bounds the BKZ tours.
    upper : array_like of int, optional
        The bounds u_j of bounded integer unknowns (None: 0/1).
    """
    n = reduction.n
    if embedding == "homogeneous" and upper is None:
        rows = _reduce_rows(_permuted(_embedding_rows(reduction), shuffle), bkz_block, budget, tuning)
        lattice = Lattice(_columns(rows), np.zeros(n + 1, dtype=object), n, True)
    elif embedding in ("cvp", "homogeneous"):
        bounds = upper_ends(upper, n)
        scale = box_scales(bounds)
        K = reduction.kernel
        rows = flint.fmpz_mat([[2 * scale[i] * int(K[i, j]) for i in range(n)] for j in range(K.shape[1])])
        basis = _columns(_reduce_rows(_permuted(rows, shuffle), bkz_block, budget, tuning))
        target = _babai(basis, np.array([scale[i] * (bounds[i] - 2 * int(v)) for i, v in enumerate(reduction.z0)], dtype=object))
        lattice = Lattice(basis, -target, n, False, scale, bounds)
    else:
        raise ValueError(f"unknown embedding {embedding!r}")
    lattice.bkz_block = bkz_block
    _float_data(lattice)
    if lattice.problem and lattice.symmetric:
        # Only the outside-target form has the exact treatment of huge levels.
        return build_lattice(reduction, bkz_block, "cvp", shuffle, budget, tuning)
    if lattice.problem:
        lattice = _fix_rigid_levels(lattice)
    return lattice


def box_scales(bounds: list[int]) -> list[int]:
    """The scales s_j that make the box ``|w_j| ≤ s_j·u_j`` close to a cube.

    The lcm L of the positive bounds when it is at most ``CUBE_LCM`` times
    the largest (s_j = L/u_j: an exact cube, as solvediophant scales), else
    s_j = round(U/u_j) with U the largest bound (within a factor 1.5 of
    U); 1 for a bound of 0. Any positive scales give the same box points:
    they only shape the lattice its reduction sees.
    """
    positive = [u for u in bounds if u > 0]
    if not positive:
        return [1] * len(bounds)
    largest = max(positive)
    lcm = math.lcm(*positive)
    if lcm <= CUBE_LCM * largest:
        return [lcm // u if u else 1 for u in bounds]
    return [max(1, (2 * largest + u) // (2 * u)) if u else 1 for u in bounds]


CUBE_LCM = 64
"""The bounds' lcm may exceed the largest bound by this factor for an exact cube (see :func:`box_scales`)."""


def decode(lattice: Lattice, x: np.ndarray, system: System) -> list[int] | None:
    """Exact vector ``B x + offset``; the solution of the system it encodes (support or values), else None.

    In int64 when the lattice is ``exact`` and x lies within its dual
    bounds (every leaf of a walk does): ``_float_data`` proved that no sum
    can then overflow. Otherwise in Python integers.
    """
    data = lattice.data
    if lattice.exact and data is not None and len(x) and bool(((x >= data.ylo) & (x <= data.yhi)).all()):
        vector = (data.basis @ np.asarray(x, dtype=np.int64) + data.offset).tolist()
    else:
        coeffs = [int(v) for v in x]
        vector = [sum(int(lattice.basis[r, j]) * coeffs[j] for j in range(lattice.D)) + int(lattice.offset[r]) for r in range(lattice.N)]
    if lattice.symmetric:
        if any(v not in (1, -1) for v in vector):
            return None
        s = vector[-1]
        values = [int(s * vector[i] == 1) for i in range(lattice.n)]
    else:
        values = []
        for v, scale, bound in zip(vector, lattice.scale, lattice.upper):
            doubled, rest = divmod(v + int(scale) * int(bound), int(scale))  # w = s·(2z − u)
            if rest or doubled % 2 or not 0 <= doubled <= 2 * int(bound):
                return None
            values.append(doubled // 2)
    solution = system.solution(values)
    return solution if system.is_solution(solution) else None


def _permuted(rows: flint.fmpz_mat, rng) -> flint.fmpz_mat:
    if rng is None:
        return rows
    order = rng.permutation(rows.nrows())
    return flint.fmpz_mat([[rows[int(r), c] for c in range(rows.ncols())] for r in order])


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


def _reduce_rows(rows: flint.fmpz_mat, bkz_block: int, budget: Budget | None, tuning: LatticeTuning) -> flint.fmpz_mat:
    """LLL (δ = ``tuning.lll_delta``) with python-flint, then optionally BKZ with fpylll (at most until the budget's deadline)."""
    rows = rows.lll(delta=tuning.lll_delta)
    fpylll = bkz.load()
    if bkz_block and bkz_block > 2 and rows.nrows() > 2 and fpylll is not None:
        BKZ, IntegerMatrix = fpylll
        A = IntegerMatrix.from_matrix([[int(rows[r, c]) for c in range(rows.ncols())] for r in range(rows.nrows())])
        with _BKZ_LOCK:
            left = None if budget is None else budget.remaining()  # the wait for the lock counts
            limit = {} if left is None else {"max_time": max(0.001, left)}
            BKZ.reduction(A, BKZ.Param(block_size=min(bkz_block, rows.nrows()), max_loops=tuning.bkz_loops, flags=BKZ.AUTO_ABORT, **limit))
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
    half = lattice.half.astype(np.float64)  # the box |w_r| ≤ h_r
    inside = Q.T @ c
    outside = c - Q @ inside
    bstar = (Q * diag).T.copy()
    rr = diag**2
    mu = (R / diag[:, None]).T.copy()  # mu[l, j] = R[j, l] / R[j, j]
    ylo, yhi = _dual_bounds(Q, R, c, half)
    tiny = np.abs(bstar) <= 1e-12
    safe = np.where(tiny, 1.0, bstar)
    cperp2 = float(outside @ outside)
    radius2 = max(float(half @ half) - cperp2, 0.0) * (1 + 1e-9) + MARGIN
    bound = max(max(-int(lo), int(hi)) for lo, hi in zip(ylo, yhi))
    # Exact in int64: _check_numerics passed, so every entry is below 2⁴⁰ and a row's sum below 2⁶³.
    widest = int((np.abs(basis.astype(np.int64)).sum(axis=1) + np.abs(lattice.offset.astype(np.int64))).max())
    lattice.exact = widest * max(bound, 1) < 2**62
    extra = -N % native.ROW_PADDING  # every vector of the kernel's W update lies inside its row
    start, order = lattice.determined()
    # The kernel's column order: the coordinates by the level that determines them, so that those
    # W_i still changes in are a prefix (MATH.md §6.1, cut 6), then the padding.
    columns = np.concatenate([order, np.arange(N, N + extra)])
    lattice.data = FloatData(
        muT=mu.T.copy(), rr=rr, tgt=inside / diag, ylo=ylo, yhi=yhi,
        hold=(np.abs(bstar) @ half) / rr * (1 + 1e-9) + MARGIN,
        # Zero columns of b* and 1/b*, ∞ half-widths and zeros of −c⊥ change no bound.
        bstar=_kernel_columns(bstar, extra, 0.0, columns),
        cinv=_kernel_columns(np.where(tiny, 0.0, 1.0 / safe), extra, 0.0, columns),
        chalf=_kernel_columns(np.where(tiny, np.inf, _box_bounds(Q, half) / np.abs(safe)), extra, np.inf, columns),
        top=np.concatenate([-outside, np.zeros(extra)])[columns],
        det_start=start,
        cperp2=cperp2, radius2=radius2,
        bound2=np.full(D, radius2),  # the complete search: the radius at every level
        basis=basis.astype(np.int64) if lattice.exact else np.zeros((N, D), dtype=np.int64),
        offset=lattice.offset.astype(np.int64) if lattice.exact else np.zeros(N, dtype=np.int64),
        weight=np.concatenate([half, np.zeros(extra)])[columns],  # 1 on every column of the 0/1 box
        det_limit=np.concatenate([half, np.ones(extra)])[columns] + native.DETERMINED_SLACK,
        half=np.array([min(int(h), 2**62) for h in lattice.half], dtype=np.int64),  # an inexact lattice never reads it
    )


def _kernel_columns(a: np.ndarray, extra: int, fill: float, columns: np.ndarray) -> np.ndarray:
    """``a`` with ``extra`` more columns of ``fill``, its columns then taken in the order ``columns``, C-contiguous.

    Contiguous rows let the kernel's loops vectorise (a column gather
    returns another layout, which Numba compiles as strided).
    """
    padded = np.hstack([a, np.full((a.shape[0], extra), fill)]) if extra else a
    return np.ascontiguousarray(padded[:, columns])


def _check_numerics(basis: np.ndarray, offset: np.ndarray, B: np.ndarray, Q: np.ndarray, R: np.ndarray) -> str | None:
    """Refuse float Gram–Schmidt data whose error could approach the margins."""
    if largest_magnitude(np.concatenate([basis.ravel(), offset])) >= 2**40:
        return "the reduced basis or target has entries too large for safe float pruning"
    diag = np.abs(np.diag(R))
    # Forward errors of R grow with this ratio (~ its condition): 1e4 keeps
    # them near 1e-12, far inside MARGIN, at every level of the tree.
    if diag.min() <= 0 or diag.max() / diag.min() > MAX_GS_RATIO:
        return "the reduced basis is too ill-conditioned for safe float pruning"
    largest = np.abs(B).max()
    error = np.abs(Q @ R - B).max() + np.abs(Q.T @ Q - np.eye(Q.shape[1])).max() * largest
    # Absolute on small entries; relative (1e-13 of the largest) on the scaled bases of wide
    # boxes, whose margins are relative (1e-9) and whose cut 6 reads W to within 1/2.
    if error > max(1e-9, 1e-13 * largest):
        return f"Gram–Schmidt reconstruction error {error:.2e} is too large for safe float pruning"
    return None


def _box_bounds(Q: np.ndarray, half: np.ndarray) -> np.ndarray:
    """``lbox[i, r] = Σ_s h_s·|P_i[s, r]|`` ≥ ``|⟨w, P_i e_r⟩|`` (P_i: projection orthogonal to b_0 … b_{i−1}), with margin."""
    N, D = Q.shape
    P = np.eye(N)
    lbox = np.empty((D, N))
    for i in range(D):
        lbox[i] = half @ np.abs(P)
        P -= np.outer(Q[:, i], Q[:, i])
    lbox[0] = half  # P_0 = I exactly
    return lbox * (1 + 1e-9) + MARGIN


def _dual_bounds(Q: np.ndarray, R: np.ndarray, c: np.ndarray, half: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``x_j = ⟨d_j, w + c⟩`` with w in the box: ``|x_j − ⟨d_j, c⟩| ≤ Σ_r h_r·|d_j[r]|``.

    The dual basis ``D = B (BᵀB)⁻¹ = Q R⁻ᵀ`` comes from the triangular factor
    (no normal equations, whose condition is squared).
    """
    # R is exactly upper triangular, so LU with partial pivoting leaves it as
    # it is: this is a triangular solve (SciPy's would cost its import).
    dual = Q @ np.linalg.solve(R, np.eye(R.shape[0])).T
    centre = dual.T @ c
    radius = (half @ np.abs(dual)) * (1 + 1e-9) + 1e-6 * (1 + np.abs(centre))
    return np.ceil(centre - radius).astype(np.int64), np.floor(centre + radius).astype(np.int64)


def _fix_rigid_levels(lattice: Lattice) -> Lattice:
    """Decide the levels with huge Gram–Schmidt norms exactly, keep the rest.

    Huge coefficients give a lattice with a few enormous basis vectors (LLL
    puts them last) whose float data is not trustworthy. A level j with
    ``‖b*_j‖² > 4R²`` (R² = Σ h_r², every box point's squared norm at most)
    admits at most one coefficient (the interval has width
    ``2√(R²/‖b*_j‖²) < 1``), so exact rational Gram–Schmidt fixes those
    levels along a single path; what remains is the small sublattice
    b_0 … b_{p−1} with a shifted target, or an exact proof that no box point
    exists (``lattice.infeasible``).
    """
    basis, N, D = lattice.basis, lattice.N, lattice.D
    c = [-int(v) for v in lattice.offset]
    mu, r, tgt, cperp2 = _exact_gram_schmidt(basis, c)
    p = D
    radius2 = sum(int(h) ** 2 for h in lattice.half)  # every box point has ‖w‖² ≤ Σ h_r²
    while p > 0 and r[p - 1] > 4 * radius2:
        p -= 1
    if p == D:
        return lattice  # nothing rigid: the float problem stands
    rem = radius2 - cperp2
    x = [0] * D
    for j in range(D - 1, p - 1, -1):
        centre = tgt[j] - sum((mu[k][j] * x[k] for k in range(j + 1, D)), flint.fmpq(0))
        low = int(centre.floor())
        fits = [v for v in (low, low + 1) if (v - centre) ** 2 * r[j] <= rem]
        if rem < 0 or not fits:
            rigid = Lattice(basis[:, :0], lattice.offset, lattice.n, False, lattice.scale, lattice.upper)
            rigid.infeasible, rigid.bkz_block = True, lattice.bkz_block
            return rigid
        x[j] = fits[0]
        rem -= (x[j] - centre) ** 2 * r[j]
    shifted = np.array([c[i] - sum(int(basis[i, j]) * x[j] for j in range(p, D)) for i in range(N)], dtype=object)
    short = basis[:, :p]
    target = _babai(short, shifted) if p else shifted
    smaller = Lattice(short, -target, lattice.n, False, lattice.scale, lattice.upper)
    smaller.bkz_block = lattice.bkz_block
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
