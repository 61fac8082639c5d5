"""The residual-free witness of MATH.md §2 and its forward check.

Given S with c·W_down[:,S]·W_up[S,:] = −A, the block
``g(x) = W_down σ(D_S W_up x + D_S b_up) + b_down + c·W_down[:,S] b_up[S]``
equals ``f`` everywhere (``D_S`` flips the signs of the rows in S).
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from indexset.exact.verify import check_index_set, require_odd_linear
from indexset.model.forward import blocks, forward_exact, forward_float, random_points
from indexset.model.instance import Instance, exact_value

FLOAT_TOLERANCE = 1e-9
"""Relative tolerance of the float64 forward check (times the output scale)."""


def witness_values(instance: Instance, index_set: Iterable[int]) -> dict[str, np.ndarray]:
    """Exact witness arrays (object arrays of Fractions).

    Returns
    -------
    dict
        ``W_up``, ``b_up``, ``W_down``, ``b_down`` of the residual-free block.
    """
    require_odd_linear(instance)
    indices = list(check_index_set(instance, index_set))
    up = exact_value(instance, "W_up")
    b_up = exact_value(instance, "b_up")
    down = exact_value(instance, "W_down")
    b_down = exact_value(instance, "b_down")
    c = instance.act.c
    shift = down[:, indices].dot(b_up[indices]) if indices else np.zeros(instance.d, dtype=object)
    v_up = up.copy()
    c_up = b_up.copy()
    v_up[indices] = -v_up[indices]
    c_up[indices] = -c_up[indices]
    return {"W_up": v_up, "b_up": c_up, "W_down": down.copy(), "b_down": b_down + c * shift}


def witness(instance: Instance, index_set: Iterable[int]) -> Instance:
    """The residual-free block that equals ``instance`` when S satisfies (★).

    The arrays are written exactly: float64 when the input was float and
    every value is a float64, else integer numerators over one common
    denominator when they fit int64. Otherwise float64 values rounded to
    nearest, flagged by the metadata key ``witness_rounded``.

    Parameters
    ----------
    instance : Instance
    index_set : iterable of int

    Returns
    -------
    Instance
        A block with ``residual_free = True``, same activation and width.
    """
    index_set = list(index_set)  # read twice below: an iterator would be empty the second time
    values = witness_values(instance, index_set)
    arrays, denominator, rounded = _represent(values, prefer_float=_has_float(instance))
    metadata = {"witness_of": str(instance.source), "witness_S": np.array(sorted(set(map(int, index_set))), dtype=np.int64)}
    if rounded:
        metadata["witness_rounded"] = np.array(True)
    return Instance(
        **arrays,
        activation=instance.activation,
        denominator=denominator,
        residual_free=True,
        metadata=metadata,
        source=f"witness of {instance.source}",
    )


BLOCK_KEYS = ("W_up", "b_up", "W_down", "b_down", "W_gate")


def block_instance(instance: Instance, values: dict, kind: str, rounded: bool = False) -> Instance:
    """A residual-free :class:`Instance` (same activation and width) from exact arrays.

    Parameters
    ----------
    instance : Instance
        The block the witness is for.
    values : dict
        ``W_up``, ``b_up``, ``W_down``, ``b_down`` (and ``W_gate`` for gated
        activations) as object arrays of Fractions.
    kind : str
        How the witness was built, stored as metadata ``witness_kind``.
    rounded : bool
        The values are known to be rounded (stored as float64, flagged).
    """
    arrays = {key: values[key] for key in BLOCK_KEYS if key in values}
    represented, denominator, rounded_storage = _represent(arrays, prefer_float=rounded or _has_float(instance))
    metadata = {"witness_of": str(instance.source), "witness_kind": np.array(kind)}
    if rounded or rounded_storage:
        metadata["witness_rounded"] = np.array(True)
    return Instance(
        **represented, activation=instance.activation, denominator=denominator,
        residual_free=True, metadata=metadata, source=f"witness of {instance.source}",
    )


def encode_block(values: dict) -> dict:
    """Exact witness arrays as nested lists of strings (for a JSON certificate)."""
    return {key: np.vectorize(str, otypes=[object])(values[key]).tolist() for key in BLOCK_KEYS if key in values}


def decode_block(block: dict) -> dict:
    """The inverse of :func:`encode_block`: object arrays of Fractions."""
    return {key: np.vectorize(Fraction, otypes=[object])(np.array(block[key], dtype=object)) for key in BLOCK_KEYS if key in block}


def _has_float(instance: Instance) -> bool:
    return any(
        getattr(instance, key) is not None and getattr(instance, key).dtype.kind == "f"
        for key in ("W_up", "W_down", "skip", "b_up", "b_down")
    )


def _represent(values: dict, prefer_float: bool) -> tuple[dict, int, bool]:
    """Choose exact float64, exact int64-over-denominator, or rounded float64."""
    everything = [v for array in values.values() for v in array.ravel()]
    if prefer_float and all(Fraction(float(v)) == v for v in everything):
        return {k: a.astype(np.float64) for k, a in values.items()}, 1, False
    den = 1
    for v in everything:
        den = math.lcm(den, Fraction(v).denominator)
    numerators = {k: np.array([int(v * den) for v in a.ravel()], dtype=object).reshape(a.shape) for k, a in values.items()}
    bound = 2**63 - 1
    if all(abs(int(v)) <= bound for a in numerators.values() for v in a.ravel()):
        return {k: a.astype(np.int64) for k, a in numerators.items()}, den, False
    return {k: a.astype(np.float64) for k, a in values.items()}, 1, True


@dataclass(frozen=True)
class ForwardCheck:
    """Outcome of comparing f and g on random points.

    Attributes
    ----------
    ok : bool
        f and g agree on every point (exactly, or within the tolerance).
    exact : bool
        The comparison was in exact rationals.
    points : int
        Number of points evaluated.
    max_error : float
        Largest |f − g| seen (0.0 for an exact pass).
    tolerance : float or None
        The absolute tolerance used by a float check.
    rounded : bool
        The candidate's values were rounded to float64 (metadata
        ``witness_rounded``), so only a float64 check is possible.
    residual : bool
        The comparison was with ``f(x) − R·x`` (an S accepted within a
        tolerance, R its exact residual).
    """

    ok: bool
    exact: bool
    points: int
    max_error: float
    tolerance: float | None
    rounded: bool = False
    residual: bool = False

    def describe(self) -> str:
        """One line for the CLI."""
        against = "f(x) − R·x (R the exact residual, |f − g| ≤ max|R|·‖x‖₁)" if self.residual else "f"
        if self.exact:
            return f"forward check against {against} on {self.points} random rational points: {'equal exactly' if self.ok else 'DIFFERENT'}"
        return (
            f"forward check against {against} on {self.points} random points in float64"
            + (" (witness rounded to float64: no exact rational form fits int64)" if self.rounded else "")
            + f": max |f − g| = {self.max_error:.3g} "
            f"(tolerance {self.tolerance:.3g} = {FLOAT_TOLERANCE:g}·scale): {'pass' if self.ok else 'FAIL'}"
        )

    def to_json(self) -> dict:
        """JSON-ready dict."""
        return {
            "ok": self.ok,
            "exact": self.exact,
            "points": self.points,
            "max_error": self.max_error,
            "tolerance": self.tolerance,
            "rounded": self.rounded,
            "against_residual": self.residual,
        }


def check_forward(original, candidate, points: int = 16, seed: int = 0, residual=None) -> ForwardCheck:
    """Compare two blocks, or two stacks, on random points: exactly where σ maps rationals to rationals.

    A candidate flagged ``witness_rounded`` (its exact values did not fit
    int64 over one denominator, so they were rounded to float64) can never
    match exactly; it gets the float64 check, and the result says so.

    Parameters
    ----------
    original, candidate : Instance or Stack
        The skip-connected block (stack) and its residual-free witness.
    points : int
        Number of random points.
    seed : int
        Seed of the points.
    residual : ndarray of Fraction, shape (d, d), optional
        For an S accepted within a tolerance: the exact residual
        ``R = c·W_down[:,S]·W_up[S,:] + A``. The flip witness then equals
        ``f(x) − R·x`` (MATH.md §2), and that is what is checked, so
        ``|f(x) − g(x)| ≤ max|R|·‖x‖₁`` holds on every point.
    """
    xs = random_points(original.d, points, seed)
    rounded = any(bool(block.metadata.get("witness_rounded", False)) for block in blocks(candidate))
    if original.act.exact_forward and not rounded:
        f = forward_exact(original, xs)
        if residual is not None:
            f = [[fi - sum(residual[i][j] * x[j] for j in range(len(x))) for i, fi in enumerate(row)] for row, x in zip(f, xs)]
        g = forward_exact(candidate, xs)
        return ForwardCheck(f == g, True, points, 0.0 if f == g else float("inf"), None, residual=residual is not None)
    x = np.array([[float(v) for v in row] for row in xs])
    f = forward_float(original, x)
    if residual is not None:
        f = f - x @ np.array(residual, dtype=np.float64).T
    g = forward_float(candidate, x)
    tolerance = FLOAT_TOLERANCE * _float_scale(original, x, f)
    error = float(np.abs(f - g).max())
    return ForwardCheck(error <= tolerance, False, points, error, float(tolerance), rounded, residual is not None)




def _float_scale(model, x: np.ndarray, out: np.ndarray) -> float:
    """Size of the values a float64 pass handles: what its rounding errors are relative to.

    One block: its output and ``|W_down|·(1 + |x|)``. A stack: layer by
    layer, each block's input size times its gain (skip plus
    |W_down|·|W_up|); summed over the blocks this stays far below the O(1)
    relative gap of a wrong witness.
    """
    if not hasattr(model, "blocks"):
        return 1.0 + float(np.abs(out).max()) + float(np.abs(model.float_array("W_down")).sum()) * (1.0 + float(np.abs(x).max()))
    scale = 1.0 + float(np.abs(out).max())
    for block in model.blocks:
        down = np.abs(block.float_array("W_down"))
        up = np.abs(block.float_array("W_up"))
        skip = 0.0 if block.residual_free else float(np.abs(block.float_array("skip")).sum(axis=1).max())
        gain = 1.0 + skip + float((down @ up).sum(axis=1).max())
        scale += (1.0 + float(np.abs(x).max())) * gain + float(down.sum())
        x = forward_float(block, x)
    return scale


def result_witness(instance: Instance, result) -> Instance:
    """The residual-free block behind an ``absorbable`` Result of one block.

    Positives that are not flips (MATH.md §7, §8 constructions) carry their
    witness in ``certificate["witness"]``; every other positive is the flip
    witness of ``result.index_set`` (MATH.md §2).
    """
    certificate = result.certificate or {}
    if "witness" in certificate:
        kind = certificate.get("argument", certificate.get("kind", "witness"))
        return block_instance(instance, decode_block(certificate["witness"]), kind, bool(certificate.get("rounded_constant")))
    return witness(instance, result.index_set)


def witness_stack(stack, certificate: dict):
    """The residual-free witness stack of a block-wise positive (one witness per block)."""
    from indexset.model.stack import Stack
    from indexset.result import Result

    witnesses = []
    for block, record in zip(stack.blocks, certificate["blocks"]):
        result = Result(record["status"], record.get("reason", ""), index_set=record["index_set"], certificate=record.get("certificate"))
        witnesses.append(result_witness(block, result))
    return Stack(witnesses, {"witness_of": np.array(stack.source)}, f"witness of {stack.source}")
