"""Verdicts by theorem for activations that are not odd-linear (MATH.md §4).

No search is involved: ReLU², ReGLU (degree 2 homogeneous) and SwiGLU,
GeGLU (gate differentiable at 0 with g(0) = 0) never absorb their skip when
σ sees no bias; everything else that is not odd-linear is unknown.
"""

from __future__ import annotations

import time

import numpy as np

from .activations import GATED, HOMOGENEOUS, UNCOVERED
from .instance import Instance
from .result import NOT_ABSORBABLE, UNKNOWN, Result


def theorem_result(instance: Instance, start: float | None = None) -> Result:
    """The verdict for activations that are not odd-linear (MATH.md §4).

    See :func:`theorem_verdict`; the bias inside σ is ``instance.b_up``.
    """
    bias_inside = instance.b_up is not None and bool(np.any(instance.b_up != 0))
    return theorem_verdict(instance.act, bias_inside, start)


def theorem_verdict(act, bias_inside: bool, start: float | None = None) -> Result:
    """The verdict by theorem for a non-odd-linear activation.

    Homogeneous and gated activations: not absorbable, provided there is no
    bias inside σ (the degree and linearisation arguments of MATH.md §4
    need ``σ(W_up x)`` without ``b_up``); with one the answer is unknown.
    Uncovered activations (sigmoid-GLU): unknown.

    Parameters
    ----------
    act : Activation
    bias_inside : bool
        Whether a nonzero bias sits inside σ (up, or gate, projection).
    start : float, optional
        ``time.perf_counter()`` at the start, for ``time_s``.
    """
    stages = {"path": "theorem", "classify": act.kind}
    elapsed = 0.0 if start is None else time.perf_counter() - start
    if act.kind in (HOMOGENEOUS, GATED):
        if bias_inside:
            reason = (
                f"{act.name} with a nonzero bias inside σ: MATH.md §4's argument needs σ(W_up x) "
                "without a bias, so no theorem decides this block"
            )
            return Result(UNKNOWN, reason, stages=stages, engine="theorem", time_s=elapsed)
        return Result(NOT_ABSORBABLE, act.reason, stages=stages, engine="theorem", complete=True, time_s=elapsed)
    reason = act.reason if act.kind == UNCOVERED else f"activation class {act.kind} is not covered"
    return Result(UNKNOWN, reason, stages=stages, engine="theorem", time_s=elapsed)


