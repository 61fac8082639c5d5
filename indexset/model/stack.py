"""Deep stacks of residual blocks (issue 6, MATH.md §4).

File format
-----------
One ``.npz`` holds L blocks of the same width n on R^d as arrays with a
leading L axis (read without pickle):

========== ============ =============================================
key        shape        meaning
========== ============ =============================================
W_up       (L, n, d)    up projections
W_down     (L, d, n)    down projections
skip       (L, d, d)    optional skips, each invertible (default I)
b_up       (L, n)       optional up biases
b_down     (L, d)       optional down biases
W_gate     (L, n, d)    gate projections (gated activations only)
activation ()           one activation for every block (default relu)
denominator ()          every weight array holds numerators over it
block      ()           ``residual_free`` for a witness stack
========== ============ =============================================

The stack computes ``x ↦ f_L(… f_1(x))``. Per-layer keys with a suffix
(``W_up_0``, ``W_up_1``, …) are *not* a stack format and are refused with a
clear message, as is any mixture of stacked (3-D) and single-block (2-D)
weight arrays. Other keys are metadata (``planted_S`` of shape (L, k) for
constructed stacks).

Decision
--------
- ReLU², ReGLU, SwiGLU, GeGLU with no bias inside σ and none between
  blocks: ``not_absorbable`` by the depth corollary (MATH.md §4).
- ReLU/GELU family: each block is solved on its own. If every block
  absorbs, the witness stack (one witness per block) is the answer, checked
  by a forward pass of the whole stack (exact for ReLU). Otherwise the answer
  is ``unknown`` naming the blocks that fail on their own: deep compositions
  are an open problem (block-wise absorption is sufficient, nothing stronger
  is known). A stack of one block is that block.
"""

from __future__ import annotations

import math
import os
import re
import time
from dataclasses import dataclass, field
from fractions import Fraction

import numpy as np

from indexset.model.activations import GATED, HOMOGENEOUS, ODD_LINEAR, UNCOVERED
from indexset.classes import AFFINE, BIAS_FREE, check_class, phrase
from indexset.errors import InputError
from indexset.model.instance import RESIDUAL_FREE, WEIGHT_KEYS, Instance, _denominator, _scalar_string, exact_value, read_npz, write_npz
from indexset.result import ABSORBABLE, NOT_ABSORBABLE, UNKNOWN, Result

SUFFIX = re.compile(r"^(W_up|W_down|skip|b_up|b_down|W_gate)_(\d+)$")
"""Per-layer suffix keys, refused with an explanation."""

_NDIM = {"W_up": 3, "W_down": 3, "skip": 3, "b_up": 2, "b_down": 2, "W_gate": 3}
_INT64 = 2**63 - 1


def suffix_keys(arrays: dict) -> list[str]:
    """Keys in the refused ``W_up_0`` style."""
    return sorted(key for key in arrays if SUFFIX.match(key))


def is_stack(arrays: dict) -> bool:
    """Whether the arrays use the stacked layout (a 3-D ``W_up``)."""
    return "W_up" in arrays and np.asarray(arrays["W_up"]).ndim == 3


@dataclass(eq=False)
class Stack:
    """L blocks of one width and activation, applied in order.

    Parameters
    ----------
    blocks : list of Instance
        Validated blocks, all of the same n, d and activation, all
        skip-connected or all residual-free.
    metadata : dict
        Extra keys, kept verbatim.
    source : str
        Where the stack came from, for messages.
    """

    blocks: list
    metadata: dict = field(default_factory=dict)
    source: str = "<memory>"

    def __post_init__(self) -> None:
        if not self.blocks:
            raise InputError(self.source, "a stack needs at least one block (L ≥ 1)")
        first = self.blocks[0]
        for index, block in enumerate(self.blocks):
            if (block.n, block.d, block.activation, block.residual_free) != (first.n, first.d, first.activation, first.residual_free):
                raise InputError(self.source, f"block {index} differs from block 0 in width, dimension, activation or kind")

    # ----------------------------------------------------------- shape
    @property
    def L(self) -> int:
        """Number of blocks."""
        return len(self.blocks)

    @property
    def n(self) -> int:
        """Width of every block."""
        return self.blocks[0].n

    @property
    def d(self) -> int:
        """Dimension of every block."""
        return self.blocks[0].d

    @property
    def activation(self) -> str:
        """The activation shared by every block."""
        return self.blocks[0].activation

    @property
    def act(self):
        """The :class:`~indexset.model.activations.Activation` of every block."""
        return self.blocks[0].act

    @property
    def residual_free(self) -> bool:
        """Whether this is a stack of residual-free blocks (a witness stack)."""
        return self.blocks[0].residual_free

    @property
    def planted(self) -> list | None:
        """Planted index sets per block (metadata ``planted_S``, shape (L, k)), if any."""
        value = self.metadata.get("planted_S")
        if value is None:
            return None
        return [[int(i) for i in row] for row in np.asarray(value).reshape(self.L, -1)]

    # ----------------------------------------------------------- files
    @classmethod
    def load(cls, path) -> "Stack":
        """Read and validate a stack file (see the module doc)."""
        source = str(path)
        return cls.from_arrays(read_npz(source), source)

    @classmethod
    def from_arrays(cls, arrays: dict, source: str = "<memory>") -> "Stack":
        """Build a stack from stacked arrays, refusing suffix keys and mixtures."""
        _refuse_other_layouts(arrays, source)
        L = _layers(arrays, source)
        activation = _scalar_string(arrays, "activation", "relu", source)
        block = _scalar_string(arrays, "block", "", source)
        if block not in ("", RESIDUAL_FREE):
            raise InputError(source, f"block must be {RESIDUAL_FREE!r} when given, got {block!r}")
        denominator = _denominator(arrays, source)
        blocks = [
            Instance(**{key: (arrays[key][layer] if key in arrays else None) for key in WEIGHT_KEYS},
                     activation=activation, denominator=denominator, residual_free=block == RESIDUAL_FREE,
                     source=f"{source} (block {layer})")
            for layer in range(L)
        ]
        metadata = {k: v for k, v in arrays.items() if k not in WEIGHT_KEYS + ("activation", "denominator", "block")}
        return cls(blocks, metadata, source)

    def to_arrays(self) -> dict:
        """Every key this stack writes to its file (one denominator for all blocks)."""
        arrays, denominator = _stacked(self.blocks, self.source)
        arrays["activation"] = np.array(self.activation)
        if denominator != 1:
            arrays["denominator"] = np.array(denominator, dtype=np.int64)
        if self.residual_free:
            arrays["block"] = np.array(RESIDUAL_FREE)
        for key, value in self.metadata.items():
            arrays[key] = np.asarray(value)
        return arrays

    def save(self, path: str | os.PathLike) -> None:
        """Write the stack atomically."""
        write_npz(path, self.to_arrays())


def _refuse_other_layouts(arrays: dict, source: str) -> None:
    suffixed = suffix_keys(arrays)
    if suffixed:
        mixed = " mixed with stacked keys" if "W_up" in arrays else ""
        raise InputError(
            source,
            f"per-layer keys {', '.join(suffixed[:4])}{'…' if len(suffixed) > 4 else ''}{mixed}: a stack file "
            "holds each weight as one array with a leading L axis (W_up of shape (L, n, d), W_down (L, d, n)); "
            "suffix keys are not read",
        )
    for key, ndim in _NDIM.items():
        if key in arrays and np.asarray(arrays[key]).ndim != ndim:
            raise InputError(
                source,
                f"W_up has shape {np.asarray(arrays['W_up']).shape} (3-D: a stack with a leading L axis) but array "
                f"{key} has shape {np.asarray(arrays[key]).shape}; in a stack file {key} is {ndim}-D: stacked "
                "and single-block arrays cannot be mixed",
            )


def _layers(arrays: dict, source: str) -> int:
    for key in ("W_up", "W_down"):
        if key not in arrays:
            raise InputError(source, f"missing required array {key}")
    L = int(np.asarray(arrays["W_up"]).shape[0])
    for key in _NDIM:
        if key in arrays and np.asarray(arrays[key]).shape[0] != L:
            raise InputError(source, f"array {key} has {np.asarray(arrays[key]).shape[0]} layers, W_up has {L}")
    if L == 0:
        raise InputError(source, "a stack needs at least one block (L ≥ 1)")
    return L


def _stacked(blocks: list, source: str) -> tuple[dict, int]:
    """Stack the blocks' arrays exactly under one denominator."""
    keys = [key for key in WEIGHT_KEYS if any(getattr(b, key) is not None for b in blocks)]
    if blocks[0].residual_free:
        keys = [key for key in keys if key != "skip"]
    same = len({b.denominator for b in blocks}) == 1 and all(
        len({getattr(b, key).dtype.kind if getattr(b, key) is not None else None for b in blocks}) == 1 for key in keys
    ) and all(getattr(b, key) is not None for b in blocks for key in keys)
    if same:
        return {key: np.stack([getattr(b, key) for b in blocks]) for key in keys}, blocks[0].denominator
    # Mixed storage: exact values under the least common denominator.
    values = {key: [exact_value(b, key) for b in blocks] for key in keys}
    common = 1
    for arrays in values.values():
        for array in arrays:
            for v in array.ravel():
                common = math.lcm(common, Fraction(v).denominator)
    numerators = {key: np.stack([np.vectorize(lambda v: int(v * common), otypes=[object])(a) for a in arrays])
                  for key, arrays in values.items()}
    if all(abs(int(v)) <= _INT64 for a in numerators.values() for v in a.ravel()):
        return {key: a.astype(np.int64) for key, a in numerators.items()}, common
    if all(Fraction(float(v)) == v for arrays in values.values() for a in arrays for v in a.ravel()):
        return {key: np.stack([a.astype(np.float64) for a in arrays]) for key, arrays in values.items()}, 1
    raise InputError(source, "the blocks' exact values fit neither int64 numerators over one denominator nor float64")


# ================================================================ forward
def forward_exact(stack: Stack, points: list) -> list:
    """Evaluate a ReLU / leaky-ReLU stack exactly on rational points."""
    from indexset.exact.witness import forward_exact as block_forward

    for block in stack.blocks:
        points = block_forward(block, points)
    return points


def forward_float(stack: Stack, points: np.ndarray) -> np.ndarray:
    """Evaluate a stack in float64 (one row per point)."""
    from indexset.exact.witness import forward_float as block_forward

    x = np.asarray(points, dtype=np.float64)
    for block in stack.blocks:
        x = block_forward(block, x)
    return x


def check_stack_forward(original: Stack, candidate: Stack, points: int = 16, seed: int = 0):
    """Compare two stacks on random points: exactly for ReLU/leaky ReLU.

    Returns
    -------
    indexset.exact.witness.ForwardCheck
    """
    from indexset.exact.witness import FLOAT_TOLERANCE, ForwardCheck, random_points

    xs = random_points(original.d, points, seed)
    rounded = any(bool(b.metadata.get("witness_rounded", False)) for b in candidate.blocks)
    if original.act.exact_forward and not rounded:
        same = forward_exact(original, xs) == forward_exact(candidate, xs)
        return ForwardCheck(same, True, points, 0.0 if same else float("inf"), None)
    x = np.array([[float(v) for v in row] for row in xs])
    f, g = forward_float(original, x), forward_float(candidate, x)
    tolerance = FLOAT_TOLERANCE * _float_scale(original, x, f)
    error = float(np.abs(f - g).max())
    return ForwardCheck(error <= tolerance, False, points, error, float(tolerance), rounded)


def _float_scale(stack: Stack, x: np.ndarray, out: np.ndarray) -> float:
    """Size of the values a float64 pass handles, layer by layer.

    Each block adds rounding errors relative to its input size times its
    gain (skip plus |W_down|·|W_up|); summed over the blocks this stays far
    below the O(1) relative gap of a wrong witness.
    """
    from indexset.exact.witness import forward_float as block_forward

    scale = 1.0 + float(np.abs(out).max())
    for block in stack.blocks:
        down = np.abs(block.float_array("W_down"))
        up = np.abs(block.float_array("W_up"))
        skip = 0.0 if block.residual_free else float(np.abs(block.float_array("skip")).sum(axis=1).max())
        gain = 1.0 + skip + float((down @ up).sum(axis=1).max())
        scale += (1.0 + float(np.abs(x).max())) * gain + float(down.sum())
        x = block_forward(block, x)
    return scale


# ================================================================ decision
def depth_corollary(stack: Stack, target_class: str = BIAS_FREE) -> Result | None:
    """MATH.md §4 depth corollary for impossible activation classes, or None.

    With no bias inside σ and none between blocks, F(0) = 0 and F is
    differentiable at 0 with Jacobian A_L⋯A_1 (invertible); a residual-free
    stack of bias-free blocks (no bias inside σ; output biases allowed) is
    G(0) + O(|x|²) at 0, because its first block is. So the two never
    agree. With biases inside σ of g the argument fails (MATH.md §8.7): for
    the affine class this returns None and the blocks are decided one by one.
    """
    act = stack.act
    if act.kind not in (HOMOGENEOUS, GATED) or target_class != BIAS_FREE:
        return None
    inside = [i for i, b in enumerate(stack.blocks) if b.b_up is not None and np.any(b.b_up != 0)]
    between = [i for i, b in enumerate(stack.blocks[:-1]) if b.b_down is not None and np.any(b.b_down != 0)]
    stages = {"path": "theorem", "classify": act.kind, "layers": stack.L}
    if inside or between:
        reason = (f"{act.name} stack with a bias inside σ (blocks {inside}) or between blocks (blocks {between}): "
                  "the depth corollary of MATH.md §4 needs F(0) = 0, so no theorem decides this stack")
        return Result(UNKNOWN, reason, stages=stages, engine="theorem")
    reason = (
        f"MATH.md §4 depth corollary ({act.name}, L = {stack.L}): with no bias inside σ and none between blocks "
        "the stack F has F(0) = 0 and Jacobian A_L⋯A_1 at 0 (invertible skips), while every stack of "
        f"{phrase(BIAS_FREE)} is G(0) + O(|x|²) at 0 (Jacobian 0); so no stack of L such blocks "
        f"of width n = {stack.n} equals it. Per block: {act.reason}"
    )
    return Result(NOT_ABSORBABLE, reason, stages=stages, engine="theorem", complete=True)


def solve_stack(stack: Stack, *, target_class=AFFINE, time_limit=None, seed=0, engines=None, stop=None, progress=None) -> Result:
    """Decide a stack (see the module doc).

    Parameters
    ----------
    stack : Stack
    target_class : {"affine", "bias-free"}
        Which residual-free blocks the witness stack may use.
    time_limit : float, optional
        Seconds for the whole stack, shared among the blocks.
    seed, engines, stop, progress
        As in :func:`indexset.solver.solve`.

    Returns
    -------
    Result
        ``certificate["blocks"]`` lists each block's status, index set and
        (for §7 positives) witness, from which :func:`witness_stack`
        rebuilds the witness stack.
    """
    start = time.perf_counter()
    if stack.residual_free:
        raise InputError(stack.source, "the stack is residual-free (block = residual_free): there is no skip to absorb")
    target_class = check_class(target_class)
    by_theorem = depth_corollary(stack, target_class)
    if by_theorem is None and stack.act.kind == UNCOVERED:
        from indexset.theory.theorems import theorem_verdict

        by_theorem = theorem_verdict(stack.act, False, start, target_class)
        by_theorem.reason = f"stack of {stack.L} block(s): {by_theorem.reason}"
    if by_theorem is not None:
        by_theorem.time_s = time.perf_counter() - start
        by_theorem.target_class = target_class
        return by_theorem
    results = _solve_blocks(stack, target_class, time_limit, seed, engines, stop, progress, start)
    result = _combine(stack, results)
    result.time_s = time.perf_counter() - start
    result.target_class = target_class
    return result


def _solve_blocks(stack, target_class, time_limit, seed, engines, stop, progress, start) -> list:
    from indexset.solver import solve

    results = []
    for index, block in enumerate(stack.blocks):
        share = None
        if time_limit is not None:
            left = max(0.0, time_limit - (time.perf_counter() - start))
            share = max(left / (stack.L - index), 1e-3)
        results.append(solve(block, target_class=target_class, time_limit=share, seed=seed, engines=engines, stop=stop, progress=progress))
    return results


def _record(result: Result) -> dict:
    record = {"status": result.status, "index_set": result.index_set, "extension": result.extension,
              "reason": result.reason}
    if result.certificate and "witness" in result.certificate:
        record["certificate"] = result.certificate
    return record


def _combine(stack: Stack, results: list) -> Result:
    records = [_record(r) for r in results]
    certificate = {"kind": "blockwise", "blocks": records}
    stages = {"path": "block-wise", "layers": stack.L, "blocks": [r.status for r in results]}
    extension = any(r.extension for r in results)
    if stack.L == 1:
        # One block: its own verdict is the stack's (no composition involved).
        only = results[0]
        return Result(only.status, f"stack of one block: {only.reason}", index_set=only.index_set,
                      verified=only.verified, stages=dict(stages, block=only.stages), engine=only.engine,
                      certificate=certificate, extension=only.extension, complete=only.complete)
    if all(r.status == ABSORBABLE for r in results):
        return _absorbable(stack, results, certificate, stages, extension)
    failing = [i for i, r in enumerate(results) if r.status == NOT_ABSORBABLE]
    open_ = [i for i, r in enumerate(results) if r.status == UNKNOWN]
    parts = []
    if failing:
        parts.append(f"blocks {failing} do not absorb their skip on their own ({results[failing[0]].reason})")
    if open_:
        parts.append(f"blocks {open_} are undecided on their own ({results[open_[0]].reason})")
    open_question = ("an open problem for ReLU/GELU blocks (MATH.md §4)" if stack.act.kind == ODD_LINEAR else
                     "not settled by any theorem here: the depth corollary is about bias-free blocks only (MATH.md §8.7)")
    reason = ("; ".join(parts) + "; block-wise absorption is sufficient, but whether a stack of L residual blocks "
              f"equals a stack of L residual-free blocks otherwise is {open_question}")
    return Result(UNKNOWN, reason, stages=dict(stages, failing=failing, undecided=open_), engine="block-wise",
                  certificate=certificate, extension=extension)


def _absorbable(stack: Stack, results: list, certificate: dict, stages: dict, extension: bool) -> Result:
    candidate = witness_stack(stack, certificate)
    check = check_stack_forward(stack, candidate)
    stages = dict(stages, forward_check=check.to_json())
    if not check.ok:
        if check.exact:
            raise AssertionError(f"bug: the block-wise witness stack fails the exact forward check: {check.describe()}")
        reason = f"every block absorbs on its own, but the witness stack fails the float forward check: {check.describe()}"
        return Result(UNKNOWN, reason, stages=stages, engine="block-wise", certificate=certificate, extension=extension)
    reason = (
        f"every one of the {stack.L} blocks absorbs its skip on its own (block-wise sufficiency, MATH.md §4), "
        f"so the stack of their residual-free witnesses equals the stack; whole-stack {check.describe()}"
    )
    return Result(ABSORBABLE, reason, verified=True, stages=stages, engine="block-wise", certificate=certificate,
                  extension=extension, complete=False)


def witness_stack(stack: Stack, certificate: dict) -> Stack:
    """The residual-free witness stack of a block-wise positive (one witness per block)."""
    from indexset.theory.degenerate import result_witness

    blocks = []
    for block, record in zip(stack.blocks, certificate["blocks"]):
        result = Result(record["status"], record.get("reason", ""), index_set=record["index_set"],
                        certificate=record.get("certificate"))
        blocks.append(result_witness(block, result))
    return Stack(blocks, {"witness_of": np.array(stack.source)}, f"witness of {stack.source}")


def argument(stack: Stack, target_class: str = AFFINE) -> str:
    """The theorem or argument that decides this stack against ``target_class`` (for ``info``)."""
    act = stack.act
    if act.kind in (HOMOGENEOUS, GATED) and target_class == BIAS_FREE:
        return depth_corollary(stack, target_class).reason
    if act.kind in (HOMOGENEOUS, GATED):
        return ("block-wise: every block absorbing its skip into a block with biases (MATH.md §8) gives a witness "
                "stack; otherwise unknown (the depth corollary is about bias-free blocks, MATH.md §8.7)")
    if act.kind == ODD_LINEAR:
        return ("block-wise: every block absorbing its skip (MATH.md §2-3, §7 for degenerate blocks) gives a "
                "witness stack; otherwise unknown, since deep ReLU/GELU compositions are open (MATH.md §4)")
    return f"{act.reason} (per block; no stack result)"


def describe(stack: Stack, target_class: str = AFFINE) -> dict:
    """What ``info`` reports about a stack besides each block's own description."""
    return {"file": stack.source, "kind": "stack", "layers": stack.L, "n": stack.n, "d": stack.d,
            "activation": stack.activation, "activation_class": stack.act.kind, "class": target_class,
            "residual_free": stack.residual_free, "argument": argument(stack, target_class),
            "extension": stack.act.extension, "metadata_keys": sorted(stack.metadata)}
