"""Instance constructors: planted positives, negatives and hard instances.

Every family is a function taking keyword options and a ``seed`` and
returning an :class:`~indexset.model.instance.Instance`. Randomness comes only from
``numpy.random.default_rng(seed)``, so one seed gives one instance, and
:func:`write_reproducible` turns it into the same bytes every time.

Families
--------
planted
    Exact integer (or rational, over ``denominator``) weights with a hidden
    index set S, ``|S| = k ≥ d``, satisfying (★)
    ``c·W_down[:,S]·W_up[S,:] = −A`` (MATH.md §2), shuffled among decoys.
random
    Unplanted integer or Gaussian weights (negatives).
float_planted
    Gaussian weights with (★) holding up to float rounding, for ``--tol``.
degenerate
    A planted instance with one stated degeneracy (MATH.md §3, §7).
hard
    Planted or unplanted integer instances near density one.
gated, homogeneous
    SwiGLU/GeGLU/ReGLU/GLU and ReLU²/ReGLU blocks (MATH.md §4).

Every planted S is checked with the exact verifier before an instance is
returned; a planted S that fails is a bug and raises ``RuntimeError``.
Metadata keys (never read by solvers): ``planted_S`` (int64 array),
``params`` (JSON string with the family, the seed and every option), and
``degeneracy`` / ``trap_S`` where stated.
"""

from __future__ import annotations

import itertools
import json
import math
import os
from fractions import Fraction

import flint
import numpy as np

import indexset.model.activations as activations
from indexset.errors import InputError
from indexset.exact.verify import verify
from indexset.model.activations import HOMOGENEOUS, ODD_LINEAR
from indexset.model.instance import Instance
from indexset.rational import as_fraction, fmpq_matrix, parse_fraction
from indexset.search.engines.brute import absorbing_sets_brute
from indexset.theory.nondegeneracy import direction, find_degeneracy
from indexset.workflows.vocabulary import DEGENERACIES, DTYPES, FAMILIES, SKIPS

BRUTE_CHECK_WIDTH = 16
"""``random`` confirms by brute force that no S exists up to this width."""

_INT64 = 2**63 - 1
_ATTEMPTS = 200


# ====================================================================== API
def build(family: str, **options) -> Instance:
    """Construct an instance of a named family (``float-planted`` is accepted).

    Raises
    ------
    InputError
        Unknown family or invalid options.
    """
    name = str(family).replace("-", "_")
    if name not in FAMILIES:
        raise InputError("construct", f"unknown family {family!r} (known: {', '.join(FAMILIES)})")
    return globals()[name](**options)


def planted(
    *,
    d: int = 2,
    n: int = 12,
    k: int | None = None,
    range: int = 5,
    seed: int = 0,
    activation: str = "relu",
    biases: bool = False,
    skip: str = "identity",
    denominator: int | None = None,
    streams: int | None = None,
) -> Instance:
    """Exact weights with a hidden index set S satisfying (★).

    Construction: U_S (k × d, the rows of S) is drawn uniformly from
    ``[−range, range]`` like the decoy rows, conditioned on its rows
    generating Z^d (for k = d: a random unimodular matrix). Then
    W_S (d × k) is a short integer solution of ``W_S·U_S = q²·(−A/c)``
    (a particular left inverse reduced modulo the LLL-reduced left null
    space lattice of U_S), plus a random small combination of that null
    space chosen so its entries match the decoys' magnitude. S is shuffled
    among decoy units whose rows are pairwise non-collinear and whose
    columns are nonzero, so the weights are nondegenerate (MATH.md §3).

    Parameters
    ----------
    d, n : int
        Dimension (≥ 2; d = 1 is always degenerate, see :func:`degenerate`)
        and width.
    k : int, optional
        Size of S, ``d ≤ k ≤ n``; default ``max(d, n // 2)``.
    range : int
        Integer entries (numerators) are drawn from ``[−range, range]``.
    seed : int
        Seed of ``numpy.random.default_rng``.
    activation : str
        Any odd-linear activation (``relu``, ``gelu``, ``leaky_relu:1/2``, ...).
    biases : bool
        Draw random nonzero-range biases (they do not affect (★)).
    skip : {"identity", "unimodular", "permutation", "mhc"}
        The skip matrix A. ``mhc`` is a doubly stochastic invertible rational
        matrix ``H ⊗ I`` (a convex combination of permutations, as mHC's
        residual mixing); it reduces to the identity case through
        A⁻¹W_down (MATH.md §3, invertible skip).
    denominator : int, optional
        Store every array as integer numerators over ``q``. Default: the
        smallest q that keeps everything exact (1 for c = 1 and integer A;
        e.g. 3 for leaky_relu:1/2, where c = 3/2).
    streams : int, optional
        For ``skip="mhc"``: number of residual streams s (s divides d;
        default d), A = H ⊗ I_{d/s} with H doubly stochastic s × s.

    Returns
    -------
    Instance
        With metadata ``planted_S`` and ``params``.

    Raises
    ------
    InputError
        Invalid options (k < d, k > n, range < 1, d < 2, ...).
    RuntimeError
        If the planted S fails the exact verifier (a bug).
    """
    bound = range
    k = _default_k(d, n, k)
    _check_common(d=d, n=n, k=k, bound=bound, seed=seed, min_d=2)
    act = _odd_linear(activation)
    rng = np.random.default_rng(seed)
    skip_values = _skip_values(rng, skip, d, streams)
    q = _denominator(skip_values, act.c, denominator)
    params = _params(
        "planted", seed, d=d, n=n, k=k, range=bound, activation=act.name, biases=bool(biases),
        skip=skip, denominator=q, streams=streams,
    )
    return _planted_exact(rng, d, n, k, bound, act.name, bool(biases), skip_values, q, params)


def random(
    *,
    d: int = 2,
    n: int = 12,
    range: int = 5,
    seed: int = 0,
    activation: str = "relu",
    biases: bool = False,
    skip: str = "identity",
    denominator: int | None = None,
    streams: int | None = None,
    dtype: str = "int",
) -> Instance:
    """Unplanted, nondegenerate weights: negatives.

    Integer weights are uniform in ``[−range, range]`` (rows pairwise
    non-collinear, columns nonzero). For ``n ≤ 16`` the draw is repeated
    until a brute force finds no absorbing S, so those files are certified
    negatives (``params["negative"] = "brute_force"``); wider integer
    instances are ``"unchecked"``. Float weights are N(0, 1) (``range`` is
    unused) and negative with probability one (MATH.md §3, ``"generic"``).

    Parameters
    ----------
    d, n, range, seed, activation, biases, skip, denominator, streams
        As in :func:`planted`.
    dtype : {"int", "float"}
        Integer or Gaussian float64 weights.

    Returns
    -------
    Instance
        With metadata ``params`` (no ``planted_S``).
    """
    bound = range
    _check_common(d=d, n=n, k=None, bound=bound, seed=seed, min_d=2)
    _check_choice("dtype", dtype, DTYPES)
    act = _odd_linear(activation)
    rng = np.random.default_rng(seed)
    skip_values = _skip_values(rng, skip, d, streams)
    if dtype == "float":
        if denominator not in (None, 1):
            raise InputError("denominator", "float weights take no denominator")
        params = _params("random", seed, d=d, n=n, activation=act.name, biases=bool(biases), skip=skip,
                         streams=streams, dtype=dtype, negative="generic")
        return _random_float(rng, d, n, act.name, bool(biases), skip_values, params)
    q = _denominator(skip_values, None, denominator)
    negative = "brute_force" if n <= BRUTE_CHECK_WIDTH else "unchecked"
    params = _params("random", seed, d=d, n=n, range=bound, activation=act.name, biases=bool(biases),
                     skip=skip, denominator=q, streams=streams, dtype=dtype, negative=negative)
    return _random_exact(rng, d, n, bound, act.name, bool(biases), skip_values, q, params)


def float_planted(
    *,
    d: int = 2,
    n: int = 12,
    k: int | None = None,
    seed: int = 0,
    activation: str = "relu",
    biases: bool = False,
    skip: str = "identity",
    streams: int | None = None,
    tol: str = "1e-9",
) -> Instance:
    """Gaussian weights where (★) holds up to float64 rounding.

    U_S and the decoys are N(0, 1); ``W_S = −A·pinv(U_S)/c + Y·N`` with N an
    orthonormal basis of the left null space of U_S and Y ~ N(0, 1), so the
    planted columns have the decoys' magnitude while ``W_S·U_S`` stays
    ``−A/c`` up to rounding. The draw is repeated until the exact residual
    is at most ``tol``; the file is meant for ``solve --tol``.

    Parameters
    ----------
    d, n, k, seed, activation, biases, skip, streams
        As in :func:`planted`.
    tol : str
        Tolerance τ (decimal or p/q, > 0) the planted S must meet exactly:
        ``max |c·W_down[:,S]·W_up[S,:] + A| ≤ τ``. Stored in ``params``.
    """
    k = _default_k(d, n, k)
    _check_common(d=d, n=n, k=k, bound=1, seed=seed, min_d=2)
    act = _odd_linear(activation)
    tolerance = parse_fraction(str(tol), "tol")
    if tolerance <= 0:
        raise InputError("tol", "tolerance must be > 0")
    rng = np.random.default_rng(seed)
    skip_values = _skip_values(rng, skip, d, streams)
    params = _params("float_planted", seed, d=d, n=n, k=k, activation=act.name, biases=bool(biases),
                     skip=skip, streams=streams, tol=str(tol))
    for _ in range(_ATTEMPTS):
        instance, index_set = _float_planted_draw(rng, d, n, k, act, bool(biases), skip_values, params)
        if verify(instance, index_set, tol=tolerance).holds:
            return _checked(instance, index_set, tol=tolerance)
    raise InputError("tol", f"no draw met tolerance {tol}; use a larger --tol")


def degenerate(
    *,
    kind: str = "duplicate",
    d: int = 2,
    n: int = 8,
    k: int | None = None,
    range: int = 5,
    seed: int = 0,
    activation: str = "relu",
    biases: bool = False,
) -> Instance:
    """A planted instance with exactly one stated degeneracy (MATH.md §3).

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

    Parameters
    ----------
    kind : str
        One of ``duplicate``, ``collinear``, ``zero_row``, ``zero_column``,
        ``dimension_one``.
    d, n, k, range, seed, activation, biases
        As in :func:`planted`; ``dimension_one`` needs d = 1, the others
        d ≥ 2 and n > k (a decoy to alter).
    """
    _check_choice("kind", kind, DEGENERACIES)
    bound = range
    k = _default_k(d, n, k)
    if kind == "dimension_one" and d != 1:
        raise InputError("d", f"kind dimension_one needs d = 1, got d = {d}")
    _check_common(d=d, n=n, k=k, bound=bound, seed=seed, min_d=1 if kind == "dimension_one" else 2)
    if kind != "dimension_one" and n <= k:
        raise InputError("n", f"kind {kind} alters a decoy unit: need n > k, got n = {n}, k = {k}")
    act = _odd_linear(activation)
    rng = np.random.default_rng(seed)
    skip_values = _skip_values(rng, "identity", d, None)
    q = _denominator(skip_values, act.c, None)
    params = _params("degenerate", seed, kind=kind, d=d, n=n, k=k, range=bound, activation=act.name,
                     biases=bool(biases), skip="identity", denominator=q)
    base = _planted_exact(rng, d, n, k, bound, act.name, bool(biases), skip_values, q, params)
    return _make_degenerate(rng, base, kind)


def hard(
    *,
    d: int = 2,
    n: int = 40,
    k: int | None = None,
    density: float = 1.0,
    plant: bool = True,
    seed: int = 0,
    activation: str = "relu",
) -> Instance:
    """Integer instances near density one, where plain solvers struggle.

    The 0/1 system ``M z = t`` (MATH.md §5) has n unknowns and d² equations
    whose coefficients ``M[(a,b), i] = W_down[a,i]·W_up[i,b]`` have about
    ``log2 max|M|`` bits. As for subset sum (n / log2 max aᵢ) and market
    split lattices, the density used here is::

        density = n / (d² · log2(max |M entry|))

    Density well below one is easy for lattice reduction, far above one has
    many solutions; density near one is hardest. Since ``max|M| ≈ R²`` for
    entries in ``[−R, R]``, the range is ``R = round(2^(n / (2·d²·density)))``
    (at least 1). The achieved density is stored as ``params["density"]``.

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
        Plant S (a positive); ``False`` draws a :func:`random` instance of
        the same range (a probable negative).
    seed, activation
        As in :func:`planted`.
    """
    try:
        target = float(density)
    except (TypeError, ValueError):
        raise InputError("density", f"{density!r} is not a number") from None
    if not math.isfinite(target) or target <= 0:
        raise InputError("density", f"density must be a positive number, got {density!r}")
    _check_common(d=d, n=n, k=None, bound=1, seed=seed, min_d=2)
    bits = n / (d * d * target)
    bound = max(1, round(2.0 ** (bits / 2)))
    if bound > 2**20:
        raise InputError("density", f"density {target} at n = {n}, d = {d} needs entries up to {bound}; raise the density")
    if plant:
        instance = planted(d=d, n=n, k=k, range=bound, seed=seed, activation=activation)
    elif k is not None:
        raise InputError("k", "an unplanted instance has no k")
    else:
        instance = random(d=d, n=n, range=bound, seed=seed, activation=activation)
    params = json.loads(instance.metadata["params"])
    params.update(family="hard", target_density=target, plant=bool(plant), density=achieved_density(instance))
    instance.metadata["params"] = _dump(params)
    return instance


def gated(
    *,
    activation: str = "swiglu",
    d: int = 2,
    n: int = 8,
    range: int = 5,
    seed: int = 0,
    biases: bool = False,
    skip: str = "identity",
    dtype: str = "int",
    trap: bool = False,
    pairs: bool = False,
    target_class: str = "bias-free",
) -> Instance:
    """A gated block ``W_down (g(W_gate x) ⊙ (W_up x + b_up)) + b_down + A x``.

    Without a bias inside σ no bias-free residual-free block absorbs the
    skip of a SwiGLU or GeGLU block (MATH.md §4, g(0) = 0) or of a ReGLU
    block (degree 2); the sigmoid GLU is not covered (answer "unknown").
    With biases allowed in g (the affine class) the weights decide
    (MATH.md §8): ``pairs=True`` builds a block that such a g absorbs.

    Parameters
    ----------
    activation : {"swiglu", "geglu", "reglu", "glu"}
    d, n, range, seed, biases, skip
        As in :func:`random` (d ≥ 1).
    dtype : {"int", "float"}
    trap : bool
        Plant an index set satisfying (★) with c = 1 in W_up/W_down anyway
        (metadata ``trap_S``, integer weights only): a tool that ignores the
        activation would wrongly call the block absorbable. The block is
        still not absorbable by the class ``target_class``.
    pairs : bool
        Make units 2p, 2p+1 (p < d) a pair with opposite gate rows ±u_p
        (u_p the rows of a unimodular matrix) and parallel down columns,
        chosen so that value biases on the pairs reproduce A·x (MATH.md
        §8.6): absorbable by the affine class, not by the bias-free one.
        Needs n ≥ 2d; the pairs are shuffled among random units.
    target_class : {"bias-free", "affine"}
        The class a ``trap`` must stay a negative for. For ``affine`` the
        gate rows are redrawn until pairwise non-collinear and the block
        has no bias inside σ (Theorem C then rules absorption out).
    """
    act = activations.get(activation, "activation")
    if not act.gated:
        raise InputError("activation", f"{act.name} is not gated (gated: swiglu, geglu, reglu, glu)")
    if pairs:
        return _gated_pairs(act, d, n, range, seed, biases, skip)
    return _impossible("gated", act, d, n, range, seed, biases, skip, dtype, trap, target_class)


def homogeneous(
    *,
    activation: str = "relu2",
    d: int = 2,
    n: int = 8,
    range: int = 5,
    seed: int = 0,
    biases: bool = False,
    skip: str = "identity",
    dtype: str = "int",
    trap: bool = False,
    collinear: bool = False,
    target_class: str = "bias-free",
) -> Instance:
    """A block with a positively homogeneous activation of degree 2.

    ``relu2`` (max(z, 0)²) or ``reglu``: without a bias inside σ no
    bias-free residual-free block absorbs the skip (MATH.md §4, degree
    argument). Options as in :func:`gated`, and:

    collinear : bool
        ReLU² only: for each of d directions u_p (rows of a unimodular
        matrix) four units with rows u_p, 2u_p, −u_p, −3u_p: two merge on
        each side of the hyperplane, which frees two units per direction,
        enough for relu(z+1)² − relu(z)² − relu(−z)² + relu(−z−1)² = 2z + 1
        to reproduce A·x (MATH.md §8.6). Absorbable by the affine class,
        not by the bias-free one. Needs n ≥ 4d.
    """
    act = activations.get(activation, "activation")
    if act.kind != HOMOGENEOUS:
        raise InputError("activation", f"{act.name} is not positively homogeneous of degree ≠ 1 (known: relu2, reglu)")
    if collinear:
        if act.gated:
            raise InputError("collinear", "collinear units are a ReLU² construction; for reglu use: gated --pairs")
        return _relu2_collinear(d, n, range, seed, skip)
    return _impossible("homogeneous", act, d, n, range, seed, biases, skip, dtype, trap, target_class)


# ================================================================= stacks
def stack(
    *,
    layers: int = 3,
    d: int = 2,
    n: int = 12,
    k: int | None = None,
    range: int = 5,
    seed: int = 0,
    activation: str = "relu",
    biases: bool = False,
    skip: str = "identity",
):
    """A stack of L blocks, each built like one block of its family.

    Odd-linear activations: every block is :func:`planted` (seed
    ``seed·1000 + layer``), so its S passes the exact verifier, and the
    stack of flip witnesses passes the whole-stack forward check (exact
    for ReLU) before the stack is returned: the stack absorbs block-wise.
    Gated activations (:func:`gated`) and ReLU²/ReGLU (:func:`homogeneous`)
    give stacks that are never absorbable (MATH.md §4, depth corollary).

    Parameters
    ----------
    layers : int
        Number of blocks L ≥ 1.
    d, n, k, range, seed, activation, biases, skip
        As in :func:`planted` (``k`` for odd-linear activations only).

    Returns
    -------
    indexset.model.stack.Stack
        With metadata ``planted_S`` (shape (L, k)) for planted stacks and
        ``params``.
    """
    import builtins  # the option ``range`` shadows the builtin here

    from indexset.exact.witness import check_forward, witness
    from indexset.model.stack import Stack

    _check_int("layers", layers, 1)
    act = activations.get(activation, "activation")
    seeds = [seed * 1000 + layer for layer in builtins.range(layers)]
    params = _params("stack", seed, layers=layers, d=d, n=n, k=k, range=range, activation=act.name,
                     biases=bool(biases), skip=skip)
    if act.kind != ODD_LINEAR:
        if k is not None:
            raise InputError("k", f"{act.name} stacks have no planted index set")
        family = gated if act.gated else homogeneous
        blocks = [family(activation=act.name, d=d, n=n, range=range, seed=s, biases=biases, skip=skip) for s in seeds]
        return Stack(blocks, {"params": np.array(params)}, "construct stack")
    blocks = [planted(d=d, n=n, k=k, range=range, seed=s, activation=act.name, biases=biases, skip=skip) for s in seeds]
    _same_denominator(blocks)
    built = Stack(blocks, {"planted_S": np.array([b.planted for b in blocks], dtype=np.int64),
                           "params": np.array(params)}, "construct stack")
    witnesses = Stack([witness(b, b.planted) for b in blocks], source="construct stack witness")
    if not check_forward(built, witnesses).ok:
        raise RuntimeError("bug: the planted witness stack fails the whole-stack forward check")
    return built


def _same_denominator(blocks) -> None:
    """Blocks of one stack file share one denominator (the rule depends only on A and c)."""
    if len({b.denominator for b in blocks}) != 1:
        raise RuntimeError("bug: planted blocks of one stack came out with different denominators")




def achieved_density(instance: Instance) -> float:
    """``n / (d² · log2 max|M|)`` for the integer numerators of an instance."""
    up, _ = instance.exact("W_up")
    down, _ = instance.exact("W_down")
    largest = max(abs(int(down[a, i]) * int(up[i, b]))
                  for a in range(instance.d) for b in range(instance.d)
                  for i in range(instance.n))
    return instance.n / (instance.d**2 * math.log2(max(2, largest)))


def write_reproducible(instance: Instance, path: str | os.PathLike) -> None:
    """Write ``instance`` atomically; the same instance always gives the same bytes."""
    instance.save(path)


# ============================================================== validation
def _default_k(d, n, k):
    if k is not None:
        return k
    if isinstance(d, int) and isinstance(n, int):
        return max(d, n // 2)
    return d


LIMITS = {"d": 1024, "n": 65536, "k": 65536, "range": 2**31 - 1, "denominator": 2**31 - 1, "seed": 2**63 - 1, "layers": 256, "streams": 1024}
"""Largest value of each integer option: numpy draws int64, and larger sizes
would not fit in memory or in the exact arithmetic in reasonable time."""


def _check_int(name: str, value, low: int) -> None:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise InputError(name, f"expected an integer, got {value!r}")
    if value < low:
        raise InputError(name, f"must be ≥ {low}, got {value}")
    if name in LIMITS and value > LIMITS[name]:
        raise InputError(name, f"must be ≤ {LIMITS[name]}, got {value}")


def _check_common(*, d, n, k, bound, seed, min_d) -> None:
    """Validate sizes; d = 1 is refused where nondegeneracy is promised."""
    _check_int("d", d, 1)
    if d < min_d:
        raise InputError("d", f"d = {d} is always degenerate (MATH.md §3); build it with the degenerate family, kind dimension_one")
    _check_int("n", n, 1)
    _check_int("range", bound, 1)
    _check_int("seed", seed, 0)
    if k is not None:
        _check_int("k", k, 1)
        if k < d:
            raise InputError("k", f"k = {k} < d = {d}: (★) needs rank d, so |S| ≥ d")
        if k > n:
            raise InputError("k", f"k = {k} > n = {n}: S cannot be larger than the width")


def _check_choice(name: str, value, choices) -> None:
    if value not in choices:
        raise InputError(name, f"unknown {name} {value!r} (known: {', '.join(choices)})")


def _odd_linear(name: str) -> activations.Activation:
    act = activations.get(name, "activation")
    if act.kind != ODD_LINEAR:
        raise InputError("activation", f"{act.name} is not odd-linear ({act.kind}); use the gated or homogeneous family")
    return act


def _params(family: str, seed: int, **options) -> str:
    return _dump({"family": family, "seed": int(seed), **options})


def _dump(params: dict) -> str:
    return json.dumps(params, sort_keys=True)


# ============================================================ skip matrices
def _skip_values(rng, kind: str, d: int, streams) -> list[list[Fraction]] | None:
    """The skip A as Fractions; ``None`` for the identity (stored as absent)."""
    _check_choice("skip", kind, SKIPS)
    if streams is not None and kind != "mhc":
        raise InputError("streams", "streams applies to --skip mhc only")
    if kind == "identity":
        return None
    if kind == "unimodular":
        matrix = _unimodular(rng, d, 2)
        while d > 1 and matrix == _identity(d):
            matrix = _unimodular(rng, d, 2)
        return _fractions(matrix)
    if kind == "permutation":
        return _fractions(_permutation_matrix(_non_identity_permutation(rng, d)))
    return _mhc(rng, d, d if streams is None else streams)


def _identity(d: int) -> list[list[int]]:
    return [[int(i == j) for j in range(d)] for i in range(d)]


def _fractions(matrix) -> list[list[Fraction]]:
    return [[Fraction(int(v)) for v in row] for row in matrix]


def _permutation_matrix(perm) -> list[list[int]]:
    size = len(perm)
    return [[int(perm[i] == j) for j in range(size)] for i in range(size)]


def _non_identity_permutation(rng, size: int) -> list[int]:
    perm = [int(v) for v in rng.permutation(size)]
    while size > 1 and perm == list(range(size)):
        perm = [int(v) for v in rng.permutation(size)]
    return perm


def _mhc(rng, d: int, streams) -> list[list[Fraction]]:
    """``H ⊗ I_{d/s}`` with H a convex combination of s × s permutations.

    Doubly stochastic matrices can be singular (all entries 1/s), so H is
    redrawn until it is invertible.
    """
    _check_int("streams", streams, 1)
    if d % streams:
        raise InputError("streams", f"streams = {streams} must divide d = {d}")
    count = min(3, math.factorial(streams))
    for _ in range(_ATTEMPTS):
        perms = set()
        while len(perms) < count:
            perms.add(tuple(int(v) for v in rng.permutation(streams)))
        weights = [int(w) for w in rng.integers(1, 4, size=count)]
        total = sum(weights)
        mix = [[Fraction(0)] * streams for _ in range(streams)]
        for weight, perm in zip(weights, sorted(perms)):
            for i, j in enumerate(perm):
                mix[i][j] += Fraction(weight, total)
        if _rank(mix) == streams:
            block = d // streams
            return [[mix[i // block][j // block] * int(i % block == j % block) for j in range(d)]
                    for i in range(d)]
    raise RuntimeError("could not draw an invertible doubly stochastic matrix")


def _rank(matrix: list[list[Fraction]]) -> int:
    return fmpq_matrix(matrix).rank()


def _denominator(skip_values, c: Fraction | None, requested) -> int:
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
    _check_int("denominator", requested, 1)
    if not works(int(requested)):
        smallest = next(q for q in itertools.count(1) if works(q))
        raise InputError("denominator", f"q = {requested} cannot hold the skip and −A/c exactly; use a multiple of {smallest}")
    return int(requested)


def _skip_array(skip_values, q: int):
    """The stored skip numerators over q (None for the identity)."""
    if skip_values is None:
        return None
    return _int_array([[int(q * v) for v in row] for row in skip_values])


# ============================================================ integer parts
def _int_array(rows) -> np.ndarray:
    """An int64 array from nested Python ints, refusing silent overflow."""
    values = np.array(rows, dtype=object)
    if any(abs(int(v)) > _INT64 for v in values.ravel()):
        raise InputError("construct", "weights exceed int64; use a smaller --d, --k or --range")
    return values.astype(np.int64)


def _unimodular(rng, d: int, bound: int) -> list[list[int]]:
    """A random d × d integer matrix with det ±1 and entries in [−bound, bound].

    A signed permutation followed by random row additions that keep the
    entries in range: each step keeps det ±1, and the rows stay independent
    (hence pairwise non-collinear).
    """
    perm = rng.permutation(d)
    signs = rng.choice([-1, 1], size=d)
    matrix = [[int(signs[i]) if j == perm[i] else 0 for j in range(d)] for i in range(d)]
    for _ in range(8 * d * d if d > 1 else 0):
        i, j = (int(v) for v in rng.choice(d, size=2, replace=False))
        sign = int(rng.choice([-1, 1]))
        row = [a + sign * b for a, b in zip(matrix[i], matrix[j])]
        if max(abs(v) for v in row) <= bound:
            matrix[i] = row
    return matrix


def _random_row(rng, d: int, bound: int) -> list[int]:
    return [int(v) for v in rng.integers(-bound, bound + 1, size=d)]


def _line_count(d: int, bound: int) -> int | None:
    """Number of lines through 0 hit by nonzero points of [−bound, bound]^d (None: huge)."""
    if (2 * bound + 1) ** d > 10**6:
        return None
    grid = np.indices((2 * bound + 1,) * d).reshape(d, -1).T - bound
    primitive = np.gcd.reduce(np.abs(grid), axis=1) == 1
    return int(primitive.sum()) // 2


def _check_room(d: int, n: int, bound: int) -> None:
    if d == 1:
        return  # d = 1 rows are collinear anyway (the dimension_one degeneracy)
    lines = _line_count(d, bound)
    if lines is not None and n > lines:
        raise InputError("range", f"only {lines} pairwise non-collinear rows exist in [−{bound}, {bound}]^{d}; need n = {n}: raise --range")


def _decoy_rows(rng, count: int, d: int, bound: int, taken: set) -> list[list[int]]:
    """Nonzero rows uniform in [−bound, bound]^d, each on a line not yet taken.

    For d = 1 every row is on the one line, so only zero rows are refused.
    """
    rows = []
    for _ in range(count):
        for _ in range(100_000):
            row = _random_row(rng, d, bound)
            key = direction(row)
            if key is not None and (d == 1 or key not in taken):
                taken.add(key)
                rows.append(row)
                break
        else:
            raise InputError("range", f"could not draw {count} non-collinear rows in [−{bound}, {bound}]^{d}; raise --range")
    return rows


def _nonzero_columns(rng, count: int, d: int, bound: int) -> list[list[int]]:
    columns = []
    while len(columns) < count:
        column = _random_row(rng, d, bound)
        if any(column):
            columns.append(column)
    return columns


def _rows(matrix) -> list[list[int]]:
    return [[int(matrix[i, j]) for j in range(matrix.ncols())] for i in range(matrix.nrows())]


def _left_structure(U: flint.fmpz_mat):
    """Left inverse and left kernel lattice of U (k × d), or None.

    LLL with transform gives ``T·U = [0; B]`` with T unimodular and B a
    d × d basis of U's row lattice. The rows of U generate Z^d iff
    ``|det B| = 1``; then ``B⁻¹·T[k−d:]`` is an integer left inverse and
    ``T[:k−d]`` an integer basis of ``{y : y·U = 0}`` (LLL-reduced again).
    """
    k, d = U.nrows(), U.ncols()
    reduced, transform = U.lll(transform=True)
    rows, trans = _rows(reduced), _rows(transform)
    if any(any(row) for row in rows[: k - d]) or U.rank() != d:
        return None
    basis = flint.fmpz_mat(rows[k - d:])
    if abs(basis.det()) != 1:
        return None
    # det ±1, so the rational inverse is an integer matrix.
    inverse = flint.fmpz_mat([[int(v.p) for v in row] for row in basis.inv().tolist()])
    left = inverse * flint.fmpz_mat(trans[k - d:])
    kernel = flint.fmpz_mat(trans[: k - d]).lll() if k > d else None
    return left, kernel


def _reduce_mod_lattice(row: list[int], kernel) -> list[int]:
    """A short vector of ``row + lattice`` (Kannan embedding with LLL)."""
    if kernel is None:
        return row
    k = kernel.ncols()
    weight = 1 + sum(abs(v) for v in row) + sum(abs(int(v)) for v in kernel.entries())
    embedded = [r + [0] for r in _rows(kernel)] + [row + [weight]]
    reduced = _rows(flint.fmpz_mat(embedded).lll())
    hits = [r for r in reduced if r[-1] != 0]
    if len(hits) != 1 or abs(hits[0][-1]) != weight:
        return row  # unexpected basis shape: keep the (valid, longer) solution
    sign = 1 if hits[0][-1] > 0 else -1
    return [sign * v for v in hits[0][:k]]


def _planted_rows(rng, k: int, d: int, bound: int) -> tuple[list[list[int]], tuple] | None:
    """U_S with rows like the decoys' that generate Z^d, and its left structure."""
    for _ in range(_ATTEMPTS):
        # Drawn exactly like the decoy rows (k > d), so rows do not give S away.
        rows = _unimodular(rng, d, bound) if k == d else _decoy_rows(rng, k, d, bound, set())
        structure = _left_structure(flint.fmpz_mat(rows))
        if structure is not None:
            return rows, structure
    return None


def _down_block(rng, structure, target: list[list[int]], bound: int) -> list[list[int]] | None:
    """W_S (d × k) with ``W_S·U_S = target``, dense and of the decoys' size.

    The short solution is perturbed by random combinations of the left
    kernel basis, with coefficients in ``[−s, s]`` for spreads s from 1 up
    to about bound/2 (a short kernel needs large coefficients to reach the
    decoys' size). Among the candidates with no zero column, the one with
    the least overshoot above the larger of bound and the short solution's
    largest entry wins, ties broken by the mean |entry| closest to a
    uniform decoy's.
    """
    left, kernel = structure
    base = _rows(flint.fmpz_mat(target) * left)
    short = np.array([_reduce_mod_lattice(row, kernel) for row in base], dtype=object)
    cap = max(bound, int(np.abs(short).max()))
    goal = bound * (bound + 1) / (2 * bound + 1)  # mean |x| for x uniform in [−bound, bound]
    candidates = [short]
    if kernel is not None:
        basis = np.array(_rows(kernel), dtype=object)
        spreads = sorted({1, 2, 3} | {max(1, round(bound * f)) for f in (0.1, 0.2, 0.35, 0.5)})
        for attempt in range(96):
            spread = spreads[attempt % len(spreads)]
            coeffs = rng.integers(-spread, spread + 1, size=(short.shape[0], basis.shape[0])).astype(object)
            candidates.append(short + coeffs.dot(basis))
    best, best_score = None, None
    for block in candidates:
        size = np.abs(block)
        if not size.any(axis=0).all():
            continue
        score = (max(0, int(size.max()) - cap), abs(float(size.sum()) / size.size - goal))
        if best_score is None or score < best_score:
            best, best_score = block, score
    return None if best is None else [[int(v) for v in row] for row in best]


def _planted_exact(rng, d, n, k, bound, activation, biases, skip_values, q, params) -> Instance:
    """Draw U_S, W_S and decoys; shuffle; verify S exactly."""
    _check_room(d, n, bound)
    c = activations.get(activation).c
    values = skip_values if skip_values is not None else _fractions(_identity(d))
    target = [[_exact_int(-q * q * v / c) for v in row] for row in values]
    for _ in range(_ATTEMPTS):
        drawn = _planted_rows(rng, k, d, bound)
        if drawn is None:
            raise InputError("range", f"could not draw {k} non-collinear rows generating Z^{d} in [−{bound}, {bound}]; raise --range")
        up_rows, structure = drawn
        down_block = _down_block(rng, structure, target, bound)
        if down_block is not None:
            break
    else:
        raise RuntimeError("could not draw planted down weights with nonzero columns")
    down_columns = [list(col) for col in zip(*down_block)]
    mean = sum(abs(v) for col in down_columns for v in col) / (d * k)
    # Decoy down weights get the planted columns' magnitude (uniform in
    # [−R', R'] has mean |x| ≈ R'/2), so size does not give S away.
    down_bound = max(bound, math.ceil(2 * mean))
    taken = {direction(row) for row in up_rows}
    up_rows = up_rows + _decoy_rows(rng, n - k, d, bound, taken)
    down_columns = down_columns + _nonzero_columns(rng, n - k, d, down_bound)
    order = [int(v) for v in rng.permutation(n)]
    index_set = sorted(position for position, unit in enumerate(order) if unit < k)
    arrays = {
        "W_up": _int_array([up_rows[u] for u in order]),
        "W_down": _int_array([list(r) for r in zip(*[down_columns[u] for u in order])]),
        "skip": _skip_array(skip_values, q),
    }
    arrays.update(_biases(rng, biases, n, d, bound))
    meta = json.loads(params)
    meta["decoy_down_range"] = down_bound
    instance = Instance(**arrays, activation=activation, denominator=q,
                        metadata={"planted_S": np.array(index_set, dtype=np.int64), "params": _dump(meta)},
                        source=f"construct {meta['family']}")
    return _checked(instance, index_set, nondegenerate=d >= 2)


def _exact_int(value: Fraction) -> int:
    if value.denominator != 1:
        raise RuntimeError(f"target {value} is not integral: denominator rule broken")
    return int(value)


def _biases(rng, biases: bool, n: int, d: int, bound: int) -> dict:
    if not biases:
        return {}
    return {"b_up": rng.integers(-bound, bound + 1, size=n).astype(np.int64),
            "b_down": rng.integers(-bound, bound + 1, size=d).astype(np.int64)}


def _checked(instance: Instance, index_set, tol=None, nondegenerate=True) -> Instance:
    """Refuse to return a planted instance whose S fails the exact verifier."""
    if not verify(instance, index_set, tol=tol).holds:
        raise RuntimeError(f"bug: planted S = {list(index_set)} does not satisfy (★) exactly")
    if nondegenerate and not find_degeneracy(instance).nondegenerate:
        raise RuntimeError(f"bug: planted instance is {find_degeneracy(instance).describe()}")
    return instance


def _random_exact(rng, d, n, bound, activation, biases, skip_values, q, params) -> Instance:
    """Nondegenerate uniform integers; for small n, redrawn until no S exists."""
    _check_room(d, n, bound)
    for _ in range(_ATTEMPTS):
        arrays = {
            "W_up": _int_array(_decoy_rows(rng, n, d, bound, set())),
            "W_down": _int_array([list(r) for r in zip(*_nonzero_columns(rng, n, d, bound))]),
            "skip": _skip_array(skip_values, q),
        }
        arrays.update(_biases(rng, biases, n, d, bound))
        instance = Instance(**arrays, activation=activation, denominator=q, metadata={"params": params},
                            source="construct random")
        if n > BRUTE_CHECK_WIDTH or not absorbing_sets_brute(instance):
            return instance
    raise InputError("range", f"every draw with range {bound} had an absorbing S; raise --range or --d")


def _float_skip(skip_values, d: int) -> np.ndarray:
    values = skip_values if skip_values is not None else _fractions(_identity(d))
    return np.array([[float(v) for v in row] for row in values])


def _random_float(rng, d, n, activation, biases, skip_values, params) -> Instance:
    arrays = {"W_up": rng.standard_normal((n, d)), "W_down": rng.standard_normal((d, n)),
              "skip": None if skip_values is None else _float_skip(skip_values, d)}
    if biases:
        arrays.update(b_up=rng.standard_normal(n), b_down=rng.standard_normal(d))
    instance = Instance(**arrays, activation=activation, metadata={"params": params}, source="construct random")
    if not find_degeneracy(instance).nondegenerate:
        raise RuntimeError("bug: Gaussian weights came out degenerate")
    return instance


def _float_planted_draw(rng, d, n, k, act, biases, skip_values, params):
    """One Gaussian draw with W_S = T·U_S⁺ + Y·N (N: left null space of U_S).

    U_S⁺ and N are computed in exact rationals from the float64 draw and
    W_S is rounded to float64 once, at the end: the same seed gives the same
    bytes whatever BLAS numpy uses.
    """
    A = _float_skip(skip_values, d)
    up_block = rng.standard_normal((k, d))
    mixing = rng.standard_normal((d, k - d))
    down_block = _exact_float_down_block(up_block, mixing, -A / float(act.c))
    up = np.vstack([up_block, rng.standard_normal((n - k, d))])
    down = np.hstack([down_block, rng.standard_normal((d, n - k))])
    order = rng.permutation(n)
    index_set = sorted(int(p) for p, unit in enumerate(order) if unit < k)
    arrays = {"W_up": up[order], "W_down": down[:, order], "skip": None if skip_values is None else A}
    if biases:
        arrays.update(b_up=rng.standard_normal(n), b_down=rng.standard_normal(d))
    metadata = {"planted_S": np.array(index_set, dtype=np.int64), "params": params}
    return Instance(**arrays, activation=act.name, metadata=metadata, source="construct float_planted"), index_set


def _exact_float_down_block(up_block: np.ndarray, mixing: np.ndarray, target: np.ndarray) -> np.ndarray:
    """``round(T·U⁺ + Y·N)`` from exact rationals: U⁺ = (UᵀU)⁻¹Uᵀ, N a left null space basis (rows scaled to max 1)."""
    k, d = up_block.shape
    up = fmpq_matrix(up_block)
    pseudo = (up.transpose() * up).inv() * up.transpose()
    denominator = math.lcm(*(int(up[i, j].q) for i in range(k) for j in range(d)))
    integral = flint.fmpz_mat([[int(up[i, j] * denominator) for i in range(k)] for j in range(d)])  # d × k
    null, nullity = integral.nullspace()  # columns: vectors v with Uᵀv = 0
    rows = []
    for j in range(nullity):
        column = [null[i, j] for i in range(k)]
        scale = max(abs(v) for v in column)
        rows.append([flint.fmpq(v) / scale for v in column])
    exact = fmpq_matrix(np.atleast_2d(target)) * pseudo
    if rows:
        exact += fmpq_matrix(np.atleast_2d(mixing)) * flint.fmpq_mat(rows)
    return np.array([[_to_float(exact[r, c]) for c in range(k)] for r in range(d)], dtype=np.float64)


def _to_float(value: flint.fmpq) -> float:
    return float(as_fraction(value))  # correctly rounded


# ============================================================== degenerate
def _make_degenerate(rng, base: Instance, kind: str) -> Instance:
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
    return _checked(instance, index_set, nondegenerate=False)


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


# =================================================== gated / homogeneous
def _impossible(family, act, d, n, bound, seed, biases, skip, dtype, trap, target_class="bias-free") -> Instance:
    """Shared body of :func:`gated` and :func:`homogeneous`."""
    from indexset.classes import AFFINE, check_class

    target_class = check_class(target_class)
    _check_common(d=d, n=n, k=None, bound=bound, seed=seed, min_d=1)
    _check_choice("dtype", dtype, DTYPES)
    if trap and dtype != "int":
        raise InputError("trap", "a trap needs integer weights")
    if trap and d < 2:
        raise InputError("trap", "a trap needs d ≥ 2")
    if trap and biases and target_class == AFFINE:
        raise InputError("biases", "with biases inside σ a block may absorb into the affine class: a trap for it has none")
    params = _params(family, seed, activation=act.name, d=d, n=n, range=bound, biases=bool(biases),
                     skip=skip, dtype=dtype, trap=bool(trap), **({"class": target_class} if trap else {}))
    twin = _relu_twin(d, n, bound, seed, biases, skip, dtype, trap)
    metadata = {"params": params}
    if trap:
        metadata["trap_S"] = np.array(twin.planted, dtype=np.int64)
        metadata["trap_class"] = np.array(target_class)
    for attempt in range(_ATTEMPTS):
        rng = np.random.default_rng([seed, 1] if attempt == 0 else [seed, 1, attempt])  # the gate gets its own stream
        gate = rng.integers(-bound, bound + 1, size=(n, d)) if dtype == "int" else rng.standard_normal((n, d))
        instance = Instance(twin.W_up, twin.W_down, twin.skip, twin.b_up, twin.b_down, activation=act.name,
                            W_gate=gate if act.gated else None, denominator=twin.denominator, metadata=metadata,
                            source=f"construct {family}")
        if not (trap and target_class == AFFINE) or not _theorem_violations(instance):
            return instance
    raise InputError("range", f"no draw gave a trap with pairwise non-collinear rows in [−{bound}, {bound}]^{d}; raise --range")


def _theorem_violations(instance: Instance) -> list[str]:
    from indexset.theory.flips import violations

    return violations(instance)


def _gated_pairs(act, d, n, bound, seed, biases, skip) -> Instance:
    """d pairs of units with opposite gate rows and parallel down columns that reproduce A·x (MATH.md §8.6)."""
    _check_common(d=d, n=n, k=None, bound=bound, seed=seed, min_d=1)
    if n < 2 * d:
        raise InputError("n", f"pairs need n ≥ 2d = {2 * d}, got n = {n}")
    rng = np.random.default_rng([seed, 2])
    skip_values = _skip_values(rng, skip, d, None)
    q = _denominator(skip_values, None, None)
    A = fmpq_matrix(skip_values or _identity(d))
    U = _unimodular(rng, d, max(1, min(bound, 3)))
    columns = A * flint.fmpz_mat(U).inv()  # A = columns·U, so Σ_p columns[:,p]·u_pᵀ = A
    gate, down = [], []
    for p in range(d):
        mu = int(rng.choice([-2, -1, 1, 2]))
        column = [_exact_int(as_fraction(columns[r, p]) * q) for r in range(d)]
        gate += [U[p], [-v for v in U[p]]]
        down += [column, [mu * v for v in column]]
    for _ in range(n - 2 * d):
        gate.append(_random_row(rng, d, bound))
        down.append([q * v for v in _random_nonzero(rng, d, bound)])
    order = rng.permutation(n)
    pairs = sorted(sorted(int(np.flatnonzero(order == 2 * p + k)[0]) for k in (0, 1)) for p in range(d))
    up = rng.integers(-bound, bound + 1, size=(n, d))
    arrays = {"W_up": up[order] * q, "W_down": _int_array([[down[int(i)][r] for i in order] for r in range(d)]),
              "W_gate": _int_array([gate[int(i)] for i in order]) * q, "skip": _skip_array(skip_values, q)}
    arrays.update({k: v * q for k, v in _biases(rng, biases, n, d, bound).items()})
    params = _params("gated", seed, activation=act.name, d=d, n=n, range=bound, biases=bool(biases), skip=skip, pairs=True)
    metadata = {"params": params, "pairs": np.array(pairs, dtype=np.int64)}
    return Instance(**arrays, activation=act.name, denominator=q, metadata=metadata, source="construct gated --pairs")


def _relu2_collinear(d, n, bound, seed, skip) -> Instance:
    """Four ReLU² units on each of d lines, two merging on each side (MATH.md §8.6)."""
    _check_common(d=d, n=n, k=None, bound=bound, seed=seed, min_d=1)
    if n < 4 * d:
        raise InputError("n", f"collinear units need n ≥ 4d = {4 * d}, got n = {n}")
    rng = np.random.default_rng([seed, 3])
    skip_values = _skip_values(rng, skip, d, None)
    q = _denominator(skip_values, None, None)
    U = _unimodular(rng, d, max(1, min(bound, 3)))
    rows, down = [], []
    for p in range(d):
        for scale in (1, 2, -1, -3):
            rows.append([scale * v for v in U[p]])
            down.append(_random_nonzero(rng, d, bound))
    lines = {direction(row) for row in rows}
    for _ in range(_ATTEMPTS * n):
        if len(rows) == n:
            break
        row = _random_row(rng, d, bound)
        if any(row) and direction(row) not in lines:
            lines.add(direction(row))
            rows.append(row)
            down.append(_random_nonzero(rng, d, bound))
    while len(rows) < n:  # no new line left (d = 1): more units on the first one, which merge
        rows.append([int(rng.choice([-2, -1, 1, 2])) * v for v in U[0]])
        down.append(_random_nonzero(rng, d, bound))
    order = rng.permutation(n)
    params = _params("homogeneous", seed, activation="relu2", d=d, n=n, range=bound, skip=skip, collinear=True)
    return Instance(_int_array([rows[int(i)] for i in order]), _int_array([[down[int(i)][r] for i in order] for r in range(d)]),
                    _skip_array(skip_values, q), activation="relu2", denominator=q, metadata={"params": params},
                    source="construct homogeneous --collinear")


def _random_nonzero(rng, d: int, bound: int) -> list[int]:
    while True:
        column = [int(v) for v in rng.integers(-bound, bound + 1, size=d)]
        if any(column):
            return column


def _relu_twin(d, n, bound, seed, biases, skip, dtype, trap) -> Instance:
    """Up and down weights of a gated/homogeneous block, drawn as a ReLU block."""
    if trap:
        return planted(d=d, n=n, range=bound, seed=seed, biases=biases, skip=skip)
    rng = np.random.default_rng(seed)
    skip_values = _skip_values(rng, skip, d, None)
    if dtype == "float":
        arrays = {"W_up": rng.standard_normal((n, d)), "W_down": rng.standard_normal((d, n)),
                  "skip": None if skip_values is None else _float_skip(skip_values, d)}
        if biases:
            arrays.update(b_up=rng.standard_normal(n), b_down=rng.standard_normal(d))
        return Instance(**arrays)
    q = _denominator(skip_values, None, None)
    arrays = {"W_up": rng.integers(-bound, bound + 1, size=(n, d)),
              "W_down": _int_array([list(r) for r in zip(*_nonzero_columns(rng, n, d, bound))]),
              "skip": _skip_array(skip_values, q)}
    arrays.update(_biases(rng, biases, n, d, bound))
    return Instance(**arrays, denominator=q)
