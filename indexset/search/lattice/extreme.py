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
per search that runs trials, as soon as the trials are planned, and works
while the linear passes walk (:class:`PendingProfile`).
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time

import numpy as np

from indexset.search.lattice.basis import MARGIN

_CHILD = """
import json, sys
from fpylll import Pruning
r = json.load(sys.stdin)
pruner = Pruning.Pruner(r["radius2"], r["basis_nodes"], [r["rr"]], r["probability"],
                        metric=Pruning.PROBABILITY_OF_SHORTEST, flags=Pruning.GRADIENT | Pruning.CVP)
json.dump(list(pruner.optimize_coefficients_cost_fixed_prob([1.0] * len(r["rr"]))), sys.stdout)
"""


class PendingProfile:
    """An extreme pruning profile being computed in a child process, started at once.

    The child imports fpylll and optimises while the caller walks other
    passes; :meth:`result` waits for it (at most ``seconds`` from the
    start) and :meth:`close` ends it if it is still running, so no child
    outlives the search. The arguments are those of :func:`extreme_profile`.
    """

    def __init__(self, rr: np.ndarray, radius2: float, basis_nodes: float, probability: float, seconds: float) -> None:
        self.levels, self.seconds, self.began = len(rr), seconds, time.perf_counter()
        self.lock = threading.Lock()
        self.done, self.coefficients = False, None
        request = {"rr": [float(r) for r in rr], "radius2": float(radius2), "basis_nodes": float(basis_nodes), "probability": float(probability)}
        try:
            self.child = subprocess.Popen([sys.executable, "-c", _CHILD], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
            self.child.stdin.write(json.dumps(request))  # read by the child once fpylll is imported; a few kB fit the pipe's buffer
            self.child.stdin.close()
            self.child.stdin = None  # sent: communicate (with a timeout) would flush the closed pipe
        except OSError:
            self.child, self.done = None, True

    def result(self) -> np.ndarray | None:
        """The coefficients (see :func:`extreme_profile`), or None when the Pruner failed or ran out of time."""
        with self.lock:
            if not self.done:
                self.done = True
                self.coefficients = self._collect()
            return self.coefficients

    def _collect(self) -> np.ndarray | None:
        # A child that has ended has its output read however late it is asked for (the linear passes before
        # the trials may outlast ``seconds``); only one still running is held to ``seconds``.
        running = self.child.poll() is None
        try:
            output, _ = self.child.communicate(timeout=max(0.0, self.seconds - (time.perf_counter() - self.began)) if running else None)
            coefficients = np.asarray(json.loads(output), dtype=np.float64) if self.child.returncode == 0 else None
        except (OSError, subprocess.TimeoutExpired, ValueError):
            self._end()
            return None
        if coefficients is None or coefficients.shape != (self.levels,) or not np.isfinite(coefficients).all() or (coefficients <= 0).any():
            return None
        return np.minimum(coefficients, 1.0)

    def close(self) -> None:
        """End the child if it still runs, and reap it (:meth:`result` is then None unless it was taken before)."""
        self.done = True  # no lock: result() may hold it while it waits, and calls _end itself on a timeout
        self._end()

    def _end(self) -> None:
        """Kill the child if it still runs, and reap it."""
        if self.child is not None and self.child.poll() is None:
            self.child.kill()
        if self.child is not None:
            self.child.wait()


def profile_bounds(radius2: float, coefficients: np.ndarray) -> np.ndarray:
    """The per-level bounds of a pruning profile: ``radius2 · coefficients[i]`` plus the search's margin, at most ``radius2``.

    ``coefficients[i]`` is level i's bound over ``radius2`` (from
    :func:`extreme_profile`, or a linear profile); the margin is the one
    every complete walk's bound carries (MATH.md §6.1), so a coefficient
    of 1 gives the complete walk's bound.
    """
    return np.minimum(radius2, radius2 * coefficients + MARGIN)


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
    pending = PendingProfile(rr, radius2, basis_nodes, probability, seconds)
    try:
        return pending.result()
    finally:
        pending.close()
