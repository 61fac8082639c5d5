"""Tests of the ``low_precision`` construct family and ``indexset construct low-precision``.

Every planted S must satisfy (★) exactly (the exact verifier, the equations
written out here with Fractions from the raw arrays, and, for ReLU, the
residual-free witness against the block on random points); every weight
must be an integer in [−R, R] times the scale; the requested degeneracy
(or its absence) must be what :func:`find_degeneracy` reports; the command
line must write a file that ``indexset solve`` answers "absorbable" for.
"""

from __future__ import annotations

import subprocess
import sys
from fractions import Fraction

import numpy as np
import pytest
from reference import fractions, star_rows

from indexset.errors import InputError
from indexset.exact.verify import verify
from indexset.exact.witness import check_forward, witness
from indexset.model.instance import Instance
from indexset.search.engines.brute import absorbing_sets_brute
from indexset.theory.nondegeneracy import find_degeneracy
from indexset.workflows import construct

SEEDS = range(6)

PLANTED = [
    dict(d=2, n=4),
    dict(d=2, n=16),
    dict(d=2, n=32, range=2),
    dict(d=3, n=12, k=3),
    dict(d=3, n=24, k=11),
    dict(d=4, n=32, scale="1/2", range=2),
    dict(d=2, n=16, scale="1/2"),
    dict(d=5, n=40, activation="gelu"),
    dict(d=3, n=24, activation="leaky_relu:1/2", scale="1/3", range=3),
    dict(d=8, n=64),
    dict(d=3, n=12, degeneracy="nondegenerate"),
    dict(d=4, n=24, degeneracy="nondegenerate", scale="1/2", range=2),
    dict(d=3, n=12, degeneracy="collinear"),
    dict(d=3, n=12, degeneracy="zero_row", range=2),
    dict(d=2, n=16, degeneracy="zero_column", scale="1/2"),
]


def _label(options: dict) -> str:
    return ",".join(f"{k}={v}" for k, v in options.items())


def _integer_parts(instance: Instance, scale: Fraction) -> np.ndarray:
    """Every weight divided by the scale, refusing anything but integers."""
    values = np.concatenate([fractions(instance, "W_up").ravel(), fractions(instance, "W_down").ravel()])
    parts = [v / scale for v in values]
    assert all(p.denominator == 1 for p in parts)
    return np.array([int(p) for p in parts])


def _star_holds(instance: Instance, index_set) -> bool:
    """(★) for S from the equations written out with Fractions (tests/reference.py)."""
    return all(sum(coefficients[i] for i in index_set) == rhs for _, coefficients, rhs in star_rows(instance))


@pytest.mark.parametrize("options", PLANTED, ids=_label)
def test_planted_set_satisfies_star_exactly(options):
    R, scale = options.get("range", 1), Fraction(options.get("scale", "1"))
    for seed in SEEDS:
        instance = construct.low_precision(seed=seed, **options)
        index_set = instance.planted
        assert len(index_set) == options.get("k", len(index_set)) and len(index_set) >= instance.d
        assert verify(instance, index_set).holds
        assert _star_holds(instance, index_set)
        assert not _star_holds(instance, index_set[1:])
        parts = _integer_parts(instance, scale)
        assert np.abs(parts).max() <= R
        if instance.activation == "relu":
            assert check_forward(instance, witness(instance, index_set)).ok


def test_small_planted_sets_are_found_by_brute_force():
    for seed in SEEDS:
        instance = construct.low_precision(d=2, n=12, seed=seed)
        assert instance.planted in absorbing_sets_brute(instance)


def test_ternary_weights_take_only_three_values():
    instance = construct.low_precision(d=4, n=40, seed=3)
    assert set(np.unique(instance.W_up)) <= {-1, 0, 1} and set(np.unique(instance.W_down)) <= {-1, 0, 1}
    assert instance.denominator == 1


def test_scale_is_stored_exactly():
    instance = construct.low_precision(d=2, n=24, scale="1/4", range=4, seed=1)
    assert instance.denominator == 4
    assert set(_integer_parts(instance, Fraction(1, 4))) <= set(range(-4, 5))
    unplanted = construct.low_precision(d=3, n=9, scale="3/7", range=2, plant=False, seed=2)
    assert unplanted.denominator == 7 and np.all(unplanted.W_up % 3 == 0)
    assert set(_integer_parts(unplanted, Fraction(3, 7))) <= set(range(-2, 3))


# ------------------------------------------------------------ degeneracy
@pytest.mark.parametrize("plant", [True, False])
def test_nondegenerate_on_request(plant):
    for seed in SEEDS:
        for d, n, R in ((2, 4, 1), (3, 13, 1), (4, 32, 1), (3, 30, 2)):
            instance = construct.low_precision(d=d, n=n, range=R, plant=plant, degeneracy="nondegenerate", seed=seed)
            found = find_degeneracy(instance)
            assert found.nondegenerate, found.describe()
            assert instance.metadata["degeneracy"] == "nondegenerate"


@pytest.mark.parametrize("kind", ["collinear", "zero_row", "zero_column"])
@pytest.mark.parametrize("plant", [True, False])
def test_degenerate_on_request(kind, plant):
    for seed in SEEDS:
        instance = construct.low_precision(d=3, n=10, range=2, plant=plant, degeneracy=kind, seed=seed)
        found = find_degeneracy(instance)
        present = {"collinear": found.collinear_classes, "zero_row": found.zero_rows, "zero_column": found.zero_columns}[kind]
        assert present, found.describe()
        assert instance.metadata["degeneracy"] == found.describe()
        if plant:
            assert verify(instance, instance.planted).holds
            altered = {"collinear": [u for group in found.collinear_classes for u in group],
                       "zero_row": found.zero_rows, "zero_column": found.zero_columns}[kind]
            assert set(altered) - set(instance.planted)  # a unit outside S carries it


def test_unplanted_has_no_planted_set():
    instance = construct.low_precision(d=3, n=20, plant=False, seed=4)
    assert instance.planted is None
    assert '"plant": false' in instance.metadata["params"]


# ------------------------------------------------------------ reproducible
def test_seeds_reproduce(tmp_path):
    for options in (dict(d=3, n=24), dict(d=2, n=12, plant=False, degeneracy="collinear"), dict(d=3, n=13, degeneracy="nondegenerate")):
        paths = [tmp_path / f"{i}.npz" for i in range(3)]
        for path, seed in zip(paths, (5, 5, 6)):
            construct.write_reproducible(construct.low_precision(seed=seed, **options), path)
        first, second, other = (path.read_bytes() for path in paths)
        assert first == second != other


# ------------------------------------------------------------ bad options
@pytest.mark.parametrize("options, parameter", [
    (dict(d=1), "d"),
    (dict(d=2, n=0), "n"),
    (dict(range=0), "range"),
    (dict(scale="0"), "scale"),
    (dict(scale="-1/2"), "scale"),
    (dict(scale="x"), "scale"),
    (dict(scale="2"), "scale"),
    (dict(activation="leaky_relu:1/2"), "scale"),
    (dict(d=3, n=12, k=2), "k"),
    (dict(d=3, n=12, k=13), "k"),
    (dict(d=3, n=12, k="x"), "k"),
    (dict(plant=False, k=4), "k"),
    (dict(d=2, n=8, scale="1/2"), "n"),
    (dict(d=2, n=4, k=4, degeneracy="zero_row"), "n"),
    (dict(d=2, n=5, degeneracy="nondegenerate"), "range"),
    (dict(degeneracy="some"), "degeneracy"),
    (dict(activation="relu2"), "activation"),
    (dict(seed=-1), "seed"),
    (dict(levels=2), "levels"),
])
def test_bad_options_name_the_parameter(options, parameter):
    with pytest.raises(InputError) as caught:
        construct.low_precision(**options)
    assert caught.value.source == parameter
    with pytest.raises(InputError):
        construct.build("low-precision", **options)


# --------------------------------------------------------------------- CLI
def _indexset(*argv: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "indexset.cli.main", *argv], capture_output=True, text=True, timeout=300)


def test_cli_writes_a_file_that_solve_reads(tmp_path):
    for extra in ([], ["--degeneracy", "nondegenerate", "--range", "2"], ["--scale", "1/2", "--range", "2", "--degeneracy", "zero_row"]):
        path = tmp_path / "block.npz"
        made = _indexset("construct", "low-precision", "--d", "3", "--n", "18", "--seed", "3", *extra, "-o", str(path))
        assert made.returncode == 0, made.stderr
        instance = Instance.load(path)
        assert str(instance.planted) in made.stdout and verify(instance, instance.planted).holds
        solved = _indexset("solve", str(path))
        assert solved.returncode == 0, solved.stdout + solved.stderr


def test_cli_bad_option_exits_2_and_writes_nothing(tmp_path):
    path = tmp_path / "block.npz"
    done = _indexset("construct", "low-precision", "--scale", "2", "-o", str(path))
    assert done.returncode == 2
    assert done.stderr.startswith("indexset: error:") and done.stderr.count("\n") == 1
    assert not path.exists()


def test_cli_offers_every_degeneracy():
    from indexset.cli.construct import LOW_PRECISION_DEGENERACY
    from indexset.workflows.construct.low_precision import DEGENERACY

    assert LOW_PRECISION_DEGENERACY == DEGENERACY
