"""Small trees first: NumPy walks that may answer before the kernel is loaded.

Loading Numba costs more than the whole walk of a tree of a few thousand
nodes, so the LLL tree, then the BKZ tree, are walked breadth-first in
NumPy (:mod:`indexset.search.lattice.breadth`) when a NumPy estimate puts
them within a budget; for a first solution, the BKZ tree is first walked
under a wide pruning profile, and after the whole walks, under the
tightest linear one. A whole walk decides; a pruned one may only find.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass

from indexset.result import Result
from indexset.search.lattice import answers, breadth
from indexset.search.lattice.basis import Lattice, decode
from indexset.search.lattice.job import Job
from indexset.search.lattice.pruned import pruning_profile


class _Tally:
    """Nodes the NumPy walks of this process have made so far (every thread's searches)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.nodes = 0

    def add(self, nodes: int) -> None:
        with self.lock:
            self.nodes += nodes


WALKED = _Tally()
"""The process's NumPy walks: once they have cost as much as loading the kernels would, the kernels load."""


def numpy_walks_pay(job: Job) -> bool:
    """Whether this search starts with the NumPy walks: a ski-rental rule on the kernels' load.

    They exist to answer before Numba loads. While the process's NumPy
    walks have cost less than one load (``numpy_node_seconds`` a node
    against ``kernel_load_seconds``, the cost model: no clock decides),
    they go on; from then on the kernels load beside the search and walk
    every tree, so a sweep of many small systems pays at most about twice
    what it would with the best choice made in advance.
    """
    tuning = job.tuning
    return WALKED.nodes * tuning.numpy_node_seconds < tuning.kernel_load_seconds


@dataclass
class SmallTrees:
    """What the small-tree walks left: an answer, or the bases they built for the search that follows.

    Attributes
    ----------
    answer : Result or None
        The answer of the first walk that gave one.
    lll : Lattice
        The LLL basis of the default input order.
    reduced : Lattice or None
        Its BKZ basis (None when BKZ is off or was not reached).
    """

    answer: Result | None
    lll: Lattice
    reduced: Lattice | None = None

    def default_basis(self) -> Lattice:
        """The BKZ basis when it has no numerics problem, else the LLL one."""
        return self.reduced if self.reduced is not None and self.reduced.problem is None else self.lll


def small_tree_answer(job: Job) -> SmallTrees:
    """Walk the small trees in NumPy, in the order the module describes, until one answers.

    Every walk of a first-solution search ends at its first chunk of leaves
    holding a solution; a whole walk is then complete only when it found none.
    """
    began = time.perf_counter()
    tuning, first = job.tuning, not job.find_all
    lll = job.build(bkz_block=0)
    walked = _walk(job, lll, tuning.small_tree_nodes, tuning.walk_headroom)
    if walked is not None:
        return SmallTrees(walked.answer(job, began), lll)
    # No BKZ for a lattice that cannot be searched anyway.
    reduced = job.build() if job.bkz_block and lll.searchable and lll.D > 0 else None
    if reduced is not None and first:
        walked = _walk(job, reduced, tuning.first_walk_nodes, tuning.walk_headroom, tuning.first_walk_slack)
        if walked is not None and walked.solutions:
            return SmallTrees(walked.answer(job, began), lll, reduced)
    if reduced is not None:
        walked = _walk(job, reduced, tuning.reduced_tree_nodes, tuning.walk_headroom)
        if walked is not None:
            return SmallTrees(walked.answer(job, began), lll, reduced)
    if first:
        basis = reduced if reduced is not None and reduced.problem is None else lll
        walked = _walk(job, basis, tuning.pruned_walk_nodes, 1.0, tuning.pruning_slacks[0])
        if walked is not None and walked.solutions:
            return SmallTrees(walked.answer(job, began), lll, reduced)
    return SmallTrees(None, lll, reduced)


@dataclass
class _Walked:
    """What one NumPy walk found: the supports (checked exactly) and the nodes it made."""

    lattice: Lattice
    solutions: list
    nodes: int
    slack: float | None

    def answer(self, job: Job, began: float) -> Result:
        """The Result of the walk (``began``: when the basis stage started)."""
        walk = "breadth-first (NumPy)" if self.slack is None else f"breadth-first (NumPy), pruned (slack {self.slack})"
        # A whole walk that found nothing ran over every leaf: complete. One that found may have
        # ended at its first solution, and a pruned walk proves nothing.
        complete = self.slack is None and (job.find_all or not self.solutions)
        stages = {**job.reduction.stages(), "bkz_block": self.lattice.bkz_block, "lattice_dim": self.lattice.D,
                  "basis_s": round(time.perf_counter() - began, 4), "walk": walk, "nodes": self.nodes}
        return answers.walked(job, self.solutions if job.find_all else self.solutions[:1], complete, None, stages)


def _walk(job: Job, lattice: Lattice, max_nodes: int, headroom: float, slack: float | None = None) -> _Walked | None:
    """A NumPy walk of ``lattice``'s tree (pruned when ``slack`` is given).

    None when the lattice cannot be walked this way, when its estimated
    size exceeds ``max_nodes / headroom``, or when the walk stops short.
    """
    if not lattice.searchable or lattice.symmetric or lattice.D == 0:
        return None
    # The per-coordinate bounds on at every level: a NumPy node costs more than their scan.
    tree = lattice.tree(None if slack is None else pruning_profile(lattice, slack), relaxed=slack is not None and job.tuning.relaxed_pruning)
    start = lattice.start()
    if breadth.estimate_nodes(tree, start, job.tuning.walk_probes, job.seed) > max_nodes / headroom:
        return None
    found = []

    def supports(leaves) -> list:
        return [support for support in (decode(lattice, x, job.system) for x in leaves) if support is not None]

    def until(leaves) -> bool:  # every chunk of leaves passes here, so ``found`` ends up with every solution walked
        found.extend(supports(leaves))
        return bool(found)

    leaves, nodes = breadth.walk_breadth_first(tree, start, max_nodes, job.budget, None if job.find_all else until, job.tuning.breadth_chunk)
    WALKED.add(nodes)
    if leaves is None:
        return None
    return _Walked(lattice, sorted(supports(leaves) if job.find_all else found), nodes, slack)
