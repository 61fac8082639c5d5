"""One loader for every file kind, and the dispatch that goes with it (issue 6).

:func:`load_any` looks at the keys of an ``.npz`` file:

- ``H_res``, ``H_pre`` or ``H_post`` present: a hyper-connection layer
  (:mod:`indexset.model.hyper`); the effective :class:`Instance` on R^{sC}.
- a 3-D ``W_up``: a deep stack (:mod:`indexset.model.stack`), a :class:`Stack`.
- otherwise: a single block, an :class:`Instance`.

Files that fit two kinds (hyper-connection keys with stacked arrays or with
a ``skip``), and per-layer suffix keys (``W_up_0``), are refused with an
:class:`InputError` that says why. :func:`solve_any` and :func:`argument`
dispatch to the right decision and name the theorem or argument behind it.
"""

from __future__ import annotations


import numpy as np

import indexset.model.hyper as hyper

import indexset.model.stack as stack
from indexset.classes import AFFINE, BIAS_FREE
from indexset.errors import InputError
from indexset.model.instance import Instance, read_npz
from indexset.result import Result


def load_any(path) -> Instance | stack.Stack:
    """Read a block, a stack or a hyper-connection file.

    Raises
    ------
    InputError
        Unreadable files, ambiguous or mixed layouts, and everything the
        specific loaders refuse.
    """
    source = str(path)
    arrays = read_npz(source)
    kind = file_kind(arrays, source)
    if kind == "hyper":
        return hyper.effective_instance(arrays, source)
    if kind == "stack":
        return stack.Stack.from_arrays(arrays, source)
    return Instance.load(source)


def file_kind(arrays: dict, source: str = "<memory>") -> str:
    """``hyper``, ``stack`` or ``block``; InputError for ambiguous layouts."""
    suffixed = stack.suffix_keys(arrays)
    if suffixed:
        stack.Stack.from_arrays(arrays, source)  # raises the explanation
    if hyper.is_hyper(arrays):
        if stack.is_stack(arrays):
            raise InputError(source, "ambiguous file: hyper-connection keys (H_res, H_pre, H_post) with a stacked "
                                     "3-D W_up; stacks of hyper-connection layers are not a supported format")
        return "hyper"
    if stack.is_stack(arrays):
        return "stack"
    return "block"


def solve_any(loaded, **options) -> Result:
    """Decide whatever :func:`load_any` returned.

    Stacks go to :func:`indexset.model.stack.solve_stack` (which takes
    ``time_limit``, ``seed``, ``engines``, ``stop``, ``progress``);
    effective HC blocks to :func:`indexset.model.hyper.solve_hyper`; other blocks
    to :func:`indexset.solver.solve`.
    """
    if isinstance(loaded, stack.Stack):
        allowed = {k: v for k, v in options.items() if k in ("target_class", "time_limit", "seed", "engines", "stop", "progress")}
        return stack.solve_stack(loaded, **allowed)
    if hyper.hyper_info(loaded) is not None:
        return hyper.solve_hyper(loaded, **options)
    from indexset.solver import solve

    return solve(loaded, **options)


def argument(instance: Instance, target_class: str = AFFINE) -> str:
    """The theorem or argument that decides a single (or effective HC) block against ``target_class``."""
    from indexset.model.activations import GATED, HOMOGENEOUS, ODD_LINEAR
    from indexset.theory.nondegeneracy import find_degeneracy
    from indexset.theory.degenerate import merge_kind
    from indexset.theory.theorems import necessity

    act = instance.act
    if instance.residual_free:
        return "residual-free block: there is no skip to absorb"
    if act.kind in (HOMOGENEOUS, GATED):
        from indexset.theory.affine import argument as affine_argument

        return affine_argument(instance, target_class)
    if act.kind != ODD_LINEAR:
        from indexset.theory.theorems import theorem_verdict

        return theorem_verdict(act, False, None, target_class).reason
    prefix = ""
    if hyper.hyper_info(instance) is not None:
        rank = hyper.rank_argument(instance)
        if rank["applies"]:
            prefix = rank["text"] + "; "
    degeneracy = find_degeneracy(instance)
    if degeneracy.nondegenerate:
        if target_class == BIAS_FREE and instance.b_up is not None and bool(np.any(instance.b_up != 0)) and not act.linear:
            return prefix + "Theorem A, bias-free part (MATH.md §8.3, extension): nondegenerate weights with a bias inside σ: not absorbable by bias-free blocks"
        return prefix + necessity(instance, target_class)
    if merge_kind(act) is None:
        return prefix + f"degenerate weights, where (★) is sufficient but not necessary (MATH.md §3); {act.name} has no even part to merge units by, so a 'no S' answer stays unknown"
    return prefix + ("degenerate weights: (★) is sufficient; a 'no S' answer is settled by the exact decision of "
                     "MATH.md §7 (extension): merge the units σ cannot tell apart, count free classes and spare units")


def write_block_witness(instance: Instance, result: Result, out: str, fmt: str) -> dict:
    """Build, forward-check and write the witness of an absorbable block; return its report.

    Flip witnesses go through :func:`indexset.cli.verify.write_witness`;
    §7 witnesses (``certificate["kind"] == "degenerate"``) are rebuilt from
    the certificate, checked, and written the same way.
    """
    from indexset.cli.verify import write_checked_block, write_witness
    from indexset.theory.degenerate import result_witness

    if "witness" not in (result.certificate or {}):
        return write_witness(instance, result.index_set, out, fmt)
    return write_checked_block(instance, result_witness(instance, result), out, fmt)


def write_stack_witness(original: stack.Stack, result: Result, out: str) -> dict:
    """Build, forward-check and write the witness stack of an absorbable stack."""
    candidate = stack.witness_stack(original, result.certificate)
    check = stack.check_stack_forward(original, candidate)
    if not check.ok:
        return {"written": None, "forward_check": check.to_json(), "summary": check.describe()}
    candidate.save(out)
    return {"written": [out], "forward_check": check.to_json(), "summary": "whole-stack " + check.describe()}
