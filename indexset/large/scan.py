"""Scan a transformer checkpoint: decide every MLP block, one layer at a time.

Checkpoints are read with :func:`safetensors.safe_open` (numpy framework,
memory-mapped, never pickle, never ``torch.load``). ``PATH`` is a
``.safetensors`` file, or a folder holding ``model.safetensors`` or sharded
``*.safetensors`` files (with or without ``model.safetensors.index.json``)
and usually a ``config.json``.

Recognised layouts (tensor names may carry any prefix such as ``bert.``,
``transformer.``, ``model.``, ``gpt_neox.``):

========== ================================================ ============ ========
layout     MLP tensors of layer i                           activation   norm
========== ================================================ ============ ========
bert       encoder.layer.i.intermediate.dense / .output.dense hidden_act   post-LN
gpt2       h.i.mlp.c_fc / h.i.mlp.c_proj (Conv1D: transposed) gelu_new    pre-LN
opt        layers.i.fc1 / layers.i.fc2                       relu         pre-LN
gpt_neox   layers.i.mlp.dense_h_to_4h / dense_4h_to_h         hidden_act   pre-LN
llama      layers.i.mlp.gate_proj, up_proj / down_proj       silu → SwiGLU pre-LN
========== ================================================ ============ ========

Each layer becomes an :class:`~indexset.model.instance.Instance` (float64 weights
converted exactly from float32/float16/bfloat16, biases included, identity
skip) and is decided by :func:`indexset.large.gram.gram_decide`. Gated layers
(LLaMA) are decided by theorem: against bias-free blocks from their shapes
and biases alone (the paper); against blocks with biases by Theorem C of
MATH.md §8, which reads the gate rows to check its hypotheses.
"""

from __future__ import annotations

import json
import os
import re
import struct
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from dataclasses import dataclass, field

import numpy as np
from safetensors import safe_open

import indexset.model.activations as activations
import indexset.theory.affine as affine
from indexset.classes import AFFINE, BIAS_FREE, check_class
from indexset.errors import InputError
from indexset.large.gram import gram_decide
from indexset.model.instance import Instance
from indexset.theory.theorems import theorem_verdict

POST_LN = "post-LN"
PRE_LN = "pre-LN"

MEANING = {
    POST_LN: (
        "post-LN block x ↦ LayerNorm(x + MLP(x)): the residual sum x + MLP(x) is exactly "
        "the paper's question, so the verdict is about this model's block"
    ),
    PRE_LN: (
        "pre-LN block x ↦ x + MLP(LN(x)): the verdict is about y ↦ y + MLP(y) on the "
        "normalised stream y = LN(x), not about the block as a map of x"
    ),
}

# config.json activation name → indexset activation (ungated / gated).
HF_ACTIVATIONS = {
    "relu": ("relu", "reglu"),
    "gelu": ("gelu", "geglu"),
    "gelu_new": ("gelu_tanh", "geglu"),
    "gelu_fast": ("gelu_tanh", "geglu"),
    "gelu_pytorch_tanh": ("gelu_tanh", "geglu"),
    "gelu_tanh": ("gelu_tanh", "geglu"),
    "silu": ("silu", "swiglu"),
    "swish": ("silu", "swiglu"),
    "softplus": ("softplus", None),
    "relu2": ("relu2", None),
    "sigmoid": (None, "glu"),
}

GATED_BY_UNGATED = {"relu": "reglu", "gelu": "geglu", "gelu_tanh": "geglu", "silu": "swiglu"}


@dataclass(frozen=True)
class Layout:
    """Where one model family keeps its MLP weights.

    Attributes
    ----------
    name : str
    pattern : str
        Regex matching the up (or gate) weight of layer ``i``; groups
        ``prefix`` and ``i``.
    up, down, gate : str
        Module names of layer ``{i}`` relative to the prefix.
    transposed : bool
        Weights stored (in, out) as in GPT-2's Conv1D.
    norm : str
        ``post-LN`` or ``pre-LN``.
    default_activation : str
        Used when neither the config nor an override names one.
    """

    name: str
    pattern: str
    up: str
    down: str
    gate: str | None = None
    transposed: bool = False
    norm: str = PRE_LN
    default_activation: str = "gelu"


LAYOUTS = (
    Layout("bert", r"(?P<prefix>(?:.+\.)?)encoder\.layer\.(?P<i>\d+)\.intermediate\.dense\.weight",
           "encoder.layer.{i}.intermediate.dense", "encoder.layer.{i}.output.dense", norm=POST_LN),
    Layout("gpt2", r"(?P<prefix>(?:.+\.)?)h\.(?P<i>\d+)\.mlp\.c_fc\.weight",
           "h.{i}.mlp.c_fc", "h.{i}.mlp.c_proj", transposed=True, default_activation="gelu_tanh"),
    Layout("opt", r"(?P<prefix>(?:.+\.)?)layers\.(?P<i>\d+)\.fc1\.weight",
           "layers.{i}.fc1", "layers.{i}.fc2", default_activation="relu"),
    Layout("gpt_neox", r"(?P<prefix>(?:.+\.)?)layers\.(?P<i>\d+)\.mlp\.dense_h_to_4h\.weight",
           "layers.{i}.mlp.dense_h_to_4h", "layers.{i}.mlp.dense_4h_to_h"),
    Layout("llama", r"(?P<prefix>(?:.+\.)?)layers\.(?P<i>\d+)\.mlp\.gate_proj\.weight",
           "layers.{i}.mlp.up_proj", "layers.{i}.mlp.down_proj", gate="layers.{i}.mlp.gate_proj",
           default_activation="silu"),
)


# ----------------------------------------------------------- checkpoint
class Checkpoint:
    """Tensor names → files of a safetensors checkpoint, read lazily.

    Use as a context manager; tensors are read one at a time.
    """

    def __init__(self, path: str) -> None:
        self.path = path
        self.files = checkpoint_files(path)
        self._stack = ExitStack()
        self._handles: dict[str, object] = {}
        self.where: dict[str, str] = {}

    def __enter__(self) -> Checkpoint:
        for file in self.files:
            handle = self._open(file)
            self._handles[file] = handle
            for name in handle.keys():  # noqa: SIM118 - safe_open handles are not iterable
                self.where.setdefault(name, file)
        if not self.where:
            raise InputError(self.path, "the safetensors file holds no tensors")
        return self

    def __exit__(self, *exc) -> None:
        self._stack.close()

    def _open(self, file: str):
        try:
            return self._stack.enter_context(safe_open(file, framework="np"))
        except Exception as exc:  # safetensors raises its own error types
            raise InputError(file, f"not a readable safetensors file ({type(exc).__name__}: {exc})") from None

    def __contains__(self, name: str) -> bool:
        return name in self.where

    def shape(self, name: str) -> tuple[int, ...]:
        """Shape of a tensor without reading it."""
        return tuple(self._handles[self.where[name]].get_slice(name).get_shape())

    def array(self, name: str) -> np.ndarray:
        """A tensor as float64 (exact for F64/F32/F16/BF16 and small integers)."""
        file = self.where[name]
        dtype = self._handles[file].get_slice(name).get_dtype()
        if dtype == "BF16":
            return read_bfloat16(file, name)
        if dtype not in ("F64", "F32", "F16", "I64", "I32", "I16", "I8", "U8"):
            raise InputError(file, f"tensor {name} has dtype {dtype}; supported: F64, F32, F16, BF16 and integers")
        values = self._handles[file].get_tensor(name)
        if values.dtype.kind in "iu" and values.size and max(abs(int(values.max())), abs(int(values.min()))) > 2**53:
            raise InputError(file, f"tensor {name} has integers beyond 2^53")
        return np.ascontiguousarray(values, dtype=np.float64)


def checkpoint_files(path: str) -> list[str]:
    """The safetensors files of a checkpoint path.

    Raises
    ------
    InputError
        Missing path, a pickle checkpoint (refused), or a folder without
        safetensors files.
    """
    if not os.path.exists(path):
        raise InputError(path, "no such file or folder")
    if os.path.isfile(path):
        if not path.endswith(".safetensors"):
            raise InputError(path, "expected a .safetensors file or a folder holding one (pickle checkpoints such as .bin/.pt are refused)")
        return [path]
    index = os.path.join(path, "model.safetensors.index.json")
    if os.path.exists(index):
        return _indexed_files(path, index)
    single = os.path.join(path, "model.safetensors")
    if os.path.exists(single):
        return [single]
    files = sorted(os.path.join(path, f) for f in os.listdir(path) if f.endswith(".safetensors"))
    if not files:
        raise InputError(path, "folder holds no .safetensors file (pickle checkpoints such as pytorch_model.bin are refused)")
    return files


def _indexed_files(folder: str, index: str) -> list[str]:
    try:
        with open(index, encoding="utf-8") as stream:
            weight_map = json.load(stream)["weight_map"]
        names = sorted(set(weight_map.values()))
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
        raise InputError(index, f"not a valid safetensors index ({type(exc).__name__})") from None
    files = [os.path.join(folder, name) for name in names]
    missing = [f for f in files if not os.path.exists(f)]
    if missing:
        raise InputError(index, f"shard {os.path.basename(missing[0])} is missing")
    return files


def read_bfloat16(file: str, name: str) -> np.ndarray:
    """Read one BF16 tensor from the raw safetensors bytes, exactly as float64.

    The header (8-byte little-endian length, then JSON) gives the byte
    range; each bfloat16 is the top half of a float32, so shifting the
    16-bit pattern left by 16 bits gives the float32 exactly.
    """
    with open(file, "rb") as stream:
        (length,) = struct.unpack("<Q", stream.read(8))
        header = json.loads(stream.read(length))
        entry = header[name]
        start, stop = entry["data_offsets"]
        stream.seek(8 + length + start)
        raw = stream.read(stop - start)
    bits = np.frombuffer(raw, dtype="<u2").astype(np.uint32) << 16
    return bits.view(np.float32).astype(np.float64).reshape(entry["shape"])


# ----------------------------------------------------------- the plan
@dataclass
class ScanPlan:
    """What will be scanned: layout, layers, activation and its meaning."""

    path: str
    model: str
    layout: Layout
    prefix: str
    layers: list
    activation: str
    activation_source: str
    norm: str
    notes: list = field(default_factory=list)

    @property
    def meaning(self) -> str:
        """What the verdict means for this norm placement."""
        return MEANING[self.norm]


def read_config(path: str) -> dict:
    """``config.json`` next to (or inside) the checkpoint path; {} if absent."""
    folder = path if os.path.isdir(path) else os.path.dirname(os.path.abspath(path))
    file = os.path.join(folder, "config.json")
    if not os.path.exists(file):
        return {}
    try:
        with open(file, encoding="utf-8") as stream:
            config = json.load(stream)
    except (OSError, ValueError) as exc:
        raise InputError(file, f"not valid JSON ({type(exc).__name__})") from None
    if not isinstance(config, dict):
        raise InputError(file, "config.json must hold a JSON object")
    return config


def detect_layout(names) -> tuple[Layout, str, list[int]]:
    """The first layout whose MLP weight names occur, with prefix and layer numbers.

    Raises
    ------
    InputError
        When no layout matches (source ``<checkpoint>``, replaced by the caller).
    """
    for layout in LAYOUTS:
        regex = re.compile(layout.pattern)
        found: dict[str, set] = {}
        for name in names:
            match = regex.fullmatch(name)
            if match:
                found.setdefault(match["prefix"], set()).add(int(match["i"]))
        if found:
            prefix = max(found, key=lambda p: len(found[p]))
            return layout, prefix, sorted(found[prefix])
    raise InputError("<checkpoint>", "no recognised MLP layout (BERT, GPT-2, OPT, GPT-NeoX, LLaMA-like)")


def resolve_activation(layout: Layout, config: dict, override: str | None, source: str) -> tuple[str, str]:
    """The indexset activation name and where it came from.

    Raises
    ------
    InputError
        For an activation the registry does not know.
    """
    gated = layout.gate is not None
    if override is not None:
        act = activations.get(override, "activation")
        name = act.name
        if gated and not act.gated:
            if name not in GATED_BY_UNGATED:
                raise InputError("activation", f"{name} has no gated form for the {layout.name} layout")
            name = GATED_BY_UNGATED[name]
        return name, "--activation"
    for key in ("hidden_act", "activation_function", "hidden_activation"):
        if isinstance(config.get(key), str):
            raw = config[key]
            mapped = HF_ACTIVATIONS.get(raw.lower())
            name = None if mapped is None else mapped[1 if gated else 0]
            if name is None:
                raise InputError(source, f"config {key} = {raw!r} is not supported; pass --activation NAME")
            return name, f"config.json {key} = {raw!r}"
    default = HF_ACTIVATIONS[layout.default_activation][1 if gated else 0]
    return default, f"{layout.name} default (no config.json activation)"


def _norm(layout: Layout, config: dict) -> tuple[str, list]:
    notes = []
    norm = layout.norm
    if layout.name == "opt" and config.get("do_layer_norm_before") is False:
        norm = POST_LN
        notes.append("config do_layer_norm_before = false: post-LN (as OPT-350m)")
    if layout.name == "gpt_neox" and config.get("use_parallel_residual", True):
        notes.append("parallel residual: x + attn(LN1(x)) + MLP(LN2(x)); the MLP part is judged as y ↦ y + MLP(y)")
    return norm, notes


def plan_scan(checkpoint: Checkpoint, activation: str | None = None) -> ScanPlan:
    """Recognise the layout of an open checkpoint and list its layers."""
    config = read_config(checkpoint.path)
    try:
        layout, prefix, layers = detect_layout(checkpoint.where)
    except InputError as exc:
        raise InputError(checkpoint.path, exc.problem) from None
    source = os.path.join(checkpoint.path if os.path.isdir(checkpoint.path) else os.path.dirname(checkpoint.path), "config.json")
    name, origin = resolve_activation(layout, config, activation, source)
    norm, notes = _norm(layout, config)
    model = str(config.get("_name_or_path") or config.get("model_type") or os.path.basename(os.path.normpath(checkpoint.path)))
    return ScanPlan(checkpoint.path, model, layout, prefix, layers, name, origin, norm, notes)


# ----------------------------------------------------------- scanning
def _tensor(checkpoint: Checkpoint, name: str, required: bool = True) -> np.ndarray | None:
    if name not in checkpoint:
        if required:
            raise InputError(checkpoint.path, f"tensor {name} is missing")
        return None
    return checkpoint.array(name)


def layer_instance(checkpoint: Checkpoint, plan: ScanPlan, layer: int) -> Instance:
    """The MLP block of one layer as an Instance (float64, identity skip)."""
    up_name = plan.prefix + plan.layout.up.format(i=layer)
    down_name = plan.prefix + plan.layout.down.format(i=layer)
    W_up = _tensor(checkpoint, up_name + ".weight")
    W_down = _tensor(checkpoint, down_name + ".weight")
    if plan.layout.transposed:
        W_up, W_down = np.ascontiguousarray(W_up.T), np.ascontiguousarray(W_down.T)
    if W_up.ndim != 2 or W_down.ndim != 2 or W_down.shape != W_up.shape[::-1]:
        raise InputError(checkpoint.path, f"layer {layer}: up weight {W_up.shape} and down weight {W_down.shape} do not form an (n, d) / (d, n) pair")
    b_up = _tensor(checkpoint, up_name + ".bias", required=False)
    b_down = _tensor(checkpoint, down_name + ".bias", required=False)
    source = f"{plan.path}:layer {layer}"
    return Instance(W_up, W_down, b_up=b_up, b_down=b_down, activation=plan.activation, source=source)


def gated_instance(checkpoint: Checkpoint, plan: ScanPlan, layer: int) -> Instance:
    """The gated MLP block of one layer as an Instance (float64, identity skip)."""
    gate, up, down = (plan.prefix + getattr(plan.layout, key).format(i=layer) for key in ("gate", "up", "down"))
    W_gate, W_up, W_down = (_tensor(checkpoint, name + ".weight") for name in (gate, up, down))
    if W_gate.shape != W_up.shape or W_down.shape != W_up.shape[::-1]:
        raise InputError(checkpoint.path, f"layer {layer}: gate {W_gate.shape}, up {W_up.shape} and down {W_down.shape} weights do not fit one block")
    if gate + ".bias" in checkpoint and np.any(checkpoint.array(gate + ".bias") != 0):
        raise InputError(checkpoint.path, f"layer {layer}: a bias on the gate projection is not supported")
    b_up = _tensor(checkpoint, up + ".bias", required=False)
    b_down = _tensor(checkpoint, down + ".bias", required=False)
    return Instance(W_up, W_down, b_up=b_up, b_down=b_down, W_gate=W_gate, activation=plan.activation, source=f"{plan.path}:layer {layer}")


def _gated_row(checkpoint: Checkpoint, plan: ScanPlan, layer: int, target_class: str) -> tuple[int, int, object]:
    """Verdict of a gated layer: by the paper's theorem from shapes and biases, or by Theorem C (MATH.md §8)."""
    gate = plan.prefix + plan.layout.gate.format(i=layer)
    up = plan.prefix + plan.layout.up.format(i=layer)
    for name in (gate, up, plan.prefix + plan.layout.down.format(i=layer)):
        if name + ".weight" not in checkpoint:
            raise InputError(checkpoint.path, f"tensor {name}.weight is missing")
    n, d = checkpoint.shape(gate + ".weight")
    biased = any(name + ".bias" in checkpoint and np.any(checkpoint.array(name + ".bias") != 0) for name in (gate, up))
    if target_class == BIAS_FREE and not biased:
        return d, n, theorem_verdict(activations.get(plan.activation), False, None, BIAS_FREE)
    return d, n, affine.decide(gated_instance(checkpoint, plan, layer), target_class)


def scan_layer(checkpoint: Checkpoint, plan: ScanPlan, layer: int, tol=None, target_class: str = AFFINE) -> dict:
    """Decide one layer against ``target_class``; return its row for the report."""
    start = time.perf_counter()
    if plan.layout.gate is not None:
        d, n, result = _gated_row(checkpoint, plan, layer, target_class)
    else:
        instance = layer_instance(checkpoint, plan, layer)
        d, n = instance.d, instance.n
        result = gram_decide(instance, tol=tol, target_class=target_class)
    certificate = result.certificate or {}
    return {
        "layer": layer,
        "d": d,
        "n": n,
        "activation": plan.activation,
        "class": target_class,
        "status": result.status,
        "reason": result.reason,
        "distance_lower": certificate.get("distance_lower"),
        "distance_upper": certificate.get("distance_upper"),
        "relative_lower": certificate.get("relative_lower"),
        "extension": result.extension,
        "time_s": round(time.perf_counter() - start, 6),
    }


@dataclass
class ScanReport:
    """Per-layer verdicts of one checkpoint."""

    model: str
    layout: str
    norm: str
    meaning: str
    activation: str
    activation_source: str
    layers: list
    notes: list = field(default_factory=list)
    tol: str | None = None
    target_class: str = AFFINE

    @property
    def exit_code(self) -> int:
        """0: every layer absorbable; 1: every layer decided, one not; 3: otherwise."""
        statuses = {row["status"] for row in self.layers}
        if statuses == {"absorbable"}:
            return 0
        if "unknown" not in statuses:
            return 1
        return 3

    def to_json(self) -> dict:
        """The ``--json`` payload."""
        return {
            "model": self.model,
            "layout": self.layout,
            "norm": self.norm,
            "meaning": self.meaning,
            "activation": self.activation,
            "activation_source": self.activation_source,
            "notes": self.notes,
            "tol": self.tol,
            "class": self.target_class,
            "layers": self.layers,
        }


def iter_scan(checkpoint: Checkpoint, plan: ScanPlan, tol=None, target_class: str = AFFINE) -> Iterator[dict]:
    """Rows of every layer in order, one layer in memory at a time."""
    for layer in plan.layers:
        yield scan_layer(checkpoint, plan, layer, tol, target_class)


def scan(path, activation: str | None = None, tol=None, progress: Callable | None = None, target_class: str = AFFINE) -> ScanReport:
    """Decide the MLP block of every layer of a checkpoint.

    Parameters
    ----------
    path : str or PathLike
        ``.safetensors`` file or checkpoint folder.
    activation : str, optional
        Override the activation (an indexset activation name).
    tol : Fraction, str or float, optional
        Tolerance τ on the largest residual entry (see :func:`gram_decide`).
    progress : callable, optional
        ``progress(done, total, row)``, called with ``row=None`` before the
        first layer and then after every layer.
    target_class : {"affine", "bias-free"}
        Which residual-free blocks count (:mod:`indexset.classes`).

    Returns
    -------
    ScanReport

    Raises
    ------
    InputError
        Bad path, pickle checkpoint, unrecognised layout, unsupported
        dtype or activation, inconsistent shapes.
    """
    path = os.fspath(path)
    target_class = check_class(target_class)
    with Checkpoint(path) as checkpoint:
        plan = plan_scan(checkpoint, activation)
        total = len(plan.layers)
        if progress:
            progress(0, total, None)
        rows = []
        for row in iter_scan(checkpoint, plan, tol, target_class):
            rows.append(row)
            if progress:
                progress(len(rows), total, row)
    return ScanReport(plan.model, plan.layout.name, plan.norm, plan.meaning, plan.activation, plan.activation_source, rows, plan.notes, None if tol is None else str(tol), target_class)
