"""The exact verifier against an independent reference in ``fractions.Fraction``.

The reference below uses only Python's Fraction: no flint, no numpy
arithmetic on values. Float64 entries are taken at their exact binary value
with ``Fraction(float)``; integer entries are over the file's denominator.
"""

from __future__ import annotations

import itertools
import zlib
from fractions import Fraction

import numpy as np
import pytest
from reference import determinant  # Fractions only, independent of flint

from indexset.errors import InputError
from indexset.exact.verify import failing_index_sets, verify
from indexset.model.instance import Instance

# ------------------------------------------------------------------ reference


def frac_matrix(array, denominator=1):
    """Exact entries of a 1-D or 2-D numpy array as nested lists of Fractions."""
    array = np.asarray(array)

    def one(value):
        if array.dtype.kind == "f":
            return Fraction(float(value)) / denominator
        return Fraction(int(value), denominator)

    if array.ndim == 1:
        return [one(v) for v in array.tolist()]
    return [[one(v) for v in row] for row in array.tolist()]


def odd_coefficient(activation: str) -> Fraction:
    """c of MATH.md §2, computed here independently of the registry."""
    if activation in ("relu", "gelu", "gelu_tanh", "silu", "softplus"):
        return Fraction(1)
    prefix = "leaky_relu:"
    assert activation.startswith(prefix)
    return 1 + Fraction(activation[len(prefix):])


def reference_residual(W_up, W_down, skip, activation, S, denominator=1):
    """c·W_down[:,S]·W_up[S,:] + A with Fractions only."""
    up = frac_matrix(W_up, denominator)
    down = frac_matrix(W_down, denominator)
    d = len(down)
    if skip is None:
        A = [[Fraction(int(i == j)) for j in range(d)] for i in range(d)]
    else:
        A = frac_matrix(skip, denominator)
    c = odd_coefficient(activation)
    return [
        [c * sum((down[a][i] * up[i][b] for i in S), Fraction(0)) + A[a][b] for b in range(d)]
        for a in range(d)
    ]


def check_against_reference(inst, raw, S, tol=None):
    """verify(inst, S) must agree with the reference on every field."""
    ref = reference_residual(
        raw["W_up"], raw["W_down"], raw.get("skip"), inst.activation, S, raw.get("denominator", 1)
    )
    d = len(ref)
    result = verify(inst, S, tol=tol)
    biggest = max(abs(v) for row in ref for v in row)
    assert result.index_set == tuple(sorted(S))
    assert result.max_residual == biggest
    assert isinstance(result.max_residual, Fraction)
    assert result.residual_zero == (biggest == 0)
    assert result.size_ok == (len(S) >= d)
    for a in range(d):
        for b in range(d):
            assert result.residual[a, b] == ref[a][b]
    if tol is None:
        assert result.tolerance is None and result.within_tolerance is None
        assert result.holds == (biggest == 0 and len(S) >= d)
    else:
        assert result.within_tolerance == (biggest <= Fraction(tol))
        assert result.holds == (biggest <= Fraction(tol) and len(S) >= d)
    # a zero residual forces rank d on the selected terms, so |S| ≥ d
    if biggest == 0:
        assert result.size_ok
    return result


# ------------------------------------------------------------- random data

LEAKY = ("leaky_relu:1/3", "leaky_relu:0.2", "leaky_relu:-1/2", "leaky_relu:3")
ACTIVATIONS = ("relu", "gelu", "silu") + LEAKY

DECIMALS = np.array([0.1, 0.2, 0.3, -0.7, 1.1, 2.675, 1e-3, -3.3, 0.5, 0.25, -1.0, 0.0])


def random_invertible(rng, d, low=-3, high=4):
    while True:
        m = rng.integers(low, high, size=(d, d))
        if determinant(m.tolist()) != 0:
            return m


def random_raw(rng, kind: str) -> dict:
    """A small random instance as raw arrays, of one of several kinds."""
    n = int(rng.integers(1, 7))
    d = int(rng.integers(1, 4))
    raw = {"activation": str(rng.choice(ACTIVATIONS))}
    if kind == "int":
        raw["W_up"] = rng.integers(-4, 5, size=(n, d))
        raw["W_down"] = rng.integers(-4, 5, size=(d, n))
    elif kind == "int32":
        raw["W_up"] = rng.integers(-4, 5, size=(n, d)).astype(np.int32)
        raw["W_down"] = rng.integers(-4, 5, size=(d, n)).astype(np.int8)
    elif kind == "float":
        raw["W_up"] = rng.normal(size=(n, d))
        raw["W_down"] = rng.normal(size=(d, n))
    elif kind == "decimal":
        raw["W_up"] = rng.choice(DECIMALS, size=(n, d))
        raw["W_down"] = rng.choice(DECIMALS, size=(d, n)) * 10.0
    elif kind == "float32":
        raw["W_up"] = rng.normal(size=(n, d)).astype(np.float32)
        raw["W_down"] = rng.choice(DECIMALS, size=(d, n)).astype(np.float32)
    elif kind == "rational":
        raw["W_up"] = rng.integers(-9, 10, size=(n, d))
        raw["W_down"] = rng.integers(-9, 10, size=(d, n))
        raw["denominator"] = int(rng.integers(2, 12))
    else:  # pragma: no cover
        raise AssertionError(kind)
    skip_kind = rng.integers(0, 3)
    if skip_kind == 1:
        raw["skip"] = random_invertible(rng, d)
        if raw["W_up"].dtype.kind == "f":
            raw["skip"] = raw["skip"] * 0.1  # non-representable decimals in the skip too
    elif skip_kind == 2:
        raw["skip"] = np.eye(d, dtype=np.int64) * int(rng.integers(2, 5))
    return raw


def build(raw: dict) -> Instance:
    return Instance(
        raw["W_up"],
        raw["W_down"],
        skip=raw.get("skip"),
        activation=raw["activation"],
        denominator=raw.get("denominator", 1),
    )


def random_subsets(rng, n, count):
    out = [[], list(range(n))]
    for _ in range(count):
        out.append(sorted(rng.choice(n, size=int(rng.integers(0, n + 1)), replace=False).tolist()))
    return out


@pytest.mark.parametrize("kind", ["int", "int32", "float", "decimal", "float32", "rational"])
def test_random_instances_match_reference(kind):
    rng = np.random.default_rng(["int", "int32", "float", "decimal", "float32", "rational"].index(kind) + 100)
    for _ in range(60):
        raw = random_raw(rng, kind)
        inst = build(raw)
        for S in random_subsets(rng, inst.n, 4):
            result = check_against_reference(inst, raw, S)
            # tolerance variant: exactly at, just below and above the residual
            m = result.max_residual
            check_against_reference(inst, raw, S, tol=m)
            check_against_reference(inst, raw, S, tol=m * 2 + 1)
            if m > 0:
                check_against_reference(inst, raw, S, tol=m - m / 1000)


def reference_holds(raw, inst, S, tol=None) -> bool:
    """(★) for S by the Fraction reference (within ``tol`` when given)."""
    ref = reference_residual(raw["W_up"], raw["W_down"], raw.get("skip"), inst.activation, S, raw.get("denominator", 1))
    biggest = max(abs(v) for row in ref for v in row)
    return len(S) >= len(ref) and (biggest == 0 if tol is None else biggest <= Fraction(tol))


@pytest.mark.parametrize("kind", ["int", "int32", "float", "decimal", "float32", "rational"])
def test_bulk_check_matches_reference(kind):
    # Float kinds have numerators near 2^60 (Python-integer path), integer kinds small ones (int64 path).
    rng = np.random.default_rng(["int", "int32", "float", "decimal", "float32", "rational"].index(kind) + 200)
    for _ in range(40):
        raw = random_raw(rng, kind)
        inst = build(raw)
        sets = random_subsets(rng, inst.n, 6) + [list(S) for r in range(inst.n + 1) for S in itertools.combinations(range(inst.n), r)][:40]
        for tol in (None, Fraction(1, 3), 2):
            expected = {tuple(sorted(S)) for S in sets if not reference_holds(raw, inst, S, tol)}
            assert set(failing_index_sets(inst, sets, tol=tol)) == expected


def test_bulk_check_on_planted_sets():
    rng = np.random.default_rng(9)
    W_up = rng.integers(-3, 4, size=(8, 2))
    W_down = rng.integers(-3, 4, size=(2, 8))
    planted = [0, 2, 3, 5]
    skip = -(W_down[:, planted] @ W_up[planted, :])
    raw = {"W_up": W_up, "W_down": W_down, "skip": skip, "activation": "relu"}
    inst = build(raw)
    every = [list(S) for r in range(9) for S in itertools.combinations(range(8), r)]
    holding = [S for S in every if reference_holds(raw, inst, S)]
    assert planted in holding
    assert failing_index_sets(inst, holding) == []
    assert set(failing_index_sets(inst, every)) == {tuple(S) for S in every if S not in holding}


def test_every_subset_small_instance():
    rng = np.random.default_rng(5)
    raw = {
        "W_up": rng.integers(-2, 3, size=(6, 2)),
        "W_down": rng.integers(-2, 3, size=(2, 6)),
        "activation": "relu",
    }
    inst = build(raw)
    for r in range(7):
        for S in itertools.combinations(range(6), r):
            check_against_reference(inst, raw, list(S))


def test_non_representable_decimal_is_taken_at_binary_value():
    # 1 − 10·fl(0.1): fl(0.1) = 0.1 + 2^-55·(2/10)…, so the residual is −2^-54, not 0.
    inst = Instance(np.array([[0.1]]), np.array([[-10.0]]))
    result = verify(inst, [0])
    assert not result.residual_zero
    assert result.max_residual == Fraction(1, 2**54)
    assert result.residual[0, 0] == 1 - 10 * Fraction(0.1)
    assert verify(inst, [0], tol=Fraction(1, 2**54)).holds
    assert verify(inst, [0], tol=1e-15).holds
    assert verify(inst, [0], tol="1e-15").holds
    assert not verify(inst, [0], tol=Fraction(1, 2**55)).holds
    assert not verify(inst, [0], tol=0).holds
    # the same numbers as an exact rational (denominator 10) do hold
    exact = Instance(np.array([[1]]), np.array([[-100]]), skip=np.array([[10]]), denominator=10)
    assert verify(exact, [0]).residual_zero


def test_tolerance_types_are_compared_exactly():
    inst = Instance(np.array([[1], [1]]), np.array([[-1, 1]]), skip=np.array([[3]]), denominator=4)
    # A = 3/4, W_down = (-1/4, 1/4), W_up = (1/4, 1/4): residual for S = {0} is 3/4 − 1/16 = 11/16
    result = verify(inst, [0], tol=Fraction(11, 16))
    assert result.max_residual == Fraction(11, 16)
    assert result.within_tolerance and result.holds
    assert result.tolerance == Fraction(11, 16)
    assert verify(inst, [0], tol="11/16").holds
    assert verify(inst, [0], tol=0.6875).holds
    assert not verify(inst, [0], tol="0.6874999").holds
    # size_ok matters for the tolerance variant too: S = ∅ has residual A = 3/4
    empty = verify(inst, [], tol=1)
    assert empty.within_tolerance and not empty.size_ok and not empty.holds


# ----------------------------------------------------------- planted positives


def unimodular(rng, d):
    """A random integer matrix of determinant ±1 and its exact integer inverse."""
    m = np.eye(d, dtype=np.int64)
    for _ in range(3 * d):
        i, j = rng.choice(d, size=2, replace=False) if d > 1 else (0, 0)
        if i == j:
            break
        e = np.eye(d, dtype=np.int64)
        e[i, j] = int(rng.integers(-2, 3))
        m = m @ e
    if d > 1:
        m = m[rng.permutation(d)]
    if rng.integers(0, 2):
        m[0] = -m[0]
    inverse = np.round(np.linalg.inv(m)).astype(np.int64)
    assert np.array_equal(m @ inverse, np.eye(d, dtype=np.int64))
    return m, inverse


def planted_raw(rng, d, n, activation="relu", skip="identity", kind="int"):
    """Raw arrays of a block where a known S of size d satisfies (★).

    W_up[S] = U (unimodular), W_down[:,S] = −A·U⁻¹/c, other units are decoys.
    ``skip``: ``identity``, ``matrix`` (A = c.num·M, M integer invertible) or
    ``scaled`` (A = c.num·k·I). For c ≠ 1 with the identity skip the arrays
    are numerators over the denominator c.num.
    """
    c = odd_coefficient(activation)
    U, Uinv = unimodular(rng, d)
    if skip == "identity":
        M = np.eye(d, dtype=np.int64)
    elif skip == "matrix":
        M = random_invertible(rng, d, -2, 3)
    else:
        M = np.eye(d, dtype=np.int64) * int(rng.integers(2, 4))
    S = sorted(rng.choice(n, size=d, replace=False).tolist())
    rest = [i for i in range(n) if i not in S]
    W_up = np.zeros((n, d), dtype=np.int64)
    W_down = np.zeros((d, n), dtype=np.int64)
    raw = {"activation": activation}
    if skip == "identity" and c != 1:
        # values W_up[S] = U, W_down[:,S] = −U⁻¹/c, A = I: numerators over D = |c.num|
        D = abs(c.numerator)
        W_up[S] = U * D
        W_down[:, S] = -Uinv * c.denominator * (1 if c.numerator > 0 else -1)
        raw["denominator"] = D
    else:
        # A = c.num·M, W_down[:,S] = −c.den·M·U⁻¹: c·W_down·W_up = −c.num·M = −A
        W_up[S] = U
        W_down[:, S] = -c.denominator * (M @ Uinv)
        raw["skip"] = c.numerator * M
    W_up[rest] = rng.integers(-5, 6, size=(len(rest), d))
    W_down[:, rest] = rng.integers(-5, 6, size=(d, len(rest)))
    raw["W_up"], raw["W_down"] = W_up, W_down
    if kind == "float":
        # exact dyadic rescaling of each unit, and non-representable decoys
        assert "denominator" not in raw
        powers = 2.0 ** rng.integers(-6, 7, size=n)
        raw["W_up"] = W_up * powers[:, None]
        raw["W_down"] = W_down / powers[None, :]
        raw["W_up"][rest] += rng.choice(DECIMALS, size=(len(rest), d))
        raw["W_down"][:, rest] += rng.choice(DECIMALS, size=(d, len(rest)))
        if "skip" in raw:
            raw["skip"] = raw["skip"].astype(np.float64)
    return raw, S


@pytest.mark.parametrize(
    "activation, skip, kind",
    [
        ("relu", "identity", "int"),
        ("relu", "identity", "float"),
        ("relu", "matrix", "int"),
        ("relu", "matrix", "float"),
        ("gelu", "scaled", "float"),
        ("leaky_relu:1/3", "identity", "int"),
        ("leaky_relu:0.2", "identity", "int"),
        ("leaky_relu:0.2", "matrix", "int"),
        ("leaky_relu:0.2", "scaled", "float"),
        ("leaky_relu:-1/2", "matrix", "float"),
    ],
)
def test_planted_sets_hold(activation, skip, kind):
    rng = np.random.default_rng(zlib.crc32(f"{activation}|{skip}|{kind}".encode()))
    for _ in range(25):
        d = int(rng.integers(1, 4))
        n = d + int(rng.integers(0, 5))
        raw, S = planted_raw(rng, d, n, activation, skip, kind)
        inst = build(raw)
        result = check_against_reference(inst, raw, S)
        assert result.residual_zero and result.holds and result.size_ok
        assert result.max_residual == 0
        assert verify(inst, S, tol=0).holds
        # dropping or adding a unit (usually) breaks it; the reference decides
        for other in random_subsets(rng, n, 3):
            check_against_reference(inst, raw, other)


def test_planted_d2_by_hand():
    # U_S unimodular, W_S = −A·U_S⁻¹, plus decoys; S = {1, 3}
    U = np.array([[2, 1], [1, 1]])
    W_S = -np.array([[1, -1], [-1, 2]])
    W_up = np.array([[1, 2], U[0], [3, -1], U[1], [0, 1]])
    W_down = np.array([[5, W_S[0, 0], -2, W_S[0, 1], 1], [1, W_S[1, 0], 7, W_S[1, 1], 0]])
    raw = {"W_up": W_up, "W_down": W_down, "activation": "relu"}
    inst = build(raw)
    assert verify(inst, [3, 1]).holds
    assert verify(inst, (1, 3)).index_set == (1, 3)
    assert not verify(inst, [1]).holds
    assert not verify(inst, [1, 3, 4]).holds
    for r in range(6):
        for S in itertools.combinations(range(5), r):
            res = check_against_reference(inst, raw, list(S))
            assert res.holds == (set(S) == {1, 3})
    # with a 2×2 skip A = [[2,1],[0,1]]: W_S = −A·U⁻¹
    A = np.array([[2, 1], [0, 1]])
    W_S = -(A @ np.array([[1, -1], [-1, 2]]))
    W_down2 = W_down.copy()
    W_down2[:, [1, 3]] = W_S
    raw2 = {"W_up": W_up, "W_down": W_down2, "skip": A, "activation": "gelu"}
    assert check_against_reference(build(raw2), raw2, [1, 3]).holds


def test_float_skip_doubly_stochastic_invertible():
    # Hyper-Connections style mixing, invertible: A = [[3/4, 1/4], [1/4, 3/4]]
    A = np.array([[0.75, 0.25], [0.25, 0.75]])
    U = np.array([[1.0, 0.0], [0.0, 1.0]])
    raw = {"W_up": np.vstack([U, [[0.1, 0.3]]]), "W_down": np.hstack([-A, [[0.2], [0.7]]]), "skip": A, "activation": "silu"}
    inst = build(raw)
    assert check_against_reference(inst, raw, [0, 1]).holds
    assert not check_against_reference(inst, raw, [0, 1, 2]).holds


# ----------------------------------------------------------------- refusals


def test_index_errors():
    inst = Instance(np.array([[1, 0], [0, 1]]), np.array([[-1, 0], [0, -1]]), source="x.npz")
    for bad in ([2], [-1], [0, 0], [0, 5]):
        with pytest.raises(InputError) as info:
            verify(inst, bad)
        assert "x.npz" in str(info.value)


def test_non_odd_linear_and_residual_free_refused():
    for act, gate in (("relu2", None), ("swiglu", np.eye(2)), ("glu", np.eye(2)), ("leaky_relu:-1", None)):
        inst = Instance(np.eye(2), -np.eye(2), activation=act, W_gate=gate, source="g.npz")
        with pytest.raises(InputError, match=r"g\.npz"):
            verify(inst, [0, 1])
    free = Instance(np.eye(2), -np.eye(2), residual_free=True, source="w.npz")
    with pytest.raises(InputError, match=r"w\.npz"):
        verify(free, [0, 1])


def test_json_report():
    inst = Instance(np.array([[1], [2]]), np.array([[-1, 3]]))
    report = verify(inst, [1], tol="1/2").to_json()
    # residual: 1 + 3·2 = 7
    assert report["max_residual"] == "7"
    assert report["max_residual_float"] == 7.0
    assert report["holds"] is False and report["within_tolerance"] is False
    assert report["tolerance"] == "1/2"
    assert report["index_set"] == [1]
    assert verify(inst, [0]).to_json()["holds"] is True
