"""The ``stack`` family: L blocks, each built like one block of its family."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

import indexset.model.activations as activations
from indexset.errors import InputError
from indexset.exact.witness import check_forward, witness
from indexset.model.activations import ODD_LINEAR
from indexset.model.stack import Stack
from indexset.workflows.construct.blocks import PlantedSpec, make_planted
from indexset.workflows.construct.gated import GatedSpec, HomogeneousSpec, make_gated, make_homogeneous
from indexset.workflows.construct.spec import Spec, check_int, params


@dataclass(frozen=True)
class StackSpec(Spec):
    """Options of the ``stack`` family.

    Parameters
    ----------
    layers : int
        Number of blocks L ≥ 1.
    d, n, k, range, seed, activation, biases, skip
        As in :class:`~indexset.workflows.construct.blocks.PlantedSpec`
        (``k`` for odd-linear activations only). Each block is validated
        by its own family.
    """

    family = "stack"
    layers: int = 3
    d: int = 2
    n: int = 12
    k: int | None = None
    range: int = 5
    seed: int = 0
    activation: str = "relu"
    biases: bool = False
    skip: str = "identity"
    act: object = field(default=None, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        check_int("layers", self.layers, 1)
        act = activations.get(self.activation, "activation")
        if act.kind != ODD_LINEAR and self.k is not None:
            raise InputError("k", f"{act.name} stacks have no planted index set")
        self._set(act=act)

    def block_seeds(self) -> list[int]:
        """The seed of each block: ``seed·1000 + layer``."""
        return [self.seed * 1000 + layer for layer in range(self.layers)]


def stack(**options) -> Stack:
    """A stack of L blocks, each built like one block of its family; options: :class:`StackSpec`.

    Odd-linear activations: every block is ``planted`` (seed
    ``seed·1000 + layer``), so its S passes the exact verifier, and the
    stack of flip witnesses passes the whole-stack forward check (exact
    for ReLU) before the stack is returned: the stack absorbs block-wise.
    Gated activations (``gated``) and ReLU²/ReGLU (``homogeneous``)
    give stacks that are never absorbable (MATH.md §4, depth corollary).

    Returns
    -------
    indexset.model.stack.Stack
        With metadata ``planted_S`` (shape (L, k)) for planted stacks and
        ``params``.
    """
    return make_stack(StackSpec.of(options))


def make_stack(spec: StackSpec) -> Stack:
    """The ``stack`` of a validated spec."""
    act = spec.act
    meta = params("stack", spec.seed, layers=spec.layers, d=spec.d, n=spec.n, k=spec.k, range=spec.range, activation=act.name,
                  biases=bool(spec.biases), skip=spec.skip)
    shared = dict(d=spec.d, n=spec.n, range=spec.range, activation=act.name, biases=spec.biases, skip=spec.skip)
    if act.kind != ODD_LINEAR:
        make, kind = (make_gated, GatedSpec) if act.gated else (make_homogeneous, HomogeneousSpec)
        blocks = [make(kind(seed=s, **shared)) for s in spec.block_seeds()]
        return Stack(blocks, {"params": np.array(meta)}, "construct stack")
    blocks = [make_planted(PlantedSpec(k=spec.k, seed=s, **shared)) for s in spec.block_seeds()]
    common = math.lcm(*(b.denominator for b in blocks))
    if any(b.denominator != common for b in blocks):  # mhc skips differ from block to block, and so do their smallest q
        blocks = [make_planted(PlantedSpec(k=spec.k, seed=s, denominator=common, **shared)) for s in spec.block_seeds()]
    _same_denominator(blocks)
    built = Stack(blocks, {"planted_S": np.array([b.planted for b in blocks], dtype=np.int64),
                           "params": np.array(meta)}, "construct stack")
    witnesses = Stack([witness(b, b.planted) for b in blocks], source="construct stack witness")
    if not check_forward(built, witnesses).ok:
        raise RuntimeError("bug: the planted witness stack fails the whole-stack forward check")
    return built


def _same_denominator(blocks) -> None:
    """Blocks of one stack file share one denominator."""
    if len({b.denominator for b in blocks}) != 1:
        raise RuntimeError("bug: planted blocks of one stack came out with different denominators")
