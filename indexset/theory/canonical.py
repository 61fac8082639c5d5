"""The canonical form of a block: units merged into the classes σ cannot tell apart (MATH.md §7).

Write σ(z) = (c/2)·z + e(z) with e even and not affine. Every block is

    Σ_K E_K σ(h_K(x)) + L x + const

over pairwise distinct *classes* h_K(x) = ρ_K·x + β_K: for ReLU-like σ
(positively homogeneous) units on one affine hyperplane merge
(σ(λh) = λσ(h) for λ > 0, and σ(−h) = σ(h) − c·h); for GELU-like σ
(analytic) units equal up to sign merge. A class with E_K = 0 is *free*:
it only adds to L. The classes with E_K ≠ 0 are what every residual-free
block equal to f must reproduce, one unit at least each (MATH.md §7).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from functools import cached_property

import flint
import numpy as np

from indexset.model.activations import ODD_LINEAR
from indexset.model.instance import Instance, exact_value
from indexset.rational import as_fmpq

_ANALYTIC = ("gelu", "gelu_tanh", "silu", "softplus")
_ZERO_AT_ZERO = ("gelu", "gelu_tanh", "silu")  # σ(0) = 0 exactly

HOMOGENEOUS = "homogeneous"
"""Merge kind of ReLU-like σ: units on one hyperplane through the same line merge, any positive scale."""

ANALYTIC = "analytic"
"""Merge kind of GELU-like σ: only units equal up to sign merge."""


@dataclass
class Form:
    """A block as ``Σ_K E_K σ(h_K(x)) + L x + const (+ Σ_b S_b σ(b))``.

    Attributes
    ----------
    even : dict
        Class key ``(ρ, β)`` (tuples of Fractions, canonical scale/sign)
        to its nonzero column E_K (tuple of Fractions).
    linear : ndarray of Fraction, (d, d)
    constant : ndarray of Fraction, (d,)
    symbolic : dict
        β ≥ 0 to a nonzero column: constant units σ(β)·S_β whose value is
        irrational (GELU at β ≠ 0, softplus), kept symbolic to stay exact.
    free : list
        Keys of classes whose units cancel in even part (E_K = 0).
    """

    even: dict
    linear: np.ndarray
    constant: np.ndarray
    symbolic: dict
    free: list = field(default_factory=list)

    def same_as(self, other: Form) -> bool:
        """Exact equality: same classes, columns, linear part and constants."""
        return (
            self.even == other.even
            and self.symbolic == other.symbolic
            and bool(np.all(self.linear == other.linear))
            and bool(np.all(self.constant == other.constant))
        )


def merge_kind(act) -> str | None:
    """How σ merges units: :data:`HOMOGENEOUS` (ReLU-like), :data:`ANALYTIC` or None.

    None for activations the argument does not cover: not odd-linear, or a
    leaky ReLU with α = 1 (σ(z) = z has no even part at all).
    """
    if act.kind != ODD_LINEAR:
        return None
    if act.name == "relu" or act.name.startswith("leaky_relu:"):
        return HOMOGENEOUS if act.c != 2 else None  # c = 1 + α; α = 1 is linear
    return ANALYTIC if act.name in _ANALYTIC else None


def block_values(instance: Instance) -> dict:
    """Exact arrays (Fractions) of a block; ``skip`` is None when residual-free."""
    values = {key: exact_value(instance, key) for key in ("W_up", "b_up", "W_down", "b_down")}
    values["skip"] = None if instance.residual_free else exact_value(instance, "skip")
    return values


def canonical_form(values: dict, act) -> Form:
    """The canonical form of a block given by exact arrays (see :class:`Form`).

    Parameters
    ----------
    values : dict
        ``W_up`` (n, d), ``b_up`` (n,), ``W_down`` (d, n), ``b_down`` (d,)
        object arrays of Fractions, ``skip`` (d, d) or None.
    act : Activation
        Odd-linear with :func:`merge_kind` not None.
    """
    kind = merge_kind(act)
    up, b_up, down = values["W_up"], values["b_up"], values["W_down"]
    d, n = down.shape
    c = act.c
    linear = zeros((d, d)) if values["skip"] is None else values["skip"].copy()
    constant = values["b_down"].copy()
    even: dict = {}
    symbolic: dict = {}
    for i in range(n):
        w = down[:, i]
        if not any(w):
            continue
        row, bias = tuple(up[i]), b_up[i]
        if not any(row):
            constant = constant + _constant_unit(act, kind, bias, w, symbolic)
            continue
        scale = _scale(kind, row)
        key = (tuple(v / scale for v in row), bias / scale)
        weight = abs(scale) * w
        _add(even, key, weight)
        if scale < 0:
            # σ(−h) = σ(h) − c·h: the unit is weight·σ(h) minus a linear term.
            linear = linear - c * np.outer(weight, np.array(key[0], dtype=object))
            constant = constant - c * key[1] * weight
    free = [key for key, column in even.items() if not any(column)]
    even = {key: tuple(column) for key, column in even.items() if any(column)}
    symbolic = {key: tuple(column) for key, column in symbolic.items() if any(column)}
    return Form(even, linear, constant, symbolic, free)


def zeros(shape) -> np.ndarray:
    """An object array of ``Fraction(0)``."""
    out = np.empty(shape, dtype=object)
    out.fill(Fraction(0))
    return out


def _add(table: dict, key, column) -> None:
    table[key] = table[key] + column if key in table else np.array(column, dtype=object)


def _scale(kind: str, row) -> Fraction:
    """ReLU-like: the first nonzero entry (any scale merges); analytic: its sign."""
    first = next(v for v in row if v != 0)
    return first if kind == HOMOGENEOUS else Fraction(1 if first > 0 else -1)


def _constant_unit(act, kind, bias, w, symbolic) -> np.ndarray:
    """A zero-row unit w·σ(b): its exact constant, or a symbolic σ(|b|) term."""
    if kind == HOMOGENEOUS:
        return act.exact_relu_like(bias) * w
    if bias == 0 and act.name in _ZERO_AT_ZERO:
        return 0 * w
    # σ(b) = σ(−b) + c·b keeps every symbolic term at a nonnegative argument.
    _add(symbolic, abs(bias), w)
    return act.c * bias * w if bias < 0 else 0 * w


def fmpq_array(array) -> flint.fmpq_mat:
    """An exact matrix from a 2-d array of rationals."""
    array = np.asarray(array, dtype=object)
    rows, cols = array.shape
    return flint.fmpq_mat(rows, cols, [as_fmpq(Fraction(v)) for v in array.ravel()])


@dataclass(frozen=True)
class Classes:
    """The classes of f that need a unit of g, and what the §7 decision reads from them.

    Attributes
    ----------
    keys : list
        Class keys ``(ρ_K, β_K)`` in a fixed (sorted) order.
    columns : list
        E_K as object arrays of Fractions, one per key.
    linear : ndarray of Fraction, (d, d)
        L, the linear part of the canonical form.
    n, d : int
        Width and dimension of f.
    c : Fraction
        The odd coefficient of σ.
    reserve : int
        Units kept back from the spare ones (for irrational constants).
    """

    keys: list
    columns: list
    linear: np.ndarray
    n: int
    d: int
    c: Fraction
    reserve: int = 0

    @property
    def m(self) -> int:
        """Number of classes that need a unit."""
        return len(self.keys)

    @property
    def spare(self) -> int:
        """Units not needed by any class (minus those reserved for exact constants)."""
        return self.n - self.m - self.reserve

    def direction(self, k: int) -> tuple:
        """ρ_K of class k."""
        return self.keys[k][0]

    @cached_property
    def terms(self) -> list:
        """c·E_K·ρ_Kᵀ (d × d) of every class, exact."""
        return [fmpq_array(self.c * np.outer(self.columns[k], np.array(self.direction(k), dtype=object)))
                for k in range(self.m)]

    def term(self, k: int) -> flint.fmpq_mat:
        """c·E_K·ρ_Kᵀ of class k."""
        return self.terms[k]


def classes_of(instance: Instance) -> tuple[Form, Classes]:
    """Canonical form of f and its classes that need a unit."""
    form = canonical_form(block_values(instance), instance.act)
    keys = sorted(form.even)
    columns = [np.array(form.even[key], dtype=object) for key in keys]
    return form, Classes(keys, columns, form.linear, instance.n, instance.d, instance.act.c)
