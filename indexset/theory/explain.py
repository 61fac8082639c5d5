"""What decides a block, in words, before any search (for ``indexset info``)."""

from __future__ import annotations

import numpy as np

from indexset.classes import AFFINE, BIAS_FREE
from indexset.model.hyper import hyper_info
from indexset.model.instance import Instance
from indexset.theory.canonical import merge_kind
from indexset.theory.rank import rank_argument


def argument(instance: Instance, target_class: str = AFFINE) -> str:
    """The theorem or argument that decides a single (or effective HC) block against ``target_class``."""
    from indexset.model.activations import GATED, HOMOGENEOUS, ODD_LINEAR
    from indexset.theory.nondegeneracy import find_degeneracy
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
    if hyper_info(instance) is not None:
        rank = rank_argument(instance)
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



def hyper_report(instance: Instance) -> dict | None:
    """What ``info`` reports for an effective HC block (None for other blocks)."""
    info = hyper_info(instance)
    if info is None:
        return None
    argument = rank_argument(instance)
    return dict(info, rank_write=argument["rank_write"], rank_read=argument["rank_read"],
                rank_argument=argument["text"])


