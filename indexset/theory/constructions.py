"""Same-width witnesses with biases for degenerate homogeneous and gated blocks (MATH.md §8.6).

Proposition D (extension) gives three ways a residual-free block *with
biases* reproduces the skip ``A x`` of a ReLU², ReGLU, SwiGLU or GeGLU
block of the same width:

- *opposite gate rows*: units i, j with ``W_gate[j] = −W_gate[i]`` and
  parallel down columns ``W_down[:,j] = μ·W_down[:,i]``: value biases
  ``+ε`` on i and ``−ε/μ`` on j add ``ε·W_down[:,i]·(u_i·x)``, because
  gate(z) − gate(−z) = z for the relu, silu and gelu gates;
- *spare units* (a zero gate row, value or down column): two of them,
  with gate rows ±w, no value row and value biases ±1, add any rank-one
  term ``q·(w·x)``;
- *ReLU² units on one hyperplane* z = 0 merge into ``E₊·relu(z)² +
  E₋·relu(−z)²``; with four units there, ``relu(z+1)² − relu(z)² −
  relu(−z)² + relu(−z−1)² = 2z + 1`` adds any ``q·(u·x)``.

:func:`construct_witness` tries them and returns exact witness arrays; the
caller checks them with a forward pass. These are sufficient conditions
only: a block none of them covers is left unknown.
"""

from __future__ import annotations

from fractions import Fraction

import flint
import numpy as np

from indexset.model.instance import Instance, exact_value
from indexset.rational import as_fmpq, as_fraction
from indexset.theory.flips import GATE_C, Weights, integer_direction


def construct_witness(instance: Instance) -> tuple[dict, str] | None:
    """Exact witness arrays and a one-line account, or None when no construction applies."""
    weights = Weights(instance)
    constant = exact_value(instance, "b_down")
    if weights.gated:
        return _gated(weights, constant)
    return _homogeneous(weights, constant)


# ============================================================== linear algebra
def _solve(columns: list[list[Fraction]], target: list[Fraction]) -> list[Fraction] | None:
    """Rational ε with Σ ε_k columns[k] = target, or None when there is none."""
    if not columns:
        return [] if all(v == 0 for v in target) else None
    rows = len(target)
    augmented = flint.fmpq_mat([[as_fmpq(columns[k][r]) for k in range(len(columns))] + [as_fmpq(target[r])] for r in range(rows)])
    echelon, rank = augmented.rref()
    solution = [Fraction(0)] * len(columns)
    for r in range(rank):
        pivot = next(j for j in range(len(columns) + 1) if echelon[r, j] != 0)
        if pivot == len(columns):
            return None  # a row 0 = nonzero: inconsistent
        solution[pivot] = as_fraction(echelon[r, len(columns)])
    return solution


def _rank_one_terms(matrix: list[list[Fraction]]) -> list[tuple[list[Fraction], list[Fraction]]]:
    """``matrix = Σ q_j w_jᵀ`` with as many terms as its rank (exact rank factorisation)."""
    d = len(matrix)
    m = flint.fmpq_mat([[as_fmpq(v) for v in row] for row in matrix])
    echelon, rank = m.rref()
    terms = []
    for r in range(rank):
        pivot = next(j for j in range(d) if echelon[r, j] != 0)
        terms.append(([as_fraction(m[i, pivot]) for i in range(d)], [as_fraction(echelon[r, j]) for j in range(d)]))
    return terms


def _matrix_rank(rows: list[list[Fraction]]) -> int:
    return flint.fmpq_mat([[as_fmpq(v) for v in row] for row in rows]).rank() if rows else 0


# ============================================================== gated blocks
def _gated(w: Weights, constant) -> tuple[dict, str] | None:
    spare = [i for i in range(w.n) if _gated_spare(w, i)]
    pairs = _opposite_pairs(w, spare)
    target = [w.skip[r, col] for r in range(w.d) for col in range(w.d)]
    generators = [[w.down[r, i] * GATE_C * w.gate[i][col] for r in range(w.d) for col in range(w.d)] for i, _, _ in pairs]
    epsilon = _solve(generators, target)
    residual = None
    if epsilon is None:
        epsilon = _least_squares(generators, target)
        left = [t - sum(e * g[k] for e, g in zip(epsilon, generators)) for k, t in enumerate(target)]
        residual = [[left[r * w.d + col] for col in range(w.d)] for r in range(w.d)]
        if 2 * _matrix_rank(residual) > len(spare):
            return None
    values = {"W_up": w.up.copy(), "b_up": w.bias.copy(), "W_down": w.down.copy(), "b_down": constant.copy(), "W_gate": w.gate.copy()}
    used = []
    for (i, j, mu), eps in zip(pairs, epsilon):
        if eps != 0:
            values["b_up"][i] += eps
            values["b_up"][j] -= eps / mu
            used.append((i, j))
    terms = _rank_one_terms(residual) if residual is not None else []
    for (q, row), (a, b) in zip(terms, zip(spare[0::2], spare[1::2])):
        for unit, sign in ((a, 1), (b, -1)):
            values["W_gate"][unit] = np.array([sign * v for v in row], dtype=object)
            values["W_up"][unit] = np.array([Fraction(0)] * w.d, dtype=object)
            values["b_up"][unit] = Fraction(sign) / GATE_C
            values["W_down"][:, unit] = np.array(q, dtype=object)
    how = (f"value biases on {len(used)} pair(s) of units with opposite gate rows and parallel down columns {used}"
           + (f", and {len(terms)} pair(s) of spare units with gate rows ±w and value biases ±1" if terms else "")
           + " reproduce A·x (gate(z) − gate(−z) = z)")
    if not used and not terms:
        return None  # A ≠ 0, so an empty construction cannot be right
    return values, how


def _gated_spare(w: Weights, i: int) -> bool:
    """A unit that contributes nothing: zero gate row (gate(0) = 0), zero value, or zero down column."""
    return all(v == 0 for v in w.gate[i]) or w.down_zero(i) or (all(v == 0 for v in w.up[i]) and w.bias[i] == 0)


def _opposite_pairs(w: Weights, spare: list[int]) -> list[tuple[int, int, Fraction]]:
    """Disjoint pairs (i, j, μ): gate row j = −gate row i, W_down[:,j] = μ·W_down[:,i]."""
    pairs, taken = [], set(spare)
    for i in range(w.n):
        if i in taken:
            continue
        for j in range(i + 1, w.n):
            if j in taken or any(a != -b for a, b in zip(w.gate[i], w.gate[j])):
                continue
            mu = _ratio(w.down[:, j], w.down[:, i])
            if mu is not None:
                pairs.append((i, j, mu))
                taken.update((i, j))
                break
    return pairs


def _ratio(column, base) -> Fraction | None:
    """μ with column = μ·base (μ ≠ 0), or None."""
    k = next((r for r in range(len(base)) if base[r] != 0), None)
    if k is None:
        return None
    mu = column[k] / base[k]
    if mu == 0 or any(c != mu * b for c, b in zip(column, base)):
        return None
    return mu


def _least_squares(generators, target) -> list[Fraction]:
    """ε minimising ‖target − Σ ε_k g_k‖² (exact normal equations; any solution)."""
    if not generators:
        return []
    k = len(generators)
    gram = [[sum(a * b for a, b in zip(generators[p], generators[q])) for q in range(k)] for p in range(k)]
    rhs = [sum(a * b for a, b in zip(generators[p], target)) for p in range(k)]
    return _solve([[gram[p][q] for p in range(k)] for q in range(k)], rhs) or [Fraction(0)] * k


# ============================================================== ReLU² blocks
def _homogeneous(w: Weights, constant) -> tuple[dict, str] | None:
    classes, spare_constant = _hyperplane_classes(w)
    needed = sum(_units_needed(plus, minus) for _, plus, minus in classes.values())
    budget = w.n - needed  # spare units
    chosen, directions = [], []
    for key, (p, plus, minus) in sorted(classes.items(), key=lambda item: -_units_needed(*item[1][1:])):
        cost = 4 - _units_needed(plus, minus)
        if len(directions) < w.d and cost <= budget and _matrix_rank(directions + [p[:-1]]) > len(directions):
            directions.append(p[:-1])
            chosen.append(key)
            budget -= cost
    fresh = []
    for j in range(w.d):
        unit_vector = [Fraction(int(j == k)) for k in range(w.d)]
        if len(directions) < w.d and budget >= 4 and _matrix_rank(directions + [unit_vector]) > len(directions):
            directions.append(unit_vector)
            fresh.append(unit_vector)
            budget -= 4
    if len(directions) < w.d:
        return None
    U = flint.fmpq_mat([[as_fmpq(v) for v in row] for row in directions])
    A = flint.fmpq_mat([[as_fmpq(w.skip[r, col]) for col in range(w.d)] for r in range(w.d)])
    Q = A * U.inv()  # A = Q·U: column j of Q goes with direction j
    q = [np.array([as_fraction(Q[r, j]) for r in range(w.d)], dtype=object) for j in range(w.d)]
    units, offset = _relu2_units(classes, chosen, fresh, q)
    values = _pack(units, w.n, w.d, constant + spare_constant - offset)
    how = (f"{len(chosen)} hyperplane class(es) of f and {len(fresh)} new direction(s), four units each, "
           "carry relu(z+1)² − relu(z)² − relu(−z)² + relu(−z−1)² = 2z + 1 and reproduce A·x")
    return values, how


def _units_needed(plus, minus) -> int:
    return int(any(plus)) + int(any(minus))


def _hyperplane_classes(w: Weights):
    """ReLU² units merged per hyperplane, and the constant of zero-row units.

    Returns ``{key: (p, E₊, E₋)}`` with p the primitive integer ``(u, a)``
    of the hyperplane: a unit ``W·relu(λ(p·(x, 1)))²`` adds ``W·λ²`` to E₊
    (λ > 0) or to E₋ (λ < 0, relu(λz)² = λ²·relu(−z)²).
    """
    classes: dict[tuple, tuple] = {}
    constant = np.array([Fraction(0)] * w.d, dtype=object)
    for i in range(w.n):
        if w.down_zero(i):
            continue
        if all(v == 0 for v in w.up[i]):
            constant = constant + w.down[:, i] * max(w.bias[i], Fraction(0)) ** 2
            continue
        row = [Fraction(v) for v in list(w.up[i]) + [w.bias[i]]]
        key = integer_direction(row)
        p = [Fraction(v) for v in key]
        k = next(j for j in range(len(p)) if p[j] != 0)
        lam = row[k] / p[k]
        zero = np.array([Fraction(0)] * w.d, dtype=object)
        _, plus, minus = classes.get(key, (p, zero, zero))
        term = w.down[:, i] * lam**2
        classes[key] = (p, plus + term, minus) if lam > 0 else (p, plus, minus + term)
    return classes, constant


def _relu2_units(classes, chosen, fresh, q) -> tuple[list, np.ndarray]:
    """Units (row, bias, down column) of the witness, and the constant they add."""
    units = []
    offset = np.array([Fraction(0)] * len(q[0]), dtype=object)
    for key, (p, plus, minus) in classes.items():
        u, a = p[:-1], p[-1]
        if key in chosen:
            half = q[chosen.index(key)] / 2
            units += _four(u, a, half, plus - half, minus - half)
            offset = offset + 2 * half * (a + Fraction(1, 2))
            continue
        if any(plus):
            units.append((u, a, plus))
        if any(minus):
            units.append(([-v for v in u], -a, minus))
    for k, u in enumerate(fresh):
        half = q[len(chosen) + k] / 2
        units += _four(u, Fraction(0), half, -half, -half)
        offset = offset + half
    return units, offset


def _four(u, a, half, plus, minus) -> list:
    """relu(z+1)²·h + relu(−z−1)²·h + relu(z)²·E₊ + relu(−z)²·E₋ with z = u·x + a."""
    negative = [-v for v in u]
    return [(u, a + 1, half), (negative, -a - 1, half), (u, a, plus), (negative, -a, minus)]


def _pack(units, n, d, constant) -> dict:
    up = np.array([[Fraction(0)] * d for _ in range(n)], dtype=object)
    bias = np.array([Fraction(0)] * n, dtype=object)
    down = np.array([[Fraction(0)] * n for _ in range(d)], dtype=object)
    for i, (row, b, column) in enumerate(units):
        up[i] = np.array([Fraction(v) for v in row], dtype=object)
        bias[i] = Fraction(b)
        down[:, i] = np.array(column, dtype=object)
    return {"W_up": up, "b_up": bias, "W_down": down, "b_down": np.array(constant, dtype=object)}
