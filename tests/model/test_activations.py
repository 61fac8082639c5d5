"""The activation registry: flip identity, impossibility classes, bad names."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest

from indexset.errors import InputError
from indexset.model import activations
from indexset.model.activations import GATED, HOMOGENEOUS, ODD_LINEAR, UNCOVERED

# name -> (expected c, expected extension flag, exact rational forward?)
ODD = {
    "relu": (Fraction(1), False, True),
    "gelu": (Fraction(1), False, False),
    "gelu_tanh": (Fraction(1), False, False),
    "silu": (Fraction(1), True, False),
    "softplus": (Fraction(1), True, False),
    "leaky_relu:0.01": (Fraction(101, 100), True, True),
    "leaky_relu:0.2": (Fraction(6, 5), True, True),
    "leaky_relu:1/3": (Fraction(4, 3), True, True),
    "leaky_relu:-1/2": (Fraction(1, 2), True, True),
    "leaky_relu:0": (Fraction(1), True, True),
    "leaky_relu:1": (Fraction(2), True, True),
    "leaky_relu:2.5": (Fraction(7, 2), True, True),
    "leaky_relu:-3": (Fraction(-2), True, True),
}


def _points(seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return np.concatenate(
        [
            rng.normal(scale=1.0, size=500),
            rng.normal(scale=10.0, size=500),
            rng.uniform(-60.0, 60.0, size=500),
            rng.uniform(-1e-6, 1e-6, size=100),
            np.array([0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 1e-300, -1e-300, 30.0, -30.0, 100.0, -100.0]),
        ]
    )


@pytest.mark.parametrize("name", sorted(ODD))
def test_flip_identity_numerically(name):
    act = activations.get(name)
    c, extension, exact = ODD[name]
    assert act.kind == ODD_LINEAR
    assert act.linear is (name == "leaky_relu:1")
    assert act.c == c
    assert act.extension is extension
    assert act.exact_forward is exact
    assert not act.gated
    z = _points(sorted(ODD).index(name))
    lhs = act.forward(z) - act.forward(-z)
    assert np.all(np.isfinite(lhs))
    err = np.abs(lhs - float(c) * z)
    assert np.all(err <= 1e-12 * (1.0 + np.abs(z))), (name, float(err.max()))


@pytest.mark.parametrize("name", sorted(n for n, v in ODD.items() if v[2]))
def test_flip_identity_exactly_for_rational_forward(name):
    act = activations.get(name)
    rng = np.random.default_rng(7)
    for p, q in zip(rng.integers(-1000, 1001, size=300), rng.integers(1, 50, size=300)):
        z = Fraction(int(p), int(q))
        assert act.exact_relu_like(z) - act.exact_relu_like(-z) == act.c * z
        # the exact forward agrees with the numpy forward
        assert abs(float(act.exact_relu_like(z)) - float(act.forward(np.array(float(z))))) <= 1e-12 * (1 + abs(z))


def test_relu_and_leaky_forward_values():
    z = np.array([-2.0, -0.5, 0.0, 0.5, 2.0])
    assert np.array_equal(activations.get("relu").forward(z), [0.0, 0.0, 0.0, 0.5, 2.0])
    leaky = activations.get("leaky_relu:1/4")
    assert np.array_equal(leaky.forward(z), [-0.5, -0.125, 0.0, 0.5, 2.0])
    assert leaky.exact_relu_like(Fraction(-2, 3)) == Fraction(-1, 6)
    assert leaky.exact_relu_like(Fraction(2, 3)) == Fraction(2, 3)


def test_known_forward_values():
    z = np.array([-1.0, 0.0, 1.0, 2.0])
    from math import erf, exp, log, pi, sqrt, tanh

    gelu = [v * 0.5 * (1 + erf(v / sqrt(2))) for v in z]
    gelu_tanh = [0.5 * v * (1 + tanh(sqrt(2 / pi) * (v + 0.044715 * v**3))) for v in z]
    silu = [v / (1 + exp(-v)) for v in z]
    softplus = [log(1 + exp(v)) for v in z]
    for name, want in (("gelu", gelu), ("gelu_tanh", gelu_tanh), ("silu", silu), ("softplus", softplus)):
        assert np.allclose(activations.get(name).forward(z), want, rtol=1e-14, atol=1e-15), name


def test_leaky_names_are_canonical_and_case_insensitive():
    assert activations.get("leaky_relu:0.2").name == "leaky_relu:1/5"
    assert activations.get("LEAKY_RELU:2/10").name == "leaky_relu:1/5"
    assert activations.get(" leaky_relu:1/3 ").c == Fraction(4, 3)
    assert activations.get("ReLU").name == "relu"
    # a canonical name maps to itself
    for name in ODD:
        act = activations.get(name)
        assert activations.get(act.name).c == act.c


def test_exact_forward_refused_for_smooth_activations():
    with pytest.raises(ValueError):
        activations.get("gelu").exact_relu_like(Fraction(1))


@pytest.mark.parametrize(
    "name, kind, gated, degree",
    [
        ("relu2", HOMOGENEOUS, False, 2),
        ("reglu", HOMOGENEOUS, True, 2),
        ("swiglu", GATED, True, None),
        ("geglu", GATED, True, None),
        ("glu", UNCOVERED, True, None),
        ("leaky_relu:-1", UNCOVERED, False, None),
    ],
)
def test_impossible_and_uncovered_classes(name, kind, gated, degree):
    act = activations.get(name)
    assert act.kind == kind
    assert act.c is None
    assert act.gated is gated
    assert act.degree == degree
    assert act.reason
    assert act.exact_forward == (name in ("relu2", "reglu"))  # σ or its gate maps rationals to rationals


def test_impossible_class_forwards():
    z = np.array([-2.0, -1.0, 0.0, 1.0, 3.0])
    v = np.array([1.0, 2.0, 3.0, -1.0, 0.5])
    assert np.array_equal(activations.get("relu2").forward(z), [0.0, 0.0, 0.0, 1.0, 9.0])
    assert np.array_equal(activations.get("reglu").forward(z, v), [0.0, 0.0, 0.0, -1.0, 1.5])
    silu = z / (1 + np.exp(-z))
    assert np.allclose(activations.get("swiglu").forward(z, v), silu * v, rtol=1e-14)
    # gates of the 'impossible' gated class vanish at 0; the uncovered GLU gate is 1/2
    for name in ("swiglu", "geglu", "reglu"):
        assert activations.get(name).gate(np.array(0.0)) == 0.0
    assert activations.get("glu").gate(np.array(0.0)) == 0.5
    # leaky_relu:-1 is |z|: even, no odd part
    absval = activations.get("leaky_relu:-1")
    assert np.array_equal(absval.forward(z), np.abs(z))


@pytest.mark.parametrize(
    "name",
    [
        "tanh",
        "sigmoid",
        "",
        "relu3",
        "leaky_relu:",
        "leaky_relu:abc",
        "leaky_relu:1/0",
        "leaky_relu:nan",
        "leaky_relu:inf",
        "leaky_relu:0.1.2",
        "gelu:1",
        "gelu_10",
        "quick_gelu",
        "relu6",
        "mish",
    ],
)
def test_unknown_names_raise_input_error(name):
    with pytest.raises(InputError) as info:
        activations.get(name, "some/file.npz")
    assert "some/file.npz" in str(info.value)
    assert "\n" not in str(info.value)


def test_registry_lists_every_name():
    for name in activations.NAMES:
        if name == "leaky_relu:ALPHA":
            continue
        assert activations.get(name).name == name


# Hugging Face's activation functions (transformers.activations), written out
# here from their definitions, independently of the registry.
HF_FUNCTIONS = {
    "gelu_new": lambda x: 0.5 * x * (1.0 + np.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x**3))),
    "gelu_fast": lambda x: 0.5 * x * (1.0 + np.tanh(x * 0.7978845608 * (1.0 + 0.044715 * x * x))),
    "gelu_accurate": lambda x: 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x**3))),
    "gelu_pytorch_tanh": lambda x: 0.5 * x * (1.0 + np.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x**3))),
    "gelu_python_tanh": lambda x: 0.5 * x * (1.0 + np.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x**3))),
    "gelu_python": lambda x: x * 0.5 * (1.0 + np.vectorize(math.erf)(x / math.sqrt(2.0))),
    "swish": lambda x: x / (1.0 + np.exp(-x)),
    "leaky_relu": lambda x: np.where(x >= 0, x, 0.01 * x),
    "squared_relu": lambda x: np.maximum(x, 0.0) ** 2,
    "relu_squared": lambda x: np.maximum(x, 0.0) ** 2,
}


def test_every_alias_has_a_reference_function():
    assert set(activations.ALIASES) == set(HF_FUNCTIONS)


@pytest.mark.parametrize("alias", sorted(HF_FUNCTIONS))
def test_hugging_face_spellings_name_the_same_function(alias):
    act = activations.get(alias)
    assert act.name == activations.ALIASES[alias] and activations.get(alias.upper()).name == act.name
    z = np.linspace(-30.0, 30.0, 2001)
    assert np.allclose(act.forward(z), HF_FUNCTIONS[alias](z), rtol=1e-9, atol=1e-9)


def test_instance_files_take_hugging_face_spellings(tmp_path):
    from indexset.model.instance import Instance, write_npz

    path = tmp_path / "hf.npz"
    write_npz(path, {"W_up": np.eye(2), "W_down": -np.eye(2), "activation": np.array("gelu_pytorch_tanh")})
    assert Instance.load(path).activation == "gelu_tanh"


def test_gated_forms():
    assert {name: activations.for_block(name, True).name for name in ("relu", "gelu", "gelu_new", "silu", "swish", "sigmoid", "swiglu")} == {
        "relu": "reglu", "gelu": "geglu", "gelu_new": "geglu", "silu": "swiglu", "swish": "swiglu", "sigmoid": "glu", "swiglu": "swiglu",
    }
    assert activations.for_block("gelu_new", False).name == "gelu_tanh"
    for name, gated in (("softplus", True), ("swiglu", False), ("sigmoid", False)):
        with pytest.raises(InputError) as info:
            activations.for_block(name, gated, "config.json")
        assert info.value.source == "config.json"
