"""Schnorr–Euchner enumeration of lattice points in the box [−1, 1]^N.

The lattice engine (:mod:`indexset.search.lattice`) turns ``M z = t`` over
z ∈ {0,1}^n into: find every integer x with ``w = B x − c`` in the box
``[−1, 1]^N`` (then every coordinate of w is ±1, an odd integer). B is a
reduced integer basis (N × D), c a fixed target. The kernels here walk the
enumeration tree depth first, level D − 1 (fixed first) down to level 0, in
Schnorr–Euchner (zig-zag) order, and cut a node when no box point can lie
below it:

- the projected norm: ``‖w‖² = N`` for every box vertex (norm pruning),
  as a bound per level (``bound2``: the same radius at every level for the
  complete search, a pruning profile below it for an incomplete pass);
- Hölder on the Gram–Schmidt direction b*_i: ``|⟨w, b*_i⟩| ≤ ‖b*_i‖₁``;
- per-coordinate interval bounds: W_i, the projection of w orthogonal to
  the free vectors b_0 … b_{i−1}, is known at level i, and for every
  coordinate r, ``|W_i[r]| = |⟨w, P_i e_r⟩| ≤ ‖P_i e_r‖₁`` (P_i that
  projection). Together these give the admissible interval of x_i at once;
- Hölder with W_i itself: ``‖W_i‖² = ⟨w, W_i⟩ ≤ ‖W_i‖₁``;
- static dual bounds ``ylo ≤ x ≤ yhi`` from the dual basis;
- determined coordinates: where the basis row r is zero below level i,
  ``w[r] = W_i[r]`` is an integer fixed at level i, and must be ±1.

Floating point is used only to prune, with margins the wrapper puts into the
bounds; every leaf is checked with exact int64 arithmetic (the wrapper
proves no overflow can occur, else it re-checks candidates with Python
ints). The kernels keep all their state in arrays so a search runs in
chunks of ``budget`` nodes and can be resumed, stopped, or reported on.

The data travel as two records Numba accepts: a :class:`Tree` (the
basis's float and exact data and the per-level bounds, fixed for one
walk) and a :class:`Walk` (the state of one enumeration, mutable, one per
thread). Kernels take these records and scalars only and do no validation.
"""

from __future__ import annotations

import math
from collections import namedtuple

import numpy as np

from .config import kernel

RUNNING = 0
"""Status: node budget used up; call again with the same state to go on."""
FOUND = 1
"""Status: ``x`` holds a leaf that passed the leaf test; call again to go on."""
DONE = 2
"""Status: the tree (or the subtree below ``floor``) is exhausted."""
PREFIX = 3
"""Status: ``x[split:]`` holds a node of level ``split`` (a subtree to hand out)."""

@kernel(reorder_sums=True)
def advance_l1(W, bstar, i, diff, width):
    """Set ``W[i, :width] = W[i + 1, :width] + diff·bstar[i, :width]`` and return its ℓ1 norm.

    In W's precision: float64, or float32 when the tree's margins cover its
    error (``diff`` is rounded to it first). The sum may be added up in any
    order (the kernel is compiled with reassociation, so it vectorises);
    its error is at most about N·u of the sum (u the unit roundoff), inside
    the Hölder test's margin (MATH.md §6.1). Each W[i, r] is computed
    exactly as written (no fused multiply–add).
    """
    step = W.dtype.type(diff)
    total = W.dtype.type(0.0)
    for r in range(width):
        value = W[i + 1, r] + step * bstar[i, r]
        W[i, r] = value
        total += abs(value)
    return total

Tree = namedtuple("Tree", "muT rr bstar cinv chalf hold ylo yhi bound2 cperp2 tol tol_abs symmetric coord basis offset exact det_start")
Tree.__doc__ = """The enumeration tree of one basis: what every walk of it reads.

Fields
------
muT : ndarray of float64, shape (D, D)
    Gram–Schmidt coefficients transposed, ``muT[j, l] = μ_{l,j}`` for l > j.
rr : ndarray of float64, shape (D,)
    Squared Gram–Schmidt norms ``‖b*_j‖²``.
bstar : ndarray of float64 or float32, shape (D, N)
    Gram–Schmidt vectors as rows, their columns in the order of
    ``det_start``; float32 when the walk keeps W in single precision
    (its W then has the same type, and ``tol``, ``tol_abs`` and ``chalf``
    cover the error, MATH.md §6.1). N (here and in cinv, chalf and the walk's W) is padded
    to a multiple of 4 with zero columns (∞ in chalf) at the end.
cinv, chalf : ndarray of float64, shape (D, N)
    ``1/b*_i[r]`` and ``lbox[i, r]/|b*_i[r]|`` (0 and ∞ where b*_i[r] ≈ 0),
    lbox[i, r] = ``‖P_i e_r‖₁`` plus margin bounding ``|W_i[r]|``.
hold : ndarray of float64, shape (D,)
    ``‖b*_i‖₁ / ‖b*_i‖²`` plus margin: bound on ``|x_i − ctr_i|``.
ylo, yhi : ndarray of int64, shape (D,)
    Static bounds on every x_j.
bound2 : ndarray of float64, shape (D,)
    Per level i, the bound on ``lpart[i]``, the squared norm of the lattice
    part of w projected on ``b*_i … b*_{D−1}``: the radius² (with margin) at
    every level for the complete search; smaller on the upper levels for an
    incomplete pruned pass (a pruning profile).
cperp2 : float
    ``‖c⊥‖²``: the squared norm of the part of w outside the lattice span.
tol, tol_abs : float
    Relative and absolute margins of the Hölder test on W_i:
    ``‖W_i‖² > ‖W_i‖₁ + tol·(1 + ‖W_i‖₁) + tol_abs`` cuts.
symmetric : bool
    The target is 0 and x, −x give the same answer: enumerate one.
coord : ndarray of int64, shape (3, D)
    Per level: whether to apply the per-coordinate interval bounds (row 0:
    0 off, 1 on and counted, 2 on and settled), how often they were
    applied (row 1) and how often they narrowed the integer interval (row
    2). Rows 1 and 2 are counters shared by every walk of the tree (racing
    updates only blur a heuristic); levels marked settled are no longer
    counted, so threads stop writing to the shared rows once the caller
    has decided where the bounds pay.
basis : ndarray of int64, shape (N, D)
offset : ndarray of int64, shape (N,)
    Unpadded: N here is the true ambient dimension. ``w = basis·x + offset``
    at a leaf (exact test).
exact : bool
    Whether int64 leaf arithmetic cannot overflow (checked by the caller).
det_start : ndarray of int64, shape (D + 1,)
    The float columns ``det_start[i]:det_start[i + 1]`` are the coordinates
    determined at level i: those r whose basis row is zero in the columns
    below i and nonzero at i (level D − 1 for a zero row). Fixing x_i …
    x_{D−1} fixes the integer w[r] = W_i[r], which must be ±1; below level
    i, W never changes there. So at level i only the columns before
    ``det_start[i + 1]`` are updated, and the ``det_start[D] −
    det_start[i + 1]`` columns determined above i add exactly 1 each to
    ‖W_i‖₁ (MATH.md §6.1, cut 6). The columns before ``det_start[0]`` are
    treated as determined nowhere: all entries equal to the true N turn
    the cut off.
"""

Walk = namedtuple("Walk", "istate x ctr lpart W lo hi up dn zflag partsum stale lows highs taken disc")
Walk.__doc__ = """The state of one walk of a :class:`Tree` (from :func:`new_walk`; one per thread).

Fields
------
istate : ndarray of int64, shape (STATE_SIZE,)
    Current level, phase (0 fresh, 1 running, 2 done), node and leaf counts.
x : ndarray of int64, shape (D,)
    Coefficients fixed so far (a leaf's, after FOUND).
ctr : ndarray of float64, shape (D,)
    Centre of each level's interval.
lpart : ndarray of float64, shape (D + 1,)
    Squared norm of the lattice part fixed so far.
W : ndarray of float64 or float32 (the tree's bstar type), shape (D + 1, N)
    ``W[i]`` the part of w orthogonal to b_0 … b_{i−1}; ``W[D]`` holds −c⊥.
lo, hi, up, dn : ndarray of int64, shape (D,)
    Admissible interval of each level and its two zig-zag pointers.
zflag : ndarray of bool, shape (D + 1,)
    Whether every coefficient above the level is zero (symmetric trees).
partsum : ndarray of float64, shape (D, D + 1)
    Partial sums of the centres; ``partsum[:, D]`` the target coordinates
    along each b*_j.
stale : ndarray of int64, shape (D,)
    Highest level whose x changed since a row of partsum was last redone.
lows, highs : ndarray of float64, shape (N,)
    Scratch of the per-coordinate bounds.
taken : ndarray of int64, shape (D,)
    Children of the current node at each level that passed every test so
    far: the next one's position in zig-zag order, its discrepancy.
disc : ndarray of int64, shape (D + 1,)
    Discrepancies of the path fixed at and above each level (``disc[D]`` is 0).
"""

# Layout of the int64 ``istate`` vector.
LEVEL = 0
PHASE = 1
NODES = 2
LEAVES = 3
STATE_SIZE = 4


@kernel
def _coordinate_bounds(i, c, lof, hif, tree, walk):
    """Narrow ``[lof, hif]`` for x_i by ``|W_i[r]| ≤ lbox[i, r]`` for every r.

    W_i = W_{i+1} + (x_i − c)·b*_i gives an interval of x_i per coordinate
    (chalf = ∞ where b*_i[r] ≈ 0). Elementwise bounds first (a loop LLVM
    vectorises), then the max/min scans, whose running bound rarely changes
    (well-predicted branches). Kept out of :func:`_enter_level`: levels
    that skip it then run faster. Counts how often the bounds remove a
    value the others allow, so the caller can switch them off at levels
    where they never do.
    """
    W, cinv, chalf, coord = walk.W, tree.cinv, tree.chalf, tree.coord
    lows, highs = walk.lows, walk.highs
    N = tree.det_start[i + 1]  # the columns where W_i can differ from W_{i+1}: the others add no bound
    counted = coord[0, i] == 1
    if counted:
        coord[1, i] += 1
    plain_low = math.ceil(lof - 1e-9)
    plain_high = math.floor(hif + 1e-9)
    for r in range(N):
        m = c - W[i + 1, r] * cinv[i, r]
        lows[r] = m - chalf[i, r]
        highs[r] = m + chalf[i, r]
    for r in range(N):
        if lows[r] > lof:
            lof = lows[r]
        if highs[r] < hif:
            hif = highs[r]
    if counted and (math.ceil(lof - 1e-9) > plain_low or math.floor(hif + 1e-9) < plain_high):
        coord[2, i] += 1
    return lof, hif


@kernel
def _empty(i, walk):
    """Mark level i as having no admissible value (both pointers out of range)."""
    walk.lo[i] = 1
    walk.hi[i] = 0
    walk.up[i] = 1
    walk.dn[i] = 0


@kernel
def _enter_level(i, tree, walk):
    """Centre and admissible integer interval of x_i, given x_{i+1..D−1}.

    The cold paths (the root, :func:`start_below`, :func:`estimate_tree`)
    call it; the hot loop of :func:`enumerate_box` carries the same body
    written out (see the comment there).
    """
    x, stale, partsum, muT = walk.x, walk.stale, walk.partsum, tree.muT
    # Centre by partial sums: only the entries whose x changed are redone
    # (amortised O(1) instead of O(D) per node, as in fplll).
    top = stale[i]
    for j in range(top, i, -1):
        partsum[i, j] = partsum[i, j + 1] - muT[i, j] * x[j]
    if i > 0 and stale[i - 1] < top:
        stale[i - 1] = top
    stale[i] = i
    walk.taken[i] = 0
    c = partsum[i, i + 1]
    walk.ctr[i] = c
    rem = tree.bound2[i] - walk.lpart[i + 1]
    if rem < 0.0:
        _empty(i, walk)
        return
    half = math.sqrt(rem / tree.rr[i])
    if tree.hold[i] < half:
        half = tree.hold[i]
    lof = c - half
    hif = c + half
    if tree.coord[0, i]:
        lof, hif = _coordinate_bounds(i, c, lof, hif, tree, walk)
    if lof > hif:
        _empty(i, walk)
        return
    low = math.ceil(lof - 1e-9)
    high = math.floor(hif + 1e-9)
    if low < tree.ylo[i]:
        low = tree.ylo[i]
    if high > tree.yhi[i]:
        high = tree.yhi[i]
    if tree.symmetric and walk.zflag[i + 1] and low < 0:
        # ±v give the same solution: keep the top nonzero coefficient > 0.
        low = 0
    walk.lo[i] = low
    walk.hi[i] = high
    m = round(c)
    if m < low:
        m = low
    if m > high:
        m = high
    walk.up[i] = m
    walk.dn[i] = m - 1


@kernel
def _leaf_ok(tree, walk):
    """Exact test that ``basis·x + offset`` is ±1 everywhere (or a float test)."""
    basis, offset, x = tree.basis, tree.offset, walk.x
    N = basis.shape[0]
    D = basis.shape[1]
    if tree.exact:
        for r in range(N):
            s = offset[r]
            for j in range(D):
                s += basis[r, j] * x[j]
            if s != 1 and s != -1:
                return False
        return True
    for r in range(tree.det_start[0]):  # the cut checked every other column at its level
        a = abs(walk.W[0, r])
        if a < 1.0 - 1e-3 or a > 1.0 + 1e-3:
            return False
    return True


@kernel
def enumerate_box(tree, walk, floor, split, budget, limit=None):
    """Run the enumeration for at most ``budget`` nodes.

    Parameters
    ----------
    tree : Tree
        The basis, its float data and the per-level bounds.
    walk : Walk
        The state from :func:`new_walk` (or :func:`start_below`), advanced in place.
    floor : int
        Levels ≥ floor are fixed (D: the whole tree; else the state comes
        from :func:`start_below` and only that subtree is searched).
    split : int
        Report nodes of this level as PREFIX instead of descending (−1: never;
        else ≥ 1).
    budget : int
        Node budget of this call.
    limit : int, optional
        Discrepancy limit (limited discrepancy search, Harvey and Ginsberg,
        IJCAI 1995): a path whose children, counted by their position among
        the siblings that pass every test (0 for the first in zig-zag
        order), sum to more than ``limit`` is cut, so the walk is
        incomplete; it finds solutions near the zig-zag order's first path
        first. None (the default): the complete walk, compiled without the
        discrepancy bookkeeping. Every call of one walk takes the same limit.

    Returns
    -------
    int
        RUNNING, FOUND (``walk.x`` holds a leaf that passed the leaf test),
        PREFIX (``walk.x[split:]`` holds a node of level ``split``) or DONE.
    """
    istate, x, ctr, lpart, W = walk.istate, walk.x, walk.ctr, walk.lpart, walk.W
    up, dn, lo, hi, zflag, stale = walk.up, walk.dn, walk.lo, walk.hi, walk.zflag, walk.stale
    bstar, rr, cperp2, tol, tol_abs, symmetric = tree.bstar, tree.rr, tree.cperp2, tree.tol, tree.tol_abs, tree.symmetric
    muT, cinv, chalf, hold, ylo, yhi, bound2, coord = tree.muT, tree.cinv, tree.chalf, tree.hold, tree.ylo, tree.yhi, tree.bound2, tree.coord
    partsum, lows, highs, taken, disc = walk.partsum, walk.lows, walk.highs, walk.taken, walk.disc
    det_start = tree.det_start
    D = rr.shape[0]
    if istate[PHASE] == 2:
        return DONE
    if istate[PHASE] == 0:
        zflag[D] = True
        _enter_level(D - 1, tree, walk)
        istate[LEVEL] = D - 1
        istate[PHASE] = 1
    i = istate[LEVEL]
    nodes = 0
    while nodes < budget:
        # Next value at level i in zig-zag order around ctr[i].
        take_up = up[i] <= hi[i]
        take_dn = dn[i] >= lo[i]
        if take_up and take_dn:
            take_up = abs(up[i] - ctr[i]) <= abs(dn[i] - ctr[i])
        elif not take_up and not take_dn:
            i += 1
            if i == floor:
                istate[LEVEL] = i
                istate[PHASE] = 2
                istate[NODES] += nodes
                return DONE
            continue
        if take_up:
            xi = up[i]
            up[i] += 1
        else:
            xi = dn[i]
            dn[i] -= 1
        nodes += 1
        diff = xi - ctr[i]
        # Coordinates that x_i … x_{D−1} determine: w[r] = W_i[r] is an integer,
        # and only ±1 lies in the box. Tested first: it reads a few entries,
        # and a node it cuts needs no W_i.
        determined = True
        for r in range(det_start[i], det_start[i + 1]):
            a = abs(W[i + 1, r] + diff * bstar[i, r])
            if a < 0.5 or a > 1.5:
                determined = False
                break
        if not determined:
            continue
        # W_i where it still changes; each coordinate determined above level i adds exactly 1.
        live = det_start[i + 1]
        s1 = advance_l1(W, bstar, i, diff, live) + (det_start[D] - live)
        s2 = lpart[i + 1] + diff * diff * rr[i] + cperp2
        # Hölder with W_i itself: ‖W_i‖² = ⟨w, W_i⟩ ≤ ‖w‖∞‖W_i‖₁.
        if s2 > s1 + tol * (1.0 + s1) + tol_abs:
            continue
        if limit is not None:
            # Limited discrepancy: the k-th child that passes costs k. Later
            # children cost more, so once over the limit the level is done.
            spent = disc[i + 1] + taken[i]
            taken[i] += 1
            if spent > limit:
                lo[i] = 1
                hi[i] = 0
                up[i] = 1
                dn[i] = 0
                continue
            disc[i] = spent
        x[i] = xi
        if i > 0 and stale[i - 1] < i:
            stale[i - 1] = i
        lpart[i] = lpart[i + 1] + diff * diff * rr[i]
        zflag[i] = zflag[i + 1] and xi == 0
        if i == split:
            istate[LEVEL] = i
            istate[NODES] += nodes
            return PREFIX
        if i == 0:
            if symmetric and zflag[0]:
                continue  # the zero vector
            istate[LEAVES] += 1
            if _leaf_ok(tree, walk):
                istate[LEVEL] = 0
                istate[NODES] += nodes
                return FOUND
            continue
        i -= 1
        # --- enter level i: the body of _enter_level, written out here. Inlined
        # by Numba instead (inline="always"), each access to a record's field
        # takes and drops a reference, which costs more than the work itself
        # (BENCHMARKS.md, "The kernel's records"). Keep the two in step;
        # tests walk trees with both (start_below and the estimate use _enter_level).
        top = stale[i]
        for j in range(top, i, -1):
            partsum[i, j] = partsum[i, j + 1] - muT[i, j] * x[j]
        if i > 0 and stale[i - 1] < top:
            stale[i - 1] = top
        stale[i] = i
        if limit is not None:
            taken[i] = 0
        c = partsum[i, i + 1]
        ctr[i] = c
        rem = bound2[i] - lpart[i + 1]
        if rem < 0.0:
            lo[i] = 1  # empty: both zig-zag pointers out of range
            hi[i] = 0
            up[i] = 1
            dn[i] = 0
            continue
        half = math.sqrt(rem / rr[i])
        if hold[i] < half:
            half = hold[i]
        lof = c - half
        hif = c + half
        if coord[0, i]:
            # _coordinate_bounds, written out for the same reason.
            counted = coord[0, i] == 1
            if counted:
                coord[1, i] += 1
            plain_low = math.ceil(lof - 1e-9)
            plain_high = math.floor(hif + 1e-9)
            live = det_start[i + 1]
            for r in range(live):
                m = c - W[i + 1, r] * cinv[i, r]
                lows[r] = m - chalf[i, r]
                highs[r] = m + chalf[i, r]
            for r in range(live):
                if lows[r] > lof:
                    lof = lows[r]
                if highs[r] < hif:
                    hif = highs[r]
            if counted and (math.ceil(lof - 1e-9) > plain_low or math.floor(hif + 1e-9) < plain_high):
                coord[2, i] += 1
        if lof > hif:
            lo[i] = 1  # empty: both zig-zag pointers out of range
            hi[i] = 0
            up[i] = 1
            dn[i] = 0
            continue
        low = math.ceil(lof - 1e-9)
        high = math.floor(hif + 1e-9)
        if low < ylo[i]:
            low = ylo[i]
        if high > yhi[i]:
            high = yhi[i]
        if symmetric and zflag[i + 1] and low < 0:
            low = 0  # ±v give the same solution
        lo[i] = low
        hi[i] = high
        m = round(c)
        if m < low:
            m = low
        if m > high:
            m = high
        up[i] = m
        dn[i] = m - 1
    istate[LEVEL] = i
    istate[NODES] += nodes
    return RUNNING


@kernel
def start_below(floor, tree, walk):
    """Set a fresh walk to the subtree below the fixed ``walk.x[floor:]`` (floor ≥ 1).

    The prefix must be a node the enumeration itself produced (status
    PREFIX), so it already passed every test. Then :func:`enumerate_box` with
    the same ``floor`` searches exactly that subtree.
    """
    x, ctr, lpart, W, zflag, stale = walk.x, walk.ctr, walk.lpart, walk.W, walk.zflag, walk.stale
    D = tree.rr.shape[0]
    zflag[D] = True
    for j in range(D - 1, floor - 1, -1):
        _enter_level(j, tree, walk)
        diff = x[j] - ctr[j]
        advance_l1(W, tree.bstar, j, diff, W.shape[1])
        lpart[j] = lpart[j + 1] + diff * diff * tree.rr[j]
        zflag[j] = zflag[j + 1] and x[j] == 0
        if j > 0 and stale[j - 1] < j:
            stale[j - 1] = j
    _enter_level(floor - 1, tree, walk)
    walk.istate[LEVEL] = floor - 1
    walk.istate[PHASE] = 1


def new_walk(D: int, N: int, top: np.ndarray, tgt: np.ndarray, dtype=np.float64) -> Walk:
    """A fresh :class:`Walk` of a tree with D levels and (padded) ambient dimension N.

    Parameters
    ----------
    D, N : int
        Lattice dimension and ambient dimension.
    top : ndarray of float64, shape (N,)
        W at the top of the tree (−c⊥, the part of −c outside the lattice span).
    tgt : ndarray of float64, shape (D,)
        Coordinates of the target c along each b*_j.
    dtype : numpy dtype
        Of W: the tree's ``bstar.dtype``.
    """
    W = np.zeros((D + 1, N), dtype=dtype)
    W[D] = top
    partsum = np.zeros((D, D + 1), dtype=np.float64)
    partsum[:, D] = tgt
    return Walk(
        istate=np.zeros(STATE_SIZE, dtype=np.int64),
        x=np.zeros(D, dtype=np.int64),
        ctr=np.zeros(D, dtype=np.float64),
        lpart=np.zeros(D + 1, dtype=np.float64),
        W=W,
        lo=np.zeros(D, dtype=np.int64),
        hi=np.zeros(D, dtype=np.int64),
        up=np.zeros(D, dtype=np.int64),
        dn=np.zeros(D, dtype=np.int64),
        zflag=np.zeros(D + 1, dtype=np.bool_),
        partsum=partsum,
        stale=np.full(D, D - 1, dtype=np.int64),
        lows=np.zeros(N, dtype=np.float64),
        highs=np.zeros(N, dtype=np.float64),
        taken=np.zeros(D, dtype=np.int64),
        disc=np.zeros(D + 1, dtype=np.int64),
    )


@kernel
def estimate_tree(tree, walk, probes, seed):
    """Knuth's estimate of the number of nodes :func:`enumerate_box` will visit.

    Each probe walks from the root to a dead end, choosing uniformly among
    the children that pass every test; the visited-node count along the walk,
    weighted by the product of the branching factors above, is an unbiased
    estimate of the tree size. Returns the mean over ``probes`` walks (the
    walk's arrays are scratch).
    """
    x, ctr, lpart, W, lo, hi, zflag, stale = walk.x, walk.ctr, walk.lpart, walk.W, walk.lo, walk.hi, walk.zflag, walk.stale
    bstar, rr, cperp2, tol = tree.bstar, tree.rr, tree.cperp2, tree.tol
    D = rr.shape[0]
    N = W.shape[1]
    np.random.seed(seed)
    passing = np.zeros(4096, dtype=np.int64)
    total = 0.0
    for _ in range(probes):
        for j in range(D):
            stale[j] = D - 1
        zflag[D] = True
        weight = 1.0
        i = D - 1
        while i >= 0:
            _enter_level(i, tree, walk)
            if hi[i] < lo[i]:
                break
            total += weight * (hi[i] - lo[i] + 1)
            count = 0
            for xi in range(lo[i], hi[i] + 1):
                diff = xi - ctr[i]
                s1 = 0.0
                for r in range(N):
                    s1 += abs(W[i + 1, r] + diff * bstar[i, r])
                s2 = lpart[i + 1] + diff * diff * rr[i] + cperp2
                for r in range(tree.det_start[i], tree.det_start[i + 1]):
                    a = abs(W[i + 1, r] + diff * bstar[i, r])
                    if a < 0.5 or a > 1.5:
                        s2 = math.inf  # a determined coordinate off ±1: the child is cut, as in the walk
                if s2 <= s1 + tol * (1.0 + s1) + tree.tol_abs and count < passing.shape[0]:
                    passing[count] = xi
                    count += 1
            if count == 0 or i == 0:
                break
            weight *= count
            xi = passing[np.random.randint(count)]
            diff = xi - ctr[i]
            for r in range(N):
                W[i, r] = W[i + 1, r] + diff * bstar[i, r]
            x[i] = xi
            lpart[i] = lpart[i + 1] + diff * diff * rr[i]
            zflag[i] = zflag[i + 1] and xi == 0
            if stale[i - 1] < i:
                stale[i - 1] = i
            i -= 1
    return total / probes
