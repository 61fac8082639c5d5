"""One walk of the engine's kernel, repeated: run it under callgrind with 1 and then 2 counted walks, and the difference of the totals is one walk's instructions.

The first walk loads the kernels and is not counted, so everything before
the counted walks (Python, imports, reduction, BKZ, kernel load) is the same
in both runs and cancels. Prints, per walk, its index, nodes, solutions and CPU seconds.

Numba compiles for the CPU it sees, and valgrind reports a plain AVX2 one
(``haswell``) whatever the host is: under valgrind the kernel is compiled
again, for that CPU. ``NUMBA_CPU_NAME=haswell`` gives a native run the same
code, so that the instructions counted here and the time of a native run
belong to one build. Usage (the real interpreter, not a shell shim, so
that valgrind traces it)::

    NUMBA_CPU_NAME=haswell valgrind --tool=callgrind --callgrind-out-file=one.cg  python benchmarks/instructions_per_node.py FILE 1
    NUMBA_CPU_NAME=haswell valgrind --tool=callgrind --callgrind-out-file=two.cg  python benchmarks/instructions_per_node.py FILE 2
    NUMBA_CPU_NAME=haswell python benchmarks/instructions_per_node.py FILE 3     (native: seconds a walk)
"""

import sys
import time

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
        began = time.process_time()
        assert run.drive(run.new_walk(), built.D, -1)  # W in the tree's precision, as the engine walks
        print(k, run.nodes, run.count(), f"{time.process_time() - began:.4f} CPU s", flush=True)


if __name__ == "__main__":
    main()
