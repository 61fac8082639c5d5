"""Tests of ``indexset.workflows.construct`` and ``indexset construct``.

Every planted S must pass the exact verifier, and for n ≤ 16 a brute force
over all 2^n subsets must list it; negatives must have no S; degenerate
instances must show exactly the stated degeneracy; files must be
byte-reproducible; bad options must exit 2 without writing a file.
"""

from __future__ import annotations

import json
import zipfile
from fractions import Fraction

import numpy as np
import pytest

from indexset.cli.main import main
from indexset.errors import InputError
from indexset.exact.verify import verify
from indexset.model.activations import HOMOGENEOUS
from indexset.model.instance import Instance, exact_value
from indexset.search.engines.brute import absorbing_sets_brute
from indexset.theory.nondegeneracy import find_degeneracy
from indexset.workflows import construct

SEEDS = range(12)

PLANTED = [
    dict(d=2, n=6),
    dict(d=2, n=12),
    dict(d=2, n=12, k=2),
    dict(d=2, n=16, k=12, range=3),
    dict(d=3, n=16),
    dict(d=3, n=10, k=3),
    dict(d=4, n=12, k=5),
    dict(d=2, n=10, activation="gelu", biases=True),
    dict(d=2, n=10, activation="leaky_relu:1/2"),
    dict(d=3, n=12, activation="leaky_relu:-1/3", skip="unimodular"),
    dict(d=2, n=12, skip="permutation", denominator=2, activation="silu"),
    dict(d=3, n=14, skip="mhc", biases=True),
    dict(d=4, n=12, skip="mhc", streams=2, activation="softplus"),
    dict(d=3, n=8, k=8, range=1),
    dict(d=2, n=4, k=4, range=1),
    dict(d=3, n=9, skip="unimodular", activation="leaky_relu:1", denominator=4),
]


def _params(instance: Instance) -> dict:
    return json.loads(str(instance.metadata["params"]))


def _roundtrip(instance: Instance, tmp_path, name="x.npz") -> Instance:
    path = tmp_path / name
    construct.write_reproducible(instance, path)
    return Instance.load(path)


# ------------------------------------------------------------------ planted
@pytest.mark.parametrize("options", PLANTED, ids=lambda o: ",".join(f"{k}={v}" for k, v in o.items()))
def test_planted_verifies_and_brute_force_finds_it(options):
    for seed in SEEDS:
        instance = construct.planted(seed=seed, **options)
        index_set = instance.planted
        assert len(index_set) == options.get("k", max(options["d"], options["n"] // 2))
        assert verify(instance, index_set).holds
        assert find_degeneracy(instance).nondegenerate
        assert index_set in absorbing_sets_brute(instance)
        params = _params(instance)
        assert params["family"] == "planted" and params["seed"] == seed


def test_planted_set_is_shuffled_and_dense():
    sets = {tuple(construct.planted(d=2, n=12, seed=seed).planted) for seed in range(8)}
    assert len(sets) > 1 and (0, 1, 2, 3, 4, 5) not in sets
    for seed in range(8):
        instance = construct.planted(d=3, n=16, seed=seed)
        index_set = instance.planted
        assert np.abs(instance.W_up).max() <= 5
        decoy_range = _params(instance)["decoy_down_range"]
        assert np.all(np.abs(instance.W_down[:, index_set]).any(axis=0))
        assert np.abs(instance.W_down[:, index_set]).max() <= decoy_range
        # Planted down columns are not a sparse block: at most a third of entries are zero.
        assert np.mean(instance.W_down[:, index_set] == 0) <= 1 / 3


def test_planted_rational_denominators():
    leaky = construct.planted(d=2, n=8, activation="leaky_relu:1/2", seed=1)
    assert leaky.denominator == 3  # c = 3/2: q²·(2/3) must be an integer
    mhc = construct.planted(d=3, n=10, skip="mhc", seed=2)
    skip = exact_value(mhc, "skip")
    assert all(sum(skip[i, :]) == 1 == sum(skip[:, i]) for i in range(3))
    assert any(Fraction(v).denominator > 1 for v in skip.ravel())
    assert mhc.denominator % max(Fraction(v).denominator for v in skip.ravel()) == 0
    over = construct.planted(d=2, n=8, denominator=5, seed=3)
    assert over.denominator == 5 and verify(over, over.planted).holds


def test_unimodular_and_permutation_skips_are_not_identity():
    for seed in range(5):
        for skip in ("unimodular", "permutation"):
            instance = construct.planted(d=3, n=10, skip=skip, seed=seed)
            assert not instance.identity_skip
            assert abs(round(np.linalg.det(instance.skip))) == 1


# ------------------------------------------------------------------- random
def test_random_integer_is_a_certified_negative():
    for seed in SEEDS:
        for d, n in ((2, 12), (3, 16), (2, 16)):
            instance = construct.random(d=d, n=n, seed=seed)
            assert instance.planted is None
            assert find_degeneracy(instance).nondegenerate
            assert absorbing_sets_brute(instance) == []
            assert _params(instance)["negative"] == "brute_force"


def test_random_float_and_skips():
    instance = construct.random(d=3, n=20, dtype="float", skip="mhc", biases=True, seed=4)
    assert instance.W_up.dtype == np.float64 and instance.has_biases
    assert find_degeneracy(instance).nondegenerate
    assert _params(instance)["negative"] == "generic"
    wide = construct.random(d=2, n=20, skip="mhc", seed=1)
    assert _params(wide)["negative"] == "unchecked" and wide.denominator > 1


# ------------------------------------------------------------ float planted
@pytest.mark.parametrize("options", [
    dict(d=2, n=10),
    dict(d=3, n=12, skip="mhc", biases=True),
    dict(d=4, n=16, k=4, activation="gelu"),
    dict(d=2, n=8, activation="leaky_relu:1/3", skip="unimodular"),
])
def test_float_planted_holds_within_tolerance(options):
    for seed in SEEDS:
        instance = construct.float_planted(seed=seed, **options)
        tol = Fraction(_params(instance)["tol"])
        assert instance.W_up.dtype == np.float64
        assert verify(instance, instance.planted, tol=tol).holds
        assert find_degeneracy(instance).nondegenerate


# --------------------------------------------------------------- degenerate
@pytest.mark.parametrize("kind", ["duplicate", "collinear", "zero_row", "zero_column", "dimension_one"])
def test_degenerate_is_degenerate_as_stated(kind):
    for seed in SEEDS:
        d = 1 if kind == "dimension_one" else 2 + seed % 2
        instance = construct.degenerate(kind=kind, d=d, n=8, seed=seed)
        found = find_degeneracy(instance)
        assert instance.metadata["degeneracy"] == found.describe() != "nondegenerate"
        assert bool(found.dimension_one) == (kind == "dimension_one")
        assert bool(found.zero_rows) == (kind == "zero_row")
        assert bool(found.zero_columns) == (kind == "zero_column")
        if kind in ("duplicate", "collinear"):
            assert len(found.collinear_classes) == 1 and len(found.collinear_classes[0]) == 2
            i, j = found.collinear_classes[0]
            assert np.array_equal(instance.W_up[i], instance.W_up[j]) == (kind == "duplicate")
        elif kind != "dimension_one":
            assert not found.collinear_classes
        assert verify(instance, instance.planted).holds
        assert instance.planted in absorbing_sets_brute(instance)


# --------------------------------------------------------------------- hard
def test_hard_small_planted_is_found_by_brute_force():
    for seed in range(3):
        instance = construct.hard(d=2, n=16, seed=seed)
        assert verify(instance, instance.planted).holds
        assert instance.planted in absorbing_sets_brute(instance)


@pytest.mark.parametrize("d, n", [(2, 40), (3, 54), (2, 64)])
def test_hard_density_near_one(d, n):
    for seed in range(2):
        instance = construct.hard(d=d, n=n, seed=seed)
        params = _params(instance)
        assert params["family"] == "hard" and params["target_density"] == 1.0
        assert params["density"] == pytest.approx(construct.achieved_density(instance))
        assert 0.75 <= params["density"] <= 1.35
        assert verify(instance, instance.planted).holds
        assert find_degeneracy(instance).nondegenerate


def test_hard_unplanted():
    instance = construct.hard(d=2, n=14, plant=False, seed=1)
    assert instance.planted is None and absorbing_sets_brute(instance) == []


# ------------------------------------------------------ gated, homogeneous
@pytest.mark.parametrize("family, activation", [
    ("gated", "swiglu"), ("gated", "geglu"), ("gated", "reglu"), ("gated", "glu"),
    ("homogeneous", "relu2"), ("homogeneous", "reglu"),
])
def test_gated_and_homogeneous_load_with_their_activation(tmp_path, family, activation):
    for dtype in ("int", "float"):
        instance = construct.build(family, activation=activation, d=3, n=6, dtype=dtype, seed=2)
        loaded = _roundtrip(instance, tmp_path)
        assert loaded.activation == activation
        assert (loaded.W_gate is not None) == loaded.act.gated
        assert _params(loaded)["family"] == family
        if family == "homogeneous":
            assert loaded.act.kind == HOMOGENEOUS


def test_gated_trap_satisfies_star_only_as_relu():
    instance = construct.gated(activation="swiglu", d=2, n=8, trap=True, seed=5)
    trap = [int(i) for i in instance.metadata["trap_S"]]
    relu = Instance(instance.W_up, instance.W_down, instance.skip, activation="relu")
    assert verify(relu, trap).holds
    assert instance.planted is None
    with pytest.raises(InputError):
        verify(instance, trap)


# ------------------------------------------------------------ files, CLI
def test_same_seed_same_bytes(tmp_path):
    for family, extra in (("planted", ["--skip", "mhc"]), ("float-planted", []), ("gated", ["--trap"])):
        paths = [tmp_path / f"{family}{i}.npz" for i in range(3)]
        seeds = ["7", "7", "8"]
        for path, seed in zip(paths, seeds):
            assert main(["construct", family, "--d", "3", "--n", "9", "--seed", seed, *extra, "-o", str(path)]) == 0
        first, second, other = (path.read_bytes() for path in paths)
        assert first == second != other
        with zipfile.ZipFile(paths[0]) as archive:
            assert {info.date_time for info in archive.infolist()} == {(1980, 1, 1, 0, 0, 0)}


def test_cli_writes_a_loadable_verified_file(tmp_path, capsys):
    path = tmp_path / "p.npz"
    assert main(["construct", "planted", "--d", "2", "--n", "10", "--activation", "leaky_relu:1/2",
                 "--biases", "--seed", "3", "-o", str(path)]) == 0
    line = capsys.readouterr().out.strip()
    instance = Instance.load(path)
    assert line.startswith("planted: n = 10, d = 2") and str(instance.planted) in line and str(path) in line
    assert verify(instance, instance.planted).holds
    assert main(["verify", str(path), "--index-set", ",".join(map(str, instance.planted))]) == 0


@pytest.mark.parametrize("argv", [
    ["planted", "--d", "3", "--k", "2"],
    ["planted", "--n", "4", "--k", "5"],
    ["planted", "--range", "0"],
    ["planted", "--d", "0"],
    ["planted", "--d", "1", "--n", "4"],
    ["planted", "--d", "2", "--n", "9", "--range", "1"],
    ["planted", "--activation", "relu2"],
    ["planted", "--activation", "nope"],
    ["planted", "--skip", "singular"],
    ["planted", "--skip", "mhc", "--d", "3", "--streams", "2"],
    ["planted", "--activation", "leaky_relu:1/2", "--denominator", "2"],
    ["planted", "--n", "x"],
    ["bogus"],
    ["random", "--dtype", "float", "--denominator", "3"],
    ["float-planted", "--tol", "0"],
    ["degenerate", "--kind", "dimension_one", "--d", "2"],
    ["degenerate", "--n", "4", "--k", "4"],
    ["hard", "--density", "-1"],
    ["hard", "--unplanted", "--k", "3"],
    ["gated", "--activation", "relu"],
    ["gated", "--trap", "--dtype", "float"],
    ["homogeneous", "--activation", "swiglu"],
])
def test_bad_options_exit_2_and_write_nothing(tmp_path, capsys, argv):
    path = tmp_path / "out.npz"
    assert main(["construct", *argv, "-o", str(path)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("indexset: error:") and "\n" not in err
    assert list(tmp_path.iterdir()) == []


def test_api_bad_options_raise_input_error():
    for family, options in (("planted", dict(d=3, k=2)), ("planted", dict(n=3, k=4)), ("random", dict(range=0)),
                            ("planted", dict(d=0)), ("nope", {})):
        with pytest.raises(InputError):
            construct.build(family, **options)


def test_output_folder_must_exist(tmp_path):
    assert main(["construct", "planted", "-o", str(tmp_path / "missing" / "x.npz")]) == 2


# --------------------------------------------------------- curated files
def _manifest_rows():
    import re
    from pathlib import Path

    folder = Path(__file__).resolve().parents[2] / "instances"
    rows = [line for line in (folder / "MANIFEST.md").read_text().splitlines() if line.startswith("| `")]
    for line in rows:
        name = re.search(r"\| `([^`]+)`", line).group(1)
        command = re.findall(r"`(indexset construct [^`]+)`", line)[0]
        yield folder / name, command


def test_curated_instances_match_their_manifest(tmp_path):
    import shlex

    rows = list(_manifest_rows())
    assert len(rows) >= 8
    for path, command in rows:
        argv = shlex.split(command)[1:]
        argv[argv.index("-o") + 1] = str(tmp_path / path.name)
        assert main(argv) == 0
        assert (tmp_path / path.name).read_bytes() == path.read_bytes(), path.name
        instance = Instance.load(path)
        assert instance.n <= 16
        if instance.planted is not None and instance.W_up.dtype.kind == "i":
            assert instance.planted in absorbing_sets_brute(instance)


# ------------------------------------------------------ specs and registry
@pytest.mark.parametrize("family, options, parameter", [
    ("planted", dict(d=3, k=2), "k"),
    ("planted", dict(n=4, k=5), "k"),
    ("planted", dict(d=1, n=4), "d"),
    ("planted", dict(d=True), "d"),
    ("planted", dict(seed=-1), "seed"),
    ("planted", dict(skip="mhc", d=3, streams=2), "streams"),
    ("planted", dict(streams=2), "streams"),
    ("planted", dict(denominator=0), "denominator"),
    ("planted", dict(activation="leaky_relu:1/2", denominator=2), "denominator"),
    ("planted", dict(activation="relu2"), "activation"),
    ("planted", dict(width=3), "width"),
    ("random", dict(range=0), "range"),
    ("random", dict(dtype="half"), "dtype"),
    ("random", dict(dtype="float", denominator=3), "denominator"),
    ("float-planted", dict(tol="0"), "tol"),
    ("degenerate", dict(kind="nope"), "kind"),
    ("degenerate", dict(kind="dimension_one", d=2), "d"),
    ("degenerate", dict(n=4, k=4), "n"),
    ("hard", dict(density="x"), "density"),
    ("hard", dict(d=2, n=200, density=0.1), "density"),
    ("hard", dict(d=2, n=20000, density=0.001), "density"),
    ("hard", dict(plant=False, k=3), "k"),
    ("gated", dict(activation="relu"), "activation"),
    ("gated", dict(trap=True, dtype="float"), "trap"),
    ("gated", dict(activation="swiglu", pairs=True, n=3), "n"),
    ("gated", dict(target_class="nope"), "target_class"),
    ("homogeneous", dict(activation="reglu", collinear=True), "collinear"),
    ("homogeneous", dict(collinear=True, d=2, n=7), "n"),
    ("stack", dict(layers=0), "layers"),
    ("stack", dict(activation="swiglu", k=3), "k"),
    ("stack", dict(layers=2, d=1), "d"),
])
def test_bad_options_name_the_parameter(family, options, parameter):
    with pytest.raises(InputError) as caught:
        construct.build(family, **options)
    assert caught.value.source == parameter


def test_every_family_has_a_spec_and_the_cli_offers_its_options():
    from indexset.cli.construct import FAMILY_OPTIONS

    assert {name.replace("-", "_") for name in FAMILY_OPTIONS} == set(construct.FAMILIES)
    for name, (_, options) in FAMILY_OPTIONS.items():
        spec = construct.family(name).spec
        assert set(options) | {"seed"} == set(spec.defaults()), name
        assert spec.defaults()["seed"] == 0


def test_a_spec_is_validated_once_and_frozen():
    import dataclasses

    spec = construct.PlantedSpec(d=3, n=10)
    assert spec.k == 5 and spec.act.c == 1
    with pytest.raises(dataclasses.FrozenInstanceError):
        spec.d = 4
    family = construct.family("planted")
    assert np.array_equal(family.make(spec).W_up, construct.planted(d=3, n=10).W_up)


def test_stack_with_mhc_skips_shares_one_denominator(tmp_path):
    from indexset.exact.witness import check_forward, witness
    from indexset.model.loading import load_any
    from indexset.model.stack import Stack

    for seed in range(3):
        built = construct.stack(layers=3, d=3, n=9, skip="mhc", seed=seed)
        assert len({block.denominator for block in built.blocks}) == 1
        assert len({str(block.skip.tolist()) for block in built.blocks}) > 1  # each block draws its own mixing
        for block, index_set in zip(built.blocks, built.metadata["planted_S"]):
            assert verify(block, [int(i) for i in index_set]).holds
        witnesses = Stack([witness(b, b.planted) for b in built.blocks])
        assert check_forward(built, witnesses).ok
        path = tmp_path / f"stack{seed}.npz"
        construct.write_reproducible(built, path)
        assert [b.denominator for b in load_any(path).blocks] == [b.denominator for b in built.blocks]
