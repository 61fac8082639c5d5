"""Writing witness blocks and stacks: checked first, written atomically, every file or none.

A witness is written only after its forward check passes. The file a user
names is the file written, in the format its name says (:func:`targets`):
``.npz`` is the instance format (exact values), ``.safetensors`` the PyTorch
``nn.Linear`` names (float64).
"""

from __future__ import annotations

import json
import os
from fractions import Fraction

import numpy as np

from indexset.errors import InputError
from indexset.exact.verify import verify
from indexset.exact.witness import check_forward, result_witness, witness, witness_stack
from indexset.model.files import atomic_write
from indexset.model.instance import Instance, exact_value
from indexset.result import Result

FORMATS = ("npz", "safetensors")
"""The formats a witness block can be written in."""

BOTH = "both"
"""``fmt`` value asking for the ``.npz`` and the ``.safetensors`` file of one name."""

EXTENSIONS = {".npz": "npz", ".safetensors": "safetensors"}
"""File-name extension → the format it means (compared case-insensitively)."""


def targets(out: str, fmt: str | None = None) -> dict[str, str]:
    """The files a witness request writes: format → path, the named file first.

    The extension of ``out`` decides its format (``.npz``, ``.safetensors``);
    ``fmt`` is needed only for a name with neither extension (default npz,
    written under exactly that name), or is ``"both"`` to write the other
    format beside it under the same stem.

    Parameters
    ----------
    out : str
        The file name the user gave.
    fmt : {None, "npz", "safetensors", "both"}
        The format asked for, if any.

    Returns
    -------
    dict
        ``{"npz": path}``, ``{"safetensors": path}`` or both entries.

    Raises
    ------
    InputError
        ``fmt`` unknown, ``fmt`` contradicting the extension of ``out``,
        ``"both"`` for a name without a known extension, or an output
        folder that does not exist or a target that is a folder (source
        ``out``).
    """
    out = os.fspath(out)
    stem, extension = os.path.splitext(out)
    named = EXTENSIONS.get(extension.lower())
    if fmt is not None and fmt not in FORMATS + (BOTH,):
        raise InputError("fmt", f"unknown witness format {fmt!r}; choose from {', '.join(FORMATS + (BOTH,))}")
    if fmt == BOTH:
        if named is None:
            raise InputError("fmt", f"both needs a witness name ending in .npz or .safetensors (the other file takes the other extension), got {out!r}")
        other = "safetensors" if named == "npz" else "npz"
        chosen = {named: out, other: f"{stem}.{other}"}
    elif named is not None and fmt is not None and fmt != named:
        raise InputError("fmt", f"{fmt} contradicts the witness name {out!r}, whose extension {extension} means {named}: "
                                f"name the file {stem}.{fmt}, leave the format out, or ask for both")
    else:
        chosen = {named or fmt or "npz": out}
    for path in chosen.values():
        folder = os.path.dirname(os.path.abspath(path))
        if not os.path.isdir(folder):
            raise InputError(path, "output folder does not exist")
        if os.path.isdir(path):
            raise InputError(path, "is a folder, expected an output file name")
    return chosen


def write_witness(instance: Instance, index_set, out: str, fmt: str | None = None) -> dict:
    """Build the flip witness of S, forward-check it and write it; return the report.

    An S that holds only within a tolerance has a nonzero exact residual R;
    its witness is checked against ``f(x) − R·x`` (see
    :func:`indexset.exact.witness.check_forward`).
    """
    report = verify(instance, index_set)
    residual = None if report.residual_zero else report.residual.tolist()
    return write_checked_block(instance, witness(instance, index_set), out, fmt, residual)


def write_checked_block(instance: Instance, block: Instance, out: str, fmt: str | None = None, residual=None) -> dict:
    """Forward-check a residual-free block against ``instance``, then write it.

    Nothing is written when the check fails. The files are those of
    :func:`targets`; with two of them, both are written or neither (the
    first is removed when the second cannot be written).

    Returns
    -------
    dict
        ``written`` (the paths, None when the check failed), ``formats``
        (their formats), ``forward_check`` and ``summary``.
    """
    chosen = targets(out, fmt)
    check = check_forward(instance, block, residual=residual)
    if not check.ok:
        return {"written": None, "formats": None, "forward_check": check.to_json(), "summary": check.describe()}
    written = []
    try:
        for kind, path in chosen.items():
            if kind == "npz":
                block.save(path)
            else:
                save_safetensors(block, path)
            written.append(path)
    except BaseException:
        for path in written:
            os.unlink(path)
        raise
    return {"written": written, "formats": list(chosen), "forward_check": check.to_json(), "summary": check.describe()}


def write_block_witness(instance: Instance, result: Result, out: str, fmt: str | None = None) -> dict:
    """Build, forward-check and write the witness of an absorbable block; return its report."""
    if "witness" not in (result.certificate or {}):
        return write_witness(instance, result.index_set, out, fmt)
    return write_checked_block(instance, result_witness(instance, result), out, fmt)


def write_stack_witness(original, result: Result, out: str) -> dict:
    """Build, forward-check and write the witness stack of an absorbable stack (an ``.npz`` stack file)."""
    candidate = witness_stack(original, result.certificate)
    check = check_forward(original, candidate)
    if not check.ok:
        return {"written": None, "formats": None, "forward_check": check.to_json(), "summary": check.describe()}
    candidate.save(out)
    return {"written": [out], "formats": ["npz"], "forward_check": check.to_json(), "summary": "whole-stack " + check.describe()}


SAFETENSORS_NAMES = {"W_up": "up.weight", "b_up": "up.bias", "W_down": "down.weight", "b_down": "down.bias", "W_gate": "gate.weight"}
"""Instance array → its safetensors name (PyTorch ``nn.Linear`` layers ``up``, ``down``, ``gate``)."""


def save_safetensors(block: Instance, path: str) -> None:
    """Write a residual-free block with PyTorch ``nn.Linear`` names.

    Keys ``up.weight`` (n, d), ``up.bias`` (n,), ``down.weight`` (d, n),
    ``down.bias`` (d,), and for gated activations ``gate.weight`` (n, d)
    (the gate has no bias: ``down(g(gate(x)) * up(x))``), all float64; the
    activation and whether the float64 values are exact go into the
    safetensors metadata. Written atomically.
    """
    from safetensors.numpy import save

    keys = [key for key in SAFETENSORS_NAMES if key != "W_gate" or block.act.gated]
    tensors = {SAFETENSORS_NAMES[key]: block.float_array(key) for key in keys}
    exact = all(
        np.array_equal(exact_value(block, key), np.vectorize(Fraction, otypes=[object])(tensors[SAFETENSORS_NAMES[key]]))
        for key in keys
    )
    metadata = {"activation": block.activation, "block": "residual_free", "exact_float64": json.dumps(exact)}
    payload = save({k: np.ascontiguousarray(v) for k, v in tensors.items()}, metadata=metadata)
    atomic_write(path, lambda stream: stream.write(payload), ".safetensors")
