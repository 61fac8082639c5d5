"""What one extreme-pruning trial of a system's tree costs, by model success probability.

For the engine's first basis of the file's lattice (LLL, then BKZ with the
default block), fpylll's Pruner gives the profile of one trial at each
probability p (as :class:`indexset.search.lattice.pruned.Trials` asks
for it), and Knuth's estimate (512 descents, one line per seed) gives
the nodes of a walk under it; "per success" is the median over the
seeds divided by p, the model's nodes per solution found. The complete
walk's estimate is printed first. Nothing is walked.

Usage::

    python benchmarks/trial_cost.py FILE [--probabilities 0.001,0.005,0.01,0.05] [--seeds 3]
"""

from __future__ import annotations

import argparse

import numpy as np

from indexset.search.lattice import extreme
from indexset.search.lattice.basis import build_lattice
from indexset.search.lattice.tuning import DEFAULT
from indexset.search.lattice.walk import estimate_nodes
from indexset.search.reduce import reduce_system
from indexset.search.systemfile import load_system


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("file")
    parser.add_argument("--probabilities", default="0.001,0.005,0.01,0.05")
    parser.add_argument("--seeds", type=int, default=3)
    args = parser.parse_args()
    system = load_system(args.file)
    lattice = build_lattice(reduce_system(system.M, system.t), DEFAULT.bkz_block)
    print(f"dimension {lattice.D}, complete walk {estimate_nodes(lattice, DEFAULT.walk_probes, 0):.3g} nodes")
    basis_nodes = DEFAULT.basis_seconds * lattice.D**2 / DEFAULT.node_seconds
    radius2 = lattice.data.radius2
    for p in (float(v) for v in args.probabilities.split(",")):
        coefficients = extreme.extreme_profile(lattice.data.rr, radius2, basis_nodes, p, DEFAULT.pruner_seconds)
        if coefficients is None:
            print(f"p = {p}: no profile (the Pruner failed)")
            continue
        bound2 = extreme.profile_bounds(radius2, coefficients)
        nodes = [estimate_nodes(lattice, DEFAULT.walk_probes, seed, bound2) for seed in range(args.seeds)]
        print(f"p = {p}: one trial {' '.join(f'{n:.3g}' for n in nodes)} nodes, per success {np.median(nodes) / p:.3g}")


if __name__ == "__main__":
    main()
