"""Engine tunings the search tests pass explicitly (instead of changing module globals).

Importable from every test folder, like :mod:`systems`. Each value is a
modified copy of an engine's default tuning; a test that needs one more
change makes its own copy with :func:`dataclasses.replace`.
"""

from __future__ import annotations

from dataclasses import replace

from indexset.search.lattice.tuning import LatticeTuning

KERNEL_WALK = replace(LatticeTuning(), small_tree_nodes=-1, reduced_tree_nodes=-1, pruned_walk_nodes=-1, first_walk_nodes=-1)
"""Lattice searches walk every tree with the Numba kernel.

Small trees (and, for a first solution, pruned trees) otherwise go to the
NumPy breadth-first walks; tests of the kernel's own machinery (threads,
split trees, staging, Dask parts) use small trees and need the kernel to
walk them. No tree, not even one without nodes, fits a budget of −1 nodes.
"""

NUMPY_WALK = replace(LatticeTuning(), small_tree_nodes=10**7, reduced_tree_nodes=10**7, numpy_walks_once_loaded=True)
"""Lattice searches walk every small tree (and these tests' trees are small) breadth-first in NumPy, loaded kernels or not."""
