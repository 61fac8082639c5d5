"""Instance files: exact round-trips, and every bad input of issue 2 via the CLI."""

from __future__ import annotations

import builtins
import gzip
import io
import os
import zipfile
from fractions import Fraction

import numpy as np
import pytest

from indexset.cli.main import main
from indexset.errors import InputError
from indexset.model.instance import Instance, exact_value

# ------------------------------------------------------------------ round trip


def _same_array(a, b):
    a, b = np.asarray(a), np.asarray(b)
    return a.dtype == b.dtype and a.shape == b.shape and np.array_equal(a, b)


def _round_trip(inst: Instance, path) -> Instance:
    inst.save(path)
    loaded = Instance.load(path)
    for key in ("W_up", "W_down", "skip", "b_up", "b_down", "W_gate"):
        mine, theirs = getattr(inst, key), getattr(loaded, key)
        if mine is None:
            assert theirs is None, key
        else:
            assert _same_array(mine, theirs), key
    for key in ("W_up", "W_down", "skip", "b_up", "b_down"):
        assert np.array_equal(exact_value(inst, key), exact_value(loaded, key)), key
    assert loaded.activation == inst.activation
    assert loaded.act.c == inst.act.c and loaded.act.kind == inst.act.kind
    assert loaded.denominator == inst.denominator
    assert loaded.residual_free == inst.residual_free
    assert set(loaded.metadata) == set(inst.metadata)
    for key, value in inst.metadata.items():
        assert _same_array(loaded.metadata[key], np.asarray(value)), key
    assert loaded.source == str(path)
    return loaded


@pytest.mark.parametrize(
    "dtype", [np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint64, np.float16, np.float32, np.float64]
)
def test_round_trip_dtypes(tmp_path, dtype):
    rng = np.random.default_rng(np.dtype(dtype).num)
    low = 0 if np.dtype(dtype).kind == "u" else -7
    if np.dtype(dtype).kind == "f":
        W_up = rng.normal(size=(5, 3)).astype(dtype)
        W_down = rng.normal(size=(3, 5)).astype(dtype)
        b_up = (rng.normal(size=5) * 0.1).astype(dtype)
    else:
        W_up = rng.integers(low, 8, size=(5, 3)).astype(dtype)
        W_down = rng.integers(low, 8, size=(3, 5)).astype(dtype)
        b_up = rng.integers(low, 8, size=5).astype(dtype)
    skip = (np.eye(3) * 2 + np.triu(np.ones((3, 3)), 1)).astype(dtype)
    inst = Instance(W_up, W_down, skip=skip, b_up=b_up, activation="gelu")
    loaded = _round_trip(inst, tmp_path / "a.npz")
    assert loaded.W_up.dtype == np.dtype(dtype)


def test_round_trip_float_values_exactly(tmp_path):
    values = np.array([[0.1, -0.2], [1e-300, 5e-324], [1e300, -0.0], [np.pi, 2.0 / 3.0]])
    inst = Instance(values, values.T.copy(), b_down=np.array([0.3, 0.7]))
    loaded = _round_trip(inst, tmp_path / "f.npz")
    assert exact_value(loaded, "W_up")[0, 0] == Fraction(0.1)
    assert exact_value(loaded, "W_up")[1, 1] == Fraction(5e-324)
    assert exact_value(loaded, "W_up")[2, 0] == Fraction(1e300)
    assert np.signbit(loaded.W_up[2, 1])


def test_round_trip_rational_denominator_and_metadata(tmp_path):
    rng = np.random.default_rng(1)
    inst = Instance(
        rng.integers(-9, 10, size=(4, 2)),
        rng.integers(-9, 10, size=(2, 4)),
        skip=np.array([[7, 1], [0, 7]]),
        b_up=rng.integers(-9, 10, size=4),
        b_down=rng.integers(-9, 10, size=2),
        activation="leaky_relu:1/3",
        denominator=7,
        metadata={
            "planted_S": np.array([0, 2]),
            "note": np.array("built by hand"),
            "seed": np.array(12345, dtype=np.int64),
            "scales": np.array([0.5, 0.1], dtype=np.float32),
            "file": np.array(1),  # np.savez's own argument name
            "allow_pickle": np.array([True, False]),
        },
    )
    loaded = _round_trip(inst, tmp_path / "r.npz")
    assert loaded.activation == "leaky_relu:1/3"
    assert loaded.act.c == Fraction(4, 3)
    assert loaded.denominator == 7
    assert loaded.planted == [0, 2]
    assert exact_value(loaded, "skip")[0, 0] == 1
    assert exact_value(loaded, "skip")[0, 1] == Fraction(1, 7)
    assert exact_value(loaded, "W_up")[0, 0] == Fraction(int(inst.W_up[0, 0]), 7)
    # the file says exactly this, and nothing was pickled
    with np.load(tmp_path / "r.npz", allow_pickle=False) as raw:
        assert int(raw["denominator"]) == 7
        assert str(raw["activation"]) == "leaky_relu:1/3"
        assert raw["denominator"].dtype.kind == "i"


def test_round_trip_defaults_and_canonical_names(tmp_path):
    inst = Instance(np.array([[1, 2]]), np.array([[3], [4]]), activation="leaky_relu:0.2")
    loaded = _round_trip(inst, tmp_path / "d.npz")
    assert loaded.activation == "leaky_relu:1/5"
    assert loaded.skip is None and loaded.b_up is None and loaded.b_down is None
    assert loaded.identity_skip and not loaded.has_biases
    # a file with only the two required arrays is a ReLU block with identity skip
    np.savez(tmp_path / "min.npz", W_up=np.ones((3, 2)), W_down=np.ones((2, 3)))
    minimal = Instance.load(tmp_path / "min.npz")
    assert minimal.activation == "relu" and minimal.identity_skip and minimal.metadata == {}


@pytest.mark.parametrize("activation", ["swiglu", "geglu", "reglu", "glu"])
def test_round_trip_gated(tmp_path, activation):
    rng = np.random.default_rng(2)
    inst = Instance(
        rng.normal(size=(4, 3)), rng.normal(size=(3, 4)), W_gate=rng.normal(size=(4, 3)), activation=activation
    )
    _round_trip(inst, tmp_path / "g.npz")


def test_round_trip_residual_free(tmp_path):
    inst = Instance(np.eye(2), np.eye(2), residual_free=True, b_down=np.array([1.0, 2.0]))
    loaded = _round_trip(inst, tmp_path / "w.npz")
    assert loaded.residual_free and not loaded.identity_skip


def test_round_trip_bytes_activation(tmp_path):
    np.savez(tmp_path / "b.npz", W_up=np.ones((1, 2)), W_down=np.ones((2, 1)), activation=np.array(b"gelu"))
    assert Instance.load(tmp_path / "b.npz").activation == "gelu"


def test_save_is_atomic_and_refuses_missing_folder(tmp_path):
    inst = Instance(np.eye(2), -np.eye(2))
    with pytest.raises(InputError, match="folder"):
        inst.save(tmp_path / "nope" / "x.npz")
    inst.save(tmp_path / "x.npz")
    assert sorted(os.listdir(tmp_path)) == ["x.npz"]


# ------------------------------------------------------------------ bad input

D, N = 2, 3


def good_arrays(**override):
    arrays = {
        "W_up": np.array([[1, 0], [0, 1], [1, 1]]),
        "W_down": np.array([[-1, 0, 2], [0, -1, 1]]),
    }
    arrays.update(override)
    return {k: v for k, v in arrays.items() if v is not None}


def write(path, **arrays):
    np.savez(path, **arrays)
    return str(path)


def _bad_files(tmp_path):
    """name -> (path, problem substring or None)."""
    t = tmp_path
    files = {}

    def add(name, maker, problem=None):
        files[name] = (maker(t / f"{name}.npz"), problem)

    files["missing"] = (str(t / "does_not_exist.npz"), "no such file")
    os.mkdir(t / "folder.npz")
    files["folder"] = (str(t / "folder.npz"), "folder")

    def text(p):
        p.write_text("W_up = [[1, 0], [0, 1]]\nthis is not an archive\n")
        return str(p)

    add("text", text, "archive")

    def empty(p):
        p.write_bytes(b"")
        return str(p)

    add("empty", empty, "archive")

    def npy(p):
        with open(p, "wb") as stream:
            np.save(stream, np.eye(2))
        return str(p)

    add("npy", npy, "archive")

    def gz(p):
        p.write_bytes(gzip.compress(b"not a zip"))
        return str(p)

    add("gzip", gz, "archive")

    def truncated(p):
        buf = io.BytesIO()
        np.savez(buf, **good_arrays())
        p.write_bytes(buf.getvalue()[: len(buf.getvalue()) // 2])
        return str(p)

    add("truncated", truncated, "archive")

    def corrupt_compressed(p):
        rng = np.random.default_rng(0)
        buf = io.BytesIO()
        np.savez_compressed(buf, W_up=rng.normal(size=(30, 4)), W_down=rng.normal(size=(4, 30)))
        data = bytearray(buf.getvalue())
        # damage the deflate stream of the first member (after its local header)
        start = 30 + len("W_up.npy") + 20
        for k in range(start, start + 40):
            data[k] ^= 0x5A
        p.write_bytes(bytes(data))
        return str(p)

    add("corrupt_compressed", corrupt_compressed, "archive")

    def pickled(p):
        return write(p, W_up=np.array([[1, "a"], [None, 2]], dtype=object), W_down=np.eye(2))

    add("pickled_object", pickled, "pickle")

    def pickled_meta(p):
        return write(p, **good_arrays(), notes=np.array([{"a": 1}], dtype=object))

    add("pickled_metadata", pickled_meta, "pickle")

    def garbage_member(p):
        with zipfile.ZipFile(p, "w") as archive:
            archive.writestr("W_up.npy", b"\x93NUMPY garbage header")
            archive.writestr("W_down.npy", b"\x93NUMPY garbage header")
        return str(p)

    add("garbage_member", garbage_member)

    add("no_W_up", lambda p: write(p, W_down=np.eye(2)), "W_up")
    add("no_W_down", lambda p: write(p, W_up=np.eye(2)), "W_down")
    add("W_up_1d", lambda p: write(p, **good_arrays(W_up=np.array([1, 2, 3]))), "W_up")
    add("W_up_3d", lambda p: write(p, **good_arrays(W_up=np.ones((N, D, 1)))), "W_up")
    add("W_up_scalar", lambda p: write(p, **good_arrays(W_up=np.array(1.0))), "W_up")
    add("W_down_shape", lambda p: write(p, **good_arrays(W_down=np.ones((D, N + 1)))), "W_down")
    add("W_down_transposed", lambda p: write(p, **good_arrays(W_down=np.ones((N, D)))), "W_down")
    add("b_up_shape", lambda p: write(p, **good_arrays(b_up=np.ones(N + 1))), "b_up")
    add("b_up_2d", lambda p: write(p, **good_arrays(b_up=np.ones((N, 1)))), "b_up")
    add("b_down_shape", lambda p: write(p, **good_arrays(b_down=np.ones(N))), "b_down")
    add("skip_shape", lambda p: write(p, **good_arrays(skip=np.eye(D + 1))), "skip")
    add("skip_not_square", lambda p: write(p, **good_arrays(skip=np.ones((D, D + 1)))), "skip")
    add(
        "W_gate_shape",
        lambda p: write(p, **good_arrays(W_gate=np.ones((D, N)), activation=np.array("swiglu"))),
        "W_gate",
    )
    add("string_array", lambda p: write(p, **good_arrays(W_up=np.array([["a", "b"]] * N))), "W_up")
    add("bool_array", lambda p: write(p, **good_arrays(W_up=np.ones((N, D), dtype=bool))), "W_up")
    add("complex_array", lambda p: write(p, **good_arrays(W_up=np.ones((N, D), dtype=complex))), "W_up")
    nan_up = np.ones((N, D))
    nan_up[1, 0] = np.nan
    add("nan_W_up", lambda p: write(p, **good_arrays(W_up=nan_up)), "NaN")
    inf_down = np.ones((D, N))
    inf_down[0, 2] = -np.inf
    add("inf_W_down", lambda p: write(p, **good_arrays(W_down=inf_down)), "Inf")
    add("nan_b_up", lambda p: write(p, **good_arrays(b_up=np.array([0.0, np.nan, 1.0]))), "NaN")
    add("inf_b_down", lambda p: write(p, **good_arrays(b_down=np.array([np.inf, 0.0]))), "Inf")
    add("nan_skip", lambda p: write(p, **good_arrays(skip=np.array([[1.0, np.nan], [0.0, 1.0]]))), "NaN")
    add("nan_float32", lambda p: write(p, **good_arrays(W_up=nan_up.astype(np.float32))), "NaN")
    add("singular_zero_skip", lambda p: write(p, **good_arrays(skip=np.zeros((D, D)))), "singular")
    add("singular_int_skip", lambda p: write(p, **good_arrays(skip=np.array([[2, 4], [1, 2]]))), "singular")
    add(
        "singular_doubly_stochastic",
        lambda p: write(p, **good_arrays(skip=np.full((D, D), 0.5))),
        "singular",
    )
    add("unknown_activation", lambda p: write(p, **good_arrays(activation=np.array("tanh"))), "tanh")
    add("bad_leaky_alpha", lambda p: write(p, **good_arrays(activation=np.array("leaky_relu:abc"))), "abc")
    add("leaky_zero_div", lambda p: write(p, **good_arrays(activation=np.array("leaky_relu:1/0"))), "1/0")
    add("activation_not_string", lambda p: write(p, **good_arrays(activation=np.array(3))), "activation")
    add("activation_bad_bytes", lambda p: write(p, **good_arrays(activation=np.array(b"\xff\xfe"))), "UTF-8")
    add("block_bad_bytes", lambda p: write(p, **good_arrays(block=np.array(b"\xff"))), "UTF-8")
    add("activation_1d", lambda p: write(p, **good_arrays(activation=np.array(["relu", "gelu"]))), "activation")
    for gated in ("swiglu", "geglu", "reglu", "glu"):
        add(f"{gated}_without_gate", lambda p, g=gated: write(p, **good_arrays(activation=np.array(g))), "W_gate")
    add("gate_on_relu", lambda p: write(p, **good_arrays(W_gate=np.ones((N, D)))), "W_gate")
    add("d_zero", lambda p: write(p, W_up=np.zeros((N, 0)), W_down=np.zeros((0, N))), "must be ≥ 1")
    add("n_zero", lambda p: write(p, W_up=np.zeros((0, D)), W_down=np.zeros((D, 0))), "must be ≥ 1")
    add("both_zero", lambda p: write(p, W_up=np.zeros((0, 0)), W_down=np.zeros((0, 0))), None)
    add("denominator_float", lambda p: write(p, **good_arrays(denominator=np.array(2.5))), "denominator")
    add("denominator_float_whole", lambda p: write(p, **good_arrays(denominator=np.array(3.0))), "denominator")
    add("denominator_zero", lambda p: write(p, **good_arrays(denominator=np.array(0))), "denominator")
    add("denominator_negative", lambda p: write(p, **good_arrays(denominator=np.array(-3))), "denominator")
    add("denominator_string", lambda p: write(p, **good_arrays(denominator=np.array("3"))), "denominator")
    add("denominator_vector", lambda p: write(p, **good_arrays(denominator=np.array([2, 3]))), "denominator")
    add("denominator_bool", lambda p: write(p, **good_arrays(denominator=np.array(True))), "denominator")
    add("block_unknown", lambda p: write(p, **good_arrays(block=np.array("weird"))), "block")
    add(
        "residual_free_with_skip",
        lambda p: write(p, **good_arrays(block=np.array("residual_free"), skip=np.eye(D))),
        "skip",
    )
    return files


def _run(capsys, argv):
    capsys.readouterr()
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def _assert_one_line_error(code, out, err, path, problem):
    assert code == 2, (path, out, err)
    assert "Traceback" not in err and "Traceback" not in out
    lines = err.splitlines()
    assert len(lines) == 1, err
    assert err.endswith("\n")
    assert path in lines[0], (path, lines[0])
    if problem is not None:
        after_path = lines[0].split(path, 1)[1]
        assert problem.lower() in after_path.lower(), (problem, lines[0])
    assert out == ""


@pytest.mark.slow
def test_every_bad_file_info_and_verify(tmp_path, capsys):
    files = _bad_files(tmp_path)
    assert len(files) >= 50
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    for name, (path, problem) in sorted(files.items()):
        code, out, err = _run(capsys, ["info", path])
        _assert_one_line_error(code, out, err, path, problem)
        code, out, err = _run(capsys, ["info", "--json", path])
        _assert_one_line_error(code, out, err, path, problem)
        witness = out_dir / f"{name}_witness.npz"
        code, out, err = _run(
            capsys, ["verify", path, "--index-set", "0,1", "--witness", str(witness), "--format", "both"]
        )
        _assert_one_line_error(code, out, err, path, problem)
        code, out, err = _run(capsys, ["verify", path, "--index-set", "0,1", "--json", "--witness", str(witness)])
        _assert_one_line_error(code, out, err, path, problem)
        assert not witness.exists()
    # no partial or temporary output anywhere
    assert os.listdir(out_dir) == []


def test_unreadable_file(tmp_path, capsys, monkeypatch):
    path = tmp_path / "locked.npz"
    np.savez(path, **good_arrays())
    os.chmod(path, 0)
    if os.access(path, os.R_OK):  # running as root: permissions do not stop reads
        real_open = builtins.open

        def locked_open(file, *args, **kwargs):
            if os.fspath(file) == str(path):
                raise PermissionError(13, "Permission denied", str(path))
            return real_open(file, *args, **kwargs)

        monkeypatch.setattr(builtins, "open", locked_open)
    witness = tmp_path / "w.npz"
    try:
        for argv in (["info", str(path)], ["verify", str(path), "--index-set", "0,1", "--witness", str(witness)]):
            code, out, err = _run(capsys, argv)
            _assert_one_line_error(code, out, err, str(path), None)
        assert not witness.exists()
    finally:
        os.chmod(path, 0o644)


@pytest.mark.parametrize(
    "index_set, problem",
    [("3", "out of range"), ("0,1,7", "out of range"), ("=-1", "out of range"), ("1,1", "repeat")],
)
def test_index_out_of_range(tmp_path, capsys, index_set, problem):
    path = write(tmp_path / "ok.npz", **good_arrays())
    witness = tmp_path / "w.npz"
    argv = ["verify", path, "--witness", str(witness)]
    argv += [f"--index-set{index_set}"] if index_set.startswith("=") else ["--index-set", index_set]
    code, out, err = _run(capsys, argv)
    _assert_one_line_error(code, out, err, path, problem)
    assert not witness.exists()
    assert sorted(os.listdir(tmp_path)) == ["ok.npz"]


@pytest.mark.parametrize(
    "argv_tail, source",
    [
        (["--index-set", "0,a"], "--index-set"),
        (["--index-set", "0,1", "--tol", "abc"], "--tol"),
        (["--index-set", "0,1", "--tol", "-1"], "--tol"),
        (["--index-set", "0,1", "--format", "pt"], "format"),
        ([], "index-set"),
    ],
)
def test_bad_options(tmp_path, capsys, argv_tail, source):
    path = write(tmp_path / "ok.npz", **good_arrays())
    witness = tmp_path / "w.npz"
    code, _out, err = _run(capsys, ["verify", path, "--witness", str(witness)] + argv_tail)
    assert code == 2
    assert len(err.splitlines()) == 1 and source in err and "Traceback" not in err
    assert not witness.exists()


def test_witness_into_missing_folder(tmp_path, capsys):
    path = write(tmp_path / "ok.npz", **good_arrays(W_down=np.array([[-1, 0, 0], [0, -1, 0]])))
    out = tmp_path / "no" / "w.npz"
    code, _, err = _run(capsys, ["verify", path, "--index-set", "0,1", "--witness", str(out)])
    assert code == 2 and len(err.splitlines()) == 1 and str(out) in err
    assert not out.exists()


@pytest.mark.parametrize("fmt", ["npz", "safetensors"])
def test_witness_target_is_a_folder(tmp_path, capsys, fmt):
    path = write(tmp_path / "ok.npz", **good_arrays(W_down=np.array([[-1, 0, 0], [0, -1, 0]])))
    if fmt == "npz":
        out = tmp_path / "target"
        out.mkdir()
        bad = out
    else:
        out = tmp_path / "w.npz"
        bad = tmp_path / "w.safetensors"
        bad.mkdir()
    code, _text, err = _run(capsys, ["verify", path, "--index-set", "0,1", "--witness", str(out), "--format", fmt])
    assert code == 2 and len(err.splitlines()) == 1 and str(bad) in err and "Traceback" not in err
    # nothing written: not the .npz half of the pair, no temporary file
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(["ok.npz", bad.name])
    assert list(bad.iterdir()) == []


def test_non_odd_linear_verify_is_bad_input(tmp_path, capsys):
    path = write(tmp_path / "r2.npz", **good_arrays(activation=np.array("relu2")))
    code, out, err = _run(capsys, ["verify", path, "--index-set", "0,1"])
    _assert_one_line_error(code, out, err, path, "relu2")
    # but info describes it
    code, out, err = _run(capsys, ["info", path])
    assert code == 0 and err == ""


def test_python_constructor_errors_name_the_source():
    cases = [
        dict(W_up=np.ones((3, 2)), W_down=np.ones((2, 3)), denominator=2.0),
        dict(W_up=np.ones((3, 2)), W_down=np.ones((2, 3)), denominator=0),
        dict(W_up=np.ones((3, 2)), W_down=np.ones((2, 3)), residual_free=True, skip=np.eye(2)),
        dict(W_up=np.ones((3, 2)), W_down=np.ones((2, 3)), skip=np.ones((2, 2))),
        dict(W_up=np.ones((3, 2), dtype=complex), W_down=np.ones((2, 3))),
        dict(W_up=np.array([[1, None]], dtype=object), W_down=np.ones((2, 1))),
    ]
    for kwargs in cases:
        with pytest.raises(InputError) as info:
            Instance(**kwargs, source="mine.npz")
        assert str(info.value).startswith("mine.npz: ")
        assert "\n" not in str(info.value)


@pytest.mark.parametrize("arrays, message", [
    # W_up transposed: named as W_up, in symbols and numbers
    (dict(W_up=np.ones((2, 8)), W_down=np.ones((2, 8))), "W_up has shape (d, n) = (2, 8), expected (n, d) = (8, 2): transposed?"),
    (dict(W_up=np.ones((2, 8)), W_down=np.ones((2, 8)), b_down=np.ones(2)), "W_up has shape (d, n) = (2, 8), expected (n, d) = (8, 2): transposed?"),
    # W_down transposed
    (dict(W_up=np.ones((8, 2)), W_down=np.ones((8, 2))), "W_down has shape (n, d) = (8, 2), expected (d, n) = (2, 8): transposed?"),
    # the other arrays outvote the n ≥ d tie-break: here d = 8, so W_down is the wrong one
    (dict(W_up=np.ones((2, 8)), W_down=np.ones((2, 8)), skip=np.eye(8)), "W_down has shape (n, d) = (2, 8), expected (d, n) = (8, 2): transposed?"),
    (dict(W_up=np.ones((8, 2)), W_down=np.ones((2, 8)), W_gate=np.ones((2, 8)), activation="swiglu"), "W_gate has shape (d, n) = (2, 8), expected (n, d) = (8, 2): transposed?"),
    (dict(W_up=np.ones((8, 2)), W_down=np.ones((2, 9))), "W_down has shape (2, 9), expected (d, n) = (2, 8) (n = 8, d = 2)"),
    (dict(W_up=np.ones((8, 2)), W_down=np.ones((2, 8)), b_up=np.ones(2)), "b_up has shape (2,), expected (n,) = (8,) (n = 8, d = 2)"),
])
def test_shape_errors_name_the_wrong_array(arrays, message):
    with pytest.raises(InputError) as info:
        Instance(**arrays, source="m.npz")
    assert str(info.value) == f"m.npz: {message}"


def test_transposed_W_up_file_through_the_cli(tmp_path, capsys):
    path = write(tmp_path / "t.npz", W_up=np.ones((2, 5)), W_down=np.ones((2, 5)))
    code, out, err = _run(capsys, ["solve", path])
    _assert_one_line_error(code, out, err, path, "W_up has shape (d, n) = (2, 5), expected (n, d) = (5, 2): transposed?")


def test_a_wide_block_on_a_big_space_is_not_a_transpose():
    """n = 2 units on R^8 is a valid block: consistent shapes are never called transposed."""
    instance = Instance(np.ones((2, 8)), np.ones((8, 2)), skip=np.eye(8))
    assert (instance.n, instance.d) == (2, 8)
