"""The enumeration kernel alone: CPU seconds of walking one whole tree.

Builds the BKZ-20 lattice of a system file (npz, QOBLIB .dat,
solvediophant's format, with its bounds when it has them) once, then walks the whole tree with
``enumerate_box`` several times in one process and prints the minimum and
every CPU time (minimum: the figure least disturbed by other work on a
shared machine), the node count and nodes per CPU second (``--max-nodes``:
of the walk's first nodes only, the same nodes in every version of the
kernel that walks the tree in the same order). The
per-coordinate bounds are off, as the engine walks (``--coord on``: on at
every level); W is in float32 where the engine's default allows it
(``--precision double``: float64).

    python benchmarks/kernel_bench.py ms_07_100_002.dat --repeat 5
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from indexset.native import enumerate as kernel

from indexset.search.lattice import build_lattice
from indexset.search.lattice.tuning import DEFAULT
from indexset.search.reduce import reduce_system
from indexset.search.systemfile import load_system


def walk_once(lattice, coord_on: bool, single: bool, budget: int = 1 << 40) -> tuple[float, int]:
    """CPU seconds and nodes of one walk (whole, unless ``budget`` nodes end it first)."""
    coord = np.zeros((3, lattice.D), dtype=np.int64)
    coord[0] = 2 if coord_on else 0  # on and settled (not counted), or off
    tree = lattice.tree(coord=coord, single=single)
    walk = lattice.new_walk(tree)
    began = time.process_time()
    while kernel.enumerate_box(tree, walk, lattice.D, -1, budget - int(walk.istate[kernel.NODES])) not in (kernel.DONE, kernel.RUNNING):
        pass
    return time.process_time() - began, int(walk.istate[kernel.NODES])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("system", help="a system file (0/1, or bounded integers)")
    parser.add_argument("--repeat", type=int, default=5, help="walks timed (after one that loads the kernel)")
    parser.add_argument("--bkz", type=int, default=20, help="BKZ block size of the basis")
    parser.add_argument("--coord", choices=("off", "on"), default="off", help="the per-coordinate bounds (default off, as the engine walks)")
    parser.add_argument("--precision", choices=("default", "double"), default="default", help="W as the engine's default tuning keeps it, or float64")
    parser.add_argument("--max-nodes", type=float, default=float(1 << 40), help="time the walk's first this many nodes only (default: the whole walk)")
    args = parser.parse_args()
    system = load_system(args.system)
    lattice = build_lattice(reduce_system(system.M, system.t, upper=system.upper), args.bkz, upper=system.upper)  # None: the 0/1 box
    single = args.precision == "default" and DEFAULT.single_precision
    walk_once(lattice, args.coord == "on", single, budget=1)  # loads the kernel
    times = [walk_once(lattice, args.coord == "on", single, int(args.max_nodes)) for _ in range(args.repeat)]
    best = min(t for t, _ in times)
    print(f"nodes {times[0][1]}  min CPU s {best:.3f}  all {[round(t, 3) for t, _ in times]}  nodes per CPU s {times[0][1] / best:.3g}")


if __name__ == "__main__":
    main()
