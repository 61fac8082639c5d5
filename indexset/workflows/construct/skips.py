"""Skip matrices A, the common denominator q, and the start every block draw shares.

Every block family begins the same way: a generator from the seed, the
skip A drawn from it (``None`` for the identity, stored as absent), and the
smallest denominator q that keeps every stored array integral
(:func:`begin`).
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from indexset.errors import InputError
from indexset.rational import fmpq_matrix
from indexset.workflows.construct.integers import identity, int_array, unimodular
from indexset.workflows.construct.spec import ATTEMPTS, check_choice, check_int
from indexset.workflows.vocabulary import SKIPS


@dataclass(frozen=True)
class Start:
    """The start of a block draw.

    Attributes
    ----------
    rng : numpy.random.Generator
        Every later draw comes from it, in a fixed order.
    skip : list of list of Fraction, or None
        The skip A; None for the identity.
    q : int or None
        The denominator of every stored array (None for float weights).
    """

    rng: np.random.Generator
    skip: list | None
    q: int | None


def begin(spec, c: Fraction | None = None, entropy=None, exact: bool = True) -> Start:
    """Generator, skip and denominator for a block spec.

    Parameters
    ----------
    spec
        A family spec with ``seed``, ``d`` and ``skip``, and optionally
        ``streams`` and ``denominator`` (the requested q).
    c : Fraction, optional
        The activation's c when the weights are planted (then q²·A/c must be
        integral too); None for unplanted weights.
    entropy : optional
        Seed of the generator instead of ``spec.seed`` (a family's own stream).
    exact : bool
        False for float weights: no denominator.
    """
    rng = np.random.default_rng(spec.seed if entropy is None else entropy)
    values = draw_skip(rng, spec.skip, spec.d, getattr(spec, "streams", None))
    q = denominator(values, c, getattr(spec, "denominator", None)) if exact else None
    return Start(rng, values, q)


def check_skip(kind: str, d: int, streams) -> None:
    """The skip option and its ``streams`` (mhc only, dividing d)."""
    check_choice("skip", kind, SKIPS)
    if streams is not None and kind != "mhc":
        raise InputError("streams", "streams applies to --skip mhc only")
    if kind == "mhc":
        streams = d if streams is None else streams
        check_int("streams", streams, 1)
        if d % streams:
            raise InputError("streams", f"streams = {streams} must divide d = {d}")


def draw_skip(rng, kind: str, d: int, streams) -> list[list[Fraction]] | None:
    """The skip A as Fractions; ``None`` for the identity (stored as absent)."""
    if kind == "identity":
        return None
    if kind == "unimodular":
        matrix = unimodular(rng, d, 2)
        while d > 1 and matrix == identity(d):
            matrix = unimodular(rng, d, 2)
        return fractions(matrix)
    if kind == "permutation":
        return fractions(_permutation_matrix(_non_identity_permutation(rng, d)))
    return _mhc(rng, d, d if streams is None else streams)


def fractions(matrix) -> list[list[Fraction]]:
    """An integer matrix as Fractions."""
    return [[Fraction(int(v)) for v in row] for row in matrix]


def _permutation_matrix(perm) -> list[list[int]]:
    size = len(perm)
    return [[int(perm[i] == j) for j in range(size)] for i in range(size)]


def _non_identity_permutation(rng, size: int) -> list[int]:
    perm = [int(v) for v in rng.permutation(size)]
    while size > 1 and perm == list(range(size)):
        perm = [int(v) for v in rng.permutation(size)]
    return perm


def _mhc(rng, d: int, streams: int) -> list[list[Fraction]]:
    """``H ⊗ I_{d/s}`` with H a convex combination of s × s permutations.

    Doubly stochastic matrices can be singular (all entries 1/s), so H is
    redrawn until it is invertible.
    """
    count = min(3, math.factorial(streams))
    for _ in range(ATTEMPTS):
        perms = set()
        while len(perms) < count:
            perms.add(tuple(int(v) for v in rng.permutation(streams)))
        weights = [int(w) for w in rng.integers(1, 4, size=count)]
        total = sum(weights)
        mix = [[Fraction(0)] * streams for _ in range(streams)]
        for weight, perm in zip(weights, sorted(perms)):
            for i, j in enumerate(perm):
                mix[i][j] += Fraction(weight, total)
        if fmpq_matrix(mix).rank() == streams:
            block = d // streams
            return [[mix[i // block][j // block] * int(i % block == j % block) for j in range(d)]
                    for i in range(d)]
    raise RuntimeError("could not draw an invertible doubly stochastic matrix")


def denominator(skip_values, c: Fraction | None, requested) -> int:
    """Smallest (or check the requested) q keeping every array integral over q.

    A non-identity skip is stored as numerators over q, so q·A must be
    integral; planted weights need q²·A/c integral, because in numerators
    (★) reads ``W_S·U_S = q²·(−A/c)``. ``c = None`` skips the second rule.
    """
    def works(q: int) -> bool:
        if skip_values is not None and any((q * v).denominator != 1 for row in skip_values for v in row):
            return False
        values = skip_values if skip_values is not None else [[Fraction(1)]]
        return c is None or all((q * q * v / c).denominator == 1 for row in values for v in row)

    if requested is None:
        return next(q for q in itertools.count(1) if works(q))
    if not works(int(requested)):
        smallest = next(q for q in itertools.count(1) if works(q))
        raise InputError("denominator", f"q = {requested} cannot hold the skip and −A/c exactly; use a multiple of {smallest}")
    return int(requested)


def skip_array(skip_values, q: int):
    """The stored skip numerators over q (None for the identity)."""
    if skip_values is None:
        return None
    return int_array([[int(q * v) for v in row] for row in skip_values])


def float_skip(skip_values, d: int) -> np.ndarray:
    """The skip as float64 (the identity when ``skip_values`` is None)."""
    values = skip_values if skip_values is not None else fractions(identity(d))
    return np.array([[float(v) for v in row] for row in values])
