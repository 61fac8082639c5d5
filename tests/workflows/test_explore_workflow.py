"""``indexset.workflows.explore``: block-wise, theorem, fitted and unknown answers (MATH.md §9).

Every ``absorbable`` is re-checked here by the exact region enumeration
with no probe points, and the blocks of the whole-stack example are solved
on their own (each is not absorbable by (★), MATH.md §3).
"""

from __future__ import annotations

import threading
from pathlib import Path

import numpy as np
import pytest

from indexset.budget import INTERRUPTED
from indexset.errors import InputError
from indexset.exact import pwl
from indexset.model.instance import Instance
from indexset.model.stack import Stack
from indexset.solver import solve
from indexset.theory.nondegeneracy import find_degeneracy
from indexset.workflows import construct
from indexset.workflows.explore import Fit, explore, rationalised, witness_from_certificate

STACKS = Path(__file__).resolve().parents[2] / "instances" / "stacks"


def test_the_leaky_example_absorbs_as_a_whole_only():
    stack = Stack.load(STACKS / "leaky_whole_d2_n2.npz")
    assert all(find_degeneracy(b).nondegenerate for b in stack.blocks)
    assert [solve(b).status for b in stack.blocks] == ["not_absorbable", "not_absorbable"]
    result = explore(stack, seed=0, starts=8, iterations=1500)
    assert result.status == "absorbable" and result.certificate["kind"] == "fitted" and result.verified
    found = witness_from_certificate(stack, result.certificate)
    assert found.residual_free and found.L == 2 and found.n == 2
    assert pwl.compare(stack, found, probes=0).equal is True
    assert pwl.compare(stack, Stack.load(STACKS / "leaky_whole_d2_n2_witness.npz"), probes=0).equal is True


def test_blockwise_absorption_is_confirmed_by_the_regions():
    stack = construct.stack(layers=2, d=2, n=6, seed=4)
    result = explore(stack, seed=1, starts=2, iterations=10)
    assert result.status == "absorbable" and result.certificate["kind"] == "blockwise"
    assert result.stages["comparison"]["equal"] is True
    assert pwl.compare(stack, witness_from_certificate(stack, result.certificate), probes=0).equal is True


def test_a_theorem_answers_no():
    result = explore(Stack.load(STACKS / "relu_identity_d2_n2.npz"), starts=2, iterations=10)
    assert result.status == "not_absorbable" and result.complete and result.extension
    assert result.certificate["kind"] == "theorem" and result.certificate["argument"].startswith("MATH.md §9.2")
    result = explore(Stack.load(STACKS / "relu_odd_d2_n4.npz"), starts=2, iterations=10)
    assert result.status == "not_absorbable" and result.certificate["argument"].startswith("MATH.md §9.3")


def test_a_single_block_keeps_its_own_verdict():
    negative = Instance.load(Path(__file__).resolve().parents[2] / "instances" / "random_d2_n12.npz")
    result = explore(negative, starts=1, iterations=5)
    alone = solve(negative)
    assert result.status == alone.status == "not_absorbable" and result.certificate["kind"] == "blockwise"
    (block,) = result.certificate["blocks"]
    assert block["status"] == alone.status and block["extension"] == alone.extension


def wide_stack(seed=3):
    rng = np.random.default_rng(seed)
    return Stack([Instance(rng.integers(-3, 4, (5, 2)), rng.integers(-3, 4, (2, 5)), b_up=rng.integers(-3, 4, 5)) for _ in range(2)])


def test_unknown_reports_the_best_fit_and_is_reproducible():
    first = explore(wide_stack(), seed=5, starts=3, iterations=40)
    again = explore(wide_stack(), seed=5, starts=3, iterations=40)
    assert first.status == "unknown" and first.exit_code == 3
    assert 0 < first.stages["fit"]["best_loss"] < float("inf")
    assert first.stages["fit"]["best_loss"] == again.stages["fit"]["best_loss"]


def test_rounding_recovers_an_exact_stack_from_a_noisy_rescaled_fit():
    rng = np.random.default_rng(7)
    exact = Stack([Instance(rng.integers(-3, 4, (3, 2)), rng.integers(-3, 4, (2, 3)), b_up=rng.integers(-3, 4, 3),
                            b_down=rng.integers(-3, 4, 2), residual_free=True) for _ in range(2)])
    layers = []
    for block in exact.blocks:
        scale = rng.uniform(0.3, 3.0, 3)  # σ(λz)/λ = σ(z): the fit may have any positive unit scale
        noise = lambda shape: 1e-9 * rng.normal(size=shape)  # noqa: E731
        layers.append({"W_up": block.float_array("W_up") * scale[:, None] + noise((3, 2)), "b_up": block.float_array("b_up") * scale + noise(3),
                       "W_down": block.float_array("W_down") / scale[None, :] + noise((2, 3)), "b_down": block.float_array("b_down") + noise(2)})
    template = Stack([Instance(b.W_up, b.W_down) for b in exact.blocks])
    candidates = list(rationalised(template, Fit("test", 0.0, layers)))
    assert candidates and all(c.residual_free for c in candidates)
    assert any(pwl.compare(exact, c, probes=0).equal for c in candidates[:8])


def test_bad_input_and_stops():
    gelu = construct.stack(layers=2, d=2, n=4, seed=1, activation="gelu")
    with pytest.raises(InputError, match="not piecewise linear"):
        explore(gelu)
    free = Stack([Instance(np.eye(2, dtype=np.int64), np.eye(2, dtype=np.int64), residual_free=True)])
    with pytest.raises(InputError, match="residual-free"):
        explore(free)
    for option, value in (("starts", 0), ("iterations", 0), ("seed", -1), ("time_limit", 0)):
        with pytest.raises(InputError, match=f"^{option}:"):
            explore(wide_stack(), **{option: value})
    stop = threading.Event()
    stop.set()
    result = explore(wide_stack(), stop=stop, starts=2, iterations=10_000)
    assert result.status == "unknown" and result.halted == INTERRUPTED


def test_bundled_stack_examples_are_reproducible(tmp_path):
    import importlib.util

    script = Path(__file__).resolve().parents[2] / "benchmarks" / "deep_examples.py"
    spec = importlib.util.spec_from_file_location("deep_examples", script)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert module.main([str(tmp_path)]) == 0
    written = sorted(p.name for p in tmp_path.glob("*.npz"))
    assert written == sorted(p.name for p in STACKS.glob("*.npz") if not p.name.startswith("whole_only_"))
    for name in written:
        assert (tmp_path / name).read_bytes() == (STACKS / name).read_bytes(), name
