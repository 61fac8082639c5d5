"""Breadth-first walk of small enumeration trees, in NumPy alone.

The tree is that of :func:`indexset.native.enumerate.enumerate_box`, cut by
the same tests on the same float data with the same margins (norm, Hölder
on b*_i, per-coordinate bounds on W_i, Hölder with W_i, dual bounds;
MATH.md §6), but walked a level at a time over the whole frontier. Per node
it is about 15× slower than the compiled kernel; it needs no Numba, whose
loading (about 1 s) costs more than the whole walk of a tree of a few
thousand nodes. A walk may stop at a node budget; only a walk that ran to
the end is complete.
"""

from __future__ import annotations

import time

import numpy as np

SLACK = 1e-9
"""Rounding slack of an interval end before ceil/floor, as in the kernel."""


def walk_breadth_first(arrays: dict, max_nodes: int, tol: float, deadline: float | None = None, stop=None) -> tuple[np.ndarray | None, int]:
    """Every leaf of the enumeration tree, unless it has more than ``max_nodes`` nodes.

    Parameters
    ----------
    arrays : dict
        The lattice's kernel inputs (``Lattice.arrays``: ``muT``, ``rr``,
        ``tgt``, ``hold``, ``bstar``, ``cinv``, ``chalf``, ``ylo``, ``yhi``,
        ``bound2``, ``cperp2``, ``top``) of an outside-target lattice (not
        symmetric: the walk does not fold x and −x together).
    max_nodes : int
        Node budget; the walk gives up as soon as the nodes it has made
        exceed it.
    tol : float
        Margin of the Hölder test on W_i (the kernel's ``tol``).
    deadline : float, optional
        ``time.perf_counter()`` value past which the walk gives up.
    stop : threading.Event, optional
        The walk gives up soon after it is set.

    Returns
    -------
    leaves : ndarray of int64, shape (k, D), or None
        Every coefficient vector x that passed every test at every level
        (candidates: the caller checks each exactly); None when the budget,
        the time or ``stop`` ended the walk first.
    nodes : int
        Nodes made (children that passed the interval tests).
    """
    D = arrays["rr"].shape[0]
    x = np.zeros((1, D), dtype=np.int64)
    W = arrays["top"][None, :].copy()
    norm2 = np.zeros(1)  # ‖projection of w onto b*_{i+1..D−1}‖², the kernel's lpart
    nodes = 0
    for i in range(D - 1, -1, -1):
        parent, value, centre = _children(arrays, i, x, W, norm2)
        nodes += len(parent)
        if nodes > max_nodes or (deadline is not None and time.perf_counter() > deadline) or (stop is not None and stop.is_set()):
            return None, nodes
        diff = value - centre[parent]
        x = x[parent]
        x[:, i] = value
        W = W[parent] + diff[:, None] * arrays["bstar"][i]
        norm2 = norm2[parent] + diff * diff * arrays["rr"][i]
        # Hölder with W_i itself: ‖W_i‖² = ⟨w, W_i⟩ ≤ ‖W_i‖₁ below any box point.
        l1 = np.abs(W).sum(axis=1)
        keep = norm2 + arrays["cperp2"] <= l1 + tol * (1.0 + l1)
        x, W, norm2 = x[keep], W[keep], norm2[keep]
        if not len(x):
            break
    return x, nodes


def _children(arrays: dict, i: int, x: np.ndarray, W: np.ndarray, norm2: np.ndarray):
    """The admissible values of x_i below every frontier node.

    Returns the parent row of each child, its value, and each parent's
    Gram–Schmidt centre c_i.
    """
    centre = arrays["tgt"][i] - x[:, i + 1:] @ arrays["muT"][i, i + 1:]
    room = arrays["bound2"][i] - norm2
    half = np.minimum(np.sqrt(np.maximum(room, 0.0) / arrays["rr"][i]), arrays["hold"][i])
    # Per coordinate r: W_i[r] = W_{i+1}[r] + (x_i − c_i)·b*_i[r] must stay within lbox[i, r].
    shifted = centre[:, None] - W * arrays["cinv"][i]
    low_f = np.maximum(centre - half, (shifted - arrays["chalf"][i]).max(axis=1))
    high_f = np.minimum(centre + half, (shifted + arrays["chalf"][i]).min(axis=1))
    low = np.maximum(np.ceil(low_f - SLACK), arrays["ylo"][i]).astype(np.int64)
    high = np.minimum(np.floor(high_f + SLACK), arrays["yhi"][i]).astype(np.int64)
    count = np.where(room >= 0.0, np.maximum(high - low + 1, 0), 0)
    parent = np.repeat(np.arange(len(count)), count)
    first = np.cumsum(count) - count
    value = low[parent] + np.arange(len(parent)) - first[parent]
    return parent, value, centre
