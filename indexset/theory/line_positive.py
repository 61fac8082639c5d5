"""Positive real solutions of a·u = 0 and b·(1/u) = 0: one leaf of two full blocks (MATH.md §9.5, Lemma 9.14b).

In Theorem 9.12's search a leaf where both blocks have n breakpoints and
two or more level ratios are free asks for u > 0 with a·u = 0 (a subset
condition of g_1, linear in u) and b·(1/u) = 0 (one of g_2, linear in
1/u). The cone C = {u > 0 : a·u = 0} is spanned by rays of support at most
two, u = Mλ with λ > 0, and on it the sign of φ(u) = Σ b_i/u_i is that of
the polynomial P(λ) = Σ_i b_i Π_{j≠i} (Mλ)_j. C is convex, so a solution
exists iff P vanishes at some λ > 0 or takes both signs there. This
module decides that exactly when C has two rays (three variables), and
otherwise proves it by a Pólya certificate (P·(Σλ)^N with coefficients of
one sign: no solution) or by a sign change between two rational points (a
solution, by the intermediate value theorem), looking for a rational root
on that segment.

>>> from fractions import Fraction as Q
>>> two_full((1, 1, -1), (1, 1, -4)).u        # u_3 = u_1 + u_2 and 1/u_1 + 1/u_2 = 4/u_3: (u_1 − u_2)² = 0
(Fraction(1, 1), Fraction(1, 1), Fraction(2, 1))
>>> two_full((1, 1, -1), (1, 3, -3)).kind      # 3t² + t + 1 = 0 for t = u_1/u_2: no real root
'none'
>>> two_full((1, 1, -1), (1, 1, -5)).kind      # t² − 3t + 1 = 0: t = (3 ± √5)/2
'irrational'
"""

from __future__ import annotations

import itertools
import random
from dataclasses import dataclass
from fractions import Fraction

import flint

from indexset.rational import as_fmpq, as_fraction

RATIONAL, IRRATIONAL, NONE, OPEN = "rational", "irrational", "none", "open"
__all__ = ["IRRATIONAL", "NONE", "OPEN", "RATIONAL", "PositiveTuning", "TwoFull", "both_signs", "cone_rays", "positive_root", "two_full"]


@dataclass(frozen=True)
class PositiveTuning:
    """Budgets of the exact decision of one pair; each only moves the line between decided and ``open``."""

    polya_terms: int = 20000
    """Most terms P·(Σλ)^N may reach before the Pólya certificate stops raising N."""
    sign_probes: int = 2000
    """Rational points λ > 0 tried for a sign change of P when C has three or more rays."""
    probe_octaves: int = 12
    """The probes' weights are 2^e·c with |e| at most this and c in 1..7."""
    seed: int = 0
    """Seed of the probes' random points."""


@dataclass(frozen=True)
class TwoFull:
    """The answer for one pair (a, b).

    Attributes
    ----------
    kind : str
        ``rational`` (``u`` solves both), ``irrational`` (a solution exists
        and no rational one was found: with two rays every positive root
        of P(1, t) is irrational; otherwise φ changes sign on the segment
        ``bracket`` and none of its roots there is rational), ``none`` (no
        u > 0 solves both) or ``open``.
    u : tuple or None
        A positive rational solution.
    bracket : tuple or None
        Two positive rational points of C, φ negative at the first and positive at the second.
    degree : int
        The exponent N of the Pólya certificate behind a ``none``; -1 when
        no certificate was needed (a form of one sign, or two rays).
    """

    kind: str
    u: tuple | None = None
    bracket: tuple | None = None
    degree: int = -1


def both_signs(form: tuple) -> bool:
    """Whether the form has a positive and a negative coefficient."""
    return any(v > 0 for v in form) and any(v < 0 for v in form)


def positive_root(form: tuple) -> tuple | None:
    """u > 0 with form·u = 0 (form zero or of both signs), else None."""
    if not any(form):
        return tuple(Fraction(1) for _ in form)
    if not both_signs(form):
        return None
    plus = next(i for i, v in enumerate(form) if v > 0)
    minus = next(i for i, v in enumerate(form) if v < 0)
    u = [Fraction(1)] * len(form)
    u[minus] = (sum(abs(v) for i, v in enumerate(form) if i not in (plus, minus)) + 1) / -form[minus]
    u[plus] = -sum(v * w for i, (v, w) in enumerate(zip(form, u)) if i != plus) / form[plus]
    return tuple(u)


def cone_rays(a: tuple) -> list:
    """The rays spanning {u ≥ 0 : a·u = 0}: e_i where a_i = 0, and −a_q e_p + a_p e_q for a_p > 0 > a_q."""
    k = len(a)
    out = []
    for i in range(k):
        if a[i] == 0:
            out.append(tuple(Fraction(int(j == i)) for j in range(k)))
    for p, q in itertools.product(range(k), repeat=2):
        if a[p] > 0 > a[q]:
            out.append(tuple(Fraction(-a[q]) if j == p else Fraction(a[p]) if j == q else Fraction(0) for j in range(k)))
    return out


def _point(rays: list, weights) -> tuple:
    """u = Σ_r λ_r r."""
    return tuple(sum(w * ray[i] for w, ray in zip(weights, rays)) for i in range(len(rays[0])))


def _phi(b: tuple, u: tuple) -> Fraction:
    return sum(v / w for v, w in zip(b, u))


def _cleared(b: tuple, coords: list, constant):
    """Σ_i b_i Π_{j≠i} coords_j: φ = Σ b_i/u_i times Π_j u_j, for u given by polynomials ``coords``; ``constant`` makes a ring constant."""
    total = constant(0)
    for i, v in enumerate(b):
        term = constant(as_fmpq(v))
        for j, coord in enumerate(coords):
            if j != i:
                term = term * coord
        total = total + term
    return total


def _polynomial(b: tuple, rays: list):
    """P(λ) = Σ_i b_i Π_{j≠i} (Mλ)_j, as a flint polynomial in one variable per ray."""
    ctx = flint.fmpq_mpoly_ctx.get(("l", len(rays)), "lex")
    coords = [sum((as_fmpq(ray[i]) * g for ray, g in zip(rays, ctx.gens())), ctx.constant(0)) for i in range(len(b))]
    return _cleared(b, coords, ctx.constant), ctx


def two_full(a: tuple, b: tuple, tuning: PositiveTuning | None = None) -> TwoFull:
    """Decide whether some u > 0 has a·u = 0 and Σ b_i/u_i = 0 (Lemma 9.14b).

    Parameters
    ----------
    a, b : tuple of Fraction
        The two forms, of one length k ≥ 2.
    tuning : PositiveTuning, optional

    Returns
    -------
    TwoFull
    """
    tuning = tuning or PositiveTuning()
    a, b = tuple(map(Fraction, a)), tuple(map(Fraction, b))
    if (any(a) and not both_signs(a)) or (any(b) and not both_signs(b)):
        return TwoFull(NONE)
    if not any(a):
        # C is the whole orthant: u = 1/v with b·v = 0.
        return TwoFull(RATIONAL, tuple(1 / v for v in positive_root(b)))
    rays = cone_rays(a)
    poly, ctx = _polynomial(b, rays)
    if poly.is_zero():
        # b = 0, or φ vanishes on all of C: any point of it.
        return TwoFull(RATIONAL, _point(rays, [1] * len(rays)))
    if len(rays) == 2:
        return _two_rays(poly, rays)
    certified = _polya(poly, ctx, tuning.polya_terms)
    if certified is not None:
        return TwoFull(NONE, degree=certified)
    return _sign_change(b, rays, tuning)


def _two_rays(poly, rays: list) -> TwoFull:
    """C = {λ₁r₁ + λ₂r₂ : λ > 0}: the positive roots t of P(1, t), exactly (rational ones by factoring)."""
    coefficients = [Fraction(0)] * (poly.total_degree() + 1)
    for (_, e1), c in poly.to_dict().items():
        coefficients[e1] += as_fraction(c)
    univariate = flint.fmpq_poly([as_fmpq(c) for c in coefficients])
    for root, _ in univariate.roots():
        t = as_fraction(root)
        if t > 0:
            return TwoFull(RATIONAL, _point(rays, [1, t]))
    real = [root.real for factor, _ in univariate.factor()[1] if factor.degree() > 1
            for root, _ in factor.complex_roots() if root.imag == 0]
    if any(not (x > 0 or x < 0) for x in real):
        return TwoFull(OPEN)  # an isolating ball that straddles 0 (a factor of degree two or more has no root at 0)
    return TwoFull(IRRATIONAL) if any(x > 0 for x in real) else TwoFull(NONE)


def _polya(poly, ctx, max_terms: int) -> int | None:
    """The least N with P·(Σλ)^N of one sign coefficient-wise (then P has that sign on λ > 0), or None."""
    total = sum(ctx.gens(), ctx.constant(0))
    for exponent in itertools.count():
        signs = {c > 0 for c in poly.coeffs()}
        if len(signs) == 1:
            return exponent
        if len(poly.coeffs()) * len(ctx.gens()) > max_terms:
            return None
        poly = poly * total


def _sign_change(b: tuple, rays: list, tuning: PositiveTuning) -> TwoFull:
    """Probe λ > 0 for both signs of φ; on a sign change, a rational root on the segment if its polynomial has one."""
    rng = random.Random(tuning.seed)
    count = len(rays)
    probes = [[Fraction(1)] * count]
    probes += [[Fraction(1) + 99 * (j == r) for j in range(count)] for r in range(count)]
    probes += [[Fraction(1, 100) + (j == r) for j in range(count)] for r in range(count)]
    while len(probes) < tuning.sign_probes:
        # Weights spread over many orders of magnitude, so that points near every face of C are tried.
        probes.append([Fraction(2) ** rng.randint(-tuning.probe_octaves, tuning.probe_octaves) * rng.randint(1, 7)
                       for _ in range(count)])
    found = {}
    for weights in probes:
        u = _point(rays, weights)
        value = _phi(b, u)
        if value == 0:
            return TwoFull(RATIONAL, u)
        found.setdefault(value > 0, u)
        if len(found) == 2:
            break
    if len(found) < 2:
        return TwoFull(OPEN)
    minus, plus = found[False], found[True]
    root = _rational_root(b, minus, plus)
    if root is not None:
        return TwoFull(RATIONAL, root)
    return TwoFull(IRRATIONAL, bracket=(minus, plus))


def _rational_root(b: tuple, start: tuple, end: tuple) -> tuple | None:
    """A rational t in (0, 1) with φ((1 − t)·start + t·end) = 0, as the point, or None."""
    coords = [flint.fmpq_poly([as_fmpq(s), as_fmpq(e - s)]) for s, e in zip(start, end)]
    numerator = _cleared(b, coords, lambda c: flint.fmpq_poly([c]))
    for root, _ in numerator.roots():
        value = as_fraction(root)
        if 0 < value < 1:
            return tuple((1 - value) * s + value * e for s, e in zip(start, end))
    return None

