"""Pruning before search: domains, rank feasibility, independent components.

Thin, validating wrappers: the interval propagation is the Numba kernel
:func:`indexset.native.prune.propagate_bounds` on large systems, and its
vectorised NumPy form (:func:`propagate_vectorized`) on the others, which
then never load Numba; systems whose activities could overflow int64 are
propagated by the same NumPy rounds on Python integers. Interval
propagation is monotone, so every form reaches the same fixpoint: the same
domains, or a row that cannot be met.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from indexset.native.prune import propagate_bounds
from indexset.search.system import System, bounded
from indexset.search.tuning import DEFAULT, SearchTuning


@dataclass
class Pruning:
    """What pruning established.

    Attributes
    ----------
    low, high : ndarray
        The domain ``low_j ≤ z_j ≤ high_j`` of every unknown in every
        solution (int64, or Python ints when the system needs them).
    infeasible : bool
        Some row cannot be met by any point of the box (proof: its interval).
    reason : str
        Why, when infeasible.
    components : list of (rows, columns)
        Independent parts of the system over the free unknowns.
    """

    low: np.ndarray
    high: np.ndarray
    infeasible: bool = False
    reason: str = ""
    components: list = field(default_factory=list)

    @property
    def fixed(self) -> np.ndarray:
        """−1 for a free unknown (low < high), else its one value."""
        return np.array([-1 if lo != hi else int(lo) for lo, hi in zip(self.low, self.high)], dtype=np.int64)

    def free(self) -> list[int]:
        """The unknowns whose domain holds more than one value."""
        return [j for j in range(len(self.low)) if self.low[j] != self.high[j]]

    def stages(self) -> dict:
        """Facts for ``Result.stages``."""
        fixed = self.fixed
        return {
            "fixed_in": int((fixed > 0).sum()),
            "fixed_out": int((fixed == 0).sum()),
            "free": int((fixed < 0).sum()),
            "components": len(self.components),
        }


def row_bounds(system: System) -> tuple[np.ndarray, np.ndarray]:
    """Row intervals [t − slack, t + slack] (slack 0 for equations), as Python ints."""
    slack = np.zeros(system.m, dtype=object) if system.slack is None else system.slack
    return system.t - slack, system.t + slack


def prune(system: System, tuning: SearchTuning = DEFAULT) -> Pruning:
    """Interval propagation to a fixpoint, then the component split.

    Systems of at most ``tuning.vectorized_cells`` coefficients are
    propagated by NumPy (each round costs time per coefficient, and a system
    built to fix one unknown a round needs up to n rounds), larger ones by
    the compiled kernel, and systems whose activities
    could overflow int64 by NumPy on Python integers (the same fixpoint
    every way).
    """
    low = np.zeros(system.n, dtype=object)
    high = np.array(system.bounds(), dtype=object)
    row_low, row_high = row_bounds(system)
    if system.m:
        rounds = tuning.rounds_per_unknown * system.n + 64
        narrow = system.fits_int64() and all(abs(int(v)) < 2**60 for v in np.concatenate([row_low, row_high]))
        if narrow:
            low, high = low.astype(np.int64), high.astype(np.int64)
            M, row_low, row_high = system.M.astype(np.int64), row_low.astype(np.int64), row_high.astype(np.int64)
            propagate = propagate_vectorized if system.M.size <= tuning.vectorized_cells else propagate_bounds
        else:
            M, propagate = system.M, propagate_vectorized
        if propagate(M, row_low, row_high, low, high, rounds) < 0:
            return Pruning(low, high, True, "interval propagation: some equation's range over the box cannot reach its right-hand side")
    pruning = Pruning(low, high)
    pruning.components = components(system, pruning.free())
    return pruning


def propagate_vectorized(M: np.ndarray, row_low: np.ndarray, row_high: np.ndarray, low: np.ndarray, high: np.ndarray, max_rounds: int) -> int:
    """:func:`indexset.native.prune.propagate_bounds` in NumPy: every row at once, a round at a time.

    A round takes each row's least and greatest activity over the box, and
    narrows every unknown's domain by every row at once (Jacobi); a domain
    left empty proves the system infeasible. Parameters and return value
    as the kernel's; int64 arrays when the caller guarantees that nothing
    overflows, object arrays of Python ints otherwise.
    """
    first_low, first_high = low.copy(), high.copy()
    nonzero = M != 0
    positive = M > 0
    divisor = np.where(nonzero, M, 1)
    for _ in range(max_rounds):
        term_low = np.where(positive, M * low, M * high)  # the least and greatest of a_j·z_j
        term_high = np.where(positive, M * high, M * low)
        least, greatest = term_low.sum(axis=1), term_high.sum(axis=1)
        if (least > row_high).any() or (greatest < row_low).any():
            return -1
        below = row_low[:, None] - (greatest[:, None] - term_high)  # a_j·z_j ≥ below
        above = row_high[:, None] - (least[:, None] - term_low)  # a_j·z_j ≤ above
        lower = np.where(positive, -((-below) // divisor), -((-above) // divisor))
        upper = np.where(positive, above // divisor, below // divisor)
        new_low = np.maximum(low, np.where(nonzero, lower, low).max(axis=0))
        new_high = np.minimum(high, np.where(nonzero, upper, high).min(axis=0))
        if (new_low > new_high).any():
            return -1
        if (new_low == low).all() and (new_high == high).all():
            break
        low[:], high[:] = new_low, new_high
    return int(((low != first_low) | (high != first_high)).sum())


def no_pruning(system: System) -> Pruning:
    """The whole box, one part holding everything (the ``prune`` ablation)."""
    pruning = Pruning(np.zeros(system.n, dtype=object), np.array(system.bounds(), dtype=object))
    pruning.components = whole_part(system, pruning.free())
    return pruning


def whole_part(system: System, free: list[int]) -> list[tuple[list[int], list[int]]]:
    """One part: every row and every free unknown."""
    return [(list(range(system.m)), list(free))]


def components(system: System, free: list[int]) -> list[tuple[list[int], list[int]]]:
    """Independent parts: connected components of the variable–equation graph over the ``free`` unknowns.

    Free unknowns that appear in no equation form components of their own
    with no rows (each multiplies the number of solutions by its domain's size).
    """
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


def subsystem(system: System, pruning: Pruning, rows: list[int], columns: list[int]) -> System:
    """The part of the system on some rows and free columns, shifted to the box ``0 ≤ z'_j ≤ high_j − low_j``.

    Every unknown's lower end moves to the right-hand side (fixed unknowns
    at their value), so a solution z' of the part is ``z_j = low_j + z'_j``.
    """
    M = system.M[np.ix_(rows, columns)] if rows and columns else np.zeros((len(rows), len(columns)), dtype=object)
    lows = [int(v) for v in pruning.low]
    t = np.array([int(system.t[r]) - sum(int(system.M[r, i]) * lows[i] for i in range(system.n) if lows[i]) for r in rows], dtype=object)
    slack = None if system.slack is None else system.slack[rows]
    upper = bounded([int(pruning.high[j]) - int(pruning.low[j]) for j in columns])
    return System(M.astype(object), t, slack, [system.rows[r] for r in rows], upper=upper)
