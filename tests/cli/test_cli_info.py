"""``indexset info`` on hand-made instances, and ``indexset verify`` exit codes."""

from __future__ import annotations

import json
import re
from fractions import Fraction

import numpy as np
import pytest
from safetensors.numpy import load_file

from indexset.cli.main import main
from indexset.exact.witness import check_forward
from indexset.model.instance import Instance


def run(capsys, argv):
    capsys.readouterr()
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def info_json(capsys, path):
    code, out, err = run(capsys, ["info", "--json", path])
    assert code == 0, err
    assert err == ""
    return json.loads(out)


def save(tmp_path, name, **arrays):
    path = tmp_path / f"{name}.npz"
    np.savez(path, **arrays)
    return str(path)


# ------------------------------------------------------------------- info


def test_info_nondegenerate(tmp_path, capsys):
    path = save(
        tmp_path,
        "nd",
        W_up=np.array([[1, 0], [0, 1], [1, 1], [1, -1]]),
        W_down=np.array([[1, 2, 3, 4], [-1, 0, 1, 5]]),
    )
    info = info_json(capsys, path)
    assert info["n"] == 4 and info["d"] == 2
    assert info["activation"] == "relu"
    assert info["activation_class"] == "odd_linear"
    assert info["odd_coefficient"] == "1"
    assert info["extension"] is False
    assert info["skip"] == "identity"
    assert info["biases"] is False
    assert info["file"] == path
    deg = info["degeneracy"]
    assert deg == {
        "nondegenerate": True,
        "zero_rows": [],
        "collinear_classes": [],
        "zero_columns": [],
        "dimension_one": False,
    }
    assert info["degeneracy_summary"] == "nondegenerate"


def test_info_zero_rows_collinear_and_zero_columns(tmp_path, capsys):
    W_up = np.array(
        [
            [1, 2, 0],  # 0: class A
            [0, 0, 0],  # 1: zero row
            [-2, -4, 0],  # 2: class A (opposite sign, same line)
            [0, 1, 1],  # 3: class B
            [5, 0, 0],  # 4: alone
            [0, 3, 3],  # 5: class B
            [3, 6, 0],  # 6: class A
            [1, 2, 1],  # 7: alone (not on A's line)
        ]
    )
    W_down = np.ones((3, 8), dtype=np.int64)
    W_down[:, 4] = 0
    W_down[:, 7] = 0
    path = save(tmp_path, "deg", W_up=W_up, W_down=W_down)
    deg = info_json(capsys, path)["degeneracy"]
    assert deg["nondegenerate"] is False
    assert deg["zero_rows"] == [1]
    assert deg["collinear_classes"] == [[0, 2, 6], [3, 5]]
    assert deg["zero_columns"] == [4, 7]
    assert deg["dimension_one"] is False


def test_info_collinear_floats_and_rationals(tmp_path, capsys):
    # 0.1 and 0.3 are not exact binary fractions: (0.1, 0.3) and (1, 3) are not
    # exactly collinear in float64, while (0.5, 1.5) and (1, 3) are.
    path = save(
        tmp_path,
        "fl",
        W_up=np.array([[1.0, 3.0], [0.5, 1.5], [0.1, 0.3], [-2.0, -6.0], [1.0, 0.0]]),
        W_down=np.ones((2, 5)),
    )
    deg = info_json(capsys, path)["degeneracy"]
    assert deg["collinear_classes"] == [[0, 1, 3]]
    path = save(
        tmp_path,
        "rat",
        W_up=np.array([[2, 6], [1, 3], [1, 4]]),
        W_down=np.array([[1, 0, 1], [0, 1, 1]]),
        denominator=np.array(7),
    )
    info = info_json(capsys, path)
    assert info["degeneracy"]["collinear_classes"] == [[0, 1]]
    assert info["denominator"] == 7


def test_info_tiny_but_nonzero_is_not_zero(tmp_path, capsys):
    path = save(
        tmp_path,
        "tiny",
        W_up=np.array([[1e-300, 0.0], [0.0, 1.0]]),
        W_down=np.array([[5e-324, 0.0], [0.0, 1.0]]),
    )
    deg = info_json(capsys, path)["degeneracy"]
    assert deg["nondegenerate"] is True


def test_info_dimension_one(tmp_path, capsys):
    path = save(tmp_path, "d1", W_up=np.array([[2], [-1], [0]]), W_down=np.array([[1, 1, 0]]))
    info = info_json(capsys, path)
    assert info["d"] == 1 and info["n"] == 3
    deg = info["degeneracy"]
    assert deg["dimension_one"] is True
    assert deg["nondegenerate"] is False
    assert deg["zero_rows"] == [2]
    assert deg["zero_columns"] == [2]
    assert deg["collinear_classes"] == [[0, 1]]
    assert "d = 1" in info["degeneracy_summary"]
    # a single unit in d = 1 is still degenerate
    path = save(tmp_path, "d1n1", W_up=np.array([[3]]), W_down=np.array([[-1]]))
    deg = info_json(capsys, path)["degeneracy"]
    assert deg["dimension_one"] is True and deg["nondegenerate"] is False and deg["collinear_classes"] == []


@pytest.mark.parametrize(
    "activation, klass, coefficient, extension, gate",
    [
        ("gelu", "odd_linear", "1", False, False),
        ("gelu_tanh", "odd_linear", "1", False, False),
        ("silu", "odd_linear", "1", True, False),
        ("softplus", "odd_linear", "1", True, False),
        ("leaky_relu:1/3", "odd_linear", "4/3", True, False),
        ("leaky_relu:0.2", "odd_linear", "6/5", True, False),
        ("relu2", "homogeneous", None, False, False),
        ("reglu", "homogeneous", None, False, True),
        ("swiglu", "gated", None, False, True),
        ("geglu", "gated", None, False, True),
        ("glu", "uncovered", None, False, True),
    ],
)
def test_info_activation_class(tmp_path, capsys, activation, klass, coefficient, extension, gate):
    arrays = {"W_up": np.eye(2), "W_down": np.eye(2), "activation": np.array(activation)}
    if gate:
        arrays["W_gate"] = np.ones((2, 2))
    info = info_json(capsys, save(tmp_path, "a", **arrays))
    assert info["activation_class"] == klass
    assert info["odd_coefficient"] == coefficient
    assert info["extension"] is extension
    assert info["theorem"]


def test_info_skip_biases_and_metadata(tmp_path, capsys):
    base = {"W_up": np.array([[1, 0], [0, 1]]), "W_down": np.array([[1, 0], [0, 1]])}
    assert info_json(capsys, save(tmp_path, "i", **base, skip=np.eye(2)))["skip"] == "identity"
    # 3·I over denominator 3 is the identity
    assert info_json(capsys, save(tmp_path, "i3", **base, skip=3 * np.eye(2, dtype=int), denominator=np.array(3)))["skip"] == "identity"
    # identity over denominator 3 (no skip key) is the identity too, but an explicit I over 3 is not
    assert info_json(capsys, save(tmp_path, "i3b", **base, denominator=np.array(3)))["skip"] == "identity"
    assert info_json(capsys, save(tmp_path, "s3", **base, skip=np.eye(2, dtype=int), denominator=np.array(3)))["skip"] == "invertible matrix"
    info = info_json(capsys, save(tmp_path, "m", **base, skip=np.array([[0.75, 0.25], [0.25, 0.75]]), b_up=np.array([0, 1]), tag=np.array("x")))
    assert info["skip"] == "invertible matrix"
    assert info["biases"] is True
    assert info["metadata_keys"] == ["tag"]
    info = info_json(capsys, save(tmp_path, "zb", **base, b_up=np.zeros(2), b_down=np.zeros(2)))
    assert info["biases"] is False
    info = info_json(capsys, save(tmp_path, "rf", **base, block=np.array("residual_free")))
    assert info["skip"].startswith("none")


def test_info_text_output(tmp_path, capsys):
    path = save(tmp_path, "t", W_up=np.array([[1, 0], [2, 0], [0, 1]]), W_down=np.ones((2, 3)), activation=np.array("leaky_relu:1/3"))
    code, out, err = run(capsys, ["info", path])
    assert code == 0 and err == ""
    assert "width n = 3" in out and "R^2" in out
    assert "leaky_relu:1/3" in out and "4/3" in out
    assert "collinear" in out


# ----------------------------------------------------------------- verify

U = np.array([[2, 1], [1, 1]])
U_INV = np.array([[1, -1], [-1, 2]])


def planted_file(tmp_path, name="p", activation="relu", **extra):
    """d = 2, n = 5, S = {1, 3} holds: W_down[:,S] = −U⁻¹, W_up[S] = U."""
    W_up = np.array([[1, 2], U[0], [3, -1], U[1], [0, 1]])
    W_down = np.array([[5, -U_INV[0, 0], -2, -U_INV[0, 1], 1], [1, -U_INV[1, 0], 7, -U_INV[1, 1], 0]])
    return save(tmp_path, name, W_up=W_up, W_down=W_down, activation=np.array(activation), **extra)


def test_verify_exit_codes(tmp_path, capsys):
    path = planted_file(tmp_path)
    code, out, err = run(capsys, ["verify", path, "--index-set", "1,3"])
    assert code == 0 and err == "" and "holds" in out
    code, out, err = run(capsys, ["verify", path, "--index-set", "3,1"])
    assert code == 0
    code, out, err = run(capsys, ["verify", path, "--index-set", "1"])
    assert code == 1 and "does not hold" in out and err == ""
    code, out, err = run(capsys, ["verify", path, "--index-set", ""])
    assert code == 1
    code, out, err = run(capsys, ["verify", path, "--index-set", "0,1,2,3,4"])
    assert code == 1


def test_verify_json(tmp_path, capsys):
    path = planted_file(tmp_path)
    code, out, _ = run(capsys, ["verify", path, "--index-set", "1,3", "--json"])
    payload = json.loads(out)
    assert code == 0 and payload["holds"] is True and payload["max_residual"] == "0"
    assert payload["index_set"] == [1, 3] and payload["size_ok"] is True
    code, out, _ = run(capsys, ["verify", path, "--index-set", "1,3,4", "--json"])
    payload = json.loads(out)
    # unit 4 adds W_down[:,4]·W_up[4,:] = [[0, 1], [0, 0]]
    assert code == 1 and payload["holds"] is False and payload["max_residual"] == "1"


def test_verify_tolerance(tmp_path, capsys):
    path = planted_file(tmp_path)
    code, out, _ = run(capsys, ["verify", path, "--index-set", "1,3,4", "--tol", "1", "--json"])
    payload = json.loads(out)
    assert code == 0 and payload["within_tolerance"] is True and payload["tolerance"] == "1"
    code, _, _ = run(capsys, ["verify", path, "--index-set", "1,3,4", "--tol", "0.999"])
    assert code == 1
    # within tolerance but |S| < d is not enough
    code, out, _ = run(capsys, ["verify", path, "--index-set", "4", "--tol", "100", "--json"])
    assert code == 1 and json.loads(out)["size_ok"] is False


@pytest.mark.parametrize("activation", ["relu", "gelu", "leaky_relu:1"])
def test_verify_witness_written_and_loadable(tmp_path, capsys, activation):
    # leaky_relu:1 has c = 2, so W_down[:,S] must be −U⁻¹/2: use denominator 2
    if activation == "leaky_relu:1":
        W_up = np.array([[1, 2], U[0], [3, -1], U[1], [0, 1]]) * 2
        W_down = np.array([[5, -U_INV[0, 0], -2, -U_INV[0, 1], 1], [1, -U_INV[1, 0], 7, -U_INV[1, 1], 0]])
        path = save(tmp_path, "p", W_up=W_up, W_down=W_down, activation=np.array(activation), denominator=np.array(2),
                    b_up=np.array([1, -3, 2, 5, 0]), b_down=np.array([4, -4]))
    else:
        path = planted_file(tmp_path, activation=activation, b_up=np.array([0.5, -1.25, 2.0, 3.0, 0.0]), b_down=np.array([1.0, 0.0]))
    out = tmp_path / "witness.npz"
    code, text, err = run(capsys, ["verify", path, "--index-set", "1,3", "--witness", out])
    assert code == 0, (text, err)
    assert out.exists() and str(out) in text
    block = Instance.load(out)
    original = Instance.load(path)
    assert block.residual_free and block.activation == original.activation and block.n == 5 and block.d == 2
    check = check_forward(original, block, points=32, seed=9)
    assert check.ok
    assert check.exact == (activation != "gelu")
    # the witness itself is a valid instance for info
    code, text, err = run(capsys, ["info", "--json", out])
    assert code == 0 and json.loads(text)["skip"].startswith("none")


def test_verify_witness_safetensors(tmp_path, capsys):
    path = planted_file(tmp_path, b_up=np.array([1, 2, 3, 4, 5]), b_down=np.array([-1, 1]))
    out = tmp_path / "w.npz"
    code, text, err = run(capsys, ["verify", path, "--index-set", "1,3", "--witness", out, "--format", "both", "--json"])
    assert code == 0, err
    payload = json.loads(text)
    st = tmp_path / "w.safetensors"
    assert payload["witness"]["written"] == [str(out), str(st)]
    assert payload["witness"]["forward_check"]["ok"] is True
    tensors = load_file(str(st))
    block = Instance.load(out)
    assert tensors["up.weight"].shape == (5, 2) and tensors["down.weight"].shape == (2, 5)
    assert np.array_equal(tensors["up.weight"], block.float_array("W_up"))
    assert np.array_equal(tensors["down.bias"], block.float_array("b_down"))
    # c_down = b_down + W_down[:,S]·b_up[S] = (−1, 1) + (−1·2 + 1·4, 1·2 − 2·4) = (1, −5)
    assert [Fraction(float(v)) for v in tensors["down.bias"]] == [1, -5]
    assert np.array_equal(tensors["up.bias"], [1, -2, 3, -4, 5])


def test_verify_no_witness_when_set_fails(tmp_path, capsys):
    path = planted_file(tmp_path)
    out = tmp_path / "w.npz"
    code, _text, _ = run(capsys, ["verify", path, "--index-set", "1,3,4", "--witness", out])
    assert code == 1 and not out.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["p.npz"]


def test_verify_witness_for_float_checkpoint_with_biases(tmp_path, capsys):
    # generic float64 biases: the exact witness does not fit int64 over one
    # denominator, so it is written rounded to float64 and checked in float64
    rng = np.random.default_rng(4)
    W_up = np.vstack([U * 0.25, rng.normal(size=(2, 2))])
    W_down = np.hstack([-U_INV / 0.25, rng.normal(size=(2, 2))])
    path = save(tmp_path, "fc", W_up=W_up, W_down=W_down, b_up=rng.normal(size=4), b_down=rng.normal(size=2))
    out = tmp_path / "w.npz"
    code, text, _err = run(capsys, ["verify", path, "--index-set", "0,1", "--witness", out, "--json"])
    payload = json.loads(text)
    assert code == 0, payload
    assert payload["witness"]["forward_check"]["ok"] is True
    block = Instance.load(out)
    assert block.residual_free
    assert payload["witness"]["forward_check"]["rounded"] is True  # this seed needs rounding
    assert bool(block.metadata["witness_rounded"])
    assert check_forward(Instance.load(path), block).ok


def test_verify_residual_beyond_float_range(tmp_path, capsys):
    path = save(tmp_path, "big", W_up=np.array([[1e300]]), W_down=np.array([[1e300]]))
    code, out, err = run(capsys, ["verify", path, "--index-set", "0"])
    assert code == 1 and err == ""
    # beyond the float64 range, the text still shows a decimal close to the exact value
    exact = Fraction(1e300) ** 2 + 1
    shown = re.search(r"≈ (\d)\.(\d+)e\+(\d+)", out)
    mantissa, exponent = Fraction(f"{shown.group(1)}.{shown.group(2)}"), int(shown.group(3))
    assert abs(mantissa * 10**exponent - exact) <= exact / 10**5
    code, out, err = run(capsys, ["verify", path, "--index-set", "0", "--json"])
    payload = json.loads(out)
    assert code == 1 and payload["max_residual_float"] is None
    assert Fraction(payload["max_residual"]) == Fraction(1e300) ** 2 + 1
