"""Tied units: equal columns of (★) are one bounded unknown, and the answers are still index sets of units.

Every count and list is held to the brute force over all 2^n index sets
(:func:`indexset.search.engines.brute.absorbing_sets_brute`, which builds
(★) itself from the exact weights).
"""

from __future__ import annotations

import numpy as np
import pytest

from indexset.model.instance import Instance
from indexset.search.engines.brute import absorbing_sets_brute
from indexset.search.system import build_system, tie_columns
from indexset.solver import solve
from indexset.workflows import construct


def repeated_units(seed: int) -> Instance:
    """A planted d = 2 block whose units are copied: some twice, some three times (tied units)."""
    base = construct.planted(d=2, n=6, range=3, seed=seed)
    copies = [0, 0, 1, 2, 2, 2, 3, 4, 5, 5]
    return Instance(np.asarray(base.W_up)[copies], np.asarray(base.W_down)[:, copies])


@pytest.mark.parametrize("make", [lambda seed: construct.low_precision(d=2, n=15, range=1, seed=seed), repeated_units], ids=["low_precision", "copies"])
@pytest.mark.parametrize("seed", range(3))
def test_counts_and_lists_of_index_sets_match_brute_force(make, seed):
    instance = make(seed)
    assert tie_columns(build_system(instance)).merged  # the family does tie units
    expected = absorbing_sets_brute(instance)
    merged, plain = solve(instance, find_all=True), solve(instance, find_all=True, ablate=("ties",))
    assert merged.count == plain.count == len(expected)
    assert sorted(merged.solutions or []) == sorted(expected)
    first = solve(instance)
    assert first.status == ("absorbable" if expected else "not_absorbable" if first.decided else "unknown")
    if expected:
        assert first.verified and first.index_set in expected


def test_a_tie_stands_for_the_binomial_number_of_index_sets():
    """Two copies of each unit of a block with exactly one S: every S' choosing one copy of each unit of S, and the pairs too."""
    base = construct.planted(d=2, n=6, range=3, seed=4)
    alone = absorbing_sets_brute(base)
    doubled = Instance(np.asarray(base.W_up)[[0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5]], np.asarray(base.W_down)[:, [0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5]])
    result = solve(doubled, find_all=True)
    assert result.count == len(absorbing_sets_brute(doubled)) and len(alone) >= 1
    stages = result.stages["system"]
    assert stages["units"] == 12 and stages["unknowns"] == 6
    assert solve(doubled).stages["system"]["unknowns"] == 12  # a first index set is searched on the 0/1 system
