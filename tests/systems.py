"""Seeded 0/1 systems shared by the search tests (lattice, portfolio, Dask).

Unlike :mod:`reference`, this builds solver inputs (``System``), so it
imports :mod:`indexset.search.system`; the answers are still checked
against brute force or the planted solution, never against this module.
"""

from __future__ import annotations

from itertools import combinations

import numpy as np

from indexset.search.system import System, plain_system


def random_system(rng, m, n, low, high, planted):
    """A ± m × n integer system, with a planted 0/1 solution or a random right side."""
    A = rng.integers(low, high + 1, size=(m, n))
    if planted:
        b = A @ rng.integers(0, 2, size=n)
    else:
        b = rng.integers(low * n // 4, high * n // 4 + 1, size=m)
    return plain_system(A, b)


def star_system(rng, d, n, bound):
    """(★) of a random integer block: column i is vec(W_down[:,i] W_up[i,:]), t = vec(−I)."""
    up = rng.integers(-bound, bound + 1, size=(n, d))
    down = rng.integers(-bound, bound + 1, size=(d, n))
    M = np.array([[int(down[a, i]) * int(up[i, b]) for i in range(n)] for a in range(d) for b in range(d)], dtype=object)
    t = np.array([-1 if a == b else 0 for a in range(d) for b in range(d)], dtype=object)
    return System(M, t, None, [(a, b) for a in range(d) for b in range(d)])


def steiner_triple_system(v):
    """The Kramer–Mesner system of the 2-(v, 3, 1) designs with the trivial group: pairs × triples, every pair covered once."""
    pairs, triples = list(combinations(range(v), 2)), list(combinations(range(v), 3))
    M = np.array([[int(set(pair) <= set(triple)) for triple in triples] for pair in pairs])
    return plain_system(M, np.ones(len(pairs), dtype=np.int64))
