"""Theory coverage (issue 6): hyper-connection skips, deep stacks, degenerate weights.

Every positive is checked by a forward pass (exact for ReLU); negatives on
degenerate weights are compared with arguments and references written here
independently of :mod:`indexset.theory.degenerate`.
"""

from __future__ import annotations

import itertools
import json
from fractions import Fraction

import numpy as np
import pytest
from reference import section_7_reference

from indexset.cli.main import main
from indexset.errors import InputError
from indexset.exact.witness import check_forward, result_witness, witness_stack
from indexset.exact.witness import check_forward as check_stack_forward
from indexset.model.forward import forward_float
from indexset.model.hyper import effective_instance
from indexset.model.instance import Instance
from indexset.model.loading import load_any
from indexset.model.stack import Stack
from indexset.search.engines.brute import absorbing_sets_brute
from indexset.solver import solve
from indexset.theory.degenerate import decide_degenerate
from indexset.theory.nondegeneracy import find_degeneracy
from indexset.theory.rank import rank_argument
from indexset.workflows import construct


def run(capsys, argv):
    capsys.readouterr()
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def save(tmp_path, name, **arrays):
    path = tmp_path / f"{name}.npz"
    np.savez(path, **arrays)
    return str(path)


def assert_witness(instance, result):
    """An absorbable result's witness (flip or §7) equals the block: exactly for ReLU."""
    block = result_witness(instance, result)
    assert block.n == instance.n and block.residual_free
    check = check_forward(instance, block, points=24, seed=7)
    assert check.ok, check.describe()
    return check


# ====================================================== hyper-connections
S4 = 4
C2 = 2


def _mhc_arrays(rng, s=S4, C=C2, n=6):
    """mHC-like layer: H_res a convex mix of permutations (invertible), nondegenerate MLP."""
    cycle = np.roll(np.eye(s, dtype=np.int64), 1, axis=1)
    H_res = (2 * np.eye(s, dtype=np.int64) + cycle)  # over denominator 3: doubly stochastic
    rows = [[1, 0], [0, 1], [1, 1], [1, -1], [2, 1], [1, 2]][:n]
    W_up = np.array(rows, dtype=np.int64) * 3
    W_down = rng.integers(1, 4, size=(C, n)).astype(np.int64) * 3
    H_pre = np.full((1, s), 1, dtype=np.int64)
    H_post = np.array([[3, 2, 1, 3]], dtype=np.int64)[:, :s]
    return dict(H_res=H_res, H_pre=H_pre, H_post=H_post, W_up=W_up, W_down=W_down, denominator=np.array(3))


def test_mhc_block_effective_instance_matches_stream_form():
    arrays = _mhc_arrays(np.random.default_rng(0))
    inst = effective_instance(arrays)
    assert (inst.n, inst.d) == (6, S4 * C2)
    q = 3.0
    H_res, H_pre, H_post = arrays["H_res"] / q, arrays["H_pre"] / q, arrays["H_post"] / q
    W_up, W_down = arrays["W_up"] / q, arrays["W_down"] / q
    X = np.random.default_rng(1).normal(size=(5, S4, C2))
    read = np.einsum("ks,bsc->bc", H_pre, X)
    mlp = np.maximum(read @ W_up.T, 0) @ W_down.T
    expected = np.einsum("st,btc->bsc", H_res, X) + np.einsum("ks,bc->bsc", H_post, mlp)
    assert np.allclose(forward_float(inst, X.reshape(5, -1)), expected.reshape(5, -1), atol=1e-12)


def test_mhc_s4_rank_argument_not_absorbable_quickly(tmp_path, capsys):
    arrays = _mhc_arrays(np.random.default_rng(0))
    inst = effective_instance(arrays)
    assert find_degeneracy(inst).nondegenerate
    argument = rank_argument(inst)
    assert argument["rank_write"] <= C2 < S4 * C2 and argument["applies"]
    # the claim, checked independently: every product W_down'[:,S]·W_up'[S,:] has rank ≤ C
    down, up = inst.float_array("W_down"), inst.float_array("W_up")
    for S in [[0, 1], [0, 1, 2, 3, 4, 5], [2, 5]]:
        assert np.linalg.matrix_rank(down[:, S] @ up[S, :]) <= C2
    result = solve(inst)
    assert result.status == "not_absorbable" and result.complete
    assert result.engine == "rank" and "search" not in result.stages  # decided by the ranks alone, before any search
    assert result.certificate["kind"] == "rank"  # the rank argument of MATH.md §3
    assert absorbing_sets_brute(inst) == []
    path = save(tmp_path, "mhc", **arrays)
    code, out, err = run(capsys, ["solve", "--json", path])
    assert code == 1, err
    payload = json.loads(out)
    assert payload["status"] == "not_absorbable" and payload["certificate"]["kind"] == "rank"
    code, out, err = run(capsys, ["info", "--json", path])
    info = json.loads(out)
    assert code == 0 and info["hyper_connection"]["s"] == S4 and "rank argument" in info["argument"]


def test_singular_doubly_stochastic_h_res_is_an_input_error(tmp_path, capsys):
    arrays = _mhc_arrays(np.random.default_rng(0))
    arrays["H_res"] = np.full((S4, S4), 1, dtype=np.int64)  # all entries 1/4 over denominator 4
    arrays["denominator"] = np.array(4)
    arrays["W_up"], arrays["W_down"] = arrays["W_up"] // 3 * 4, arrays["W_down"] // 3 * 4
    arrays["H_pre"], arrays["H_post"] = arrays["H_pre"] * 4, arrays["H_post"] * 4
    path = save(tmp_path, "singular", **arrays)
    for command in (["solve"], ["info"]):
        code, out, err = run(capsys, command + [path])
        assert code == 2 and out == ""
        assert "doubly stochastic and singular" in err and "1/s" in err and len(err.splitlines()) == 1


def test_hyper_file_keys_are_checked(tmp_path, capsys):
    arrays = _mhc_arrays(np.random.default_rng(0))
    bad = {
        "with_skip": dict(arrays, skip=np.eye(S4 * C2, dtype=np.int64)),
        "missing": {k: v for k, v in arrays.items() if k != "H_post"},
        "shape": dict(arrays, H_pre=np.ones((2, S4), dtype=np.int64)),
        "stacked": dict(arrays, W_up=np.stack([arrays["W_up"]] * 2), W_down=np.stack([arrays["W_down"]] * 2)),
    }
    for name, content in bad.items():
        code, _, err = run(capsys, ["solve", save(tmp_path, name, **content)])
        assert code == 2, (name, err)


def test_hyper_c1_is_degenerate_and_decided_by_section_7():
    """C = 1: every read row lies on the line of H_pre; wide blocks absorb, narrow ones do not."""
    base = dict(H_res=np.array([[2, 1], [1, 2]]), H_pre=np.array([1, 1]), H_post=np.array([1, 2]))
    wide = effective_instance(dict(base, W_up=np.array([[1], [2], [3], [1], [2], [3]]), W_down=np.array([[1, -2, 1, 3, -1, 2]])))
    result = solve(wide)
    assert result.status == "absorbable" and result.extension and result.certificate["argument"] == "MATH.md §7"
    assert assert_witness(wide, result).exact
    narrow = effective_instance(dict(base, W_up=np.array([[1], [2]]), W_down=np.array([[1, 1]])))
    result = solve(narrow)
    assert result.status == "not_absorbable" and result.certificate["argument"] == "MATH.md §7"


# ====================================================== stacks
def test_three_block_relu_stack_absorbs_blockwise(tmp_path, capsys):
    built = construct.stack(layers=3, d=2, n=8, seed=1)
    path = tmp_path / "stack.npz"
    built.save(path)
    loaded = load_any(path)
    assert isinstance(loaded, Stack) and loaded.L == 3 and loaded.planted == built.planted
    result = solve(loaded)
    assert result.status == "absorbable" and result.verified
    candidate = witness_stack(loaded, result.certificate)
    check = check_stack_forward(loaded, candidate, points=24, seed=3)
    assert check.ok and check.exact
    out = tmp_path / "witness_stack.npz"
    code, _, err = run(capsys, ["solve", path, "--witness", out])
    assert code == 0, err
    written = Stack.load(out)
    assert written.residual_free and written.L == 3
    assert check_stack_forward(loaded, written, points=24, seed=5).exact


def test_construct_stack_cli(tmp_path, capsys):
    paths = [tmp_path / "a.npz", tmp_path / "b.npz"]
    for path in paths:
        code, out, err = run(capsys, ["construct", "stack", "--layers", "3", "--n", "8", "--seed", "5", "-o", path])
        assert code == 0 and "L = 3" in out, err
    assert paths[0].read_bytes() == paths[1].read_bytes()
    assert Stack.load(paths[0]).L == 3
    assert run(capsys, ["solve", paths[0]])[0] == 0
    code, _, err = run(capsys, ["construct", "stack", "--layers", "0", "-o", tmp_path / "c.npz"])
    assert code == 2 and "--layers" in err and not (tmp_path / "c.npz").exists()


def test_stack_with_a_failing_block_is_unknown_naming_it():
    blocks = construct.stack(layers=3, d=2, n=8, seed=2).blocks
    blocks[1] = construct.random(d=2, n=8, seed=4)  # certified: no S, nondegenerate
    result = solve(Stack(blocks))
    assert result.status == "unknown"
    assert result.stages["failing"] == [1]


def test_swiglu_stack_is_not_absorbable_by_depth_corollary(tmp_path, capsys):
    built = construct.stack(layers=3, d=2, n=6, activation="swiglu", seed=3)
    path = tmp_path / "swiglu.npz"
    built.save(path)
    code, out, err = run(capsys, ["solve", "--json", path, "--class", "bias-free"])
    assert code == 1, err
    payload = json.loads(out)
    assert payload["certificate"] == {"kind": "theorem", "argument": "MATH.md §4"} and payload["class"] == "bias-free"
    code, out, _ = run(capsys, ["info", "--json", path, "--class", "bias-free"])
    info = json.loads(out)
    assert info["kind"] == "stack" and "depth corollary" in info["argument"] and len(info["blocks"]) == 3
    # a bias between blocks breaks F(0) = 0: no theorem, unknown
    biased = Stack([Instance(b.W_up, b.W_down, b_down=np.ones(2, dtype=np.int64), W_gate=b.W_gate,
                             activation="swiglu") for b in built.blocks])
    assert solve(biased, target_class="bias-free").status == "unknown"
    # Against blocks with biases the corollary says nothing: only block-wise witnesses could decide.
    code, out, _ = run(capsys, ["solve", "--json", path])
    payload = json.loads(out)
    assert payload["class"] == "affine" and (payload["certificate"] or {}).get("kind") != "theorem"
    assert payload["status"] in ("absorbable", "unknown")


def test_stack_layout_mixtures_are_refused(tmp_path, capsys):
    eye = np.eye(2, dtype=np.int64)
    bad = {
        "suffix": dict(W_up_0=eye, W_down_0=eye, W_up_1=eye, W_down_1=eye),
        "suffix_and_stacked": dict(W_up=np.stack([eye, eye]), W_down=np.stack([eye, eye]), W_up_2=eye),
        "suffix_and_block": dict(W_up=eye, W_down=eye, b_up_0=np.ones(2)),
        "mixed_ndim": dict(W_up=np.stack([eye, eye]), W_down=eye),
        "layers": dict(W_up=np.stack([eye, eye]), W_down=np.stack([eye, eye, eye])),
    }
    for name, arrays in bad.items():
        path = save(tmp_path, name, **arrays)
        with pytest.raises(InputError):
            load_any(path)
        code, _, err = run(capsys, ["info", path])
        assert code == 2 and len(err.splitlines()) == 1, (name, err)
    assert "suffix keys are not read" in run(capsys, ["solve", save(tmp_path, "s", **bad["suffix"])])[2]


def test_stack_round_trip_keeps_values(tmp_path):
    built = construct.stack(layers=2, d=3, n=9, seed=4, activation="leaky_relu:1/2", biases=True)
    built.save(tmp_path / "a.npz")
    again = Stack.load(tmp_path / "a.npz")
    for a, b in zip(built.blocks, again.blocks):
        for key in ("W_up", "W_down", "b_up", "b_down", "skip"):
            assert (a.exact(key)[0] == b.exact(key)[0]).all() and a.exact(key)[1] == b.exact(key)[1]


# ====================================================== degenerate weights
def test_d1_absorbs_although_no_S_satisfies_star(tmp_path, capsys):
    inst = Instance(np.array([[1], [2]]), np.array([[1, 1]]))  # x + σ(x) + σ(2x): products 1, 2 ≠ −1
    assert absorbing_sets_brute(inst) == []
    result = solve(inst)
    assert result.status == "absorbable" and result.extension and result.index_set is None
    assert assert_witness(inst, result).exact
    path = save(tmp_path, "d1", W_up=inst.W_up, W_down=inst.W_down)
    out = tmp_path / "w.npz"
    code, text, err = run(capsys, ["solve", "--json", path, "--witness", out])
    assert code == 0, err
    payload = json.loads(text)
    assert payload["certificate"]["argument"] == "MATH.md §7" and payload["witness"]["forward_check"]["exact"]
    assert check_forward(inst, Instance.load(out)).ok


def test_zero_column_absorbs_although_no_S_satisfies_star():
    # f(x) = x + (5,3)σ(x1) − e2 σ(x2) + 0·σ(x1 + x2): the free unit lets class e1 take any column
    inst = Instance(np.array([[1, 0], [0, 1], [1, 1]]), np.array([[5, 0, 0], [3, -1, 0]]))
    assert find_degeneracy(inst).zero_columns == [2]
    assert absorbing_sets_brute(inst) == []
    result = solve(inst)
    assert result.status == "absorbable" and result.certificate["upgraded"]
    assert assert_witness(inst, result).exact


def test_d1_single_unit_matches_the_slope_argument():
    """d = n = 1: f has slopes a and a + c·w·u on the two half-lines (or a twice);
    a one-unit g has slopes v·p and α·v·p, which forces a + c·w·u = 0 (a ≠ 0, α ≠ 1)."""
    values = [Fraction(v) for v in (-2, -1, Fraction(-1, 2), Fraction(1, 3), 1, 2)]
    count = {True: 0, False: 0}
    for activation, c in (("relu", 1), ("leaky_relu:1/2", Fraction(3, 2)), ("leaky_relu:-1/3", Fraction(2, 3))):
        for a, u, w in itertools.product(values[:4], values, values):
            expected = a + c * w * u == 0
            inst = _rational_instance([[u]], [[w]], [[a]], activation)
            result = decide_degenerate(inst)
            assert (result.status == "absorbable") == expected, (activation, a, u, w, result.reason)
            count[expected] += 1
            if expected:
                assert_witness(inst, result)
    assert count[True] >= 10 and count[False] >= 50


def test_d1_relu_with_two_units_always_absorbs():
    """Two ReLU units on R realise any pair of slopes (P·σ(x) + N·σ(−x)), so width ≥ 2 always absorbs."""
    rng = np.random.default_rng(11)
    for _ in range(30):
        n = int(rng.integers(2, 5))
        inst = Instance(rng.integers(-3, 4, size=(n, 1)), rng.integers(-3, 4, size=(1, n)),
                        skip=np.array([[int(rng.choice([-2, -1, 1, 3]))]]))
        result = decide_degenerate(inst)
        assert result.status == "absorbable"
        assert assert_witness(inst, result).exact


def test_collinear_pair_in_the_plane_never_absorbs_unless_linear():
    """d = 2, two units on one line ρ: f = E·σ(ρx) + Lx. If E ≠ 0, g must spend a unit on ρ, and the
    other unit can only add a column times ρᵀ (or nothing), which never cancels the rank-2 skip
    restricted to ρ^⊥; if E = 0, f is linear and absorbs iff rank L ≤ 1 (one pair)."""
    cases = [
        (np.array([[1, 0], [2, 0]]), np.array([[1, 2], [0, 1]]), "not_absorbable"),
        (np.array([[1, 1], [-3, -3]]), np.array([[1, 0], [4, 2]]), "not_absorbable"),
        (np.array([[1, 0], [-1, 0]]), np.array([[1, 1], [0, 0]]), "not_absorbable"),  # f = 2e1σ(x1) + e2x2
        (np.array([[1, 0], [-1, 0]]), np.array([[1, -1], [0, 0]]), "not_absorbable"),  # E = 0, f = x + e1x1
        (np.array([[1, 0], [-1, 0]]), np.array([[-1, 1], [0, 0]]), "absorbable"),  # E = 0, f = x − e1x1 = e2x2
    ]
    for up, down, expected in cases:
        inst = Instance(up, down)
        result = solve(inst)
        assert result.status == expected, (up, down, result.reason)
        if expected == "absorbable":
            assert_witness(inst, result)
        else:
            assert result.extension and result.certificate["argument"] == "MATH.md §7" and result.complete


def _rational_instance(up, down, skip, activation):
    """An instance from nested lists of Fractions (numerators over their common denominator)."""
    den = 1
    for matrix in (up, down, skip):
        for row in matrix:
            for v in row:
                den = den * Fraction(v).denominator // int(np.gcd(den, Fraction(v).denominator))
    def num(matrix):
        return np.array([[int(Fraction(v) * den) for v in row] for row in matrix], dtype=np.int64)
    return Instance(num(up), num(down), skip=num(skip), activation=activation, denominator=den)


def test_section_7_matches_an_independent_reference_on_small_blocks():
    rng = np.random.default_rng(2026)
    seen = {"absorbable": 0, "not_absorbable": 0}
    for trial in range(220):
        d, n = int(rng.integers(1, 4)), int(rng.integers(1, 6))
        up, down = rng.integers(-2, 3, size=(n, d)), rng.integers(-2, 3, size=(d, n))
        if n >= 2 and rng.random() < 0.6:
            up[1] = up[0] * int(rng.choice([1, -1, 2, -2]))
        activation = ("relu", "leaky_relu:1/2", "gelu", "silu")[trial % 4]
        inst = Instance(up, down, activation=activation)
        result = decide_degenerate(inst)
        assert result.decided, result.reason
        assert (result.status == "absorbable") == section_7_reference(inst), (up, down, activation)
        seen[result.status] += 1
        if result.status == "absorbable":
            assert_witness(inst, result)
    assert min(seen.values()) >= 40, seen


def test_section_7_agrees_with_star_on_nondegenerate_blocks():
    """Nondegenerate weights: the §7 decision must be the paper's (★) criterion."""
    statuses = set()
    for seed in range(12):
        for inst in (construct.planted(d=2, n=6, seed=seed), construct.random(d=2, n=6, seed=seed)):
            result = decide_degenerate(inst)
            assert (result.status == "absorbable") == bool(absorbing_sets_brute(inst))
            statuses.add(result.status)
    assert statuses == {"absorbable", "not_absorbable"}  # both answers were compared


def test_analytic_activations_merge_only_equal_rows():
    # GELU: rows 1 and 2 in d = 1 are different classes (e(x) and e(2x) are independent), so no spare unit
    gelu = Instance(np.array([[1], [2]]), np.array([[1, 1]]), activation="gelu")
    assert decide_degenerate(gelu).status == "not_absorbable"
    relu = Instance(np.array([[1], [2]]), np.array([[1, 1]]))
    assert decide_degenerate(relu).status == "absorbable"
    # GELU duplicate rows do merge: a spare unit appears
    dup = Instance(np.array([[1], [1]]), np.array([[1, 1]]), activation="gelu")
    result = decide_degenerate(dup)
    assert result.status == "absorbable"
    assert_witness(dup, result)


def test_biases_and_irrational_constants():
    # ReLU, collinear rows with different biases: two distinct hyperplanes, no merge, no spare unit
    inst = Instance(np.array([[1, 0], [2, 0], [0, 1]]), np.array([[1, 1, 0], [0, 1, 1]]), b_up=np.array([0, 1, 0]))
    result = solve(inst)
    assert result.status == "not_absorbable" and result.certificate["argument"] == "MATH.md §7"
    # softplus with a zero row: σ(0) = log 2 lands in c_down (rounded), still absorbable
    soft = Instance(np.array([[1, 0], [0, 0], [0, 1], [1, 1]]), np.array([[1, 1, 0, 0], [0, 0, 1, 0]]), activation="softplus")
    result = decide_degenerate(soft)
    assert result.status == "absorbable" and result.certificate["rounded_constant"]
    assert_witness(soft, result)


def test_section_7_does_not_apply_where_it_should_not():
    inst = Instance(np.array([[1], [1]]), np.array([[2, 3]]))
    assert decide_degenerate(inst, tol=Fraction(1, 10)) is None
    assert decide_degenerate(Instance(np.array([[1], [1]]), np.array([[2, 3]]), activation="leaky_relu:1")) is None
    assert decide_degenerate(Instance(np.array([[1], [1]]), np.array([[2, 3]]), residual_free=True)) is None
    # with a tolerance the solver keeps "unknown" on degenerate weights
    assert solve(inst, tol=Fraction(1, 10)).status == "unknown"
