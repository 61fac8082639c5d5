"""Planting an index set S in exact integer weights, and the check every planted instance passes.

U_S (the rows of S) is drawn like the decoy rows, conditioned on its rows
generating Z^d; W_S is a short integer solution of ``W_S·U_S = q²·(−A/c)``
(a left inverse reduced modulo the LLL-reduced left kernel of U_S), spread
to the decoys' magnitude by random kernel combinations (:func:`plant`).
"""

from __future__ import annotations

import json
import math
from fractions import Fraction

import flint
import numpy as np

from indexset.errors import InputError
from indexset.exact.verify import verify
from indexset.model.instance import Instance
from indexset.theory.nondegeneracy import direction, find_degeneracy
from indexset.workflows.construct.integers import biases, check_room, decoy_rows, identity, int_array, nonzero_columns, unimodular
from indexset.workflows.construct.skips import Start, fractions, skip_array
from indexset.workflows.construct.spec import ATTEMPTS, dump


def checked(instance: Instance, index_set, tol=None, nondegenerate=True) -> Instance:
    """Refuse to return a planted instance whose S fails the exact verifier."""
    if not verify(instance, index_set, tol=tol).holds:
        raise RuntimeError(f"bug: planted S = {list(index_set)} does not satisfy (★) exactly")
    if nondegenerate and not find_degeneracy(instance).nondegenerate:
        raise RuntimeError(f"bug: planted instance is {find_degeneracy(instance).describe()}")
    return instance


def exact_int(value: Fraction) -> int:
    """``value`` as an int; a fraction here means the denominator rule is broken."""
    if value.denominator != 1:
        raise RuntimeError(f"target {value} is not integral: denominator rule broken")
    return int(value)


def plant(spec, start: Start, params: str) -> Instance:
    """Draw U_S, W_S and decoys; shuffle; verify S exactly.

    Parameters
    ----------
    spec : PlantedSpec or DegenerateSpec
        Its sizes ``d, n, k``, ``range``, ``act`` and ``biases``.
    start : Start
        The generator, the skip and q.
    params : str
        The ``params`` metadata (JSON); ``decoy_down_range`` is added.
    """
    d, n, k, bound = spec.d, spec.n, spec.k, spec.range
    check_room(d, n, bound)
    up_rows, down_block = _planted_block(start, spec)
    down_columns = [list(col) for col in zip(*down_block)]
    mean = sum(abs(v) for col in down_columns for v in col) / (d * k)
    # Decoy down weights get the planted columns' magnitude (uniform in
    # [−R', R'] has mean |x| ≈ R'/2), so size does not give S away.
    down_bound = max(bound, math.ceil(2 * mean))
    rng = start.rng
    taken = {direction(row) for row in up_rows}
    up_rows = up_rows + decoy_rows(rng, n - k, d, bound, taken)
    down_columns = down_columns + nonzero_columns(rng, n - k, d, down_bound)
    order = [int(v) for v in rng.permutation(n)]
    index_set = sorted(position for position, unit in enumerate(order) if unit < k)
    arrays = {
        "W_up": int_array([up_rows[u] for u in order]),
        "W_down": int_array([list(r) for r in zip(*[down_columns[u] for u in order])]),
        "skip": skip_array(start.skip, start.q),
    }
    arrays.update(biases(rng, spec.biases, n, d, bound))
    meta = {**json.loads(params), "decoy_down_range": down_bound}
    instance = Instance(**arrays, activation=spec.act.name, denominator=start.q,
                        metadata={"planted_S": np.array(index_set, dtype=np.int64), "params": dump(meta)},
                        source=f"construct {meta['family']}")
    return checked(instance, index_set, nondegenerate=d >= 2)


def _planted_block(start: Start, spec) -> tuple[list[list[int]], list[list[int]]]:
    """U_S (k × d) and W_S (d × k) with ``W_S·U_S = q²·(−A/c)``."""
    d, k, bound, q = spec.d, spec.k, spec.range, start.q
    values = start.skip if start.skip is not None else fractions(identity(d))
    target = [[exact_int(-q * q * v / spec.act.c) for v in row] for row in values]
    for _ in range(ATTEMPTS):
        drawn = _planted_rows(start.rng, k, d, bound)
        if drawn is None:
            raise InputError("range", f"could not draw {k} non-collinear rows generating Z^{d} in [−{bound}, {bound}]; raise --range")
        up_rows, structure = drawn
        down_block = _down_block(start.rng, structure, target, bound)
        if down_block is not None:
            return up_rows, down_block
    raise RuntimeError("could not draw planted down weights with nonzero columns")


def _rows(matrix) -> list[list[int]]:
    return [[int(matrix[i, j]) for j in range(matrix.ncols())] for i in range(matrix.nrows())]


def _left_structure(U: flint.fmpz_mat):
    """Left inverse and left kernel lattice of U (k × d), or None.

    LLL with transform gives ``T·U = [0; B]`` with T unimodular and B a
    d × d basis of U's row lattice. The rows of U generate Z^d iff
    ``|det B| = 1``; then ``B⁻¹·T[k−d:]`` is an integer left inverse and
    ``T[:k−d]`` an integer basis of ``{y : y·U = 0}`` (LLL-reduced again).
    """
    k, d = U.nrows(), U.ncols()
    reduced, transform = U.lll(transform=True)
    rows, trans = _rows(reduced), _rows(transform)
    if any(any(row) for row in rows[: k - d]) or U.rank() != d:
        return None
    basis = flint.fmpz_mat(rows[k - d:])
    if abs(basis.det()) != 1:
        return None
    # det ±1, so the rational inverse is an integer matrix.
    inverse = flint.fmpz_mat([[int(v.p) for v in row] for row in basis.inv().tolist()])
    left = inverse * flint.fmpz_mat(trans[k - d:])
    kernel = flint.fmpz_mat(trans[: k - d]).lll() if k > d else None
    return left, kernel


def _reduce_mod_lattice(row: list[int], kernel) -> list[int]:
    """A short vector of ``row + lattice`` (Kannan embedding with LLL)."""
    if kernel is None:
        return row
    k = kernel.ncols()
    weight = 1 + sum(abs(v) for v in row) + sum(abs(int(v)) for v in kernel.entries())
    embedded = [r + [0] for r in _rows(kernel)] + [row + [weight]]
    reduced = _rows(flint.fmpz_mat(embedded).lll())
    hits = [r for r in reduced if r[-1] != 0]
    if len(hits) != 1 or abs(hits[0][-1]) != weight:
        return row  # unexpected basis shape: keep the (valid, longer) solution
    sign = 1 if hits[0][-1] > 0 else -1
    return [sign * v for v in hits[0][:k]]


def _planted_rows(rng, k: int, d: int, bound: int) -> tuple[list[list[int]], tuple] | None:
    """U_S with rows like the decoys' that generate Z^d, and its left structure."""
    for _ in range(ATTEMPTS):
        # Drawn exactly like the decoy rows (k > d), so rows do not give S away.
        rows = unimodular(rng, d, bound) if k == d else decoy_rows(rng, k, d, bound, set())
        structure = _left_structure(flint.fmpz_mat(rows))
        if structure is not None:
            return rows, structure
    return None


def _down_block(rng, structure, target: list[list[int]], bound: int) -> list[list[int]] | None:
    """W_S (d × k) with ``W_S·U_S = target``, dense and of the decoys' size.

    The short solution is perturbed by random combinations of the left
    kernel basis, with coefficients in ``[−s, s]`` for spreads s from 1 up
    to about bound/2 (a short kernel needs large coefficients to reach the
    decoys' size). Among the candidates with no zero column, the one with
    the least overshoot above the larger of bound and the short solution's
    largest entry wins, ties broken by the mean |entry| closest to a
    uniform decoy's.
    """
    left, kernel = structure
    base = _rows(flint.fmpz_mat(target) * left)
    short = np.array([_reduce_mod_lattice(row, kernel) for row in base], dtype=object)
    cap = max(bound, int(np.abs(short).max()))
    goal = bound * (bound + 1) / (2 * bound + 1)  # mean |x| for x uniform in [−bound, bound]
    candidates = [short]
    if kernel is not None:
        basis = np.array(_rows(kernel), dtype=object)
        spreads = sorted({1, 2, 3} | {max(1, round(bound * f)) for f in (0.1, 0.2, 0.35, 0.5)})
        for attempt in range(96):
            spread = spreads[attempt % len(spreads)]
            coeffs = rng.integers(-spread, spread + 1, size=(short.shape[0], basis.shape[0])).astype(object)
            candidates.append(short + coeffs.dot(basis))
    best, best_score = None, None
    for block in candidates:
        size = np.abs(block)
        if not size.any(axis=0).all():
            continue
        score = (max(0, int(size.max()) - cap), abs(float(size.sum()) / size.size - goal))
        if best_score is None or score < best_score:
            best, best_score = block, score
    return None if best is None else [[int(v) for v in row] for row in best]
