"""Maps of the line: ReLU blocks and stacks on R as exact piecewise-linear functions (MATH.md §9.5).

On R (d = 1) every ReLU block, residual or residual-free, is a continuous
piecewise-linear function of one variable, and so is every stack. This
module holds that function (:class:`LineMap`: breakpoints, slopes, one
value, all exact) and the two facts about it the line theorems use:

- :func:`line_map` turns a block or a stack on R into its function;
- :func:`block_values` is Lemma 9.5: a function with k breakpoints is a
  residual-free block of width n (biases allowed) iff k < n (k = 0 needs
  n ≥ 2 unless the function is constant), or k = n and some set P of its
  breakpoints has jumps summing to its slope at +∞ (:func:`balanced`). It
  returns the block's weights, or None.

>>> from fractions import Fraction as Q
>>> phi = LineMap.of((Q(0), Q(1)), (Q(1), Q(2), Q(1)), Q(0))
>>> phi(Q(3)), phi(Q(-1))
(Fraction(4, 1), Fraction(-1, 1))
>>> balanced(phi.jumps(), phi.slopes[-1]) is None   # jumps 1, −1; slope at +∞ is 1
False
"""

from __future__ import annotations

import bisect
import functools
import itertools
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from indexset.model.instance import exact_value


@dataclass(frozen=True)
class LineMap:
    """A continuous piecewise-linear map R → R with exact rational data.

    Attributes
    ----------
    breakpoints : tuple of Fraction
        Strictly increasing; the slope changes at each one.
    slopes : tuple of Fraction
        ``len(breakpoints) + 1`` slopes, left to right.
    anchor : Fraction
        The value at ``breakpoints[0]`` (at 0 when there is none).
    """

    breakpoints: tuple
    slopes: tuple
    anchor: Fraction

    @classmethod
    def of(cls, breakpoints, slopes, anchor) -> LineMap:
        """The map with these pieces, breakpoints where the slope does not change dropped."""
        points, kept = [], [Fraction(slopes[0])]
        for t, s in zip(breakpoints, slopes[1:]):
            if Fraction(s) != kept[-1]:
                points.append(Fraction(t))
                kept.append(Fraction(s))
        first = LineMap(tuple(breakpoints), tuple(Fraction(s) for s in slopes), Fraction(anchor))
        start = points[0] if points else Fraction(0)
        return cls(tuple(points), tuple(kept), first(start))

    @classmethod
    def sampled(cls, candidates, fn) -> LineMap:
        """The map ``fn`` known to be linear between the sorted rationals ``candidates`` and beyond them."""
        xs = sorted(set(Fraction(x) for x in candidates))
        if not xs:
            return cls.of((), (fn(Fraction(1)) - fn(Fraction(0)),), fn(Fraction(0)))
        values = [fn(x) for x in xs]
        left = values[0] - fn(xs[0] - 1)
        right = fn(xs[-1] + 1) - values[-1]
        inner = [(b - a) / (y - x) for x, y, a, b in zip(xs, xs[1:], values, values[1:])]
        return cls.of(xs, [left, *inner, right], values[0])

    def __call__(self, x) -> Fraction:
        x = Fraction(x)
        if not self.breakpoints:
            return self.anchor + self.slopes[0] * x
        values = self._values
        j = bisect.bisect_right(self.breakpoints, x) - 1
        if j < 0:
            return values[0] + self.slopes[0] * (x - self.breakpoints[0])
        return values[j] + self.slopes[j + 1] * (x - self.breakpoints[j])

    def values(self) -> list:
        """The values at the breakpoints."""
        return list(self._values)

    @functools.cached_property
    def _values(self) -> tuple:
        # Computed once: every evaluation needs them, and compositions evaluate many times.
        out = [self.anchor]
        for t, u, s in zip(self.breakpoints, self.breakpoints[1:], self.slopes[1:]):
            out.append(out[-1] + s * (u - t))
        return tuple(out)

    def slopes_at(self, x) -> tuple:
        """The slopes just left and just right of x (equal unless x is a breakpoint)."""
        x = Fraction(x)
        j = bisect.bisect_left(self.breakpoints, x)
        if j < len(self.breakpoints) and self.breakpoints[j] == x:
            return self.slopes[j], self.slopes[j + 1]
        return self.slopes[j], self.slopes[j]

    def jumps(self) -> tuple:
        """The slope change at each breakpoint (right slope minus left slope)."""
        return tuple(b - a for a, b in zip(self.slopes, self.slopes[1:]))

    def strictly_monotone(self) -> bool:
        """Every slope nonzero and of one sign (the map is a homeomorphism of R)."""
        return all(s > 0 for s in self.slopes) or all(s < 0 for s in self.slopes)

    def ratios(self) -> tuple:
        """The slope ratio right/left at each breakpoint (nonzero slopes)."""
        return tuple(b / a for a, b in zip(self.slopes, self.slopes[1:]))

    def after(self, inner: LineMap) -> LineMap:
        """The composition ``self ∘ inner``."""
        candidates = list(inner.breakpoints)
        values = inner.values()
        for t in self.breakpoints:
            candidates.extend(preimages(inner, t, values))
        return LineMap.sampled(candidates, lambda x: self(inner(x)))

    def inverse(self) -> LineMap:
        """The inverse of a strictly monotone map."""
        if not self.strictly_monotone():
            raise ValueError("only a strictly monotone map has an inverse")
        if not self.breakpoints:
            return LineMap.of((), (1 / self.slopes[0],), -self.anchor / self.slopes[0])
        values, slopes, points = self.values(), [1 / s for s in self.slopes], list(self.breakpoints)
        if self.slopes[0] < 0:
            values, slopes, points = values[::-1], slopes[::-1], points[::-1]
        return LineMap.of(values, slopes, points[0])


def preimages(inner: LineMap, t: Fraction, values: list | None = None) -> list:
    """Points x with inner(x) = t, one per piece where inner is not constant (ends included)."""
    values = inner.values() if values is None else values
    out = []
    points = inner.breakpoints
    if not points:
        return [(t - inner.anchor) / inner.slopes[0]] if inner.slopes[0] else []
    for j, s in enumerate(inner.slopes):
        if s == 0:
            continue
        origin, value = (points[0], values[0]) if j == 0 else (points[j - 1], values[j - 1])
        x = origin + (t - value) / s
        if (j == 0 or x >= points[j - 1]) and (j == len(points) or x <= points[j]):
            out.append(x)
    return out


def half_line(phi: LineMap) -> LineMap:
    """φ on [0, ∞), continued linearly below 0 with its slope just right of 0 (no breakpoint at 0 or before)."""
    kept = [t for t in phi.breakpoints if t > 0]
    start = phi.slopes_at(Fraction(0))[1]
    return LineMap.sampled(kept, lambda y: phi(y) if y >= 0 else phi(Fraction(0)) + start * y)


def block_map(block) -> LineMap:
    """The function of one ReLU block on R (residual or residual-free), exactly."""
    if block.d != 1:
        raise ValueError(f"a block on R^{block.d} is not a map of the line")
    up, b_up = exact_value(block, "W_up")[:, 0], exact_value(block, "b_up")
    down, b_down = exact_value(block, "W_down")[0], exact_value(block, "b_down")[0]
    skip = Fraction(0) if block.residual_free else exact_value(block, "skip")[0, 0]
    kinks = [-b / u for u, b in zip(up, b_up) if u != 0]

    def value(x):
        return skip * x + sum(w * max(u * x + b, 0) for u, b, w in zip(up, b_up, down)) + b_down

    return LineMap.sampled(kinks, value)


def line_map(model) -> LineMap:
    """The function of a ReLU block or stack on R, exactly."""
    blocks = getattr(model, "blocks", [model])
    result = block_map(blocks[0])
    for block in blocks[1:]:
        result = block_map(block).after(result)
    return result


def balanced(jumps, right_slope) -> tuple | None:
    """A set P of breakpoints (a 0/1 tuple) whose jumps sum to ``right_slope``, or None (meet in the middle).

    This is the subset condition of a residual-free block of width k with k
    breakpoints on R: the units oriented to the right are P (Lemma 9.5).
    """
    jumps = [Fraction(j) for j in jumps]
    half = len(jumps) // 2
    left, right = jumps[:half], jumps[half:]
    sums = {}
    for choice in itertools.product((0, 1), repeat=len(right)):
        sums.setdefault(sum((j for j, c in zip(right, choice) if c), Fraction(0)), choice)
    for choice in itertools.product((0, 1), repeat=len(left)):
        rest = Fraction(right_slope) - sum((j for j, c in zip(left, choice) if c), Fraction(0))
        if rest in sums:
            return choice + sums[rest]
    return None


def block_values(phi: LineMap, n: int) -> dict | None:
    """Weights of a residual-free ReLU block of width n on R equal to ``phi``, or None if there is none (Lemma 9.5).

    Returns
    -------
    dict or None
        ``W_up`` (n, 1), ``b_up`` (n,), ``W_down`` (1, n), ``b_down`` (1,)
        as object arrays of Fractions. A unit oriented to the right is
        ``δ·relu(y − t)``, one oriented to the left ``δ·relu(t − y)``, δ the
        jump at t; unused units are zero.
    """
    k = len(phi.breakpoints)
    units = []  # (orientation ±1, breakpoint, jump)
    if k == 0:
        slope = phi.slopes[0]
        if slope != 0:
            if n < 2:
                return None
            units = [(1, Fraction(0), slope), (-1, Fraction(0), -slope)]
    elif k < n:
        # All to the right, and the first breakpoint split so that the slope at +∞ comes out right.
        jumps = phi.jumps()
        share = phi.slopes[-1] - sum(jumps[1:], Fraction(0))
        units = [(1, phi.breakpoints[0], share), (-1, phi.breakpoints[0], jumps[0] - share)]
        units += [(1, t, j) for t, j in zip(phi.breakpoints[1:], jumps[1:])]
    elif k == n:
        choice = balanced(phi.jumps(), phi.slopes[-1])
        if choice is None:
            return None
        units = [(1 if c else -1, t, j) for c, t, j in zip(choice, phi.breakpoints, phi.jumps())]
    else:
        return None
    up, b_up, down = (np.array([Fraction(0)] * n, dtype=object) for _ in range(3))
    for i, (side, t, jump) in enumerate(units):
        up[i], b_up[i], down[i] = Fraction(side), -side * t, jump
    at_zero = sum((w * max(u * 0 + b, 0) for u, b, w in zip(up, b_up, down)), Fraction(0))
    return {"W_up": up.reshape(n, 1), "b_up": b_up, "W_down": down.reshape(1, n),
            "b_down": np.array([phi(0) - at_zero], dtype=object)}


def bias_free_values(phi: LineMap, n: int) -> dict | None:
    """Weights of a bias-free ReLU block of width n on R equal to ``phi`` (no bias inside σ), or None if there is none.

    Such a block is ``α·relu(y) + β·relu(−y) + c``: for n ≥ 2 exactly the maps
    with no breakpoint or one at 0 (MATH.md §9.5, the bias-free class on R);
    for n = 1 also constant on a half-line.
    """
    if set(phi.breakpoints) - {Fraction(0)}:
        return None
    left, right = phi.slopes[0], phi.slopes[-1]
    if n < 2 and left != 0 and right != 0:
        return None
    units = [(Fraction(1), right), (Fraction(-1), -left)] if n >= 2 else [(Fraction(1), right) if left == 0 else (Fraction(-1), -left)]
    up, down = (np.array([Fraction(0)] * n, dtype=object) for _ in range(2))
    for i, (u, w) in enumerate(units):
        up[i], down[i] = u, w
    return {"W_up": up.reshape(n, 1), "b_up": np.array([Fraction(0)] * n, dtype=object), "W_down": down.reshape(1, n),
            "b_down": np.array([phi(0)], dtype=object)}


def lifted_width(n: int, d: int) -> int:
    """Width of the line stack inside a lifted stack of width n on R^d: two units go to each coordinate but x_1."""
    return n - 2 * (d - 1)


def lift(values: dict, d: int, residual: bool) -> dict:
    """A block on R (exact weights), acting on x_1 of R^d, with two more units per other coordinate (MATH.md §9.5, Proposition 9.10).

    Residual (f): the pairs w·σ(x_1), −w·σ(−x_1) feed the first output
    (w·x_1 each), the skip's first entry takes it back, the other entries are 1;
    every unit row is a multiple of e_1. Residual-free (the witness): the
    pairs σ(x_k), −σ(−x_k) write x_k to output k.
    """
    if d == 1:
        return values
    zero, one = Fraction(0), Fraction(1)
    width = len(values["b_up"])
    extra = lifted_width(width, 1) - lifted_width(width, d)
    # The pairs' weight: 1, or −1 where 1 would make the skip singular.
    weight = -one if residual and values["skip"][0, 0] == d - 1 else one
    up = np.full((width + extra, d), zero, dtype=object)
    down = np.full((d, width + extra), zero, dtype=object)
    up[:width, 0], down[0, :width] = values["W_up"][:, 0], values["W_down"][0]
    for k in range(1, d):
        plus, minus = width + 2 * (k - 1), width + 2 * (k - 1) + 1
        axis, target = (0, 0) if residual else (k, k)
        up[plus, axis], up[minus, axis] = one, -one
        down[target, plus], down[target, minus] = weight, -weight
    out = {"W_up": up, "b_up": np.concatenate([values["b_up"], np.full(extra, zero, dtype=object)]), "W_down": down,
           "b_down": np.concatenate([values["b_down"], np.full(d - 1, zero, dtype=object)])}
    if residual:
        out["skip"] = np.diag([values["skip"][0, 0] - (d - 1) * weight, *[one] * (d - 1)]).astype(object)
    return out
