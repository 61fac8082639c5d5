"""The Gram path: verdicts, and the certified lower bound against brute force."""

from __future__ import annotations

from dataclasses import replace
from fractions import Fraction

import numpy as np
import pytest

from indexset.errors import InputError
from indexset.large.certified import (
    EXTENDED,
    certify_lambda_min,
    conjugate_gradients,
    float_data,
    gram_bounds,
    lanczos_smallest,
    lower_bound,
    residual,
)
from indexset.large.gram import NOT_CERTIFIED, SINGULAR, GramTuning, gram_applies, gram_decide, screen_degeneracy
from indexset.model.instance import Instance
from indexset.theory.nondegeneracy import find_degeneracy

UNIMODULAR = np.array([[1, 1, 0, 0], [0, 1, 1, 0], [0, 0, 1, 1], [0, 0, 0, 1]], dtype=float)


def planted(seed=0, d=4, n=16, S=(1, 4, 7, 10), skip=None, c=1.0, **kwargs):
    """A float64 block with c·W_down[:,S]·W_up[S,:] = −A exactly, other units random."""
    rng = np.random.default_rng(seed)
    W_up = rng.standard_normal((n, d))
    W_down = rng.standard_normal((d, n))
    A = np.eye(d) if skip is None else skip
    W_up[list(S)] = UNIMODULAR
    W_down[:, list(S)] = -(A / c) @ np.linalg.inv(UNIMODULAR).round()
    assert np.array_equal(c * W_down[:, list(S)] @ W_up[list(S)], -A)
    return W_up, W_down


def brute_distance(instance: Instance) -> float:
    """min over all 2^n subsets of ‖c·W_down[:,S]W_up[S,:] + A‖_F, in float64."""
    n, _d = instance.n, instance.d
    c = float(instance.act.c)
    U, D, A = instance.float_array("W_up"), instance.float_array("W_down"), instance.float_array("skip")
    M = np.stack([np.outer(D[:, i], U[i]).ravel() for i in range(n)], axis=1)
    masks = np.arange(1 << n)
    Z = ((masks[:, None] >> np.arange(n)) & 1).astype(float)
    residual = c * (Z @ M.T) + A.ravel()
    return float(np.sqrt((residual**2).sum(axis=1)).min())


def test_planted_absorbable():
    W_up, W_down = planted()
    result = gram_decide(Instance(W_up, W_down, activation="relu"))
    assert result.status == "absorbable"
    assert result.index_set == [1, 4, 7, 10] and result.verified
    assert result.certificate["distance_upper"] == 0.0
    assert result.stages["rank"] == 16


def test_planted_with_general_skip_and_odd_coefficient():
    skip = np.array([[2.0, 1, 0, 0], [0, 1, 0, 0], [0, 0, 3, 0], [1, 0, 0, 1]])
    W_up, W_down = planted(seed=3, skip=skip, c=2.0)
    instance = Instance(W_up, W_down, skip=skip, activation="leaky_relu:1", b_up=np.ones(16))
    result = gram_decide(instance)
    assert result.status == "absorbable" and result.index_set == [1, 4, 7, 10]
    assert result.extension


def test_random_not_absorbable_and_interval_contains_truth():
    rng = np.random.default_rng(5)
    instance = Instance(rng.standard_normal((10, 4)), rng.standard_normal((4, 10)), activation="gelu")
    result = gram_decide(instance)
    assert result.status == "not_absorbable" and result.complete
    best = brute_distance(instance)
    cert = result.certificate
    assert 0 < cert["distance_lower"] <= best <= cert["distance_upper"] * (1 + 1e-12)
    assert cert["relative_lower"] == pytest.approx(cert["distance_lower"] / 2.0)
    assert result.stages["distance_lower"] == cert["distance_lower"]


@pytest.mark.parametrize("seed", range(12))
def test_lower_bound_never_exceeds_brute_force(seed):
    rng = np.random.default_rng(100 + seed)
    d = int(rng.integers(3, 5))
    n = int(rng.integers(d + 2, min(d * d, 14) + 1))
    scale = 10.0 ** rng.uniform(-3, 3)
    W_up = rng.standard_normal((n, d)) * scale
    W_down = rng.standard_normal((d, n)) / scale
    if seed % 3 == 0:  # nearly absorbable: a planted set, then a small perturbation
        W_up[:4, :] = 0
        W_up[:4, :4] = UNIMODULAR
        W_down[:, :4] = 0
        W_down[:4, :4] = -np.linalg.inv(UNIMODULAR).round()
        W_up += 1e-6 * rng.standard_normal(W_up.shape)
    activation = ("relu", "gelu", "leaky_relu:1/4")[seed % 3]
    kwargs = {"skip": np.diag(rng.uniform(0.5, 2, d))} if seed % 4 == 1 else {}
    if seed % 5 == 0:
        kwargs = dict(kwargs, b_up=rng.standard_normal(n))
    instance = Instance(W_up, W_down, activation=activation, **kwargs)
    result = gram_decide(instance)
    best = brute_distance(instance)
    cert = result.certificate
    assert cert["distance_lower"] <= best * (1 + 1e-9) + 1e-300
    assert best <= cert["distance_upper"] * (1 + 1e-9)
    if result.status == "not_absorbable":
        assert best > 0
    if EXTENDED is not None:
        data = float_data(instance)
        bounds = gram_bounds(data)
        extended_sq, _, margins = lower_bound(data, bounds.z_hat, bounds.lambda_lower, EXTENDED)
        assert margins["precision"] == np.dtype(EXTENDED).name
        assert data.kappa * np.sqrt(extended_sq) <= best * (1 + 1e-9) + 1e-300


def test_extended_recheck_rescues_large_weights():
    # Planted S with large integer entries in W_down[:,S] (up to ~1.5e5), then
    # a 1e-10 perturbation: the float64 error terms swamp the distance (~3e-4),
    # the extended-precision recheck certifies it.
    rng = np.random.default_rng(0)
    d, n = 64, 256
    upper = np.eye(d) + np.triu(rng.integers(-1, 2, (d, d)), 1)
    inverse = -np.linalg.inv(upper).round()
    assert np.array_equal(inverse @ upper, -np.eye(d))
    W_up, W_down = rng.standard_normal((n, d)), rng.standard_normal((d, n))
    S = rng.choice(n, d, replace=False)
    W_up[S], W_down[:, S] = upper, inverse
    instance = Instance(W_up + 1e-10 * rng.standard_normal(W_up.shape), W_down, activation="gelu")
    # Without the recheck (or without an 80-bit longdouble) float64 certifies nothing: unknown, never a verdict.
    without = gram_decide(instance, tuning=GramTuning(extended_work=0))
    assert without.status == "unknown"
    assert "extended_recheck_s" not in without.stages["timings"]
    result = gram_decide(instance)
    if EXTENDED is None:
        assert result.status == "unknown"
        return
    cert = result.certificate
    assert result.status == "not_absorbable"
    assert cert["margins"]["precision"] == np.dtype(EXTENDED).name
    assert "extended_recheck_s" in result.stages["timings"]
    assert 0 < cert["distance_lower"] <= cert["distance_upper"] < 1e-2
    assert cert["rounded_set"] == sorted(S.tolist())


def test_tolerance_against_perturbed_plant():
    W_up, W_down = planted(seed=2)
    W_up = W_up + 1e-7 * np.random.default_rng(9).standard_normal(W_up.shape)
    instance = Instance(W_up, W_down, activation="relu")
    assert gram_decide(instance).status == "not_absorbable"
    loose = gram_decide(instance, tol=Fraction(1, 1000))
    assert loose.status == "absorbable" and loose.index_set == [1, 4, 7, 10]
    tight = gram_decide(instance, tol="1e-12")
    assert tight.status == "not_absorbable"
    assert tight.certificate["distance_lower"] > 4 * 1e-12


def test_singular_gram_is_unknown():
    rng = np.random.default_rng(1)
    wide = Instance(rng.standard_normal((10, 3)), rng.standard_normal((3, 10)))
    result = gram_decide(wide)
    assert result.status == "unknown" and result.stages["regime"] == SINGULAR
    assert not gram_applies(wide)
    # Two index sets give −I, so the real solution is not unique (G singular).
    first, second = np.array([[1.0, 1], [0, 1]]), np.array([[1.0, 0], [2, 1]])
    W_up = np.vstack([first, second])
    W_down = np.hstack([-np.linalg.inv(first).round(), -np.linalg.inv(second).round()])
    result = gram_decide(Instance(W_up, W_down))
    assert result.status != "not_absorbable"
    if result.status == "unknown":
        assert result.stages["regime"] == NOT_CERTIFIED
    else:
        assert result.verified and result.index_set in ([0, 1], [2, 3])


def test_duplicate_units_distance_proven_but_degenerate():
    rng = np.random.default_rng(1)
    W_up = rng.standard_normal((6, 3))
    W_up[5] = W_up[4]
    W_down = rng.standard_normal((3, 6))
    W_down[:, 5] = W_down[:, 4]
    result = gram_decide(Instance(W_up, W_down))
    # G is singular, yet the λ = 0 bound still proves a positive distance;
    # the duplicate rows make the weights degenerate, so the answer is unknown.
    assert result.status == "unknown" and result.stages["degeneracy"]["collinear_classes"] == [[4, 5]]
    assert result.stages["rank"] is None and result.stages["lambda_min_lower"] == 0.0
    assert result.certificate["distance_lower"] <= brute_distance(Instance(W_up, W_down))


def test_degenerate_weights_turn_no_into_unknown():
    rng = np.random.default_rng(4)
    W_up = rng.standard_normal((8, 4))
    W_up[3] = -2.0 * W_up[1]
    instance = Instance(W_up, rng.standard_normal((4, 8)))
    result = gram_decide(instance)
    assert result.status == "unknown"
    assert result.stages["degeneracy"] == {"zero_rows": [], "collinear_classes": [[1, 3]], "zero_columns": [], "dimension_one": False}
    assert result.certificate["distance_lower"] > 0


def test_theorem_verdicts():
    rng = np.random.default_rng(0)
    W_up, W_down, W_gate = rng.standard_normal((8, 3)), rng.standard_normal((3, 8)), rng.standard_normal((8, 3))
    sections = {"bias-free": ("MATH.md §4", "MATH.md §4"), "affine": ("MATH.md §8.4", "MATH.md §8.5")}  # (ReLU², SwiGLU): Theorems B, C
    for target_class, (relu2_section, swiglu_section) in sections.items():
        relu2 = gram_decide(Instance(W_up, W_down, activation="relu2"), target_class=target_class)
        assert relu2.status == "not_absorbable" and relu2.certificate["argument"] == relu2_section and relu2.target_class == target_class
        swiglu = gram_decide(Instance(W_up, W_down, activation="swiglu", W_gate=W_gate), target_class=target_class)
        assert swiglu.status == "not_absorbable" and swiglu.certificate["argument"] == swiglu_section
        assert gram_decide(Instance(W_up, W_down, activation="glu", W_gate=W_gate), target_class=target_class).status == "unknown"
    # Gaussian weights are nondegenerate: Theorem B decides the biased block in both classes.
    biased = Instance(W_up, W_down, activation="relu2", b_up=np.ones(8))
    assert gram_decide(biased, target_class="bias-free").status == "not_absorbable"
    assert gram_decide(biased).status == "not_absorbable"


def test_bad_input():
    rng = np.random.default_rng(0)
    free = Instance(rng.standard_normal((5, 2)), rng.standard_normal((2, 5)), residual_free=True)
    with pytest.raises(InputError):
        gram_decide(free)
    with pytest.raises(InputError):
        gram_decide(Instance(rng.standard_normal((5, 2)), rng.standard_normal((2, 5))), tol=-1)


def test_integer_weights_and_denominator():
    W_up, W_down = planted(seed=7)
    numerators_up = (W_up * 8).round().astype(np.int64)
    numerators_up[[1, 4, 7, 10]] = (UNIMODULAR * 2).astype(np.int64)
    numerators_down = (W_down * 8).round().astype(np.int64)
    numerators_down[:, [1, 4, 7, 10]] = (-np.linalg.inv(UNIMODULAR).round() * 2).astype(np.int64)
    instance = Instance(numerators_up, numerators_down, denominator=2)
    result = gram_decide(instance)
    assert result.status == "absorbable" and result.index_set == [1, 4, 7, 10]


@pytest.mark.parametrize("seed", range(4))
def test_fast_degeneracy_screen_matches_exact(seed):
    rng = np.random.default_rng(seed)
    n, d = 200, 120
    W_up = rng.standard_normal((n, d))
    W_up[7] = -4.0 * W_up[2]  # exact in float64 (unlike −3x)
    W_up[9] = 0.5 * W_up[2]
    W_up[11, :] = 0.0
    W_up[20] = W_up[21]
    W_up[20, 5] = 0.0
    W_up[21, 5] = -0.0
    W_up[30] = W_up[31] * (1 + 2**-50)  # near-collinear, not collinear
    W_down = rng.standard_normal((d, n))
    W_down[:, 13] = 0.0
    instance = Instance(W_up, W_down)
    fast, exact = screen_degeneracy(instance), find_degeneracy(instance)
    assert fast == exact
    assert fast.collinear_classes == [[2, 7, 9], [20, 21]]


@pytest.mark.parametrize("d, n", [(32, 512), (40, 600)])
def test_iterative_path_agrees_with_the_factorisation(d, n):
    rng = np.random.default_rng(d)
    data = float_data(Instance(rng.standard_normal((n, d)), rng.standard_normal((d, n)), activation="gelu"))
    iterative = gram_bounds(data)
    factored = gram_bounds(data, replace(GramTuning(), small_eigen=10**9))
    assert (iterative.method, factored.method) == ("iterative", "cholesky")
    lambda_min = np.linalg.eigvalsh((data.D.T @ data.D) * (data.U @ data.U.T))[0]
    for bounds in (iterative, factored):
        assert 0 < bounds.lambda_lower <= lambda_min
    assert np.allclose(iterative.z_hat, factored.z_hat, rtol=0, atol=1e-10)
    # The two λ estimates (Lanczos on G, on G⁻¹) differ in their last digits,
    # and the certified λ with them; the bounds agree to that accuracy.
    assert iterative.lambda_lower == pytest.approx(factored.lambda_lower, rel=1e-2)
    assert iterative.distance_lower == pytest.approx(factored.distance_lower, rel=1e-4)


def test_iterative_path_out_of_budget_falls_back():
    rng = np.random.default_rng(1)
    data = float_data(Instance(rng.standard_normal((512, 32)), rng.standard_normal((32, 512)), activation="relu"))
    starved = replace(GramTuning(), iterative_products=3)
    bounds = gram_bounds(data, starved)
    assert bounds.method == "cholesky" and bounds.lambda_lower > 0
    assert "iterative_unused_s" in bounds.trace
    assert gram_bounds(data, replace(starved, small_eigen=10**9)).distance_lower == pytest.approx(bounds.distance_lower, rel=1e-6)  # multithreaded BLAS: not bit-reproducible


def test_planted_wide_block_found_by_the_iterative_path():
    d, n = 64, 512
    rng = np.random.default_rng(5)
    # Scaled like a trained layer (N(0, 1/d), N(0, 1/n)), so the planted units'
    # norms stay close to the others'.
    W_up, W_down = rng.standard_normal((n, d)) / np.sqrt(d), rng.standard_normal((d, n)) / np.sqrt(n)
    S = sorted(rng.choice(n, size=d, replace=False).tolist())
    W_up[S], W_down[:, S] = np.eye(d), -np.eye(d)
    result = gram_decide(Instance(W_up, W_down, activation="relu"))
    assert result.status == "absorbable" and result.index_set == S
    assert result.stages["solve_method"] == "iterative"


def test_residual_of_a_sparse_set_equals_the_dense_product():
    rng = np.random.default_rng(3)
    instance = Instance(rng.standard_normal((40, 6)), rng.standard_normal((6, 40)), activation="relu")
    data = float_data(instance)
    for ones in ([], [3], [0, 7, 19, 33]):
        z = np.zeros(40)
        z[ones] = 1.0
        R, e = residual(data, z)
        exact = [[sum((Fraction(data.D[a, i]) * Fraction(data.U[i, b]) for i in ones), Fraction(0)) - Fraction(data.T[a, b]) for b in range(6)] for a in range(6)]
        error = sum((Fraction(R[a, b]) - exact[a][b]) ** 2 for a in range(6) for b in range(6))
        assert error <= Fraction(e) ** 2  # the a-priori bound holds on the columns actually multiplied
        assert np.allclose(R, (data.D * z) @ data.U - data.T, rtol=0, atol=1e-12)


def test_lanczos_and_conjugate_gradients_against_dense_references():
    rng = np.random.default_rng(11)
    X = rng.standard_normal((300, 40)) * np.exp(rng.uniform(-1, 1, 40))
    G = X.T @ X + 0.1 * np.eye(40)
    lambda_min = np.linalg.eigvalsh(G)[0]
    theta = lanczos_smallest(G, budget=40, tol=1e-8)
    assert lambda_min * (1 - 1e-12) <= theta <= lambda_min * (1 + 1e-6)  # a Ritz value: never below λ_min (up to rounding)
    rhs = rng.standard_normal(40)
    z = conjugate_gradients(G, rhs, budget=200, rtol=1e-12)
    assert np.linalg.norm(G @ z - rhs) <= 1e-10 * np.linalg.norm(rhs)
    assert np.allclose(z, np.linalg.solve(G, rhs), rtol=0, atol=1e-8)
    assert conjugate_gradients(G, rhs, budget=2, rtol=1e-12) is None
    assert conjugate_gradients(np.ones((2, 2)), np.array([1.0, -1.0]), budget=5, rtol=1e-12) is None  # singular: no curvature
    assert lanczos_smallest(G, budget=2, tol=1e-12) is None


def test_certify_lambda_min_leaves_the_gram_matrix_as_it_was():
    rng = np.random.default_rng(12)
    X = rng.standard_normal((50, 30))
    G = X.T @ X
    before = G.copy()
    lambda_min = np.linalg.eigvalsh(G)[0]
    lower, shift = certify_lambda_min(G, lambda_min, 0.0)
    assert 0 < lower <= lambda_min and shift is not None
    assert certify_lambda_min(G, 10 * lambda_min, 0.0) == (0.0, None)  # every shift above λ_min fails
    assert np.array_equal(G, before)
