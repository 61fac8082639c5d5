"""``indexset solve FILE``: JSON keys, exit codes, --all/--count, --witness, bad input.

Answers are checked against the brute force over all 2^n subsets, the
meet-in-the-middle reference (``reference.py``) and the exact
verifier, never against numbers from an earlier run.
"""

from __future__ import annotations

import json
from fractions import Fraction
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
from reference import brute_within, check_affine_class, check_result, fractions, mitm_solutions
from safetensors.numpy import load_file

from indexset.budget import TIME_LIMIT
from indexset.cli.main import main
from indexset.exact.verify import verify
from indexset.exact.witness import check_forward
from indexset.model.forward import forward_float
from indexset.model.instance import Instance
from indexset.search.engines.brute import absorbing_sets_brute
from indexset.workflows import construct

INSTANCES = Path(__file__).resolve().parents[2] / "instances"
REQUIRED = {"status", "reason", "index_set", "verified", "count", "solutions", "time_s", "stages"}
EXIT = {"absorbable": 0, "not_absorbable": 1, "unknown": 3}


def run(capsys, *argv):
    capsys.readouterr()
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def solve_json(capsys, path, *options):
    code, out, err = run(capsys, "solve", path, "--json", *options)
    assert code in (0, 1, 3), err
    payload = json.loads(out)
    check_payload(payload)
    assert EXIT[payload["status"]] == code
    return code, payload


def check_payload(payload):
    """The keys of issue 3 with their types (extras allowed)."""
    assert set(payload) >= REQUIRED, sorted(REQUIRED - set(payload))
    assert payload["status"] in EXIT
    assert isinstance(payload["reason"], str) and payload["reason"]
    assert payload["index_set"] is None or all(isinstance(i, int) for i in payload["index_set"])
    assert isinstance(payload["verified"], bool)
    assert payload["count"] is None or isinstance(payload["count"], int)
    assert payload["solutions"] is None or all(isinstance(s, list) for s in payload["solutions"])
    assert isinstance(payload["time_s"], (int, float)) and payload["time_s"] >= 0
    assert isinstance(payload["stages"], dict)
    assert payload["verified"] == (payload["status"] == "absorbable")
    assert (payload["index_set"] is not None) == (payload["status"] == "absorbable")


def as_result(payload):
    return SimpleNamespace(certificate=payload.get("certificate"), extension=payload.get("extension"),
                           target_class=payload.get("class"), **{k: payload[k] for k in REQUIRED})


def save(instance, tmp_path, name="block.npz"):
    path = tmp_path / name
    construct.write_reproducible(instance, path)
    return path


def degenerate_without_S():
    """Two collinear rows, no S: (★) is not necessary here; MATH.md §7 proves "no" (issue 6)."""
    return Instance(np.array([[1, 0], [2, 0], [0, 1]]), np.array([[1, 1, 0], [0, 0, 1]]))


# ------------------------------------------------------------ exit codes
def test_exit_codes_and_json_keys(tmp_path, capsys):
    cases = [
        ("planted", construct.planted(d=2, n=12, seed=2), 0),
        ("random", construct.random(d=2, n=12, seed=2), 1),
        ("degenerate", degenerate_without_S(), 1),
        ("glu", construct.gated(activation="glu", d=2, n=6, seed=1), 3),
        ("relu2", construct.homogeneous(activation="relu2", d=2, n=6, seed=1), 1),
        ("swiglu", construct.gated(activation="swiglu", d=3, n=6, seed=1, trap=True), 1),
    ]
    for name, instance, expected in cases:
        path = save(instance, tmp_path, f"{name}.npz")
        # Homogeneous and gated blocks: the expected codes are the paper's, about bias-free blocks.
        options = () if instance.act.kind == "odd_linear" else ("--class", "bias-free")
        code, payload = solve_json(capsys, path, *options)
        assert code == expected, (name, payload["reason"])
        if instance.act.kind == "odd_linear":
            check_result(instance, as_result(payload), absorbing_sets_brute(instance), find_all=False)
        else:
            if instance.act.kind == "uncovered":
                assert payload["certificate"] is None and payload["engine"] == "theorem"
            else:
                assert payload["certificate"] == {"kind": "theorem", "argument": "MATH.md §4"}
                check_affine_class(instance, as_result(solve_json(capsys, path)[1]))
        # The same verdict without --json, with the status in the text.
        code, out, _ = run(capsys, "solve", path, *options)
        assert code == expected
        label = {0: "ABSORBABLE", 1: "NOT ABSORBABLE", 3: "UNKNOWN"}[expected]
        assert f": {label}" in out.splitlines()[0]


@pytest.mark.parametrize("path", sorted(INSTANCES.glob("*.npz")), ids=lambda p: p.name)
def test_curated_files_all(path, capsys):
    instance = Instance.load(path)
    code, payload = solve_json(capsys, path, "--all")
    if instance.act.kind != "odd_linear":
        assert code == 1 and payload["solutions"] in (None, [])
        return
    reference = sorted(absorbing_sets_brute(instance))
    check_result(instance, as_result(payload), reference, find_all=True)
    if reference:
        assert sorted(payload["solutions"]) == reference and payload["count"] == len(reference)


# ------------------------------------------------------ --all / --count
def test_all_and_count(tmp_path, capsys):
    instance = construct.planted(d=2, n=14, k=14, range=3, seed=4, biases=True, activation="gelu")
    reference = sorted(absorbing_sets_brute(instance))
    assert len(reference) >= 1
    path = save(instance, tmp_path)
    code, every = solve_json(capsys, path, "--all")
    assert code == 0
    assert sorted(sorted(s) for s in every["solutions"]) == reference
    assert every["count"] == len(reference)
    code, counted = solve_json(capsys, path, "--count")
    assert code == 0
    assert counted["count"] == len(reference)
    assert counted["solutions"] is None
    assert verify(instance, counted["index_set"]).holds


def test_all_and_count_on_many_solutions(tmp_path, capsys):
    """Zero down columns make units free: 2^free index sets, each listed once."""
    up = np.array([[1, 0], [0, 1], [1, 1], [2, 1], [1, 3], [3, 1]])
    down = np.array([[-1, 0, 0, 0, 0, 0], [0, -1, 0, 0, 0, 0]])
    instance = Instance(up, down)
    reference = sorted(absorbing_sets_brute(instance))
    path = save(instance, tmp_path)
    code, every = solve_json(capsys, path, "--all")
    assert code == 0 and sorted(every["solutions"]) == reference and every["count"] == len(reference) == 16
    code, counted = solve_json(capsys, path, "--count")
    assert counted["count"] == 16 and counted["solutions"] is None


def test_all_and_count_on_a_negative(tmp_path, capsys):
    instance = construct.random(d=3, n=14, seed=5)
    path = save(instance, tmp_path)
    for option in ("--all", "--count"):
        code, payload = solve_json(capsys, path, option)
        assert code == 1 and payload["count"] == 0
        assert payload["index_set"] is None


# -------------------------------------------------------------- witness
@pytest.mark.parametrize("options", [
    dict(d=2, n=10, activation="leaky_relu:1/2", biases=True),
    dict(d=3, n=12, skip="mhc", activation="gelu", biases=True),
])
def test_witness_written_only_when_absorbable(options, tmp_path, capsys):
    instance = construct.planted(seed=3, **options)
    path = save(instance, tmp_path)
    out = tmp_path / "witness.npz"
    code, payload = solve_json(capsys, path, "--witness", out, "--format", "both")
    assert code == 0
    block = Instance.load(out)
    assert block.residual_free and block.skip is None
    assert check_forward(instance, block, points=20, seed=9).ok
    S = payload["index_set"]
    flipped = np.array([[-v if i in S else v for v in row] for i, row in enumerate(fractions(instance, "W_up"))], dtype=object)
    assert (fractions(block, "W_up") == flipped).all()
    tensors = load_file(str(out)[:-4] + ".safetensors")
    assert np.allclose(tensors["up.weight"], block.float_array("W_up"))
    assert np.allclose(tensors["down.bias"], block.float_array("b_down"))


def test_witness_named_safetensors_is_safetensors(tmp_path, capsys):
    """The file named is the file written, in its extension's format: no .npz beside it, no ZIP inside it."""
    instance = construct.gated(activation="swiglu", d=2, n=6, seed=1, pairs=True)  # absorbable with biases in g (MATH.md §8.6)
    path = save(instance, tmp_path)
    out = tmp_path / "w.safetensors"
    code, stdout, _err = run(capsys, "solve", path, "--json", "--witness", out)
    payload = json.loads(stdout)  # a witness that is not a flip: no index set, so not solve_json's checks
    assert code == 0 and payload["status"] == "absorbable" and payload["index_set"] is None
    assert payload["witness"]["written"] == [str(out)] and payload["witness"]["formats"] == ["safetensors"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["block.npz", "w.safetensors"]
    tensors = load_file(str(out))
    assert set(tensors) == {"up.weight", "up.bias", "down.weight", "down.bias", "gate.weight"}
    # down(σ(gate(x)) · up(x)) with the file's tensors equals f(x) = A x + (the block of f) on random points
    x = np.random.default_rng(4).normal(size=(11, 2))
    act = instance.act
    g = act.forward(x @ tensors["gate.weight"].T, x @ tensors["up.weight"].T + tensors["up.bias"]) @ tensors["down.weight"].T + tensors["down.bias"]
    assert np.allclose(g, forward_float(instance, x), rtol=1e-9, atol=1e-9)


def test_no_witness_when_not_absorbable_or_unknown(tmp_path, capsys):
    for name, instance, expected in [
        ("random", construct.random(d=2, n=10, seed=7), 1),
        ("degenerate", degenerate_without_S(), 1),
        ("relu2", construct.homogeneous(activation="relu2", d=2, n=6, seed=2), 1),
    ]:
        path = save(instance, tmp_path, f"{name}.npz")
        out = tmp_path / f"{name}-witness.npz"
        code, _payload = solve_json(capsys, path, "--witness", out)
        assert code == expected
        assert not out.exists()
        assert not (tmp_path / f"{name}-witness.safetensors").exists()


# -------------------------------------------------------------------- tol
def test_tolerance_on_float_planted(tmp_path, capsys):
    instance = construct.float_planted(d=2, n=9, seed=2)
    path = save(instance, tmp_path)
    code, payload = solve_json(capsys, path, "--tol", "1e-9", "--all")
    assert code == 0
    tol = Fraction("1e-9")
    check_result(instance, as_result(payload), brute_within(instance, tol), find_all=True, tol=tol)
    code, exact = solve_json(capsys, path)
    check_result(instance, as_result(exact), absorbing_sets_brute(instance), find_all=False)
    if code == 0:
        assert verify(instance, exact["index_set"]).holds


def test_seed_and_engines_options(tmp_path, capsys):
    instance = construct.planted(d=3, n=14, seed=6)
    path = save(instance, tmp_path)
    reference = absorbing_sets_brute(instance)
    for engines in ("lattice", "cpsat", "lattice,cpsat"):
        code, payload = solve_json(capsys, path, "--engines", engines, "--seed", "5", "--all")
        check_result(instance, as_result(payload), reference, find_all=True)
        assert code == 0


@pytest.mark.slow
# --------------------------------------------------------------- time limit
def test_tiny_time_limit_is_unknown_or_right(tmp_path, capsys):
    for plant in (False, True):
        instance = construct.hard(d=2, n=40, seed=6, plant=plant)
        reference = mitm_solutions(instance)
        path = save(instance, tmp_path, f"hard-{plant}.npz")
        _code, payload = solve_json(capsys, path, "--time-limit", "0.001")
        check_result(instance, as_result(payload), reference, find_all=False, complete=False)
        assert payload["halted"] == (TIME_LIMIT if payload["status"] == "unknown" else None)


# ------------------------------------------------------------- bad input
@pytest.mark.parametrize("extra", [
    ["--tol", "abc"],
    ["--tol", "-1"],
    ["--tol", "1/0"],
    ["--time-limit", "-1"],
    ["--time-limit", "0"],
    ["--time-limit", "soon"],
    ["--engines", "magic"],
    ["--engines", ","],
    ["--engines", "lattice,magic"],
    ["--all", "--count"],
    ["--format", "onnx"],
    ["--format", "safetensors"],  # contradicts the witness name w.npz
    ["--seed", "x"],
])
def test_bad_options_exit_2_with_one_line(extra, tmp_path, capsys):
    path = save(construct.planted(d=2, n=6, seed=1), tmp_path)
    out = tmp_path / "w.npz"
    code, stdout, stderr = run(capsys, "solve", path, "--json", "--witness", out, *extra)
    assert code == 2
    assert stdout == ""
    assert len(stderr.strip().splitlines()) == 1 and stderr.startswith("indexset: error:")
    assert not out.exists()


def test_bad_files_exit_2_with_one_line(tmp_path, capsys):
    text = tmp_path / "notes.npz"
    text.write_text("not an archive")
    npy = tmp_path / "array.npy"
    np.save(npy, np.zeros(3))
    singular = tmp_path / "singular.npz"
    np.savez(singular, W_up=np.eye(2), W_down=np.eye(2), skip=np.ones((2, 2)))
    for path in (tmp_path / "missing.npz", text, npy, singular, tmp_path):
        code, stdout, stderr = run(capsys, "solve", path)
        assert code == 2, path
        assert stdout == ""
        assert len(stderr.strip().splitlines()) == 1 and stderr.startswith("indexset: error:")


# --------------------------------------------------------------- distance
def min_squared_distance(instance):
    """min over all 2^n subsets of ‖c·W_down[:,S]·W_up[S,:] + A‖_F², exactly (Fractions), and a set attaining it."""
    import itertools

    c = instance.act.c
    up, down = fractions(instance, "W_up"), fractions(instance, "W_down")
    skip = fractions(instance, "skip") if instance.skip is not None else np.eye(instance.d, dtype=int).astype(object)
    terms = [c * np.outer(down[:, i], up[i]) for i in range(instance.n)]
    best = None
    for size in range(instance.n + 1):
        for S in itertools.combinations(range(instance.n), size):
            residual = sum((terms[i] for i in S), skip.copy() * Fraction(1))
            value = sum((v * v for v in residual.ravel()), Fraction(0))
            if best is None or value < best[0]:
                best = (value, list(S))
    return best


def squared_residual(instance, S):
    c = instance.act.c
    up, down = fractions(instance, "W_up"), fractions(instance, "W_down")
    skip = fractions(instance, "skip") if instance.skip is not None else np.eye(instance.d, dtype=int).astype(object)
    residual = skip * Fraction(1) + sum((c * np.outer(down[:, i], up[i]) for i in S), np.zeros_like(skip))
    return sum((v * v for v in residual.ravel()), Fraction(0))


@pytest.mark.parametrize("make", [
    lambda: construct.random(d=3, n=8, dtype="float", seed=1),
    lambda: construct.random(d=3, n=9, dtype="float", seed=4, activation="gelu", skip="unimodular"),
    lambda: construct.float_planted(d=3, n=9, seed=2),
], ids=["random", "gelu-skip", "float-planted"])
def test_distance_brackets_the_brute_force_minimum(make, tmp_path, capsys):
    """A float block decided at its exact values: the reported interval contains the exact minimum over all 2^n sets."""
    instance = make()
    path = save(instance, tmp_path)
    _code, payload = solve_json(capsys, path)
    distance = payload["distance"]
    assert distance["applies"] is True
    best, _S = min_squared_distance(instance)
    assert Fraction(distance["lower"]) ** 2 <= best <= Fraction(distance["upper"]) ** 2
    assert squared_residual(instance, distance["nearest_S"]) <= Fraction(distance["upper"]) ** 2
    norm = Fraction(np.linalg.norm(instance.float_array("skip")))
    assert distance["relative_lower"] <= float(Fraction(distance["lower"]) / norm) * (1 + 1e-12)
    if payload["status"] == "absorbable":
        assert distance["upper"] == 0
    # the same interval in the text output
    _code, out, _err = run(capsys, "solve", path)
    line = next(line for line in out.splitlines() if line.startswith("  distance "))
    assert f"[{distance['lower']:.4g}, {distance['upper']:.4g}]" in line


def test_distance_is_zero_for_an_exact_flip_in_floats(tmp_path, capsys):
    U = np.array([[1, 1, 0], [0, 1, 1], [0, 0, 1]], dtype=float)
    rng = np.random.default_rng(2)
    up, down = rng.standard_normal((7, 3)), rng.standard_normal((3, 7))
    up[[1, 3, 5]] = U
    down[:, [1, 3, 5]] = -np.linalg.inv(U).round()
    instance = Instance(up, down)
    assert verify(instance, [1, 3, 5]).holds
    code, payload = solve_json(capsys, save(instance, tmp_path))
    assert code == 0
    assert payload["distance"] == {"applies": True, "lower": 0.0, "upper": 0.0, "relative_lower": 0.0, "relative_upper": 0.0,
                                   "nearest_S": payload["index_set"], "upper_exact": True}


def test_distance_on_the_gram_path_is_its_certificate(tmp_path, capsys):
    """A block big enough for the Gram path inside solve: the distance is that certificate's, not a second computation."""
    rng = np.random.default_rng(5)
    d, n = 40, 40  # d²·n = 64 000 > GramTuning.first_from_cells
    instance = Instance(rng.standard_normal((n, d)), rng.standard_normal((d, n)))
    _code, payload = solve_json(capsys, save(instance, tmp_path))
    assert payload["engine"] == "gram" and payload["certificate"]["kind"] == "gram_distance_bound"
    distance = payload["distance"]
    assert (distance["lower"], distance["upper"]) == (payload["certificate"]["distance_lower"], payload["certificate"]["distance_upper"])
    assert 0 < distance["lower"] <= distance["upper"]
    assert squared_residual(instance, distance["nearest_S"]) <= Fraction(distance["upper"]) ** 2


@pytest.mark.parametrize("make, why", [
    (lambda: construct.homogeneous(activation="relu2", d=2, n=4, dtype="float", seed=1), "not odd-linear"),
    (lambda: construct.random(d=2, n=6, dtype="float", seed=1), "n = 6 > d² = 4"),
])
def test_distance_says_when_it_does_not_apply(make, why, tmp_path, capsys):
    path = save(make(), tmp_path)
    _code, payload = solve_json(capsys, path, "--class", "bias-free")
    assert payload["distance"]["applies"] is False and why in payload["distance"]["why"]
    _code, out, _err = run(capsys, "solve", path, "--class", "bias-free")
    assert "\n  distance not bounded: " in out and why in out


def test_no_distance_for_exact_weights(tmp_path, capsys):
    path = save(construct.random(d=3, n=8, seed=1), tmp_path)
    _code, payload = solve_json(capsys, path)
    assert payload["distance"] is None
    assert "\n  distance " not in run(capsys, "solve", path)[1]


# ------------------------------------------------------ text for people
def parse_ranges(text):
    """``{0–2, 5}`` back into [0, 1, 2, 5]."""
    out = []
    for part in text.strip("{}").split(", "):
        low, _, high = part.partition("–")
        out += list(range(int(low), int(high or low) + 1))
    return out


def test_text_shows_index_sets_as_ranges_and_json_keeps_lists(tmp_path, capsys):
    instance = construct.planted(d=2, n=20, k=12, seed=2)
    path = save(instance, tmp_path)
    _code, payload = solve_json(capsys, path)
    _code, out, _err = run(capsys, "solve", path)
    line = next(line for line in out.splitlines() if line.startswith("  S "))
    shown = line.split(None, 1)[1].split(" (|S|")[0]
    assert "–" in shown and parse_ranges(shown) == payload["index_set"]
    assert verify(instance, payload["index_set"]).holds


def test_text_shows_long_rationals_as_decimals_and_json_keeps_them(tmp_path, capsys):
    """Unique real solution with a huge rational entry: the text rounds it, the JSON reason has it exactly."""
    import re

    path = save(construct.random(d=3, n=9, range=1000, seed=1), tmp_path)
    _code, payload = solve_json(capsys, path)
    exact = re.search(r"z\*\[(\d+)\] = (-?\d+/\d+)", payload["reason"])
    assert exact and len(exact.group(2)) > 20
    _code, out, _err = run(capsys, "solve", path)
    why = next(line for line in out.splitlines() if line.startswith("  why "))
    shown = re.search(rf"z\*\[{exact.group(1)}\] ≈ (\S+)", why)
    assert shown, why
    assert abs(Fraction(shown.group(1)) - Fraction(exact.group(2))) <= abs(Fraction(exact.group(2))) / 10**5
    assert not re.search(r"\d{21}", why)


def test_readable_leaves_other_lists_and_numbers_alone():
    from indexset.cli.common import readable

    assert readable("S = [0, 1, 2, 5, 6] holds") == "S = {0–2, 5–6} holds"
    assert readable("z in [0, 1] and rows [3, 1, 2]") == "z in [0, 1] and rows [3, 1, 2]"
    assert readable("t = 12345678901234567890 and 1.5e-300") == "t = 12345678901234567890 and 1.5e-300"
    assert readable("x = 123456789012345678901/2") == "x ≈ 6.17284e+19"
