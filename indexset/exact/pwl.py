"""Exact equality of continuous piecewise-linear maps: ReLU and leaky-ReLU blocks and stacks.

Two models (blocks or stacks, residual or residual-free, exact rational
weights) are compared on all of R^d by enumerating the linear regions of
their common refinement (MATH.md §9.1):

- A *region* is the closed polyhedron of one activation pattern: a sign
  for every unit of every block of both models, where the pre-activation
  of a unit is the affine function it is under the signs of the units
  before it. On a region both models are affine, and those affine maps are
  computed exactly.
- Regions are visited breadth first from a seeded random point. A region
  is entered only through an exact rational point strictly inside it, so
  every visited region is full-dimensional. From a region, every facet is
  tested exactly (its relative interior is non-empty iff a strict linear
  system in d − 1 variables has a solution: Fourier–Motzkin in integers,
  which is exact) and crossed at a rational point of it; the pattern on
  the other side is read off by a lexicographic forward pass
  (value, directional derivative, …), which is exact too.
- The visited regions cover R^d (proof in MATH.md §9.1), so the models are
  equal iff their affine maps agree on every visited region. A difference
  is returned as an exact rational point where the exact forward passes
  (:func:`indexset.model.forward.forward_exact`) differ.

Everything is exact: python-flint rationals for the forward maps, Python
integers for the geometry. The method works in any dimension; the cost of
a facet test grows fast with d (Fourier–Motzkin in d − 1 variables), and
d ≤ 3 is what it is meant and tested for.
"""

from __future__ import annotations

import math
import threading
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from fractions import Fraction

import flint
import numpy as np

from indexset.budget import Budget
from indexset.errors import InputError
from indexset.exact.intervals import OpenInterval
from indexset.model.forward import blocks as model_blocks
from indexset.model.forward import forward_exact, random_points
from indexset.model.instance import exact_value
from indexset.rational import as_fraction, parse_fraction

DEFAULT_PROBES = 32
"""Random rational points compared exactly before any region is enumerated."""


# ====================================================================== models
@dataclass(frozen=True)
class _Block:
    """One block as python-flint matrices: ``x ↦ A x + W σ(U x + b) + e`` (A = 0 when residual-free)."""

    up: flint.fmpq_mat
    b_up: flint.fmpq_mat
    down: flint.fmpq_mat
    b_down: flint.fmpq_mat
    skip: flint.fmpq_mat | None
    positive: flint.fmpq
    negative: flint.fmpq
    n: int


def slope(model, name: str = "model") -> Fraction:
    """The parameter α of σ(z) = max(z, αz) for a ReLU (α = 0) or leaky-ReLU model.

    Raises
    ------
    InputError
        Any other activation (named by ``name``).
    """
    act = model_blocks(model)[0].act
    if act.name == "relu":
        return Fraction(0)
    if act.name.startswith("leaky_relu:"):
        return parse_fraction(act.name.split(":", 1)[1], name)
    raise InputError(name, f"activation {act.name} is not piecewise linear: exact region enumeration needs relu or leaky_relu:ALPHA")


def slopes(model, name: str = "model") -> tuple[Fraction, Fraction]:
    """The slopes of σ(z) = max(z, αz) for z > 0 and z < 0: (1, α) when α ≤ 1, (α, 1) when α > 1."""
    alpha = slope(model, name)
    return (Fraction(1), alpha) if alpha <= 1 else (alpha, Fraction(1))


def _fmpq_matrix(values) -> flint.fmpq_mat:
    values = np.asarray(values, dtype=object)
    if values.ndim == 1:
        values = values.reshape(-1, 1)
    rows, cols = values.shape
    return flint.fmpq_mat(rows, cols, [flint.fmpq(v.numerator, v.denominator) for v in values.ravel()])


def _net(model, name: str) -> list:
    if not hasattr(model, "blocks") and not hasattr(model, "W_up"):
        raise InputError(name, f"expected an Instance or a Stack, got {type(model).__name__}")
    positive, negative = (flint.fmpq(v.numerator, v.denominator) for v in slopes(model, name))
    out = []
    for block in model_blocks(model):
        if block.act.gated:
            raise InputError(name, f"activation {block.act.name} is gated: not a ReLU-like block")
        out.append(_Block(
            up=_fmpq_matrix(exact_value(block, "W_up")), b_up=_fmpq_matrix(exact_value(block, "b_up")),
            down=_fmpq_matrix(exact_value(block, "W_down")), b_down=_fmpq_matrix(exact_value(block, "b_down")),
            skip=None if block.residual_free else _fmpq_matrix(exact_value(block, "skip")), positive=positive,
            negative=negative, n=block.n,
        ))
    return out


# ====================================================================== numbers
def _fmpq(value) -> flint.fmpq:
    value = as_fraction(value)
    return flint.fmpq(value.numerator, value.denominator)


def _primitive(values: list[int]) -> tuple:
    """Divide integers by their gcd (sign kept): the same inequality, canonical."""
    g = 0
    for v in values:
        g = math.gcd(g, v)
    return tuple(values) if g <= 1 else tuple(v // g for v in values)


def strict_point(rows, k: int) -> list[Fraction] | None:
    """A rational y in Q^k with ``a·y + b > 0`` for every integer row ``(a_1, …, a_k, b)``, or None.

    Fourier–Motzkin elimination: a strict system has a solution iff the
    system without its last variable, with every (lower, upper) pair of
    bounds on that variable combined, has one; the combinations are
    integer and exact, so None is a proof that no solution exists.

    Parameters
    ----------
    rows : iterable of sequences of int
        Each of length k + 1.
    k : int
        Number of variables.
    """
    kept = set()
    for row in rows:
        row = _primitive(list(row))
        if not any(row[:k]):
            if row[k] <= 0:
                return None
            continue
        kept.add(row)
    if k == 0 or not kept:
        return [Fraction(0)] * k
    if k == 1:
        return _strict_point_1d(kept)
    if k == 2:
        return _strict_point_2d(kept)
    lower = [row for row in kept if row[k - 1] > 0]
    upper = [row for row in kept if row[k - 1] < 0]
    rest = [row[: k - 1] + row[k:] for row in kept if row[k - 1] == 0]
    for lo in lower:
        for up in upper:
            cl, cu = lo[k - 1], -up[k - 1]
            rest.append(tuple(cu * a + cl * b for a, b in zip(lo[: k - 1] + lo[k:], up[: k - 1] + up[k:])))
    sub = strict_point(rest, k - 1)
    if sub is None:
        return None
    last = OpenInterval()
    for row in kept:
        c = row[k - 1]
        if c == 0:
            continue
        value = sum(Fraction(a) * y for a, y in zip(row[: k - 1], sub)) + row[k]
        last.require(c * value.denominator, value.numerator)  # c·y + value > 0
    return sub + [last.point()]


def _strict_point_1d(rows) -> list[Fraction] | None:
    """``a·y + b > 0`` for integer pairs (a ≠ 0): one open interval."""
    interval = OpenInterval()
    for a, b in rows:
        interval.require(a, b)
    return None if interval.empty else [interval.point()]


def _strict_point_2d(rows) -> list[Fraction] | None:
    """:func:`strict_point` for two variables: one Fourier–Motzkin step in integers, then the 1-D case."""
    lower = [row for row in rows if row[1] > 0]
    upper = [row for row in rows if row[1] < 0]
    line = [(a, c) for a, b, c in rows if b == 0]
    for al, bl, cl in lower:
        for au, bu, cu in upper:
            # (−b_u)·lower + b_l·upper has no y₂ term.
            a, c = -bu * al + bl * au, -bu * cl + bl * cu
            if a == 0:
                if c <= 0:
                    return None
            else:
                line.append((a, c))
    first = _strict_point_1d(line)
    if first is None:
        return None
    y1 = first[0]
    p, q = y1.numerator, y1.denominator
    second = OpenInterval()
    for a, b, c in lower + upper:
        second.require(b * q, a * p + c * q)  # q·(a·y₁ + b·y₂ + c) > 0
    return [y1, second.point()]


# ====================================================================== points
def _homogeneous(point) -> tuple[tuple, int]:
    """A rational point as integers over one positive denominator."""
    point = [as_fraction(v) for v in point]
    den = 1
    for v in point:
        den = math.lcm(den, v.denominator)
    return tuple(int(v * den) for v in point), den


def _sign_at(form: tuple, point_h: tuple[tuple, int]) -> int:
    numerators, den = point_h
    value = sum(a * x for a, x in zip(form, numerators)) + form[-1] * den
    return (value > 0) - (value < 0)


# ====================================================================== regions
@dataclass(frozen=True)
class Constraint:
    """One unit's pre-activation on a region, oriented to be ≥ 0 there.

    Attributes
    ----------
    unit : tuple of int
        (model, block, unit) indices.
    form : tuple of int
        Primitive integers ``(a_1, …, a_d, b)``: the region satisfies
        ``a·x + b ≥ 0`` (a positive multiple of the unit's signed pre-activation).
    """

    unit: tuple
    form: tuple


@dataclass
class Region:
    """A full-dimensional region of the common refinement.

    Attributes
    ----------
    pattern : tuple
        Per model, per block, a tuple of signs (+1 active side, −1 other side;
        +1 for a unit whose pre-activation is identically 0 on the region).
    point : tuple of Fraction
        A point strictly inside the region (every constraint > 0).
    constraints : tuple of Constraint
        Every unit whose pre-activation is not identically zero or constant there.
    maps : tuple
        Per model, its affine map ``x ↦ M x + c`` on the region as python-flint
        matrices ``(M, c)`` (d × d and d × 1).
    """

    pattern: tuple
    point: tuple
    constraints: tuple
    maps: tuple

    def jacobian(self, model: int = 0) -> list[list[Fraction]]:
        """The linear part of model ``model`` on this region, as Fractions."""
        matrix = self.maps[model][0]
        return [[as_fraction(matrix[i, j]) for j in range(matrix.ncols())] for i in range(matrix.nrows())]

    def offset(self, model: int = 0) -> list[Fraction]:
        """The constant part of model ``model`` on this region, as Fractions."""
        vector = self.maps[model][1]
        return [as_fraction(vector[i, 0]) for i in range(vector.nrows())]

    def contains(self, point) -> bool:
        """Whether a rational point lies in the (closed) region."""
        point_h = _homogeneous(point)
        return all(_sign_at(c.form, point_h) >= 0 for c in self.constraints)

    def tight(self, point) -> list[Constraint]:
        """The constraints that vanish at a rational point of the region."""
        point_h = _homogeneous(point)
        return [c for c in self.constraints if _sign_at(c.form, point_h) == 0]


def _lex_sign(values: list) -> int:
    for value in values:
        if value != 0:
            return 1 if value > 0 else -1
    return 0


def _trace(nets: list, point: list, directions: list) -> tuple[tuple, list, tuple]:
    """Pattern, constraints and affine maps of the region containing ``point + ε v_1 + ε² v_2 + …`` (ε → 0+).

    With the coordinate axes among the directions the region is
    full-dimensional. A unit whose pre-activation is identically zero there
    gets the sign +1 (either sign gives the same map). Returns (pattern,
    constraints, maps).
    """
    d = len(point)
    width = 1 + len(directions)
    probe = flint.fmpq_mat(d, width, [v for row in zip(point, *directions) for v in row])
    pattern, constraints, maps = [], [], []
    for m, net in enumerate(nets):
        M = flint.fmpq_mat(d, d, [1 if i == j else 0 for i in range(d) for j in range(d)])
        c = flint.fmpq_mat(d, 1)
        model_pattern = []
        for layer, block in enumerate(net):
            a = block.up * M
            b = block.up * c + block.b_up
            values = (a * probe).entries()
            coefficients = a.entries()
            offsets = b.entries()
            forms, _ = _augment(a, b).numer_denom()
            integers = [int(v) for v in forms.entries()]
            signs = []
            scaled = []
            for i in range(block.n):
                row = values[i * width:(i + 1) * width]
                row[0] += offsets[i]
                sign = _lex_sign(row)
                zero_form = sign == 0
                sign = 1 if zero_form else sign
                signs.append(sign)
                factor = block.positive if sign > 0 else block.negative
                scaled.extend(factor * v for v in coefficients[i * d:(i + 1) * d])
                scaled.append(factor * offsets[i])
                if not zero_form:
                    form = _primitive(integers[i * (d + 1):(i + 1) * (d + 1)])
                    if any(form[:d]):
                        constraints.append(Constraint((m, layer, i), tuple(sign * v for v in form)))
            hidden = block.down * flint.fmpq_mat(block.n, d + 1, scaled)
            entries = hidden.entries()
            linear = flint.fmpq_mat(d, d, [entries[i * (d + 1) + j] for i in range(d) for j in range(d)])
            shift = flint.fmpq_mat(d, 1, [entries[i * (d + 1) + d] for i in range(d)]) + block.b_down
            if block.skip is not None:
                linear += block.skip * M
                shift += block.skip * c
            M, c = linear, shift
            model_pattern.append(tuple(signs))
        pattern.append(tuple(model_pattern))
        maps.append((M, c))
    return tuple(pattern), constraints, tuple(maps)


def _augment(a: flint.fmpq_mat, b: flint.fmpq_mat) -> flint.fmpq_mat:
    """``[a | b]``: the pre-activation forms of a layer as rows."""
    rows, cols = a.nrows(), a.ncols()
    entries, offsets = a.entries(), b.entries()
    return flint.fmpq_mat(rows, cols + 1, [v for i in range(rows) for v in (*entries[i * cols:(i + 1) * cols], offsets[i])])


def _axes(d: int) -> list:
    return [[flint.fmpq(1 if i == j else 0) for i in range(d)] for j in range(d)]


def _interior(constraints: list, point: list, directions: list) -> tuple:
    """A rational point ``point + Σ ε^j v_j`` strictly inside the region (ε halved until it is)."""
    base = [as_fraction(v) for v in point]
    steps = [[as_fraction(v) for v in direction] for direction in directions]
    epsilon = Fraction(1)
    for _ in range(4096):
        candidate = list(base)
        power = Fraction(1)
        for step in steps:
            power *= epsilon
            candidate = [x + power * v for x, v in zip(candidate, step)]
        point_h = _homogeneous(candidate)
        if all(_sign_at(c.form, point_h) > 0 for c in constraints):
            return tuple(candidate)
        epsilon /= 2
    raise AssertionError("bug: no interior point along a lexicographically positive direction")


def _region_at(nets: list, point, directions: list, seen: set | None = None) -> Region | None:
    """The full-dimensional region containing ``point + ε v_1 + …``, with an interior point checked exactly.

    None when its pattern is in ``seen`` (nothing more is computed then).
    """
    d = len(point)
    point = [_fmpq(v) for v in point]
    directions = [[_fmpq(v) for v in direction] for direction in directions] + _axes(d)
    pattern, constraints, maps = _trace(nets, point, directions)
    if seen is not None and pattern in seen:
        return None
    inside = _interior(constraints, point, directions)
    again, _, _ = _trace(nets, [_fmpq(v) for v in inside], _axes(d))
    if again != pattern:
        raise AssertionError("bug: the interior point of a region has another activation pattern")
    return Region(pattern, inside, tuple(constraints), maps)


def _facet_point(constraints: list, index: int) -> list[Fraction] | None:
    """A rational point of the relative interior of the facet of constraint ``index``, or None (exact).

    The facet is ``{a·x + b = 0}`` with every constraint not proportional to
    it strictly positive; None means that set is empty, i.e. the facet has
    dimension < d − 1.
    """
    form = constraints[index].form
    d = len(form) - 1
    if d == 2:
        return _facet_point_plane(constraints, form)
    pivot = max(range(d), key=lambda j: abs(form[j]))
    p = form[pivot]
    sign = 1 if p > 0 else -1
    rows = []
    for other in constraints:
        g = other.form
        if g == form:
            continue
        # |p|·g − sign·g[pivot]·form: the same sign as g on {form = 0}, without x_pivot.
        combined = [abs(p) * gi - sign * g[pivot] * fi for gi, fi in zip(g, form)]
        rows.append(combined[:pivot] + combined[pivot + 1:])
    solution = strict_point(rows, d - 1)
    if solution is None:
        return None
    rest = sum(Fraction(form[j]) * y for j, y in zip([j for j in range(d) if j != pivot], solution)) + form[d]
    x_pivot = -Fraction(rest) / p  # rest is a plain int when d = 1: int / int would be a float
    return solution[:pivot] + [x_pivot] + solution[pivot:]


def _facet_point_plane(constraints: list, form: tuple) -> list[Fraction] | None:
    """:func:`_facet_point` for d = 2: the line ``a x + b y + e = 0`` as ``x(t) = x0 + t·(−b, a)``, bounds on t in integers."""
    a, b, e = form
    # x0 = (−e·a, −e·b)/(a² + b²) lies on the line; with D = a² + b², g(x(t)) = (g·(−e a, −e b) + g_e D)/D + t·(g_y a − g_x b).
    D = a * a + b * b
    x0 = (-e * a, -e * b)
    interval = OpenInterval()  # of t
    for other in constraints:
        g = other.form
        if g == form:
            continue
        constant = g[0] * x0[0] + g[1] * x0[1] + g[2] * D
        rate = (g[1] * a - g[0] * b) * D
        interval.require(rate, constant)  # constant + t·rate > 0
        if interval.empty:
            return None
    t = interval.point()
    return [Fraction(x0[0], D) - t * b, Fraction(x0[1], D) + t * a]


@dataclass
class Enumeration:
    """The regions of a common refinement, visited breadth first.

    Attributes
    ----------
    regions : list of Region
        Every visited region (empty when ``keep`` was False).
    count : int
        Number of regions visited.
    complete : bool
        Every region was visited: the regions cover R^d (MATH.md §9.1).
    stopped : str or None
        Why the enumeration ended early (time limit, stop request,
        ``max_regions``, or the ``visit`` callback).
    """

    regions: list = field(default_factory=list)
    count: int = 0
    complete: bool = False
    stopped: str | None = None


def enumerate_regions(*models, names=None, seed: int = 0, time_limit: float | None = None, stop: threading.Event | None = None,
                      max_regions: int | None = None, keep: bool = True, visit: Callable | None = None) -> Enumeration:
    """Every full-dimensional region of the common refinement of ReLU / leaky-ReLU models.

    Parameters
    ----------
    *models : Instance or Stack
        Blocks or stacks on the same R^d (any widths and depths, residual
        or residual-free, ReLU or leaky ReLU).
    names : sequence of str, optional
        Parameter names for error messages (default ``model0``, ``model1``, …).
    seed : int
        Seed of the starting point (the set of regions does not depend on it).
    time_limit : float, optional
        Seconds; past it the enumeration stops and is marked incomplete.
    stop : threading.Event, optional
        Set it to stop early (incomplete).
    max_regions : int, optional
        Stop (incomplete) after this many regions.
    keep : bool
        Keep the regions in the result (False: count only).
    visit : callable, optional
        Called with each new region; returning False stops the enumeration
        (``stopped = "visit"``).

    Returns
    -------
    Enumeration
    """
    names = list(names) if names is not None else [f"model{i}" for i in range(len(models))]
    if not models:
        raise InputError("models", "give at least one model")
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise InputError("seed", f"must be an integer ≥ 0, got {seed!r}")
    if max_regions is not None and max_regions < 1:
        raise InputError("max_regions", f"must be ≥ 1, got {max_regions}")
    nets = [_net(model, name) for model, name in zip(models, names)]
    d = model_blocks(models[0])[0].d
    for model, name in zip(models, names):
        if model_blocks(model)[0].d != d:
            raise InputError(name, f"acts on R^{model_blocks(model)[0].d}, the first model on R^{d}")
    budget = Budget.of(time_limit, stop)
    rng = np.random.default_rng(seed)
    start = [Fraction(int(a), int(b)) for a, b in zip(rng.integers(-9, 10, size=d), rng.integers(1, 6, size=d))]
    first = _region_at(nets, start, [])
    seen = {first.pattern}
    queue = deque([first])
    result = Enumeration()
    while queue:
        halted = budget.halt_reason()
        if halted is not None:
            result.stopped = halted
            return result
        if max_regions is not None and result.count >= max_regions:
            result.stopped = f"max_regions = {max_regions} reached"
            return result
        region = queue.popleft()
        result.count += 1
        if keep:
            result.regions.append(region)
        if visit is not None and visit(region) is False:
            result.stopped = "visit"
            return result
        tested = set()
        constraints = list(region.constraints)
        for index, constraint in enumerate(constraints):
            if constraint.form in tested:
                continue
            tested.add(constraint.form)
            q = _facet_point(constraints, index)
            if q is None:
                continue
            outward = [-v for v in constraint.form[:d]]
            neighbour = _region_at(nets, q, [outward], seen)
            if neighbour is not None:
                seen.add(neighbour.pattern)
                queue.append(neighbour)
    result.complete = True
    return result


# ====================================================================== equality
@dataclass
class Comparison:
    """Whether two models are the same function on R^d, and the evidence.

    Attributes
    ----------
    equal : bool or None
        True: equal everywhere (every region of the common refinement
        visited, the affine maps agree on each); False: a witness point
        differs; None: undecided (time limit or stop before the end).
    witness : list of Fraction or None
        A rational point x with f(x) ≠ g(x) (checked by the exact forward pass).
    f_value, g_value : list of Fraction or None
        f(x) and g(x) at the witness.
    regions : int
        Regions of the common refinement visited.
    complete : bool
        The enumeration visited every region.
    probes : int
        Random rational points compared before the enumeration.
    reason : str
        The argument, in words.
    """

    equal: bool | None
    witness: list | None = None
    f_value: list | None = None
    g_value: list | None = None
    regions: int = 0
    complete: bool = False
    probes: int = 0
    reason: str = ""

    def describe(self) -> str:
        """One line."""
        return self.reason

    def to_json(self) -> dict:
        """JSON-ready dict (rationals as strings)."""
        return {"equal": self.equal, "witness": _strings(self.witness), "f_value": _strings(self.f_value),
                "g_value": _strings(self.g_value), "regions": self.regions, "complete": self.complete,
                "probes": self.probes, "reason": self.reason}


def _strings(values) -> list | None:
    return None if values is None else [str(v) for v in values]


def compare(f, g, *, seed: int = 0, probes: int = DEFAULT_PROBES, time_limit: float | None = None,
            stop: threading.Event | None = None, max_regions: int | None = None) -> Comparison:
    """Decide exactly whether two ReLU / leaky-ReLU models are the same function on R^d.

    Parameters
    ----------
    f, g : Instance or Stack
        Blocks or stacks on the same R^d, exact rational weights.
    seed : int
        Seed of the probe points and of the starting point.
    probes : int
        Random rational points compared exactly first (0: none); a
        difference there is a witness without any enumeration.
    time_limit : float, optional
        Seconds; past it the answer is undecided (``equal = None``).
    stop : threading.Event, optional
        Set it to stop early (undecided).
    max_regions : int, optional
        Give up (undecided) after this many regions.

    Returns
    -------
    Comparison
        ``equal`` True only after the complete enumeration; False only
        with a witness x, f(x) ≠ g(x) in exact arithmetic.
    """
    if isinstance(probes, bool) or not isinstance(probes, (int, np.integer)) or probes < 0:
        raise InputError("probes", f"must be an integer ≥ 0, got {probes!r}")
    budget = Budget.of(time_limit, stop)
    _net(f, "f"), _net(g, "g")
    d = model_blocks(f)[0].d
    if model_blocks(g)[0].d != d:
        raise InputError("g", f"acts on R^{model_blocks(g)[0].d}, f on R^{d}")
    if probes:
        points = random_points(d, int(probes), seed)
        fs, gs = forward_exact(f, points), forward_exact(g, points)
        for x, fx, gx in zip(points, fs, gs):
            if fx != gx:
                return Comparison(False, list(x), fx, gx, 0, False, int(probes),
                                  f"f(x) ≠ g(x) at the probe point x = ({_text(x)}) (exact forward passes)")
    found = {}

    def visit(region: Region) -> bool:
        (Mf, cf), (Mg, cg) = region.maps
        if Mf == Mg and cf == cg:
            return True
        found["region"] = region
        return False

    enumeration = enumerate_regions(f, g, names=("f", "g"), seed=seed, time_limit=budget.remaining(), stop=stop,
                                    max_regions=max_regions, keep=False, visit=visit)
    if "region" in found:
        x = _differing_point(found["region"])
        fx, gx = forward_exact(f, [x])[0], forward_exact(g, [x])[0]
        if fx == gx:
            raise AssertionError("bug: the affine maps of a region differ but the forward passes agree at its witness point")
        return Comparison(False, x, fx, gx, enumeration.count, False, int(probes),
                          f"the affine maps differ on region {enumeration.count} of the common refinement: "
                          f"f(x) ≠ g(x) at x = ({_text(x)}) (exact forward passes)")
    if not enumeration.complete:
        return Comparison(None, regions=enumeration.count, probes=int(probes),
                          reason=f"undecided: {enumeration.stopped} after {enumeration.count} regions, the affine maps agree on each")
    return Comparison(True, regions=enumeration.count, complete=True, probes=int(probes),
                      reason=f"equal on all of R^{d}: the affine maps agree on every one of the {enumeration.count} regions "
                             "of the common refinement (complete enumeration, MATH.md §9.1)")


def equal(f, g, **options) -> bool | None:
    """Shorthand for ``compare(f, g, **options).equal`` (None when undecided)."""
    return compare(f, g, **options).equal


def _differing_point(region: Region) -> list[Fraction]:
    """A point strictly inside a region where the two affine maps differ."""
    (Mf, cf), (Mg, cg) = region.maps
    x = list(region.point)
    d = len(x)
    column = flint.fmpq_mat(d, 1, [_fmpq(v) for v in x])
    if Mf * column + cf != Mg * column + cg:
        return x
    # Equal at x, different linear parts: move along an axis the linear parts disagree on.
    axis = next(j for j in range(d) if any(Mf[i, j] != Mg[i, j] for i in range(d)))
    step = [Fraction(1 if i == axis else 0) for i in range(d)]
    return list(_interior(list(region.constraints), x, [step]))


def _text(point) -> str:
    return ", ".join(str(v) for v in point)
