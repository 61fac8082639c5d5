"""Extreme pruning profiles: the per-level bounds of one randomised trial.

Gama, Nguyen and Regev ("Lattice enumeration using extreme pruning",
EUROCRYPT 2010) walk many re-randomised bases of one lattice, each under
bounds so tight that a single walk keeps a solution only with a small
probability p, but costs far less than p times the complete walk. fpylll's
:class:`~fpylll.Pruning.Pruner` computes, from a basis's Gram–Schmidt
norms, the bounds that minimise the cost of one walk at a given p, under
the model that the solution's direction is uniform on the sphere of the
search radius. Every 0/1 solution of the (★) lattices lies exactly on that
sphere (‖w‖² = n, MATH.md §6.1), so the model's hypothesis on the radius
holds; its uniformity is a heuristic, off for tight bounds on some
families (BENCHMARKS.md, "Evidence for tuning values").
Nothing here affects soundness: a trial reports only leaves checked
exactly, and proves nothing when it finds none.

The Pruner runs in a child process. Its optimiser meets NaN on some
ordinary inputs (a grid of geometric Gram–Schmidt profiles meets it
often), and fplll then throws from code that cannot propagate the
exception, which aborts the process it runs in. The child is started once
per search that runs trials.
"""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np

_CHILD = """
import json, sys
from fpylll import Pruning
r = json.load(sys.stdin)
pruner = Pruning.Pruner(r["radius2"], r["basis_nodes"], [r["rr"]], r["probability"],
                        metric=Pruning.PROBABILITY_OF_SHORTEST, flags=Pruning.GRADIENT | Pruning.CVP)
json.dump(list(pruner.optimize_coefficients_cost_fixed_prob([1.0] * len(r["rr"]))), sys.stdout)
"""


def extreme_profile(rr: np.ndarray, radius2: float, basis_nodes: float, probability: float, seconds: float) -> np.ndarray | None:
    """Relative bounds of one trial: ``coefficients[i]`` is level i's bound over ``radius2``.

    Parameters
    ----------
    rr : ndarray, shape (D,)
        Squared Gram–Schmidt norms ‖b*_i‖² of one reduced basis, i = 0 first
        (level i of the walk bounds the part of the norm on b*_i, …, b*_{D−1}).
    radius2 : float
        Squared search radius.
    basis_nodes : float
        Cost of one fresh basis (the trial's re-randomisation), in walk nodes.
    probability : float
        The model's success probability of one trial.
    seconds : float
        Most seconds the child process may take.

    Returns
    -------
    ndarray or None
        Coefficients in (0, 1], non-increasing, level 0 (the whole vector)
        at 1; None when the Pruner failed on these norms (or fpylll is
        missing), and then no trial can run.
    """
    request = {"rr": [float(r) for r in rr], "radius2": float(radius2), "basis_nodes": float(basis_nodes), "probability": float(probability)}
    try:
        child = subprocess.run([sys.executable, "-c", _CHILD], input=json.dumps(request), capture_output=True, text=True, timeout=seconds)
        coefficients = np.asarray(json.loads(child.stdout), dtype=np.float64) if child.returncode == 0 else None
    except (OSError, subprocess.TimeoutExpired, ValueError):
        return None
    if coefficients is None or coefficients.shape != (len(rr),) or not np.isfinite(coefficients).all() or (coefficients <= 0).any():
        return None
    return np.minimum(coefficients, 1.0)
