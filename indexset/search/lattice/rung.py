"""A stronger basis for a complete walk that runs far past its prediction.

Knuth's estimate of a tree is unbiased but heavy-tailed: on some trees it
falls short by an order of magnitude, and the candidate bases, bought by
the estimate, stay few. When the complete walk has run ``rung_after``
times its predicted time and has finished fewer than ``rung_progress`` of
its subtrees (so that much of it is still ahead), or has run
``rung_stalled_seconds`` without finishing any subtree, one more basis, the
default input order reduced with BKZ block ``rung_block``, is reduced in
a thread beside the walk, within ``rung_max_share`` of the walk's time so far; if the Gaussian heuristic scores it
``rung_gain`` higher than the walked basis (a tree e^gain times smaller),
the walk stops and starts again on it. Either basis's complete walk proves the same things (MATH.md §6.1),
so a restart changes the time, never the answer.
"""

from __future__ import annotations

import threading
import time
from dataclasses import replace

from indexset.search.lattice.basis import Lattice
from indexset.search.lattice.choose import Choice, profile_score
from indexset.search.lattice.job import Job
from indexset.search.lattice.walk import Run

RESTART = "restarted on a stronger basis"
"""Why a walk that a rung replaced ended (``Run.interrupted``)."""


class Rung:
    """The stronger basis of one complete walk: when to reduce it, and whether the walk restarts on it.

    Parameters
    ----------
    job : Job
    choice : Choice
        The walked basis and its estimate.
    workers : int
        Threads walking it.
    """

    def __init__(self, job: Job, choice: Choice, workers: int) -> None:
        tuning = job.tuning
        self.job = job
        self.score = profile_score(choice.lattice)
        predicted = choice.predicted_seconds(job)
        self.due = None if predicted is None else max(tuning.rung_min_seconds, tuning.rung_after * predicted / max(1, workers))
        self.usable = tuning.rung_block > choice.lattice.bkz_block and self.due is not None
        self.thread = None
        self.better: Lattice | None = None
        self.facts: dict = {}

    def watch(self, run: Run, began: float):
        """The check a walk's driving loop calls now and then: starts the reduction once the walk is due."""

        def check() -> None:
            tuning = self.job.tuning
            ahead = run.subtrees_done < tuning.rung_progress * max(1, run.subtrees)
            walked = time.perf_counter() - began
            # No subtree finished at all: the first few are each far past their share of the prediction.
            stalled = 0 < tuning.rung_stalled_seconds < walked and run.subtrees_done == 0 and run.subtrees > 1
            if self.usable and self.thread is None and ((walked > self.due and ahead) or stalled):
                self.thread = threading.Thread(target=self._reduce, args=(run, walked), name="indexset-rung")
                self.thread.start()

        return check

    def _reduce(self, run: Run, walked: float) -> None:
        began = time.perf_counter()
        # A share of the walk's time so far: the reduction takes a core from the walk, and on some lattices
        # BKZ of this block takes longer than the walk it would shorten (fpylll stops it between tours).
        budget = self.job.budget.within(self.job.tuning.rung_max_share * walked)
        lattice = replace(self.job, budget=budget).build(bkz_block=self.job.tuning.rung_block)
        score = profile_score(lattice) if lattice.searchable else float("-inf")
        self.facts = {"block": self.job.tuning.rung_block, "score_gain": round(score - self.score, 3), "seconds": round(time.perf_counter() - began, 4)}
        if lattice.searchable and score >= self.score + self.job.tuning.rung_gain and run.interrupted is None:
            self.better = lattice
            run.interrupted = RESTART  # the walk's threads stop at their next chunk

    def join(self) -> None:
        """Wait for the reduction, if it started (no thread outlives the search)."""
        if self.thread is not None:
            self.thread.join()

    def choice(self) -> Choice:
        """The stronger basis as the walk's choice (its tree estimated anew)."""
        from indexset.search.lattice.choose import estimated

        return estimated(self.job, Choice(self.better, {"bkz": self.job.tuning.rung_block}, [self.better]))
