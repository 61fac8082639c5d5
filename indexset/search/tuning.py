"""The tunables of deciding a system, in one frozen object.

They belong to :func:`indexset.search.decide.decide_system` and the stages
it runs before and beside the engines (interval propagation, the certified
bounds, the brute-force reference). Every field changes how fast or how
much is listed, never what is decided: each listed solution is checked
exactly, and only complete searches prove anything. The lattice engine's
own tunables are :class:`indexset.search.lattice.tuning.LatticeTuning`.

    >>> from dataclasses import replace
    >>> replace(SearchTuning(), max_listed=10).max_listed
    10
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class SearchTuning:
    """Tunables of deciding a system; each line states its rule."""

    brute_width: int = 14  # boxes of at most 2^this points that linear algebra leaves open are enumerated directly by the callers that ask (the (★) solver).
    brute_max_width: int = 22  # the brute-force engine refuses boxes of more than 2^this points.
    brute_poll_points: int = 4096  # the brute-force engine looks at its time limit and stop request every this many points.
    max_listed: int = 100_000  # most solutions listed with find_all when independent parts multiply (a count goes on beyond).
    vectorized_cells: int = 1 << 18  # systems of at most this many coefficients are propagated by NumPy rounds, larger ones by the compiled kernel.
    rounds_per_unknown: int = 4  # propagation stops after this · n + 64 rounds (a 0/1 system reaches its fixpoint within n + 1; slowly shrinking wide domains are left to the search).
    lp_seconds: float = 0.1  # HiGHS time limit of one LP of the certified bounds.


DEFAULT = SearchTuning()
"""The tuning every decision uses unless given another."""
