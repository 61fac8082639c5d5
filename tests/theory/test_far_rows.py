"""First-block rows far out in the plane (indexset.theory.far_rows, MATH.md §9.2, Theorem 9.2c).

A residual-free stack equals itself, so its own first block's rows must
pass: the search must find rows for every one of them (an over-strict
search would "prove" them impossible). A stack the theorem decides is held
to an independent brute force: rows from a grid of directions (and the
pins read off the forward pass), checked at far points of the exact
forward pass along many directions; none may pass there either.
"""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

import numpy as np
import pytest
from reference import rank, sampled_jacobian

from indexset.exact import pwl
from indexset.model.instance import Instance
from indexset.model.stack import Stack
from indexset.theory import deep
from indexset.theory.far_rows import row_configuration


def block(rng, n, residual_free):
    return Instance(rng.integers(-3, 4, (n, 2)), rng.integers(-3, 4, (2, n)), b_up=rng.integers(-3, 4, n), b_down=rng.integers(-3, 4, 2),
                    residual_free=residual_free)


@pytest.mark.parametrize("n", [2, 3])
def test_every_residual_free_stack_has_passing_rows(n):
    rng = np.random.default_rng(70 + n)
    for _ in range(10):
        g = Stack([block(rng, n, True), block(rng, n, True)])
        regions = pwl.enumerate_regions(g).regions
        rows, complete = row_configuration(regions, deep.far_regions(regions, 2), n)
        assert complete and rows is not None and len(rows) == n
        assert not deep.decide(g).proven


def far_jacobians(blocks, reach=12):
    """F's Jacobian far out along every primitive integer w with entries in [−reach, reach], from the exact forward pass at 10⁶·w."""
    out = []
    for w in itertools.product(range(-reach, reach + 1), repeat=2):
        if w != (0, 0) and math.gcd(*w) == 1:
            jacobian = sampled_jacobian(blocks, [Fraction(10**6 * v) for v in w])
            if jacobian is not None:
                out.append((w, jacobian))
    return out


def grid_rows_pass(rows, sampled):
    for w, jacobian in sampled:
        if any(p[0] * w[0] + p[1] * w[1] == 0 for p in rows):
            continue  # not generic for these rows
        active = [p for p in rows if p[0] * w[0] + p[1] * w[1] > 0]
        kernel = [] if rank(active) == 2 else [(1, 0), (0, 1)] if not active else [(-active[0][1], active[0][0])]
        if any(sum(row[j] * k[j] for j in range(2)) != 0 for row in jacobian for k in kernel):
            return False
    return True


def grid_configuration(blocks, n, bound=3):
    """The reference: every multiset of n rows from primitive directions in [−bound, bound]² and the pins, against far Jacobians sampled exactly."""
    sampled = far_jacobians(blocks)
    pins = set()
    for _, jacobian in sampled:
        if rank(jacobian) == 1:
            row = next(r for r in jacobian if any(r))
            scale = math.lcm(*(Fraction(v).denominator for v in row))
            b = tuple(int(v * scale) for v in row)
            g = math.gcd(*b)
            pins |= {(b[0] // g, b[1] // g), (-b[0] // g, -b[1] // g)}
    directions = sorted(pins | {v for v in itertools.product(range(-bound, bound + 1), repeat=2) if v != (0, 0) and math.gcd(*v) == 1})
    return next((rows for rows in itertools.combinations_with_replacement(directions, n) if grid_rows_pass(rows, sampled)), None)


def test_the_reference_finds_the_rows_of_residual_free_stacks():
    rng = np.random.default_rng(5)
    for _ in range(3):
        blocks = [block(rng, 3, True), block(rng, 3, True)]
        assert grid_configuration(blocks, 3) is not None


def test_theorem_9_2c_on_residual_stacks_agrees_with_the_reference():
    rng = np.random.default_rng(3)
    decided = 0
    for _ in range(60):
        blocks = [block(rng, 3, False), block(rng, 3, False)]
        verdict = deep.decide(Stack(blocks))
        if verdict.theorem == deep.ROWS_THEOREM:
            assert verdict.proven and grid_configuration(blocks, 3) is None
            decided += 1
            if decided == 2:
                break
    assert decided == 2
