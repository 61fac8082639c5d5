"""Exact linear algebra and lattice reduction of ``M z = t`` (MATH.md §6).

Every statement this module returns is exact and comes with what proves it:

- span infeasibility: a rational y with ``yᵀM = 0`` and ``yᵀt ≠ 0``;
- the unique real solution when rank M = n;
- integer infeasibility: t is not in the lattice spanned by the columns of M
  (a lattice basis from LLL with its unimodular transform, and the
  non-integral coordinates of t in that basis);
- otherwise an integer particular solution z0 and an LLL-reduced basis K of
  the integer kernel lattice, so that every integer solution is ``z0 + K y``.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

import flint
import numpy as np

from indexset.rational import fmpz_matrix, fmpz_to_object, fraction_rows, largest_magnitude
from indexset.result import FEASIBLE, INFEASIBLE, Result
from indexset.search.system import upper_ends


@dataclass
class Reduction:
    """What exact linear algebra says about ``M z = t``.

    Attributes
    ----------
    n : int
        Number of unknowns.
    rank : int
        Rank of M.
    span_feasible : bool
        t lies in the column space of M.
    span_certificate : list of int or None
        Integer y with ``yᵀM = 0`` and ``yᵀt ≠ 0`` (span infeasible only).
    unique_solution : list of Fraction or None
        The unique real solution z* when rank M = n and t is in the span.
    integer_feasible : bool or None
        Whether an integer solution exists (None when not computed).
    lattice_reason : str or None
        Why no integer solution exists, when so.
    z0 : ndarray of object or None
        Integer particular solution, shape (n,).
    kernel : ndarray of object or None
        Integer kernel basis as columns, shape (n, n − rank): LLL-reduced by :func:`reduce_system`, as given to :func:`known_kernel`.
    """

    n: int
    rank: int
    span_feasible: bool
    span_certificate: list | None = None
    unique_solution: list | None = None
    integer_feasible: bool | None = None
    lattice_reason: str | None = None
    z0: np.ndarray | None = None
    kernel: np.ndarray | None = None

    @property
    def kernel_dimension(self) -> int:
        """n − rank M."""
        return self.n - self.rank

    def stages(self) -> dict:
        """Facts for ``Result.stages``."""
        return {
            "rank": self.rank,
            "n": self.n,
            "kernel_dimension": self.kernel_dimension,
            "span_feasible": self.span_feasible,
            "integer_feasible": self.integer_feasible,
        }


def reduce_system(M: np.ndarray, t: np.ndarray, lattice: bool = True, upper=None) -> Reduction:
    """Exact rank, span, unique-solution and lattice analysis of ``M z = t``.

    Parameters
    ----------
    M : ndarray of object (Python ints), shape (m, n)
    t : ndarray of object, shape (m,)
    lattice : bool
        Compute the integer kernel lattice and particular solution when the
        real solution is not unique.
    upper : array_like of int, optional
        The box's upper ends (None: the 0/1 box): z0 is moved near its centre.

    Returns
    -------
    Reduction
    """
    m, n = M.shape
    matrix = fmpz_matrix(M) if m else flint.fmpz_mat(0, n)
    rank = matrix.rank() if m else 0
    rhs = fmpz_matrix(np.asarray(t, dtype=object).reshape(m, 1)) if m else flint.fmpz_mat(0, 1)
    augmented_rank = _augmented_rank(matrix, rhs) if m else 0
    if augmented_rank > rank:
        return Reduction(n, rank, False, span_certificate=span_certificate(matrix, rhs), integer_feasible=False)
    result = Reduction(n, rank, True)
    if rank == n:
        result.unique_solution = _unique_solution(matrix, rhs)
        integral = all(v.denominator == 1 for v in result.unique_solution)
        result.integer_feasible = integral
        if integral:
            result.z0 = np.array([int(v) for v in result.unique_solution], dtype=object)
            result.kernel = np.zeros((n, 0), dtype=object)
        else:
            result.lattice_reason = "the unique real solution is not integral"
        return result
    if lattice:
        _lattice(matrix, rhs, result, upper)
    return result


def _augmented_rank(matrix: flint.fmpz_mat, rhs: flint.fmpz_mat) -> int:
    m, n = matrix.nrows(), matrix.ncols()
    entries = []
    for r in range(m):
        entries.extend(matrix[r, j] for j in range(n))
        entries.append(rhs[r, 0])
    return flint.fmpz_mat(m, n + 1, entries).rank()


def span_certificate(matrix: flint.fmpz_mat, rhs: flint.fmpz_mat) -> list[int]:
    """Integer y with ``yᵀM = 0`` and ``yᵀt ≠ 0`` (t outside the column space).

    Raises
    ------
    ValueError
        If t lies in the column space (no certificate exists).
    """
    basis, nullity = matrix.transpose().nullspace()
    for k in range(nullity):
        y = [basis[r, k] for r in range(basis.nrows())]
        if sum(y[r] * rhs[r, 0] for r in range(len(y))) != 0:
            return [int(v) for v in y]
    raise ValueError("t lies in the column space of M: no span certificate")


def check_span_certificate(M: np.ndarray, t: np.ndarray, y) -> bool:
    """Independent check of a span certificate with Python ints."""
    y = [int(v) for v in y]
    m, n = M.shape
    annihilates = all(sum(y[r] * int(M[r, j]) for r in range(m)) == 0 for j in range(n))
    return annihilates and sum(y[r] * int(t[r]) for r in range(m)) != 0


def _unique_solution(matrix: flint.fmpz_mat, rhs: flint.fmpz_mat) -> list[Fraction]:
    """The unique z with Mz = t (full column rank, consistent): via normal equations."""
    q = flint.fmpq_mat(matrix)
    gram = q.transpose() * q
    z = gram.solve(q.transpose() * flint.fmpq_mat(rhs))
    return [row[0] for row in fraction_rows(z)]


def _lattice(matrix: flint.fmpz_mat, rhs: flint.fmpz_mat, result: Reduction, upper=None) -> None:
    """Integer kernel basis and particular solution by LLL with transform.

    LLL of the rows of Mᵀ with its unimodular transform U gives ``U Mᵀ = L``:
    the rows of U whose row of L is zero form a basis of the integer kernel
    (U is unimodular and the other rows of L are independent), and the
    nonzero rows of L form a basis of the lattice spanned by M's columns.
    """
    n = matrix.ncols()
    reduced, transform = matrix.transpose().lll(transform=True)
    reduced_rows, transform_rows = fmpz_to_object(reduced), fmpz_to_object(transform)
    is_zero = [not any(row) for row in reduced_rows]
    zero = [r for r in range(n) if is_zero[r]]
    nonzero = [r for r in range(n) if not is_zero[r]]
    if len(zero) != n - result.rank:
        raise ArithmeticError("LLL returned a basis of unexpected rank")  # never expected
    kernel_rows = fmpz_matrix(transform_rows[zero])
    kernel_rows = kernel_rows.lll()
    result.kernel = fmpz_to_object(kernel_rows.transpose())
    z0 = [0] * n  # M = 0 (and t = 0, or the span test would have failed): every integer z solves it
    if nonzero:
        lattice_basis = fmpz_matrix(reduced_rows[nonzero])
        coordinates = _coordinates(lattice_basis, rhs)
        if any(v.denominator != 1 for v in coordinates):
            result.integer_feasible = False
            result.lattice_reason = (
                "t is not in the integer lattice spanned by the columns of M: its coordinates in an "
                f"LLL basis of that lattice are not all integers ({_first_fraction(coordinates)})"
            )
            return
        a = flint.fmpz_mat(1, len(nonzero), [int(v) for v in coordinates])
        z0 = [int(v) for v in (a * fmpz_matrix(transform_rows[nonzero])).entries()]
    result.integer_feasible = True
    result.z0 = _toward_box_centre(np.array(z0, dtype=object), kernel_rows, upper)


def known_kernel(kernel_columns: list, z0: list, upper=None) -> Reduction:
    """The reduction of a system whose integer kernel and one integer solution are known.

    For a caller that derives them from a structure shared by many systems
    (:mod:`indexset.theory.shortside`): ``kernel_columns`` must be a basis of
    the whole integer kernel of M and ``z0`` an integer solution of
    ``M z = t``; the lattice engine's "no solution" rests on both. z0 is
    moved near the box's centre, as :func:`reduce_system` leaves it; the
    basis is kept as given (the lattice engine reduces it), so it should
    already be short.

    Parameters
    ----------
    kernel_columns : list of list of int
        The kernel basis, one vector (n entries) per item.
    z0 : list of int
        An integer solution.
    upper : array_like of int, optional
        The box's upper ends (None: the 0/1 box).
    """
    n = len(z0)
    rows = flint.fmpz_mat([[int(v) for v in column] for column in kernel_columns]) if kernel_columns else flint.fmpz_mat(0, n)
    result = Reduction(n, n - len(kernel_columns), True, integer_feasible=True)
    result.kernel = fmpz_to_object(rows.transpose()) if kernel_columns else np.zeros((n, 0), dtype=object)
    z0 = np.array([int(v) for v in z0], dtype=object)
    # Doubles place z0 near the centre while the entries stay far below 2⁵³; past that, the exact step.
    small = not kernel_columns or max(largest_magnitude(result.kernel), largest_magnitude(z0)) < 2**50
    result.z0 = _toward_box_centre_float(z0, result.kernel, upper) if small else _toward_box_centre(z0, rows, upper)
    return result


def _toward_box_centre_float(z0: np.ndarray, kernel: np.ndarray, upper=None) -> np.ndarray:
    """:func:`_toward_box_centre` with the least-squares step in floating point (any integer step keeps z0 a solution).

    ``kernel`` holds the kernel vectors as columns (object ints). The
    rounded coefficients y are exact integers whatever the float error, so
    z0 − K·y is an integer solution; only how near the centre it lands
    depends on the rounding.
    """
    n, k = kernel.shape
    if k == 0:
        return z0
    upper = upper_ends(upper, n)
    shifted = np.array([int(v) - u / 2 for v, u in zip(z0, upper)], dtype=np.float64)
    y = np.rint(np.linalg.lstsq(kernel.astype(np.float64), shifted, rcond=None)[0]).astype(np.int64)
    return z0 - kernel.dot(np.array([int(v) for v in y], dtype=object))


def _toward_box_centre(z0: np.ndarray, kernel_rows: flint.fmpz_mat, upper=None) -> np.ndarray:
    """Move z0 by a kernel vector close to the centre u/2 of the box (``upper``: its upper ends u; None: the 0/1 box).

    z0 − K·round(K⁺(z0 − u/2)) is still an integer solution (K y is in the
    kernel); keeping it near the box makes kernel coordinates small.
    """
    k, n = kernel_rows.nrows(), kernel_rows.ncols()
    if k == 0:
        return z0
    upper = upper_ends(upper, n)
    kq = flint.fmpq_mat(kernel_rows)
    shifted = flint.fmpq_mat(n, 1, [flint.fmpq(2 * int(v) - u, 2) for v, u in zip(z0, upper)])
    y = (kq * kq.transpose()).solve(kq * shifted)
    rounded = flint.fmpz_mat(1, k, [_round(y[j, 0]) for j in range(k)])
    shift = (rounded * kernel_rows).entries()
    return np.array([int(z0[i]) - int(shift[i]) for i in range(n)], dtype=object)


def _round(value: flint.fmpq) -> int:
    """Nearest integer of a rational."""
    return int((2 * int(value.p) + int(value.q)) // (2 * int(value.q)))


def _coordinates(basis_rows: flint.fmpz_mat, rhs: flint.fmpz_mat) -> list[Fraction]:
    """Rational a with ``aᵀ B = tᵀ`` for B of full row rank and t in its row space."""
    q = flint.fmpq_mat(basis_rows)
    a = (q * q.transpose()).solve(q * flint.fmpq_mat(rhs))
    return [row[0] for row in fraction_rows(a)]


def _first_fraction(values) -> str:
    return next(str(v) for v in values if v.denominator != 1)


def algebra_answer(reduction: Reduction, system, min_size: int = 0) -> Result | None:
    """What exact linear algebra alone answers about ``system`` (``engine`` "exact"), or None when a search is needed.

    t outside the column space (with the span certificate), a unique real
    solution (in the box, or not), or no integer solution (t outside the
    lattice of M's columns). ``min_size``: solutions whose values sum to
    less do not count.
    """
    def infeasible(reason: str, certificate: dict) -> Result:
        return Result(INFEASIBLE, reason, certificate=certificate, engine="exact", complete=True, count=0, solutions=[])

    if not reduction.span_feasible:
        rows = [list(r) if isinstance(r, tuple) else r for r in system.rows]
        return infeasible("t is outside the column space of M (certificate y: yᵀM = 0, yᵀt ≠ 0)",
                          {"kind": "span", "y": [str(v) for v in reduction.span_certificate], "rows": rows})
    if reduction.unique_solution is not None:
        z = reduction.unique_solution
        bounds = system.bounds()
        outside = next((i for i, v in enumerate(z) if v.denominator != 1 or not 0 <= v <= bounds[i]), None)
        if outside is None:
            solution = system.solution([int(v) for v in z])
            if system.size(solution) >= min_size:
                return Result(FEASIBLE, "rank M = n: the only real solution lies in the box", index_set=solution, solutions=[solution], count=1,
                              verified=True, engine="exact", complete=True)
        box = "0 or 1" if system.is_binary else f"an integer in [0, {bounds[outside]}]" if outside is not None else ""
        why = f"z*[{outside}] = {z[outside]} is not {box}" if outside is not None else f"its values sum to fewer than {min_size}"
        return infeasible(f"rank M = n = {system.n}, so the real solution z* of M z = t is unique, and {why}",
                          {"kind": "unique_solution", "z_star": [str(v) for v in z]})
    if reduction.integer_feasible is False:
        return infeasible(reduction.lattice_reason, {"kind": "lattice"})
    return None
