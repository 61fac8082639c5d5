"""Exact numbers: numpy arrays as integers over a common denominator, and the one place
where Fractions (object arrays, JSON, files) and python-flint's fmpq (matrix algebra) meet.

Integer arrays are exact. A float64 value is an exact dyadic rational
``m·2^e``; we recover it without rounding. Results are numpy object arrays of
Python ints (unbounded), so nothing overflows silently.
"""

from __future__ import annotations

import math
from fractions import Fraction

import flint
import numpy as np

from indexset.errors import InputError


def integer_numerators(array: np.ndarray, denominator: int = 1) -> tuple[np.ndarray, int]:
    """Write an integer or float array exactly as ``numerators / den``.

    Parameters
    ----------
    array : ndarray
        Integer, boolean-free or floating array (finite values).
    denominator : int
        A common denominator the stored values are already divided by
        (the instance file's ``denominator`` key).

    Returns
    -------
    numerators : ndarray of object (Python int)
        Same shape as ``array``.
    den : int
        Positive common denominator, reduced against the numerators' gcd.
    """
    if array.dtype.kind in "iu":
        numerators = np.vectorize(int, otypes=[object])(array) if array.size else array.astype(object)
        return _reduce(numerators, int(denominator))
    values = np.asarray(array, dtype=np.float64)
    mantissa, exponent = np.frexp(values)
    # value = (mantissa·2^53) · 2^(exponent − 53), mantissa·2^53 an exact integer.
    ints = (mantissa * float(2**53)).astype(np.int64)
    shifts = exponent.astype(np.int64) - 53
    nonzero = ints != 0
    if not nonzero.any():
        return np.zeros(values.shape, dtype=object), 1
    low = int(shifts[nonzero].min())
    flat = [int(m) << int(s - low) if m else 0 for m, s in zip(ints.ravel(), shifts.ravel())]
    numerators = np.array(flat, dtype=object).reshape(values.shape)
    if low >= 0:
        return _reduce(numerators * (1 << low), int(denominator))
    return _reduce(numerators, int(denominator) << -low)


def _reduce(numerators: np.ndarray, den: int) -> tuple[np.ndarray, int]:
    """Divide numerators and denominator by their common gcd."""
    g = den
    for value in numerators.ravel():
        if g == 1:
            break
        g = math.gcd(g, int(value))
    if g > 1:
        numerators = np.array([int(v) // g for v in numerators.ravel()], dtype=object).reshape(
            numerators.shape
        )
        den //= g
    return numerators, den


def fractions(array: np.ndarray, denominator: int = 1) -> np.ndarray:
    """Exact values of an array as an object array of Fractions."""
    numerators, den = integer_numerators(array, denominator)
    out = np.empty(numerators.shape, dtype=object)
    flat = out.reshape(-1)
    for k, value in enumerate(numerators.ravel()):
        flat[k] = Fraction(int(value), den)
    return out


def fmpz_matrix(numerators: np.ndarray) -> flint.fmpz_mat:
    """A python-flint integer matrix from a 2-D object array of ints."""
    rows, cols = numerators.shape
    return flint.fmpz_mat(rows, cols, [int(v) for v in numerators.ravel()])


def fmpz_to_object(matrix: flint.fmpz_mat) -> np.ndarray:
    """A 2-D object array of Python ints from a python-flint matrix."""
    rows, cols = matrix.nrows(), matrix.ncols()
    return np.array([int(v) for v in matrix.entries()], dtype=object).reshape(rows, cols)


def as_fraction(value) -> Fraction:
    """An exact Fraction from an int, Fraction, fmpq, float or decimal string."""
    if isinstance(value, flint.fmpq):
        return Fraction(int(value.p), int(value.q))
    if isinstance(value, float):
        return Fraction(*value.as_integer_ratio())
    return Fraction(value)


def as_fmpq(value) -> flint.fmpq:
    """An exact fmpq from anything :func:`as_fraction` takes."""
    value = as_fraction(value)
    return flint.fmpq(value.numerator, value.denominator)


def fmpq_matrix(rows) -> flint.fmpq_mat:
    """A python-flint rational matrix from rows of exact values (Fractions, ints, floats)."""
    rows = [list(row) for row in rows]
    return flint.fmpq_mat([[as_fmpq(v) for v in row] for row in rows]) if rows and rows[0] else flint.fmpq_mat(len(rows), 0)


def fraction_rows(matrix: flint.fmpq_mat) -> list[list[Fraction]]:
    """The entries of a python-flint rational matrix as rows of Fractions."""
    return [[as_fraction(matrix[i, j]) for j in range(matrix.ncols())] for i in range(matrix.nrows())]


def parse_fraction(text: str, source: str = "<activation>") -> Fraction:
    """Parse a decimal or ``p/q`` string into an exact Fraction.

    Raises
    ------
    indexset.errors.InputError
        If the text is not a finite rational number.
    """
    try:
        value = Fraction(text.strip())
    except (ValueError, ZeroDivisionError):
        raise InputError(source, f"{text!r} is not a number (use a decimal or p/q)") from None
    return value


def max_abs(numerators: np.ndarray, den: int) -> Fraction:
    """Largest absolute value of ``numerators / den`` as a Fraction."""
    return Fraction(largest_magnitude(numerators), den)


def largest_magnitude(values: np.ndarray) -> int:
    """``max |v|`` of an array of integers (object or integer dtype), exactly; 0 when empty.

    In int64 when every entry fits with its absolute value (|v| < 2⁶²),
    else in Python integers.
    """
    values = np.asarray(values).ravel()
    if values.size == 0:
        return 0
    try:
        small = values.astype(np.int64)
    except OverflowError:
        return max(abs(int(v)) for v in values)
    if small.min() > -(2**62) and small.max() < 2**62:  # −2⁶³ has no int64 absolute value
        return int(np.abs(small).max())
    return max(abs(int(v)) for v in values)


def fits_int64(numerators: np.ndarray) -> bool:
    """Whether every integer fits a signed 64-bit integer."""
    bound = 2**63 - 1
    return all(-bound <= int(v) <= bound for v in numerators.ravel())
