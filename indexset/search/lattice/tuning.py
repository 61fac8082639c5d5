"""The lattice engine's tunables, in one frozen object.

Every field changes how fast the engine answers, never what it answers:
every leaf is checked exactly, and only complete walks prove anything.
The evidence behind each value is in BENCHMARKS.md ("Evidence for tuning
values"), with the command that measured it. Pass a modified copy to try
another value::

    >>> from dataclasses import replace
    >>> quick = replace(LatticeTuning(), small_tree_nodes=0)
    >>> quick.small_tree_nodes, LatticeTuning().small_tree_nodes > 0
    (0, True)
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class LatticeTuning:
    """Tunables of the lattice engine; each line states its rule."""

    # Basis reduction.
    lll_delta: float = 0.99  # LLL's Lovász constant δ (any δ in (1/4, 1) gives a basis of the same lattice: only its shape and cost change).
    bkz_block: int = 20  # fpylll BKZ block size after LLL, for lattices of dimension ≥ bkz_from (0: LLL only).
    bkz_from: int = 30  # below this lattice dimension LLL alone is used (BKZ costs more than it saves).
    bkz_loops: int = 8  # most BKZ tours of one reduction (keeps a pass within the engines' stop latency).
    # Choosing a basis.
    candidates_from: int = 40  # lattice dimension from which several reduced bases may be tried.
    max_candidates: int = 8  # most reduced bases compared by their Gaussian-heuristic score.
    stronger_block: int = 30  # the first candidate is the default order reduced with this BKZ block (when larger than the default's).
    candidate_share: float = 0.1  # share of the predicted enumeration time of the best basis so far spent on further candidates.
    hopeless_seconds: float = 1e5  # predicted enumeration seconds beyond which the estimate pays for no candidates.
    estimate_probes: int = 4000  # random descents of the kernel's tree-size estimate.
    # Cost model (seconds), which keeps choices reproducible for a seed: no clock decides them.
    basis_seconds: float = 3.5e-5  # one LLL + BKZ candidate costs basis_seconds · D².
    node_seconds: float = 5e-8  # one enumeration node of the kernel on one core.
    kernel_load_seconds: float = 0.7  # loading Numba and the first cached kernel; candidates up to this cost are reduced beside it.
    # NumPy walks before the kernel loads.
    numpy_node_seconds: float = 1e-6  # one node of a NumPy walk (cost model): once the process's walks cost kernel_load_seconds, the kernels load.
    numpy_walks_once_loaded: bool = False  # walk small trees in NumPy even when the kernels are loaded already (slower: for tests of the NumPy walks).
    small_tree_nodes: int = 40_000  # node budget of the whole NumPy walk of the LLL tree.
    reduced_tree_nodes: int = 400_000  # node budget of the whole NumPy walk of the BKZ tree.
    first_walk_slack: float = 1.0  # pruning slack of the NumPy walk of the BKZ tree before its whole walk (first solution only).
    first_walk_nodes: int = 50_000  # node budget of that walk.
    pruned_walk_nodes: int = 400_000  # node budget of the NumPy walk under the tightest linear profile (first solution only).
    walk_probes: int = 512  # descents of the quick estimates: whether a NumPy walk starts, whether BKZ pays, a pass's length.
    walk_headroom: float = 4.0  # a walk starts only when its estimate is at most its budget / this.
    breadth_chunk: int = 1024  # most nodes of one level a NumPy walk expands together.
    # Incomplete passes and extreme-pruning trials (first solution only; they prove nothing).
    max_discrepancies: int = 20  # limited-discrepancy passes walk the limits 0, 1, …, this (−1: none), before the candidates ...
    discrepancy_share: float = 0.05  # ... within this share of the stronger basis's predicted complete walk (and the passes' caps).
    hopeless_discrepancy_seconds: float = 4.0  # on a hopeless tree (extreme_from_seconds) they take a thread of their own beside the candidates, until the pruned passes start or for at most this.
    pruning_slacks: tuple = (0.1, 0.25, 0.5)  # slacks of the linear pruning profiles, tried in order on every basis.
    relaxed_pruning: bool = False  # a pruned walk tries the integer nearest the centre once where its profile leaves a level none (MATH.md §6.1); on only where measured to pay.
    pruned_share: float = 0.02  # share of the predicted complete walk the passes may take.
    pruned_max_seconds: float = 30.0  # most seconds of the passes without trials.
    pruned_share_of_limit: float = 0.1  # under a time limit, most share of the time left the passes take ...
    pruned_share_of_limit_when_hopeless: float = 0.5  # ... or this share when the complete walk is predicted to outlast the limit ...
    trials_take_the_limit_beyond: float = 10.0  # ... or all of it, with trials, when that walk is predicted at more than this many times the time left: it cannot prove in time.
    extreme_from_seconds: float = 300.0  # predicted complete-walk seconds from which trials follow the linear passes.
    extreme_max_seconds: float = 600.0  # most seconds of the passes with trials.
    linear_share_with_trials: float = 0.1  # with trials to follow, a linear pass predicted longer than this share of the passes' time, or walking longer, waits until they are over.
    linear_trials_worth: float = 4.0  # ... and one walking beside trials waits too once it has walked this many times their mean seconds (a trial's basis and walk).
    trials_hold_a_thread_beyond: float = 1e5  # predicted complete-walk seconds beyond which the trials take a thread from the start, beside the linear passes ahead of them.
    max_unusable_in_a_row: int = 3  # trial bases in a row that cannot be searched after which the trials stop.
    trial_probability: float = 0.05  # success probability of one trial by fpylll's pruning model.
    trials_beside_share: float = 0.25  # first solution: trials walk on one thread beside the complete walk for at most this share of its predicted seconds (0: never) ...
    trials_beside_from_seconds: float = 10.0  # ... when that walk is predicted to take at least this long on one core, and two threads or more walk.
    pruner_seconds: float = 60.0  # most seconds of the child process that runs fpylll's Pruner.
    # A stronger basis beside a complete walk that outruns its prediction (speed only: either walk decides the same).
    rung_block: int = 40  # the BKZ block of that basis (the default input order).
    rung_after: float = 2.0  # it is reduced once a shared walk has taken this many times its predicted time ...
    rung_min_seconds: float = 1.0  # ... and at least this many seconds, when it has finished fewer than ...
    rung_progress: float = 0.25  # ... this share of its subtrees; its BKZ may take at most ...
    rung_max_share: float = 0.25  # ... this share of the walk's time until then (a core taken from the walk);
    rung_stalled_seconds: float = 1.0  # it is reduced too once a shared walk has run this long without finishing any subtree (0: never).
    rung_gain: float = 2.0  # the walk restarts on it when its profile score is this much higher (a tree predicted e² times smaller).
    # The kernel's walk.
    single_precision: bool = True  # W in float32 where its error bound allows (exact leaf tests; margins that cover it, MATH.md §6.1).
    chunk_seconds: float = 0.05  # target wall time of one kernel call between time-limit, stop and progress checks.
    first_chunk_nodes: int = 1 << 12  # nodes of a walk's first kernel call; later calls are sized to chunk_seconds.
    coord_sample: int = 1 << 20  # nodes after which the per-coordinate bounds stay on only where they paid.
    coord_min_gain: float = 2.0  # they pay at a level where they narrowed at least this share of the intervals (above 1: nowhere; then off from the start).
    coord_min_tries: int = 100  # ... and where they were tried at least this many times by then (fewer tell nothing).
    split_from: int = 24  # lattices of at most this dimension are walked by one thread and not estimated.
    subtrees_per_worker: int = 32  # a shared walk splits at the highest level with this many nodes per thread.


DEFAULT = LatticeTuning()
"""The tuning every search uses unless given another."""
