"""Synthetic checkpoints for the scan tests: every layout, planted (absorbable) and plain layers.

A planted layer has W_up[S] = U (unimodular) and W_down[:, S] = −U⁻¹ (integers) on
S = {1, 4, 7, 10}, so W_down[:,S]·W_up[S,:] = −I holds exactly in every dtype;
the other entries are Gaussian, rounded to the checkpoint's dtype.
"""

from __future__ import annotations

import json
import struct

import numpy as np
from safetensors.numpy import save_file

D, N = 4, 16
S = [1, 4, 7, 10]
UNIMODULAR = np.array([[1, 1, 0, 0], [0, 1, 1, 0], [0, 0, 1, 1], [0, 0, 0, 1]], dtype=np.float64)


def mlp(seed: int, absorbable: bool, dtype=np.float64):
    """(W_up (n, d), W_down (d, n), b_up, b_down); absorbable ones satisfy W_down[:,S]W_up[S,:] = −I."""
    rng = np.random.default_rng(seed)
    W_up = rng.standard_normal((N, D)).astype(dtype).astype(np.float64)
    W_down = rng.standard_normal((D, N)).astype(dtype).astype(np.float64)
    if absorbable:
        W_up[S] = UNIMODULAR
        W_down[:, S] = -np.linalg.inv(UNIMODULAR).round()
    b_up = rng.standard_normal(N).astype(dtype).astype(np.float64)
    b_down = rng.standard_normal(D).astype(dtype).astype(np.float64)
    return W_up, W_down, b_up, b_down


def write(folder, tensors, config=None, name="model.safetensors", dtype=np.float64):
    folder.mkdir(parents=True, exist_ok=True)
    save_file({k: np.ascontiguousarray(v, dtype=dtype) for k, v in tensors.items()}, str(folder / name))
    if config is not None:
        (folder / "config.json").write_text(json.dumps(config))
    return folder


def bert(tmp_path, dtype=np.float64):
    tensors = {"bert.embeddings.word_embeddings.weight": np.zeros((10, D))}
    for i in range(2):
        W_up, W_down, b_up, b_down = mlp(i, absorbable=i == 0, dtype=dtype)
        p = f"bert.encoder.layer.{i}."
        tensors.update({
            p + "attention.output.dense.weight": np.eye(D), p + "attention.output.dense.bias": np.zeros(D),
            p + "intermediate.dense.weight": W_up, p + "intermediate.dense.bias": b_up,
            p + "output.dense.weight": W_down, p + "output.dense.bias": b_down,
        })
    return write(tmp_path / "bert", tensors, {"model_type": "bert", "hidden_act": "gelu"}, dtype=dtype)


def gpt2_tensors():
    tensors = {"transformer.wte.weight": np.zeros((10, D))}
    for i in range(2):
        W_up, W_down, b_up, b_down = mlp(10 + i, absorbable=i == 1, dtype=np.float16)
        p = f"transformer.h.{i}."
        tensors.update({
            p + "attn.c_proj.weight": np.eye(D),
            p + "mlp.c_fc.weight": W_up.T, p + "mlp.c_fc.bias": b_up,  # Conv1D: (in, out)
            p + "mlp.c_proj.weight": W_down.T, p + "mlp.c_proj.bias": b_down,
        })
    return tensors


def gpt2(tmp_path):
    return write(tmp_path / "gpt2", gpt2_tensors(), {"model_type": "gpt2", "activation_function": "gelu_new"})


def opt(tmp_path, dtype=np.float64):
    tensors = {}
    for i in range(3):
        W_up, W_down, b_up, b_down = mlp(20 + i, absorbable=i == 2, dtype=dtype)
        p = f"model.decoder.layers.{i}."
        tensors.update({p + "fc1.weight": W_up, p + "fc1.bias": b_up, p + "fc2.weight": W_down, p + "fc2.bias": b_down})
    config = {"model_type": "opt", "activation_function": "relu", "do_layer_norm_before": False}
    return write(tmp_path / "opt", tensors, config, dtype=dtype)


def neox_sharded(tmp_path):
    folder = tmp_path / "neox"
    weight_map = {}
    for i in range(2):
        W_up, W_down, b_up, b_down = mlp(30 + i, absorbable=i == 0)
        p = f"gpt_neox.layers.{i}.mlp."
        shard = f"model-0000{i + 1}-of-00002.safetensors"
        tensors = {p + "dense_h_to_4h.weight": W_up, p + "dense_h_to_4h.bias": b_up, p + "dense_4h_to_h.weight": W_down, p + "dense_4h_to_h.bias": b_down}
        write(folder, tensors, name=shard)
        weight_map.update({name: shard for name in tensors})
    (folder / "model.safetensors.index.json").write_text(json.dumps({"metadata": {}, "weight_map": weight_map}))
    (folder / "config.json").write_text(json.dumps({"model_type": "gpt_neox", "hidden_act": "gelu"}))
    return folder


def llama(tmp_path, bias=False):
    rng = np.random.default_rng(40)
    tensors = {}
    for i in range(2):
        p = f"model.layers.{i}.mlp."
        tensors.update({p + "gate_proj.weight": rng.standard_normal((N, D)), p + "up_proj.weight": rng.standard_normal((N, D)), p + "down_proj.weight": rng.standard_normal((D, N))})
        if bias:
            tensors[p + "up_proj.bias"] = np.ones(N)
    return write(tmp_path / ("llama_bias" if bias else "llama"), tensors, {"model_type": "llama", "hidden_act": "silu"})


def statuses(report):
    return [row["status"] for row in report.layers]


def write_bfloat16(path, tensors):
    """A safetensors file with BF16 tensors (safetensors.numpy cannot write them)."""
    header, chunks, offset = {}, [], 0
    for name, value in tensors.items():
        bits = (np.ascontiguousarray(value, dtype=np.float32).view(np.uint32) >> 16).astype("<u2")
        raw = bits.tobytes()
        header[name] = {"dtype": "BF16", "shape": list(value.shape), "data_offsets": [offset, offset + len(raw)]}
        chunks.append(raw)
        offset += len(raw)
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)
    path.write_bytes(struct.pack("<Q", len(text)) + text + b"".join(chunks))
