"""The ``hard`` family: integer blocks whose 0/1 system sits near density one."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field

from indexset.errors import InputError
from indexset.model.instance import Instance
from indexset.workflows.construct.blocks import PlantedSpec, RandomSpec, make_planted, make_random
from indexset.workflows.construct.spec import Spec, check_sizes, dump

LARGEST_RANGE = 2**20
"""The largest entry range a density may ask for."""


@dataclass(frozen=True)
class HardSpec(Spec):
    """Options of the ``hard`` family.

    Parameters
    ----------
    d, n : int
        Dimension (≥ 2) and width.
    k : int, optional
        Size of the planted S; default ``max(d, n // 2)`` (half the units,
        the hardest size for subset-sum-like problems).
    density : float
        Target density (> 0).
    plant : bool
        Plant S (a positive); ``False`` draws a ``random`` instance of the
        same range (a probable negative).
    seed, activation
        As in :class:`~indexset.workflows.construct.blocks.PlantedSpec`.
    """

    family = "hard"
    d: int = 2
    n: int = 40
    k: int | None = None
    density: float = 1.0
    plant: bool = True
    seed: int = 0
    activation: str = "relu"
    range: int = field(default=None, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        try:
            target = float(self.density)
        except (TypeError, ValueError):
            raise InputError("density", f"{self.density!r} is not a number") from None
        if not math.isfinite(target) or target <= 0:
            raise InputError("density", f"density must be a positive number, got {self.density!r}")
        check_sizes(self.d, self.n, self.seed, min_d=2)
        bits = self.n / (self.d * self.d * target)
        bound = max(1, round(2.0 ** min(bits / 2, 1000)))  # past 2^1000 the float power overflows; any such range is refused below
        if bound > LARGEST_RANGE:
            raise InputError("density", f"density {target} at n = {self.n}, d = {self.d} needs entries up to {bound}; raise the density")
        if not self.plant and self.k is not None:
            raise InputError("k", "an unplanted instance has no k")
        self._set(density=target, range=bound)


def hard(**options) -> Instance:
    """Integer instances near density one, where plain solvers struggle; options: :class:`HardSpec`.

    The 0/1 system ``M z = t`` (MATH.md §5) has n unknowns and d² equations
    whose coefficients ``M[(a,b), i] = W_down[a,i]·W_up[i,b]`` have about
    ``log2 max|M|`` bits. As for subset sum (n / log2 max aᵢ) and market
    split lattices, the density used here is::

        density = n / (d² · log2(max |M entry|))

    Density well below one is easy for lattice reduction, far above one has
    many solutions; density near one is hardest. Since ``max|M| ≈ R²`` for
    entries in ``[−R, R]``, the range is ``R = round(2^(n / (2·d²·density)))``
    (at least 1). The achieved density is stored as ``params["density"]``.
    """
    return make_hard(HardSpec.of(options))


def make_hard(spec: HardSpec) -> Instance:
    """The ``hard`` instance of a validated spec."""
    if spec.plant:
        instance = make_planted(PlantedSpec(d=spec.d, n=spec.n, k=spec.k, range=spec.range, seed=spec.seed, activation=spec.activation))
    else:
        instance = make_random(RandomSpec(d=spec.d, n=spec.n, range=spec.range, seed=spec.seed, activation=spec.activation))
    meta = json.loads(instance.metadata["params"])
    meta.update(family="hard", target_density=spec.density, plant=bool(spec.plant), density=achieved_density(instance))
    instance.metadata["params"] = dump(meta)
    return instance


def achieved_density(instance: Instance) -> float:
    """``n / (d² · log2 max|M|)`` for the integer numerators of an instance."""
    up, _ = instance.exact("W_up")
    down, _ = instance.exact("W_down")
    largest = max(abs(int(down[a, i]) * int(up[i, b]))
                  for a in range(instance.d) for b in range(instance.d)
                  for i in range(instance.n))
    return instance.n / (instance.d**2 * math.log2(max(2, largest)))
