"""What a family accepts: the base of every family's spec and the checks they share.

A spec is a frozen dataclass whose fields are a family's options with their
defaults. Its ``__post_init__`` validates every option once, raising
:class:`~indexset.errors.InputError` named after the option (``d``,
``range``, ...), and fills in derived values (the default ``k``, the
activation). Builders then trust the spec.
"""

from __future__ import annotations

import dataclasses
import json
from typing import ClassVar

import numpy as np

import indexset.model.activations as activations
from indexset.errors import InputError
from indexset.model.activations import ODD_LINEAR

LIMITS = {"d": 1024, "n": 65536, "k": 65536, "range": 2**31 - 1, "denominator": 2**31 - 1, "seed": 2**63 - 1, "layers": 256,
          "streams": 1024, "levels": 2**31 - 1}
"""Largest value of each integer option: numpy draws int64, and larger sizes
would not fit in memory or in the exact arithmetic in reasonable time."""

ATTEMPTS = 200
"""Redraws a builder makes before it gives up on a condition."""


@dataclasses.dataclass(frozen=True)
class Spec:
    """Base of the family specs: construction from an options dict, and the family's name."""

    family: ClassVar[str] = ""

    @classmethod
    def of(cls, options: dict) -> Spec:
        """The spec for keyword ``options``; an unknown name is an :class:`InputError` naming it."""
        known = [f.name for f in dataclasses.fields(cls) if f.init]
        for name in options:
            if name not in known:
                raise InputError(name, f"not an option of family {cls.family} (options: {', '.join(known)})")
        return cls(**options)

    @classmethod
    def defaults(cls) -> dict:
        """Every option's default value, by name."""
        return {f.name: f.default for f in dataclasses.fields(cls) if f.init}

    def _set(self, **derived) -> None:
        """Fill derived fields during validation (the dataclass is frozen)."""
        for name, value in derived.items():
            object.__setattr__(self, name, value)


def check_int(name: str, value, low: int) -> None:
    """``value`` is an integer (not a bool), at least ``low`` and at most its :data:`LIMITS` entry."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise InputError(name, f"expected an integer, got {value!r}")
    if value < low:
        raise InputError(name, f"must be ≥ {low}, got {value}")
    if name in LIMITS and value > LIMITS[name]:
        raise InputError(name, f"must be ≤ {LIMITS[name]}, got {value}")


def check_sizes(d, n, seed, *, min_d: int, bound=1, k=None) -> None:
    """Validate sizes; d = 1 is refused where nondegeneracy is promised."""
    check_int("d", d, 1)
    if d < min_d:
        raise InputError("d", f"d = {d} is always degenerate (MATH.md §3); build it with the degenerate family, kind dimension_one")
    check_int("n", n, 1)
    check_int("range", bound, 1)
    check_int("seed", seed, 0)
    if k is not None:
        check_int("k", k, 1)
        if k < d:
            raise InputError("k", f"k = {k} < d = {d}: (★) needs rank d, so |S| ≥ d")
        if k > n:
            raise InputError("k", f"k = {k} > n = {n}: S cannot be larger than the width")


def default_k(d, n, k):
    """``k`` as given, else ``max(d, n // 2)`` (``d`` when the sizes are not integers: their check reports them)."""
    if k is not None:
        return k
    if isinstance(d, int) and isinstance(n, int):
        return max(d, n // 2)
    return d


def check_choice(name: str, value, choices) -> None:
    """``value`` is one of ``choices``."""
    if value not in choices:
        raise InputError(name, f"unknown {name} {value!r} (known: {', '.join(choices)})")


def odd_linear(name: str) -> activations.Activation:
    """The odd-linear activation of that name (the families with a planted S need c)."""
    act = activations.get(name, "activation")
    if act.kind != ODD_LINEAR:
        raise InputError("activation", f"{act.name} is not odd-linear ({act.kind}); use the gated or homogeneous family")
    return act


def params(family: str, seed: int, **options) -> str:
    """The ``params`` metadata: the family, the seed and every option, as sorted JSON."""
    return dump({"family": family, "seed": int(seed), **options})


def dump(values: dict) -> str:
    """Sorted JSON, so one instance always gives the same bytes."""
    return json.dumps(values, sort_keys=True)
