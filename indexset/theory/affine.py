"""Homogeneous and gated blocks against residual-free blocks with biases (MATH.md §8).

The paper's degree and linearisation arguments rule out *bias-free* g only
(MATH.md §4). With biases inside σ of g the picture is (all **extension**):

- *Nondegenerate weights* (Theorem B for ReLU², Theorem C for ReGLU,
  SwiGLU and GeGLU): every unit of g is a unit of f with its (gate)
  pre-activation possibly negated, so g is f with a set S of units flipped,
  and f is absorbable iff the 0/1 system of :func:`criterion_system` has a
  solution: the quadratic part of the flipped units vanishes and their
  linear part cancels A. Without biases in f that linear part is zero, so
  such f is never absorbable, with or without biases in g.
- *Degenerate weights*: the constructions of Proposition D (MATH.md §8.6)
  build same-width witnesses: opposite gate rows, spare units, ReLU² units
  on one hyperplane. When none applies, the answer is unknown.

Every positive answer carries its witness block, checked by a forward pass
(exactly for ReLU² and ReGLU, whose σ maps rationals to rationals).
"""

from __future__ import annotations

import time

from indexset.budget import Budget
from indexset.classes import AFFINE, BIAS_FREE, phrase
from indexset.model.activations import GATED, HOMOGENEOUS
from indexset.model.instance import Instance
from indexset.result import ABSORBABLE, FEASIBLE, INFEASIBLE, NOT_ABSORBABLE, UNKNOWN, Result, theorem_certificate
from indexset.theory.constructions import construct_witness
from indexset.theory.flips import SECTION as _SECTION
from indexset.theory.flips import THEOREM as _THEOREM
from indexset.theory.flips import biased, criterion_system, flip_values, violations
from indexset.trace import Trace


def argument(instance: Instance, target_class: str) -> str:
    """The theorem or construction that decides this block against ``target_class``, without searching."""
    act = instance.act
    problems = violations(instance)
    theorem = _THEOREM[act.name]
    if target_class == BIAS_FREE:
        if not biased(instance):
            return f"{act.reason} (the paper's theorem, about {phrase(BIAS_FREE)})"
        if not problems:
            return f"{theorem}, bias-free part (extension): nondegenerate weights with a bias inside σ: not absorbable by {phrase(BIAS_FREE)}"
        return f"bias inside σ on degenerate weights ({'; '.join(problems)}): no theorem decides it against {phrase(BIAS_FREE)}"
    if not problems:
        if not biased(instance):
            return f"{theorem} (extension): nondegenerate weights and no bias inside σ: not absorbable, even by {phrase(AFFINE)}"
        return f"{theorem} (extension): nondegenerate weights: absorbable by {phrase(AFFINE)} iff the theorem's 0/1 system (flips S) has a solution"
    return (f"degenerate weights ({'; '.join(problems)}): flips of {theorem} and the constructions of MATH.md §8.6 "
            "may give a witness; otherwise unknown")


# ------------------------------------------------------------ decision
def decide(instance: Instance, target_class: str, *, budget: Budget | None = None, seed: int = 0) -> Result:
    """The verdict for a homogeneous or gated block against ``target_class``.

    Parameters
    ----------
    instance : Instance
        A skip-connected ReLU², ReGLU, SwiGLU or GeGLU block.
    target_class : {"affine", "bias-free"}
    budget : Budget, optional
        Deadline and stop request of the 0/1 search of Theorems B and C.
    seed : int

    Returns
    -------
    Result
        ``not_absorbable`` by the paper's theorem (bias-free g, no bias
        inside σ of f) or by Theorem B/C; ``absorbable`` with a checked
        witness block in ``certificate["witness"]``; otherwise ``unknown``.
    """
    start = time.perf_counter()
    act = instance.act
    if act.kind not in (HOMOGENEOUS, GATED):
        raise ValueError(f"{act.name} is neither homogeneous nor gated")
    problems = violations(instance)
    trace = Trace({"path": "theorem", "classify": act.kind, "class": target_class, "hypotheses": problems or "hold"})
    if target_class == BIAS_FREE:
        result = _bias_free(instance, problems, trace.record)
    else:
        result = _affine(instance, problems, trace, budget or Budget(), seed)
    result.time_s = time.perf_counter() - start
    result.target_class = target_class
    return result


def _bias_free(instance, problems, stages) -> Result:
    act = instance.act
    if not biased(instance):
        return Result(NOT_ABSORBABLE, f"{act.reason}; this is the paper's theorem, about {phrase(BIAS_FREE)}",
                      stages=stages, engine="theorem", complete=True, certificate=theorem_certificate("MATH.md §4"))
    if not problems:
        reason = (f"{_THEOREM[act.name]}, bias-free part (extension): on these nondegenerate weights every unit of g "
                  "must sit on a unit of f, bias included, and f has a nonzero bias inside σ, which a bias-free g "
                  f"cannot carry; no block among {phrase(BIAS_FREE)} equals f")
        return Result(NOT_ABSORBABLE, reason, stages=stages, engine="theorem", complete=True, extension=True,
                      certificate=theorem_certificate(_SECTION[act.name]))
    reason = (f"{act.name} with a nonzero bias inside σ on degenerate weights ({'; '.join(problems)}): the paper's "
              "argument needs σ(W_up x) without a bias, and Theorem B/C needs nondegenerate weights; "
              f"no theorem decides this block against {phrase(BIAS_FREE)}")
    return Result(UNKNOWN, reason, stages=stages, engine="theorem")


SYSTEM_SIZE = 50_000
"""Largest Theorem B/C system built (unknowns × equations); checkpoint layers exceed it."""


def _affine(instance, problems, trace: Trace, budget: Budget, seed) -> Result:
    """Theorem B/C's flips first (sufficient on any weights, and necessary on nondegenerate ones), then Proposition D."""
    theorem = _THEOREM[instance.act.name]
    stages = trace.record
    if not problems and not biased(instance):
        return Result(NOT_ABSORBABLE, _impossible(instance, None), stages=stages, engine="theorem", complete=True, extension=True,
                      certificate=theorem_certificate(_SECTION[instance.act.name]))
    d, n = instance.d, instance.n
    if n * d * (d + (d * (d + 1)) // 2) > SYSTEM_SIZE:
        return Result(UNKNOWN, f"{theorem}: its 0/1 system ({n} unknowns, {d * d + d * d * (d + 1) // 2} equations) is too large to build here", stages=stages, engine="theorem", extension=True)
    flips = _flips(instance, trace, budget, seed)
    if flips.status == FEASIBLE:
        why = (f"{theorem} (extension): flipping the (gate) pre-activations of S = {flips.index_set} cancels A and "
               "leaves no quadratic term (the theorem's 0/1 system holds exactly)")
        return _witnessed(instance, flip_values(instance, flips.index_set), stages, why, _SECTION[instance.act.name], flips.index_set)
    if not problems:
        if flips.status == INFEASIBLE:
            certificate = dict(theorem_certificate(_SECTION[instance.act.name]), system=flips.certificate)
            return Result(NOT_ABSORBABLE, _impossible(instance, flips), stages=stages, engine=flips.engine, complete=True, extension=True,
                          certificate=certificate)
        return Result(UNKNOWN, f"{theorem}: the 0/1 system was not decided ({flips.reason})", stages=stages, engine=flips.engine)
    built = construct_witness(instance)
    if built is not None:
        values, how = built
        return _witnessed(instance, values, stages, f"Proposition D (MATH.md §8.6, extension): {how}", "MATH.md §8.6")
    reason = (f"degenerate weights ({'; '.join(problems)}): no flip of {theorem} "
              f"({'none exists' if flips.status == INFEASIBLE else 'undecided'}) and no construction of MATH.md §8.6 "
              f"gives a witness, and the theorem's converse needs nondegenerate weights: absorption by {phrase(AFFINE)} "
              "is neither shown nor ruled out")
    return Result(UNKNOWN, reason, stages=stages, engine="theorem", extension=True)


def _flips(instance, trace: Trace, budget: Budget, seed) -> Result:
    """The 0/1 system of Theorem B/C, decided (its stages under ``search``)."""
    from indexset.search.decide import decide_system

    system = criterion_system(instance)
    trace.note(system={"equations": system.m, "unknowns": system.n})
    search = trace.child("search")
    decided = decide_system(system, budget=budget, seed=seed, trace=search)
    search.note(status=decided.status, engine=decided.engine, reason=decided.reason)
    return decided


def _impossible(instance, flips) -> str:
    theorem = _THEOREM[instance.act.name]
    head = (f"{theorem} (extension): on nondegenerate weights every block among {phrase(AFFINE)} that equals f is f "
            "with a set S of units flipped, which adds −A' with A' the linear part of the flipped units")
    if flips is None:
        return f"{head}; without a bias inside σ of f that linear part is zero and A is invertible, so no block of the class equals f"
    return f"{head}; no S makes A' = A with no quadratic term left ({flips.reason})"


def _witnessed(instance, values, stages, why, section, index_set=None) -> Result:
    """An absorbable verdict from a witness of the affine class, checked forward; ``section``: the MATH.md section that builds it."""
    from indexset.exact.witness import block_instance, check_forward, encode_block

    block = block_instance(instance, values, "affine class (MATH.md §8)")
    check = check_forward(instance, block, points=64)
    if not check.ok:
        raise AssertionError(f"bug: the witness fails the forward check: {check.describe()}")
    reason = f"{why}; witness of width n = {instance.n} among {phrase(AFFINE)}, {check.describe()}"
    certificate = {"kind": "affine_witness", "argument": section, "forward_check": check.to_json(), "witness": encode_block(values)}
    return Result(ABSORBABLE, reason, index_set=index_set, verified=True, stages=stages, engine="theorem",
                  certificate=certificate, extension=True, complete=False)
