"""How often an extreme-pruning trial keeps a known solution: the measured share against the model's probability.

A 0/1 system file's solutions are found first (``decide_system`` with each
seed of ``--solution-seeds``). Then ``--trials`` trial bases are drawn as
:class:`indexset.search.lattice.pruned.Trials` draws them (the input
vectors in an order from ``(seed, k)``, LLL, then BKZ with the default
block), and for each profile (fpylll's Pruner at each probability p,
computed on the Gram–Schmidt norms of a basis chosen by ``--profile-on``)
the script tests which bases keep which solution: a walk under the
profile reaches the solution's leaf exactly when, at every level i, the
part of ‖w‖² on b*_i, …, b*_{D−1} is within the level's bound (w = 2z − 1,
MATH.md §6.1). Nothing is walked; the test is in float64, a diagnostic.

For each profile it prints the share of (basis, solution) pairs kept,
which the model predicts to be p, the share of bases that keep at least
one solution (a trial's success), and the model's nodes of one trial
(fpylll's ``single_enum_cost``, mean over the bases) with the basis's
cost added, per kept basis: the model's nodes per success with the
measured share.

``--profile-on``: ``default`` (the BKZ basis of the default order, as
``trial_cost.py`` uses), ``stronger`` (the default order with the
engine's ``stronger_block``, the basis the engine often chooses and
computes its profile on), ``trials`` (the geometric mean of the trial
bases' norms).

Usage::

    python benchmarks/trial_kept.py FILE [--trials 100] [--seed 0] [--solution-seeds 0,1]
        [--probabilities 0.02,0.05,0.1] [--profile-on default,stronger,trials] [--json OUT]
"""

from __future__ import annotations

import argparse
import json

import numpy as np
from fpylll import Pruning

from indexset.search.decide import decide_system
from indexset.search.lattice import extreme
from indexset.search.lattice.job import Job
from indexset.search.lattice.tuning import DEFAULT
from indexset.search.reduce import reduce_system
from indexset.search.systemfile import load_system


def tail_norms(lattice, w: np.ndarray) -> np.ndarray:
    """``out[i]``: the part of ‖w‖² on b*_i, …, b*_{D−1} (the lattice part of the leaf w, level i's quantity)."""
    q, _ = np.linalg.qr(np.asarray(lattice.basis, dtype=np.float64))
    along = q.T @ w
    return np.cumsum((along**2)[::-1])[::-1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("file")
    parser.add_argument("--trials", type=int, default=100)
    parser.add_argument("--seed", type=int, default=0, help="the trials' seed, as decide_system's")
    parser.add_argument("--solution-seeds", default="0", help="seeds of the decide_system runs that find the solutions")
    parser.add_argument("--probabilities", default="0.02,0.05,0.1")
    parser.add_argument("--profile-on", default="default,stronger,trials")
    parser.add_argument("--json")
    args = parser.parse_args()
    system = load_system(args.file)
    if not system.is_binary:
        parser.error(f"{args.file}: bounded unknowns; this script takes 0/1 systems")
    n = system.M.shape[1]
    supports = {tuple(decide_system(system, seed=int(s)).index_set or ()) for s in args.solution_seeds.split(",")}
    leaves = np.array([np.where(np.isin(np.arange(n), support), 1.0, -1.0) for support in supports if support])
    if not len(leaves):
        parser.error(f"{args.file}: no solution found to test")
    job = Job(system, reduce_system(system.M, system.t), seed=args.seed, bkz_block=DEFAULT.bkz_block)
    trials = [job.build(shuffle=np.random.default_rng([args.seed, k])) for k in range(args.trials)]
    trials = [t for t in trials if t.searchable and t.D == trials[0].D]
    norms = [np.array([tail_norms(t, w) for w in leaves]) for t in trials]
    radius2 = trials[0].data.radius2
    basis_nodes = job.basis_seconds(trials[0].D) / DEFAULT.node_seconds
    shapes = {"default": job.build().data.rr, "stronger": job.build(bkz_block=DEFAULT.stronger_block).data.rr,
              "trials": np.exp(np.mean([np.log(t.data.rr) for t in trials], axis=0))}
    rows = []
    print(f"{args.file}: dimension {trials[0].D}, {len(trials)} trial bases, {len(leaves)} solutions")
    for name in args.profile_on.split(","):
        for p in (float(v) for v in args.probabilities.split(",")):
            coefficients = extreme.extreme_profile(shapes[name], radius2, basis_nodes, p, DEFAULT.pruner_seconds)
            if coefficients is None:
                print(f"{name}, p = {p}: no profile (the Pruner failed)")
                continue
            rows.append(_row(name, p, coefficients, trials, norms, radius2, basis_nodes))
            print(json.dumps(rows[-1]))
    if args.json:
        with open(args.json, "w") as out:
            json.dump({"file": args.file, "seed": args.seed, "trials": len(trials), "solutions": [list(s) for s in supports if s],
                       "rows": rows}, out, indent=1)


def _row(name: str, p: float, coefficients: np.ndarray, trials: list, norms: list, radius2: float, basis_nodes: float) -> dict:
    """Kept shares and the model's costs of one profile over the trial bases."""
    bound2 = extreme.profile_bounds(radius2, coefficients)
    kept = np.array([(tails <= bound2[None, :]).all(axis=1) for tails in norms])  # (bases, solutions)
    costs = [Pruning.Pruner(radius2, basis_nodes, [list(map(float, t.data.rr))], p,
                            metric=Pruning.PROBABILITY_OF_SHORTEST).single_enum_cost(list(map(float, coefficients))) for t in trials]
    successes = int(kept.any(axis=1).sum())
    per_success = (float(np.mean(costs)) + basis_nodes) * len(trials) / successes if successes else None
    return {"profile_on": name, "p": p, "pairs_kept": int(kept.sum()), "pairs": int(kept.size), "bases_kept": successes,
            "bases": len(trials), "first_kept": [int(k) for k in np.flatnonzero(kept.any(axis=1))[:5]],
            "model_nodes_per_trial": float(np.mean(costs)), "model_nodes_per_success": per_success}


if __name__ == "__main__":
    main()
