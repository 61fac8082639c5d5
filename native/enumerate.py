"""The questions every node of the enumeration tree asks, and its Schnorr–Euchner walks.

The tree and its records are in :mod:`indexset.native.tree`. The
questions (the box, the cuts and the leaf test, MATH.md §6.1) are the
scalar kernels of the first section below, written once; Numba inlines
them into the walks. Three walks of one tree ask every node those
questions (and nothing else):

- :func:`enumerate_box`, the depth-first walk in Schnorr–Euchner (zig-zag)
  order, in chunks of a node budget, resumable, optionally below a fixed
  prefix (:func:`start_below`), reporting the nodes of a split level, or
  limited in its discrepancies;
- :func:`estimate_tree`, Knuth's random descents;
- :func:`start_below`, which replays a prefix the walk produced.

Floating point is used only to prune, with margins the caller puts into
the bounds; every leaf is checked with exact int64 arithmetic (the caller
proves no overflow can occur, else it re-checks candidates with Python
ints). The walks keep all their state in the :class:`Walk` record, so a
search runs in chunks and can be resumed, stopped, or reported on. They
take the records and scalars only and do no validation.
"""

from __future__ import annotations

import numpy as np

from .config import intrinsic_kernel, kernel
from .tree import LEAVES, LEVEL, NODES, PHASE, RETURNED, SOLUTIONS, Tree, Walk, new_walk

__all__ = [
    "DONE",
    "FOUND",
    "PREFIX",
    "ROW_PADDING",
    "RUNNING",
    "Tree",
    "Walk",
    "advance_l1",
    "coordinate_window",
    "determined_l1",
    "determined_ok",
    "enumerate_box",
    "estimate_tree",
    "holder_ok",
    "integers_in",
    "leaf_ok",
    "nearest_when_none",
    "new_walk",
    "plain_advance_l1",
    "start_below",
    "vector_lanes",
    "window",
]

RUNNING = 0
"""Status: node budget used up; call again with the same state to go on."""
FOUND = 1
"""Status: ``x`` holds a leaf that passed the leaf test; call again to go on."""
DONE = 2
"""Status: the tree (or the subtree below ``floor``) is exhausted."""
PREFIX = 3
"""Status: ``x[split:]`` holds a node of level ``split`` (a subtree to hand out)."""


SLACK = 1e-9
"""Rounding slack of a window's ends before ceil and floor (MATH.md §6.1)."""

DETERMINED_SLACK = 0.5
"""A determined coordinate is an integer: it is cut when its float value lies more
than this beyond the box (the float error is far below it, MATH.md §6.1)."""


# --- The questions every node asks (one definition: the walks below and the NumPy walk use these) ---


@kernel(inline=True)
def window(c, rem, rr_i, hold_i):
    """Cuts 1 and 2: the real window ``(low, high)`` of x_i around its centre c.

    ``rem`` is the level's bound less the squared norm fixed above it; a
    negative one leaves the window empty (low > high). Works on scalars and,
    from its Python source, elementwise on arrays.
    """
    half = np.minimum(np.sqrt(np.maximum(rem, 0.0) / rr_i), hold_i) - 2.0 * (rem < 0.0)
    return c - half, c + half


@kernel(inline=True)
def coordinate_window(c, w, cinv, chalf):
    """Cut 3 for one coordinate r: the window of x_i that keeps ``|W_i[r]| ≤ lbox[i, r]``, given W_{i+1}[r] = w."""
    middle = c - w * cinv
    return middle - chalf, middle + chalf


@kernel(inline=True)
def integers_in(low, high, ylo_i, yhi_i):
    """The integers of a real window within the dual bounds (cut 5): ``(first, last)`` as floats (empty when first > last)."""
    return np.maximum(np.ceil(low - SLACK), ylo_i), np.minimum(np.floor(high + SLACK), yhi_i)


@kernel(inline=True)
def nearest_when_none(c, low, high, first, last, ylo_i, yhi_i):
    """A relaxed pruned tree's integers at a level: where the real window holds none, the one nearest the centre c.

    ``(first, last)`` from :func:`integers_in`, unchanged unless the real
    window ``[low, high]`` is not empty but holds no integer; then, of the
    two integers around it, the one nearer c, when the dual bounds allow it
    (MATH.md §6.1, relaxed pruning). Works on scalars and arrays.
    """
    below, above = np.floor(high + SLACK), np.ceil(low - SLACK)
    nearest = np.minimum(np.maximum(np.rint(c), below), above)
    none = (above > below) & (low <= high) & (nearest >= ylo_i) & (nearest <= yhi_i)
    return first + none * (nearest - first), last + none * (nearest - last)


@kernel(inline=True)
def holder_ok(s1, s2, tol, tol_abs):
    """Cut 4: ``‖W_i‖² = ⟨w, W_i⟩ ≤ Σ h_r·|W_i[r]|``, with ``s2`` the squared norm and ``s1`` the weighted ℓ1 norm, within the margins."""
    return s2 <= s1 + tol * (1.0 + s1) + tol_abs


@kernel(inline=True)
def determined_ok(value, limit):
    """Cut 6: a determined coordinate, an integer whose float value is ``value``, lies in the box (``limit`` = h_r + DETERMINED_SLACK)."""
    return np.abs(value) <= limit


@kernel(inline=True)
def determined_l1(value, limit):
    """A determined coordinate's part of the weighted ℓ1 norm: ``h_r·|w_r|``, with |w_r| rounded to the integer it is."""
    return np.rint(np.abs(value)) * (limit - DETERMINED_SLACK)


def plain_advance_l1(W, bstar, i, diff, width, weight):
    """:func:`advance_l1` as a plain loop: its reference (tests hold the vector code to it), runnable from Python."""
    step = W.dtype.type(diff)
    total = W.dtype.type(0.0)
    for r in range(width):
        value = W[i + 1, r] + step * bstar[i, r]
        W[i, r] = value
        total += weight[r] * abs(value)
    return total


@kernel(inline=True)
def advance_l1(W, bstar, i, diff, width, weight):
    """Set ``W[i, :width] = W[i + 1, :width] + diff·bstar[i, :width]`` and return its weighted ℓ1 norm ``Σ h_r·|W_i[r]|`` (cut 4).

    ``weight`` holds the box half-widths h_r (1 on every column of the 0/1
    box, 0 on the padding). In W's precision: float64, or float32 when the
    tree's margins cover its error (``diff`` is rounded to it first).
    Written once, in explicit vectors (:func:`_advance_l1_vector`); Numba
    inlines it into the walks, which then pay no call for it. The sum is
    added up in another order than :func:`plain_advance_l1`'s, and each
    W[i, r] and each term may be formed with a fused multiply–add; both
    stay within the error bounds of the Hölder test's margin (MATH.md
    §6.1). Callable from compiled code and, compiled, from Python; its
    Python source is not (the reference is :func:`plain_advance_l1`).
    """
    return _advance_l1_vector(W, bstar, i, diff, width, weight)


# --- The W update in explicit vectors (LLVM IR) ---

ROW_PADDING = 16
"""W, b* and the per-column arrays are padded with zero columns to a multiple of this many
entries: the most lanes of any vector :func:`_advance_l1_vector` uses (float32 on AVX-512)."""

WIDEST_VECTOR_BYTES = 32
"""The widest vector the W update uses where the CPU has it (64 AVX-512, 32 AVX2, 16 SSE2): 32, since AVX-512's
were no faster on the test files' rows (BENCHMARKS.md, "Evidence for tuning values", the W update)."""

ACCUMULATORS = 4
"""Partial sums of the ℓ1 norm kept apart in the vector loop, so that consecutive vectors' additions need not wait on each other."""


def vector_lanes(bits: int) -> int:
    """Lanes of the vectors the W update uses for floats of ``bits`` bits, on the CPU Numba compiles for.

    Numba compiles for the features LLVM reports for this CPU (or
    ``NUMBA_CPU_FEATURES``); the width follows them, so a kernel in
    Numba's cache, which is keyed by those features, has the width it was
    built with. Under valgrind, which reports an AVX2 CPU, it is 256 bits.
    """
    from numba.core import config as numba_config

    features = numba_config.CPU_FEATURES
    if features is None:
        import llvmlite.binding as llvm

        features = llvm.get_host_cpu_features().flatten()
    flags = set(features.split(","))
    widest = 64 if "+avx512f" in flags else 32 if "+avx2" in flags or "+avx" in flags else 16
    return min(widest, WIDEST_VECTOR_BYTES) * 8 // bits


@intrinsic_kernel
def _advance_l1_vector(typingctx, W, bstar, i, diff, width, weight):
    """Typer of :func:`advance_l1`'s body (a Numba intrinsic): its signature and :func:`_emit_advance_l1`."""
    return W.dtype(W, bstar, i, diff, width, weight), _emit_advance_l1


def _emit_advance_l1(context, builder, signature, args):
    """The IR of :func:`advance_l1`: vectors of :func:`vector_lanes` floats, ACCUMULATORS partial sums, one horizontal sum.

    Full vectors first, in blocks of ACCUMULATORS, then the rest one at a
    time; the last, partial vector has the weights of its lanes past
    ``width`` set to zero, and stores into them ``W[i + 1, r] + diff·0``
    (b*_i is zero past ``width``, the columns that levels above i
    determine, and on the padding), which nothing reads at level i or
    below. No scalar tail; rows are C-contiguous and padded to
    :data:`ROW_PADDING`, so every vector lies inside its row.
    """
    from llvmlite import ir
    from numba.core import cgutils, types

    W_type, bstar_type, i_type, diff_type, width_type, weight_type = signature.args
    W, bstar, i, diff, width, weight = args
    float_type = context.get_value_type(W_type.dtype)
    lanes = vector_lanes(W_type.dtype.bitwidth)
    vector = ir.VectorType(float_type, lanes)
    index = ir.IntType(64)
    i = context.cast(builder, i, i_type, types.int64)
    width = context.cast(builder, width, width_type, types.int64)
    step = context.cast(builder, diff, diff_type, W_type.dtype)
    W_array = context.make_array(W_type)(context, builder, W)
    bstar_array = context.make_array(bstar_type)(context, builder, bstar)
    weights = context.make_array(weight_type)(context, builder, weight).data

    def row(array, level):
        return builder.gep(array.data, [builder.mul(level, builder.extract_value(array.shape, 1))])

    source, target = row(W_array, builder.add(i, index(1))), row(W_array, i)
    direction = row(bstar_array, i)

    def declared(name, result, *arguments):  # an LLVM intrinsic on this vector type, e.g. llvm.fabs.v8f32
        return cgutils.get_or_insert_function(builder.module, ir.FunctionType(result, list(arguments)), f"llvm.{name}.v{lanes}{_suffix(float_type)}")

    fmuladd = declared("fmuladd", vector, vector, vector, vector)
    fabs = declared("fabs", vector, vector)
    reduce_add = declared("vector.reduce.fadd", float_type, float_type, vector)
    zero = ir.Constant(vector, [0.0] * lanes)
    steps = _splat(builder, step, vector)
    partials = [cgutils.alloca_once_value(builder, zero) for _ in range(ACCUMULATORS)]
    align = W_type.dtype.bitwidth // 8

    def load(base, k):
        return builder.load(builder.bitcast(builder.gep(base, [k]), vector.as_pointer()), align=align)

    def one(k, partial, keep=None):
        value = builder.call(fmuladd, [steps, load(direction, k), load(source, k)])
        builder.store(value, builder.bitcast(builder.gep(target, [k]), vector.as_pointer()), align=align)
        weight_k = load(weights, k) if keep is None else builder.select(keep, load(weights, k), zero)
        builder.store(builder.call(fmuladd, [weight_k, builder.call(fabs, [value]), builder.load(partial)]), partial)

    full = builder.and_(width, index(-lanes))
    blocks = builder.and_(width, index(-lanes * ACCUMULATORS))
    with cgutils.for_range_slice(builder, index(0), blocks, index(lanes * ACCUMULATORS), inc=True) as (k, _):
        for a, partial in enumerate(partials):
            one(builder.add(k, index(a * lanes)), partial)
    with cgutils.for_range_slice(builder, blocks, full, index(lanes), inc=True) as (k, _):
        one(k, partials[0])
    rest = builder.sub(width, full)
    with builder.if_then(builder.icmp_signed(">", rest, index(0))):
        # Lane numbers as integers of the floats' width: one compare of one vector.
        lane_type = ir.IntType(W_type.dtype.bitwidth)
        lane_vector = ir.VectorType(lane_type, lanes)
        rests = _splat(builder, builder.trunc(rest, lane_type) if lane_type.width < 64 else rest, lane_vector)
        keep = builder.icmp_signed("<", ir.Constant(lane_vector, list(range(lanes))), rests)
        one(full, partials[1 % ACCUMULATORS], keep)
    total = builder.load(partials[0])
    for partial in partials[1:]:
        total = builder.fadd(total, builder.load(partial), flags=("reassoc",))
    return builder.call(reduce_add, [ir.Constant(float_type, 0.0), total], fastmath=("reassoc",))


@intrinsic_kernel
def _level_index(typingctx, i):
    """Typer of a level index made visibly non-negative: ``i & (2⁶² − 1)``, which is ``i`` for every level.

    Numba adds ``len`` to a negative index before every array access; with
    the top two bits known to be zero, LLVM proves ``i`` and ``i + 1`` non-
    negative and drops those corrections from the walk's loop.
    """
    return i(i), _emit_level_index


def _emit_level_index(context, builder, signature, args):
    """The IR of :func:`_level_index`: one ``and``."""
    from llvmlite import ir

    return builder.and_(args[0], ir.Constant(args[0].type, (1 << 62) - 1))


def _splat(builder, value, vector_type):
    """``value`` in every lane of a vector of ``vector_type`` (one insert, one shuffle)."""
    from llvmlite import ir

    lane_zero = ir.Constant(ir.IntType(32), 0)
    undefined = ir.Constant(vector_type, ir.Undefined)
    first = builder.insert_element(undefined, value, lane_zero)
    return builder.shuffle_vector(first, undefined, ir.Constant(ir.VectorType(ir.IntType(32), vector_type.count), [0] * vector_type.count))


def _suffix(float_type) -> str:
    """LLVM's name of a float type in an intrinsic's name (``f32``, ``f64``)."""
    return "f32" if str(float_type) == "float" else "f64"


@kernel
def leaf_ok(tree, walk):
    """The leaf test: ``basis·x + offset`` lies in the box, in exact int64 (or, on inexact trees, the float test of the columns no cut checked)."""
    basis, offset, x, half = tree.basis, tree.offset, walk.x, tree.half
    N = basis.shape[0]
    D = basis.shape[1]
    if tree.exact:
        for r in range(N):
            s = offset[r]
            for j in range(D):
                s += basis[r, j] * x[j]
            if s > half[r] or s < -half[r]:
                return False
        return True
    for r in range(tree.det_start[0]):  # noqa: SIM110 (Numba compiles no generator); the cut checked every other column at its level
        if not determined_ok(walk.W[0, r], tree.det_limit[r] - DETERMINED_SLACK + 1e-3):
            return False
    return True


@kernel
def _coordinate_bounds(i, c, low, high, tree, W):
    """Narrow ``[low, high]`` for x_i by cut 3 on every coordinate where W_i can still change.

    Counts how often the bounds remove a value the others allow, so the
    caller can switch them off at levels where they never do.
    """
    cinv, chalf, coord = tree.cinv, tree.chalf, tree.coord
    counted = coord[0, i] == 1
    if counted:
        coord[1, i] += 1
    plain_low, plain_high = low, high
    for r in range(tree.det_start[i + 1]):  # the other columns add no bound
        lo_r, hi_r = coordinate_window(c, W[i + 1, r], cinv[i, r], chalf[i, r])
        if lo_r > low:
            low = lo_r
        if hi_r < high:
            high = hi_r
    if counted:
        first, last = integers_in(low, high, tree.ylo[i], tree.yhi[i])
        plain_first, plain_last = integers_in(plain_low, plain_high, tree.ylo[i], tree.yhi[i])
        if first > plain_first or last < plain_last:
            coord[2, i] += 1
    return low, high


@kernel
def _enter_level(i, tree, walk):
    """Centre and admissible integer interval of x_i, given x_{i+1..D−1}, and its zig-zag start.

    The cold paths (:func:`start_below`, :func:`estimate_tree`, a walk's
    root) call it; the hot loop of :func:`enumerate_box` carries the same
    body written out (see the comment there).
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
    low, high = window(c, tree.bound2[i] - walk.lpart[i + 1], tree.rr[i], tree.hold[i])
    if tree.coord[0, i] and low <= high:
        low, high = _coordinate_bounds(i, c, low, high, tree, walk.W)
    first, last = integers_in(low, high, tree.ylo[i], tree.yhi[i])
    if tree.relaxed:
        first, last = nearest_when_none(c, low, high, first, last, tree.ylo[i], tree.yhi[i])
    low_i = int(first)
    high_i = int(last)
    if tree.symmetric and walk.zflag[i + 1] and low_i < 0:
        low_i = 0  # ±v give the same solution: keep the top nonzero coefficient > 0
    if low_i > high_i:  # no integer: both zig-zag pointers out of range
        walk.lo[i], walk.hi[i], walk.up[i], walk.dn[i] = 1, 0, 1, 0
        return
    walk.lo[i] = low_i
    walk.hi[i] = high_i
    m = min(max(round(c), low_i), high_i)
    walk.up[i] = m
    walk.dn[i] = m - 1


@kernel(reorder_sums=True)
def _child(i, xi, tree, walk):
    """Whether the child x_i = xi of the current node passes cuts 6 and 4; forms its W_i and fixed ℓ1 norm whenever cut 6 passes.

    Cold paths only, like :func:`_enter_level`. Compiled with
    reassociation, as :func:`enumerate_box` is (the same expressions, so
    the same regrouping allowed, MATH.md §6.1). The fixed ℓ1 norm is set
    before the Hölder test, so that :func:`start_below`, which replays a
    prefix the walk passed, rebuilds it whatever the sum's last bits.
    """
    W, bstar, det_start, det_limit = walk.W, tree.bstar, tree.det_start, tree.det_limit
    diff = xi - walk.ctr[i]
    fixed = 0.0
    for r in range(det_start[i], det_start[i + 1]):
        value = W[i + 1, r] + diff * bstar[i, r]
        if not determined_ok(value, det_limit[r]):
            return False
        fixed += determined_l1(value, det_limit[r])
    s1 = advance_l1(W, bstar, i, diff, det_start[i + 1], tree.weight) + walk.fixed_l1[i + 1]
    walk.fixed_l1[i] = walk.fixed_l1[i + 1] + fixed
    s2 = walk.lpart[i + 1] + diff * diff * tree.rr[i] + tree.cperp2
    return holder_ok(s1, s2, tree.tol, tree.tol_abs)


@kernel
def _fix(i, xi, tree, walk):
    """Fix x_i = xi (a child that passed :func:`_child`): its norm, its zero flag, the stale partial sums."""
    diff = xi - walk.ctr[i]
    walk.x[i] = xi
    walk.lpart[i] = walk.lpart[i + 1] + diff * diff * tree.rr[i]
    walk.zflag[i] = walk.zflag[i + 1] and xi == 0
    if i > 0 and walk.stale[i - 1] < i:
        walk.stale[i - 1] = i


@kernel(reorder_sums=True)
def enumerate_box(tree, walk, floor, split, budget, limit=None):
    """Run the enumeration for at most ``budget`` nodes.

    Compiled with reassociation, so that the ℓ1 sum inlined into it
    vectorises; its other float expressions have a few terms each, and any
    order of them moves their values by a few units in the last place, far
    inside the margins of the cuts (MATH.md §6.1).

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
        A tree with ``count_only`` returns FOUND for the walk's first leaf
        that passes the leaf test only, and counts the others in
        ``istate[SOLUTIONS]``.
    """
    istate, x, ctr, up, dn, lo, hi = walk.istate, walk.x, walk.ctr, walk.up, walk.dn, walk.lo, walk.hi
    taken, disc, zflag = walk.taken, walk.disc, walk.zflag
    symmetric, count_only, relaxed = tree.symmetric, tree.count_only, tree.relaxed
    W, bstar, det_start, det_limit, weight, fixed_l1, lpart = walk.W, tree.bstar, tree.det_start, tree.det_limit, tree.weight, walk.fixed_l1, walk.lpart
    stale, partsum = walk.stale, walk.partsum
    muT, bound2, hold, ylo, yhi, coord = tree.muT, tree.bound2, tree.hold, tree.ylo, tree.yhi, tree.coord
    rr, cperp2, tol, tol_abs = tree.rr, tree.cperp2, tree.tol, tree.tol_abs
    D = tree.rr.shape[0]
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
        i = _level_index(i)
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
        # --- the body of _child, written out: a call that takes the walk's arrays,
        # even one Numba inlines, costs more than the work itself (BENCHMARKS.md,
        # "Evidence for tuning values", the kernel's node). The tests hold every walk to the same nodes.
        diff = xi - ctr[i]
        # Coordinates that x_i … x_{D−1} determine: w[r] = W_i[r] is an integer that must
        # lie in the box. Tested first: it reads a few entries, and a node it cuts needs no W_i.
        fixed = 0.0
        determined = True
        for column in range(det_start[i], det_start[i + 1]):
            r = _level_index(column)
            value = W[i + 1, r] + diff * bstar[i, r]
            if not determined_ok(value, det_limit[r]):
                determined = False
                break
            fixed += determined_l1(value, det_limit[r])
        if not determined:
            continue
        # W_i where it still changes; the coordinates determined above level i add their fixed part.
        s1 = advance_l1(W, bstar, i, diff, det_start[i + 1], weight) + fixed_l1[i + 1]
        s2 = lpart[i + 1] + diff * diff * rr[i] + cperp2
        if not holder_ok(s1, s2, tol, tol_abs):
            continue
        fixed_l1[i] = fixed_l1[i + 1] + fixed
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
        # _fix, written out.
        x[i] = xi
        lpart[i] = lpart[i + 1] + diff * diff * rr[i]
        if symmetric:  # only a symmetric tree reads the zero flags
            zflag[i] = zflag[i + 1] and xi == 0
        if i > 0 and stale[i - 1] < i:
            stale[i - 1] = i
        if i == split:
            istate[LEVEL] = i
            istate[NODES] += nodes
            return PREFIX
        if i == 0:
            if symmetric and zflag[0]:
                continue  # the zero vector
            istate[LEAVES] += 1
            if leaf_ok(tree, walk):
                if count_only and istate[RETURNED]:
                    istate[SOLUTIONS] += 1
                    continue
                istate[RETURNED] += 1
                istate[LEVEL] = 0
                istate[NODES] += nodes
                return FOUND
            continue
        i = _level_index(i - 1)
        # --- _enter_level, written out for the same reason.
        top = stale[i]
        for level in range(top, i, -1):
            j = _level_index(level)
            partsum[i, j] = partsum[i, j + 1] - muT[i, j] * x[j]
        if i > 0 and stale[i - 1] < top:
            stale[i - 1] = top
        stale[i] = i
        if limit is not None:  # only the limited walk counts the children taken
            taken[i] = 0
        c = partsum[i, i + 1]
        ctr[i] = c
        low, high = window(c, bound2[i] - lpart[i + 1], rr[i], hold[i])
        if coord[0, i] and low <= high:
            low, high = _coordinate_bounds(i, c, low, high, tree, W)
        first, last = integers_in(low, high, ylo[i], yhi[i])
        if relaxed:
            first, last = nearest_when_none(c, low, high, first, last, ylo[i], yhi[i])
        low_i = int(first)
        high_i = int(last)
        if symmetric and zflag[i + 1] and low_i < 0:
            low_i = 0  # ±v give the same solution
        if low_i > high_i:  # no integer: both zig-zag pointers out of range
            lo[i], hi[i], up[i], dn[i] = 1, 0, 1, 0
            continue
        lo[i] = low_i
        hi[i] = high_i
        m = min(max(round(c), low_i), high_i)
        up[i] = m
        dn[i] = m - 1
    istate[LEVEL] = i
    istate[NODES] += nodes
    return RUNNING


@kernel
def start_below(floor, tree, walk):
    """Set a fresh walk to the subtree below the fixed ``walk.x[floor:]`` (floor ≥ 1).

    The prefix must be a node the enumeration itself produced (status
    PREFIX), so it already passed every test; replaying it with the same
    tests rebuilds the walk's state. Then :func:`enumerate_box` with the
    same ``floor`` searches exactly that subtree.
    """
    x = walk.x
    D = tree.rr.shape[0]
    walk.zflag[D] = True
    for j in range(D - 1, floor - 1, -1):
        _enter_level(j, tree, walk)
        _child(j, x[j], tree, walk)
        _fix(j, x[j], tree, walk)
    _enter_level(floor - 1, tree, walk)
    walk.istate[LEVEL] = floor - 1
    walk.istate[PHASE] = 1


@kernel
def estimate_tree(tree, walk, probes, seed):
    """Knuth's estimate of the number of nodes :func:`enumerate_box` will visit.

    Each probe walks from the root to a dead end, choosing uniformly among
    the children that pass every test; the visited-node count along the walk,
    weighted by the product of the branching factors above, is an unbiased
    estimate of the tree size. Returns the mean over ``probes`` walks (the
    walk's arrays are scratch).
    """
    lo, hi = walk.lo, walk.hi
    D = tree.rr.shape[0]
    np.random.seed(seed)
    total = 0.0
    passing = np.empty(16, dtype=np.int64)  # the children that pass, at the level being probed
    for _ in range(probes):
        for j in range(D):
            walk.stale[j] = D - 1
        walk.zflag[D] = True
        weight = 1.0
        i = D - 1
        while i >= 0:
            _enter_level(i, tree, walk)
            if hi[i] < lo[i]:
                break
            total += weight * (hi[i] - lo[i] + 1)
            if i == 0:
                break
            if passing.shape[0] < hi[i] - lo[i] + 1:
                passing = np.empty(hi[i] - lo[i] + 1, dtype=np.int64)
            count = 0
            for xi in range(lo[i], hi[i] + 1):
                if _child(i, xi, tree, walk):
                    passing[count] = xi
                    count += 1
            if count == 0:
                break
            weight *= count
            xi = passing[np.random.randint(count)]
            _child(i, xi, tree, walk)  # forms the picked child's W_i again (the last one formed may be another's)
            _fix(i, xi, tree, walk)
            i -= 1
    return total / probes
