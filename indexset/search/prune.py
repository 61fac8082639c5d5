"""Pruning before search: fixings, rank feasibility, independent components.

Thin, validating wrappers: the interval propagation is the Numba kernel
:func:`indexset.native.prune.propagate_bounds` on large systems, and its
vectorised NumPy form (:func:`propagate_vectorized`) on the others, which
then never load Numba. Interval propagation is monotone, so both reach the
same fixpoint: the same fixings, or both a row that cannot be met.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from indexset.native.prune import propagate_bounds
from indexset.search.system import System

VECTORIZED_CELLS = 1 << 18
"""Systems with at most this many coefficients are propagated by NumPy,
larger ones by the compiled kernel (each NumPy round costs time per
coefficient, and a system built to fix one unit a round needs up to n
rounds; on the systems below the cap that stays under Numba's load)."""


@dataclass
class Pruning:
    """What pruning established.

    Attributes
    ----------
    fixed : ndarray of int8
        −1 free, 0 or 1 forced in every solution.
    infeasible : bool
        Some row cannot be met by any 0/1 vector (proof: its interval).
    reason : str
        Why, when infeasible.
    components : list of (rows, columns)
        Independent parts of the system over the free variables.
    """

    fixed: np.ndarray
    infeasible: bool = False
    reason: str = ""
    components: list = field(default_factory=list)

    def stages(self) -> dict:
        """Facts for ``Result.stages``."""
        return {
            "fixed_in": int((self.fixed == 1).sum()),
            "fixed_out": int((self.fixed == 0).sum()),
            "free": int((self.fixed < 0).sum()),
            "components": len(self.components),
        }


def row_bounds(system: System) -> tuple[np.ndarray, np.ndarray]:
    """Row intervals [t − slack, t + slack] (slack 0 for equations) as int64."""
    t = system.t.astype(np.int64)
    slack = np.zeros_like(t) if system.slack is None else system.slack.astype(np.int64)
    return t - slack, t + slack


def prune(system: System, vectorized_cells: int = VECTORIZED_CELLS) -> Pruning:
    """Interval propagation to a fixpoint, then the component split.

    Skipped (nothing fixed) when int64 could overflow; the search engines
    work with exact integers either way. Systems of at most
    ``vectorized_cells`` coefficients are propagated by NumPy, larger ones
    by the compiled kernel (the same fixpoint either way).
    """
    fixed = np.full(system.n, -1, dtype=np.int8)
    if system.m and system.fits_int64() and (system.slack is None or all(abs(int(s)) < 2**60 for s in system.slack)):
        low, high = row_bounds(system)
        propagate = propagate_vectorized if system.M.size <= vectorized_cells else propagate_bounds
        outcome = propagate(system.M.astype(np.int64), low, high, fixed)
        if outcome < 0:
            return Pruning(fixed, True, "interval propagation: some equation's range over the box cannot reach its right-hand side")
    return Pruning(fixed, components=components(system, fixed))


def propagate_vectorized(M: np.ndarray, low: np.ndarray, high: np.ndarray, fixed: np.ndarray) -> int:
    """:func:`indexset.native.prune.propagate_bounds` in NumPy: every row at once, a round at a time.

    A round takes each row's range over the box given the fixings so far,
    and fixes every free unit that one row's range forces (a unit forced to
    both values by two rows, or to neither by one, proves the system
    infeasible). Parameters and return value as the kernel's; the caller
    guarantees int64 cannot overflow.
    """
    newly = 0
    nonzero = M != 0
    while True:
        free = fixed < 0
        base = M[:, ~free] @ fixed[~free].astype(np.int64)
        lo_sum = base + np.where(M < 0, M, 0)[:, free].sum(axis=1)
        hi_sum = base + np.where(M > 0, M, 0)[:, free].sum(axis=1)
        if (lo_sum > high).any() or (hi_sum < low).any():
            return -1
        A = M[:, free]
        # Each row's range with unit i left out, then with z_i = 1 or 0 (columns: the free units).
        lo_free = lo_sum[:, None] - np.minimum(A, 0)
        hi_free = hi_sum[:, None] - np.maximum(A, 0)
        one_ok = (lo_free + A <= high[:, None]) & (hi_free + A >= low[:, None])
        zero_ok = (lo_free <= high[:, None]) & (hi_free >= low[:, None])
        active = nonzero[:, free]
        if (active & ~one_ok & ~zero_ok).any():
            return -1
        to_one = (active & one_ok & ~zero_ok).any(axis=0)
        to_zero = (active & zero_ok & ~one_ok).any(axis=0)
        if (to_one & to_zero).any():
            return -1
        if not (to_one | to_zero).any():
            return newly
        columns = np.flatnonzero(free)
        fixed[columns[to_one]] = 1
        fixed[columns[to_zero]] = 0
        newly += int(to_one.sum() + to_zero.sum())


def no_pruning(system: System) -> Pruning:
    """Nothing fixed, one part holding everything (the ``prune`` ablation)."""
    fixed = np.full(system.n, -1, dtype=np.int8)
    return Pruning(fixed, components=whole_part(system, fixed))


def whole_part(system: System, fixed: np.ndarray) -> list[tuple[list[int], list[int]]]:
    """One part: every row and every free variable."""
    return [(list(range(system.m)), [i for i in range(system.n) if fixed[i] < 0])]


def components(system: System, fixed: np.ndarray) -> list[tuple[list[int], list[int]]]:
    """Independent parts: connected components of the variable–equation graph.

    Free variables that appear in no equation form components of their own
    with no rows (each doubles the number of solutions).
    """
    free = [i for i in range(system.n) if fixed[i] < 0]
    if not free:
        return _ordered([([r], []) for r in range(system.m)])
    incidence = system.M[:, free] != 0
    free_in_row = [[free[j] for j in np.flatnonzero(incidence[r])] for r in range(system.m)]
    if _one_part(incidence):
        return _ordered([([r for r in range(system.m) if free_in_row[r]], free)] + [([r], []) for r in range(system.m) if not free_in_row[r]])
    import networkx as nx  # loaded only for systems that do fall apart: its import is slow

    graph = nx.Graph()
    graph.add_nodes_from(("z", i) for i in free)
    for r in range(system.m):
        graph.add_node(("row", r))
        graph.add_edges_from((("row", r), ("z", i)) for i in free_in_row[r])
    parts = []
    for component in nx.connected_components(graph):
        rows = sorted(k for kind, k in component if kind == "row")
        columns = sorted(k for kind, k in component if kind == "z")
        parts.append((rows, columns))
    return _ordered(parts)


def _one_part(incidence: np.ndarray) -> bool:
    """Whether rows joining variables that share them connect every variable.

    ``incidence[r, j]``: variable j (of at least one) appears in row r.
    Reachability from the first variable, a row and a variable layer at a
    time; the dense (★) systems are one part, and this test spares them
    networkx's import.
    """
    if not incidence.any(axis=0).all():
        return False
    variables = np.zeros(incidence.shape[1], dtype=bool)
    variables[0] = True
    while True:
        rows = incidence[:, variables].any(axis=1)
        reached = incidence[rows].any(axis=0)
        if reached.sum() == variables.sum():
            return bool(variables.all())
        variables = reached


def _ordered(parts: list) -> list:
    """Parts in a fixed order: by first column, then first row (rows-only parts first)."""
    return sorted(parts, key=lambda part: (part[1][:1] or [-1], part[0][:1]))


def subsystem(system: System, fixed: np.ndarray, rows: list[int], columns: list[int]) -> System:
    """The part of the system on some rows and free columns, fixed values moved right."""
    ones = [i for i in range(system.n) if fixed[i] == 1]
    M = system.M[np.ix_(rows, columns)] if rows and columns else np.zeros((len(rows), len(columns)), dtype=object)
    t = np.array([int(system.t[r]) - sum(int(system.M[r, i]) for i in ones) for r in rows], dtype=object)
    slack = None if system.slack is None else system.slack[rows]
    return System(M.astype(object), t, slack, [system.rows[r] for r in rows])
