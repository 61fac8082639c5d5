"""The open interval of strict integer conditions (indexset.exact.intervals), against Fractions and a search by denominator."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

from indexset.exact.intervals import OpenInterval, simplest_between


def reference(conditions):
    """(lower, upper, contradicted) of ``a·y + b > 0`` by Fractions: max of the lower bounds, min of the upper ones."""
    lows = [Fraction(-b, a) for a, b in conditions if a > 0]
    highs = [Fraction(-b, a) for a, b in conditions if a < 0]
    contradicted = any(a == 0 and b <= 0 for a, b in conditions)
    return (max(lows) if lows else None), (min(highs) if highs else None), contradicted


def smallest_denominator(low, high):
    """The least q with a rational p/q strictly between low < high, by trying q = 1, 2, …"""
    for q in range(1, 10_000):
        p = math.floor(low * q) + 1
        if Fraction(p, q) < high:
            return q
    raise AssertionError("no denominator below 10 000")


def test_interval_against_fractions():
    rng = np.random.default_rng(0)
    outcomes = {True: 0, False: 0}
    for _ in range(2000):
        conditions = [tuple(int(v) for v in rng.integers(-7, 8, 2)) for _ in range(int(rng.integers(0, 6)))]
        interval = OpenInterval()
        for a, b in conditions:
            interval.require(a, b)
        low, high, contradicted = reference(conditions)
        empty = contradicted or (low is not None and high is not None and low >= high)
        assert interval.empty == empty
        outcomes[empty] += 1
        if empty:
            continue
        y = interval.point()
        assert all(a * y + b > 0 for a, b in conditions)
        if low is not None and high is not None:
            assert y.denominator == smallest_denominator(low, high)
        elif low is None and high is None:
            assert y == 0
        else:
            assert y.denominator == 1 and abs(y - (low if high is None else high)) <= 1
    assert outcomes[True] and outcomes[False]


def test_simplest_between_is_the_smallest_denominator():
    rng = np.random.default_rng(1)
    for _ in range(500):
        a, b = (Fraction(int(p), int(q)) for p, q in zip(rng.integers(-50, 50, 2), rng.integers(1, 30, 2)))
        if a == b:
            continue
        low, high = min(a, b), max(a, b)
        y = simplest_between(low, high)
        assert low < y < high
        assert y.denominator == smallest_denominator(low, high)
