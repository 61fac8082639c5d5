"""The families by name: each one's spec (its options) and its builder."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from indexset.errors import InputError
from indexset.workflows.construct.blocks import FloatPlantedSpec, PlantedSpec, RandomSpec, make_float_planted, make_planted, make_random
from indexset.workflows.construct.degenerate import DegenerateSpec, make_degenerate
from indexset.workflows.construct.gated import GatedSpec, HomogeneousSpec, make_gated, make_homogeneous
from indexset.workflows.construct.hard import HardSpec, make_hard
from indexset.workflows.construct.low_precision import LowPrecisionSpec, make_low_precision
from indexset.workflows.construct.spec import Spec
from indexset.workflows.construct.stacks import StackSpec, make_stack
from indexset.workflows.construct.whole import WholeStackSpec, make_whole_stack


@dataclass(frozen=True)
class Family:
    """One family: its name, its spec type and the builder that turns a spec into an instance."""

    name: str
    spec: type[Spec]
    make: Callable


FAMILIES = {family.name: family for family in (
    Family("planted", PlantedSpec, make_planted),
    Family("random", RandomSpec, make_random),
    Family("float_planted", FloatPlantedSpec, make_float_planted),
    Family("degenerate", DegenerateSpec, make_degenerate),
    Family("hard", HardSpec, make_hard),
    Family("gated", GatedSpec, make_gated),
    Family("homogeneous", HomogeneousSpec, make_homogeneous),
    Family("stack", StackSpec, make_stack),
    Family("low_precision", LowPrecisionSpec, make_low_precision),
    Family("whole_stack", WholeStackSpec, make_whole_stack),
)}
"""Every family by its name (``float_planted`` is also spelled ``float-planted``, ``low_precision`` ``low-precision``, ``whole_stack`` ``whole-stack``)."""


def family(name: str) -> Family:
    """The family of that name (dashes read as underscores).

    Raises
    ------
    InputError
        Unknown family.
    """
    key = str(name).replace("-", "_")
    if key not in FAMILIES:
        raise InputError("construct", f"unknown family {name!r} (known: {', '.join(FAMILIES)})")
    return FAMILIES[key]


def build(name: str, **options):
    """Construct an instance of a named family: its spec validates ``options``, its builder draws.

    Raises
    ------
    InputError
        Unknown family or invalid options (named after the option).
    """
    entry = family(name)
    return entry.make(entry.spec.of(options))
