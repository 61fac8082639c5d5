"""The enumeration kernel alone: CPU seconds of walking one whole tree.

Builds the BKZ-20 lattice of a 0/1 system file (npz, QOBLIB .dat,
solvediophant's format) once, then walks the whole tree with
``enumerate_box`` several times in one process and prints the minimum and
every CPU time (minimum: the figure least disturbed by other work on a
shared machine) and the node count.

    python benchmarks/kernel_bench.py ms_07_100_002.dat --repeat 5
"""

from __future__ import annotations

import argparse
import time

from indexset.native import enumerate as kernel

from indexset.search.lattice import build_lattice
from indexset.search.reduce import reduce_system
from indexset.search.systemfile import load_system


def walk_once(lattice) -> tuple[float, int]:
    """CPU seconds and nodes of one whole walk."""
    tree, walk = lattice.tree(), lattice.new_walk()
    began = time.process_time()
    while kernel.enumerate_box(tree, walk, lattice.D, -1, 1 << 40) != kernel.DONE:
        pass
    return time.process_time() - began, int(walk.istate[kernel.NODES])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("system", help="a 0/1 system file")
    parser.add_argument("--repeat", type=int, default=5, help="walks timed (after one that loads the kernel)")
    parser.add_argument("--bkz", type=int, default=20, help="BKZ block size of the basis")
    args = parser.parse_args()
    system = load_system(args.system)
    lattice = build_lattice(reduce_system(system.M, system.t), args.bkz)
    walk_once(lattice)
    times = [walk_once(lattice) for _ in range(args.repeat)]
    print(f"nodes {times[0][1]}  min CPU s {min(t for t, _ in times):.3f}  all {[round(t, 3) for t, _ in times]}")


if __name__ == "__main__":
    main()
