"""``indexset scan``: synthetic checkpoints of every layout, every verdict."""

from __future__ import annotations

import json

import numpy as np
import pytest
from checkpoints import D, N, bert, gpt2, gpt2_tensors, llama, neox_sharded, opt, statuses, write, write_bfloat16

from indexset.cli.main import main
from indexset.errors import InputError
from indexset.large.checkpoint import read_bfloat16
from indexset.large.scan import scan


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
    assert all(row["argument"] == "MATH.md §4" and row["class"] == "bias-free" for row in paper.layers)  # the paper's linearisation
    assert all(row["distance_lower"] is None for row in paper.layers)
    # With biases allowed in g: Theorem C (Gaussian gate rows are pairwise non-collinear).
    report = scan(llama(tmp_path))
    assert statuses(report) == ["not_absorbable", "not_absorbable"]
    assert all(row["argument"] == "MATH.md §8.5" and row["class"] == "affine" for row in report.layers)
    # A bias on the up projection: the paper's argument fails; Theorem C's bias-free part still decides.
    biased = scan(llama(tmp_path, bias=True), target_class="bias-free")
    assert statuses(biased) == ["not_absorbable", "not_absorbable"]
    assert all(row["argument"] == "MATH.md §8.5" for row in biased.layers)


def test_activation_override_and_progress(tmp_path):
    calls = []
    report = scan(bert(tmp_path), activation="relu", progress=lambda done, total, row: calls.append((done, total, row is None)))
    assert report.activation == "relu" and report.activation_source == "override"
    assert calls == [(0, 2, True), (1, 2, False), (2, 2, False)]
    assert scan(llama(tmp_path), activation="gelu").activation == "geglu"


def test_single_file_without_config_uses_layout_default(tmp_path):
    folder = gpt2(tmp_path)
    (folder / "config.json").unlink()
    report = scan(folder / "model.safetensors")
    assert report.activation == "gelu_tanh" and "default" in report.activation_source


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
