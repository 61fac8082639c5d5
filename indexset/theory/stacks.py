"""Deep stacks: what theorems say, and how block-wise verdicts combine (MATH.md §4, §8.7).

- Against bias-free blocks, ReLU², ReGLU, SwiGLU and GeGLU stacks with no
  bias inside σ and none between blocks are ``not_absorbable`` by the depth
  corollary.
- Otherwise every block is decided on its own (by :func:`indexset.solver.solve`).
  If every block absorbs, the witness stack (one witness per block) is the
  answer, checked by a forward pass of the whole stack. Otherwise the answer
  is ``unknown`` naming the blocks that fail on their own: block-wise
  absorption is sufficient, and nothing stronger is known. A stack of one
  block is that block.
"""

from __future__ import annotations

import numpy as np

from indexset.classes import AFFINE, BIAS_FREE, phrase
from indexset.exact.witness import check_forward, witness_stack
from indexset.model.activations import GATED, HOMOGENEOUS, ODD_LINEAR
from indexset.model.stack import Stack
from indexset.result import ABSORBABLE, NOT_ABSORBABLE, UNKNOWN, Result, theorem_certificate


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
    return Result(NOT_ABSORBABLE, reason, stages=stages, engine="theorem", complete=True, certificate=theorem_certificate("MATH.md §4"))


def record(result: Result) -> dict:
    """What the certificate of a stack keeps of one block's verdict."""
    record = {"status": result.status, "index_set": result.index_set, "extension": result.extension,
              "reason": result.reason}
    if result.certificate and "witness" in result.certificate:
        record["certificate"] = result.certificate
    return record


def combine(stack: Stack, results: list) -> Result:
    """The stack's verdict from its blocks' verdicts (block-wise sufficiency)."""
    records = [record(r) for r in results]
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
    check = check_forward(stack, candidate)
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


def report(stack: Stack, target_class: str = AFFINE) -> dict:
    """What ``info`` reports about a stack besides each block's own description."""
    return {"file": stack.source, "kind": "stack", "layers": stack.L, "n": stack.n, "d": stack.d,
            "activation": stack.activation, "activation_class": stack.act.kind, "class": target_class,
            "residual_free": stack.residual_free, "argument": argument(stack, target_class),
            "extension": stack.act.extension, "metadata_keys": sorted(stack.metadata)}
