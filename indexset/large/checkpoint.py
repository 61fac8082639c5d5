"""Checkpoints as named tensors: safetensors files, Hugging Face folders and cache entries, in-memory state dicts.

A checkpoint is any of

- a ``.safetensors`` file, or a sharded index ``model.safetensors.index.json``;
- a folder holding ``model.safetensors``, an index and its shards, or
  other ``*.safetensors`` files, usually beside a ``config.json``;
- a model id (``sentence-transformers/all-MiniLM-L6-v2``) already in the
  local Hugging Face cache, found by huggingface_hub without any network;
- a state dict (tensor name → tensor) or an ``nn.Module`` (its
  ``state_dict()``, and its ``config`` for the activation).

Files are read with :func:`safetensors.safe_open` (numpy framework,
memory-mapped, one tensor at a time), never with pickle or ``torch.load``.
Every tensor arrives as float64 holding exactly its stored value.

Recognised layouts (tensor names may carry any prefix such as ``bert.``,
``transformer.``, ``model.``, ``gpt_neox.``):

========== ================================================== ============ ========
layout     MLP tensors of layer i                             activation   norm
========== ================================================== ============ ========
bert       encoder.layer.i.intermediate.dense / .output.dense hidden_act   post-LN
gpt2       h.i.mlp.c_fc / h.i.mlp.c_proj (Conv1D: transposed) gelu_new     pre-LN
opt        layers.i.fc1 / layers.i.fc2                        relu         pre-LN
gpt_neox   layers.i.mlp.dense_h_to_4h / dense_4h_to_h         hidden_act   pre-LN
llama      layers.i.mlp.gate_proj, up_proj / down_proj        silu → SwiGLU pre-LN
========== ================================================== ============ ========
"""

from __future__ import annotations

import json
import os
import re
import struct
from collections.abc import Mapping
from contextlib import ExitStack
from dataclasses import dataclass

import numpy as np

from indexset.errors import InputError
from indexset.model.torch_io import as_float64

POST_LN = "post-LN"
PRE_LN = "pre-LN"
INDEX_FILE = "model.safetensors.index.json"

# A Hugging Face model id: "name" or "owner/name" (letters, digits, "-", "_", ".").
_MODEL_ID = re.compile(r"[A-Za-z0-9][\w.-]*(/[A-Za-z0-9][\w.-]*)?")


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

    def modules(self, prefix: str, layer: int) -> dict[str, str]:
        """The module names of one layer by role (``up``, ``down`` and, when gated, ``gate``)."""
        roles = {"gate": self.gate, "up": self.up, "down": self.down}
        return {role: prefix + name.format(i=layer) for role, name in roles.items() if name is not None}


LAYOUTS = (
    Layout("bert", r"(?P<prefix>(?:.+\.)?)encoder\.layer\.(?P<i>\d+)\.intermediate\.dense\.weight",
           "encoder.layer.{i}.intermediate.dense", "encoder.layer.{i}.output.dense", norm=POST_LN),
    Layout("gpt2", r"(?P<prefix>(?:.+\.)?)h\.(?P<i>\d+)\.mlp\.c_fc\.weight",
           "h.{i}.mlp.c_fc", "h.{i}.mlp.c_proj", transposed=True, default_activation="gelu_new"),
    Layout("opt", r"(?P<prefix>(?:.+\.)?)layers\.(?P<i>\d+)\.fc1\.weight",
           "layers.{i}.fc1", "layers.{i}.fc2", default_activation="relu"),
    Layout("gpt_neox", r"(?P<prefix>(?:.+\.)?)layers\.(?P<i>\d+)\.mlp\.dense_h_to_4h\.weight",
           "layers.{i}.mlp.dense_h_to_4h", "layers.{i}.mlp.dense_4h_to_h"),
    Layout("llama", r"(?P<prefix>(?:.+\.)?)layers\.(?P<i>\d+)\.mlp\.gate_proj\.weight",
           "layers.{i}.mlp.up_proj", "layers.{i}.mlp.down_proj", gate="layers.{i}.mlp.gate_proj",
           default_activation="silu"),
)


def detect_layout(names, source: str) -> tuple[Layout, str, list[int]]:
    """The first layout whose MLP weight names occur, with prefix and layer numbers.

    Raises
    ------
    InputError
        When no layout matches.
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
    raise InputError(source, "no recognised MLP layout (BERT, GPT-2, OPT, GPT-NeoX, LLaMA-like)")


# ----------------------------------------------------------- checkpoints
class Checkpoint:
    """Named tensors of one model, read one at a time; use as a context manager.

    Attributes
    ----------
    label : str
        What errors name: the path, the model id or ``<state dict>``.
    model : str
        The model's name for reports (model id, config ``_name_or_path``,
        or the folder's name).
    config : dict
        The model's config (``config.json``, or ``model.config``).
    config_source : str
        Where the config came from, for errors about it.
    """

    label: str = "<checkpoint>"
    model: str = "<checkpoint>"
    config: dict
    config_source: str = "config"

    def __enter__(self) -> Checkpoint:
        return self

    def __exit__(self, *exc) -> None:
        return None

    def names(self) -> list[str]:
        """Every tensor name."""
        raise NotImplementedError

    def __contains__(self, name: str) -> bool:
        raise NotImplementedError

    def shape(self, name: str) -> tuple[int, ...]:
        """Shape of a tensor without reading its values."""
        raise NotImplementedError

    def array(self, name: str) -> np.ndarray:
        """A tensor as float64, exactly."""
        raise NotImplementedError


class SafetensorsCheckpoint(Checkpoint):
    """The safetensors files of a checkpoint on disk.

    Parameters
    ----------
    files : list of str
        The ``.safetensors`` files (shards).
    label : str
        The path or model id the user gave.
    folder : str
        Where ``config.json`` is looked for.
    model : str, optional
        The model's name (default: config ``_name_or_path``, else the folder's name).
    """

    def __init__(self, files: list[str], label: str, folder: str, model: str | None = None) -> None:
        self.files = files
        self.label = label
        self.config_source = os.path.join(folder, "config.json")
        self.config = read_config(self.config_source)
        self.model = model or str(self.config.get("_name_or_path") or self.config.get("model_type") or os.path.basename(os.path.normpath(folder)))
        self._stack = ExitStack()
        self._handles: dict[str, object] = {}
        self.where: dict[str, str] = {}

    def __enter__(self) -> SafetensorsCheckpoint:
        try:
            for file in self.files:
                handle = self._open(file)
                self._handles[file] = handle
                for name in handle.keys():  # noqa: SIM118 - safe_open handles are not iterable
                    self.where.setdefault(name, file)
        except BaseException:
            self._stack.close()
            raise
        if not self.where:
            self._stack.close()
            raise InputError(self.label, "the safetensors file holds no tensors")
        return self

    def __exit__(self, *exc) -> None:
        self._stack.close()

    def _open(self, file: str):
        from safetensors import safe_open  # only when a file is read: `indexset --help` stays fast

        try:
            return self._stack.enter_context(safe_open(file, framework="np"))
        except Exception as exc:  # safetensors raises its own error types
            raise InputError(file, f"not a readable safetensors file ({type(exc).__name__}: {exc})") from None

    def names(self) -> list[str]:
        return list(self.where)

    def __contains__(self, name: str) -> bool:
        return name in self.where

    def shape(self, name: str) -> tuple[int, ...]:
        return tuple(self._handles[self.where[name]].get_slice(name).get_shape())

    def array(self, name: str) -> np.ndarray:
        """A tensor as float64 (exact for F64/F32/F16/BF16 and integers up to 2^53)."""
        file = self.where[name]
        dtype = self._handles[file].get_slice(name).get_dtype()
        if dtype == "BF16":
            return read_bfloat16(file, name)
        if dtype not in ("F64", "F32", "F16", "I64", "I32", "I16", "I8", "U8"):
            raise InputError(file, f"tensor {name} has dtype {dtype}; supported: F64, F32, F16, BF16 and integers")
        return as_float64(self._handles[file].get_tensor(name), file, f"tensor {name}")


class StateDictCheckpoint(Checkpoint):
    """An in-memory state dict (tensor name → torch tensor or numpy array).

    Parameters
    ----------
    tensors : Mapping
        ``model.state_dict()`` or any mapping of names to tensors.
    config : dict, optional
        The model's config (activation, norm placement).
    model : str
        The model's name for reports.
    """

    def __init__(self, tensors: Mapping, config: dict | None = None, model: str = "<state dict>") -> None:
        bad = next((name for name in tensors if not isinstance(name, str)), None)
        if bad is not None:
            raise InputError("source", f"a state dict maps tensor names (strings) to tensors; found the key {bad!r}")
        self.tensors = tensors
        self.config = dict(config or {})
        self.config_source = "config"
        self.label = model
        self.model = str(self.config.get("_name_or_path") or model)

    def names(self) -> list[str]:
        return list(self.tensors)

    def __contains__(self, name: str) -> bool:
        return name in self.tensors

    def shape(self, name: str) -> tuple[int, ...]:
        value = self.tensors[name]
        return tuple(int(k) for k in (value.shape if hasattr(value, "shape") else np.shape(value)))

    def array(self, name: str) -> np.ndarray:
        return as_float64(self.tensors[name], self.label, f"tensor {name}")


def open_checkpoint(source, *, config: dict | None = None, cache_dir=None) -> Checkpoint:
    """The checkpoint behind a path, model id, state dict or module (not yet opened).

    Parameters
    ----------
    source : str, PathLike, Mapping or nn.Module
        See the module docstring.
    config : dict, optional
        The model's config; overrides ``config.json`` and ``model.config``
        key by key.
    cache_dir : str or PathLike, optional
        The Hugging Face cache for model ids (default: huggingface_hub's,
        ``HF_HUB_CACHE`` or ``HF_HOME/hub``).

    Raises
    ------
    InputError
        A path that does not exist and no cached model of that id, a
        pickle checkpoint (refused), a folder without safetensors files,
        a broken index, or an object of another kind (parameter ``source``).
    """
    if isinstance(source, Mapping):
        checkpoint: Checkpoint = StateDictCheckpoint(source, config)
    elif callable(getattr(source, "state_dict", None)):
        checkpoint = StateDictCheckpoint(source.state_dict(), _module_config(source), _module_name(source))
    elif isinstance(source, (str, os.PathLike)):
        checkpoint = _on_disk(os.fspath(source), cache_dir)
    else:
        raise InputError("source", f"expected a path, a model id, a state dict or an nn.Module, got {type(source).__name__}")
    if config:
        checkpoint.config = {**checkpoint.config, **config}
        checkpoint.config_source = "config"
    return checkpoint


def _module_config(module) -> dict:
    config = getattr(module, "config", None)
    if config is None:
        return {}
    if isinstance(config, Mapping):
        return dict(config)
    if callable(getattr(config, "to_dict", None)):
        return dict(config.to_dict())
    return {key: value for key, value in vars(config).items() if not key.startswith("_") or key == "_name_or_path"}


def _module_name(module) -> str:
    config = getattr(module, "config", None)
    name = getattr(config, "name_or_path", None) or getattr(config, "_name_or_path", None)
    return str(name) if name else type(module).__name__


def _on_disk(path: str, cache_dir) -> SafetensorsCheckpoint:
    if not os.path.exists(path):
        folder = cached_snapshot(path, cache_dir)
        return SafetensorsCheckpoint(checkpoint_files(folder), path, folder, model=path)
    folder = path if os.path.isdir(path) else os.path.dirname(os.path.abspath(path))
    return SafetensorsCheckpoint(checkpoint_files(path), path, folder)


def cached_snapshot(model_id: str, cache_dir=None) -> str:
    """The folder of a model id's snapshot in the local Hugging Face cache, found without network.

    Raises
    ------
    InputError
        Not a model id, or not in the cache.
    """
    if not _MODEL_ID.fullmatch(model_id) or model_id.endswith((".safetensors", ".json", ".bin", ".pt")):
        raise InputError(model_id, "no such file or folder")
    from huggingface_hub import snapshot_download
    from huggingface_hub.utils import LocalEntryNotFoundError  # also where releases before 0.24 keep it

    where = f"the Hugging Face cache {os.fspath(cache_dir)}" if cache_dir is not None else "the local Hugging Face cache"
    try:
        return snapshot_download(model_id, cache_dir=cache_dir, local_files_only=True)
    except LocalEntryNotFoundError:
        raise InputError(model_id, f"no such file or folder, and no snapshot of this model id in {where} (nothing is downloaded)") from None
    except (ValueError, OSError) as exc:
        raise InputError(model_id, f"no such file or folder, and not a cached model id ({type(exc).__name__}: {exc})") from None


def checkpoint_files(path: str) -> list[str]:
    """The safetensors files of a checkpoint path (file, index or folder).

    Raises
    ------
    InputError
        Missing path, a pickle checkpoint (refused), or a folder without
        safetensors files.
    """
    if not os.path.exists(path):
        raise InputError(path, "no such file or folder")
    if os.path.isfile(path):
        if path.endswith(".index.json"):
            return _indexed_files(os.path.dirname(os.path.abspath(path)), path)
        if not path.endswith(".safetensors"):
            raise InputError(path, "expected a .safetensors file, a safetensors index (.index.json) or a folder holding them (pickle checkpoints such as .bin/.pt are refused)")
        return [path]
    index = os.path.join(path, INDEX_FILE)
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
    if not names or not all(isinstance(name, str) for name in names):
        raise InputError(index, "not a valid safetensors index (its weight_map names no shard files)")
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
    values = bits.view(np.float32).astype(np.float64).reshape(entry["shape"])
    if not np.isfinite(values).all():
        raise InputError(file, f"tensor {name}: contains NaN or Inf")
    return values


def read_config(file: str) -> dict:
    """A ``config.json``; {} if absent.

    Raises
    ------
    InputError
        Not JSON, or not a JSON object.
    """
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

