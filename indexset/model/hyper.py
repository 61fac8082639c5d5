"""Hyper-connection layers with static coefficients: the file format and the effective block (MATH.md §3).

A hyper-connection (HC, mHC) layer keeps s residual streams of width C,
``X ∈ R^{s×C}``, flattened stream by stream to ``x ∈ R^{sC}``. With static
coefficients it is the block

    f(x) = (H_res ⊗ I_C) x + (H_postᵀ ⊗ I_C) W_down σ(W_up (H_pre ⊗ I_C) x + b_up)
           + (H_postᵀ ⊗ I_C) b_down

on R^{sC}: skip ``H_res ⊗ I_C``, read projection ``W_up (H_pre ⊗ I_C)``
(n × sC) and write projection ``(H_postᵀ ⊗ I_C) W_down`` (sC × n).

File format (``.npz``, read without pickle):

========== ========= ==============================================
key        shape     meaning
========== ========= ==============================================
H_res      (s, s)    residual mixing; must be invertible
H_pre      (1, s)    read weights of the streams (``(s,)`` accepted)
H_post     (1, s)    write weights of the streams (``(s,)`` accepted)
W_up       (n, C)    up projection of the MLP
W_down     (C, n)    down projection of the MLP
b_up       (n,)      optional up bias
b_down     (C,)      optional down bias (written through H_post)
W_gate     (n, C)    gate projection, gated activations only
activation ()        as in an instance file (default relu)
denominator ()       every array above holds numerators over it
========== ========= ==============================================

A ``skip`` key is refused (the skip is ``H_res ⊗ I_C``). Other keys are
metadata. :func:`load_hyper` returns the effective :class:`Instance` on
R^{sC}, marked with the metadata key ``hyper_connection``.

The rank argument (:mod:`indexset.theory.rank`)
-----------------------------------------------
The write projection has rank ≤ rank(W_down) ≤ C, so for every S,
``c·W_down'[:,S]·W_up'[S,:]`` has rank ≤ C < sC when s ≥ 2, while
``−(H_res ⊗ I_C)`` has rank sC: no index set S satisfies (★), without any
search. With nondegenerate effective weights (★) is necessary (MATH.md §3,
invertible skip), so the block is not absorbable. On degenerate effective
weights (e.g. C = 1, where every row of the read projection lies on the
line of H_pre) (★) is not necessary and the exact §7 decision is used
instead; wide enough such blocks do absorb their skip.
"""

from __future__ import annotations

import json
import math

import numpy as np

from indexset.errors import InputError
from indexset.model.instance import Instance, _denominator, _scalar_string, read_npz
from indexset.rational import fmpz_matrix, integer_numerators

HC_KEYS = ("H_res", "H_pre", "H_post")
"""Keys that make a file a hyper-connection file."""

MLP_KEYS = ("W_up", "W_down", "b_up", "b_down", "W_gate")
CONTROL = ("activation", "denominator")
MARK = "hyper_connection"
"""Metadata key of an effective HC instance (JSON: s, C, n)."""

_INT64 = 2**63 - 1


def is_hyper(arrays: dict) -> bool:
    """Whether a file's arrays describe a hyper-connection layer."""
    return any(key in arrays for key in HC_KEYS)


# ================================================================ loading
def load_hyper(path) -> Instance:
    """Read an HC file and return the effective block on R^{sC}.

    Raises
    ------
    InputError
        Missing keys, bad shapes, a ``skip`` key, a singular H_res (with
        the reason, e.g. a doubly stochastic matrix with all entries 1/s),
        or effective weights that cannot be stored exactly.
    """
    source = str(path)
    return effective_instance(read_npz(source), source)


def effective_instance(arrays: dict, source: str = "<memory>") -> Instance:
    """The effective :class:`Instance` of an HC layer given as arrays (see module doc)."""
    _check_keys(arrays, source)
    denominator = _denominator(arrays, source)
    activation = _scalar_string(arrays, "activation", "relu", source)
    parts = _validated(arrays, source)
    s, C, n = parts["H_res"].shape[0], parts["W_up"].shape[1], parts["W_up"].shape[0]
    exact = {key: integer_numerators(value, denominator) for key, value in parts.items()}
    _check_invertible(exact["H_res"], s, source)
    effective = _effective_exact(exact, C)
    stored, den = _store(effective, parts, denominator, source)
    metadata = {key: value for key, value in arrays.items() if key not in HC_KEYS + MLP_KEYS + CONTROL}
    metadata[MARK] = {"s": s, "C": C, "n": n, "effective_d": s * C}
    return Instance(
        W_up=stored["W_up"], W_down=stored["W_down"], skip=stored["skip"], b_up=stored.get("b_up"),
        b_down=stored.get("b_down"), W_gate=stored.get("W_gate"), activation=activation,
        denominator=den, metadata=metadata, source=source,
    )


def _check_keys(arrays: dict, source: str) -> None:
    missing = [key for key in HC_KEYS + ("W_up", "W_down") if key not in arrays]
    if missing:
        raise InputError(source, f"hyper-connection file misses {', '.join(missing)} (needs H_res, H_pre, H_post, W_up, W_down)")
    if "skip" in arrays:
        raise InputError(source, "a hyper-connection file takes its skip from H_res (H_res ⊗ I_C): remove the key 'skip'")
    if "block" in arrays:
        raise InputError(source, "a hyper-connection file is skip-connected by H_res: remove the key 'block'")


def _validated(arrays: dict, source: str) -> dict:
    """The numeric arrays with shapes checked (H_pre, H_post as (1, s))."""
    parts = {}
    for key in HC_KEYS + MLP_KEYS:
        if key not in arrays:
            continue
        value = np.asarray(arrays[key])
        if value.dtype.kind not in "iuf":
            raise InputError(source, f"array {key} has dtype {value.dtype}; expected integers or floats")
        if value.dtype.kind == "f" and not np.isfinite(value).all():
            raise InputError(source, f"array {key} contains NaN or Inf")
        if key in ("H_pre", "H_post") and value.ndim == 1:
            value = value.reshape(1, -1)
        parts[key] = value
    s = parts["H_res"].shape[0] if parts["H_res"].ndim == 2 else -1
    n, C = parts["W_up"].shape if parts["W_up"].ndim == 2 else (-1, -1)
    want = {"H_res": (s, s), "H_pre": (1, s), "H_post": (1, s), "W_up": (n, C), "W_down": (C, n),
            "b_up": (n,), "b_down": (C,), "W_gate": (n, C)}
    if s < 1 or n < 1 or C < 1:
        raise InputError(source, f"H_res must be a nonempty square matrix and W_up a nonempty (n, C) matrix, got {parts['H_res'].shape} and {parts['W_up'].shape}")
    for key, value in parts.items():
        if value.shape != want[key]:
            raise InputError(source, f"array {key} has shape {value.shape}, expected {want[key]} (s = {s}, C = {C}, n = {n})")
    return parts


def _check_invertible(exact_res, s: int, source: str) -> None:
    """Refuse a singular H_res, saying why (MATH.md §3: a singular skip is outside the theorem)."""
    numerators, den = exact_res
    rank = fmpz_matrix(numerators).rank()
    if rank == s:
        return
    values = [[int(v) for v in row] for row in numerators]
    stochastic = (all(v >= 0 for row in values for v in row)
                  and all(sum(row) == den for row in values)
                  and all(sum(col) == den for col in zip(*values)))
    what = "H_res is doubly stochastic and singular" if stochastic else "H_res is singular"
    raise InputError(
        source,
        f"{what} (rank {rank} < s = {s}), so the skip H_res ⊗ I_C is singular and the reduction "
        "to the identity skip (MATH.md §3) does not apply; a doubly stochastic matrix can be "
        "singular (e.g. all entries 1/s, where Sinkhorn normalisation of a constant matrix ends)",
    )


def _effective_exact(exact: dict, C: int) -> dict:
    """Effective numerators (object arrays) and their denominators, by Kronecker products."""
    eye = np.eye(C, dtype=np.int64).astype(object)
    pre, den_pre = exact["H_pre"]
    post, den_post = exact["H_post"]
    out = {
        # W_up (H_pre ⊗ I_C): row i is H_pre ⊗ W_up[i] (stream-major).
        "W_up": (np.kron(pre, exact["W_up"][0]), den_pre * exact["W_up"][1]),
        # (H_postᵀ ⊗ I_C) W_down: column i is H_post ⊗ W_down[:, i].
        "W_down": (np.kron(post.reshape(-1, 1), exact["W_down"][0]), den_post * exact["W_down"][1]),
        "skip": (np.kron(exact["H_res"][0], eye), exact["H_res"][1]),
    }
    if "b_up" in exact:
        out["b_up"] = exact["b_up"]
    if "b_down" in exact:
        out["b_down"] = (np.kron(post.reshape(-1), exact["b_down"][0]), den_post * exact["b_down"][1])
    if "W_gate" in exact:
        out["W_gate"] = (np.kron(pre, exact["W_gate"][0]), den_pre * exact["W_gate"][1])
    return out


def _store(effective: dict, parts: dict, denominator: int, source: str) -> tuple[dict, int]:
    """Exact storage: int64 numerators over one denominator, or exact float64 values."""
    common = math.lcm(*[den for _, den in effective.values()])
    scaled = {key: num * (common // den) for key, (num, den) in effective.items()}
    if all(abs(int(v)) <= _INT64 for num in scaled.values() for v in num.ravel()):
        return {key: num.astype(np.int64) for key, num in scaled.items()}, common
    floats = _float_values(parts, denominator)
    if floats is not None and all(_exact_float(floats[key], num, den) for key, (num, den) in effective.items()):
        return floats, 1
    raise InputError(
        source,
        "the effective weights (products of H_pre/H_post with W_up/W_down) fit neither int64 "
        "numerators over one denominator nor exact float64 values; store the coefficients as "
        "float32 values or small integers over a denominator",
    )


def _float_values(parts: dict, denominator: int) -> dict | None:
    """The effective arrays computed in float64 (exactness is checked by the caller)."""
    if denominator != 1:
        return None
    f = {key: np.asarray(value, dtype=np.float64) for key, value in parts.items()}
    C = f["W_up"].shape[1]
    out = {"W_up": np.kron(f["H_pre"], f["W_up"]), "W_down": np.kron(f["H_post"].reshape(-1, 1), f["W_down"]),
           "skip": np.kron(f["H_res"], np.eye(C))}
    if "b_up" in f:
        out["b_up"] = f["b_up"]
    if "b_down" in f:
        out["b_down"] = np.kron(f["H_post"].reshape(-1), f["b_down"])
    if "W_gate" in f:
        out["W_gate"] = np.kron(f["H_pre"], f["W_gate"])
    return out


def _exact_float(values: np.ndarray, numerators: np.ndarray, den: int) -> bool:
    """Whether float64 ``values`` equal ``numerators / den`` exactly."""
    got, got_den = integer_numerators(values)
    return all(int(a) * den == int(b) * got_den for a, b in zip(got.ravel(), numerators.ravel()))


# ================================================================ theory
def hyper_info(instance: Instance) -> dict | None:
    """The HC shape (s, C, n) of an effective instance, or None for other blocks."""
    value = instance.metadata.get(MARK)
    if value is None:
        return None
    if isinstance(value, dict):
        return value
    try:
        return json.loads(str(np.asarray(value).item()))
    except (ValueError, TypeError):
        return None
