"""PyTorch in and out: exact conversion of weights, the witness as a module, errors naming parameters.

References: Python floats from ``tensor.item()`` (exact for every float
dtype) and Fractions for values; torch's own modules, run in float64, for
what a block computes.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
import torch

from indexset import Instance
from indexset.errors import InputError
from indexset.exact.witness import witness
from indexset.model import activations
from indexset.model.torch_io import float64_exact, to_torch

D, N = 3, 9


def _items(tensor) -> np.ndarray:
    """Every value of a tensor as a Python float, one ``item()`` at a time."""
    flat = tensor.detach().reshape(-1)
    return np.array([flat[k].item() for k in range(flat.numel())], dtype=np.float64).reshape(tuple(tensor.shape))


def _linears(seed: int, dtype=torch.float32, d: int = D, n: int = N):
    generator = torch.Generator().manual_seed(seed)
    up, down = torch.nn.Linear(d, n), torch.nn.Linear(n, d)
    with torch.no_grad():
        for layer in (up, down):
            layer.weight.copy_(torch.randn(layer.weight.shape, generator=generator))
            layer.bias.copy_(torch.randn(layer.bias.shape, generator=generator))
    return up.to(dtype), down.to(dtype)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16, torch.float64])
def test_linear_modules_convert_exactly(dtype):
    up, down = _linears(1, dtype)
    block = Instance.from_torch(up, down, activation="gelu_new")
    assert block.activation == "gelu_tanh" and block.identity_skip and block.W_up.dtype == np.float64
    for array, tensor in ((block.W_up, up.weight), (block.b_up, up.bias), (block.W_down, down.weight), (block.b_down, down.bias)):
        assert np.array_equal(array, _items(tensor))
    if dtype != torch.float64:  # the narrow values are not all short decimals: exactness is a real property here
        assert any(Fraction(float(v)).denominator > 2**10 for v in block.W_up.ravel())


def test_bfloat16_widening_matches_the_bit_pattern():
    values = torch.tensor([1 / 3, -2.7182818, 1e-30, 65504.0, -0.0], dtype=torch.bfloat16)
    bits = values.view(torch.int16).numpy().astype(np.uint16).astype(np.uint32) << 16
    expected = bits.view(np.float32).astype(np.float64)
    block = Instance.from_torch(values.reshape(5, 1), torch.ones(1, 5, dtype=torch.bfloat16))
    assert np.array_equal(block.W_up.ravel(), expected)


def _tree():
    layer = torch.nn.Module()
    layer.fc1, layer.fc2 = _linears(2)
    model = torch.nn.Module()
    model.layers = torch.nn.ModuleList([layer])
    return model


def test_state_dict_with_prefix_mapping_and_bare_weights():
    model = _tree()
    fc1, fc2 = model.layers[0].fc1, model.layers[0].fc2
    reference = Instance.from_torch(fc1, fc2, activation="relu")
    by_name = Instance.from_torch("fc1", "fc2", "relu", state_dict=model.state_dict(), prefix="layers.0.")
    by_mapping = Instance.from_torch(fc1.state_dict(), fc2.state_dict(), "relu")
    for block in (by_name, by_mapping):
        for key in ("W_up", "b_up", "W_down", "b_down"):
            assert np.array_equal(getattr(block, key), getattr(reference, key))
    assert "layers.0.fc1" in by_name.source
    bare = Instance.from_torch(fc1.weight, fc2.weight.detach().numpy())
    assert bare.b_up is None and bare.b_down is None and np.array_equal(bare.W_up, reference.W_up)


def test_skip_matrix():
    up, down = _linears(3)
    skip = 2 * torch.eye(D, dtype=torch.float16)
    block = Instance.from_torch(up, down, skip=skip)
    assert np.array_equal(block.skip, 2 * np.eye(D)) and not block.identity_skip


def test_gated_block_takes_the_gated_form():
    up, down = _linears(4)
    gate = torch.nn.Linear(D, N, bias=False)
    for activation in ("silu", "swish", torch.nn.SiLU()):
        block = Instance.from_torch(up, down, activation, gate=gate)
        assert block.activation == "swiglu" and np.array_equal(block.W_gate, _items(gate.weight))
    assert Instance.from_torch(up, down, torch.nn.GELU(approximate="tanh"), gate=gate).activation == "geglu"
    biased = torch.nn.Linear(D, N)
    with pytest.raises(InputError) as error:
        Instance.from_torch(up, down, "silu", gate=biased)
    assert error.value.source == "gate"


MODULES = [
    (torch.nn.ReLU(), "relu"),
    (torch.nn.GELU(), "gelu"),
    (torch.nn.GELU(approximate="tanh"), "gelu_tanh"),
    (torch.nn.SiLU(), "silu"),
    (torch.nn.Softplus(), "softplus"),
    (torch.nn.LeakyReLU(0.2), "leaky_relu:1/5"),
    (torch.nn.LeakyReLU(), "leaky_relu:1/100"),
]


@pytest.mark.parametrize(("module", "name"), MODULES, ids=[name for _, name in MODULES])
def test_activation_modules_compute_the_named_function(module, name):
    up, down = _linears(5)
    block = Instance.from_torch(up, down, module)
    assert block.activation == name
    z = torch.linspace(-12, 12, 241, dtype=torch.float64)
    assert np.allclose(module(z).numpy(), activations.get(name).forward(z.numpy()), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("module", [torch.nn.Softplus(beta=2.0), torch.nn.LeakyReLU(2.0), torch.nn.Tanh()], ids=["softplus-beta2", "leaky-slope2", "tanh"])
def test_unsupported_activation_modules(module):
    up, down = _linears(6)
    with pytest.raises(InputError) as error:
        Instance.from_torch(up, down, module)
    assert error.value.source == "activation"


def test_errors_name_the_parameter():
    up, down = _linears(7)
    cases = {
        "down": lambda: Instance.from_torch(up, torch.nn.Linear(N, D + 1)),
        "skip": lambda: Instance.from_torch(up, down, skip=torch.eye(D + 1)),
        "gate": lambda: Instance.from_torch(up, down, "silu", gate=torch.zeros(N, D + 1)),
        "up": lambda: Instance.from_torch("fc1", down),
        "activation": lambda: Instance.from_torch(up, down, "mish"),
    }
    for parameter, call in cases.items():
        with pytest.raises(InputError) as error:
            call()
        assert error.value.source == parameter, (parameter, str(error.value))
    singular = torch.ones(D, D, dtype=torch.float64)
    with pytest.raises(InputError) as error:
        Instance.from_torch(up, down, skip=singular)
    assert error.value.source == "skip" and "singular" in error.value.problem
    assert not Instance.from_torch(up, down, skip=singular + torch.eye(D)).identity_skip  # invertible: accepted
    for bad in (torch.zeros(N, D, device="meta"), torch.zeros(N, D, dtype=torch.complex64), torch.full((N, D), float("nan")), torch.zeros(N, D, dtype=torch.bool)):
        with pytest.raises(InputError) as error:
            Instance.from_torch(bad, down.weight)
        assert error.value.source == "up" and "\n" not in str(error.value)
    with pytest.raises(InputError) as error:
        Instance.from_torch("fc1", "fc2", state_dict={"fc1.weight": up.weight})
    assert error.value.source == "down" and "fc2.weight" in error.value.problem


def _planted(activation, dtype=torch.float32, seed=8):
    """Linear layers whose units 0..d-1 cancel the identity skip: c·down[:, S]·up[S] = −I (c = 1)."""
    up, down = _linears(seed, dtype)
    with torch.no_grad():
        up.weight[:D] = torch.eye(D)
        down.weight[:, :D] = -torch.eye(D)
    return up, down, Instance.from_torch(up, down, activation)


@pytest.mark.parametrize(("activation", "function"), [("relu", torch.relu), ("gelu", torch.nn.functional.gelu), ("silu", torch.nn.functional.silu)])
def test_witness_module_equals_the_original_block(activation, function):
    up, down, block = _planted(activation)
    g = witness(block, range(D)).to_torch()
    assert isinstance(g, torch.nn.Sequential) and [name for name, _ in g.named_children()] == ["up", "act", "down"]
    assert all(p.dtype == torch.float64 for p in g.parameters())
    x = torch.randn(64, D, dtype=torch.float64, generator=torch.Generator().manual_seed(9)) * 3
    with torch.no_grad():
        f = x + down.double()(function(up.double()(x)))
        assert torch.allclose(g(x), f, rtol=1e-12, atol=1e-12)
        wrong = witness(block, range(D - 1)).to_torch()
        assert not torch.allclose(wrong(x), f, rtol=1e-6, atol=1e-6)  # the check above can fail


def test_state_dict_values_are_the_exact_weights():
    _, _, block = _planted("relu")
    g = witness(block, [0, 1, 2])
    tensors = g.to_torch("state_dict")
    assert list(tensors) == ["up.weight", "up.bias", "down.weight", "down.bias"]
    for name, key in (("up.weight", "W_up"), ("up.bias", "b_up"), ("down.weight", "W_down"), ("down.bias", "b_down")):
        numerators, den = g.exact(key)
        assert tensors[name].dtype == torch.float64
        assert [Fraction(v) for v in _items(tensors[name]).ravel()] == [Fraction(int(p), den) for p in numerators.ravel()]
    assert float64_exact(g)


def _residual_free(numerators, denominator, activation="relu", **arrays):
    n = numerators.shape[0]
    return Instance(numerators, np.ones((D, n), dtype=np.int64), activation=activation, denominator=denominator, residual_free=True, **arrays)


def test_exactness_is_reported_and_strict_refuses():
    numerators = np.arange(N * D, dtype=np.int64).reshape(N, D) - 7
    thirds, quarters = _residual_free(numerators, 3), _residual_free(numerators, 4)
    assert float64_exact(quarters) and not float64_exact(thirds)
    assert to_torch(thirds, "state_dict")["up.weight"][0, 1].item() == float(Fraction(-6, 3))
    with pytest.raises(InputError) as error:
        thirds.to_torch(strict=True)
    assert error.value.source == "strict"
    assert quarters.to_torch(strict=True) is not None
    rounded = _residual_free(numerators, 4)
    rounded.metadata["witness_rounded"] = np.array(True)
    assert not float64_exact(rounded)


def test_gated_and_custom_activations_export_as_modules():
    generator = torch.Generator().manual_seed(10)
    W_gate, W_up, W_down = (torch.randn(shape, dtype=torch.float64, generator=generator) for shape in ((N, D), (N, D), (D, N)))
    block = Instance(W_up.numpy(), W_down.numpy(), W_gate=W_gate.numpy(), activation="swiglu", residual_free=True)
    x = torch.randn(16, D, dtype=torch.float64, generator=generator)
    module = block.to_torch("module")
    with torch.no_grad():
        assert torch.allclose(module(x), (torch.nn.functional.silu(x @ W_gate.T) * (x @ W_up.T)) @ W_down.T, rtol=1e-12, atol=1e-12)
    assert list(block.to_torch("state_dict")) == ["gate.weight", "up.weight", "up.bias", "down.weight", "down.bias"]
    with pytest.raises(InputError) as error:
        block.to_torch("sequential")
    assert error.value.source == "kind"
    for activation, function in (("relu2", lambda z: torch.relu(z) ** 2), ("leaky_relu:3", lambda z: torch.maximum(z, 3 * z)), ("leaky_relu:-1/2", lambda z: torch.where(z > 0, z, -z / 2))):
        plain = Instance(W_up.numpy(), W_down.numpy(), activation=activation, residual_free=True)
        with torch.no_grad():
            assert torch.allclose(plain.to_torch()(x), function(x @ W_up.T) @ W_down.T, rtol=1e-12, atol=1e-12), activation


def test_only_residual_free_blocks_export():
    _, _, block = _planted("relu")
    with pytest.raises(InputError, match="skip"):
        block.to_torch()
    with pytest.raises(InputError) as error:
        witness(block, []).to_torch("onnx")
    assert error.value.source == "kind"
