"""The enumeration tree: its records, and what the questions every node asks mean.

The lattice engine (:mod:`indexset.search.lattice`) turns ``M z = t`` with
0 ≤ z_j ≤ u_j into: find every integer x with ``w = B x − c`` in the box
``|w_r| ≤ h_r`` (h_r = s_r·u_r, s_r the coordinate's scale; the 0/1 case is
h = 1). B is a reduced integer basis (N × D), c a fixed target. A walk fixes
x level by level, D − 1 first. At level i, with x_{i+1} … x_{D−1} fixed,
every walk asks the same questions of the same data (MATH.md §6.1):

- which real window of x_i the norm (cut 1) and Hölder on b*_i (cut 2)
  allow, narrowed by the per-coordinate bounds (cut 3), and which integers
  in it the dual bounds (cut 5) allow;
- for each child x_i: whether the coordinates that level i determines lie
  in the box (cut 6), and whether Hölder with W_i itself holds (cut 4) on
  the weighted ℓ1 norm of W_i;
- at level 0, whether the exact integer vector lies in the box.

Each question is one kernel of :mod:`indexset.native.enumerate` (``window``,
``coordinate_window``, ``integers_in``, ``determined_ok``, ``holder_ok``,
``advance_l1``, ``leaf_ok``; ``nearest_when_none`` for a relaxed pruned
tree), scalar arithmetic that Numba inlines into the
compiled walks there, and that the NumPy walk
(:mod:`indexset.search.lattice.breadth`) calls, from its Python source, on
arrays of nodes (the same expressions, elementwise). The walks differ only
in their order and in what they do at a leaf. (They live in the module of
the walks: Numba's cache keys a compiled kernel by its own file, so a walk
compiled against a kernel of another file would be reloaded stale after
that file changed.)

The data travel as two records Numba accepts: a :class:`Tree` (fixed for
one walk) and a :class:`Walk` (the state of one enumeration, mutable, one
per thread).
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np

Tree = namedtuple("Tree", "muT rr bstar cinv chalf hold ylo yhi bound2 cperp2 tol tol_abs symmetric coord basis offset exact det_start "
                          "weight det_limit half count_only relaxed")
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
    cover the error, MATH.md §6.1). N (here and in cinv, chalf, weight,
    det_limit and the walk's W) is padded to a multiple of ``ROW_PADDING`` with zero
    columns (∞ in chalf) at the end.
cinv, chalf : ndarray of float64, shape (D, N)
    ``1/b*_i[r]`` and ``lbox[i, r]/|b*_i[r]|`` (0 and ∞ where b*_i[r] ≈ 0),
    lbox[i, r] = ``Σ_s h_s·|P_i[s, r]|`` plus margin bounding ``|W_i[r]|``.
hold : ndarray of float64, shape (D,)
    ``Σ_r h_r·|b*_i[r]| / ‖b*_i‖²`` plus margin: bound on ``|x_i − ctr_i|``.
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
    Relative and absolute margins of the Hölder test on W_i (:func:`holder_ok`).
symmetric : bool
    The target is 0 and x, −x give the same answer: enumerate one.
coord : ndarray of int64, shape (3, D)
    Per level: whether to apply the per-coordinate interval bounds (row 0:
    0 off, 1 on and counted, 2 on and settled), how often they were
    applied (row 1) and how often they narrowed the integer interval (row
    2). Rows 1 and 2 are counters shared by every walk of the tree (racing
    updates only blur a heuristic); levels marked settled are no longer
    counted.
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
    x_{D−1} fixes the integer w[r] = W_i[r], which must lie in the box;
    below level i, W never changes there. So at level i only the columns
    before ``det_start[i + 1]`` are updated, and the columns determined
    above i add their fixed ``h_r·|w_r|`` to the weighted ℓ1 norm (MATH.md
    §6.1, cut 6). The columns before ``det_start[0]`` are treated as
    determined nowhere.
weight : ndarray (bstar's dtype), shape (N,)
    The box half-widths h_r in the float columns' order (1 on every
    column of the 0/1 box, 0 on the padding): the weights of the ℓ1 norm
    of cut 4.
det_limit : ndarray of float64, shape (N,)
    ``h_r + 1/2`` (``DETERMINED_SLACK`` of :mod:`indexset.native.enumerate`) in the float columns' order: cut 6's bound.
half : ndarray of int64, shape (N,)
    Unpadded, in the basis's row order: the exact h_r of the leaf test.
count_only : bool
    The walk stops at the first leaf that passes the exact leaf test, and
    counts the others itself (``istate[SOLUTIONS]``) instead of stopping at
    each one (exact trees only).
relaxed : bool
    A pruned tree whose profile bends: at a level whose real window holds
    no integer, the integer nearest the centre is tried once
    (:func:`~indexset.native.enumerate.nearest_when_none`, MATH.md §6.1).
    Only incomplete walks take it; the complete tree never does.
"""

Walk = namedtuple("Walk", "istate x ctr lpart W lo hi up dn zflag partsum stale lows highs taken disc fixed_l1")
Walk.__doc__ = """The state of one walk of a :class:`Tree` (from :func:`new_walk`; one per thread).

Fields
------
istate : ndarray of int64, shape (STATE_SIZE,)
    Current level, phase (0 fresh, 1 running, 2 done), node and leaf counts,
    the solutions counted without stopping (``count_only``), and how many
    were returned (FOUND).
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
fixed_l1 : ndarray of float64, shape (D + 1,)
    ``fixed_l1[i]``: the weighted ℓ1 norm ``Σ h_r·|w_r|`` of the columns
    determined at levels ≥ i, exact integers times weights (``fixed_l1[D]`` is 0).
"""

# Layout of the int64 ``istate`` vector.
LEVEL = 0
PHASE = 1
NODES = 2
LEAVES = 3
SOLUTIONS = 4
RETURNED = 5
STATE_SIZE = 6


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
        fixed_l1=np.zeros(D + 1, dtype=np.float64),
    )
