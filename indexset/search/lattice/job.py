"""One lattice search, as a record: what every stage of the engine reads.

The stages (small-tree walks, choosing a basis, pruned passes, the
kernel's walk) take a :class:`Job` instead of a long list of positional
parameters; the stage-specific values stay parameters of the stage.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from indexset.budget import Budget
from indexset.search.lattice.basis import Lattice, build_lattice
from indexset.search.lattice.tuning import DEFAULT, LatticeTuning
from indexset.search.reduce import Reduction
from indexset.search.system import System


@dataclass(frozen=True)
class Job:
    """The system, its lattice's recipe, what to find, the budget and the tuning of one search.

    Attributes
    ----------
    system : System
        Exact integer equations.
    reduction : Reduction
        Its exact reduction (z0 and kernel basis K).
    find_all : bool
        Every solution instead of the first.
    seed : int
        Seed of the estimates, candidate bases and trials.
    budget : Budget
        Deadline and stop request of the whole search.
    tuning : LatticeTuning
    bkz_block : int
        BKZ block size of the default basis (0: LLL only).
    embedding : {"cvp", "homogeneous"}
    progress : callable, optional
        Called about once a second with a dict of counters.
    count_only : bool
        With ``find_all``: count every solution, keep the first (the kernel counts them itself).
    """

    system: System
    reduction: Reduction
    find_all: bool = False
    seed: int = 0
    budget: Budget = field(default_factory=Budget)
    tuning: LatticeTuning = DEFAULT
    bkz_block: int = 0
    embedding: str = "cvp"
    progress: Callable | None = None
    count_only: bool = False

    def build(self, bkz_block: int | None = None, shuffle=None) -> Lattice:
        """A reduced basis of the job's lattice (BKZ block ``bkz_block``, default the job's; input order from ``shuffle``)."""
        block = self.bkz_block if bkz_block is None else bkz_block
        return build_lattice(self.reduction, block, self.embedding, shuffle, self.budget, self.tuning, self.system.upper)

    def node_seconds(self, nodes: float) -> float:
        """Predicted seconds of a walk of ``nodes`` nodes on one core (the cost model)."""
        return nodes * self.tuning.node_seconds

    def basis_seconds(self, dimension: int) -> float:
        """Predicted seconds of one reduced basis of ``dimension`` vectors (the cost model)."""
        return self.tuning.basis_seconds * dimension**2
