"""The linear activation (σ(z) = z, leaky_relu:1) against an independent rank computation."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
from reference import rank  # Gaussian elimination over Fractions, independent of flint

from indexset import Instance, solve, verify


def test_linear_activation_is_a_rank_condition():
    rng = np.random.default_rng(5)
    seen = set()
    for _ in range(60):
        d = int(rng.integers(1, 5))
        n = int(rng.integers(1, 5))
        W_up = rng.integers(-2, 3, size=(n, d))
        W_down = rng.integers(-2, 3, size=(d, n))
        skip = np.eye(d, dtype=int) + np.diag(rng.integers(0, 2, size=d))
        instance = Instance(W_up, W_down, skip=skip, activation="leaky_relu:1")
        L = skip + W_down @ W_up
        expected = "absorbable" if rank(L.tolist()) <= n else "not_absorbable"
        result = solve(instance)
        assert result.status == expected and result.extension
        seen.add(expected)
        if expected == "absorbable" and result.index_set is not None:
            assert verify(instance, result.index_set).holds  # found through (★) itself
        elif expected == "absorbable":
            C = [[Fraction(v) for v in row] for row in result.certificate["V_down"]]
            R = [[Fraction(v) for v in row] for row in result.certificate["V_up"]]
            assert len(R) <= n
            product = [[sum((C[i][k] * R[k][j] for k in range(len(R))), Fraction(0)) for j in range(d)] for i in range(d)]
            assert product == [[Fraction(int(v)) for v in row] for row in L]
    assert seen == {"absorbable", "not_absorbable"}
