"""The ``degenerate`` family: a planted block with exactly one stated degeneracy (MATH.md §3, §7)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar

from indexset.errors import InputError
from indexset.model.instance import Instance
from indexset.theory.nondegeneracy import find_degeneracy
from indexset.workflows.construct.planting import checked, plant
from indexset.workflows.construct.skips import begin
from indexset.workflows.construct.spec import Spec, check_choice, check_sizes, default_k, odd_linear, params
from indexset.workflows.vocabulary import DEGENERACIES


@dataclass(frozen=True)
class DegenerateSpec(Spec):
    """Options of the ``degenerate`` family.

    Parameters
    ----------
    kind : str
        One of ``duplicate``, ``collinear``, ``zero_row``, ``zero_column``,
        ``dimension_one``.
    d, n, k, range, seed, activation, biases
        As in :class:`~indexset.workflows.construct.blocks.PlantedSpec`;
        ``dimension_one`` needs d = 1, the others d ≥ 2 and n > k (a decoy
        to alter).
    """

    family = "degenerate"
    skip: ClassVar[str] = "identity"
    kind: str = "duplicate"
    d: int = 2
    n: int = 8
    k: int | None = None
    range: int = 5
    seed: int = 0
    activation: str = "relu"
    biases: bool = False
    act: object = field(default=None, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        check_choice("kind", self.kind, DEGENERACIES)
        k = default_k(self.d, self.n, self.k)
        if self.kind == "dimension_one" and self.d != 1:
            raise InputError("d", f"kind dimension_one needs d = 1, got d = {self.d}")
        check_sizes(self.d, self.n, self.seed, min_d=1 if self.kind == "dimension_one" else 2, bound=self.range, k=k)
        if self.kind != "dimension_one" and self.n <= k:
            raise InputError("n", f"kind {self.kind} alters a decoy unit: need n > k, got n = {self.n}, k = {k}")
        self._set(k=k, act=odd_linear(self.activation), biases=bool(self.biases))


def degenerate(**options) -> Instance:
    """A planted instance with exactly one stated degeneracy (MATH.md §3); options: :class:`DegenerateSpec`.

    A nondegenerate planted instance (identity skip) is drawn first, then
    one decoy unit j (never in S, so S still satisfies (★)) is altered:

    - ``duplicate``: W_up[j] = W_up[i] for another unit i;
    - ``collinear``: W_up[j] = m·W_up[i] with m in {−1, 2, −2};
    - ``zero_row``: W_up[j] = 0;
    - ``zero_column``: W_down[:, j] = 0;
    - ``dimension_one``: d = 1 (every pair of rows is collinear); no unit
      is altered.

    (★) stays sufficient but is no longer necessary (MATH.md §3, §7). The
    statement is stored as metadata ``degeneracy`` (the exact description
    from :func:`indexset.theory.nondegeneracy.find_degeneracy`).
    """
    return make_degenerate(DegenerateSpec.of(options))


def make_degenerate(spec: DegenerateSpec) -> Instance:
    """The ``degenerate`` instance of a validated spec."""
    start = begin(spec, c=spec.act.c)
    meta = params("degenerate", spec.seed, kind=spec.kind, d=spec.d, n=spec.n, k=spec.k, range=spec.range, activation=spec.act.name,
                  biases=spec.biases, skip="identity", denominator=start.q)
    base = plant(spec, start, meta)
    return _alter(start.rng, base, spec.kind)


def _alter(rng, base: Instance, kind: str) -> Instance:
    """Alter one decoy of a planted instance to create the stated degeneracy."""
    index_set = base.planted
    up, down = base.W_up.copy(), base.W_down.copy()
    if kind != "dimension_one":
        decoys = [u for u in range(base.n) if u not in index_set]
        j = int(rng.choice(decoys))
        i = int(rng.choice([u for u in range(base.n) if u != j]))
        if kind == "duplicate":
            up[j] = up[i]
        elif kind == "collinear":
            up[j] = int(rng.choice([-1, 2, -2])) * up[i]
        elif kind == "zero_row":
            up[j] = 0
        else:
            down[:, j] = 0
    instance = Instance(up, down, base.skip, base.b_up, base.b_down, activation=base.activation,
                        denominator=base.denominator, metadata=dict(base.metadata), source="construct degenerate")
    found = find_degeneracy(instance)
    instance.metadata["degeneracy"] = found.describe()
    if not _states(found, kind):
        raise RuntimeError(f"bug: asked for {kind}, got {found.describe()}")
    return checked(instance, index_set, nondegenerate=False)


def _states(found, kind: str) -> bool:
    """The degeneracy found is exactly the one asked for, and nothing else."""
    if kind == "dimension_one":
        return found.dimension_one
    present = {
        "zero_row": bool(found.zero_rows),
        "zero_column": bool(found.zero_columns),
        "collinear": bool(found.collinear_classes),
        "dimension_one": found.dimension_one,
    }
    wanted = "collinear" if kind == "duplicate" else kind
    return [name for name, hit in present.items() if hit] == [wanted]
