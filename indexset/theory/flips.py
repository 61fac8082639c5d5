"""Theorems B and C: the flips that make a ReLU² or gated block residual-free (MATH.md §8.4–8.5).

On nondegenerate weights (:func:`violations` empty) every residual-free
block with biases that equals f is f with a set S of units flipped
(ReLU²: rows, biases and down columns negated; gated: gate rows negated),
so absorption is the 0/1 system of :func:`criterion_system`. On any weights
a solution of that system gives a witness (:func:`flip_values`).
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

from indexset.model.instance import Instance, exact_value
from indexset.search.system import System
from indexset.text import ranges
from indexset.theory.nondegeneracy import collinear_groups, direction

GATE_C = Fraction(1)
"""gate(z) − gate(−z) = z for the relu, silu and gelu gates (MATH.md §8.5)."""

SECTION = {"relu2": "MATH.md §8.4", "reglu": "MATH.md §8.5", "swiglu": "MATH.md §8.5", "geglu": "MATH.md §8.5"}
"""The section that proves each activation's theorem: a verdict's ``certificate["argument"]``."""

THEOREM = {name: f"Theorem {'B' if name == 'relu2' else 'C'} ({section})" for name, section in SECTION.items()}
"""Each activation's theorem as the reasons name it: B for ReLU², C for the gated units."""


# ------------------------------------------------------------ the weights
class Weights:
    """The exact arrays of a homogeneous or gated block (object arrays of Fractions)."""

    def __init__(self, instance: Instance) -> None:
        self.instance = instance
        self.gated = instance.act.gated
        self.up = exact_value(instance, "W_up")
        self.bias = exact_value(instance, "b_up")
        self.down = exact_value(instance, "W_down")
        self.skip = exact_value(instance, "skip")
        self.gate = exact_value(instance, "W_gate") if self.gated else None
        self.n, self.d = instance.n, instance.d

    def down_zero(self, i: int) -> bool:
        return all(v == 0 for v in self.down[:, i])

    def pre_row(self, i: int) -> list:
        """The row σ acts on: the gate row (gated) or ``(W_up[i], b_up[i])`` (ReLU²)."""
        if self.gated:
            return list(self.gate[i])
        return list(self.up[i]) + [self.bias[i]]


def integer_direction(row) -> tuple | None:
    """The primitive integer direction of a row of Fractions (sign fixed), or None for zero."""
    den = math.lcm(1, *(Fraction(v).denominator for v in row))
    return direction([int(Fraction(v) * den) for v in row])


def biased(instance: Instance) -> bool:
    """A bias inside σ: on the up (value) projection; the file format has no gate bias."""
    return instance.b_up is not None and bool(np.any(instance.b_up != 0))


def violations(instance: Instance) -> list[str]:
    """The hypotheses of Theorems B and C that the weights violate (empty: they hold).

    ReLU²: every ``W_up`` row nonzero, the hyperplanes ``(W_up[i], b_up[i])``
    pairwise distinct, every ``W_down`` column nonzero. Gated: every gate
    row nonzero and the gate rows pairwise non-collinear, every ``W_down``
    column nonzero, every value ``(W_up[i], b_up[i])`` nonzero. Checked on
    the stored arrays (exact: one denominator for all of them), with the
    float screen of :func:`indexset.theory.nondegeneracy.collinear_groups` for large ones.
    """
    n = instance.n
    bias = instance.b_up if instance.b_up is not None else np.zeros(n, dtype=instance.W_up.dtype)
    values = np.hstack([instance.W_up, bias[:, None]])
    pre = instance.W_gate if instance.act.gated else values
    name = "gate" if instance.act.gated else "W_up"
    problems = [f"unit {i} has a zero {name} row" for i in np.flatnonzero(~np.asarray(instance.W_gate if instance.act.gated else instance.W_up).any(axis=1))]
    for group in collinear_groups(pre):
        what = "have collinear gate rows" if instance.act.gated else "lie on one hyperplane"
        problems.append(f"units {ranges(group)} {what}")
    problems += [f"unit {i} has a zero W_down column" for i in np.flatnonzero(~np.asarray(instance.W_down).any(axis=0))]
    if instance.act.gated:
        problems += [f"unit {i} has a zero value (W_up row and b_up)" for i in np.flatnonzero(~values.any(axis=1))]
    return problems


# ------------------------------------------------------ Theorem B / C system
def criterion_system(instance: Instance) -> System:
    """The 0/1 system of Theorems B and C: z_i = 1 flips unit i.

    Rows ``Σ_i z_i W_down[r,i]·q_i(k,l) = 0`` say that the quadratic part of
    the flipped units vanishes (``q_i = u_i ⊗ v_i`` symmetrised for gated
    blocks, ``u_i ⊗ u_i`` for ReLU²); rows ``Σ_i z_i L_i[r,l] = −A[r,l]``
    that their linear part cancels A (``L_i = c·b_i·W_down[:,i] u_iᵀ`` gated,
    ``2·a_i·W_down[:,i] u_iᵀ`` ReLU², a and b the biases inside σ).
    """
    w = Weights(instance)
    rows, rhs, labels = [], [], []
    for r in range(w.d):
        for k in range(w.d):
            for col in range(k, w.d):
                rows.append([w.down[r, i] * _quadratic(w, i, k, col) for i in range(w.n)])
                rhs.append(Fraction(0))
                labels.append(("quadratic", r, k, col))
    for r in range(w.d):
        for col in range(w.d):
            rows.append([w.down[r, i] * _linear(w, i, col) for i in range(w.n)])
            rhs.append(-w.skip[r, col])
            labels.append(("linear", r, col))
    return _integer_system(rows, rhs, labels, w.n)


def _quadratic(w: Weights, i: int, k: int, col: int) -> Fraction:
    if w.gated:
        u, v = w.gate[i], w.up[i]
        return u[k] * v[col] + u[col] * v[k] if k != col else u[k] * v[k]
    u = w.up[i]
    return u[k] * u[col] if k == col else 2 * u[k] * u[col]


def _linear(w: Weights, i: int, col: int) -> Fraction:
    if w.gated:
        return GATE_C * w.bias[i] * w.gate[i][col]
    return 2 * w.bias[i] * w.up[i][col]


def _integer_system(rows, rhs, labels, n) -> System:
    M, t, kept, infeasible = [], [], [], None
    for row, right, label in zip(rows, rhs, labels):
        den = math.lcm(1, *(Fraction(v).denominator for v in row + [right]))
        ints = [int(Fraction(v) * den) for v in row]
        target = int(Fraction(right) * den)
        g = math.gcd(*ints, target) if any(ints) else 0
        if g == 0:
            if target != 0:
                infeasible = len(M)
                M.append(ints)
                t.append(target)
                kept.append(label)
            continue
        M.append([v // g for v in ints])
        t.append(target // g)
        kept.append(label)
    return System(np.array(M, dtype=object).reshape(len(M), n), np.array(t, dtype=object), None, kept, infeasible)


def flip_values(instance: Instance, index_set) -> dict:
    """The witness of Theorems B and C for the flipped set S (exact arrays).

    Gated: the gate rows of S are negated (gate(−z) = gate(z) − c·z).
    ReLU²: rows, biases and down columns of S are negated
    (−relu(−z)² = relu(z)² − z²), and ``c_down`` takes the constants.
    """
    w = Weights(instance)
    S = sorted(set(int(i) for i in index_set))
    values = {"W_up": w.up.copy(), "b_up": w.bias.copy(), "W_down": w.down.copy(), "b_down": exact_value(instance, "b_down").copy()}
    if w.gated:
        gate = w.gate.copy()
        gate[S] = -gate[S]
        values["W_gate"] = gate
        return values
    values["W_up"][S] = -values["W_up"][S]
    values["b_up"][S] = -values["b_up"][S]
    values["W_down"][:, S] = -values["W_down"][:, S]
    for i in S:
        values["b_down"] = values["b_down"] + w.down[:, i] * w.bias[i] ** 2
    return values


