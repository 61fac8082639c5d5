"""``indexset.solve`` against independent references (issue 3).

Every answer is checked against a reference that shares no code with the
solver pipeline: the brute force over all 2^n subsets
(:func:`indexset.search.engines.brute.absorbing_sets_brute`), the meet-in-the-middle
and Fraction references of ``reference.py``, and the exact verifier.
Never against numbers copied from an earlier run. Every RNG is seeded.
"""

from __future__ import annotations

import json
import math
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest
from reference import (
    brute_within,
    check_affine_class,
    check_certificate,
    check_result,
    fractions,
    mitm_solutions,
    rank,
)

from indexset import solve
from indexset.budget import TIME_LIMIT
from indexset.cli.main import main
from indexset.exact.verify import verify
from indexset.exact.witness import check_forward
from indexset.model.forward import forward_float
from indexset.model.instance import Instance
from indexset.search.engines.brute import absorbing_sets_brute
from indexset.theory.nondegeneracy import find_degeneracy
from indexset.workflows import construct

INSTANCES = Path(__file__).resolve().parents[1] / "instances"
ACTIVATIONS = ["relu", "gelu", "leaky_relu:1/2", "silu"]


# =========================================== 1. seeded random families
def _fraction_matrix_inverse(U):
    """Inverse of a square Fraction matrix (Gauss–Jordan), or None if singular."""
    d = len(U)
    work = [[Fraction(v) for v in row] + [Fraction(int(i == j)) for j in range(d)] for i, row in enumerate(U)]
    for col in range(d):
        pivot = next((r for r in range(col, d) if work[r][col] != 0), None)
        if pivot is None:
            return None
        work[col], work[pivot] = work[pivot], work[col]
        p = work[col][col]
        work[col] = [v / p for v in work[col]]
        for r in range(d):
            if r != col and work[r][col] != 0:
                f = work[r][col]
                work[r] = [a - f * b for a, b in zip(work[r], work[col])]
    return [row[d:] for row in work]


def _skip(rng, d, kind):
    """A skip matrix as Fractions (None for the implicit identity)."""
    if kind == "identity":
        return None
    if kind == "explicit_identity":
        return [[Fraction(int(i == j)) for j in range(d)] for i in range(d)]
    if kind == "permutation":
        perm = rng.permutation(d)
        return [[Fraction(int(perm[i] == j)) for j in range(d)] for i in range(d)]
    while True:  # a random invertible integer matrix (det ≠ ±1 allowed)
        A = [[Fraction(int(v)) for v in row] for row in rng.integers(-2, 3, size=(d, d))]
        if rank(A) == d:
            return A


def _pack(up, down, skip, b_up, b_down, activation, dtype):
    """Store Fraction arrays exactly: float64 (dyadic data) or int numerators over q."""
    arrays = {"W_up": up, "W_down": down, "skip": skip, "b_up": b_up, "b_down": b_down}
    arrays = {k: np.array(v, dtype=object) for k, v in arrays.items() if v is not None}
    values = [Fraction(x) for a in arrays.values() for x in a.ravel()]
    if dtype == "float" and all(Fraction(float(v)) == v for v in values):
        return Instance(**{k: a.astype(np.float64) for k, a in arrays.items()}, activation=activation)
    q = math.lcm(1, *(v.denominator for v in values))
    numerators = {k: np.array([int(Fraction(x) * q) for x in a.ravel()], dtype=object).reshape(a.shape) for k, a in arrays.items()}
    assert all(abs(int(x)) < 2**53 for a in numerators.values() for x in a.ravel())
    return Instance(**{k: a.astype(np.int64) for k, a in numerators.items()}, activation=activation, denominator=q)


def draw(family, seed):
    """One seeded random instance of a test family (n ≤ 16, d = 1..4).

    Families: ``int`` (entries in [−R, R], R ≤ 3), ``rational`` (entries
    over a denominator), ``dyadic`` (float64 holding exact k/2^e values),
    ``gauss`` (Gaussian float64, n ≤ 9). Half of the non-Gaussian draws
    plant an index set by solving for the down weights of d planted units
    exactly (so rational data appears), with random skips and biases.
    """
    rng = np.random.default_rng([7919, ["int", "rational", "dyadic", "gauss"].index(family), seed])
    d = int(rng.integers(1, 5))
    n = int(rng.integers(1, 10 if family == "gauss" else 17))
    activation = ACTIVATIONS[int(rng.integers(len(ACTIVATIONS)))]
    skip_kind = ["identity", "explicit_identity", "permutation", "invertible"][int(rng.integers(4))]
    A = _skip(rng, d, skip_kind)
    biases = bool(rng.integers(2))
    R = int(rng.integers(1, 4))
    if family == "gauss":
        up = rng.standard_normal((n, d))
        down = rng.standard_normal((d, n))
        skip = None if A is None else np.array([[float(v) for v in row] for row in A])
        b = dict(b_up=rng.standard_normal(n), b_down=rng.standard_normal(d)) if biases else {}
        return Instance(up, down, skip, activation=activation, **b)
    scale = {"int": 1, "rational": int(rng.choice([2, 3, 6])), "dyadic": int(rng.choice([2, 4, 8]))}[family]
    up = [[Fraction(int(v), scale) for v in row] for row in rng.integers(-R, R + 1, size=(n, d))]
    down = [[Fraction(int(v), 1) for v in row] for row in rng.integers(-R, R + 1, size=(d, n))]
    if family == "dyadic":
        down = [[v * scale / 2 for v in row] for row in down]
    if rng.integers(2) and n >= d:
        k = int(rng.integers(d, min(n, d + 3) + 1))
        S = [int(i) for i in rng.choice(n, size=k, replace=False)]
        first, rest = S[:d], S[d:]
        inverse = _fraction_matrix_inverse([up[i] for i in first])
        if inverse is not None:
            c = Fraction(construct.activations.get(activation).c)
            skip_values = A or [[Fraction(int(i == j)) for j in range(d)] for i in range(d)]
            target = [[-skip_values[a][b] / c - sum(down[a][i] * up[i][b] for i in rest) for b in range(d)] for a in range(d)]
            block = [[sum(target[a][j] * inverse[j][b] for j in range(d)) for b in range(d)] for a in range(d)]
            for a in range(d):
                for j, unit in enumerate(first):
                    down[a][unit] = block[a][j]
    b_up = [Fraction(int(v), scale) for v in rng.integers(-R, R + 1, size=n)] if biases else None
    b_down = [Fraction(int(v)) for v in rng.integers(-R, R + 1, size=d)] if biases else None
    return _pack(up, down, A, b_up, b_down, activation, "float" if family == "dyadic" else "int")


FAMILY_SEEDS = [("int", s) for s in range(70)] + [("rational", s) for s in range(45)] + \
    [("dyadic", s) for s in range(45)] + [("gauss", s) for s in range(16)]


QUICK_SEEDS = 10
"""Seeds per family in the quick run (``-m "not slow"``); the rest are marked slow."""


@pytest.mark.parametrize("family, seed", [pytest.param(f, s, id=f"{f}-{s}", marks=[pytest.mark.slow] if s >= QUICK_SEEDS else []) for f, s in FAMILY_SEEDS])
def test_find_all_equals_brute_force(family, seed):
    instance = draw(family, seed)
    reference = absorbing_sets_brute(instance)
    result = solve(instance, find_all=True, seed=seed)
    check_result(instance, result, reference, find_all=True)
    if family == "dyadic":
        assert instance.W_up.dtype == np.float64 or instance.denominator > 1


ENGINE_SEEDS = [("int", s) for s in range(0, 70, 3)] + [("rational", s) for s in range(1, 45, 4)] + \
    [("dyadic", s) for s in range(2, 45, 4)]


@pytest.mark.parametrize("engine", ["lattice", "cpsat"])
def test_find_all_each_engine_alone(engine):
    """Each search engine on its own enumerates exactly the brute-force set."""
    for family, seed in ENGINE_SEEDS:
        instance = draw(family, seed)
        result = solve(instance, find_all=True, seed=seed, engines=[engine])
        try:
            check_result(instance, result, absorbing_sets_brute(instance), find_all=True)
        except AssertionError as error:
            raise AssertionError(f"{family}-{seed}: {error}") from None


def test_random_families_cover_every_case():
    """The draws above are not vacuous: yes, many-S, proven no and degenerate no all occur."""
    seen = {"yes": 0, "several": 0, "no_nondegenerate": 0, "no_degenerate": 0, "float": 0, "rational": 0, "d1": 0, "skip": 0}
    for family, seed in FAMILY_SEEDS:
        instance = draw(family, seed)
        reference = absorbing_sets_brute(instance)
        nondegenerate = find_degeneracy(instance).nondegenerate
        seen["yes"] += bool(reference)
        seen["several"] += len(reference) > 1
        seen["no_nondegenerate"] += not reference and nondegenerate
        seen["no_degenerate"] += not reference and not nondegenerate
        seen["float"] += instance.W_up.dtype == np.float64
        seen["rational"] += instance.denominator > 1
        seen["d1"] += instance.d == 1
        seen["skip"] += not instance.identity_skip
    assert all(count >= 8 for count in seen.values()), seen


def _span_instances():
    """Small blocks (n ≤ 3 < d²) where t is often outside the column space of M."""
    for seed in range(40):
        rng = np.random.default_rng([104729, seed])
        d = int(rng.integers(2, 4))
        n = int(rng.integers(1, 4))
        activation = ACTIVATIONS[seed % len(ACTIVATIONS)]
        A = _skip(rng, d, ["identity", "invertible", "permutation"][seed % 3])
        up = [[Fraction(int(v)) for v in row] for row in rng.integers(-3, 4, size=(n, d))]
        down = [[Fraction(int(v), int(rng.integers(1, 4))) for v in row] for row in rng.integers(-3, 4, size=(d, n))]
        yield _pack(up, down, A, None, None, activation, "int")


def test_span_certificates_check_independently():
    kinds = []
    for instance in _span_instances():
        reference = absorbing_sets_brute(instance)
        result = solve(instance, find_all=True)
        check_result(instance, result, reference, find_all=True)
        if result.status != "absorbable":
            kinds.append(check_certificate(instance, result.certificate))
    assert kinds.count("span") >= 10, kinds


def test_degenerate_without_S_is_decided_by_section_7():
    """MATH.md §3: on d = 1 and collinear rows (★) is sufficient only; §7 (issue 6) decides exactly."""
    cases = [
        # d = 1, no S: 2·z0 + 3·z1 = −1 has no 0/1 solution, yet one ReLU class and a spare unit absorb
        (Instance(np.array([[1], [1]]), np.array([[2, 3]])), "absorbable"),
        # two units on one line, (★) impossible: the spare unit cannot fix the mismatch on e2
        (Instance(np.array([[1, 0], [2, 0], [0, 1]]), np.array([[1, 1, 0], [0, 0, 1]])), "not_absorbable"),
        # a zero W_down column and a zero W_up row, with biases, leaky ReLU
        (Instance(np.array([[1, 2], [0, 0], [3, 1]]), np.array([[1, 0, 2], [1, 0, 1]]),
                  b_up=np.array([1, 2, 3]), b_down=np.array([1, 1]), activation="leaky_relu:1/2"), "not_absorbable"),
    ]
    for instance, expected in cases:
        assert absorbing_sets_brute(instance) == []
        assert not find_degeneracy(instance).nondegenerate
        for find_all in (False, True):
            result = solve(instance, find_all=find_all)
            assert result.status == expected, result.reason
            check_result(instance, result, [], find_all=find_all)


def test_free_units_multiply_solutions():
    """Units in no equation (zero down column) double the solution count; find_all lists them all."""
    up = np.array([[1, 0], [0, 1], [1, 1], [2, 1], [1, 3]])
    down = np.array([[-1, 0, 0, 0, 0], [0, -1, 0, 0, 0]])
    instance = Instance(up, down)
    reference = absorbing_sets_brute(instance)
    assert len(reference) == 8
    result = solve(instance, find_all=True)
    check_result(instance, result, reference, find_all=True)


# ====================================== 2. planted instances, every option
PLANTED = [
    dict(d=2, n=12),
    dict(d=2, n=14, activation="gelu", biases=True),
    dict(d=3, n=12, activation="silu", skip="unimodular"),
    dict(d=2, n=10, activation="softplus", skip="permutation", biases=True),
    dict(d=2, n=12, activation="leaky_relu:1/2", biases=True),
    dict(d=3, n=12, activation="leaky_relu:-1/3", skip="mhc"),
    dict(d=4, n=12, skip="mhc", streams=2, activation="gelu"),
    dict(d=2, n=12, k=2, denominator=4),
    dict(d=3, n=10, k=3, skip="permutation", activation="leaky_relu:1/2"),
    dict(d=4, n=8, k=4, skip="unimodular", biases=True, activation="softplus"),
    dict(d=2, n=10, k=10, range=3, activation="leaky_relu:-1/3"),
    dict(d=3, n=9, k=9, activation="silu", range=2, skip="mhc"),
    dict(d=4, n=16, activation="silu", denominator=2),
    dict(d=3, n=16, skip="mhc", biases=True, activation="softplus"),
    dict(d=2, n=16, skip="unimodular", activation="leaky_relu:-1/3", denominator=6),
    dict(d=3, n=14, skip="permutation", activation="gelu", denominator=3, biases=True),
    dict(d=2, n=16, k=16, range=4, activation="relu", biases=True),
    dict(d=4, n=4, k=4, range=1, activation="leaky_relu:1/2", skip="permutation"),
]
PLANTED_SEEDS = range(6)


def _label(options):
    return ",".join(f"{k}={v}" for k, v in options.items())


@pytest.mark.parametrize("options", PLANTED, ids=_label)
def test_planted_is_always_found(options):
    for seed in PLANTED_SEEDS:
        instance = construct.planted(seed=seed, **options)
        reference = absorbing_sets_brute(instance)
        assert instance.planted in reference  # the construction itself
        result = solve(instance, seed=seed)
        assert result.status == "absorbable", f"seed {seed}: {result.reason}"
        check_result(instance, result, reference, find_all=False)
        assert len(result.index_set) >= instance.d


@pytest.mark.parametrize("options", PLANTED, ids=_label)
def test_planted_witness_from_cli_passes_forward_check(options, tmp_path, capsys):
    instance = construct.planted(seed=11, **options)
    path = tmp_path / "block.npz"
    out = tmp_path / "witness.npz"
    construct.write_reproducible(instance, path)
    capsys.readouterr()
    code = main(["solve", str(path), "--witness", str(out), "--json"])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    payload = json.loads(captured.out)
    assert payload["status"] == "absorbable"
    S = payload["index_set"]
    assert verify(instance, S).holds
    block = Instance.load(out)
    assert block.residual_free and block.skip is None
    assert block.activation == instance.activation
    check = check_forward(instance, block, points=24, seed=5)
    assert check.ok, check.describe()
    # The witness is the flip construction of MATH.md §2 for the reported S.
    up = fractions(instance, "W_up")
    expected = np.array([[-v if i in S else v for v in row] for i, row in enumerate(up)], dtype=object)
    assert (fractions(block, "W_up") == expected).all()
    assert (fractions(block, "W_down") == fractions(instance, "W_down")).all()


def test_planted_wider_than_brute_force_is_found():
    """n = 20..24: the planted S is among the meet-in-the-middle solutions."""
    for seed, (d, n) in enumerate([(2, 20), (3, 22), (2, 24), (4, 24)]):
        instance = construct.planted(d=d, n=n, seed=seed, activation=ACTIVATIONS[seed])
        reference = mitm_solutions(instance)
        assert instance.planted in reference
        result = solve(instance, time_limit=60, find_all=True, seed=seed)
        check_result(instance, result, reference, find_all=True, complete=False)
        assert result.status == "absorbable"


@pytest.mark.slow
# ================================================= 3. hard, n ≈ 30–40, d = 2
# The default portfolio at n = 30; the lattice engine alone at n = 36, 40 (with
# both engines the run lasts until CP-SAT's own time limit even when the
# lattice engine answered at once: CP-SAT misses a stop set before it starts).
@pytest.mark.parametrize("n, seed, engines", [(30, 1, None), (36, 0, ["lattice"]), (40, 1, ["lattice"])])
def test_hard_planted_is_found(n, seed, engines):
    instance = construct.hard(d=2, n=n, seed=seed)
    reference = mitm_solutions(instance)
    assert instance.planted in reference
    result = solve(instance, time_limit=60, seed=seed, engines=engines)
    if result.status == "unknown":
        # Only a time-out may excuse a planted instance.
        assert result.halted == TIME_LIMIT, result.reason
    else:
        assert result.status == "absorbable", result.reason
    check_result(instance, result, reference, find_all=False, complete=False)


@pytest.mark.parametrize("n, seed", [(32, 0), (38, 2)])
def test_hard_unplanted_never_a_wrong_verdict(n, seed):
    instance = construct.hard(d=2, n=n, seed=seed, plant=False)
    reference = mitm_solutions(instance)
    result = solve(instance, time_limit=60, seed=seed, engines=["lattice"])
    check_result(instance, result, reference, find_all=False, complete=False)


def test_hard_find_all_equals_meet_in_the_middle():
    instance = construct.hard(d=2, n=28, seed=3)
    reference = mitm_solutions(instance)
    result = solve(instance, time_limit=60, find_all=True, engines=["lattice"])
    check_result(instance, result, reference, find_all=True, complete=False)
    assert result.status == "absorbable"


@pytest.mark.slow
def test_hard_tiny_time_limit_is_unknown_or_right():
    for plant in (True, False):
        instance = construct.hard(d=2, n=40, seed=4, plant=plant)
        reference = mitm_solutions(instance)
        result = solve(instance, time_limit=0.01)
        check_result(instance, result, reference, find_all=False, complete=False)


# ============================== 4. activations absorption is impossible for
SECTION_4 = {"gated": "g(0) = 0", "homogeneous": "homogeneous of degree 2"}


@pytest.mark.parametrize("family, activation, trap, dtype", [
    ("gated", "swiglu", False, "int"),
    ("gated", "swiglu", True, "int"),
    ("gated", "geglu", True, "int"),
    ("gated", "geglu", False, "float"),
    ("gated", "reglu", True, "int"),
    ("homogeneous", "relu2", False, "int"),
    ("homogeneous", "relu2", True, "int"),
    ("homogeneous", "relu2", False, "float"),
    ("homogeneous", "reglu", True, "int"),
])
def test_impossible_activations_are_not_absorbable_by_theorem(family, activation, trap, dtype):
    for seed in range(3):
        instance = construct.build(family, activation=activation, d=2 + seed, n=8, seed=seed, trap=trap, dtype=dtype)
        if trap:
            # As a ReLU block the trap would be absorbable; the activation forbids it.
            as_relu = Instance(instance.W_up, instance.W_down, instance.skip, denominator=instance.denominator)
            assert verify(as_relu, instance.metadata["trap_S"]).holds
        for find_all in (False, True):
            result = solve(instance, find_all=find_all, target_class="bias-free")
            assert result.status == "not_absorbable", result.reason
            assert result.certificate == {"kind": "theorem", "argument": "MATH.md §4"} and result.target_class == "bias-free"
            assert result.stages["classify"] == instance.act.kind
            assert result.index_set is None
        check_affine_class(instance, solve(instance))


def test_sigmoid_glu_is_unknown():
    for seed, trap in ((0, False), (1, True)):
        instance = construct.gated(activation="glu", d=3, n=6, seed=seed, trap=trap)
        result = solve(instance)
        assert result.status == "unknown"
        assert result.engine == "theorem" and result.stages["classify"] == "uncovered"
        assert result.index_set is None and result.certificate is None


def _forward_equal(f, g, d, seed=3):
    x = np.random.default_rng(seed).integers(-40, 41, size=(64, d)) / 8
    return np.allclose(forward_float(f, x), forward_float(g, x), atol=1e-9)


def test_relu2_with_biases_is_not_claimed_impossible():
    """The degree argument of MATH.md §4 needs σ(W_up x) without a bias.

    relu(z)² = z² − relu(−z)², so flipping units adds Σ w·(u·x + b)²;
    with pairs of units whose quadratic parts cancel, the linear parts
    2·w·b·uᵀ can cancel the skip. This block is absorbable (the test builds
    the residual-free twin and compares them on points), so
    ``not_absorbable`` is a wrong verdict.
    """
    # units: (u = e1, b = 0, w = e1), (e1, 1/2, −e1), (e2, 0, e2), (e2, 1/2, −e2); all over q = 2
    up = np.array([[2, 0], [2, 0], [0, 2], [0, 2]])
    b_up = np.array([0, 1, 0, 1])
    down = np.array([[2, -2, 0, 0], [0, 0, 2, -2]])
    f = Instance(up, down, skip=2 * np.eye(2, dtype=np.int64), b_up=b_up, activation="relu2", denominator=2)
    assert _forward_equal(f, _relu2_twin(f), 2)
    result = solve(f)
    assert result.status != "not_absorbable", result.reason


def _relu2_twin(f):
    """Residual-free twin of the relu2 block above.

    w·relu(z)² = w·z² − w·relu(−z)²: flip every unit and negate its down
    weight; the quadratic and linear parts of Σ w·(u·x + b)² cancel with
    A·x by construction, the constant Σ w·b² moves into the down bias.
    """
    up = fractions(f, "W_up")
    b_up = fractions(f, "b_up")
    down = fractions(f, "W_down")
    const = sum(((b_up[i]) ** 2) * down[:, i] for i in range(f.n))
    values = [v for v in list(up.ravel()) + list(b_up) + list(down.ravel()) + list(const)]
    q = math.lcm(1, *(Fraction(v).denominator for v in values))

    def as_int(values):
        return np.array([int(Fraction(v) * q) for v in np.ravel(values)], dtype=np.int64).reshape(np.shape(values))

    return Instance(as_int(-up), as_int(-down), b_up=as_int(-b_up), b_down=as_int(const), activation="relu2",
                    denominator=q, residual_free=True)


def test_swiglu_with_up_bias_is_not_claimed_impossible():
    """MATH.md §4's O(|x|²) argument needs W_up x without a bias.

    silu(z)·v = silu(−z)·v + z·v, so flipping the gates of units 0 and 1
    adds (x)(x) − (x)(x + 1) = −x: with A = 1 the block equals the
    residual-free block with flipped gates. ``not_absorbable`` is wrong.
    """
    f = Instance(np.array([[1], [1]]), np.array([[1, -1]]), b_up=np.array([0, 1]),
                 W_gate=np.array([[1], [1]]), activation="swiglu")
    g = Instance(np.array([[1], [1]]), np.array([[1, -1]]), b_up=np.array([0, 1]),
                 W_gate=np.array([[-1], [-1]]), activation="swiglu", residual_free=True)
    assert _forward_equal(f, g, 1)
    result = solve(f)
    assert result.status != "not_absorbable", result.reason


# ======================================================== 5. float + tol
@pytest.mark.parametrize("options", [
    dict(d=2, n=10),
    dict(d=3, n=10, skip="mhc", biases=True, activation="gelu"),
    dict(d=2, n=9, activation="leaky_relu:1/3", skip="unimodular"),
    dict(d=3, n=8, k=3, activation="silu", skip="permutation"),
])
def test_float_planted_with_tolerance(options):
    for seed in range(2):
        instance = construct.float_planted(seed=seed, tol="1e-9", **options)
        tol = Fraction("1e-9")
        within = brute_within(instance, tol)
        assert instance.planted in within
        result = solve(instance, tol=tol, find_all=True, seed=seed)
        assert result.status == "absorbable", result.reason
        assert verify(instance, result.index_set, tol=tol).holds
        check_result(instance, result, within, find_all=True, tol=tol)
        # Without tol: exact answers only.
        exact = absorbing_sets_brute(instance)
        plain = solve(instance, find_all=True, seed=seed)
        check_result(instance, plain, exact, find_all=True)
        if plain.status == "absorbable":
            assert verify(instance, plain.index_set).holds


def test_tolerance_zero_on_float_data_is_exact():
    """τ = 0 on float64 data (coefficients far beyond int64): only exact sets count."""
    instance = construct.float_planted(d=2, n=8, seed=5)
    assert absorbing_sets_brute(instance) == [] == brute_within(instance, 0)
    result = solve(instance, tol=Fraction(0), find_all=True)
    check_result(instance, result, [], find_all=True, tol=Fraction(0))


def test_large_tolerance_on_float_data_is_complete():
    instance = construct.float_planted(d=2, n=8, seed=5)
    wide = Fraction(1, 2)
    reference = brute_within(instance, wide)
    assert len(reference) > 1
    result = solve(instance, tol=wide, find_all=True)
    check_result(instance, result, reference, find_all=True, tol=wide)


def test_tolerance_never_admits_a_set_smaller_than_d():
    """With τ ≥ max|A| the empty set meets the residual bound, but (★) needs |S| ≥ d."""
    instance = Instance(np.array([[1, 0], [0, 1]]), np.array([[-1, 0], [0, -1]]))
    assert brute_within(instance, 1) == [[0, 1]]
    for find_all in (False, True):
        result = solve(instance, tol=Fraction(1), find_all=find_all)
        check_result(instance, result, [[0, 1]], find_all=find_all, tol=Fraction(1))


def test_tolerance_on_integer_data():
    instance = construct.planted(d=2, n=10, seed=3, activation="leaky_relu:1/2")
    for tol in (Fraction(1, 3), Fraction(1)):
        result = solve(instance, tol=tol, find_all=True)
        check_result(instance, result, brute_within(instance, tol), find_all=True, tol=tol)


# ===================================================== 6. curated files
@pytest.mark.parametrize("path", sorted(INSTANCES.glob("*.npz")), ids=lambda p: p.name)
def test_curated_instance_agrees_with_brute_force(path):
    instance = Instance.load(path)
    result = solve(instance, find_all=True)
    if instance.act.kind != "odd_linear":
        bias_free = solve(instance, target_class="bias-free")
        assert bias_free.status == "not_absorbable" and bias_free.certificate["argument"] == "MATH.md §4"
        check_affine_class(instance, result)
        return
    check_result(instance, result, absorbing_sets_brute(instance), find_all=True)
    params = json.loads(str(instance.metadata["params"]))
    if "tol" in params:
        tol = Fraction(params["tol"])
        check_result(instance, solve(instance, tol=tol, find_all=True),
                     brute_within(instance, tol), find_all=True, tol=tol)
