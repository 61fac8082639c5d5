"""Breadth-first walk of small enumeration trees, in NumPy alone.

The tree is that of :func:`indexset.native.enumerate.enumerate_box`: the
same :class:`~indexset.native.tree.Tree`, and every node asks the questions
the kernels of :mod:`indexset.native.enumerate` define (their Python
source, on arrays of nodes).
It is walked a level at a time over a frontier of up to ``chunk`` nodes: a
wider level is cut into chunks, each walked to the leaves before the next
(depth first across chunks), so a first solution can end a walk before
the whole tree is made, and memory stays bounded. Per node it is much
slower than the compiled kernel; it needs no Numba, whose loading costs
more than the whole walk of a tree of a few thousand nodes. A walk may
stop at a node budget, or (``until``) at its first solutions; only a walk
that ran to the end is complete.
"""

from __future__ import annotations

import numpy as np

from indexset.budget import Budget
from indexset.native import enumerate as node


def walk_breadth_first(tree, start, max_nodes: int, budget: Budget | None = None, until=None, chunk: int = 1024) -> tuple[np.ndarray | None, int]:
    """Every leaf of the enumeration tree (up to ``until``), unless it has more than ``max_nodes`` nodes.

    Parameters
    ----------
    tree : Tree
        The tree to walk (:meth:`indexset.search.lattice.basis.Lattice.tree`,
        in float64) of an outside-target lattice (not symmetric: the walk does
        not fold x and −x together).
    start : (ndarray, ndarray)
        W at the root (−c⊥) and the target's coordinates along each b*_j
        (the lattice data's ``top`` and ``tgt``).
    max_nodes : int
        Node budget; the walk gives up as soon as the nodes it has made
        exceed it.
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
        Nodes made: the values tried at each level, as the kernel counts them.
    """
    D = tree.rr.shape[0]
    if D == 0:  # the root is the only leaf
        return _root(start, D, 1).x, 0
    tgt = start[1]
    chunks = [(D - 1, _root(start, D, 1))]
    leaves, nodes = [], 0
    while chunks:
        i, parents = chunks.pop()
        low, count = _children(tree, tgt, i, parents)
        nodes += int(count.sum())
        # Checked before the children are built: the chunk that overflows would cost the most.
        if nodes > max_nodes or (budget is not None and budget.expired()):
            return None, nodes
        which = np.repeat(np.arange(len(count)), count)
        first = np.cumsum(count) - count
        value = low[which] + np.arange(len(which)) - first[which]
        kept = _descend(tree, tgt, i, parents.take(which), value)
        if i == 0:
            leaves.append(kept.x)
            if len(kept.x) and until is not None and until(kept.x):
                break
            continue
        # Pushed last to first, so the first chunk is walked first.
        chunks.extend((i - 1, kept.take(slice(k, k + chunk))) for k in reversed(range(0, len(kept.x), chunk)))
    return np.concatenate(leaves) if leaves else np.zeros((0, D), dtype=np.int64), nodes


def estimate_nodes(tree, start, probes: int, seed: int) -> float:
    """Knuth's estimate of the nodes :func:`walk_breadth_first` makes on the whole tree.

    ``probes`` random root-to-leaf descents, walked side by side: at each
    level a descent counts the values tried below its node (weighted by the
    product of the counts of children above it) and moves to one of the
    children that pass, drawn uniformly; the mean over descents is an
    unbiased estimate of the size of the tree (heavy-tailed: it is only used
    to decide whether a walk is worth starting).
    """
    rng = np.random.default_rng(seed)
    D, tgt = tree.rr.shape[0], start[1]
    nodes = _root(start, D, probes)
    weight = np.ones(probes)
    total = 0.0
    for i in range(D - 1, -1, -1):
        low, count = _children(tree, tgt, i, nodes)
        total += float((weight * count).sum()) / probes
        if i == 0:
            break
        # Every child of every descent, then one of each descent's passing children.
        which = np.repeat(np.arange(len(count)), count)
        first = np.cumsum(count) - count
        value = low[which] + np.arange(len(which)) - first[which]
        passed = _child_data(tree, tgt, i, nodes.take(which), value)[0]
        passing = np.bincount(which[passed], minlength=len(count))
        alive = passing > 0
        if not alive.any():
            break
        # The k-th passing child of descent p, k uniform below its count.
        pick = np.floor(rng.random(int(alive.sum())) * passing[alive]).astype(np.int64)
        offsets = np.cumsum(passing) - passing
        chosen = np.flatnonzero(passed)[offsets[alive] + pick]
        weight = weight[alive] * passing[alive]
        nodes = _descend(tree, tgt, i, nodes.take(which[chosen]), value[chosen])
    return total


class _Nodes:
    """A frontier of nodes: their fixed coefficients, W, squared norm and fixed ℓ1 norm (one row each)."""

    def __init__(self, x, W, norm2, fixed_l1) -> None:
        self.x, self.W, self.norm2, self.fixed_l1 = x, W, norm2, fixed_l1

    def take(self, index) -> _Nodes:
        return _Nodes(self.x[index], self.W[index], self.norm2[index], self.fixed_l1[index])


def _root(start, D: int, copies: int) -> _Nodes:
    """``copies`` root nodes."""
    top, _ = start
    return _Nodes(np.zeros((copies, D), dtype=np.int64), np.tile(top, (copies, 1)), np.zeros(copies), np.zeros(copies))


def _children(tree, tgt, i: int, nodes: _Nodes):
    """The values ``low, low + 1, …, low + count − 1`` of x_i tried below each node (cuts 1, 2, 3 and 5)."""
    centre = tgt[i] - nodes.x[:, i + 1:] @ tree.muT[i, i + 1:]
    low, high = node.window.py_func(centre, tree.bound2[i] - nodes.norm2, tree.rr[i], tree.hold[i])
    if tree.coord[0, i]:
        live = tree.det_start[i + 1]
        lows, highs = node.coordinate_window.py_func(centre[:, None], nodes.W[:, :live], tree.cinv[i, :live], tree.chalf[i, :live])
        if live:
            low, high = np.maximum(low, lows.max(axis=1)), np.minimum(high, highs.min(axis=1))
    first, last = node.integers_in.py_func(low, high, tree.ylo[i], tree.yhi[i])
    if tree.relaxed:
        first, last = node.nearest_when_none.py_func(centre, low, high, first, last, tree.ylo[i], tree.yhi[i])
    return first.astype(np.int64), np.maximum(last - first + 1, 0).astype(np.int64)


def _child_data(tree, tgt, i: int, nodes: _Nodes, value):
    """Cuts 6 and 4 on the children x_i = ``value`` of ``nodes``: which pass, and their W_i and fixed ℓ1 norms."""
    centre = tgt[i] - nodes.x[:, i + 1:] @ tree.muT[i, i + 1:]
    diff = value - centre
    start, live = tree.det_start[i], tree.det_start[i + 1]
    W = nodes.W.copy()
    W[:, :live] += diff[:, None] * tree.bstar[i, :live]
    determined = W[:, start:live]
    ok = node.determined_ok.py_func(determined, tree.det_limit[start:live]).all(axis=1)
    fixed = nodes.fixed_l1 + node.determined_l1.py_func(determined, tree.det_limit[start:live]).sum(axis=1)
    absolute = np.abs(W[:, :live])
    s1 = absolute @ tree.weight[:live] + nodes.fixed_l1
    norm2 = nodes.norm2 + diff * diff * tree.rr[i]
    ok &= node.holder_ok.py_func(s1, norm2 + tree.cperp2, tree.tol, tree.tol_abs)
    return ok, W, norm2, fixed


def _descend(tree, tgt, i: int, nodes: _Nodes, value) -> _Nodes:
    """The children x_i = ``value`` of ``nodes`` (one row each) that pass cuts 6 and 4."""
    ok, W, norm2, fixed = _child_data(tree, tgt, i, nodes, value)
    x = nodes.x.copy()
    x[:, i] = value
    return _Nodes(x[ok], W[ok], norm2[ok], fixed[ok])
