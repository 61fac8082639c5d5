"""The residual-free witness of MATH.md §2, its forward check and its files."""

from __future__ import annotations

import zlib
from fractions import Fraction

import numpy as np
import pytest
from safetensors.numpy import load_file

from indexset.exact.verify import verify
from indexset.exact.witness import (
    FLOAT_TOLERANCE,
    check_forward,
    forward_exact,
    random_points,
    witness,
    witness_values,
)
from indexset.exact.witness_files import save_safetensors
from indexset.model.instance import Instance, exact_value

DECIMALS = np.array([0.1, 0.2, 0.3, -0.7, 1.1, -3.3, 0.5, 0.25, -1.0, 0.0])


def coefficient(activation: str) -> Fraction:
    if activation.startswith("leaky_relu:"):
        return 1 + Fraction(activation.split(":", 1)[1])
    return Fraction(1)


def unimodular(rng, d):
    """Random integer matrix with determinant ±1 and its integer inverse."""
    m = np.eye(d, dtype=np.int64)
    for _ in range(3 * d if d > 1 else 0):
        i, j = rng.choice(d, size=2, replace=False)
        e = np.eye(d, dtype=np.int64)
        e[i, j] = int(rng.integers(-2, 3))
        m = m @ e
    m = m[rng.permutation(d)]
    inverse = np.round(np.linalg.inv(m)).astype(np.int64)
    assert np.array_equal(m @ inverse, np.eye(d, dtype=np.int64))
    return m, inverse


def planted(rng, d, n, activation="relu", *, kind="int", skip=False, biases=True):
    """A block where a random S of size d satisfies c·W_down[:,S]·W_up[S,:] = −A.

    ``kind``: ``int`` (integers, numerators over |c.num| when c ≠ 1),
    ``float`` (dyadic rescaled units, non-representable decoys, dyadic float
    biases) or ``rational`` (integers over a denominator, rational biases).
    """
    c = coefficient(activation)
    U, Uinv = unimodular(rng, d)
    S = sorted(rng.choice(n, size=d, replace=False).tolist())
    rest = [i for i in range(n) if i not in S]
    M = np.eye(d, dtype=np.int64)
    if skip:
        M[0, d - 1] += 2 if d > 1 else 1  # invertible, not the identity
    W_up = rng.integers(-4, 5, size=(n, d))
    W_down = rng.integers(-4, 5, size=(d, n))
    W_up[S] = U
    W_down[:, S] = -c.denominator * (M @ Uinv)
    kw = {"activation": activation, "skip": c.numerator * M if (skip or c != 1) else None}
    if kind == "rational":
        den = int(rng.integers(2, 9))
        W_up = W_up * den
        W_down = W_down * den
        if kw["skip"] is not None:
            kw["skip"] = kw["skip"] * den
        kw["denominator"] = den
    if biases:
        kw["b_up"] = rng.integers(-6, 7, size=n)
        kw["b_down"] = rng.integers(-6, 7, size=d)
    if kind == "float":
        powers = 2.0 ** rng.integers(-5, 6, size=n)
        W_up = W_up * powers[:, None]
        W_down = W_down / powers[None, :]
        W_up[rest] += rng.choice(DECIMALS, size=(len(rest), d))
        W_down[:, rest] += rng.choice(DECIMALS, size=(d, len(rest)))
        if kw["skip"] is not None:
            kw["skip"] = kw["skip"].astype(np.float64)
        if biases:
            # dyadic with few bits: the witness bias stays an exact float64
            kw["b_up"] = rng.integers(-64, 65, size=n) / 16.0
            kw["b_down"] = rng.integers(-64, 65, size=d) / 8.0
    inst = Instance(W_up, W_down, **kw)
    assert verify(inst, S).holds
    return inst, S


def seed_of(*parts) -> int:
    return zlib.crc32("|".join(map(str, parts)).encode())


def holding_sets(activation, kind, trials=6):
    """Seeded (trial, instance, S) with S planted to hold, d = 1–3, skips and biases varied by trial."""
    rng = np.random.default_rng(seed_of(activation, kind))
    for trial in range(trials):
        d = int(rng.integers(1, 4))
        n = d + int(rng.integers(0, 4))
        inst, S = planted(rng, d, n, activation, kind=kind, skip=bool(trial % 2), biases=trial != 0)
        yield trial, inst, S


EXACT_ACTS = ("relu", "leaky_relu:1/3", "leaky_relu:0.2", "leaky_relu:-1/2")
FLOAT_ACTS = ("gelu", "gelu_tanh", "silu", "softplus")


@pytest.mark.parametrize("activation", EXACT_ACTS)
@pytest.mark.parametrize("kind", ["int", "float", "rational"])
def test_witness_exact_forward_for_holding_sets(activation, kind):
    for trial, inst, S in holding_sets(activation, kind):
        block = witness(inst, S)
        assert block.residual_free and block.skip is None
        assert block.activation == inst.activation
        assert block.n == inst.n and block.d == inst.d
        assert "witness_rounded" not in block.metadata
        check = check_forward(inst, block, points=12, seed=trial)
        assert check.exact and check.ok and check.max_error == 0.0 and check.points == 12


@pytest.mark.parametrize("activation", FLOAT_ACTS)
@pytest.mark.parametrize("kind", ["int", "float"])
def test_witness_float_forward_for_holding_sets(activation, kind):
    for trial, inst, S in holding_sets(activation, kind):
        block = witness(inst, S)
        check = check_forward(inst, block, points=20, seed=trial)
        assert not check.exact
        assert check.ok, check.describe()
        assert check.tolerance is not None and check.max_error <= check.tolerance


def test_witness_values_follow_the_formula():
    # MATH.md §2: V_up = D_S W_up, c_up = D_S b_up, V_down = W_down,
    # c_down = b_down + c·W_down[:,S] b_up[S]  (checked here with Fractions)
    rng = np.random.default_rng(11)
    for activation in ("relu", "leaky_relu:1/3", "gelu"):
        inst, S = planted(rng, 2, 5, activation, kind="rational", skip=True)
        c = coefficient(activation)
        up, b_up = exact_value(inst, "W_up"), exact_value(inst, "b_up")
        down, b_down = exact_value(inst, "W_down"), exact_value(inst, "b_down")
        values = witness_values(inst, S)
        block = witness(inst, S)
        for i in range(inst.n):
            sign = -1 if i in S else 1
            for j in range(inst.d):
                assert values["W_up"][i, j] == sign * up[i, j]
                assert exact_value(block, "W_up")[i, j] == sign * up[i, j]
            assert values["b_up"][i] == sign * b_up[i]
        for a in range(inst.d):
            want = b_down[a] + c * sum((down[a, i] * b_up[i] for i in S), Fraction(0))
            assert values["b_down"][a] == want
            assert exact_value(block, "b_down")[a] == want
            for i in range(inst.n):
                assert exact_value(block, "W_down")[a, i] == down[a, i]
        assert list(block.metadata["witness_S"]) == S


def test_f_minus_g_is_residual_times_x_for_any_set():
    """g = f − R·x with R = c·W_down[:,S]W_up[S,:] + A, for every S (exact, relu/leaky)."""
    rng = np.random.default_rng(3)
    for trial in range(20):
        activation = EXACT_ACTS[trial % len(EXACT_ACTS)]
        d = int(rng.integers(1, 4))
        n = int(rng.integers(1, 6))
        den = int(rng.integers(1, 5))
        kw = {
            "b_up": rng.integers(-5, 6, size=n),
            "b_down": rng.integers(-5, 6, size=d),
            "skip": (np.eye(d, dtype=np.int64) * den + np.triu(rng.integers(-2, 3, size=(d, d)), 1)),
            "denominator": den,
        }
        inst = Instance(rng.integers(-4, 5, size=(n, d)), rng.integers(-4, 5, size=(d, n)), activation=activation, **kw)
        S = sorted(rng.choice(n, size=int(rng.integers(0, n + 1)), replace=False).tolist())
        R = verify(inst, S).residual
        xs = random_points(d, 8, seed=trial)
        f = forward_exact(inst, xs)
        g = forward_exact(witness(inst, S), xs)
        for x, fx, gx in zip(xs, f, g):
            for a in range(d):
                assert fx[a] - gx[a] == sum((R[a, b] * x[b] for b in range(d)), Fraction(0))


def test_non_holding_set_fails_the_forward_check():
    rng = np.random.default_rng(21)
    checked = 0
    for trial in range(10):
        d = int(rng.integers(1, 4))
        inst, S = planted(rng, d, d + 2, "relu", kind="int", skip=bool(trial % 2))
        for bad in (S[:-1], sorted(set(S) | {next(i for i in range(inst.n) if i not in S)})):
            if verify(inst, bad).residual_zero:
                continue  # a decoy that happens to cancel: that set holds too
            check = check_forward(inst, witness(inst, bad), seed=trial)
            assert check.exact and not check.ok
            assert "DIFFERENT" in check.describe()
            checked += 1
    assert checked >= 15


def test_non_holding_set_fails_the_float_check():
    rng = np.random.default_rng(22)
    inst, S = planted(rng, 2, 4, "gelu", kind="float", skip=True)
    check = check_forward(inst, witness(inst, S[:1]))
    assert not check.exact and not check.ok and check.max_error > check.tolerance


def test_witness_file_round_trip(tmp_path):
    rng = np.random.default_rng(5)
    cases = [
        ("relu", "int"),
        ("relu", "float"),
        ("leaky_relu:1/3", "int"),
        ("leaky_relu:0.2", "rational"),
        ("gelu", "float"),
        ("softplus", "rational"),
    ]
    for k, (activation, kind) in enumerate(cases):
        inst, S = planted(rng, 2, 5, activation, kind=kind, skip=k % 2 == 1)
        block = witness(inst, S)
        path = tmp_path / f"w{k}.npz"
        block.save(path)
        with np.load(path, allow_pickle=False) as raw:
            keys = set(raw.files)
            assert {"W_up", "W_down", "b_up", "b_down", "activation"} <= keys
            assert "skip" not in keys
            assert str(raw["block"]) == "residual_free"
            assert str(raw["activation"]) == inst.activation
            assert raw["W_up"].shape == (5, 2) and raw["W_down"].shape == (2, 5)
            if block.denominator != 1:
                assert int(raw["denominator"]) == block.denominator
        loaded = Instance.load(path)
        assert loaded.residual_free and loaded.skip is None
        assert loaded.activation == inst.activation
        assert loaded.denominator == block.denominator
        for key in ("W_up", "W_down", "b_up", "b_down"):
            assert getattr(loaded, key).dtype == getattr(block, key).dtype
            assert np.array_equal(getattr(loaded, key), getattr(block, key))
            assert np.array_equal(exact_value(loaded, key), exact_value(block, key))
        assert list(loaded.metadata["witness_S"]) == S
        # the loaded file is itself a residual-free block equal to f
        assert check_forward(inst, loaded, seed=k).ok
        # a residual-free block has no skip to absorb
        from indexset.errors import InputError

        with pytest.raises(InputError):
            verify(loaded, S)


def test_float_witness_stays_float_when_exact():
    rng = np.random.default_rng(8)
    inst, S = planted(rng, 2, 4, "relu", kind="float")
    block = witness(inst, S)
    assert block.W_up.dtype == np.float64 and block.denominator == 1


def test_rounded_witness_is_flagged():
    # Wide-range float biases: c_down = b_down + W_down[:,S]·b_up[S] needs more
    # than 64 bits over a common denominator, so the written witness is rounded
    # to float64 and says so; it then only agrees with f up to rounding.
    rng = np.random.default_rng(4)
    U, Uinv = np.array([[2, 1], [1, 1]]), np.array([[1, -1], [-1, 2]])
    W_up = np.vstack([U * 0.25, rng.normal(size=(2, 2))])
    W_down = np.hstack([-Uinv / 0.25, rng.normal(size=(2, 2))])
    inst = Instance(W_up, W_down, b_up=rng.normal(size=4) * 1e-10, b_down=rng.normal(size=2) * 1e10)
    assert verify(inst, [0, 1]).holds
    block = witness(inst, [0, 1])
    assert bool(block.metadata["witness_rounded"])
    assert block.W_up.dtype == np.float64 and block.denominator == 1
    x = np.array([[float(v) for v in row] for row in random_points(2, 10, 0)])
    from indexset.model.forward import forward_float

    f, g = forward_float(inst, x), forward_float(block, x)
    assert np.abs(f - g).max() <= FLOAT_TOLERANCE * (1 + np.abs(f).max())
    # the forward check knows an exact comparison is impossible and says so
    check = check_forward(inst, block)
    assert check.ok and not check.exact and check.rounded
    assert "rounded" in check.describe() and check.to_json()["rounded"] is True
    # only c_down was rounded: the other arrays are the exact flipped floats
    assert np.array_equal(block.W_up[:2], -W_up[:2]) and np.array_equal(block.W_down, W_down)
    # a wrong S on the same data still fails the float check
    assert not check_forward(inst, witness(inst, [0])).ok


def test_generic_float_biases_witness():
    # Ordinary float64 weights and N(0, 1) biases: the witness usually needs
    # rounding; it must still pass its (float) forward check.
    rng = np.random.default_rng(12)
    U, Uinv = np.array([[2, 1], [1, 1]]), np.array([[1, -1], [-1, 2]])
    rounded = 0
    for trial in range(12):
        W_up = np.vstack([U * 0.25, rng.normal(size=(2, 2))])
        W_down = np.hstack([-Uinv / 0.25, rng.normal(size=(2, 2))])
        scale = 10.0 ** rng.integers(-3, 4)
        inst = Instance(W_up, W_down, b_up=rng.normal(size=4) * scale, b_down=rng.normal(size=2))
        block = witness(inst, [0, 1])
        check = check_forward(inst, block, seed=trial)
        assert check.ok, check.describe()
        assert check.exact == ("witness_rounded" not in block.metadata)
        rounded += check.rounded
    assert rounded >= 1


@pytest.mark.parametrize("activation, kind", [("relu", "int"), ("leaky_relu:1/3", "rational"), ("gelu", "float")])
def test_safetensors_output(tmp_path, activation, kind):
    rng = np.random.default_rng(seed_of("st", activation, kind))
    inst, S = planted(rng, 3, 6, activation, kind=kind, skip=True)
    block = witness(inst, S)
    path = str(tmp_path / "w.safetensors")
    save_safetensors(block, path)
    tensors = load_file(path)
    assert set(tensors) == {"up.weight", "up.bias", "down.weight", "down.bias"}
    assert tensors["up.weight"].shape == (6, 3)
    assert tensors["up.bias"].shape == (6,)
    assert tensors["down.weight"].shape == (3, 6)
    assert tensors["down.bias"].shape == (3,)
    for name, key in (("up.weight", "W_up"), ("up.bias", "b_up"), ("down.weight", "W_down"), ("down.bias", "b_down")):
        assert np.array_equal(tensors[name], block.float_array(key))
    # nn.Linear semantics: y = x·Wᵀ + b, then σ, then the down projection
    x = rng.normal(size=(7, 3))
    act = block.act.forward
    g_torch_style = act(x @ tensors["up.weight"].T + tensors["up.bias"]) @ tensors["down.weight"].T + tensors["down.bias"]
    from indexset.model.forward import forward_float

    f = forward_float(inst, x)
    assert np.allclose(g_torch_style, f, rtol=1e-9, atol=1e-9)
    # metadata: activation and whether the float64 values are exact
    from safetensors import safe_open

    with safe_open(path, framework="numpy") as handle:
        meta = handle.metadata()
    assert meta["activation"] == inst.activation
    assert meta["block"] == "residual_free"
    assert meta["exact_float64"] in ("true", "false")
