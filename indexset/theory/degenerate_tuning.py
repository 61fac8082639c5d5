"""The tunables of the §7 decision on degenerate weights (MATH.md §7), in one frozen record.

Every field only moves the line between decided and ``unknown``: past a
budget a case is left open and named, never decided wrongly.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from indexset.search.lattice.tuning import LatticeTuning

SHORT_LATTICE = replace(LatticeTuning(), small_tree_nodes=-1, reduced_tree_nodes=-1, pruned_walk_nodes=-1, first_walk_nodes=-1,
                        estimate_probes=64, walk_probes=64, bkz_block=0, split_from=1 << 30, lll_delta=0.75)
"""The lattice engine for Lemma 7.7e's systems: many small trees, so the kernel walks each one on the basis of a quick
LLL (δ = 0.75), on one thread (the systems run in parallel instead), and no estimate sizes it first."""


@dataclass(frozen=True)
class DegenerateTuning:
    """Budgets of the §7 case analysis."""

    probe_flats: int = 12
    """Random flats tried for a positive at every 0/1 level (q = 0) before the complete pass."""
    second_probe_flats: int = 256
    """Random flats of every 0/1 level still incomplete tried for a positive once a case is open (fewer when the probe's share of the time ends)."""
    probe_share: float = 0.25
    """Fraction of the time left that the probe pass may use, and of the probe's time that one probed flat may use."""
    max_combinations: int = 1 << 22
    """Most coefficient vectors screened one by one for a rank ≤ q sub-case (q ≥ 1)."""
    screens: int = 2
    """Random projections mod 2³¹ − 1 a coefficient vector must pass before its exact rank check."""
    max_meet: int = 1 << 26
    """Most table entries (both halves, every subspace mod p) of the meet in the middle of a rank sub-case."""
    meet_rows: int = 1 << 20
    """Most rows of one half's table in the meet in the middle (int8 residues: tens of megabytes at most)."""
    check_weight: int = 16
    """Table entries one modular match is counted as when the meet chooses its prime (matches are screened mod 2³¹ − 1 before any exact check)."""
    chunk: int = 1 << 15
    """Coefficient vectors screened per vectorised batch (eight times as many matches times left-out vectors in the meet)."""
    max_left_out: int = 1 << 12
    """Most coefficient vectors of the groups left out of a meet's match for which its matches are screened (else each is checked exactly)."""
    max_short_systems: int = 1 << 21
    """Most 0/1 systems of Lemma 7.7e (one per short primitive vector) decided for a q = 1 sub-case the meet in the middle leaves open."""
    short_probe: int = 8
    """Lemma 7.7e's systems decided before the time of all of them is predicted; a prediction past the time allowed stops them."""
    short_lattice: LatticeTuning = SHORT_LATTICE
    """The lattice engine's tuning for Lemma 7.7e's systems (see :data:`SHORT_LATTICE`)."""
    short_parallel_seconds: float = 20.0
    """Lemma 7.7e's systems predicted to take longer than this (in one process) go to worker processes or the caller's Dask cluster."""
    short_batch: int = 256
    """Lemma 7.7e's systems handed to a worker at a time (each batch costs one message; a stop waits for at most one system per worker)."""
    max_short_seconds: float = 600.0
    """Predicted seconds of Lemma 7.7e's systems allowed without a time limit (with one, the time left is allowed)."""
    brute_width: int = 14
    """0/1 systems with at most this many unknowns are enumerated directly by decide_system."""
    seed: int = 0
    """Seed of the probe order and of the modular screen's projections (never of an answer)."""
