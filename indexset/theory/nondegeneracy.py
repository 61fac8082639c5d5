"""Nondegeneracy of the weights in the sense of MATH.md §3.

The paper's "iff" needs: d ≥ 2, rows of W_up nonzero and pairwise
non-collinear, columns of W_down nonzero. This module finds every violation
exactly (integer arithmetic); it decides nothing about absorption.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from indexset.model.instance import Instance


@dataclass(frozen=True)
class Degeneracy:
    """Every way the weights fail MATH.md §3's nondegeneracy.

    Attributes
    ----------
    zero_rows : list of int
        Units whose W_up row is zero.
    collinear_classes : list of list of int
        Groups of ≥ 2 units whose W_up rows lie on one line through 0.
    zero_columns : list of int
        Units whose W_down column is zero.
    dimension_one : bool
        d = 1 (every pair of rows is collinear).
    """

    zero_rows: list
    collinear_classes: list
    zero_columns: list
    dimension_one: bool

    @property
    def nondegenerate(self) -> bool:
        """True when the paper's nondegeneracy hypothesis holds."""
        return not (self.zero_rows or self.collinear_classes or self.zero_columns or self.dimension_one)

    def describe(self) -> str:
        """One line naming every violation, or ``nondegenerate``."""
        if self.nondegenerate:
            return "nondegenerate"
        parts = []
        if self.dimension_one:
            parts.append("d = 1")
        if self.zero_rows:
            parts.append(f"zero W_up rows {self.zero_rows}")
        if self.collinear_classes:
            parts.append(f"collinear W_up row classes {self.collinear_classes}")
        if self.zero_columns:
            parts.append(f"zero W_down columns {self.zero_columns}")
        return "degenerate: " + "; ".join(parts)

    def to_json(self) -> dict:
        """JSON-ready dict."""
        return {
            "nondegenerate": self.nondegenerate,
            "zero_rows": self.zero_rows,
            "collinear_classes": self.collinear_classes,
            "zero_columns": self.zero_columns,
            "dimension_one": self.dimension_one,
        }


def direction(row) -> tuple[int, ...] | None:
    """Primitive integer direction of an integer row, sign fixed; None for zero.

    Two nonzero integer rows are collinear iff their directions are equal.
    """
    values = [int(v) for v in row]
    g = 0
    for v in values:
        g = math.gcd(g, v)
    if g == 0:
        return None
    first = next(v for v in values if v != 0)
    g = g if first > 0 else -g
    return tuple(v // g for v in values)


def row_classes(instance: Instance) -> list[list[int]]:
    """Units grouped by the line through 0 their W_up row lies on.

    Zero rows are left out; each class lists its units in increasing order.
    """
    numerators, _ = instance.exact("W_up")
    by_direction: dict[tuple, list[int]] = {}
    for unit in range(instance.n):
        key = direction(numerators[unit])
        if key is not None:
            by_direction.setdefault(key, []).append(unit)
    return sorted(by_direction.values())


SCREEN_FROM = 20_000
"""Arrays with more entries than this are screened in float64 before any exact check."""


def collinear_groups(rows: np.ndarray) -> list[list[int]]:
    """Groups of ≥ 2 nonzero rows that lie on one line through 0 (exact).

    Integer rows, and small arrays, are compared by their primitive integer
    :func:`direction`. Large float rows are screened first by a key, each
    row divided by its first nonzero entry: exactly collinear rows have
    equal exact ratios, hence equal correctly rounded keys, so rows with
    different keys are provably not collinear; rows that share a key are
    then compared exactly.
    """
    from indexset.rational import integer_numerators

    rows = np.asarray(rows)
    live = [int(i) for i in np.flatnonzero(rows.any(axis=1))]
    if rows.dtype.kind != "f" or rows.size <= SCREEN_FROM:
        candidates = [live]
    else:
        values = np.asarray(rows[live], dtype=np.float64)
        pivots = values[np.arange(len(live)), np.argmax(values != 0, axis=1)]
        keys = values / pivots[:, None] + 0.0  # + 0.0 turns −0.0 into +0.0
        screened: dict[bytes, list[int]] = {}
        for unit, key in zip(live, keys):
            screened.setdefault(key.tobytes(), []).append(unit)
        candidates = [members for members in screened.values() if len(members) > 1]
    groups = []
    for members in candidates:
        numerators, _ = integer_numerators(rows[members])
        by_direction: dict[tuple, list[int]] = {}
        for unit, row in zip(members, numerators):
            by_direction.setdefault(direction(row), []).append(unit)
        groups.extend(sorted(group) for group in by_direction.values() if len(group) > 1)
    return sorted(groups)


def find_degeneracy(instance: Instance) -> Degeneracy:
    """Every violation of nondegeneracy (MATH.md §3) in an instance."""
    up, _ = instance.exact("W_up")
    down, _ = instance.exact("W_down")
    zero_rows = [i for i in range(instance.n) if all(int(v) == 0 for v in up[i])]
    zero_columns = [i for i in range(instance.n) if all(int(v) == 0 for v in down[:, i])]
    collinear = [c for c in row_classes(instance) if len(c) > 1]
    return Degeneracy(zero_rows, collinear, zero_columns, instance.d == 1)
