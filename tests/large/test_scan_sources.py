"""``scan`` on everything a Hugging Face user has: folders, files, indexes, cached model ids, state dicts, models.

The expected verdicts come from the construction (layers planted to satisfy
(★) or not, tests/large/test_scan.py); distances and best sets are checked
against a brute force over every index set in numpy.
"""

from __future__ import annotations

import itertools
import json
import os
import subprocess
import sys

import numpy as np
import pytest
import torch
from checkpoints import D, N, bert, gpt2_tensors, llama, neox_sharded, opt, statuses, write

import indexset
from indexset.budget import TIME_LIMIT
from indexset.errors import InputError
from indexset.large.scan import extract_layer, layer_name, parse_layers, scan
from indexset.model.instance import Instance

COMMIT = "0123456789abcdef0123456789abcdef01234567"


def hf_cache(root, repo_id, build):
    """A Hugging Face cache holding one snapshot of ``repo_id``: refs/main, blobs and the snapshot's links to them."""
    repo = root / f"models--{repo_id.replace('/', '--')}"
    (repo / "refs").mkdir(parents=True)
    (repo / "refs" / "main").write_text(COMMIT)
    staged = build(root / "staging")
    snapshot = repo / "snapshots" / COMMIT
    snapshot.mkdir(parents=True)
    (repo / "blobs").mkdir()
    for file in sorted(staged.iterdir()):
        blob = repo / "blobs" / f"blob-{file.name}"
        os.replace(file, blob)
        (snapshot / file.name).symlink_to(os.path.relpath(blob, snapshot))
    return root


def brute_distances(W_up, W_down):
    """‖W_down[:,S]·W_up[S,:] + I‖_F for every S (c = 1), by enumeration; rows of ``sets`` are the 0/1 vectors."""
    n, d = W_up.shape
    sets = np.array(list(itertools.product((0, 1), repeat=n)), dtype=np.float64)
    products = np.einsum("ai,ib->iab", W_down, W_up).reshape(n, d * d)
    residuals = sets @ products + np.eye(d).ravel()
    return sets, np.sqrt((residuals**2).sum(axis=1))


def test_rows_are_named_by_the_checkpoints_tensors_and_match_a_brute_force(tmp_path):
    folder = bert(tmp_path)
    report = scan(folder)
    from safetensors.numpy import load_file

    tensors = load_file(str(folder / "model.safetensors"))
    for row in report.layers:
        p = f"bert.encoder.layer.{row['layer']}."
        assert row["tensors"] == {"up": p + "intermediate.dense", "down": p + "output.dense"}
        assert row["name"] == f"bert.encoder.layer.{row['layer']}.{{intermediate,output}}.dense"
        W_up, W_down = tensors[p + "intermediate.dense.weight"], tensors[p + "output.dense.weight"]
        sets, distances = brute_distances(W_up, W_down)
        best = np.zeros(N)
        best[row["best_set"]] = 1
        at_best = distances[np.flatnonzero((sets == best).all(axis=1))[0]]
        assert row["best_set_size"] == len(row["best_set"])
        assert row["distance_upper"] == pytest.approx(at_best, rel=1e-9, abs=1e-12)
        assert row["distance_lower"] <= distances.min() + 1e-12 <= row["distance_upper"] + 2e-12
        assert row["relative_upper"] == pytest.approx(row["distance_upper"] / np.sqrt(D))
    assert report.layers[0]["best_set"] == [1, 4, 7, 10]  # the planted S, at distance 0


def test_layer_names():
    assert layer_name(["model.layers.3.mlp.gate_proj", "model.layers.3.mlp.up_proj", "model.layers.3.mlp.down_proj"]) == "model.layers.3.mlp.{gate,up,down}_proj"
    assert layer_name(["transformer.h.0.mlp.c_fc", "transformer.h.0.mlp.c_proj"]) == "transformer.h.0.mlp.c_{fc,proj}"
    assert layer_name(["gpt_neox.layers.1.mlp.dense_h_to_4h", "gpt_neox.layers.1.mlp.dense_4h_to_h"]) == "gpt_neox.layers.1.mlp.dense_{h_to_4h,4h_to_h}"


def test_single_file_and_index_file(tmp_path):
    folder = opt(tmp_path)
    assert statuses(scan(folder / "model.safetensors")) == ["not_absorbable", "not_absorbable", "absorbable"]
    sharded = neox_sharded(tmp_path)
    report = scan(sharded / "model.safetensors.index.json")
    assert report.layout == "gpt_neox" and statuses(report) == ["absorbable", "not_absorbable"]
    assert report.activation_source == "config hidden_act = 'gelu'"  # config.json beside the index


def test_layers_selection():
    assert parse_layers("0,3,5-7") == [0, 3, 5, 6, 7]
    assert parse_layers(" 2 , 1-1,2") == [1, 2]
    for bad in ("", "a", "3-", "5-3", "1,,2", "-1"):
        with pytest.raises(InputError) as error:
            parse_layers(bad)
        assert error.value.source == "layers"


def test_layers_and_time_limit(tmp_path):
    folder = opt(tmp_path)
    assert [row["layer"] for row in scan(folder, layers="0,2").layers] == [0, 2]
    assert [row["layer"] for row in scan(folder, layers=[2]).layers] == [2]
    for bad in ("7", [0, 9], [True]):
        with pytest.raises(InputError) as error:
            scan(folder, layers=bad)
        assert error.value.source == "layers"
    gone = scan(folder, time_limit=1e-9)  # spent before the first layer starts
    assert statuses(gone) == ["unknown"] * 3 and all(row["halted"] == TIME_LIMIT for row in gone.layers)
    assert gone.exit_code == 3 and all(row["d"] == D and row["n"] == N for row in gone.layers)
    assert statuses(scan(folder, time_limit=1e6)) == ["not_absorbable", "not_absorbable", "absorbable"]
    with pytest.raises(InputError) as error:
        scan(folder, time_limit=0)
    assert error.value.source == "time_limit"


def test_model_id_in_the_local_cache(tmp_path):
    cache = hf_cache(tmp_path / "hub", "org/tiny-bert", bert)
    report = scan("org/tiny-bert", cache_dir=cache)
    assert report.model == "org/tiny-bert" and report.layout == "bert"
    assert statuses(report) == ["absorbable", "not_absorbable"]
    with pytest.raises(InputError) as error:
        scan("org/not-cached", cache_dir=cache)
    assert error.value.source == "org/not-cached" and "cache" in error.value.problem
    with pytest.raises(InputError, match="no such file"):
        scan(str(tmp_path / "missing" / "model.safetensors"), cache_dir=cache)


@pytest.mark.slow
def test_cli_finds_a_model_id_through_hf_hub_cache(tmp_path):
    """The real command in a fresh process: HF_HUB_CACHE is read as huggingface_hub reads it, at its import."""
    cache = hf_cache(tmp_path / "hub", "sentence-transformers/all-MiniLM-L6-v2", bert)
    env = {**os.environ, "HF_HUB_CACHE": str(cache), "HF_HUB_OFFLINE": "1"}
    process = subprocess.run(
        [sys.executable, "-m", "indexset", "scan", "sentence-transformers/all-MiniLM-L6-v2", "--json"],
        capture_output=True, text=True, env=env, cwd=tmp_path, timeout=120,
    )
    assert process.returncode == 1, process.stderr
    payload = json.loads(process.stdout)
    assert payload["model"] == "sentence-transformers/all-MiniLM-L6-v2"
    assert [row["status"] for row in payload["layers"]] == ["absorbable", "not_absorbable"]


def _module(tensors: dict, config=None) -> torch.nn.Module:
    """A model whose state_dict() holds exactly ``tensors`` (nested submodules, as transformers builds them)."""
    root = torch.nn.Module()
    for name, value in tensors.items():
        *path, leaf = name.split(".")
        module = root
        for part in path:
            if not hasattr(module, part):
                module.add_module(part, torch.nn.Module())
            module = getattr(module, part)
        module.register_parameter(leaf, torch.nn.Parameter(value, requires_grad=True))
    if config is not None:
        root.config = config
    return root


class _Config:
    """Stands for a transformers PretrainedConfig: attributes and to_dict()."""

    def __init__(self, **values) -> None:
        self.__dict__.update(values)
        self.name_or_path = values.get("_name_or_path", "")

    def to_dict(self) -> dict:
        return dict(self.__dict__)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16, torch.float32])
def test_state_dicts_and_models_scan_like_checkpoints(dtype):
    tensors = {name: torch.from_numpy(np.asarray(value, dtype=np.float32)).to(dtype) for name, value in gpt2_tensors().items()}
    config = _Config(_name_or_path="tiny-gpt2", model_type="gpt2", activation_function="gelu_new")
    model = _module(tensors, config)
    by_model = scan(model)
    assert (by_model.model, by_model.layout, by_model.activation) == ("tiny-gpt2", "gpt2", "gelu_tanh")
    assert "activation_function = 'gelu_new'" in by_model.activation_source
    by_state = scan(model.state_dict(), config={"activation_function": "relu"})
    assert by_state.activation == "relu" and by_state.model == "<state dict>"
    # The planted rows are small integers, exact in every dtype: layer 1 stays absorbable.
    assert statuses(by_model) == ["not_absorbable", "absorbable"]
    if dtype != torch.bfloat16:  # numpy has no bfloat16
        numpy_dict = {name: value.detach().numpy() for name, value in tensors.items()}
        assert statuses(scan(numpy_dict, config={"activation_function": "gelu_new"})) == statuses(by_model)
    assert [row["name"] for row in by_model.layers] == ["transformer.h.0.mlp.c_{fc,proj}", "transformer.h.1.mlp.c_{fc,proj}"]


def test_package_level_scan_and_bad_sources():
    assert indexset.scan is scan
    for bad in (42, object(), {1: torch.zeros(2)}):
        with pytest.raises(InputError) as error:
            scan(bad)
        assert error.value.source == "source"
    with pytest.raises(InputError, match="meta"):
        scan({"h.0.mlp.c_fc.weight": torch.zeros(D, N, device="meta"), "h.0.mlp.c_proj.weight": torch.zeros(N, D, device="meta")})


def test_extract_layer_round_trip(tmp_path):
    folder = bert(tmp_path, dtype=np.float32)
    instance = extract_layer(folder, 1)
    instance.save(tmp_path / "layer.npz")
    loaded = Instance.load(tmp_path / "layer.npz")
    from safetensors.numpy import load_file

    tensors = load_file(str(folder / "model.safetensors"))
    p = "bert.encoder.layer.1."
    for key, name in (("W_up", "intermediate.dense.weight"), ("b_up", "intermediate.dense.bias"), ("W_down", "output.dense.weight"), ("b_down", "output.dense.bias")):
        assert np.array_equal(getattr(loaded, key), tensors[p + name].astype(np.float64)), key
    assert loaded.activation == "gelu" and loaded.identity_skip
    info = json.loads(str(loaded.metadata["checkpoint"]))
    assert info["layer"] == 1 and info["tensors"]["up"] == p + "intermediate.dense" and info["norm"] == "post-LN"
    with pytest.raises(InputError) as error:
        extract_layer(folder, 5)
    assert error.value.source == "layer"


def test_gated_rows_carry_names_and_no_interval(tmp_path):


    report = scan(llama(tmp_path), target_class="bias-free", layers="1")
    (row,) = report.layers
    assert row["name"] == "model.layers.1.mlp.{gate,up,down}_proj" and row["best_set"] is None and row["relative_upper"] is None
    assert (row["d"], row["n"]) == (D, N)


def test_a_folder_of_other_safetensors_files(tmp_path):
    """A folder without model.safetensors or an index: its .safetensors files are read."""
    W = np.zeros((N, D))
    folder = write(tmp_path / "plain", {"h.0.mlp.c_fc.weight": W.T, "h.0.mlp.c_proj.weight": W}, name="weights.safetensors")
    assert scan(folder).layers[0]["tensors"] == {"up": "h.0.mlp.c_fc", "down": "h.0.mlp.c_proj"}
