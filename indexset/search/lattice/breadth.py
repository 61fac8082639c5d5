"""Breadth-first walk of small enumeration trees, in NumPy alone.

The tree is that of :func:`indexset.native.enumerate.enumerate_box`, cut by
the same tests on the same float data with the same margins (norm, Hölder
on b*_i, per-coordinate bounds on W_i, Hölder with W_i, dual bounds;
MATH.md §6.1), but walked a level at a time over a frontier of up to
``chunk`` nodes: a wider level is cut into chunks, each walked to the
leaves before the next (depth first across chunks), so a first solution
can end a walk before the whole tree is made, and memory stays bounded.
Two differences from the kernel, both sound: the per-coordinate bounds
are on at every level (the kernel switches them off where they stop
paying), and the kernel's cut on determined coordinates is left out.
Per node it is much slower than the compiled kernel; it needs no Numba,
whose loading costs more than the whole walk of a tree of a few thousand
nodes. A walk may stop at a node
budget, or (``until``) at its first solutions; only a walk that ran to
the end is complete.
"""

from __future__ import annotations

import numpy as np

from indexset.budget import Budget

SLACK = 1e-9
"""Rounding slack of an interval end before ceil/floor, as in the kernel."""

def walk_breadth_first(data, max_nodes: int, tol: float, budget: Budget | None = None, until=None, chunk: int = 1024) -> tuple[np.ndarray | None, int]:
    """Every leaf of the enumeration tree (up to ``until``), unless it has more than ``max_nodes`` nodes.

    Parameters
    ----------
    data : FloatData
        The lattice's float data (:class:`indexset.search.lattice.basis.FloatData`,
        under the bounds to walk) of an outside-target lattice (not
        symmetric: the walk does not fold x and −x together).
    max_nodes : int
        Node budget; the walk gives up as soon as the nodes it has made
        exceed it.
    tol : float
        Margin of the Hölder test on W_i (the kernel's ``tol``).
    budget : Budget, optional
        The walk gives up soon after its deadline passes or its stop is set.
    until : callable, optional
        ``until(leaves) -> bool``, called on each chunk's leaves as they
        come; the walk ends as soon as it returns True (with the leaves so
        far: then not every leaf of the tree is among them).
    chunk : int
        Most nodes of one level expanded together.

    Returns
    -------
    leaves : ndarray of int64, shape (k, D), or None
        Every coefficient vector x that passed every test at every level
        (candidates: the caller checks each exactly), in the order of the
        level-wide walk; after an ``until`` end only those of the chunks
        walked so far. None when the budget, the time or ``stop`` ended the
        walk first.
    nodes : int
        Nodes made (children that passed the interval tests).
    """
    D = data.rr.shape[0]
    if D == 0:  # the root is the only leaf
        return _root(data, 1)[0], 0
    chunks = [(D - 1, *_root(data, 1))]
    leaves, nodes = [], 0
    while chunks:
        i, x, W, norm2 = chunks.pop()
        low, count, centre = _intervals(data, i, x, W, norm2)
        nodes += int(count.sum())
        # Checked before the children are built: the chunk that overflows would cost the most.
        if nodes > max_nodes or (budget is not None and budget.expired()):
            return None, nodes
        parent = np.repeat(np.arange(len(count)), count)
        first = np.cumsum(count) - count
        value = low[parent] + np.arange(len(parent)) - first[parent]
        x, W, norm2, _ = _descend(data, i, x[parent], W[parent], norm2[parent], value, centre[parent], tol)
        if i == 0:
            leaves.append(x)
            if len(x) and until is not None and until(x):
                break
            continue
        # Pushed last to first, so the first chunk is walked first.
        chunks.extend((i - 1, x[k:k + chunk], W[k:k + chunk], norm2[k:k + chunk]) for k in reversed(range(0, len(x), chunk)))
    return np.concatenate(leaves) if leaves else np.zeros((0, D), dtype=np.int64), nodes


def estimate_nodes(data, probes: int, seed: int, tol: float) -> float:
    """Knuth's estimate of the nodes :func:`walk_breadth_first` makes on the whole tree.

    ``probes`` random root-to-leaf descents, walked side by side: at each
    level a descent counts the children of its node (weighted by the
    product of the counts above it) and moves to one of them, drawn
    uniformly; the mean over descents is an unbiased estimate of the size
    of the tree (heavy-tailed: it is only used to decide whether a walk is
    worth starting).
    """
    rng = np.random.default_rng(seed)
    x, W, norm2 = _root(data, probes)
    weight = np.ones(probes)
    total = 0.0
    for i in range(data.rr.shape[0] - 1, -1, -1):
        low, count, centre = _intervals(data, i, x, W, norm2)
        total += float((weight * count).sum()) / probes
        alive = count > 0
        value = low[alive] + np.floor(rng.random(int(alive.sum())) * count[alive]).astype(np.int64)
        weight = weight[alive] * count[alive]
        x, W, norm2, kept = _descend(data, i, x[alive], W[alive], norm2[alive], value, centre[alive], tol)
        weight = weight[kept]
        if not len(x):
            break
    return total


def _root(data, copies: int):
    """Coefficients, W_D and partial norm of ``copies`` root nodes."""
    D = data.rr.shape[0]
    return np.zeros((copies, D), dtype=np.int64), np.tile(data.top, (copies, 1)), np.zeros(copies)


def _intervals(data, i: int, x: np.ndarray, W: np.ndarray, norm2: np.ndarray):
    """The admissible values ``low, low + 1, …, low + count − 1`` of x_i below each node, and its centre c_i."""
    centre = data.tgt[i] - x[:, i + 1:] @ data.muT[i, i + 1:]
    room = data.bound2[i] - norm2
    half = np.minimum(np.sqrt(np.maximum(room, 0.0) / data.rr[i]), data.hold[i])
    # Per coordinate r: W_i[r] = W_{i+1}[r] + (x_i − c_i)·b*_i[r] must stay within lbox[i, r].
    shifted = centre[:, None] - W * data.cinv[i]
    low_f = np.maximum(centre - half, (shifted - data.chalf[i]).max(axis=1))
    high_f = np.minimum(centre + half, (shifted + data.chalf[i]).min(axis=1))
    low = np.maximum(np.ceil(low_f - SLACK), data.ylo[i]).astype(np.int64)
    high = np.minimum(np.floor(high_f + SLACK), data.yhi[i]).astype(np.int64)
    return low, np.where(room >= 0.0, np.maximum(high - low + 1, 0), 0), centre


def _descend(data, i: int, x, W, norm2, value, centre, tol: float):
    """Children with x_i = ``value`` (rows: fresh copies of their parents' data), less those Hölder with W_i cuts, and the mask of those kept."""
    diff = value - centre
    x[:, i] = value
    W = W + diff[:, None] * data.bstar[i]
    norm2 = norm2 + diff * diff * data.rr[i]
    # Hölder with W_i itself: ‖W_i‖² = ⟨w, W_i⟩ ≤ ‖W_i‖₁ below any box point.
    l1 = np.abs(W).sum(axis=1)
    keep = norm2 + data.cperp2 <= l1 + tol * (1.0 + l1)
    return x[keep], W[keep], norm2[keep], keep
