"""Deep stacks of residual blocks: the type and its file format.

File format
-----------
One ``.npz`` holds L blocks of the same width n on R^d as arrays with a
leading L axis (read without pickle):

========== ============ =============================================
key        shape        meaning
========== ============ =============================================
W_up       (L, n, d)    up projections
W_down     (L, d, n)    down projections
skip       (L, d, d)    optional skips, each invertible (default I)
b_up       (L, n)       optional up biases
b_down     (L, d)       optional down biases
W_gate     (L, n, d)    gate projections (gated activations only)
activation ()           one activation for every block (default relu)
denominator ()          every weight array holds numerators over it
block      ()           ``residual_free`` for a witness stack
========== ============ =============================================

The stack computes ``x ↦ f_L(… f_1(x))``. Per-layer keys with a suffix
(``W_up_0``, ``W_up_1``, …) are *not* a stack format and are refused with a
clear message, as is any mixture of stacked (3-D) and single-block (2-D)
weight arrays. Other keys are metadata (``planted_S`` of shape (L, k) for
constructed stacks).

How a stack is decided: :mod:`indexset.theory.stacks` and
:func:`indexset.solver.solve`.
"""

from __future__ import annotations

import math
import os
import re
from dataclasses import dataclass, field
from fractions import Fraction

import numpy as np

from indexset.errors import InputError
from indexset.model.instance import RESIDUAL_FREE, WEIGHT_KEYS, Instance, _denominator, _scalar_string, exact_value, read_npz, write_npz

SUFFIX = re.compile(r"^(W_up|W_down|skip|b_up|b_down|W_gate)_(\d+)$")
"""Per-layer suffix keys, refused with an explanation."""

_NDIM = {"W_up": 3, "W_down": 3, "skip": 3, "b_up": 2, "b_down": 2, "W_gate": 3}
_INT64 = 2**63 - 1


def suffix_keys(arrays: dict) -> list[str]:
    """Keys in the refused ``W_up_0`` style."""
    return sorted(key for key in arrays if SUFFIX.match(key))


def is_stack(arrays: dict) -> bool:
    """Whether the arrays use the stacked layout (a 3-D ``W_up``)."""
    return "W_up" in arrays and np.asarray(arrays["W_up"]).ndim == 3


@dataclass(eq=False)
class Stack:
    """L blocks of one width and activation, applied in order.

    Parameters
    ----------
    blocks : list of Instance
        Validated blocks, all of the same n, d and activation, all
        skip-connected or all residual-free.
    metadata : dict
        Extra keys, kept verbatim.
    source : str
        Where the stack came from, for messages.
    """

    blocks: list
    metadata: dict = field(default_factory=dict)
    source: str = "<memory>"

    def __post_init__(self) -> None:
        if not self.blocks:
            raise InputError(self.source, "a stack needs at least one block (L ≥ 1)")
        first = self.blocks[0]
        for index, block in enumerate(self.blocks):
            if (block.n, block.d, block.activation, block.residual_free) != (first.n, first.d, first.activation, first.residual_free):
                raise InputError(self.source, f"block {index} differs from block 0 in width, dimension, activation or kind")

    # ----------------------------------------------------------- shape
    @property
    def L(self) -> int:
        """Number of blocks."""
        return len(self.blocks)

    @property
    def n(self) -> int:
        """Width of every block."""
        return self.blocks[0].n

    @property
    def d(self) -> int:
        """Dimension of every block."""
        return self.blocks[0].d

    @property
    def activation(self) -> str:
        """The activation shared by every block."""
        return self.blocks[0].activation

    @property
    def act(self):
        """The :class:`~indexset.model.activations.Activation` of every block."""
        return self.blocks[0].act

    @property
    def residual_free(self) -> bool:
        """Whether this is a stack of residual-free blocks (a witness stack)."""
        return self.blocks[0].residual_free

    @property
    def planted(self) -> list | None:
        """Planted index sets per block (metadata ``planted_S``, shape (L, k)), if any."""
        value = self.metadata.get("planted_S")
        if value is None:
            return None
        return [[int(i) for i in row] for row in np.asarray(value).reshape(self.L, -1)]

    # ----------------------------------------------------------- files
    @classmethod
    def load(cls, path) -> Stack:
        """Read and validate a stack file (see the module doc)."""
        source = str(path)
        return cls.from_arrays(read_npz(source), source)

    @classmethod
    def from_arrays(cls, arrays: dict, source: str = "<memory>") -> Stack:
        """Build a stack from stacked arrays, refusing suffix keys and mixtures."""
        _refuse_other_layouts(arrays, source)
        L = _layers(arrays, source)
        activation = _scalar_string(arrays, "activation", "relu", source)
        block = _scalar_string(arrays, "block", "", source)
        if block not in ("", RESIDUAL_FREE):
            raise InputError(source, f"block must be {RESIDUAL_FREE!r} when given, got {block!r}")
        denominator = _denominator(arrays, source)
        blocks = [
            Instance(**{key: (arrays[key][layer] if key in arrays else None) for key in WEIGHT_KEYS},
                     activation=activation, denominator=denominator, residual_free=block == RESIDUAL_FREE,
                     source=f"{source} (block {layer})")
            for layer in range(L)
        ]
        metadata = {k: v for k, v in arrays.items() if k not in WEIGHT_KEYS + ("activation", "denominator", "block")}
        return cls(blocks, metadata, source)

    def to_arrays(self) -> dict:
        """Every key this stack writes to its file (one denominator for all blocks)."""
        arrays, denominator = _stacked(self.blocks, self.source)
        arrays["activation"] = np.array(self.activation)
        if denominator != 1:
            arrays["denominator"] = np.array(denominator, dtype=np.int64)
        if self.residual_free:
            arrays["block"] = np.array(RESIDUAL_FREE)
        for key, value in self.metadata.items():
            arrays[key] = np.asarray(value)
        return arrays

    def save(self, path: str | os.PathLike) -> None:
        """Write the stack atomically."""
        write_npz(path, self.to_arrays())


def _refuse_other_layouts(arrays: dict, source: str) -> None:
    suffixed = suffix_keys(arrays)
    if suffixed:
        mixed = " mixed with stacked keys" if "W_up" in arrays else ""
        raise InputError(
            source,
            f"per-layer keys {', '.join(suffixed[:4])}{'…' if len(suffixed) > 4 else ''}{mixed}: a stack file "
            "holds each weight as one array with a leading L axis (W_up of shape (L, n, d), W_down (L, d, n)); "
            "suffix keys are not read",
        )
    for key, ndim in _NDIM.items():
        if key in arrays and np.asarray(arrays[key]).ndim != ndim:
            raise InputError(
                source,
                f"W_up has shape {np.asarray(arrays['W_up']).shape} (3-D: a stack with a leading L axis) but array "
                f"{key} has shape {np.asarray(arrays[key]).shape}; in a stack file {key} is {ndim}-D: stacked "
                "and single-block arrays cannot be mixed",
            )


def _layers(arrays: dict, source: str) -> int:
    for key in ("W_up", "W_down"):
        if key not in arrays:
            raise InputError(source, f"missing required array {key}")
    L = int(np.asarray(arrays["W_up"]).shape[0])
    for key in _NDIM:
        if key in arrays and np.asarray(arrays[key]).shape[0] != L:
            raise InputError(source, f"array {key} has {np.asarray(arrays[key]).shape[0]} layers, W_up has {L}")
    if L == 0:
        raise InputError(source, "a stack needs at least one block (L ≥ 1)")
    return L


def _stacked(blocks: list, source: str) -> tuple[dict, int]:
    """Stack the blocks' arrays exactly under one denominator."""
    keys = [key for key in WEIGHT_KEYS if any(getattr(b, key) is not None for b in blocks)]
    if blocks[0].residual_free:
        keys = [key for key in keys if key != "skip"]
    same = len({b.denominator for b in blocks}) == 1 and all(
        len({getattr(b, key).dtype.kind if getattr(b, key) is not None else None for b in blocks}) == 1 for key in keys
    ) and all(getattr(b, key) is not None for b in blocks for key in keys)
    if same:
        return {key: np.stack([getattr(b, key) for b in blocks]) for key in keys}, blocks[0].denominator
    # Mixed storage: exact values under the least common denominator.
    values = {key: [exact_value(b, key) for b in blocks] for key in keys}
    common = 1
    for arrays in values.values():
        for array in arrays:
            for v in array.ravel():
                common = math.lcm(common, Fraction(v).denominator)
    numerators = {key: np.stack([np.vectorize(lambda v: int(v * common), otypes=[object])(a) for a in arrays])
                  for key, arrays in values.items()}
    if all(abs(int(v)) <= _INT64 for a in numerators.values() for v in a.ravel()):
        return {key: a.astype(np.int64) for key, a in numerators.items()}, common
    if all(Fraction(float(v)) == v for arrays in values.values() for a in arrays for v in a.ravel()):
        return {key: np.stack([a.astype(np.float64) for a in arrays]) for key, arrays in values.items()}, 1
    raise InputError(source, "the blocks' exact values fit neither int64 numerators over one denominator nor float64")
