"""Instance constructors: planted positives, negatives and hard instances.

Every family is a function taking keyword options and a ``seed`` and
returning an :class:`~indexset.model.instance.Instance` (a
:class:`~indexset.model.stack.Stack` for ``stack``). Its options are the
fields of one frozen spec (``PlantedSpec``, ...), validated once, errors
named after the option; :func:`build` finds a family by name in
:data:`FAMILIES`. Randomness comes only from
``numpy.random.default_rng(seed)``, so one seed gives one instance, and
:func:`write_reproducible` turns it into the same bytes every time.

Families
--------
planted
    Exact integer (or rational, over ``denominator``) weights with a hidden
    index set S, ``|S| = k ≥ d``, satisfying (★)
    ``c·W_down[:,S]·W_up[S,:] = −A`` (MATH.md §2), shuffled among decoys.
random
    Unplanted integer or Gaussian weights (negatives).
float_planted
    Gaussian weights with (★) holding up to float rounding, for ``--tol``.
degenerate
    A planted instance with one stated degeneracy (MATH.md §3, §7).
hard
    Planted or unplanted integer instances near density one.
gated, homogeneous
    SwiGLU/GeGLU/ReGLU/GLU and ReLU²/ReGLU blocks (MATH.md §4).
stack
    L blocks of one of the families above.
whole_stack
    Two ReLU blocks on R that absorb their skips only as a whole (MATH.md
    §9.5), with the witness stack in the metadata (:func:`witness_of`).
low_precision
    Integer weights in a small range times a scale (ternary at range 1),
    S planted or not, degenerate as drawn or on request.

Every planted S is checked with the exact verifier before an instance is
returned; a planted S that fails is a bug and raises ``RuntimeError``.
Metadata keys (never read by solvers): ``planted_S`` (int64 array),
``params`` (JSON string with the family, the seed and every option), and
``degeneracy`` / ``trap_S`` where stated.

Modules: ``spec`` (the spec base and shared checks), ``registry`` (families
by name), ``skips`` (skip matrices, q, the start of every draw),
``integers`` and ``planting`` (integer draws, planting S), and one module
per group of families (``blocks``, ``degenerate``, ``hard``, ``gated``,
``stacks``, ``whole``, ``low_precision``).
"""

from __future__ import annotations

import os

import indexset.model.activations as activations
from indexset.model.instance import Instance
from indexset.workflows.construct.blocks import BRUTE_CHECK_WIDTH, FloatPlantedSpec, PlantedSpec, RandomSpec, float_planted, planted, random
from indexset.workflows.construct.degenerate import DegenerateSpec, degenerate
from indexset.workflows.construct.gated import GatedSpec, HomogeneousSpec, gated, homogeneous
from indexset.workflows.construct.hard import HardSpec, achieved_density, hard
from indexset.workflows.construct.low_precision import LowPrecisionSpec, low_precision
from indexset.workflows.construct.registry import FAMILIES, Family, build, family
from indexset.workflows.construct.spec import LIMITS, Spec
from indexset.workflows.construct.stacks import StackSpec, stack
from indexset.workflows.construct.whole import WholeStackSpec, whole_stack, witness_of

__all__ = [
    "BRUTE_CHECK_WIDTH", "FAMILIES", "LIMITS", "DegenerateSpec", "Family", "FloatPlantedSpec", "GatedSpec", "HardSpec",
    "HomogeneousSpec", "LowPrecisionSpec", "PlantedSpec", "RandomSpec", "Spec", "StackSpec", "WholeStackSpec", "achieved_density", "activations", "build",
    "degenerate", "family", "float_planted", "gated", "hard", "homogeneous", "low_precision", "planted", "random", "stack", "whole_stack", "witness_of", "write_reproducible",
]


def write_reproducible(instance: Instance, path: str | os.PathLike) -> None:
    """Write ``instance`` atomically; the same instance always gives the same bytes."""
    instance.save(path)
