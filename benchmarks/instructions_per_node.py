"""One walk of the engine's kernel, repeated: run it under callgrind with 1 and then 2 counted walks, and the difference of the totals is one walk's instructions.

The first walk loads the kernels and is not counted, so everything before
the counted walks (Python, imports, reduction, BKZ, kernel load) is the same
in both runs and cancels. Prints, per walk, its index, nodes and solutions.

Usage (the real interpreter, not a shell shim, so that valgrind traces it)::

    valgrind --tool=callgrind --callgrind-out-file=one.cg  python benchmarks/instructions_per_node.py FILE 1
    valgrind --tool=callgrind --callgrind-out-file=two.cg  python benchmarks/instructions_per_node.py FILE 2
"""

import sys

from indexset.budget import Budget
from indexset.search import lattice
from indexset.search.lattice.tuning import DEFAULT
from indexset.search.reduce import reduce_system
from indexset.search.systemfile import load_system


def main() -> None:
    system = load_system(sys.argv[1])
    built = lattice.build_lattice(reduce_system(system.M, system.t), DEFAULT.bkz_block)
    for k in range(1 + int(sys.argv[2])):  # walk 0 loads the kernels; the others are counted
        run = lattice.Run(system, built, True, Budget(), DEFAULT, count_only=True)
        assert run.drive(built.new_walk(), built.D, -1)
        print(k, run.nodes, run.count(), flush=True)


if __name__ == "__main__":
    main()
