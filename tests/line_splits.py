"""A naive reference for Theorem 9.6's splits with two extra incidences (MATH.md §9.5), independent of ``line_shares``.

Every incidence structure is enumerated point by point: each breakpoint of F
in a nonempty set of blocks, optionally one extra point (ratio 1 in F) in
two blocks, every block with exactly n points. A point in s blocks carries
s − 1 free ratios (raw ratios, not the engine's running products), the last
block taking what makes the product F's ratio. Each block's subset
conditions become polynomials in the free ratios (python-flint), and the
positive common zeros are found by gcds and resultants, their signs read
off numerically.
"""

from __future__ import annotations

import itertools
from fractions import Fraction

import flint

RATIONAL, IRRATIONAL = "rational", "irrational"
_CTX = flint.fmpq_mpoly_ctx.get(("x", "y"), "lex")
_X, _Y = _CTX.gens()
_ONE = _CTX.from_dict({(0, 0): 1})


def naive_two_extra(ratios, n: int, layers: int) -> str | None:
    """Whether some split with every block full and two extra incidences balances every block: RATIONAL, IRRATIONAL (only irrational ratios), or None."""
    m, found = len(ratios), None
    for gap in [None, *range(m + 1)]:
        points = list(ratios) if gap is None else [*ratios[:gap], Fraction(1), *ratios[gap:]]
        # The blocks are interchangeable (each condition is the block's own, the product symmetric): one multiset of n-sets.
        for blocks in itertools.combinations_with_replacement(itertools.combinations(range(len(points)), n), layers):
            owners = [tuple(b for b, members in enumerate(blocks) if j in members) for j in range(len(points))]
            if not all(owners) or (gap is not None and len(owners[gap]) != 2):
                continue
            verdict = _structure(points, owners, layers)
            if verdict == RATIONAL:
                return RATIONAL
            found = found or verdict
    return found


def _structure(points, owners, layers) -> str | None:
    variables = iter((_X, _Y))
    values = [dict() for _ in range(layers)]  # block -> point -> (numerator, denominator) polynomials
    for j, (r, owner) in enumerate(zip(points, owners)):
        free = [next(variables) for _ in owner[:-1]]
        for block, v in zip(owner, free):
            values[block][j] = (v, _ONE)
        rest = _ONE
        for v in free:
            rest = rest * v
        values[owner[-1]][j] = (_ONE * flint.fmpq(r.numerator, r.denominator), rest)
    choices = []
    for block in range(layers):
        forms = _block_polynomials([values[block][j] for j in sorted(values[block])])
        if any(f.is_zero() for f in forms):
            continue  # this block balances for every value of the free ratios
        forms = [f for f in forms if not f.is_constant()]
        if not forms:
            return None
        choices.append(forms)
    best = None
    for system in itertools.product(*choices):
        verdict = _common_positive_zero(list(system))
        if verdict == RATIONAL:
            return RATIONAL
        best = best or verdict
    return best


def _block_polynomials(ratios) -> list:
    """Σ_{j∈P} jump_j − last slope for every P, times the slopes' common (positive) denominator."""
    slopes = [(_ONE, _ONE)]
    for num, den in ratios:
        slopes.append((slopes[-1][0] * num, slopes[-1][1] * den))
    common = slopes[-1][1]  # every slope's denominator (a product of the ratios' so far) divides the last one's
    scaled = [num * (common / den) for num, den in slopes]
    out = {}
    for choice in itertools.product((0, 1), repeat=len(ratios)):
        total = -scaled[-1]
        for c, (left, right) in zip(choice, itertools.pairwise(scaled)):
            if c:
                total = total + right - left
        out[str(total)] = total  # equal polynomials kept once
    return list(out.values())


def _common_positive_zero(polys) -> str | None:
    g = polys[0]
    for p in polys[1:]:
        g = g.gcd(p)
    best = None
    if not g.is_constant():
        for factor, _ in g.factor()[1]:
            verdict = _curve_has_positive_point(factor)
            if verdict == RATIONAL:
                return RATIONAL
            best = best or verdict
        polys = [p / g for p in polys]
        if any(p.is_constant() for p in polys):
            return best
    return _isolated(polys) or best


def _curve_has_positive_point(h) -> str | None:
    dx, dy = h.degrees()
    if dy == 0 or dx == 0:
        roots = _positive_roots(_univariate(h, 0 if dy == 0 else 1))
        return None if not roots else (RATIONAL if any(isinstance(r, Fraction) for r in roots) else IRRATIONAL)
    # Degree 1 in y (the forms are bilinear): y = −h0(x)/h1(x); test x between the critical points.
    h0 = h.subs({"y": flint.fmpq(0)})
    h1 = h.subs({"y": flint.fmpq(1)}) - h0
    critical = sorted({0.0, *(float(r) if isinstance(r, Fraction) else r for p in (h0, h1) if not p.is_zero()
                              for r in _positive_roots(_univariate(p, 0)))})
    tests = [Fraction(a + b) / 2 for a, b in itertools.pairwise(critical)] + [Fraction(critical[-1]) + 1]
    for x in (Fraction(t).limit_denominator(10**6) for t in tests):
        q = flint.fmpq(x.numerator, x.denominator)
        num, den = h0.subs({"x": q}), h1.subs({"x": q})
        if not den.is_zero() and _value(num) * _value(den) < 0:
            return RATIONAL
    return None


def _isolated(polys) -> str | None:
    if len(polys) == 1:
        return None
    p, q = polys[0], polys[1]
    g = p.gcd(q)
    if not g.is_constant():
        return _common_positive_zero([g, *polys[2:]]) or _isolated([p / g, q / g, *polys[2:]])
    resultant = p.resultant(q, "y")
    if resultant.is_zero():
        return None
    best = None
    for x in _positive_roots(_univariate(resultant, 0)):
        xf = float(x)
        ys = _y_roots(polys, x)
        if ys is None:  # every polynomial vanishes on the whole line at x
            return RATIONAL if isinstance(x, Fraction) else IRRATIONAL
        for y in ys:
            if y > 0 and all(abs(_evaluate(r, xf, float(y))) < 1e-7 * (1 + _scale(r, xf, float(y))) for r in polys):
                if isinstance(x, Fraction) and isinstance(y, Fraction):
                    return RATIONAL
                best = IRRATIONAL
    return best


def _y_roots(polys, x) -> list | None:
    """The positive y of the first polynomial not identically zero at x (None: all are)."""
    for p in polys:
        if isinstance(x, Fraction):
            exact = p.subs({"x": flint.fmpq(x.numerator, x.denominator)})
            if not exact.is_zero():
                return [] if exact.is_constant() else _positive_roots(_univariate(exact, 1))
            continue
        h0 = p.subs({"y": flint.fmpq(0)})
        h1 = p.subs({"y": flint.fmpq(1)}) - h0
        a, b = _evaluate(h0, x, 0.0), _evaluate(h1, x, 0.0)
        if abs(a) > 1e-9 or abs(b) > 1e-9:
            return [] if abs(b) < 1e-12 else [-a / b]
    return None


def _univariate(p, index: int):
    coefficients = {}
    for monomial, c in zip(p.monoms(), p.coeffs()):
        coefficients[int(monomial[index])] = coefficients.get(int(monomial[index]), 0) + c
    return flint.fmpq_poly([coefficients.get(k, 0) for k in range(max(coefficients) + 1)])


def _positive_roots(poly) -> list:
    """Positive real roots: Fractions where rational, floats otherwise."""
    out = []
    for factor, _ in poly.factor()[1]:
        if factor.degree() == 1:
            c0, c1 = factor.coeffs()
            r = Fraction(int((-c0 / c1).p), int((-c0 / c1).q))
            if r > 0:
                out.append(r)
        else:
            for root, _ in factor.complex_roots():
                if abs(float(root.imag)) < 1e-12 and float(root.real) > 0:
                    out.append(float(root.real))
    return out


def _value(constant) -> Fraction:
    c = constant.coeffs()
    return Fraction(0) if not c else Fraction(int(c[0].p), int(c[0].q))


def _evaluate(p, x: float, y: float) -> float:
    return sum(float(c) * x ** int(i) * y ** int(j) for (i, j), c in zip(p.monoms(), p.coeffs()))


def _scale(p, x: float, y: float) -> float:
    return sum(abs(float(c) * x ** int(i) * y ** int(j)) for (i, j), c in zip(p.monoms(), p.coeffs()))
