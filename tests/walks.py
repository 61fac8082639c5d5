"""Driving the enumeration kernel call by call, for tests that look at one tree's walk."""

from __future__ import annotations

from indexset.native import enumerate as kernel

from indexset.search import lattice


def kernel_walk(system, built, tree):
    """Every support the kernel's complete walk of ``tree`` finds, and its node count (driven here, call by call)."""
    walk, found = built.new_walk(tree), set()
    while True:
        status = kernel.enumerate_box(tree, walk, built.D, -1, 1 << 20)
        if status == kernel.FOUND:
            support = lattice.decode(built, walk.x, system)
            if support is not None:
                found.add(tuple(support))
        elif status == kernel.DONE:
            return found, int(walk.istate[kernel.NODES])
