"""The exact verifier of condition (★): c·W_down[:,S]·W_up[S,:] = −A.

Checkers stay apart from solvers: every solver hit passes through
:func:`verify` before it is reported. All arithmetic is over the integers
(python-flint ``fmpz_mat``), never floats.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from fractions import Fraction

import flint
import numpy as np

from indexset.errors import InputError
from indexset.model.activations import ODD_LINEAR
from indexset.model.instance import Instance
from indexset.rational import as_fraction, fmpz_matrix, fmpz_to_object, max_abs


@dataclass(frozen=True)
class Verification:
    """Outcome of checking one index set exactly.

    Attributes
    ----------
    index_set : tuple of int
        The checked set S, sorted.
    residual_zero : bool
        ``c·W_down[:,S]·W_up[S,:] + A`` is exactly zero.
    max_residual : Fraction
        Largest absolute entry of that residual.
    size_ok : bool
        ``|S| ≥ d`` (implied by a zero residual, reported on its own).
    tolerance : Fraction or None
        The tolerance τ asked for, if any.
    within_tolerance : bool or None
        ``max_residual ≤ τ`` when a tolerance was given.
    residual : ndarray of Fraction
        The exact residual matrix (d × d).
    """

    index_set: tuple
    residual_zero: bool
    max_residual: Fraction
    size_ok: bool
    tolerance: Fraction | None
    within_tolerance: bool | None
    residual: np.ndarray

    @property
    def holds(self) -> bool:
        """(★) holds exactly (or within τ when a tolerance was given)."""
        if self.tolerance is not None:
            return bool(self.within_tolerance) and self.size_ok
        return self.residual_zero and self.size_ok

    def to_json(self) -> dict:
        """JSON-ready dict (Fractions as strings)."""
        return {
            "index_set": list(self.index_set),
            "holds": self.holds,
            "residual_zero": self.residual_zero,
            "max_residual": str(self.max_residual),
            "max_residual_float": _json_float(self.max_residual),
            "size_ok": self.size_ok,
            "tolerance": None if self.tolerance is None else str(self.tolerance),
            "within_tolerance": self.within_tolerance,
        }


def approximate(value: Fraction) -> float:
    """``float(value)``, or ±inf when the exact value is beyond the float64 range."""
    try:
        return float(value)
    except OverflowError:
        return math.inf if value > 0 else -math.inf


def _json_float(value: Fraction) -> float | None:
    """A float for JSON output; None when it would overflow (JSON has no inf)."""
    approx = approximate(value)
    return approx if math.isfinite(approx) else None


def check_index_set(instance: Instance, index_set: Iterable[int]) -> tuple[int, ...]:
    """Validate an index set against an instance: in range, no repeats.

    Raises
    ------
    InputError
        For an index outside ``0..n-1`` or a repeated index.
    """
    indices = [int(i) for i in index_set]
    bad = [i for i in indices if not 0 <= i < instance.n]
    if bad:
        raise InputError(instance.source, f"index {bad[0]} out of range for width n = {instance.n}")
    if len(set(indices)) != len(indices):
        raise InputError(instance.source, "index set repeats an index")
    return tuple(sorted(indices))


def require_odd_linear(instance: Instance) -> None:
    """Refuse activations for which condition (★) means nothing."""
    if instance.act.kind != ODD_LINEAR:
        raise InputError(
            instance.source,
            f"condition (★) applies to odd-linear activations only, not {instance.activation} "
            f"({instance.act.kind})",
        )
    if instance.residual_free:
        raise InputError(instance.source, "the block is residual-free: there is no skip to absorb")


def residual_numerators(instance: Instance, index_set: tuple[int, ...]) -> tuple[flint.fmpz_mat, int]:
    """Exact ``c·W_down[:,S]·W_up[S,:] + A`` as integer numerators over one denominator."""
    up, den_up = instance.exact("W_up")
    down, den_down = instance.exact("W_down")
    skip, den_skip = instance.exact("skip")
    c = instance.act.c
    d = instance.d
    columns = list(index_set)
    if columns:
        product = fmpz_matrix(down[:, columns]) * fmpz_matrix(up[columns, :])
    else:
        product = flint.fmpz_mat(d, d)
    # R = (p/q)·P/(Du·Dd) + N_A/D_A over the denominator q·Du·Dd·D_A.
    scale_product = c.numerator * den_skip
    scale_skip = c.denominator * den_up * den_down
    numerators = product * scale_product + fmpz_matrix(skip) * scale_skip
    return numerators, c.denominator * den_up * den_down * den_skip


def verify(instance: Instance, index_set: Iterable[int], tol=None) -> Verification:
    """Check condition (★) for one index set exactly.

    Parameters
    ----------
    instance : Instance
        An odd-linear, skip-connected block.
    index_set : iterable of int
        The set S of units whose rows are flipped.
    tol : Fraction, str, int or float, optional
        Accept ``max |residual| ≤ tol`` (compared exactly).

    Returns
    -------
    Verification

    Raises
    ------
    InputError
        Index out of range or repeated; activation not odd-linear;
        residual-free block.
    """
    require_odd_linear(instance)
    indices = check_index_set(instance, index_set)
    numerators, den = residual_numerators(instance, indices)
    values = fmpz_to_object(numerators)
    largest = max_abs(values, den)
    tolerance = None if tol is None else as_fraction(tol)
    residual = np.empty(values.shape, dtype=object)
    for index, value in np.ndenumerate(values):
        residual[index] = Fraction(int(value), den)
    return Verification(
        index_set=indices,
        residual_zero=numerators.is_zero(),
        max_residual=largest,
        size_ok=len(indices) >= instance.d,
        tolerance=tolerance,
        within_tolerance=None if tolerance is None else largest <= tolerance,
        residual=residual,
    )


def failing_index_sets(instance: Instance, index_sets: list, tol=None) -> list[tuple[int, ...]]:
    """The index sets of a list for which (★) fails; [] when every one holds.

    The same exact check as :func:`verify`, for many sets at once: with the
    rank-one terms T_i = W_down[:,i]·W_up[i,:] as integer numerators,
    ``c·Σ_{i∈S} T_i + A`` is one product of the sets' 0/1 indicator matrix
    with the terms, in Python integers (no rounding, no overflow).

    Parameters
    ----------
    instance : Instance
        An odd-linear, skip-connected block.
    index_sets : list of iterable of int
        The sets S to check.
    tol : Fraction, str, int or float, optional
        Accept ``max |residual| ≤ tol`` (compared exactly).

    Raises
    ------
    InputError
        As :func:`verify`.
    """
    require_odd_linear(instance)
    checked = [check_index_set(instance, index_set) for index_set in index_sets]
    if not checked:
        return []
    up, den_up = instance.exact("W_up")
    down, den_down = instance.exact("W_down")
    skip, den_skip = instance.exact("skip")
    c, d = instance.act.c, instance.d
    # Per unit, its rank-one term flattened (n × d²); per set, its indicator row (k × n).
    terms = np.array([[int(down[a, i]) * int(up[i, b]) for a in range(d) for b in range(d)] for i in range(instance.n)], dtype=object)
    terms = terms.reshape(instance.n, d * d)
    indicators = np.zeros((len(checked), instance.n), dtype=object)
    for row, indices in enumerate(checked):
        indicators[row, list(indices)] = 1
    scale_product, scale_skip = c.numerator * den_skip, c.denominator * den_up * den_down
    shift = np.array([int(v) * scale_skip for v in skip.reshape(-1)], dtype=object)
    largest_term = max((abs(int(v)) for v in terms.reshape(-1)), default=0)
    # int64 when no partial sum can reach 2^62 (the bound of every entry below); else Python integers.
    small = abs(scale_product) < 2**62 and (instance.n * largest_term * abs(scale_product) + max((abs(int(v)) for v in shift), default=0)) < 2**62
    kind = np.int64 if small else object
    numerators = indicators.astype(kind).dot(terms.astype(kind)) * scale_product + shift.astype(kind)
    largest = np.abs(numerators).max(axis=1)
    den = c.denominator * den_up * den_down * den_skip
    tolerance = None if tol is None else as_fraction(tol)
    failing = []
    for row, indices in enumerate(checked):
        ok = largest[row] == 0 if tolerance is None else Fraction(int(largest[row]), den) <= tolerance
        if not ok or len(indices) < d:
            failing.append(indices)
    return failing
