"""The one result type every engine and every solver returns.

Engines answer a 0/1 system (``feasible`` / ``infeasible`` / ``unknown``);
:func:`indexset.solve` answers the block (``absorbable`` /
``not_absorbable`` / ``unknown``). Both use :class:`Result`, so JSON output,
exit codes and printing are the same everywhere.
"""

from __future__ import annotations

from dataclasses import dataclass, field

ABSORBABLE = "absorbable"
NOT_ABSORBABLE = "not_absorbable"
UNKNOWN = "unknown"
FEASIBLE = "feasible"
INFEASIBLE = "infeasible"

_EXIT = {ABSORBABLE: 0, FEASIBLE: 0, NOT_ABSORBABLE: 1, INFEASIBLE: 1, UNKNOWN: 3}


@dataclass
class Result:
    """An answer with what proves it.

    Attributes
    ----------
    status : str
        ``absorbable``, ``not_absorbable`` or ``unknown`` for a block;
        ``feasible``, ``infeasible`` or ``unknown`` for a 0/1 system.
    reason : str
        The theorem, certificate or search behind the status, in words.
    index_set : list of int or None
        One verified index set S (block), or the support of one solution
        (system).
    verified : bool
        True when ``index_set`` passed the exact rational verifier.
    count : int or None
        Number of solutions when every solution was enumerated.
    solutions : list of list of int or None
        Every solution (sorted supports) when asked for with ``all``.
    time_s : float
        Wall time.
    stages : dict
        Per-stage facts and timings (rank, kernel dimension, engine, ...).
    engine : str or None
        Which engine produced the answer.
    certificate : dict or None
        Machine-checkable proof data (span certificate y, HNF reason, ...),
        its ``kind`` naming which; a verdict a theorem proves has kind
        ``theorem`` and the MATH.md section that proves it under
        ``argument`` (:func:`theorem_certificate`).
    extension : bool
        True when the verdict rests on a statement beyond the paper
        (MATH.md marks these "(extension)").
    complete : bool
        True when the search that produced the answer was exhaustive.
    target_class : str or None
        The class of residual-free blocks the verdict is about (``affine``
        or ``bias-free``, :mod:`indexset.classes`); None for 0/1 systems.
    halted : str or None
        Why the work stopped short when it did: the budget's
        ``time limit reached`` or ``interrupted`` (:mod:`indexset.budget`);
        None when it ran to its answer.
    """

    status: str
    reason: str
    index_set: list | None = None
    verified: bool = False
    count: int | None = None
    solutions: list | None = None
    time_s: float = 0.0
    stages: dict = field(default_factory=dict)
    engine: str | None = None
    certificate: dict | None = None
    extension: bool = False
    complete: bool = False
    target_class: str | None = None
    halted: str | None = None

    @property
    def exit_code(self) -> int:
        """CLI exit status: 0 yes, 1 proven no, 3 unknown."""
        return _EXIT[self.status]

    @property
    def decided(self) -> bool:
        """Whether the status is a proven yes or no."""
        return self.status != UNKNOWN

    def note_halt(self, halt_reason: str | None, find_all: bool = False) -> Result:
        """Record the budget's ``halt_reason`` as ``halted`` when the work stopped short (no answer, or an incomplete list of every solution)."""
        if not self.decided or (find_all and not self.complete):
            self.halted = halt_reason
        return self

    def to_json(self) -> dict:
        """JSON-ready dict with the keys documented for ``--json``."""
        return {
            "status": self.status,
            "class": self.target_class,
            "reason": self.reason,
            "index_set": self.index_set,
            "verified": self.verified,
            "count": self.count,
            "solutions": self.solutions,
            "time_s": round(self.time_s, 6),
            "stages": self.stages,
            "engine": self.engine,
            "certificate": self.certificate,
            "extension": self.extension,
            "halted": self.halted,
        }


def theorem_certificate(section: str) -> dict:
    """The certificate of a verdict that a theorem proves.

    Parameters
    ----------
    section : str
        The section of MATH.md whose theorem proves it, e.g. ``"MATH.md §4"``.

    Returns
    -------
    dict
        ``{"kind": "theorem", "argument": section}``, the form of every
        theorem verdict's ``certificate`` (other keys may add what the
        theorem's hypotheses rest on).
    """
    return {"kind": "theorem", "argument": section}
