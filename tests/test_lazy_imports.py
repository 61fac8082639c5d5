"""Heavy libraries load only when used: `indexset --help` and the scan modules import none of them."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

HEAVY = ("torch", "huggingface_hub", "matplotlib", "safetensors")
TESTS = Path(__file__).resolve().parent


def python_output(code: str, timeout: float = 300) -> str:
    """What a fresh interpreter prints running ``code`` (the tests folder importable), after checking it succeeded."""
    process = subprocess.run([sys.executable, "-c", f"import sys; sys.path.insert(0, {str(TESTS)!r})\n" + code], capture_output=True, text=True, timeout=timeout)
    assert process.returncode == 0, process.stderr
    return process.stdout


def test_cli_and_scan_modules_import_no_heavy_library():
    code = (
        "import sys, indexset.cli.main as cli; cli.build_parser(); "
        "import indexset.model.torch_io, indexset.large.checkpoint, indexset.large.scan, indexset.workflows.scanplot, indexset.cli.scan; "
        "from indexset import Instance, scan; "
        f"print(','.join(name for name in {HEAVY!r} if name in sys.modules))"
    )
    output = python_output(code)
    assert output.strip() == ""


def test_the_gram_path_runs_without_scipy_or_numba():
    # n = 450 > SMALL_EIGEN and n ≪ d²: the iterative path, as for real layers.
    code = (
        "import sys, numpy as np; from indexset import Instance; from indexset.large.gram import gram_decide; "
        "rng = np.random.default_rng(0); "
        "result = gram_decide(Instance(rng.standard_normal((450, 32)), rng.standard_normal((32, 450)), activation='gelu')); "
        "print(result.status, result.stages['solve_method'], ','.join(name for name in ('scipy', 'numba') if name in sys.modules))"
    )
    output = python_output(code)
    assert output.split() == ["not_absorbable", "iterative"]


@pytest.mark.parametrize("family", ["planted", "random"])
def test_a_small_search_loads_neither_numba_nor_scipy_nor_networkx(family, tmp_path):
    from reference import mitm_solutions

    from indexset.workflows import construct

    instance = getattr(construct, family)(d=2, n=36, range=1000, seed=3)
    path = tmp_path / "block.npz"
    instance.save(path)
    code = (
        "import sys, json; import indexset; "
        f"result = indexset.solve(indexset.Instance.load({str(path)!r}), find_all=True); "
        "print(json.dumps([result.status, result.solutions, result.stages['search']['lattice'].get('walk'), "
        "[name for name in ('numba', 'scipy', 'networkx', 'ortools') if name in sys.modules]]))"
    )
    output = python_output(code)
    status, solutions, walk, loaded = json.loads(output)
    expected = mitm_solutions(instance)
    assert status == ("absorbable" if expected else "not_absorbable") and sorted(solutions) == expected
    assert walk == "breadth-first (NumPy)" and loaded == []


def test_once_the_numpy_walks_have_cost_one_load_the_kernels_load_and_walk_the_rest():
    from reference import mitm_solutions

    from indexset.search.system import build_system
    from indexset.workflows import construct

    instances = [construct.planted(d=2, n=36, range=1000, seed=3), construct.random(d=2, n=36, range=1000, seed=3)]
    code = (
        "import sys, json; from dataclasses import replace; import numpy as np; import indexset\n"
        "from indexset.search.lattice import search, DEFAULT; from indexset.search.system import build_system; from indexset.workflows import construct\n"
        "T = replace(DEFAULT, numpy_node_seconds=DEFAULT.kernel_load_seconds)\n"  # the first walked node pays for a load
        "out = []\n"
        "for family in ('planted', 'random'):\n"
        "    result = search(build_system(getattr(construct, family)(d=2, n=36, range=1000, seed=3)), find_all=True, tuning=T)\n"
        "    out.append([result.status, result.solutions, result.stages.get('walk'), 'numba' in sys.modules])\n"
        "print(json.dumps(out))"
    )
    first, second = json.loads(python_output(code))
    for (status, solutions, _walk, _loaded), instance in zip((first, second), instances, strict=True):
        expected = mitm_solutions(instance)
        system = build_system(instance)
        assert status == ("feasible" if expected else "infeasible") and sorted(solutions) == expected
        assert all(system.is_solution(support) for support in solutions)
    assert first[2] == "breadth-first (NumPy)" and not first[3]  # nothing walked yet: the NumPy walk answers, Numba stays out
    assert second[2] is None and second[3]  # the first walk's nodes paid for a load: the kernels walk the second tree


def test_the_kernels_load_in_a_thread_beside_the_basis_choice_and_no_thread_outlives_the_search(tmp_path):
    from indexset.search.system import build_system
    from indexset.workflows import construct

    instance = construct.planted(d=2, n=50, range=1000, seed=3)  # kernel dimension 46: candidates beside the load
    path = tmp_path / "block.npz"
    instance.save(path)
    code = (
        "import json, sys, threading, time; from dataclasses import replace; import indexset; from tunings import KERNEL_WALK\n"  # the kernel walks the tree
        "T = replace(KERNEL_WALK, max_discrepancies=-1)\n"  # no discrepancy passes: they would load the kernels before the choice
        "import indexset.search.lattice.engine as E, indexset.search.lattice.walk as W; "
        "from indexset.search.system import build_system; "
        # Spies: whether the kernels load beside the choice, and that their thread is joined, show in no result.
        "seen = []; choose, load = E.choose_lattice, W._load_kernels\n"
        "def spy(*args):\n"
        "    seen.append(dict(loading=args[2], threads=[thread.name for thread in threading.enumerate()]))\n"
        "    return choose(*args)\n"
        "def slow_load(lattice):\n"
        "    load(lattice); time.sleep(0.5)\n"  # a thread left unjoined would still be alive below
        "E.choose_lattice, W._load_kernels = spy, slow_load\n"
        f"system = build_system(indexset.Instance.load({str(path)!r}))\n"
        "first = E.search(system, tuning=T); after_first = [thread.name for thread in threading.enumerate()]\n"
        "second = E.search(system, tuning=T)\n"
        "print(json.dumps([first.index_set, first.stages['candidates'], second.index_set, seen, after_first, [thread.name for thread in threading.enumerate()]]))"
    )
    first, candidates, second, seen, after_first, after_second = json.loads(python_output(code))
    system = build_system(instance)
    assert system.is_solution(first) and system.is_solution(second)
    assert seen[0]["loading"] is True and "indexset-kernel-load" in seen[0]["threads"] and candidates > 1
    assert seen[1]["loading"] is False and seen[1]["threads"] == ["MainThread"]  # loaded already: no thread
    assert after_first == after_second == ["MainThread"]


def test_kernels_compile_at_their_first_call_and_rebind_their_module():
    code = """
import sys, threading
import numpy as np
import indexset.native.enumerate as kernels
import indexset.native.prune as prune
loaded_at_import = "numba" in sys.modules
M = np.array([[1, 1, 1], [1, -1, 0]], dtype=np.int64)
t = np.array([3, 0], dtype=np.int64)
out = {}

def first_call(k):  # two threads make the module's first call together
    low, high = np.zeros(3, dtype=np.int64), np.ones(3, dtype=np.int64)
    out[k] = (int(prune.propagate_bounds(M, t, t, low, high, 100)), low.tolist())

threads = [threading.Thread(target=first_call, args=(k,)) for k in range(2)]
for thread in threads:
    thread.start()
for thread in threads:
    thread.join()
import numba
W, bstar = np.zeros((2, 8)), np.ones((1, 8))
W[1] = np.arange(8) - 3.5
plain_W = W.copy()  # before either call writes row 0
compiled = kernels.advance_l1(W, bstar, 0, -0.5, 8, np.ones(8))
plain = kernels.plain_advance_l1(plain_W, bstar, 0, -0.5, 8, np.ones(8))
print(loaded_at_import, out[0] == out[1], out[0][1], compiled == plain == 16.0 and (W == plain_W).all(),
      all(isinstance(getattr(kernels, name), numba.core.registry.CPUDispatcher) for name in ("enumerate_box", "_enter_level", "advance_l1")))
"""
    output = python_output(code)
    # All three units are forced: z0 + z1 + z2 = 3.
    assert output.split() == ["False", "True", "[1,", "1,", "1]", "True", "True"]


def test_loading_the_kernels_leaves_scipy_linalg_unloaded_and_importable():
    code = """
import sys
import numpy as np
import indexset.native.prune as prune
M = np.array([[1, 1, 1], [1, -1, 0]], dtype=np.int64)
t = np.array([3, 0], dtype=np.int64)
low, high = np.zeros(3, dtype=np.int64), np.ones(3, dtype=np.int64)
prune.propagate_bounds(M, t, t, low, high, 100)
hidden = ["scipy.linalg" in sys.modules, "scipy.linalg.cython_blas" in sys.modules]
import numba.np.linalg
numba.np.linalg.ensure_blas()  # Numba's own check is back: it finds SciPy's BLAS
print(hidden, "numba" in sys.modules, low.tolist())
"""
    assert python_output(code).split() == ["[False,", "False]", "True", "[1,", "1,", "1]"]


def test_a_time_limit_spent_before_the_kernel_loads_neither_numba_nor_cpsat():
    code = (
        "import json; import numpy as np; from systems import star_system; "
        "import indexset.search.portfolio as portfolio; from indexset.search.reduce import reduce_system; "
        "system = star_system(np.random.default_rng(1), 2, 70, 1000); "
        "result = portfolio.run_portfolio(system, reduce_system(system.M, system.t), time_limit=0.0); "
        "print(json.dumps([result.status, sorted(result.stages['portfolio']), 'numba' in sys.modules, 'ortools' in sys.modules]))"
    )
    assert json.loads(python_output(code)) == ["unknown", ["lattice"], False, False]
