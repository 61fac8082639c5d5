"""Write the bundled deep-stack examples of MATH.md §9.6 to instances/stacks/ (the same bytes every time).

- ``leaky_whole_d2_n2.npz``: leaky ReLU (α = 1/2), two nondegenerate blocks
  of width n = d = 2 whose composition is the identity; neither block
  absorbs its skip on its own (MATH.md §3, extension), the stack does as a
  whole: ``leaky_whole_d2_n2_witness.npz`` is a residual-free stack of the
  same widths, g₂(g₁(x)) = −2σ(−σ(x)) = x.
- ``relu_identity_d2_n2.npz``: the ReLU analogue, also the identity, which
  no residual-free ReLU stack of width 2 equals (Theorem 9.2); width 4 would do.
- ``relu_odd_d2_n4.npz``: stack 5 of the d = 2, widths 4–8 survey, width 4,
  decided by Theorem 9.3.
- ``relu_whole_d1_n3.npz``: ``indexset construct whole-stack --n 3 --seed 0``,
  two ReLU blocks on R that absorb only as a whole (MATH.md §9.5,
  Proposition 9.7), with its witness ``relu_whole_d1_n3_witness.npz``.
- ``relu_line_not_d1_n2.npz``: two ReLU blocks on R of width 2 with a
  strictly monotone composite of 4 breakpoints that no split makes two
  balanced pairs of: not absorbable by Theorem 9.6.
- ``relu_fold_not_d1_n2.npz``: stack 18 of the survey (``run.py stacks``
  defaults): identity skips, width 2, a folding composite without a zero
  slope, neither block absorbing: not absorbable by Theorem 9.12 (at n = 2
  also Theorem 9.11).
- ``relu_fold_not_d1_n3.npz``: the same at width 3 (stack 25 of the survey):
  not absorbable by Theorem 9.12.

- ``relu_chain_d1_n2_L3.npz``: three ReLU blocks on R of width 2, none
  absorbing on its own, whose strictly monotone composite (m = 3n − 2 = 4)
  absorbs only as a whole through a chain of Lemma 9.6a (b₁ in blocks 1
  and 2, b₂ in 2 and 3); its witness ``relu_chain_d1_n2_L3_witness.npz``.
- ``relu_line_not_d1_n2_L3.npz``: three blocks of width 2, a strictly
  monotone composite with ratios 25/6, 3/5, 2, 4/15 and no split: not
  absorbable by Theorem 9.6 with Lemma 9.6a.

- ``relu_biasfree_whole_d1_n2.npz``: x + σ(x) + σ(2x), then
  y + σ(y − 3) + σ(2y − 6): in the bias-free class the second block alone
  does not absorb (its kink is not at 0) but the stack does (Theorem 9.15);
  in the affine class both blocks absorb.
- ``relu_biasfree_three_d1_n2.npz``: stack 15 of the three-block survey on
  R (``run.py stacks --layers 3 --dims 1``), width 2: no block absorbs in
  the bias-free class, the stack does (Theorem 9.15e: F is flat between
  slopes −3 and 6, and the second map folds at −1, between its
  breakpoints); its witness ``relu_biasfree_three_d1_n2_witness.npz``.
- ``relu_biasfree_three_not_d1_n2.npz``: stack 27 of that survey, width 2:
  it absorbs as a whole in the affine class, in no bias-free stack
  (Theorem 9.15e).
- ``relu_unmatched_not_d1_n2_L3.npz``: stack 18 of that survey, width 2:
  its composite turns twice, at −485 and then −245, with nonzero end
  slopes, so its turns match nowhere: not absorbable by Proposition 9.20.
- ``relu_turns_not_d1_n2_L3.npz``: stack 126 of that survey, width 2: its
  composite has no zero slope and turns five times, at −1, 1, −1, 1, −1,
  so its sides match at the middle turn and the counts allow it; not
  absorbable by Theorem 9.21.

Usage: ``python benchmarks/deep_examples.py [FOLDER]`` (default instances/stacks).
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

REPOSITORY = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPOSITORY))
sys.path.insert(0, str(REPOSITORY / "benchmarks"))

from surveys import draw_stack  # noqa: E402

from indexset.exact.witness import block_instance  # noqa: E402
from indexset.model.instance import Instance  # noqa: E402
from indexset.model.stack import Stack  # noqa: E402
from indexset.theory import line_bias_free, line_stacks  # noqa: E402
from indexset.workflows import construct  # noqa: E402

EYE = np.eye(2, dtype=np.int64)
THREE_ON_THE_LINE = {"seed": 0, "widths": [2, 3, 4], "bound": 3, "dims": [1], "layers": 3, "activation": "relu"}
LEAKY = "leaky_relu:1/2"


def leaky_whole() -> tuple[Stack, Stack]:
    """f₁(x) = (2/3)x + (4/3)σ(x), f₂(y) = y − (1/2)σ(y) coordinatewise (σ = leaky ReLU, α = 1/2), and g₁ = σ, g₂ = −2σ(−·)."""
    first = Instance(EYE * 3, EYE * 4, skip=EYE * 2, denominator=3, activation=LEAKY)
    second = Instance(EYE * 2, -EYE, skip=EYE * 2, denominator=2, activation=LEAKY)
    stack = Stack([first, second], {"example": np.array("MATH.md §9.6: the identity, absorbed as a whole only")})
    witness = Stack([Instance(EYE, EYE, activation=LEAKY, residual_free=True),
                     Instance(-EYE, -2 * EYE, activation=LEAKY, residual_free=True)],
                    {"witness_of": np.array("leaky_whole_d2_n2.npz")})
    return stack, witness


def relu_identity() -> Stack:
    """f₁(x) = x + diag(2, 3)σ(x), f₂(y) = y − diag(2/3, 3/4)σ(y): f₂ ∘ f₁ = id."""
    first = Instance(EYE, np.array([[2, 0], [0, 3]]))
    second = Instance(EYE * 12, np.array([[-8, 0], [0, -9]]), denominator=12)
    return Stack([first, second], {"example": np.array("MATH.md §9.6: the identity; Theorem 9.2 at width 2")})


def line_not() -> Stack:
    """On R: −2x + 2σ(−2x + 4) + σ(−x − 1) − 1, then 3y − 2σ(2y − 2) + 2σ(2y + 8); F strictly decreasing, 4 breakpoints."""
    first = Instance(np.array([[-2], [-1]]), np.array([[2, 1]]), skip=np.array([[-2]]), b_up=np.array([4, -1]), b_down=np.array([-1]))
    second = Instance(np.array([[2], [2]]), np.array([[-2, 2]]), skip=np.array([[3]]), b_up=np.array([-2, 8]))
    return Stack([first, second], {"example": np.array("MATH.md §9.5: not absorbable by Theorem 9.6")})


def fold_not() -> Stack:
    """On R, identity skips: x + 2σ(−x − 2) − 2σ(3x) − 2, then y − σ(−2y − 1) − 3σ(−3y + 1) + 1."""
    first = Instance(np.array([[-1], [3]]), np.array([[2, -2]]), b_up=np.array([-2, 0]), b_down=np.array([-2]))
    second = Instance(np.array([[-2], [-3]]), np.array([[-1, -3]]), b_up=np.array([-1, 1]), b_down=np.array([1]))
    return Stack([first, second], {"example": np.array("MATH.md §9.5: not absorbable by Theorem 9.12")})


def fold_not_width_three() -> Stack:
    """On R, identity skips, width 3: x − σ(−2x − 1) − σ(−x − 3) + 3σ(3x + 1) − 2, then y + 3σ(−3y − 2) + 3σ(3y − 1) + σ(3y)."""
    first = Instance(np.array([[-2], [-1], [3]]), np.array([[-1, -1, 3]]), b_up=np.array([-1, -3, 1]), b_down=np.array([-2]))
    second = Instance(np.array([[-3], [3], [3]]), np.array([[3, 3, 1]]), b_up=np.array([-2, -1, 0]), b_down=np.array([0]))
    return Stack([first, second], {"example": np.array("MATH.md §9.5: not absorbable by Theorem 9.12")})


def bias_free_whole() -> Stack:
    """On R, identity skips, width 2: kinks at 0 and at 3/2, slopes 1, 4, 10."""
    first = Instance(np.array([[1], [2]]), np.array([[1, 1]]))
    second = Instance(np.array([[1], [2]]), np.array([[1, 1]]), b_up=np.array([-3, -6]))
    return Stack([first, second], {"example": np.array("MATH.md §9.5: bias-free only as a whole, Theorem 9.15")})


def chain_three() -> tuple[Stack, Stack]:
    """Three blocks on R of width 2 (weights over 6) absorbing only as a whole, and the witness of Theorem 9.6 for them."""
    ups = np.full((2, 1), 6)
    blocks = [Instance(ups, np.array([down]), skip=np.array([[skip]]), b_up=np.array(b_up), b_down=np.array([b_down]), denominator=6)
              for down, skip, b_up, b_down in (([42, -36], 18, [12, -48], 36), ([-6, -11], 18, [0, -60], -120), ([60, -36], 12, [0, -50], -18))]
    stack = Stack(blocks)
    verdict = line_stacks.decide(stack)
    witness = Stack([block_instance(block, values, "line") for block, values in zip(blocks, verdict.witness)],
                    {"witness_of": np.array("instances/stacks/relu_chain_d1_n2_L3.npz")})
    return stack, witness


def line_not_three() -> Stack:
    """Three blocks on R of width 2 whose strictly monotone composite (4 breakpoints) has no split."""
    ones = np.ones((2, 1), dtype=np.int64)
    return Stack([Instance(ones, np.array([down]), skip=np.array([[skip]]), b_up=np.array(b_up), b_down=np.array([b_down]))
                  for down, skip, b_up, b_down in (([3, -2], 2, [8, 5], 17), ([2, -3], 3, [-1, -40], -5), ([3, -2], 3, [-178, -193], -353))])


def bias_free_three() -> tuple[Stack, Stack]:
    """Stack 15 of the three-block survey on R and its bias-free witness by Theorem 9.15e."""
    stack, _ = draw_stack(15, THREE_ON_THE_LINE)
    verdict = line_bias_free.decide(stack)
    witness = Stack([block_instance(block, values, "line") for block, values in zip(stack.blocks, verdict.witness)],
                    {"witness_of": np.array("instances/stacks/relu_biasfree_three_d1_n2.npz")})
    return stack, witness


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    folder = Path(argv[0]) if argv else REPOSITORY / "instances" / "stacks"
    folder.mkdir(parents=True, exist_ok=True)
    stack, witness = leaky_whole()
    stack.save(folder / "leaky_whole_d2_n2.npz")
    witness.save(folder / "leaky_whole_d2_n2_witness.npz")
    relu_identity().save(folder / "relu_identity_d2_n2.npz")
    survey, _ = draw_stack(5, {"seed": 0, "widths": [4, 5, 6, 7, 8], "bound": 3, "dims": [2], "layers": 2, "activation": "relu"})
    survey.save(folder / "relu_odd_d2_n4.npz")
    whole = construct.whole_stack(n=3, seed=0)
    whole.save(folder / "relu_whole_d1_n3.npz")
    construct.witness_of(whole).save(folder / "relu_whole_d1_n3_witness.npz")
    line_not().save(folder / "relu_line_not_d1_n2.npz")
    fold_not().save(folder / "relu_fold_not_d1_n2.npz")
    fold_not_width_three().save(folder / "relu_fold_not_d1_n3.npz")
    bias_free_whole().save(folder / "relu_biasfree_whole_d1_n2.npz")
    chain, chain_witness = chain_three()
    chain.save(folder / "relu_chain_d1_n2_L3.npz")
    chain_witness.save(folder / "relu_chain_d1_n2_L3_witness.npz")
    line_not_three().save(folder / "relu_line_not_d1_n2_L3.npz")
    three, three_witness = bias_free_three()
    three.save(folder / "relu_biasfree_three_d1_n2.npz")
    three_witness.save(folder / "relu_biasfree_three_d1_n2_witness.npz")
    draw_stack(27, THREE_ON_THE_LINE)[0].save(folder / "relu_biasfree_three_not_d1_n2.npz")
    draw_stack(18, THREE_ON_THE_LINE)[0].save(folder / "relu_unmatched_not_d1_n2_L3.npz")
    draw_stack(126, THREE_ON_THE_LINE)[0].save(folder / "relu_turns_not_d1_n2_L3.npz")
    print(f"wrote 18 files to {folder}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
