"""Independent references for the solver tests (test_solve.py, test_solve_cli.py).

Nothing here imports the solver pipeline (system, reduce, prune, portfolio,
engines other than the brute force). Values are read from the raw instance
arrays as exact Fractions (a float64 is an exact dyadic rational), so the
checks do not even share the instance's exact-value cache.

- :func:`star_rows`: the d² equations of (★), ``c·W_down[a,:]∘W_up[:,b]·z = −A[a,b]``,
  as Fractions, one per entry (a, b);
- :func:`mitm_solutions`: every 0/1 solution by meet in the middle (n ≤ 40);
- :func:`brute_within`: every S with ``max |c·W_down[:,S]W_up[S,:] + A| ≤ τ``;
- :func:`check_certificate`: span and unique-solution certificates, checked
  with Python ints / Fractions on :func:`star_rows`;
- :func:`check_result`: one Result against a reference solution set.
"""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

import numpy as np

from indexset.exact.verify import verify
from indexset.theory.line import LineMap
from indexset.theory.nondegeneracy import find_degeneracy


# ------------------------------------------------------------ exact values
def fractions(instance, key):
    """A weight array as an object array of Fractions, from the raw array.

    Missing arrays get their defaults: identity skip, zero biases.
    """
    value = getattr(instance, key)
    d, n = instance.d, instance.n
    if value is None:
        if key == "skip":
            return np.array([[Fraction(int(i == j)) for j in range(d)] for i in range(d)], dtype=object)
        size = n if key == "b_up" else d
        return np.array([Fraction(0)] * size, dtype=object)
    array = np.asarray(value)
    out = np.empty(array.shape, dtype=object)
    for index, v in np.ndenumerate(array):
        exact = Fraction(float(v)) if array.dtype.kind == "f" else Fraction(int(v))
        out[index] = exact / instance.denominator
    return out


def star_rows(instance):
    """The equations of (★) as ``[((a, b), coefficients, rhs)]`` with Fractions.

    Row (a, b): ``Σ_i c·W_down[a,i]·W_up[i,b]·z_i = −A[a,b]``.
    """
    up = fractions(instance, "W_up")
    down = fractions(instance, "W_down")
    skip = fractions(instance, "skip")
    c = Fraction(instance.act.c)
    rows = []
    for a, b in itertools.product(range(instance.d), range(instance.d)):
        rows.append(((a, b), [c * down[a, i] * up[i, b] for i in range(instance.n)], -skip[a, b]))
    return rows


def primitive(coefficients, rhs):
    """One equation cleared to coprime integers (positive scale): (ints, int)."""
    values = list(coefficients) + [rhs]
    den = math.lcm(1, *(Fraction(v).denominator for v in values))
    ints = [int(Fraction(v) * den) for v in values]
    g = math.gcd(*ints) or 1
    ints = [v // g for v in ints]
    return ints[:-1], ints[-1]


def integer_system(instance):
    """(★) as an integer system ``P z = q`` (lists of Python ints), one row per (a, b)."""
    P, q = [], []
    for _, coefficients, rhs in star_rows(instance):
        row, value = primitive(coefficients, rhs)
        P.append(row)
        q.append(value)
    return P, q


def rank(rows):
    """Rank of a list of rows of Fractions (plain Gaussian elimination)."""
    matrix = [[Fraction(v) for v in row] for row in rows]
    r = 0
    columns = len(matrix[0]) if matrix else 0
    for col in range(columns):
        pivot = next((i for i in range(r, len(matrix)) if matrix[i][col] != 0), None)
        if pivot is None:
            continue
        matrix[r], matrix[pivot] = matrix[pivot], matrix[r]
        for i in range(len(matrix)):
            if i != r and matrix[i][col] != 0:
                factor = matrix[i][col] / matrix[r][col]
                matrix[i] = [x - factor * y for x, y in zip(matrix[i], matrix[r])]
        r += 1
    return r


# ------------------------------------------------------ reference solvers
def determinant(matrix) -> Fraction:
    """Determinant by Gaussian elimination over Fractions (independent of flint)."""
    m = [list(map(Fraction, row)) for row in matrix]
    size, det = len(m), Fraction(1)
    for col in range(size):
        pivot = next((r for r in range(col, size) if m[r][col] != 0), None)
        if pivot is None:
            return Fraction(0)
        if pivot != col:
            m[col], m[pivot] = m[pivot], m[col]
            det = -det
        det *= m[col][col]
        for r in range(col + 1, size):
            factor = m[r][col] / m[col][col]
            m[r] = [a - factor * b for a, b in zip(m[r], m[col])]
    return det


def mitm_solutions(instance, max_width=40):
    """Every S satisfying (★) exactly, by meet in the middle over 2^(n/2) halves (:func:`mitm_system_solutions`)."""
    assert instance.n <= max_width, f"meet in the middle is for n ≤ {max_width}"
    P, q = integer_system(instance)
    bound = max([abs(v) for row in P for v in row] + [abs(v) for v in q] + [1])  # before int64: Python ints may not fit
    assert bound * (instance.n + 2) < 2**62, "coefficients too large for the int64 meet in the middle"
    return mitm_system_solutions(np.array(P, dtype=np.int64).reshape(len(P), instance.n), np.array(q, dtype=np.int64), max_width)


def mitm_system_solutions(M, t, max_width=40):
    """Every 0/1 z with ``M z = t`` as its support, by meet in the middle over 2^(n/2) halves.

    Sums of the left and right halves are hashed with a random linear map
    mod 2^64 (collisions are filtered by an exact check).
    """
    M, t = np.asarray(M, dtype=np.int64), np.asarray(t, dtype=np.int64)
    n = M.shape[1]
    assert n <= max_width, f"meet in the middle is for n ≤ {max_width}"
    bound = int(max(np.abs(M).max(initial=0), np.abs(t).max(initial=0), 1))
    assert bound * (n + 2) < 2**62, "coefficients too large for the int64 meet in the middle"
    half = n // 2

    def sums(columns):
        out = np.zeros((1, M.shape[0]), dtype=np.int64)
        for j in columns:
            out = np.concatenate([out, out + M[:, j]])
        return out  # row index = bitmask over `columns`

    left, right = sums(range(half)), sums(range(half, n))
    weights = np.random.default_rng(12345).integers(1, 2**62, size=M.shape[0], dtype=np.int64).astype(np.uint64) | np.uint64(1)
    with np.errstate(over="ignore"):
        key_left = (left.astype(np.uint64) * weights).sum(axis=1, dtype=np.uint64)
        key_need = ((t[None, :] - right).astype(np.uint64) * weights).sum(axis=1, dtype=np.uint64)
    order = np.argsort(key_left, kind="stable")
    sorted_keys = key_left[order]
    lo = np.searchsorted(sorted_keys, key_need, side="left")
    hi = np.searchsorted(sorted_keys, key_need, side="right")
    solutions = []
    for r_mask in np.nonzero(hi > lo)[0]:
        for l_mask in order[lo[r_mask]:hi[r_mask]]:
            if np.array_equal(left[l_mask] + right[r_mask], t):
                support = [i for i in range(half) if int(l_mask) >> i & 1]
                support += [half + i for i in range(n - half) if int(r_mask) >> i & 1]
                solutions.append(support)
    return sorted(solutions)


def brute_within(instance, tol):
    """Every S with ``max |c·W_down[:,S]·W_up[S,:] + A| ≤ tol`` and |S| ≥ d (Fractions)."""
    tol = Fraction(tol)
    rows = star_rows(instance)
    found = []
    for mask in range(1 << instance.n):
        support = [i for i in range(instance.n) if mask >> i & 1]
        if len(support) < instance.d:
            continue
        # residual entry (a, b) = Σ_S c·down·up + A[a,b] = lhs − rhs
        if all(abs(sum(coefficients[i] for i in support) - rhs) <= tol for _, coefficients, rhs in rows):
            found.append(support)
    return sorted(found)


# ------------------------------------------------------------ certificates
def check_certificate(instance, certificate):
    """Check a certificate of "no S" independently; return its kind.

    ``span``: y over the rows labelled ``rows`` (entries (a, b) of (★), each
    cleared to coprime integers) with ``yᵀM = 0`` and ``yᵀt ≠ 0``, checked
    with Python ints; the independent rank test must agree (t outside the
    column space). ``unique_solution``: z* solves every equation exactly,
    rank M = n, and some entry of z* is not 0 or 1.
    """
    if not certificate:
        return None
    kind = certificate.get("kind")
    rows = star_rows(instance)
    if "zero_row" in certificate:
        # entry (a, b) of c·W_down[:,S]·W_up[S,:] is 0 for every S, but A[a, b] ≠ 0
        a, b = certificate["zero_row"]
        _, coefficients, rhs = rows[a * instance.d + b]
        assert all(v == 0 for v in coefficients) and rhs != 0
        return "zero_row"
    if kind == "span":
        by_label = {label: primitive(coefficients, rhs) for label, coefficients, rhs in rows}
        labels = [tuple(label) for label in certificate["rows"]]
        y = [int(v) for v in certificate["y"]]
        assert len(y) == len(labels)
        combination = [sum(y[r] * by_label[labels[r]][0][j] for r in range(len(y))) for j in range(instance.n)]
        assert combination == [0] * instance.n, f"yᵀM ≠ 0: {combination}"
        assert sum(y[r] * by_label[labels[r]][1] for r in range(len(y))) != 0, "yᵀt = 0"
        coefficient_rows = [coefficients for _, coefficients, _ in rows]
        augmented = [coefficients + [rhs] for _, coefficients, rhs in rows]
        assert rank(augmented) == rank(coefficient_rows) + 1
    elif kind == "unique_solution":
        z = [Fraction(v) for v in certificate["z_star"]]
        assert len(z) == instance.n
        for _, coefficients, rhs in rows:
            assert sum(a * b for a, b in zip(coefficients, z)) == rhs
        assert rank([coefficients for _, coefficients, _ in rows]) == instance.n
        assert any(v not in (0, 1) for v in z)
    return kind


# ---------------------------------------------------------------- results
def check_result(instance, result, reference, *, find_all, tol=None, complete=True):
    """Check one Result against the reference list of every S.

    ``complete``: the run had no time limit, so it must decide (unknown is
    allowed only on degenerate weights with no S). A decided verdict that
    rests on an extension activation (MATH.md §2) or, for a "no", on
    Theorem A (the affine class, biases in g, MATH.md §8.3) must say so;
    the paper's own "no" is about bias-free blocks without biases in f.
    The result must name its class.
    """
    assert result.target_class in ("affine", "bias-free"), result.target_class
    reference = sorted(sorted(s) for s in reference)
    nondegenerate = find_degeneracy(instance).nondegenerate
    if (result.certificate or {}).get("kind") == "degenerate":
        check_section_7(instance, result, reference, nondegenerate)
        return
    if result.status == "absorbable":
        assert reference, f"absorbable with S = {result.index_set}, but the reference finds no S"
        assert result.verified is True
        assert verify(instance, result.index_set, tol=tol).holds
        assert sorted(result.index_set) in reference
        if instance.act.extension:
            assert result.extension is True
        if find_all and (complete or result.count is not None):
            got = sorted(sorted(s) for s in result.solutions)
            assert got == reference, f"solutions {got} ≠ reference {reference}"
            assert result.count == len(result.solutions) == len(reference)
            for support in result.solutions:
                assert verify(instance, support, tol=tol).holds
    elif result.status == "not_absorbable":
        assert not reference, f"not_absorbable, but S = {reference[0]} satisfies (★)"
        assert nondegenerate, f"not_absorbable on {find_degeneracy(instance).describe()} weights"
        check_certificate(instance, result.certificate)
        if instance.act.extension or instance.has_biases or result.target_class == "affine":
            assert result.extension is True, "a 'no' beyond the paper is not labelled (extension)"
        else:
            assert result.extension is False
        if find_all:
            assert result.count == 0 and result.solutions == []
    else:
        assert result.status == "unknown", result.status
        if complete:
            assert not reference and not nondegenerate, (
                f"unknown without a time limit (reference: {len(reference)} sets, "
                f"{find_degeneracy(instance).describe()}): {result.reason}"
            )
            check_certificate(instance, result.certificate)


def check_section_7(instance, result, reference, nondegenerate):
    """A verdict of the exact decision for degenerate weights (MATH.md §7, issue 6).

    It is reached only when no S satisfies (★) on degenerate weights, is
    labelled an extension, and a positive carries a witness block of the
    same width that must pass the forward check (exact for ReLU).
    """
    from indexset.exact.witness import check_forward, result_witness

    assert not reference and not nondegenerate, "§7 verdict where (★) decides"
    assert result.status in ("absorbable", "not_absorbable"), result.status
    assert result.extension is True and result.certificate["argument"] == "MATH.md §7"
    if result.status == "absorbable":
        assert result.index_set is None and result.verified is True
        block = result_witness(instance, result)
        assert block.n == instance.n and check_forward(instance, block).ok


# ------------------------------------------------- affine class (MATH.md §8)
def flip_sets_by_forward(instance, points=48, seed=5):
    """Every S whose Theorem B/C flip of a homogeneous or gated block equals it, by brute force.

    The flipped block is built here from the formulas of MATH.md §8.4–8.5
    (gate rows negated; ReLU² rows, biases and down columns negated with the
    constants in c_down) and compared with f by a plain numpy forward pass
    on random points: no code of the solver is involved.
    """
    import itertools as _it

    x = np.random.default_rng(seed).uniform(-3, 3, size=(points, instance.d))
    f = _forward(instance, x, skip=True)
    up, bias, down = (np.array(fractions(instance, k), dtype=float) for k in ("W_up", "b_up", "W_down"))
    gate = np.array(fractions(instance, "W_gate"), dtype=float) if instance.act.gated else None
    b_down = np.array(fractions(instance, "b_down"), dtype=float)
    found = []
    for size in range(instance.n + 1):
        for S in _it.combinations(range(instance.n), size):
            S = list(S)
            if gate is not None:
                g_gate = gate.copy()
                g_gate[S] = -g_gate[S]
                g = _hidden(instance, x @ g_gate.T, x @ up.T + bias) @ down.T + b_down
            else:
                g_up, g_bias, g_down = up.copy(), bias.copy(), down.copy()
                g_up[S], g_bias[S], g_down[:, S] = -g_up[S], -g_bias[S], -g_down[:, S]
                constant = b_down + (down[:, S] * bias[S] ** 2).sum(axis=1)
                g = np.maximum(x @ g_up.T + g_bias, 0) ** 2 @ g_down.T + constant
            if np.allclose(f, g, atol=1e-8 * (1 + np.abs(f).max())):
                found.append(S)
    return found


def _hidden(instance, gate_pre, value_pre):
    import math as _math

    from scipy.special import erf, expit

    gates = {"swiglu": lambda z: z * expit(z), "geglu": lambda z: 0.5 * z * (1 + erf(z / _math.sqrt(2))),
             "reglu": lambda z: np.maximum(z, 0)}
    return gates[instance.activation](gate_pre) * value_pre


def _forward(instance, x, skip):
    up, bias, down = (np.array(fractions(instance, k), dtype=float) for k in ("W_up", "b_up", "W_down"))
    b_down = np.array(fractions(instance, "b_down"), dtype=float)
    if instance.act.gated:
        hidden = _hidden(instance, x @ np.array(fractions(instance, "W_gate"), dtype=float).T, x @ up.T + bias)
    else:
        hidden = np.maximum(x @ up.T + bias, 0) ** 2
    out = hidden @ down.T + b_down
    return out + x @ np.array(fractions(instance, "skip"), dtype=float).T if skip else out


def check_affine_class(instance, result):
    """A verdict on a homogeneous or gated block against the affine class.

    absorbable: the witness in the certificate equals f under a plain
    numpy forward pass; not_absorbable: only on weights where Theorems B/C
    apply, and then no flip equals f by brute force; unknown: only on
    degenerate weights.
    """
    from indexset.exact.witness import result_witness
    from indexset.theory.flips import violations

    assert result.target_class == "affine"
    nondegenerate = not violations(instance)
    if result.status == "absorbable":
        block = result_witness(instance, result)
        assert block.residual_free and block.n == instance.n
        x = np.random.default_rng(11).uniform(-4, 4, size=(64, instance.d))
        f, g = _forward(instance, x, skip=True), _forward(block, x, skip=False)
        assert np.allclose(f, g, atol=1e-9 * (1 + np.abs(f).max())), np.abs(f - g).max()
        assert result.extension is True
    elif result.status == "not_absorbable":
        assert nondegenerate, f"not_absorbable on weights that violate {violations(instance)}"
        assert result.extension is True and result.certificate["argument"] in ("MATH.md §8.4", "MATH.md §8.5")  # Theorem B or C
        if instance.n <= 12:
            assert flip_sets_by_forward(instance) == []
    else:
        assert not nondegenerate, f"unknown on nondegenerate weights: {result.reason}"


# ------------------------------------------------- degenerate weights (MATH.md §7)
def section_7_classes(instance):
    """Classes of f that need a unit, written from MATH.md §7 alone (no indexset.theory code).

    Returns ``(needed, L, c)``: ``needed`` a list of ``(direction, column)``
    pairs (tuples of Fractions), ``L`` the linear part as a list of rows.
    ReLU-like σ merges units on one hyperplane (any positive scale), analytic
    σ units equal up to sign; a unit with a negative scale adds −c·w·|λ|·ρᵀ.
    """
    up, down, b_up = fractions(instance, "W_up"), fractions(instance, "W_down"), fractions(instance, "b_up")
    d, n, c = instance.d, instance.n, Fraction(instance.act.c)
    relu_like = instance.activation == "relu" or instance.activation.startswith("leaky_relu")
    L = [[Fraction(v) for v in row] for row in fractions(instance, "skip")]
    E = {}
    for i in range(n):
        w = [down[a][i] for a in range(d)]
        u = list(up[i])
        if not any(w) or not any(u):
            continue
        first = next(v for v in u if v)
        lam = first if relu_like else Fraction(1 if first > 0 else -1)
        key = (tuple(v / lam for v in u), b_up[i] / lam)
        E[key] = [e + abs(lam) * x for e, x in zip(E.get(key, [0] * d), w)]
        if lam < 0:
            for a in range(d):
                for b in range(d):
                    L[a][b] -= c * abs(lam) * w[a] * key[0][b]
    needed = [(key[0], tuple(column)) for key, column in sorted(E.items()) if any(column)]
    return needed, L, c


def section_7_reference(instance) -> bool:
    """Absorbable by MATH.md §7, by brute force: every upgrade set U (dependent ones too), every sign vector.

    The least rank of ``R − X`` over X with rows in span(ρ_U) is
    ``rank[R; ρ_U] − rank(ρ_U)``; f absorbs iff it is ≤ ⌊(s − |U|)/2⌋ for
    some U and signs (s = n − m spare units). Exponential: tiny blocks only.
    """
    import flint

    needed, L, c = section_7_classes(instance)
    d, m = instance.d, len(needed)
    spare = instance.n - m

    def fmpq(v):
        return flint.fmpq(v.numerator, v.denominator)

    for size in range(0, min(spare, m) + 1):
        for U in itertools.combinations(range(m), size):
            others = [k for k in range(m) if k not in U]
            basis = flint.fmpq_mat([[fmpq(v) for v in needed[k][0]] for k in U]) if U else None
            for z in itertools.product((0, 1), repeat=len(others)):
                R = [row[:] for row in L]
                for k, flag in zip(others, z):
                    if flag:
                        r, e = needed[k]
                        for a in range(d):
                            for b in range(d):
                                R[a][b] += c * e[a] * r[b]
                entries = [fmpq(v) for row in R for v in row]
                if basis is not None:
                    low = flint.fmpq_mat(d + basis.nrows(), d, entries + list(basis.entries())).rank() - basis.rank()
                else:
                    low = flint.fmpq_mat(d, d, entries).rank()
                if low <= (spare - size) // 2:
                    return True
    return False


def rank_question_brute(base, columns, rows, q):
    """Every 0/1 vector z with rank(base + Σ z_k columns_k rows_kᵀ) ≤ q, by brute force (python-flint ranks)."""
    import flint

    d, w = len(base), len(base[0])
    found = []
    for z in itertools.product((0, 1), repeat=len(columns)):
        total = [[base[i][j] + sum(z[k] * columns[k][i] * rows[k][j] for k in range(len(z))) for j in range(w)] for i in range(d)]
        if flint.fmpz_mat(d, w, [v for row in total for v in row]).rank() <= q:
            found.append(z)
    return found


# ------------------------------------------------------------ maps of the line
def _stack_value(blocks, x):
    """A ReLU stack on R at a rational x: a plain loop over Fractions read from the raw arrays."""
    for block in blocks:
        up, b_up, down, b_down = (fractions(block, key) for key in ("W_up", "b_up", "W_down", "b_down"))
        out = sum(w * max(u * x + b, 0) for u, b, w in zip(up[:, 0], b_up, down[0])) + b_down[0]
        x = out if block.residual_free else out + fractions(block, "skip")[0, 0] * x
    return x


def stack_point_value(blocks, x):
    """A ReLU stack on R^d at a rational point (a list of Fractions): a plain loop over Fractions read from the raw arrays."""
    x = list(x)
    for block in blocks:
        up, b_up, down, b_down = (fractions(block, key) for key in ("W_up", "b_up", "W_down", "b_down"))
        hidden = [max(sum(u * v for u, v in zip(row, x)) + b, 0) for row, b in zip(up, b_up)]
        out = [sum(w * h for w, h in zip(row, hidden)) + b for row, b in zip(down, b_down)]
        if not block.residual_free:
            skip = fractions(block, "skip")
            out = [o + sum(a * v for a, v in zip(row, x)) for o, row in zip(out, skip)]
        x = out
    return x


def sampled_jacobian(blocks, point, step=Fraction(1, 10**9)):
    """F's Jacobian at a rational point by exact one-sided differences of the independent forward pass (None off a region's interior)."""
    d = len(point)
    at = stack_point_value(blocks, point)
    columns = []
    for k in range(d):
        quotients = []
        for h in (step, step / 2):
            moved = list(point)
            moved[k] += h
            quotients.append([(b - a) / h for a, b in zip(at, stack_point_value(blocks, moved))])
        if quotients[0] != quotients[1]:
            return None
        columns.append(quotients[0])
    return [[columns[k][i] for k in range(d)] for i in range(len(at))]


def line_kinks(stack):
    """Every x where some unit of a ReLU stack on R changes sign (a superset of the kinks of the stack).

    Layer by layer: between consecutive known points (and beyond the ends)
    the input of a layer is affine, so each unit's pre-activation there is
    affine and its zero is found by linear interpolation, exactly.
    """
    blocks = list(getattr(stack, "blocks", [stack]))
    points: set = set()
    for depth, block in enumerate(blocks):
        up, b_up = fractions(block, "W_up")[:, 0], fractions(block, "b_up")
        xs = sorted(points) or [Fraction(0)]
        grid = [xs[0] - 1, *xs, xs[-1] + 1]
        values = [_stack_value(blocks[:depth], x) for x in grid]
        found = set()
        for (x0, y0), (x1, y1) in zip(zip(grid, values), zip(grid[1:], values[1:])):
            for u, b in zip(up, b_up):
                z0, z1 = u * y0 + b, u * y1 + b
                if z0 == z1:
                    continue
                root = x0 + (x1 - x0) * z0 / (z0 - z1)
                # Only the ends extend to ±∞; interior pieces keep their roots inside.
                if (x0 <= root <= x1) or (x0 == grid[0] and root < x0) or (x1 == grid[-1] and root > x1):
                    found.add(root)
        points |= found
    return sorted(points)


def line_equal(f, g):
    """Whether two ReLU stacks on R are the same function: equal at every kink of either and one step beyond the ends."""
    xs = sorted(set(line_kinks(f)) | set(line_kinks(g))) or [Fraction(0)]
    probe = [xs[0] - 1, *xs, xs[-1] + 1]
    blocks_f, blocks_g = list(getattr(f, "blocks", [f])), list(getattr(g, "blocks", [g]))
    return all(_stack_value(blocks_f, x) == _stack_value(blocks_g, x) for x in probe)


def line_function(stack):
    """A ReLU stack's map on R as a LineMap, sampled by the forward pass at every kink ``line_kinks`` finds."""
    blocks = list(getattr(stack, "blocks", [stack]))
    return LineMap.sampled(line_kinks(stack), lambda x: stack_point_value(blocks, [x])[0])


def values_at_kinks(stack):
    """A ReLU stack's map on R at every kink (``line_kinks``) and one step beyond the first and the last, by the forward pass."""
    xs = sorted(set(line_kinks(stack)))
    xs = [xs[0] - 1, *xs, xs[-1] + 1] if xs else [Fraction(0), Fraction(1)]
    return [stack_point_value(list(getattr(stack, "blocks", [stack])), [x])[0] for x in xs]


def turns_by_values(values):
    """The turning values of the map through these points (linear between them and beyond): local extrema of the sequence, equal runs merged."""
    merged = [v for i, v in enumerate(values) if i == 0 or v != values[i - 1]]
    return [b for a, b, c in zip(merged, merged[1:], merged[2:]) if (b - a) * (c - b) < 0]


def line_block_absorbs(block):
    """Whether one ReLU block on R with distinct, nonzero unit kinks absorbs its skip: some S with Σ_S w_i u_i = −a (★), by brute force."""
    up, down, a = fractions(block, "W_up")[:, 0], fractions(block, "W_down")[0], fractions(block, "skip")[0, 0]
    terms = [w * u for u, w in zip(up, down)]
    return any(sum(t for t, z in zip(terms, choice) if z) == -a for choice in itertools.product((0, 1), repeat=len(terms)))


# ------------------------------------------------ Theorem 9.6, enumerated naively
def _residue(kinks, choice):
    """Σ over the chosen kinks of the slope jumps, minus the slope at +∞ (slope 1 at −∞): zero iff the choice balances."""
    slopes = [Fraction(1)]
    for r in kinks:
        slopes.append(slopes[-1] * r)
    return sum((b - a for a, b, c in zip(slopes, slopes[1:], choice) if c), Fraction(0)) - slopes[-1]


def _kinks(ratios, where, block, shared=None, q=None):
    """One block's ratios left to right: F's where the block alone has the breakpoint, q or r_c/q at the shared one."""
    out = []
    for j, (r, w) in enumerate(zip(ratios, where)):
        if j == shared:
            out.append(q if block == 1 else ratios[j] / q)
        else:
            out.append(r if w == block else Fraction(1))
    return [r for r in out if r != 1]


def _block_ok(kinks, n):
    return len(kinks) < n or (len(kinks) == n and any(_residue(kinks, c) == 0 for c in itertools.product((0, 1), repeat=n)))


def naive_two_block(phi, n):
    """Theorem 9.6 for L = 2 by naive enumeration: each breakpoint of F in block 1, block 2 or both (3, ratio q in block 1).

    The residue of a choice is affine in q for block 1 and in 1/q for
    block 2, so two evaluations find its zero.
    """
    ratios = [b / a for a, b in zip(phi.slopes, phi.slopes[1:])]
    for where in itertools.product((1, 2, 3), repeat=len(ratios)):
        if sum(w != 2 for w in where) > n or sum(w != 1 for w in where) > n:
            continue
        shared = [j for j, w in enumerate(where) if w == 3]
        if not shared:
            if all(_block_ok(_kinks(ratios, where, block), n) for block in (1, 2)):
                return True
            continue
        (c,) = shared  # a second shared breakpoint would need n + 1 kinks in a block when m ≥ 2n − 1
        candidates = {Fraction(1), ratios[c]}
        for block, (qa, qb) in ((1, (Fraction(1, 7), Fraction(2, 7))), (2, (Fraction(7), Fraction(7, 2)))):
            ka, kb = _kinks(ratios, where, block, c, qa), _kinks(ratios, where, block, c, qb)
            if len(ka) != n or len(kb) != n:
                continue
            xa, xb = (qa, qb) if block == 1 else (1 / qa, 1 / qb)
            for choice in itertools.product((0, 1), repeat=n):
                ya, yb = _residue(ka, choice), _residue(kb, choice)
                if ya != yb:
                    root = xa - ya * (xb - xa) / (yb - ya)
                    if root > 0:
                        candidates.add(root if block == 1 else 1 / root)
        if any(all(_block_ok(_kinks(ratios, where, block, c, q), n) for block in (1, 2)) for q in candidates):
            return True
    return False


def naive_split(phi, n, layers):
    """Theorem 9.6 for L blocks and m ≥ L·n − 1 by naive enumeration: each breakpoint in one block, or one in a pair.

    Block k's ratios left to right: F's where it alone has the breakpoint,
    q (first of the pair) or r_c/q (second) at the shared one; a residue
    is affine in q or in 1/q, so two evaluations find its zero.
    """
    ratios = [b / a for a, b in zip(phi.slopes, phi.slopes[1:])]
    m = len(ratios)
    pairs = [(a, b) for a in range(layers) for b in range(a + 1, layers)]

    def kinks(owner, block, shared=None, pair=None, q=None):
        out = []
        for j, r in enumerate(ratios):
            if j == shared:
                out.append(q if block == pair[0] else (ratios[j] / q if block == pair[1] else Fraction(1)))
            else:
                out.append(r if owner[j] == block else Fraction(1))
        return [r for r in out if r != 1]

    for owner in itertools.product(range(layers), repeat=m):
        if all(_block_ok(kinks(owner, k), n) for k in range(layers)):
            return True
    for shared in range(m):
        for owner in itertools.product(range(layers), repeat=m):
            if owner[shared] != 0:
                continue
            for pair in pairs:
                candidates = {Fraction(1), ratios[shared]}
                for block in pair:
                    qa, qb = Fraction(1, 7), Fraction(2, 7)
                    ka, kb = kinks(owner, block, shared, pair, qa), kinks(owner, block, shared, pair, qb)
                    if len(ka) != n or len(kb) != n:
                        continue
                    xa, xb = (qa, qb) if block == pair[0] else (1 / qa, 1 / qb)
                    for choice in itertools.product((0, 1), repeat=n):
                        ya, yb = _residue(ka, choice), _residue(kb, choice)
                        if ya != yb:
                            root = xa - ya * (xb - xa) / (yb - ya)
                            if root > 0:
                                candidates.add(root if block == pair[0] else 1 / root)
                if any(all(_block_ok(kinks(owner, k, shared, pair, q), n) for k in range(layers)) for q in candidates):
                    return True
    return False
