"""The lattice engine: reduced kernel lattice + box-pruned enumeration (MATH.md §6.1).

Modules, from the plan down:

- :mod:`.engine`: :func:`search`, the plan of one search, read top-down;
- :mod:`.small`: NumPy walks of small trees before the kernel loads;
- :mod:`.choose`: candidate bases, their scores, the node estimate;
- :mod:`.pruned`: limited-discrepancy and pruned passes, extreme-pruning trials (first solutions);
- :mod:`.walk`: driving the kernel: chunks, threads, subtrees;
- :mod:`.job`: the record of one search that every stage reads;
- :mod:`.basis`: the lattice, its reduction and its float data;
- :mod:`.breadth`, :mod:`.extreme`: the NumPy walk, the extreme-pruning profile;
- :mod:`.tuning`: :class:`LatticeTuning`, the engine's tunables.

The names below are imported lazily: the engine's plan and its kernels load
only when a search needs them.
"""

from __future__ import annotations

import importlib

_EXPORTS = {
    "search": "engine", "ENGINE": "engine", "LatticeEngine": "engine",
    "NAME": "walk", "Run": "walk", "split_tree": "walk", "search_subtree": "walk", "coordinate_mask": "walk", "estimate_nodes": "walk",
    "Lattice": "basis", "FloatData": "basis", "build_lattice": "basis", "decode": "basis", "MARGIN": "basis", "box_scales": "basis",
    "Job": "job",
    "Choice": "choose", "choose_lattice": "choose", "default_choice": "choose", "profile_score": "choose",
    "pruning_profile": "pruned", "pruned_passes": "pruned", "discrepancy_passes": "pruned", "Trials": "pruned",
    "LatticeTuning": "tuning", "DEFAULT": "tuning",
}
__all__ = sorted(_EXPORTS)


def __getattr__(name: str):
    if name not in _EXPORTS:
        raise AttributeError(f"module 'indexset.search.lattice' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"indexset.search.lattice.{_EXPORTS[name]}"), name)
    globals()[name] = value
    return value
