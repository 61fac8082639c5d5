"""PyTorch in and out: blocks from ``nn.Linear`` modules, tensors or state dicts; residual-free blocks back as modules.

:meth:`Instance.from_torch <indexset.model.instance.Instance.from_torch>` and
:meth:`Instance.to_torch <indexset.model.instance.Instance.to_torch>` are the
front doors; this module takes any object with an Instance's attributes and
imports nothing of ``instance.py`` (which imports this module lazily).

torch is never imported by indexset itself before a torch object arrives:
reading a tensor only calls its methods, and :func:`to_torch` imports torch
when it is called. Values cross over exactly: float16, bfloat16 and float32
tensors widen to float64 without rounding (every such value is a dyadic
rational that float64 holds), and going back, float64 tensors hold every
weight of a block whose weights are float64 values, which
:func:`float64_exact` checks.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Mapping
from fractions import Fraction

import numpy as np

import indexset.model.activations as activations
from indexset.errors import InputError
from indexset.rational import fmpz_matrix, integer_numerators

MAX_EXACT_INTEGER = 2**53
"""Integers up to this size are exact in float64."""

# Activation modules by class name (torch.nn and transformers.activations), so
# that recognising one needs no import of either library.
MODULE_ACTIVATIONS = {
    "ReLU": "relu",
    "SiLU": "silu",
    "Sigmoid": "sigmoid",
    "SiLUActivation": "silu",
    "GELUActivation": "gelu",
    "NewGELUActivation": "gelu_new",
    "FastGELUActivation": "gelu_fast",
    "AccurateGELUActivation": "gelu_accurate",
    "PytorchGELUTanh": "gelu_pytorch_tanh",
    "GELUTanh": "gelu_pytorch_tanh",
    "ReLUSquaredActivation": "relu2",
}

# The float64 dtypes torch widens to exactly, by their torch names.
_TORCH_FLOATS = ("torch.float64", "torch.float32", "torch.float16", "torch.bfloat16")
_TORCH_INTEGERS = ("torch.int64", "torch.int32", "torch.int16", "torch.int8", "torch.uint8")


def is_tensor(value) -> bool:
    """Whether ``value`` is a torch tensor (checked without importing torch)."""
    return type(value).__module__.startswith("torch") and hasattr(value, "detach") and hasattr(value, "dtype")


def as_float64(value, source: str, what: str = "") -> np.ndarray:
    """A tensor or array as a float64 numpy array holding exactly the same values.

    Parameters
    ----------
    value : torch.Tensor or array_like
        float64/32/16 or bfloat16 tensors, numpy float or integer arrays,
        integers up to 2^53 in absolute value.
    source : str
        The parameter (or file) named in an error.
    what : str
        The tensor's own name, put before the problem in an error.

    Raises
    ------
    InputError
        Another dtype (complex, bool, float8), a tensor without data (on
        the meta device), integers beyond 2^53, NaN or Inf.
    """
    def fail(problem: str):
        raise InputError(source, f"{what}: {problem}" if what else problem)

    if is_tensor(value):
        array = _tensor_array(value, fail)
    else:
        array = np.asarray(value)
        if array.dtype.kind not in "iuf" or array.dtype.itemsize > 8:
            fail(f"dtype {array.dtype} is not supported; expected floats (float64 or narrower) or integers")
    if array.dtype.kind in "iu" and array.size and max(abs(int(array.max())), abs(int(array.min()))) > MAX_EXACT_INTEGER:
        fail("holds integers beyond 2^53, not exact in float64")
    array = np.ascontiguousarray(array, dtype=np.float64)
    if not np.isfinite(array).all():
        fail("contains NaN or Inf")
    return array


def _tensor_array(tensor, fail) -> np.ndarray:
    tensor = tensor.detach()
    dtype = str(tensor.dtype)
    if getattr(tensor, "is_meta", False):
        fail("tensor is on the meta device and holds no values")
    if dtype in _TORCH_FLOATS:
        import torch  # already imported by whoever made the tensor

        # Widening to float64 is exact for every one of these formats; numpy has no bfloat16.
        return tensor.to(device="cpu", dtype=torch.float64).numpy()
    if dtype in _TORCH_INTEGERS:
        return tensor.cpu().numpy()
    fail(f"tensor dtype {dtype} is not supported; expected float64, float32, float16, bfloat16 or integers")


# ------------------------------------------------------------------ in
def linear_arrays(value, role: str, state_dict: Mapping | None = None, prefix: str = "") -> tuple[np.ndarray, np.ndarray | None]:
    """Weight (out, in) and bias of one linear map, as exact float64 arrays.

    Parameters
    ----------
    value : nn.Linear, Mapping, tensor, array or str
        A module with ``weight`` (and ``bias``) attributes, a mapping with
        ``"weight"`` (and ``"bias"``) keys such as ``linear.state_dict()``,
        a weight alone (no bias), or a module name in ``state_dict``.
    role : str
        The parameter name (``up``, ``down``, ``gate``), for errors.
    state_dict : Mapping, optional
        Tensors by name, for string values.
    prefix : str
        Put before a string value: ``prefix + value + ".weight"``.

    Raises
    ------
    InputError
        A name missing from the state dict, a GPT-2 ``Conv1D`` (which
        stores its weight transposed) or a value of another kind.
    """
    if isinstance(value, str):
        if state_dict is None:
            raise InputError(role, f"{value!r} names a module, but no state_dict was given")
        name = prefix + value
        if name + ".weight" not in state_dict:
            raise InputError(role, f"state_dict has no tensor {name}.weight")
        weight, bias = state_dict[name + ".weight"], state_dict.get(name + ".bias")
        names = (name + ".weight", name + ".bias")
    elif isinstance(value, Mapping):
        if "weight" not in value:
            raise InputError(role, f"a mapping needs a 'weight' entry (has {', '.join(map(str, value)) or 'nothing'})")
        weight, bias, names = value["weight"], value.get("bias"), ("weight", "bias")
    elif type(value).__name__ == "Conv1D":
        raise InputError(role, "a GPT-2 Conv1D stores its weight as (in, out): pass {'weight': conv.weight.T, 'bias': conv.bias}")
    elif hasattr(value, "weight") and not is_tensor(value):
        weight, bias, names = value.weight, getattr(value, "bias", None), ("weight", "bias")
    else:
        weight, bias, names = value, None, ("", "")
    weight = as_float64(weight, role, names[0])
    if weight.ndim != 2 or 0 in weight.shape:
        raise InputError(role, f"weight has shape {weight.shape}, expected (out_features, in_features), both at least 1")
    if bias is not None:
        bias = as_float64(bias, role, names[1])
        if bias.shape != (weight.shape[0],):
            raise InputError(role, f"bias has shape {bias.shape}, expected ({weight.shape[0]},)")
    return weight, bias


def activation_name(activation) -> str:
    """The activation as a name: strings as given, torch and transformers activation modules by their class.

    Raises
    ------
    InputError
        A module of an unknown class, or settings indexset's σ does not
        have (Softplus with beta ≠ 1, LeakyReLU with slope > 1, GELU with an
        unknown approximation).
    """
    if isinstance(activation, str):
        return activation
    kind = type(activation).__name__
    if kind == "GELU":
        approximate = getattr(activation, "approximate", "none")
        if approximate not in ("none", "tanh"):
            raise InputError("activation", f"nn.GELU(approximate={approximate!r}) is not supported")
        return "gelu" if approximate == "none" else "gelu_tanh"
    if kind == "LeakyReLU":
        slope = Fraction(repr(float(activation.negative_slope)))
        if slope > 1:
            # torch's LeakyReLU keeps z above zero; indexset's leaky_relu:α is max(z, α·z), which differs for α > 1.
            raise InputError("activation", f"nn.LeakyReLU(negative_slope={float(slope)}) with slope > 1 is not supported")
        return f"leaky_relu:{slope}"
    if kind == "Softplus":
        if float(activation.beta) != 1.0:
            raise InputError("activation", f"nn.Softplus(beta={activation.beta}) is not supported (only beta = 1)")
        return "softplus"
    if kind in MODULE_ACTIVATIONS:
        return MODULE_ACTIVATIONS[kind]
    raise InputError("activation", f"activation module {kind} is not supported (pass a name such as 'gelu' or 'silu')")


def block_arrays(up, down, activation="relu", gate=None, skip=None, *, state_dict: Mapping | None = None, prefix: str = "", source: str | None = None) -> dict:
    """The arguments of the :class:`Instance` ``x + down(σ(up(x)))`` (gated: ``x + down(g(gate(x))·up(x))``) of PyTorch layers.

    Parameters
    ----------
    up, down : nn.Linear, Mapping, tensor, array or str
        The up projection (``in_features = d``, ``out_features = n``) and
        the down projection (n → d): modules (weight and bias), mappings
        with ``weight`` and ``bias`` (``linear.state_dict()``), bare weights
        (no bias), or module names in ``state_dict``.
    activation : str or nn.Module
        An indexset or Hugging Face name (``gelu_new``, ``swish``, ...) or an
        activation module (``nn.GELU(approximate="tanh")``, ``nn.SiLU()``,
        transformers' ``NewGELUActivation``, ...). With a gate, an ungated
        name stands for its gated form (``silu`` → ``swiglu``).
    gate : same kinds as ``up``, optional
        The gate projection of a gated block (LLaMA's ``gate_proj``); it
        may not carry a nonzero bias.
    skip : tensor or array, optional
        The (d, d) skip matrix A; the identity when omitted.
    state_dict : Mapping, optional
        Tensors by name, for string arguments (``model.state_dict()``).
    prefix : str
        Put before string arguments (``"model.layers.3.mlp."``).
    source : str, optional
        The name of the block in error messages.

    Returns
    -------
    dict
        ``W_up``, ``W_down``, ``skip``, ``b_up``, ``b_down``, ``W_gate``
        (float64 arrays equal to the tensors' values exactly, biases
        included; None where absent), ``activation`` and ``source``.

    Raises
    ------
    InputError
        Naming the parameter (``up``, ``down``, ``gate``, ``skip``,
        ``activation``) whose value is wrong.
    """
    W_up, b_up = linear_arrays(up, "up", state_dict, prefix)
    W_down, b_down = linear_arrays(down, "down", state_dict, prefix)
    n, d = W_up.shape
    if W_down.shape != (d, n):
        raise InputError("down", f"weight has shape {W_down.shape}; the up projection {W_up.shape} needs ({d}, {n})")
    W_gate = None
    if gate is not None:
        W_gate, b_gate = linear_arrays(gate, "gate", state_dict, prefix)
        if W_gate.shape != (n, d):
            raise InputError("gate", f"weight has shape {W_gate.shape}, expected ({n}, {d}) as the up projection")
        if b_gate is not None and np.any(b_gate != 0):
            raise InputError("gate", "a bias on the gate projection is not supported")
    act = activations.for_block(activation_name(activation), gate is not None, "activation")
    if skip is not None:
        skip = as_float64(skip, "skip")
        if skip.shape != (d, d):
            raise InputError("skip", f"has shape {skip.shape}, expected ({d}, {d})")
        if fmpz_matrix(integer_numerators(skip)[0]).rank() < d:  # exact: the float values are dyadic rationals
            raise InputError("skip", "is singular: the reduction to the identity skip (MATH.md §3) needs an invertible A")
    label = source or (f"{prefix}{up}" if isinstance(up, str) else "<torch>")
    return {"W_up": W_up, "W_down": W_down, "skip": skip, "b_up": b_up, "b_down": b_down, "W_gate": W_gate, "activation": act.name, "source": label}


# ------------------------------------------------------------------ out
def float64_values(instance, key: str) -> tuple[np.ndarray, bool]:
    """A weight array as float64 values and whether each one is the exact value.

    Float arrays over denominator 1 are exact as they stand; otherwise
    every value p/q is compared with its float64 rounding.
    """
    array = getattr(instance, key)
    if array is not None and array.dtype.kind == "f" and instance.denominator == 1:
        return np.asarray(array, dtype=np.float64), True
    values = instance.float_array(key)
    den = instance.denominator
    if array is not None and array.dtype.kind in "iu" and den & (den - 1) == 0 and den.bit_length() <= 1000:
        # n / 2^k with |n| ≤ 2^53 and k ≤ 1000 is a float64 (normal, not subnormal).
        return values, bool(array.size == 0 or np.abs(array).max() <= MAX_EXACT_INTEGER)
    numerators, den = instance.exact(key)
    return values, all(Fraction(float(v)) == Fraction(int(p), den) for v, p in zip(values.ravel(), numerators.ravel()))


def float64_exact(instance) -> bool:
    """Whether float64 tensors hold this block exactly.

    False when some weight p/q has no float64 value (q not a power of 2)
    or when the block was stored rounded (metadata ``witness_rounded``, a
    witness whose exact values are irrational or too long).
    """
    if bool(np.asarray(instance.metadata.get("witness_rounded", False))):
        return False
    return all(float64_values(instance, key)[1] for key in _keys(instance))


def _keys(instance) -> tuple[str, ...]:
    return ("W_up", "b_up", "W_down", "b_down") + (("W_gate",) if instance.act.gated else ())


def torch_state_dict(instance) -> OrderedDict:
    """A residual-free block as float64 tensors under ``nn.Linear`` names.

    Keys ``up.weight`` (n, d), ``up.bias`` (n,), ``down.weight`` (d, n),
    ``down.bias`` (d,), and ``gate.weight`` (n, d) for a gated block: the
    names of :func:`to_torch`'s module and of the safetensors witness files.
    """
    import torch

    _require_residual_free(instance)
    names = {"W_up": "up.weight", "b_up": "up.bias", "W_gate": "gate.weight", "W_down": "down.weight", "b_down": "down.bias"}
    out = OrderedDict()
    for key in ("W_gate", "W_up", "b_up", "W_down", "b_down"):
        if key in _keys(instance):
            out[names[key]] = torch.from_numpy(np.array(float64_values(instance, key)[0], dtype=np.float64))
    return out


def to_torch(instance, kind: str = "sequential", strict: bool = False):
    """A residual-free block as a PyTorch module or state dict, in float64.

    Parameters
    ----------
    instance : Instance
        A residual-free block (a witness: ``residual_free=True``).
    kind : {"sequential", "module", "state_dict"}
        ``sequential``: ``nn.Sequential(up=Linear(d, n), act, down=Linear(n, d))``
        (ungated blocks only); ``module``: that, or for a gated block a
        module with ``gate``, ``up``, ``down`` computing
        ``down(g(gate(x))·up(x))``; ``state_dict``: the tensors of
        :func:`torch_state_dict`.
    strict : bool
        Refuse a block that float64 tensors do not hold exactly (see
        :func:`float64_exact`) instead of rounding it.

    Returns
    -------
    nn.Module or OrderedDict
        float64 throughout. ``float64_exact(instance)`` tells whether every
        value is exact.

    Raises
    ------
    InputError
        A block with a skip, an unknown ``kind``, a gated block as
        ``sequential``, or with ``strict`` a block float64 cannot hold.
    """
    if kind not in ("sequential", "module", "state_dict"):
        raise InputError("kind", f"must be 'sequential', 'module' or 'state_dict', got {kind!r}")
    _require_residual_free(instance)
    if instance.act.gated and kind == "sequential":
        raise InputError("kind", f"a gated block ({instance.activation}) is no chain of layers: use kind='module' or 'state_dict'")
    if strict and not float64_exact(instance):
        raise InputError("strict", f"{instance.source}: some weights have no exact float64 value")
    tensors = torch_state_dict(instance)
    if kind == "state_dict":
        return tensors
    import torch

    d, n = instance.d, instance.n
    up = torch.nn.Linear(d, n, dtype=torch.float64)
    down = torch.nn.Linear(n, d, dtype=torch.float64)
    if instance.act.gated:
        module = _gated_module_class()(torch.nn.Linear(d, n, bias=False, dtype=torch.float64), up, down, _activation_module(instance.act, gate=True))
    else:
        module = torch.nn.Sequential(OrderedDict(up=up, act=_activation_module(instance.act), down=down))
    module.load_state_dict(tensors)
    return module


def _require_residual_free(instance) -> None:
    if not instance.residual_free:
        raise InputError(instance.source, "the block has a skip connection; only residual-free blocks (witnesses) are exported to PyTorch")


def _activation_module(act, gate: bool = False):
    """The torch module computing σ (the gate g of a gated activation)."""
    import torch

    name = {"reglu": "relu", "swiglu": "silu", "geglu": "gelu", "glu": "sigmoid"}.get(act.name, act.name) if gate else act.name
    if name.startswith("leaky_relu:"):
        alpha = act.c - 1
        if alpha <= 1:
            return torch.nn.LeakyReLU(float(alpha))
        return _elementwise_class()(f"max(z, {alpha}·z)", lambda z, a=float(alpha): torch.maximum(z, a * z))
    modules = {
        "relu": torch.nn.ReLU,
        "gelu": torch.nn.GELU,
        "gelu_tanh": lambda: torch.nn.GELU(approximate="tanh"),
        "silu": torch.nn.SiLU,
        "sigmoid": torch.nn.Sigmoid,
        # Above the threshold torch returns z itself; at 40 the error e^-40 is below float64's spacing there.
        "softplus": lambda: torch.nn.Softplus(threshold=40.0),
        "relu2": lambda: _elementwise_class()("relu(z)²", lambda z: torch.relu(z) ** 2),
    }
    if name not in modules:
        raise InputError("activation", f"{act.name} has no PyTorch module")
    return modules[name]()


_CLASSES: dict = {}


def _elementwise_class():
    """An ``nn.Module`` applying a given elementwise function (defined once torch is imported)."""
    if "elementwise" not in _CLASSES:
        import torch

        class Elementwise(torch.nn.Module):
            """σ applied elementwise, for activations torch has no module for."""

            def __init__(self, formula: str, function) -> None:
                super().__init__()
                self.formula = formula
                self.function = function

            def forward(self, z):
                return self.function(z)

            def extra_repr(self) -> str:
                return self.formula

        _CLASSES["elementwise"] = Elementwise
    return _CLASSES["elementwise"]


def _gated_module_class():
    """The gated MLP ``down(g(gate(x))·up(x))`` as an ``nn.Module`` class (defined once torch is imported)."""
    if "gated" not in _CLASSES:
        import torch

        class GatedMLP(torch.nn.Module):
            """``down(g(gate(x)) · up(x))``, LLaMA's MLP with a bias allowed on ``up`` and ``down``."""

            def __init__(self, gate, up, down, act) -> None:
                super().__init__()
                self.gate = gate
                self.up = up
                self.down = down
                self.act = act

            def forward(self, x):
                return self.down(self.act(self.gate(x)) * self.up(x))

        _CLASSES["gated"] = GatedMLP
    return _CLASSES["gated"]
