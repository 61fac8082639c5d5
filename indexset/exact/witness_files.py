"""Writing witness blocks and stacks: checked first, written atomically, both files or none.

A witness is written only after its forward check passes; the file a user
names gets exactly that file.
"""

from __future__ import annotations

import json
import os
from fractions import Fraction

import numpy as np

from indexset.exact.verify import verify
from indexset.exact.witness import check_forward, result_witness, witness, witness_stack
from indexset.model.files import atomic_write
from indexset.model.instance import Instance, exact_value
from indexset.result import Result


def write_witness(instance: Instance, index_set, out: str, fmt: str) -> dict:
    """Build the flip witness of S, forward-check it and write it; return the report.

    An S that holds only within a tolerance has a nonzero exact residual R;
    its witness is checked against ``f(x) − R·x`` (see
    :func:`indexset.exact.witness.check_forward`).
    """
    report = verify(instance, index_set)
    residual = None if report.residual_zero else report.residual.tolist()
    return write_checked_block(instance, witness(instance, index_set), out, fmt, residual)


def write_checked_block(instance: Instance, block: Instance, out: str, fmt: str, residual=None) -> dict:
    """Forward-check a residual-free block against ``instance``, then write it.

    Nothing is written when the check fails; with ``fmt == "safetensors"``
    the ``.safetensors`` file is written beside the ``.npz`` (both or none).
    """
    check = check_forward(instance, block, residual=residual)
    if not check.ok:
        return {"written": None, "forward_check": check.to_json(), "summary": check.describe()}
    block.save(out)
    written = [out]
    if fmt == "safetensors":
        path = out[:-4] + ".safetensors" if out.endswith(".npz") else out + ".safetensors"
        try:
            save_safetensors(block, path)
        except BaseException:
            os.unlink(out)  # no partial output: the .npz goes when the pair cannot be written
            raise
        written.append(path)
    return {"written": written, "forward_check": check.to_json(), "summary": check.describe()}


def write_block_witness(instance: Instance, result: Result, out: str, fmt: str) -> dict:
    """Build, forward-check and write the witness of an absorbable block; return its report."""
    if "witness" not in (result.certificate or {}):
        return write_witness(instance, result.index_set, out, fmt)
    return write_checked_block(instance, result_witness(instance, result), out, fmt)


def write_stack_witness(original, result: Result, out: str) -> dict:
    """Build, forward-check and write the witness stack of an absorbable stack."""
    candidate = witness_stack(original, result.certificate)
    check = check_forward(original, candidate)
    if not check.ok:
        return {"written": None, "forward_check": check.to_json(), "summary": check.describe()}
    candidate.save(out)
    return {"written": [out], "forward_check": check.to_json(), "summary": "whole-stack " + check.describe()}


def save_safetensors(block: Instance, path: str) -> None:
    """Write a residual-free block with PyTorch ``nn.Linear`` names.

    Keys ``up.weight`` (n, d), ``up.bias`` (n,), ``down.weight`` (d, n),
    ``down.bias`` (d,), float64; the activation and whether the values are
    exact go into the safetensors metadata. Written atomically.
    """
    from safetensors.numpy import save

    tensors = {
        "up.weight": block.float_array("W_up"),
        "up.bias": block.float_array("b_up"),
        "down.weight": block.float_array("W_down"),
        "down.bias": block.float_array("b_down"),
    }
    exact = all(
        np.array_equal(exact_value(block, key), np.vectorize(Fraction, otypes=[object])(tensors[name]))
        for key, name in (("W_up", "up.weight"), ("b_up", "up.bias"), ("W_down", "down.weight"), ("b_down", "down.bias"))
    )
    metadata = {"activation": block.activation, "block": "residual_free", "exact_float64": json.dumps(exact)}
    payload = save({k: np.ascontiguousarray(v) for k, v in tensors.items()}, metadata=metadata)
    atomic_write(path, lambda stream: stream.write(payload), ".safetensors")
