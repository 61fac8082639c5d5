"""``indexset scan``: synthetic checkpoints of every layout, every verdict."""

from __future__ import annotations

import json
import struct

import numpy as np
import pytest
from safetensors.numpy import save_file

from indexset.cli.main import main
from indexset.errors import InputError
from indexset.large.scan import read_bfloat16, scan

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


def test_bert_post_ln(tmp_path):
    report = scan(bert(tmp_path))
    assert (report.layout, report.norm, report.activation) == ("bert", "post-LN", "gelu")
    assert statuses(report) == ["absorbable", "not_absorbable"]
    first, second = report.layers
    assert first["distance_lower"] == first["distance_upper"] == 0.0
    assert 0 < second["distance_lower"] <= second["distance_upper"]
    assert second["relative_lower"] == pytest.approx(second["distance_lower"] / 2.0)
    assert second["extension"]  # biases: necessity is an extension
    assert (first["d"], first["n"]) == (D, N)


def test_gpt2_conv1d_transposed_float16(tmp_path):
    report = scan(gpt2(tmp_path))
    assert (report.layout, report.norm, report.activation) == ("gpt2", "pre-LN", "gelu_tanh")
    assert statuses(report) == ["not_absorbable", "absorbable"]
    assert "normalised stream" in report.meaning


def test_opt_relu_post_ln_from_config(tmp_path):
    report = scan(opt(tmp_path, dtype=np.float32))
    assert (report.layout, report.norm, report.activation) == ("opt", "post-LN", "relu")
    assert statuses(report) == ["not_absorbable", "not_absorbable", "absorbable"]
    assert any("do_layer_norm_before" in note for note in report.notes)


def test_neox_sharded_with_index(tmp_path):
    report = scan(neox_sharded(tmp_path))
    assert report.layout == "gpt_neox" and report.norm == "pre-LN"
    assert statuses(report) == ["absorbable", "not_absorbable"]


def test_llama_swiglu_by_theorem(tmp_path):
    paper = scan(llama(tmp_path), target_class="bias-free")
    assert paper.layout == "llama" and paper.activation == "swiglu"
    assert statuses(paper) == ["not_absorbable", "not_absorbable"]
    assert all("linearisation" in row["reason"] and row["class"] == "bias-free" for row in paper.layers)
    assert all(row["distance_lower"] is None for row in paper.layers)
    # With biases allowed in g: Theorem C (Gaussian gate rows are pairwise non-collinear).
    report = scan(llama(tmp_path))
    assert statuses(report) == ["not_absorbable", "not_absorbable"]
    assert all("Theorem C" in row["reason"] and row["class"] == "affine" for row in report.layers)
    # A bias on the up projection: the paper's argument fails; Theorem C's bias-free part still decides.
    biased = scan(llama(tmp_path, bias=True), target_class="bias-free")
    assert statuses(biased) == ["not_absorbable", "not_absorbable"]
    assert all("Theorem C" in row["reason"] for row in biased.layers)


def test_activation_override_and_progress(tmp_path):
    calls = []
    report = scan(bert(tmp_path), activation="relu", progress=lambda done, total, row: calls.append((done, total, row is None)))
    assert report.activation == "relu" and report.activation_source == "--activation"
    assert calls == [(0, 2, True), (1, 2, False), (2, 2, False)]
    assert scan(llama(tmp_path), activation="gelu").activation == "geglu"


def test_single_file_without_config_uses_layout_default(tmp_path):
    folder = gpt2(tmp_path)
    (folder / "config.json").unlink()
    report = scan(folder / "model.safetensors")
    assert report.activation == "gelu_tanh" and "default" in report.activation_source


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


def test_bfloat16_read_exactly(tmp_path):
    tensors = gpt2_tensors()
    exact = {k: (v.astype(np.float32).view(np.uint32) & 0xFFFF0000).view(np.float32).astype(np.float64) for k, v in tensors.items()}
    folder = tmp_path / "bf16"
    folder.mkdir()
    write_bfloat16(folder / "model.safetensors", exact)
    name = "transformer.h.1.mlp.c_fc.weight"
    assert np.array_equal(read_bfloat16(str(folder / "model.safetensors"), name), exact[name])
    assert statuses(scan(folder)) == ["not_absorbable", "absorbable"]


def test_cli_json(tmp_path, capsys):
    code = main(["scan", str(opt(tmp_path)), "--json"])
    payload = json.loads(capsys.readouterr().out)
    assert code == 1
    assert payload["layout"] == "opt" and payload["model"] == "opt"
    keys = {"layer", "d", "n", "activation", "status", "reason", "distance_lower", "distance_upper", "relative_lower", "time_s"}
    assert all(keys <= set(row) for row in payload["layers"])
    assert [row["layer"] for row in payload["layers"]] == [0, 1, 2]


def test_cli_table_and_tolerance(tmp_path, capsys):
    code = main(["scan", str(bert(tmp_path)), "--tol", "100"])
    out = capsys.readouterr().out
    assert "post-LN" in out and "absorbable" in out and "τ = 100" in out
    assert code == 0  # with τ = 100 every layer is absorbable within τ


def test_cli_bad_inputs(tmp_path, capsys):
    assert main(["scan", str(tmp_path / "missing")]) == 2
    pickled = tmp_path / "pickled"
    pickled.mkdir()
    (pickled / "pytorch_model.bin").write_bytes(b"\x80\x04.")
    assert main(["scan", str(pickled)]) == 2
    assert main(["scan", str(pickled / "pytorch_model.bin")]) == 2
    other = write(tmp_path / "other", {"encoder.weight": np.zeros((3, 3))})
    assert main(["scan", str(other)]) == 2
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "model.safetensors").write_bytes(b"not a safetensors file")
    assert main(["scan", str(broken)]) == 2
    weird = write(tmp_path / "weird", {"h.0.mlp.c_fc.weight": np.zeros((D, N)), "h.0.mlp.c_proj.weight": np.zeros((N, D))}, {"activation_function": "mish"})
    assert main(["scan", str(weird)]) == 2
    err = capsys.readouterr().err
    assert err.count("indexset: error:") == 6 and "mish" in err


def test_missing_down_projection(tmp_path):
    folder = write(tmp_path / "half", {"h.0.mlp.c_fc.weight": np.zeros((D, N))})
    with pytest.raises(InputError, match="missing"):
        scan(folder)
