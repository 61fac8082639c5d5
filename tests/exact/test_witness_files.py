"""Witness files: the file a user names is the file written, in the format its extension says.

Formats are checked by reading the files with their own readers (numpy's
zip reader, the ``safetensors`` package) and the values against the flip
formula computed here from the instance's Fractions (``reference.py``),
never against an earlier run.
"""

from __future__ import annotations

import zipfile
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest
from reference import fractions
from safetensors import safe_open
from safetensors.numpy import load_file

from indexset.errors import InputError
from indexset.exact.witness import result_witness, witness
from indexset.exact.witness_files import targets, write_block_witness, write_checked_block, write_witness
from indexset.model.instance import Instance
from indexset.solver import solve
from indexset.workflows import construct

SAFETENSORS_KEYS = {"up.weight", "up.bias", "down.weight", "down.bias"}


def is_npz(path) -> bool:
    return zipfile.is_zipfile(path) and all(name.endswith(".npy") for name in zipfile.ZipFile(path).namelist())


def is_safetensors(path) -> bool:
    """A safetensors file starts with the little-endian length of its JSON header, then '{'."""
    data = Path(path).read_bytes()
    size = int.from_bytes(data[:8], "little")
    return 8 + size <= len(data) and data[8:9] == b"{" and not zipfile.is_zipfile(path)


# ------------------------------------------------------------ the naming rule
@pytest.mark.parametrize("name, fmt, expected", [
    ("w.npz", None, {"npz": "w.npz"}),
    ("w.safetensors", None, {"safetensors": "w.safetensors"}),
    ("W.SafeTensors", None, {"safetensors": "W.SafeTensors"}),
    ("w.npz", "npz", {"npz": "w.npz"}),
    ("w.safetensors", "safetensors", {"safetensors": "w.safetensors"}),
    ("w", None, {"npz": "w"}),
    ("w.bin", "safetensors", {"safetensors": "w.bin"}),
    ("w.bin", "npz", {"npz": "w.bin"}),
    ("w.npz", "both", {"npz": "w.npz", "safetensors": "w.safetensors"}),
    ("w.safetensors", "both", {"safetensors": "w.safetensors", "npz": "w.npz"}),
])
def test_the_extension_picks_the_format(name, fmt, expected, tmp_path):
    chosen = targets(str(tmp_path / name), fmt)
    assert chosen == {kind: str(tmp_path / path) for kind, path in expected.items()}
    assert list(chosen) == list(expected)  # the named file comes first


@pytest.mark.parametrize("name, fmt", [
    ("a.npz", "safetensors"),
    ("a.safetensors", "npz"),
    ("a", "both"),
    ("a.bin", "both"),
    ("a.npz", "onnx"),
])
def test_a_contradicting_format_is_bad_input(name, fmt, tmp_path):
    with pytest.raises(InputError) as info:
        targets(str(tmp_path / name), fmt)
    assert info.value.source == "fmt" and "\n" not in str(info.value)


def test_missing_folder_and_folder_targets_are_refused_before_writing(tmp_path):
    with pytest.raises(InputError, match="output folder does not exist"):
        targets(str(tmp_path / "no" / "w.npz"))
    (tmp_path / "w.safetensors").mkdir()
    with pytest.raises(InputError, match="is a folder"):
        targets(str(tmp_path / "w.npz"), "both")


# ------------------------------------------------------------ what is written
def flipped(instance, S):
    """The flip witness (MATH.md §2) from the instance's Fractions: rows of S negated, c_down = b_down + W_down[:,S]·b_up[S]."""
    up, b_up, down, b_down = (fractions(instance, key) for key in ("W_up", "b_up", "W_down", "b_down"))
    sign = np.array([-1 if i in S else 1 for i in range(instance.n)], dtype=object)
    c_down = b_down + down[:, sorted(S)].dot(b_up[sorted(S)])
    return {"W_up": up * sign[:, None], "b_up": b_up * sign, "W_down": down, "b_down": c_down}


@pytest.mark.parametrize("name, fmt", [("w.npz", None), ("w.safetensors", None), ("w.npz", "both"), ("witness", "safetensors"), ("witness", None)])
def test_files_hold_the_flip_witness_in_their_format(name, fmt, tmp_path):
    instance = construct.planted(d=2, n=8, seed=4, biases=True)
    S = instance.planted
    out = tmp_path / name
    report = write_witness(instance, S, str(out), fmt)
    chosen = targets(str(out), fmt)
    assert report["written"] == list(chosen.values()) and report["formats"] == list(chosen)
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(p.rsplit("/", 1)[-1] for p in chosen.values())
    expected = flipped(instance, S)
    for kind, path in chosen.items():
        if kind == "npz":
            assert is_npz(path)
            block = Instance.load(path)
            assert block.residual_free
            for key, values in expected.items():
                assert (fractions(block, key) == values).all(), key
        else:
            assert is_safetensors(path)
            tensors = load_file(path)
            assert set(tensors) == SAFETENSORS_KEYS
            for key, tensor in (("W_up", "up.weight"), ("b_up", "up.bias"), ("W_down", "down.weight"), ("b_down", "down.bias")):
                assert tensors[tensor].dtype == np.float64
                assert [Fraction(float(v)) for v in tensors[tensor].ravel()] == list(expected[key].ravel()), key
            with safe_open(path, framework="numpy") as handle:
                assert handle.metadata()["exact_float64"] == "true"


def test_gated_witness_writes_the_gate(tmp_path):
    """A SwiGLU block that a block with biases absorbs (MATH.md §8.6): the gate must be in both files."""
    instance = construct.gated(activation="swiglu", d=2, n=6, seed=1, pairs=True)
    result = solve(instance)
    assert result.status == "absorbable"
    out = tmp_path / "g.safetensors"
    report = write_block_witness(instance, result, str(out), "both")
    assert report["written"] == [str(out), str(tmp_path / "g.npz")]
    block = Instance.load(tmp_path / "g.npz")
    assert block.act.gated and block.W_gate is not None
    tensors = load_file(out)
    assert set(tensors) == SAFETENSORS_KEYS | {"gate.weight"}
    assert tensors["gate.weight"].shape == (6, 2)
    assert np.array_equal(tensors["gate.weight"], block.float_array("W_gate"))
    # PyTorch semantics, in numpy: down(g(gate(x)) * up(x)) + the down bias equals f on random points
    rng = np.random.default_rng(3)
    x = rng.normal(size=(9, 2))
    act = instance.act
    g = act.forward(x @ tensors["gate.weight"].T, x @ tensors["up.weight"].T + tensors["up.bias"]) @ tensors["down.weight"].T + tensors["down.bias"]
    f_gate, f_value = x @ instance.float_array("W_gate").T, x @ instance.float_array("W_up").T + instance.float_array("b_up")
    f = act.forward(f_gate, f_value) @ instance.float_array("W_down").T + instance.float_array("b_down") + x @ instance.float_array("skip").T
    assert np.allclose(g, f, rtol=1e-9, atol=1e-9)
    assert result_witness(instance, result).W_gate is not None


def test_failed_forward_check_writes_nothing(tmp_path):
    instance = construct.planted(d=2, n=8, seed=4)
    wrong = witness(instance, [0])  # one flipped unit cannot cancel a rank-2 skip
    report = write_checked_block(instance, wrong, str(tmp_path / "w.npz"), "both")
    assert report["written"] is None and not report["forward_check"]["ok"]
    assert list(tmp_path.iterdir()) == []
