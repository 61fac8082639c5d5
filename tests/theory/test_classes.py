"""Verdicts name their class of residual-free blocks: ``affine`` (biases in g) or ``bias-free``.

With biases inside σ of g, SwiGLU, GeGLU, ReGLU and ReLU² blocks can absorb
their skip (MATH.md §8); the paper's impossibility results are about
bias-free g. Every positive below is checked with a plain numpy forward
pass of the witness (``check_affine_class``), and the decisions on
nondegenerate weights against a brute force over all flips.
"""

from __future__ import annotations

import json
from fractions import Fraction

import numpy as np
import pytest
from reference import check_affine_class, flip_sets_by_forward

from indexset import solve
from indexset.cli.main import main
from indexset.exact.verify import verify
from indexset.exact.witness import check_forward, result_witness
from indexset.model.forward import forward_exact
from indexset.model.instance import Instance
from indexset.model.stack import Stack
from indexset.theory.flips import SECTION, violations
from indexset.workflows import construct

GATED = ("swiglu", "geglu", "reglu")


def _both(instance):
    affine, bias_free = solve(instance), solve(instance, target_class="bias-free")
    assert affine.target_class == "affine" and bias_free.target_class == "bias-free"
    return affine, bias_free


# ------------------------------------------------ the audit's counterexamples
@pytest.mark.parametrize("activation", GATED)
def test_opposite_gate_rows_absorb_with_a_value_bias(activation):
    f = Instance(np.array([[1], [1]]), np.array([[1, 1]]), W_gate=np.array([[1], [-1]]), activation=activation)
    affine, bias_free = _both(f)
    assert affine.status == "absorbable" and affine.extension
    check_affine_class(f, affine)
    assert bias_free.status == "not_absorbable" and bias_free.certificate["argument"] == "MATH.md §4"


@pytest.mark.parametrize("activation", GATED)
def test_opposite_gate_rows_in_two_dimensions(activation):
    up = np.array([[1, 2], [3, 1], [1, -1], [2, 5]])  # pairwise non-collinear up rows
    gate = np.array([[1, 0], [-1, 0], [0, 1], [0, -1]])
    f = Instance(up, np.array([[1, 1, 0, 0], [0, 0, 1, 1]]), W_gate=gate, activation=activation)
    affine, bias_free = _both(f)
    assert affine.status == "absorbable"
    check_affine_class(f, affine)
    assert bias_free.status == "not_absorbable"


def test_relu2_collinear_rows_absorb_with_the_audits_witness():
    f = Instance(np.array([[1], [2], [-1], [-3]]), np.array([[1, 1, 1, 1]]), activation="relu2")
    # The witness of the audit, written out: relu(x+1)² − relu(x)² − relu(−x)² + relu(−x−1)² = 2x + 1.
    g = Instance(np.array([[2], [2], [-2], [-2]]), np.array([[1, 9, 19, 1]]), b_up=np.array([2, 0, 0, -2]),
                 b_down=np.array([-1]), activation="relu2", denominator=2, residual_free=True)
    assert check_forward(f, g, points=200).ok and check_forward(f, g).exact
    affine, bias_free = _both(f)
    assert affine.status == "absorbable"
    check_affine_class(f, affine)
    ours = result_witness(f, affine)
    points = [[Fraction(k, 3)] for k in range(-12, 13)]
    assert forward_exact(ours, points) == forward_exact(g, points)
    assert bias_free.status == "not_absorbable"


# -------------------------------------------- families built by construct
@pytest.mark.parametrize("activation", GATED)
@pytest.mark.parametrize("d, skip", [(1, "identity"), (2, "unimodular"), (3, "mhc"), (2, "permutation")])
def test_construct_gated_pairs_are_absorbable_by_the_affine_class_only(activation, d, skip):
    for seed in range(2):
        f = construct.gated(activation=activation, d=d, n=2 * d + 2, seed=seed, pairs=True, skip=skip)
        affine, bias_free = _both(f)
        assert affine.status == "absorbable", affine.reason
        check_affine_class(f, affine)
        assert bias_free.status == "not_absorbable"


@pytest.mark.parametrize("d", [1, 2, 3])
def test_construct_homogeneous_collinear_is_absorbable_by_the_affine_class_only(d):
    for seed in range(2):
        f = construct.homogeneous(activation="relu2", d=d, n=4 * d + seed, seed=seed, collinear=True)
        affine, bias_free = _both(f)
        assert affine.status == "absorbable", affine.reason
        check_affine_class(f, affine)
        assert bias_free.status == "not_absorbable"


# -------------------------------- Theorems B and C against brute force (small n)
def _planted_flip(activation, d, n, seed):
    """Nondegenerate gated blocks where flipping the gates of units 0..d−1 cancels A = I.

    Those units have gate rows U (unit upper triangular, so U⁻¹ is an
    integer matrix), value rows 0 and value biases 1, and down columns
    −U⁻¹: their flip adds −Σ W_i·b_i·u_iᵀ = U⁻¹U = I and no quadratic term.
    """
    rng = np.random.default_rng(seed)
    U = np.eye(d, dtype=np.int64) + np.triu(rng.integers(-2, 3, size=(d, d)), 1)
    while True:
        gate = rng.integers(-4, 5, size=(n, d))
        up = rng.integers(-4, 5, size=(n, d))
        bias = rng.integers(-2, 3, size=n)
        down = rng.integers(-4, 5, size=(d, n))
        gate[:d], up[:d], bias[:d] = U, 0, 1
        down[:, :d] = -np.rint(np.linalg.inv(U)).astype(np.int64)
        f = Instance(up, down, b_up=bias, W_gate=gate, activation=activation)
        if not violations(f):
            return f


@pytest.mark.parametrize("activation", ("swiglu", "reglu", "geglu", "relu2"))
def test_nondegenerate_decisions_equal_the_brute_force_over_flips(activation):
    decided = {"absorbable": 0, "not_absorbable": 0}
    for seed in range(12):
        rng = np.random.default_rng([seed, 7])
        d, n = int(rng.integers(1, 3)), int(rng.integers(2, 7))
        if seed % 3 == 0 and activation != "relu2":
            f = _planted_flip(activation, d, n + d, seed)
        else:
            gate = rng.integers(-3, 4, size=(n, d))
            f = Instance(rng.integers(-3, 4, size=(n, d)), rng.integers(-3, 4, size=(d, n)), b_up=rng.integers(-2, 3, size=n),
                         activation=activation, W_gate=gate if activation != "relu2" else None)
        if violations(f):
            continue
        result = solve(f)
        reference = flip_sets_by_forward(f)
        assert (result.status == "absorbable") == bool(reference), (result.status, reference, result.reason)
        assert result.status in decided, result.reason
        decided[result.status] += 1
        check_affine_class(f, result)
        # No bias-free block equals a nondegenerate block (biases or not): Theorems B and C.
        assert solve(f, target_class="bias-free").status == "not_absorbable"
    assert decided["not_absorbable"] > 0


def test_planted_theorem_c_positive_on_nondegenerate_weights():
    for activation in ("swiglu", "reglu", "geglu"):
        for seed in range(3):
            f = _planted_flip(activation, 2, 5, seed)
            result = solve(f)
            assert result.status == "absorbable", result.reason
            assert result.certificate["kind"] == "affine_witness" and result.certificate["argument"] == SECTION[activation]
            check_affine_class(f, result)
            assert flip_sets_by_forward(f)


def test_no_bias_in_f_is_never_absorbable_on_nondegenerate_weights():
    rng = np.random.default_rng(3)
    for activation in ("swiglu", "geglu", "reglu", "relu2"):
        gate = rng.standard_normal((6, 3)) if activation != "relu2" else None
        f = Instance(rng.standard_normal((6, 3)), rng.standard_normal((3, 6)), W_gate=gate, activation=activation)
        assert not violations(f)
        affine, bias_free = _both(f)
        assert affine.status == bias_free.status == "not_absorbable"
        assert affine.certificate["argument"] == ("MATH.md §8.4" if activation == "relu2" else "MATH.md §8.5")  # Theorem B or C
        assert bias_free.certificate == {"kind": "theorem", "argument": "MATH.md §4"}


def test_degenerate_gated_without_construction_is_unknown_not_no():
    f = Instance(np.array([[1, 0], [0, 1], [1, 1]]), np.array([[1, 2, 0], [0, 1, 3]]),
                 W_gate=np.array([[1, 1], [2, 2], [0, 1]]), activation="swiglu")  # collinear gate rows 0, 1
    affine, bias_free = _both(f)
    assert affine.status in ("unknown", "absorbable")
    check_affine_class(f, affine)
    assert bias_free.status == "not_absorbable"


# ------------------------------------------------ odd-linear blocks and biases
def test_relu_gelu_with_biases_against_bias_free_blocks():
    for activation in ("relu", "gelu"):
        f = construct.planted(d=2, n=10, activation=activation, biases=True, seed=4)
        affine, bias_free = _both(f)
        assert affine.status == "absorbable" and verify(f, affine.index_set).holds
        # the flip witness carries the biases, so it is no bias-free block
        assert np.any(result_witness(f, affine).b_up != 0)
        assert bias_free.status == "not_absorbable" and bias_free.extension
        assert bias_free.certificate == {"kind": "theorem", "argument": "MATH.md §8.3"}  # Theorem A, bias-free part
        no_bias = construct.planted(d=2, n=10, activation=activation, seed=4)
        paper = solve(no_bias, target_class="bias-free")
        assert paper.status == "absorbable" and not np.any(result_witness(no_bias, paper).b_up != 0)


def test_relu_negatives_name_the_theorem_of_their_class():
    f = construct.random(d=2, n=12, seed=1)
    affine, bias_free = _both(f)
    assert affine.status == bias_free.status == "not_absorbable"
    assert affine.target_class == "affine" and affine.extension  # Theorem A (MATH.md §8.3) makes "no S" a proof
    assert bias_free.target_class == "bias-free" and not bias_free.extension  # the paper's theorem


# ------------------------------------------------------------------- stacks
def test_gated_stacks_absorb_block_by_block_with_biases():
    blocks = [construct.gated(activation="swiglu", d=2, n=6, seed=s, pairs=True) for s in range(3)]
    stack = Stack(blocks)
    affine = solve(stack)
    assert affine.status == "absorbable" and affine.target_class == "affine"
    bias_free = solve(stack, target_class="bias-free")
    assert bias_free.status == "not_absorbable" and bias_free.certificate == {"kind": "theorem", "argument": "MATH.md §4"}  # the depth corollary


# ---------------------------------------------------------------------- CLI
def test_cli_class_option_reaches_solve_info_and_construct(tmp_path, capsys):
    path = tmp_path / "pairs.npz"
    assert main(["construct", "gated", "--activation", "geglu", "--d", "2", "--n", "6", "--pairs", "-o", str(path)]) == 0
    capsys.readouterr()
    witness = tmp_path / "w.npz"
    assert main(["solve", str(path), "--json", "--witness", str(witness)]) == 0
    payload = json.loads(capsys.readouterr().out)
    assert payload["class"] == "affine" and payload["witness"]["written"] == [str(witness)]
    written = Instance.load(witness)
    assert written.residual_free and written.W_gate is not None and check_forward(Instance.load(path), written).ok
    assert main(["solve", str(path), "--json", "--class", "bias-free"]) == 1
    assert json.loads(capsys.readouterr().out)["class"] == "bias-free"
    assert main(["info", str(path), "--json", "--class", "bias-free"]) == 0
    info = json.loads(capsys.readouterr().out)
    assert info["class"] == "bias-free" and "MATH.md §4" in info["argument"]
    trap = tmp_path / "trap.npz"
    assert main(["construct", "gated", "--activation", "swiglu", "--d", "3", "--n", "8", "--trap", "--class", "affine", "-o", str(trap)]) == 0
    capsys.readouterr()
    assert main(["solve", str(trap), "--json"]) == 1
    assert main(["construct", "gated", "--trap", "--class", "affine", "--biases", "-o", str(tmp_path / "no.npz")]) == 2
    assert main(["solve", str(path), "--class", "nonsense"]) == 2


# ---------------------------------------------------------------- tolerance
def test_tolerance_message_names_the_size_condition():
    f = Instance(np.array([[1, 0], [0, 1], [1, 1]]), np.array([[5, 0, 3], [0, 5, -2]]))
    assert verify(f, [], tol=1).max_residual == 1  # S = ∅ is within τ = 1, but |S| < d
    result = solve(f, tol=1)
    assert result.status == "not_absorbable" and result.certificate == {"kind": "size"}


def test_verify_and_solve_agree_within_a_tolerance(capsys, tmp_path):
    f = construct.float_planted(d=2, n=10, seed=3)
    result = solve(f, tol=Fraction(1, 10**9), find_all=True)
    assert result.status == "absorbable"
    for support in result.solutions:
        assert verify(f, support, tol=Fraction(1, 10**9)).holds
    path = tmp_path / "f.npz"
    f.save(path)
    out = tmp_path / "w.npz"
    assert main(["solve", str(path), "--tol", "1e-9", "--witness", str(out), "--json"]) == 0
    payload = json.loads(capsys.readouterr().out)
    assert payload["witness"]["forward_check"]["ok"] and payload["witness"]["forward_check"]["against_residual"]
    index_set = ",".join(map(str, payload["index_set"]))
    assert main(["verify", str(path), "--index-set", index_set, "--tol", "1e-9", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["holds"] is True
