"""Which reduced basis pays: candidate bases, their scores, the node estimate.

The default basis is LLL followed by BKZ (when the lattice is wide enough
for BKZ to pay). When a Knuth estimate of its tree predicts a long
search, further candidates (other orders of the input vectors, reduced the
same way) are built, as many as a share of the predicted time pays for
by the cost model, and the one whose tree the Gaussian heuristic predicts
smallest wins (:func:`profile_score`). The cost model, not a clock,
decides how many, so the choice is reproducible for a seed.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from indexset.search.lattice.basis import Lattice
from indexset.search.lattice.job import Job
from indexset.search.lattice.walk import estimate_nodes


@dataclass
class Choice:
    """The basis chosen, what the choice found out, and every searchable basis built.

    Attributes
    ----------
    lattice : Lattice
        The basis to search.
    facts : dict
        ``candidates`` (bases tried), ``bkz`` (the block, or why BKZ was
        skipped) and ``estimated_nodes`` when the tree was estimated.
    bases : list of Lattice
        Every searchable basis built, the chosen one first (for the pruned passes).
    """

    lattice: Lattice
    facts: dict
    bases: list

    def predicted_seconds(self, job: Job) -> float | None:
        """The estimated enumeration time of the chosen basis on one core (None when not estimated)."""
        nodes = self.facts.get("estimated_nodes")
        return None if nodes is None else job.node_seconds(nodes)


def profile_score(lattice: Lattice) -> float:
    """Minus the log of the Gaussian-heuristic size of the enumeration tree (higher: smaller tree).

    Level k from the top holds about ``V_k(R) / Π_{j ≥ D−k} ‖b*_j‖`` nodes
    (V_k the volume of the k-ball of the search radius R): the sum over k
    ranks reduced bases of one lattice. The box cuts shrink every tree, but
    alike, so the ranking tracks the walked tree sizes (BENCHMARKS.md).
    """
    rr = lattice.data.rr
    radius2 = float(lattice.data.bound2[0])
    depth = np.arange(1, len(rr) + 1)
    log_ball = 0.5 * depth * np.log(np.pi * radius2) - np.array([math.lgamma(k / 2 + 1) for k in depth])
    log_levels = log_ball - 0.5 * np.cumsum(np.log(rr[::-1]))
    top = log_levels.max()
    return -float(top + np.log(np.exp(log_levels - top).sum()))


def default_choice(job: Job, lll: Lattice | None = None, reduced: Lattice | None = None) -> Choice:
    """The default basis: a searchable BKZ basis when the caller built one, else the basis that pays.

    ``lll`` and ``reduced`` are the default input order's LLL and BKZ
    bases when the caller has built them already; a BKZ basis without a
    numerics problem is then the default basis (BKZ is paid for), else the
    LLL basis when its tree is predicted shorter than a BKZ pass
    (:func:`_basis_that_pays`). Its facts hold the tree-size estimate only
    when that choice needed one; :func:`estimated` adds it.
    """
    if reduced is not None and reduced.problem is None:
        lattice, facts = reduced, {"candidates": 1, "bkz": job.bkz_block}
    elif lll is not None and not job.bkz_block:
        lattice, facts = lll, {"candidates": 1, "bkz": "off"}
    else:  # estimates the LLL tree first: nothing left for the loading to hide
        lattice, facts = _basis_that_pays(job, lll, reduced)
    return Choice(lattice, facts, [lattice])


def choose_lattice(job: Job, default: Choice, loading: bool = False, stronger: Lattice | None = None) -> Choice:
    """The default reduced basis, or the best of several when they pay.

    The candidates (:func:`_candidates`) are bought one at a time, while
    they cost at most ``candidate_share`` of the predicted enumeration
    time of the basis the walk would take now: the best so far by
    :func:`profile_score` (the first of equals: the default basis), whose
    tree a Knuth estimate sizes each time a candidate beats it. None when
    the search looks hopeless anyway (``hopeless_seconds``). ``loading``
    says that the kernels are loading in another thread: the estimate
    waits for them, so first the candidates that ``kernel_load_seconds``
    pays for are reduced, beside the load. At most a tenth of the time
    left, at most ``max_candidates`` bases in all. ``stronger``: the first
    candidate (:func:`stronger_basis`), when the caller has built it
    already. The chosen basis's estimate is the one in the facts.
    """
    tuning, lattice, facts = job.tuning, default.lattice, dict(default.facts)
    if not lattice.searchable or tuning.split_from >= lattice.D or tuning.candidates_from > lattice.D:
        return Choice(lattice, _estimated(job, lattice, facts), [lattice])
    # Knuth's estimate is unbiased but heavy-tailed: candidates pay only
    # when the tree is long, since each costs a full LLL + BKZ.
    cost = job.basis_seconds(lattice.D)
    free = tuning.kernel_load_seconds if loading and "estimated_nodes" not in facts else 0.0
    rng = np.random.default_rng(job.seed)  # one stream: the k-th candidate is the same in either phase
    built = 1 if stronger is not None else 0  # paid for already
    bases, tried = _candidates(job, rng, max(built, _affordable(job, free, cost)), 0, stronger)
    bases.insert(0, lattice)
    scores = [profile_score(basis) for basis in bases]
    best = int(np.argmax(scores))  # the first of equals: the default basis
    nodes = facts["estimated_nodes"] if best == 0 and "estimated_nodes" in facts else _estimate(job, bases[best])
    while tried < _affordable(job, max(_candidate_seconds(job, nodes), free), cost):
        more, count = _candidates(job, rng, 1, tried)
        tried += count
        if not count:
            break  # the budget ran out
        if more:
            bases.append(more[0])
            scores.append(profile_score(more[0]))
            if scores[-1] > scores[best]:
                best, nodes = len(bases) - 1, _estimate(job, more[0])
    facts["estimated_nodes"] = nodes
    if tried:
        facts["candidates"] = tried + 1
    chosen = bases[best]
    return Choice(chosen, facts, [chosen] + [basis for basis in bases if basis is not chosen])


def estimated(job: Job, choice: Choice) -> Choice:
    """``choice`` with the tree-size estimate of its basis in its facts, when the basis has more than ``split_from`` levels."""
    _estimated(job, choice.lattice, choice.facts)
    return choice


def stronger_pays(job: Job, default: Choice) -> bool:
    """Whether the default basis's estimate pays for the first candidate (:func:`stronger_basis`) by the candidates' rule."""
    lattice = default.lattice
    if not lattice.searchable or job.tuning.candidates_from > lattice.D or job.tuning.split_from >= lattice.D:
        return False
    nodes = estimated(job, default).facts["estimated_nodes"]
    return _affordable(job, _candidate_seconds(job, nodes), job.basis_seconds(lattice.D)) >= 1


def _candidate_seconds(job: Job, nodes: float) -> float:
    """Seconds a tree of ``nodes`` estimated nodes pays for candidates: ``candidate_share`` of its predicted walk, none when hopeless."""
    predicted = job.node_seconds(nodes)
    return job.tuning.candidate_share * predicted if predicted < job.tuning.hopeless_seconds else 0.0


def _affordable(job: Job, seconds: float, cost: float) -> int:
    """Candidate bases that ``seconds`` pay for at ``cost`` each (at most a tenth of the time left; at most ``max_candidates`` − 1)."""
    left = job.budget.remaining()
    if left is not None:
        seconds = min(seconds, 0.1 * left)
    return max(0, min(job.tuning.max_candidates - 1, int(seconds / cost)))


def stronger_basis(job: Job) -> Lattice | None:
    """The default input order reduced with BKZ block ``stronger_block``: the first candidate (None when it is not larger)."""
    return job.build(bkz_block=job.tuning.stronger_block) if job.tuning.stronger_block > job.bkz_block else None


def _candidates(job: Job, rng, count: int, before: int, stronger: Lattice | None = None) -> tuple[list, int]:
    """Up to ``count`` more candidate bases: the searchable ones, and how many were tried.

    The first candidate of a search (``before`` = 0) is the default input
    order reduced with the larger block ``stronger_block``, when that is
    larger than the job's: BKZ-20 can miss short vectors a slightly larger
    block finds, and the score then picks its much smaller tree. The others
    are re-reduced bases of shuffled input orders. ``stronger``: that
    first candidate, when built already.
    """
    built, tried = [], 0
    for k in range(count):
        if job.budget.expired():
            break
        tried += 1
        if before + k == 0 and stronger is not None:
            other = stronger
        elif before + k == 0 and job.tuning.stronger_block > job.bkz_block:
            other = stronger_basis(job)
        else:
            other = job.build(shuffle=rng)
        if other.searchable:
            built.append(other)
    return built, tried


def _basis_that_pays(job: Job, lll: Lattice | None = None, reduced: Lattice | None = None) -> tuple[Lattice, dict]:
    """The LLL basis when its predicted tree costs less than a BKZ pass would; else the BKZ one.

    On trees a few milliseconds long, BKZ only adds its own cost. ``lll``
    and ``reduced``: the bases, when the caller has built them already.
    """
    if lll is None:
        lll = job.build(bkz_block=0)
    if not job.bkz_block:
        return lll, _estimated(job, lll, {"candidates": 1, "bkz": "off"})
    # A rough estimate decides: the LLL basis is kept only for trees orders of magnitude below a long search.
    facts = _estimated(job, lll, {"candidates": 1}, job.tuning.walk_probes)
    if not lll.searchable:
        facts["bkz"] = "skipped (the LLL lattice decides without a search, or cannot be searched)"
        return lll, facts
    if "estimated_nodes" in facts and job.node_seconds(facts["estimated_nodes"]) < job.basis_seconds(lll.D):
        facts["bkz"] = "skipped (the LLL tree is predicted shorter than a BKZ pass)"
        return lll, facts
    lattice = reduced or job.build()
    return lattice, _estimated(job, lattice, {"candidates": 1, "bkz": job.bkz_block})


def _estimated(job: Job, lattice: Lattice, facts: dict, probes: int | None = None) -> dict:
    """``facts`` with the tree-size estimate of a searchable lattice of more than ``split_from`` levels (``estimate_probes`` descents unless ``probes``)."""
    if lattice.searchable and job.tuning.split_from < lattice.D and "estimated_nodes" not in facts:
        facts["estimated_nodes"] = _estimate(job, lattice, probes)
    return facts


def _estimate(job: Job, lattice: Lattice, probes: int | None = None) -> int:
    """Knuth's estimate of the tree size of a searchable lattice (``estimate_probes`` descents unless ``probes``, seeded by the job)."""
    key = (probes or job.tuning.estimate_probes, job.seed)
    if key not in lattice.estimates:
        lattice.estimates[key] = int(estimate_nodes(lattice, key[0], job.seed, tuning=job.tuning))
    return lattice.estimates[key]
