"""``indexset scan``: tensor names, |S|, extension marks, --layers, --time-limit, --plot, --extract, several models, bad input."""

from __future__ import annotations

import json

import numpy as np
import pytest
from checkpoints import D, N, bert, llama, opt

from indexset.budget import TIME_LIMIT
from indexset.cli.main import main
from indexset.cli.scan import combined_exit_code
from indexset.model.instance import Instance


def test_table_names_rows_by_tensor_and_marks_extensions(tmp_path, capsys):
    assert main(["scan", str(bert(tmp_path))]) == 1
    out = capsys.readouterr().out
    lines = out.splitlines()
    header = next(line for line in lines if line.lstrip().startswith("layer"))
    for column in ("tensors", "dist lower", "dist upper", "rel lower", "rel upper", "|S|"):
        assert column in header
    row0 = next(line for line in lines if "bert.encoder.layer.0.{intermediate,output}.dense" in line)
    row1 = next(line for line in lines if "bert.encoder.layer.1.{intermediate,output}.dense" in line)
    assert row0.split()[5] == "0" and row0.split()[6] == "0"  # distance 0 at the planted S
    assert row0.split()[9] == "4"  # |S| of the planted S
    assert "NOT absorbable *" in row1 and "absorbable *" not in row0  # necessity is an extension here; the positive is not
    assert any(line.startswith("*: extension") for line in lines)


def test_json_rows(tmp_path, capsys):
    assert main(["scan", str(bert(tmp_path)), "--json"]) == 1
    rows = json.loads(capsys.readouterr().out)["layers"]
    assert rows[0]["best_set"] == [1, 4, 7, 10] and rows[0]["best_set_size"] == 4
    assert rows[1]["tensors"] == {"up": "bert.encoder.layer.1.intermediate.dense", "down": "bert.encoder.layer.1.output.dense"}
    assert rows[1]["relative_lower"] <= rows[1]["relative_upper"]


def test_layers_option(tmp_path, capsys):
    assert main(["scan", str(opt(tmp_path)), "--layers", "2", "--json"]) == 0
    assert [row["layer"] for row in json.loads(capsys.readouterr().out)["layers"]] == [2]
    assert main(["scan", str(opt(tmp_path)), "--layers", "1-3"]) == 2
    assert main(["scan", str(opt(tmp_path)), "--layers", "x"]) == 2
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 2 and all(line.startswith("indexset: error: --layers:") for line in err)


def test_time_limit_counts_the_whole_process(tmp_path, capsys):
    # 0.2 s is less than the 0.3 s kept back for exit: spent before any layer can start.
    assert main(["scan", str(opt(tmp_path)), "--time-limit", "0.2", "--json"]) == 3
    rows = json.loads(capsys.readouterr().out)["layers"]
    assert [row["status"] for row in rows] == ["unknown"] * 3 and all(row["halted"] == TIME_LIMIT for row in rows)
    assert main(["scan", str(opt(tmp_path)), "--time-limit", "1000", "--json"]) == 1
    assert main(["scan", str(opt(tmp_path)), "--time-limit", "-1"]) == 2


def test_several_models_and_a_plot(tmp_path, capsys):
    plot = tmp_path / "scan.svg"
    code = main(["scan", str(opt(tmp_path)), str(llama(tmp_path)), "--class", "bias-free", "--plot", str(plot), "--json"])
    payload = json.loads(capsys.readouterr().out)
    assert code == 1 and [model["layout"] for model in payload["models"]] == ["opt", "llama"]
    assert b"</svg>" in plot.read_bytes()
    assert main(["scan", str(bert(tmp_path)), str(opt(tmp_path)), "--tol", "100"]) == 3  # bert absorbable within τ = 100, opt's layer 1 inconclusive
    out = capsys.readouterr().out
    assert "opt: layout opt" in out and "bert: layout bert" in out
    assert combined_exit_code([0, 1, 0]) == 1 and combined_exit_code([1, 3]) == 3 and combined_exit_code([0, 0]) == 0


def test_bad_plot_is_refused_before_scanning(tmp_path, capsys):
    folder = opt(tmp_path)
    assert main(["scan", str(folder), "--plot", str(tmp_path / "scan.jpg")]) == 2
    assert main(["scan", str(folder), "--plot", str(tmp_path / "no" / "scan.pdf")]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err.count("indexset: error: --plot:") == 2
    assert sorted(p.name for p in tmp_path.iterdir()) == ["opt"]


def test_extract_writes_one_layer(tmp_path, capsys):
    folder = opt(tmp_path, dtype=np.float32)
    out = tmp_path / "layer.npz"
    assert main(["scan", str(folder), "--extract", "2", "-o", str(out)]) == 0
    assert "layer 2" in capsys.readouterr().out
    layer = Instance.load(out)
    from safetensors.numpy import load_file

    tensors = load_file(str(folder / "model.safetensors"))
    assert np.array_equal(layer.W_up, tensors["model.decoder.layers.2.fc1.weight"].astype(np.float64))
    assert np.array_equal(layer.b_down, tensors["model.decoder.layers.2.fc2.bias"].astype(np.float64))
    assert (layer.d, layer.n, layer.activation) == (D, N, "relu")
    from indexset.large.gram import gram_decide

    assert gram_decide(layer).status == "absorbable"  # layer 2 is the planted one


def test_extract_bad_input_writes_nothing(tmp_path, capsys):
    folder = opt(tmp_path)
    out = tmp_path / "layer.npz"
    for argv in (
        ["--extract", "9", "-o", str(out)],
        ["--extract", "1"],
        ["-o", str(out)],
        ["--extract", "1", "-o", str(out), "--plot", str(tmp_path / "f.pdf")],
        ["--extract", "1", "-o", str(tmp_path / "missing" / "layer.npz")],
    ):
        assert main(["scan", str(folder), *argv]) == 2, argv
    assert main(["scan", str(folder), str(folder), "--extract", "1", "-o", str(out)]) == 2
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 6 and all(line.startswith("indexset: error:") for line in err)
    assert err[0].startswith("indexset: error: --extract: layer 9 is not in the checkpoint")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["opt"]


@pytest.mark.parametrize("bad", ["org/not-cached", "./missing-folder"])
def test_unknown_model(tmp_path, capsys, bad):
    assert main(["scan", bad, "--cache-dir", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and bad in err and "Traceback" not in err
