"""``indexset explore STACK.npz``: exit codes from a real process (0 absorbable, 1 not absorbable, 3 unknown, 2 bad input), JSON and --witness.

Answers are re-checked independently: a written witness by the exact
region enumeration, a ``no`` by the block-wise and theorem facts it names.
"""

from __future__ import annotations

import itertools
import json
import subprocess
import sys
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest
from line_pairs import second_block_for, small_first_blocks, width_two_pair
from line_splits import naive_two_extra
from one_kink import three_by_brute_force, three_by_forms
from reference import line_block_absorbs, line_equal, line_function, naive_split, naive_two_block, stack_point_value, turns_by_values, values_at_kinks

from indexset.cli.main import main
from indexset.exact import pwl
from indexset.model.instance import Instance
from indexset.model.stack import Stack
from indexset.theory.line import line_map
from indexset.workflows import construct

CLI = [sys.executable, "-m", "indexset"]
STACKS = Path(__file__).resolve().parents[2] / "instances" / "stacks"
REQUIRED = {"status", "class", "reason", "verified", "time_s", "stages", "certificate", "extension"}


def explore(*argv, cwd=None):
    return subprocess.run([*CLI, "explore", *map(str, argv)], capture_output=True, text=True, timeout=300, cwd=cwd)


def test_exit_zero_with_a_witness_written(tmp_path):
    stack = construct.stack(layers=2, d=2, n=6, seed=4)
    path, out = tmp_path / "stack.npz", tmp_path / "witness.npz"
    stack.save(path)
    process = explore(path, "--witness", out, "--json", "--starts", "2", "--iterations", "10")
    assert process.returncode == 0, process.stderr
    payload = json.loads(process.stdout)
    assert set(payload) >= REQUIRED and payload["status"] == "absorbable" and payload["verified"]
    assert payload["witness"]["written"] == [str(out)]
    written = Stack.load(out)
    assert written.residual_free and pwl.compare(stack, written, probes=0).equal is True


def test_exit_one_on_a_theorem():
    process = explore(STACKS / "relu_identity_d2_n2.npz")
    assert process.returncode == 1, process.stderr
    assert ": NOT ABSORBABLE" in process.stdout.splitlines()[0] and "Theorem 9.2" in process.stdout


def test_whole_stack_constructed_and_explored_on_the_line(tmp_path):
    """construct whole-stack --witness, then explore: exit 0 both times, and both witnesses pass the independent line check."""
    stack_path, built, found = tmp_path / "whole.npz", tmp_path / "built.npz", tmp_path / "found.npz"
    made = subprocess.run([*CLI, "construct", "whole-stack", "--n", "4", "--seed", "3", "-o", str(stack_path), "--witness", str(built)],
                          capture_output=True, text=True, timeout=300)
    assert made.returncode == 0, made.stderr
    process = explore(stack_path, "--witness", found, "--json", "--starts", "1", "--iterations", "1")
    assert process.returncode == 0, process.stderr
    assert json.loads(process.stdout)["status"] == "absorbable"
    stack = Stack.load(stack_path)
    assert all(not line_block_absorbs(block) for block in stack.blocks)
    for witness in (built, found):
        assert Stack.load(witness).residual_free and line_equal(stack, Stack.load(witness))


def test_lifted_whole_stack_explored(tmp_path):
    """construct whole-stack --d 2: explore exits 0 and its witness agrees with the stack at random rational points."""
    stack_path, found = tmp_path / "lifted.npz", tmp_path / "found.npz"
    made = subprocess.run([*CLI, "construct", "whole-stack", "--d", "2", "--n", "5", "--seed", "1", "-o", str(stack_path)],
                          capture_output=True, text=True, timeout=300)
    assert made.returncode == 0, made.stderr
    process = explore(stack_path, "--witness", found, "--starts", "1", "--iterations", "1")
    assert process.returncode == 0, process.stderr
    stack, witness = Stack.load(stack_path), Stack.load(found)
    rng = np.random.default_rng(0)
    for _ in range(50):
        point = [Fraction(int(v), 4) for v in rng.integers(-40, 41, 2)]
        assert stack_point_value(stack.blocks, point) == stack_point_value(witness.blocks, point)


def test_exit_one_on_the_line():
    process = explore(STACKS / "relu_line_not_d1_n2.npz", "--json")
    assert process.returncode == 1, process.stderr
    payload = json.loads(process.stdout)
    assert payload["status"] == "not_absorbable" and payload["certificate"]["kind"] == "theorem"
    phi = line_map(Stack.load(STACKS / "relu_line_not_d1_n2.npz"))
    assert phi.strictly_monotone() and not naive_two_block(phi, 2)


def test_three_blocks_with_two_extra_incidences(tmp_path):
    """Three blocks on R, m = 3n − 2: absorbable only as a whole through a chain of two shared breakpoints (exit 0), and a near miss (exit 1).

    The witness passes the independent line check; the naive enumerations
    find no split with at most one shared breakpoint for either stack, and
    none with two extra incidences for the second.
    """
    found = tmp_path / "found.npz"
    process = explore(STACKS / "relu_chain_d1_n2_L3.npz", "--witness", found, "--json")
    assert process.returncode == 0, process.stderr
    stack = Stack.load(STACKS / "relu_chain_d1_n2_L3.npz")
    assert not any(line_block_absorbs(block) for block in stack.blocks)
    assert not naive_split(line_map(stack), 2, 3)
    for witness in (found, STACKS / "relu_chain_d1_n2_L3_witness.npz"):
        assert Stack.load(witness).residual_free and line_equal(stack, Stack.load(witness))
    process = explore(STACKS / "relu_line_not_d1_n2_L3.npz", "--json")
    assert process.returncode == 1, process.stderr
    assert json.loads(process.stdout)["certificate"]["kind"] == "theorem"
    phi = line_map(Stack.load(STACKS / "relu_line_not_d1_n2_L3.npz"))
    assert phi.strictly_monotone() and len(phi.breakpoints) == 4
    assert not naive_split(phi, 2, 3) and naive_two_extra(phi.ratios(), 2, 3) is None


def test_three_bias_free_blocks_through_a_process(tmp_path):
    """Theorem 9.15e's bundled pair: exit 0 with a bias-free witness equal to the stack by the forward pass, no block absorbing on
    its own (each breaks off 0, by the forward pass); exit 1 on the other, which the forms reference and the grid brute force agree on."""
    found = tmp_path / "found.npz"
    process = explore(STACKS / "relu_biasfree_three_d1_n2.npz", "--class", "bias-free", "--witness", found, "--json")
    assert process.returncode == 0, process.stderr
    stack = Stack.load(STACKS / "relu_biasfree_three_d1_n2.npz")
    for block in stack.blocks:  # a bias-free block on R breaks at most at 0 (Theorem 9.15 a); each of these breaks elsewhere
        alone = Stack([block])
        phi = line_function(alone)
        assert not set(phi.breakpoints) <= {0}
    for witness in (found, STACKS / "relu_biasfree_three_d1_n2_witness.npz"):
        loaded = Stack.load(witness)
        assert loaded.residual_free and line_equal(stack, loaded)
        assert all(not np.any(block.b_up) for block in loaded.blocks)
    process = explore(STACKS / "relu_biasfree_three_not_d1_n2.npz", "--class", "bias-free", "--json")
    assert process.returncode == 1, process.stderr
    assert json.loads(process.stdout)["certificate"]["kind"] == "theorem"
    phi = line_map(Stack.load(STACKS / "relu_biasfree_three_not_d1_n2.npz"))
    assert not three_by_forms(phi, np.random.default_rng(0)) and not three_by_brute_force(phi)


@pytest.mark.parametrize("name, turning", [("relu_unmatched_not_d1_n2_L3.npz", None), ("relu_turns_not_d1_n2_L3.npz", [-1, 1, -1, 1, -1])])
def test_turn_examples_through_a_process(name, turning):
    """Propositions 9.20's and Theorem 9.21's bundled examples: exit 1 naming a theorem. By the forward pass, the first has moving ends
    and two different turning values (so neither turn has equal sides); the second has no zero slope (no equal neighbouring values)
    and turns five times at −1, 1, −1, 1, −1, which the counts of Propositions 9.19 and 9.20 allow."""
    process = explore(STACKS / name, "--json")
    assert process.returncode == 1, process.stderr
    assert json.loads(process.stdout)["certificate"]["kind"] == "theorem"
    values = values_at_kinks(Stack.load(STACKS / name))
    turns = turns_by_values(values)
    assert values[0] != values[1] and values[-1] != values[-2]
    if turning is None:
        assert len(turns) == 2 and turns[0] != turns[1]
    else:
        assert all(a != b for a, b in itertools.pairwise(values)) and turns == turning


@pytest.mark.parametrize("name", ["relu_fold_not_d1_n2.npz", "relu_fold_not_d1_n3.npz"])
def test_exit_one_on_a_folding_composite(name):
    """Theorem 9.12's no, held to Theorem 9.11's own search at width 2 and to brute force over small first blocks."""
    process = explore(STACKS / name, "--json")
    assert process.returncode == 1, process.stderr
    payload = json.loads(process.stdout)
    assert payload["status"] == "not_absorbable" and payload["certificate"]["kind"] == "theorem"
    stack = Stack.load(STACKS / name)
    phi = line_map(stack)
    assert not phi.strictly_monotone() and all(s != 0 for s in phi.slopes)
    assert not any(line_block_absorbs(block) for block in stack.blocks)
    assert stack.n > 2 or width_two_pair(phi) is None
    assert all(second_block_for(phi, first, stack.n) is None for first in small_first_blocks(stack.n, mirrored=True))


def test_exit_three_when_unknown(tmp_path):
    rng = np.random.default_rng(3)
    path = tmp_path / "wide.npz"
    Stack([Instance(rng.integers(-3, 4, (5, 2)), rng.integers(-3, 4, (2, 5)), b_up=rng.integers(-3, 4, 5)) for _ in range(2)]).save(path)
    process = explore(path, "--starts", "2", "--iterations", "20", "--witness", tmp_path / "none.npz")
    assert process.returncode == 3, process.stderr
    assert ": UNKNOWN" in process.stdout.splitlines()[0] and not (tmp_path / "none.npz").exists()


def test_exit_two_on_bad_input(tmp_path):
    process = explore(tmp_path / "missing.npz")
    assert process.returncode == 2 and process.stderr.count("\n") == 1 and "no such file" in process.stderr


def test_bad_options_and_files_in_process(tmp_path, capsys):
    gelu = tmp_path / "gelu.npz"
    construct.stack(layers=2, d=2, n=4, seed=1, activation="gelu").save(gelu)
    for argv, message in (([gelu], "not piecewise linear"), ([STACKS / "relu_identity_d2_n2.npz", "--starts", "0"], "--starts"),
                          ([STACKS / "relu_identity_d2_n2.npz", "--iterations", "0"], "--iterations"),
                          ([STACKS / "relu_identity_d2_n2.npz", "--seed", "-1"], "--seed"),
                          ([STACKS / "relu_identity_d2_n2.npz", "--time-limit", "-3"], "--time-limit"),
                          ([STACKS / "leaky_whole_d2_n2_witness.npz"], "residual-free")):
        capsys.readouterr()
        assert main(["explore", *map(str, argv)]) == 2
        assert message in capsys.readouterr().err


@pytest.mark.slow
def test_the_whole_stack_example_in_process(tmp_path, capsys):
    """The fitted path end to end (tests/workflows/test_explore_workflow.py covers it in the quick run)."""
    out = tmp_path / "w.npz"
    code = main(["explore", str(STACKS / "leaky_whole_d2_n2.npz"), "--starts", "8", "--iterations", "1500", "--witness", str(out), "--json"])
    payload = json.loads(capsys.readouterr().out)
    assert code == 0 and payload["certificate"]["kind"] == "fitted" and payload["stages"]["blockwise"]["status"] == "unknown"
    assert pwl.compare(Stack.load(STACKS / "leaky_whole_d2_n2.npz"), Stack.load(out), probes=0).equal is True
