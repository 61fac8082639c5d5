"""Forward passes of blocks and stacks: float64, and exact where σ maps rationals to rationals.

One implementation for every kind of model: a stack is evaluated block by
block, so ``forward_float(model, points)`` takes an Instance or a Stack.
"""

from __future__ import annotations

from fractions import Fraction

import flint
import numpy as np

from indexset.model.instance import Instance, exact_value
from indexset.rational import fmpq_matrix, fraction_rows


def blocks(model) -> list:
    """The blocks of a model, in order (a single block is a stack of one)."""
    return list(getattr(model, "blocks", [model]))


def forward_float(model, points: np.ndarray) -> np.ndarray:
    """Evaluate a block or a stack on points (rows of ``points``) in float64.

    Returns
    -------
    ndarray
        ``(k, d)`` outputs, one row per point.
    """
    x = np.asarray(points, dtype=np.float64)
    for block in blocks(model):
        x = _block_float(block, x)
    return x


def _block_float(instance: Instance, x: np.ndarray) -> np.ndarray:
    pre = x @ instance.float_array("W_up").T + instance.float_array("b_up")
    if instance.act.gated:
        hidden = instance.act.forward(x @ instance.float_array("W_gate").T, pre)
    else:
        hidden = instance.act.forward(pre)
    out = hidden @ instance.float_array("W_down").T + instance.float_array("b_down")
    if not instance.residual_free:
        out = out + x @ instance.float_array("skip").T
    return out


def forward_exact(model, points: list[list[Fraction]]) -> list[list[Fraction]]:
    """Evaluate a block or a stack exactly on rational points (ReLU, leaky ReLU, ReLU², ReGLU)."""
    for block in blocks(model):
        points = _block_exact(block, points)
    return points


def _block_exact(instance: Instance, points: list[list[Fraction]]) -> list[list[Fraction]]:
    act = instance.act
    if act.rational is None:
        raise ValueError(f"{act.name} has no exact rational forward")
    x = fmpq_matrix(points).transpose()
    k = x.ncols()
    ones = flint.fmpq_mat(1, k, [1] * k)
    pre = instance.exact_fraction_matrix("W_up") * x + _column(instance, "b_up") * ones
    if act.gated:
        gate = instance.exact_fraction_matrix("W_gate") * x
        hidden = flint.fmpq_mat(pre.nrows(), k, [act.rational(g) * v for g, v in zip(gate.entries(), pre.entries())])
    else:
        hidden = flint.fmpq_mat(pre.nrows(), k, [act.rational(v) for v in pre.entries()])
    out = instance.exact_fraction_matrix("W_down") * hidden + _column(instance, "b_down") * ones
    if not instance.residual_free:
        out = out + instance.exact_fraction_matrix("skip") * x
    out = out.transpose()
    return fraction_rows(out)


def _column(instance: Instance, key: str) -> flint.fmpq_mat:
    values = exact_value(instance, key)
    return fmpq_matrix([[v] for v in values])


def random_points(d: int, count: int, seed: int) -> list[list[Fraction]]:
    """Random rational points with small numerators and denominators (seeded)."""
    rng = np.random.default_rng(seed)
    numerators = rng.integers(-20, 21, size=(count, d))
    denominators = rng.integers(1, 8, size=(count, d))
    return [[Fraction(int(a), int(b)) for a, b in zip(nr, dr)] for nr, dr in zip(numerators, denominators)]


