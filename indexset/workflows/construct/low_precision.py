"""The ``low_precision`` family: integer weights in a small range times a scale (ternary at range 1).

Quantized and low-precision blocks have non-generic weights: entries
``scale·z`` with z an integer in ``[−R, R]``, so for small R and d rows
repeat, point along one line, or vanish. A planted S is built from the
units of (★) in the same range; the degeneracy of the weights is left as
drawn, or asked for.

Planting. With identity skip, (★) reads ``c·scale²·V_S·U_S = −I`` for the
integer parts U (up) and V (down), so ``V_S·U_S = t·I`` with
``t = −1/(c·scale²)``, which must be an integer (for ReLU: scale = 1/m,
t = −m²). Each column ``t·e_b`` is split into J_b nonzero pieces w with
entries in ``[−R, R]`` (J_b ≥ ⌈|t|/R⌉), and each piece becomes either

- a *pair* of units: rows r and r − e_b, down columns w and −w, since
  ``w·rᵀ − w·(r − e_b)ᵀ = w·e_bᵀ``; r is drawn uniformly from the rows
  of ``[−R, R]^d`` off the line of e_b whose partner r − e_b is in range;
- or a *single* unit: row ±e_b, down column ±w (at most one per
  coordinate b, so singles never share a line).

Summing the pieces gives ``V_S·U_S = Σ_b t·e_b·e_bᵀ = t·I`` exactly, and
every entry stays in ``[−R, R]``. With P pieces and k units, ``k − P``
are pairs and ``2P − k`` singles; P is the smallest count with
``P ≥ d·J`` and ``2P − k ≤ d``, so k can be any size from ``d·(2J − 1)``
up to n. The pieces' extra count above ``d·J`` goes to random coordinates,
and S is shuffled among decoy units.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction

import numpy as np

from indexset.errors import InputError
from indexset.model.instance import Instance
from indexset.rational import parse_fraction
from indexset.theory.nondegeneracy import direction, find_degeneracy
from indexset.workflows.construct.integers import check_room, decoy_rows, int_array, nonzero_columns, random_nonzero, random_row
from indexset.workflows.construct.planting import checked
from indexset.workflows.construct.spec import ATTEMPTS, LIMITS, Spec, check_choice, check_int, check_sizes, odd_linear, params

DEGENERACY = ("any", "nondegenerate", "collinear", "zero_row", "zero_column")
"""What the ``degeneracy`` option may ask for."""

ALTERED = ("collinear", "zero_row", "zero_column")
"""The degeneracies made by altering one unit outside S."""

_ROW_DRAWS = 100_000
"""Draws of one pair row before the range is declared too small for fresh lines."""


@dataclass(frozen=True)
class LowPrecisionSpec(Spec):
    """Options of the ``low_precision`` family.

    Parameters
    ----------
    d, n : int
        Dimension (≥ 2) and width.
    k : int, optional
        Size of the planted S: from ``d·(2J − 1)`` (J = ⌈|t|/range⌉, see
        the module docstring; d for scale 1 and ReLU) to n; default the
        larger of that and ``n // 2``. Unplanted instances have none.
    range : int
        Integer parts in ``[−range, range]``; 1 gives ternary weights {−1, 0, 1}.
    scale : str
        Positive rational (``"1/4"``, ``"0.5"``, ``"1"``): every weight is
        an integer part times it, stored exactly as numerators over its
        denominator. A planted S needs ``1/(c·scale²)`` to be an integer.
    plant : bool
        Plant S (a positive); ``False`` draws every unit uniformly (whether
        such a block absorbs is left to the solver).
    degeneracy : {"any", "nondegenerate", "collinear", "zero_row", "zero_column"}
        ``any``: every unit outside S is uniform in the range, zero rows and
        collinear rows as they fall. ``nondegenerate``: every row is
        redrawn until it is nonzero and on a line through 0 that no earlier
        row (planted or not) is on, every down column until it is nonzero,
        so MATH.md §3's nondegeneracy holds (refused when [−range, range]^d
        has fewer than n lines). ``collinear``, ``zero_row``,
        ``zero_column``: drawn as ``any``, then one unit outside S is given
        a multiple of another unit's row, a zero row, or a zero down
        column, so at least that degeneracy is present (needs n > k).
    seed : int
        Seed of ``numpy.random.default_rng``.
    activation : str
        Any odd-linear activation (``relu``, ``gelu``, ``leaky_relu:1/2``, ...).
    """

    family = "low_precision"
    d: int = 2
    n: int = 16
    k: int | None = None
    range: int = 1
    scale: str = "1"
    plant: bool = True
    degeneracy: str = "any"
    seed: int = 0
    activation: str = "relu"
    act: object = field(default=None, init=False, repr=False, compare=False)
    step: Fraction = field(default=None, init=False, repr=False, compare=False)
    target: int | None = field(default=None, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        check_sizes(self.d, self.n, self.seed, min_d=2, bound=self.range)
        check_choice("degeneracy", self.degeneracy, DEGENERACY)
        self._set(act=odd_linear(self.activation), step=_scale(self.scale), plant=bool(self.plant))
        if self.plant:
            self._set(target=self._target())
            self._set(k=self._size())
        elif self.k is not None:
            raise InputError("k", "an unplanted instance has no k")
        if self.degeneracy in ALTERED and self.n <= (self.k or 1):
            raise InputError("n", f"degeneracy {self.degeneracy} alters a unit outside S: need n > {self.k or 1}, got n = {self.n}")
        if self.degeneracy == "nondegenerate":
            check_room(self.d, self.n, self.range)

    def _target(self) -> int:
        """t = −1/(c·scale²), the diagonal of V_S·U_S."""
        t = -1 / (self.act.c * self.step**2)
        if t.denominator != 1:
            raise InputError("scale", f"a planted S needs 1/(c·scale²) to be an integer; c = {self.act.c}, scale = {self.step} give {-t}")
        return int(t)

    def pieces(self) -> int:
        """J: the fewest pieces in [−range, range]^d that sum to t·e_b."""
        return -(-abs(self.target) // self.range)

    def _size(self) -> int:
        """|S|, checked against the fewest units the construction needs."""
        smallest = self.d * (2 * self.pieces() - 1)
        if smallest > self.n:
            raise InputError("n", f"a planted S of integer parts in [−{self.range}, {self.range}] with scale {self.step} needs at least {smallest} units, got n = {self.n}")
        if self.k is None:
            return max(smallest, self.n // 2)
        check_int("k", self.k, 1)
        if not smallest <= self.k <= self.n:
            raise InputError("k", f"k = {self.k} must lie in [{smallest}, n = {self.n}] (the fewest units of S here is {smallest})")
        return self.k


def _scale(text) -> Fraction:
    value = parse_fraction(str(text), "scale")
    if value <= 0:
        raise InputError("scale", f"scale must be a positive rational, got {text!r}")
    if max(value.numerator, value.denominator) > LIMITS["denominator"]:
        raise InputError("scale", f"numerator and denominator of the scale must be ≤ {LIMITS['denominator']}, got {value}")
    return value


def low_precision(**options) -> Instance:
    """Integer weights in ``[−range, range]`` times ``scale``, S planted or not; options: :class:`LowPrecisionSpec`.

    The planted S is built as the module docstring says and checked by the
    exact verifier before the instance is returned.

    Returns
    -------
    Instance
        Identity skip, weights ``scale·z`` stored as numerators over the
        scale's denominator; metadata ``params``, ``degeneracy`` (the
        description of :func:`indexset.theory.nondegeneracy.find_degeneracy`)
        and, when planted, ``planted_S``.
    """
    return make_low_precision(LowPrecisionSpec.of(options))


def make_low_precision(spec: LowPrecisionSpec) -> Instance:
    """The ``low_precision`` instance of a validated spec."""
    rng = np.random.default_rng(spec.seed)
    taken = set() if spec.degeneracy == "nondegenerate" else None  # the lines in use, when rows must avoid them
    planted = _planted_units(rng, spec, taken) if spec.plant else []
    units = planted + _decoy_units(rng, spec, spec.n - len(planted), taken)
    order = [int(v) for v in rng.permutation(spec.n)]
    index_set = sorted(position for position, unit in enumerate(order) if unit < len(planted))
    rows = [units[u][0] for u in order]
    columns = [units[u][1] for u in order]
    if spec.degeneracy in ALTERED:
        _alter(rng, spec, rows, columns, index_set)
    return _instance(spec, rows, columns, index_set)


def _planted_units(rng, spec: LowPrecisionSpec, taken: set | None) -> list:
    """The k units of S as (row, down column) pairs, ``Σ column·rowᵀ = t·I``."""
    d, k = spec.d, spec.k
    count = max(d * spec.pieces(), -(-k // 2))
    singles = {int(b) for b in rng.choice(d, size=2 * count - k, replace=False)}
    per_column = [spec.pieces()] * d
    for _ in range(count - d * spec.pieces()):
        per_column[int(rng.integers(d))] += 1
    if taken is not None:
        taken.update(direction(_unit(d, b)) for b in singles)
    units = []
    for b in range(d):
        target = [spec.target * int(a == b) for a in range(d)]
        for j, piece in enumerate(_split(rng, target, per_column[b], spec.range)):
            if j == 0 and b in singles:
                sign = int(rng.choice([-1, 1]))
                units.append(([sign * v for v in _unit(d, b)], [sign * v for v in piece]))
            else:
                row = _pair_row(rng, spec, b, taken)
                partner = [v - e for v, e in zip(row, _unit(d, b))]
                units += [(row, piece), (partner, [-v for v in piece])]
    return units


def _unit(d: int, b: int) -> list[int]:
    return [int(a == b) for a in range(d)]


def _split(rng, target: list[int], count: int, bound: int) -> list[list[int]]:
    """``count`` nonzero vectors in [−bound, bound]^d summing to ``target`` (|target| ≤ count·bound)."""
    for _ in range(ATTEMPTS):
        parts = [_split_integer(rng, value, count, bound) for value in target]
        pieces = [[part[j] for part in parts] for j in range(count)]
        if all(any(piece) for piece in pieces):
            return pieces
    raise RuntimeError(f"could not split {target} into {count} nonzero pieces in [−{bound}, {bound}]")


def _split_integer(rng, value: int, count: int, bound: int) -> list[int]:
    """``count`` integers in [−bound, bound] summing to ``value``: uniform ones, moved a step at a time until they do."""
    parts = [int(v) for v in rng.integers(-bound, bound + 1, size=count)]
    while sum(parts) != value:
        step = 1 if sum(parts) < value else -1
        room = [j for j, v in enumerate(parts) if abs(v + step) <= bound]
        parts[int(rng.choice(room))] += step
    return parts


def _pair_row(rng, spec: LowPrecisionSpec, b: int, taken: set | None) -> list[int]:
    """A row r off the line of e_b with r − e_b in range (and both on fresh lines when ``taken`` is given)."""
    d, bound = spec.d, spec.range
    for _ in range(_ROW_DRAWS):
        row = random_row(rng, d, bound)
        if row[b] == -bound or not any(v for a, v in enumerate(row) if a != b):
            continue
        partner = [v - int(a == b) for a, v in enumerate(row)]
        lines = {direction(row), direction(partner)}
        if taken is None:
            return row
        if not lines & taken:
            taken.update(lines)
            return row
    raise InputError("range", f"could not draw pairwise non-collinear planted rows in [−{bound}, {bound}]^{d}; raise --range or lower --n")


def _decoy_units(rng, spec: LowPrecisionSpec, count: int, taken: set | None) -> list:
    """Units outside S: uniform in the range, or nonzero on fresh lines when ``taken`` is given."""
    d, bound = spec.d, spec.range
    if taken is None:
        rows = [random_row(rng, d, bound) for _ in range(count)]
        columns = [random_row(rng, d, bound) for _ in range(count)]
    else:
        rows = decoy_rows(rng, count, d, bound, taken)
        columns = nonzero_columns(rng, count, d, bound)
    return list(zip(rows, columns))


def _alter(rng, spec: LowPrecisionSpec, rows: list, columns: list, index_set: list) -> None:
    """Give one unit outside S the requested degeneracy (in place)."""
    n, d, bound = spec.n, spec.d, spec.range
    j = int(rng.choice([u for u in range(n) if u not in index_set]))
    if spec.degeneracy == "zero_row":
        rows[j] = [0] * d
        return
    if spec.degeneracy == "zero_column":
        columns[j] = [0] * d
        return
    others = [u for u in range(n) if u != j and any(rows[u])]
    if not others:  # unplanted, every other row zero: give one a direction
        others = [int(rng.choice([u for u in range(n) if u != j]))]
        rows[others[0]] = random_nonzero(rng, d, bound)
    i = int(rng.choice(others))
    largest = max(abs(v) for v in rows[i])
    multiple = int(rng.choice([m for m in range(-bound, bound + 1) if m and abs(m) * largest <= bound]))
    rows[j] = [multiple * v for v in rows[i]]


def _instance(spec: LowPrecisionSpec, rows: list, columns: list, index_set: list) -> Instance:
    """Store ``scale·z`` exactly, describe the degeneracy, check what was asked for."""
    top, q = spec.step.numerator, spec.step.denominator
    meta = params("low_precision", spec.seed, d=spec.d, n=spec.n, k=spec.k, range=spec.range, scale=str(spec.step),
                  plant=spec.plant, degeneracy=spec.degeneracy, activation=spec.act.name)
    metadata = {"params": meta}
    if spec.plant:
        metadata["planted_S"] = np.array(index_set, dtype=np.int64)
    instance = Instance(int_array([[top * v for v in row] for row in rows]),
                        int_array([[top * column[a] for column in columns] for a in range(spec.d)]),
                        activation=spec.act.name, denominator=q, metadata=metadata, source="construct low_precision")
    found = find_degeneracy(instance)
    instance.metadata["degeneracy"] = found.describe()
    if not _has(found, spec.degeneracy):
        raise RuntimeError(f"bug: asked for {spec.degeneracy}, got {found.describe()}")
    if spec.plant:
        checked(instance, index_set, nondegenerate=False)
    return instance


def _has(found, degeneracy: str) -> bool:
    """The weights show what ``degeneracy`` asked for."""
    present = {"any": True, "nondegenerate": found.nondegenerate, "collinear": bool(found.collinear_classes),
               "zero_row": bool(found.zero_rows), "zero_column": bool(found.zero_columns)}
    return present[degeneracy]
