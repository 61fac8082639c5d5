"""Incomplete walks for a first solution: limited discrepancy, linear pruning, extreme-pruning trials.

First come limited-discrepancy passes (Harvey and Ginsberg, IJCAI 1995) of
a strongly reduced basis (in a process that has loaded the kernels, of the
default basis first), beside its linear passes, before the candidate
bases are built: pass k walks the paths whose children, numbered by their
place in the zig-zag order, sum to at most k, so the tree's first-choice
path and its near neighbours are tried before anything far from them; on
design systems, whose solutions lie close to a well-reduced basis's first
path, one turns up after a few discrepancies. A linear pass
walks one basis's tree under a pruning profile, a tiny part of the
whole tree; over several bases (each a different tree, so a different
chance to keep the solution's path) and growing slacks, planted solutions
turn up orders of magnitude sooner than in the complete walk. When the
complete walk is predicted to be very long, randomised extreme-pruning
trials follow (Gama, Nguyen and Regev, EUROCRYPT 2010): fresh bases under
one tight profile (:mod:`indexset.search.lattice.extreme`). Every leaf is
checked exactly as in the complete search; finding nothing proves nothing
(MATH.md §6.1).
"""

from __future__ import annotations

import collections
import dataclasses
import threading
import time
from typing import NamedTuple

import numpy as np

from indexset.search.lattice import extreme
from indexset.search.lattice.basis import Lattice
from indexset.search.lattice.job import Job
from indexset.search.lattice.walk import NAME, Run, estimate_nodes
from indexset.trace import Reporter


def pruning_profile(lattice: Lattice, slack: float) -> np.ndarray:
    """Linear pruning: ``lpart[i] ≤ R² · min(1, (1 + slack)(D − i)/D)`` at level i.

    The bound grows linearly with the number of fixed levels ``D − i``, as
    the share of ‖w‖² that a random-looking w puts on the last ``D − i``
    Gram–Schmidt directions (Gama, Nguyen and Regev, "Lattice enumeration
    using extreme pruning", EUROCRYPT 2010). A walk under it is
    incomplete: it may miss solutions, never invent one.
    """
    D = lattice.D
    return extreme.profile_bounds(lattice.data.radius2, (1.0 + slack) * (D - np.arange(D)) / D)


def passes_seconds(job: Job, predicted: float, hopeless: bool, share: float | None = None) -> float:
    """The passes' time: a share of the predicted complete walk, capped, and a share of the time left.

    ``share`` defaults to ``tuning.pruned_share``. Under a time limit a
    complete walk that cannot end in time proves nothing in time, so the
    passes, which may find, then get more of it; with trials (``hopeless``)
    and a walk predicted far beyond the time left, all of it: the trials
    find with a far higher probability per node than the complete walk.
    """
    tuning = job.tuning
    seconds = min((tuning.pruned_share if share is None else share) * predicted, tuning.extreme_max_seconds if hopeless else tuning.pruned_max_seconds)
    left = job.budget.remaining()
    if left is not None and hopeless and predicted > tuning.trials_take_the_limit_beyond * left:
        return left
    if left is not None:
        share = tuning.pruned_share_of_limit_when_hopeless if predicted > left else tuning.pruned_share_of_limit
        seconds = min(seconds, share * left)
    return seconds


class _Pass(NamedTuple):
    """One incomplete walk: a basis under a pruning profile (None: the radius) or a discrepancy limit (None: none).

    ``most_seconds``: with trials to follow, the pass is put off until
    after them when its walk is predicted longer than this, and when it
    walks longer (or longer than ``linear_trials_worth`` trials); a pass
    put off has none. ``trial_began``: for an extreme-pruning trial, the
    ``time.perf_counter()`` value at which its basis began (None: no trial).
    """

    lattice: Lattice
    bound2: np.ndarray | None = None
    limit: int | None = None
    most_seconds: float | None = None
    trial_began: float | None = None


def pruned_passes(job: Job, bases: list, seconds: float, workers: int = 1, trials: Trials | None = None,
                  found: threading.Event | None = None) -> tuple[list, dict]:
    """Look for a first solution by incomplete walks of several bases, within ``seconds``.

    Parameters
    ----------
    job : Job
        The search (its budget's deadline and stop request end the passes
        earlier; its ``progress`` hears the nodes of all passes so far,
        about once a second).
    bases : list of Lattice
        Reduced bases of the same lattice (:func:`indexset.search.lattice.choose.choose_lattice`).
    seconds : float
        Time for all passes together.
    workers : int
        Passes walked at once, each in its own thread (the kernel releases
        the GIL); the first solution stops them all. Which pass finds first
        may then depend on timing, never whether what it reports is a solution.
    trials : Trials, optional
        Fresh bases under an extreme pruning profile, walked once the
        linear passes are done. Linear passes predicted longer than
        ``linear_share_with_trials`` of ``seconds``, or that walk longer,
        or longer than ``linear_trials_worth`` trials, wait until the
        trials are over (or walk in their place when the profile cannot
        be computed). With several workers and trials that hold a thread,
        the linear passes take all threads but one, and the trials that
        one from the start.
    found : threading.Event, optional
        Set when these passes find a solution, and ends them when set
        elsewhere (passes running beside them, :class:`Beside`).

    Returns
    -------
    solutions : list
        Supports found (checked exactly), empty when the passes found none.
    facts : dict
        Passes run, nodes, seconds, whether a solution was found, and (after
        limited-discrepancy passes) the highest limit walked to its end.
    """
    began = time.perf_counter()
    found = found or threading.Event()
    budget = job.budget.within(max(0.0, seconds)).also_stopped_by(found)
    jobs = [(slack, lattice) for slack in job.tuning.pruning_slacks for lattice in bases]
    if found.is_set():  # passes beside found first
        jobs, trials = [], None
    most = None
    if trials is not None:
        trials.start()  # the profile is computed while the linear passes walk
        most = job.tuning.linear_share_with_trials * seconds
    queue = [_Pass(lattice, pruning_profile(lattice, slack), most_seconds=most) for slack, lattice in jobs]
    try:
        return _walk_passes(job, [queue], budget, found, workers, trials, began)
    finally:
        if trials is not None:
            trials.close()


def discrepancy_passes(job: Job, lattice: Lattice, seconds: float, workers: int = 1, slacks: tuple = (), found: threading.Event | None = None) -> tuple[list, dict]:
    """Look for a first solution by limited-discrepancy walks of one basis (and linear ones), within ``seconds``.

    Pass k walks the paths whose children sum to at most k discrepancies
    (:func:`indexset.native.enumerate.enumerate_box`), for k = 0, 1, …,
    ``tuning.max_discrepancies``. The linear pruned passes of the same
    basis at ``slacks`` run beside them (each kind finds solutions the
    other misses: solvediophant runs depth-first and limited-discrepancy
    search side by side for that reason): with several workers one thread
    walks each kind, with one the two kinds alternate. ``found`` as for
    :func:`pruned_passes`, which returns what this returns.
    """
    began = time.perf_counter()
    found = found or threading.Event()
    budget = job.budget.within(max(0.0, seconds)).also_stopped_by(found)
    limited = [_Pass(lattice, limit=k) for k in range(job.tuning.max_discrepancies + 1)]
    linear = [_Pass(lattice, pruning_profile(lattice, slack)) for slack in slacks]
    if workers > 1 and linear:
        queues = [limited, linear]  # one thread each, as solvediophant's two processes; a thread whose queue is empty helps the other
    else:
        queues = [[task for pair in zip(limited, linear) for task in pair] + limited[len(linear):] + linear[len(limited):]]
    return _walk_passes(job, queues, budget, found, workers, None, began)


def _walk_passes(job: Job, queues: list, budget, found: threading.Event, workers: int, trials: Trials | None, began: float) -> tuple[list, dict]:
    """Walk the passes of ``queues`` (then ``trials``) on ``workers`` threads: the supports found and the facts.

    Thread k takes its passes from queue k modulo their number first, then from the others, then the trials.
    """
    passes = _Passes(job, [collections.deque(queue) for queue in queues], budget, found, trials, workers)
    threads = [threading.Thread(target=passes.work, args=(None, k), name=f"indexset-pruned-{k}") for k in range(1, max(1, int(workers)))]
    for thread in threads:
        thread.start()
    try:
        passes.work(passes.report, 0)
    finally:
        for thread in threads:
            thread.join()
    if passes.failures:
        raise passes.failures[0]
    facts = {"passes": passes.passes, "nodes": passes.nodes, "seconds": round(time.perf_counter() - began, 4), "found": bool(passes.solutions)}
    if passes.discrepancies is not None:
        facts["discrepancies"] = passes.discrepancies
    if passes.outrun:
        facts["outrun"] = passes.outrun
    if trials is not None:
        facts.update(trials.facts())
    return passes.solutions, facts


def _walk_seconds(job: Job, lattice: Lattice, bound2: np.ndarray) -> float:
    """Predicted seconds of one walk of ``lattice`` under ``bound2`` (a quick estimate: ``walk_probes`` descents)."""
    return job.node_seconds(estimate_nodes(lattice, job.tuning.walk_probes, job.seed, bound2, job.tuning))


class _Passes:
    """The queues of incomplete passes that :func:`pruned_passes` and :func:`discrepancy_passes` hand to their threads, and their results."""

    def __init__(self, job: Job, queues: list, budget, found: threading.Event, trials: Trials | None, workers: int = 1) -> None:
        self.job, self.queues, self.budget, self.found, self.trials, self.workers = job, queues, budget, found, trials, workers
        self.lock = threading.Lock()
        self.running = []
        self.passes = self.nodes = 0
        self.discrepancies = None  # the highest discrepancy limit whose pass ended
        self.solutions, self.failures = [], []
        self.put_off = collections.deque()  # linear passes predicted too long to walk before the trials, or stopped at their share
        self.outrun = 0  # passes stopped at their share
        self.before_trials = {}  # linear passes walking ahead of the trials: their stop event -> when they started
        self.ahead = 0  # threads taken by linear passes ahead of the trials (walking, or being estimated)
        self.trial_seconds = []  # each trial's seconds, its basis and its walk
        self.reporter = Reporter(job.progress)

    def work(self, on_chunk=None, thread: int = 0) -> None:
        """Walk passes from the queues (thread ``thread``'s own first) until they are empty, the time is up, or something halts them."""
        try:
            while True:
                task = self._next(thread)
                if task is None:
                    return
                budget, ahead = self.budget.within(task.most_seconds), None
                if task.most_seconds is not None:
                    ahead = threading.Event()
                    budget = budget.also_stopped_by(ahead)
                run = Run(self.job.system, task.lattice, False, budget, self.job.tuning, bound2=task.bound2, limit=task.limit)
                with self.lock:
                    self.running.append(run)
                    if ahead is not None:
                        self.before_trials[ahead] = time.perf_counter()
                ended = run.drive(run.new_walk(), task.lattice.D, -1, progress=on_chunk)
                with self.lock:
                    self.running.remove(run)
                    if ahead is not None:
                        del self.before_trials[ahead]
                        self.ahead -= 1
                    if task.trial_began is not None and ended:
                        self._trial_ended(time.perf_counter() - task.trial_began)
                    self.passes, self.nodes = self.passes + 1, self.nodes + run.nodes
                    if not (ended or run.solutions or task.most_seconds is None or self.budget.expired()):  # it outran its share
                        self.outrun += 1
                        self.put_off.append(task._replace(most_seconds=None))
                    if ended and task.limit is not None:
                        self.discrepancies = max(self.discrepancies or 0, task.limit)
                    if run.solutions and not self.solutions:
                        self.solutions = run.solutions
                        self.found.set()
                if on_chunk is not None:
                    on_chunk()  # trials whose walks end in one chunk spend their time in BKZ: report between passes too
        except BaseException as exc:  # surfaced in the calling thread
            self.failures.append(exc)
            self.found.set()

    def _next(self, thread: int) -> _Pass | None:
        """The next pass to walk: from the thread's own queue, else another's, else a trial, else a pass put off; None when the passes are over.

        A pass with ``most_seconds`` is estimated here, in the thread that
        would walk it (so the estimates run on every core, and the walks
        start at once), and put off when predicted longer. One admitted
        stops at the same share: Knuth's estimate is heavy-tailed, and a
        pass it puts far too low would hold the trials back for as long as
        it walks. It stops too once it has walked ``linear_trials_worth``
        times the trials' mean seconds (:meth:`_trial_ended`).
        """
        while True:
            with self.lock:
                if self.budget.expired():
                    return None
                task = None if self._trials_hold_the_last_thread() else self._queued(thread)
                if task is not None and task.most_seconds is not None:
                    self.ahead += 1
            if task is None:
                break
            if task.most_seconds is None or _walk_seconds(self.job, task.lattice, task.bound2) <= task.most_seconds:
                return task
            with self.lock:
                self.ahead -= 1
                self.put_off.append(task._replace(most_seconds=None))
        if self.trials is not None and self.trials.ready():
            began = time.perf_counter()
            trial = self.trials.next(self.budget)  # outside the lock: a fresh basis takes a BKZ reduction
            if trial is not None:
                return _Pass(*trial, trial_began=began)
        if self.trials is not None and self.trials.failed and any(self.queues):
            return self._next(thread)  # no profile: the queued passes walk on every thread, as without trials
        with self.lock:  # the trials are over (or there are none): the long linear passes, while time is left
            return self.put_off.popleft() if self.put_off and not self.budget.expired() else None

    def _trials_hold_the_last_thread(self) -> bool:
        """Whether this thread leaves the queued linear passes to the trials (under the lock).

        With trials that hold a thread (a complete walk predicted past
        ``trials_hold_a_thread_beyond``) and two threads or more, the
        linear passes ahead of them take all threads but one, so that
        trials walk beside them from the start and measure what they cost
        (:meth:`_trial_ended`).
        """
        trials = self.trials
        return trials is not None and trials.hold_a_thread and not trials.failed and self.workers > 1 and self.ahead >= self.workers - 1

    def _trial_ended(self, seconds: float) -> None:
        """Count a trial walked to its end; stop the linear passes ahead of the trials that have walked ``linear_trials_worth`` trials (under the lock).

        The trials beside them measure what a chance of success costs on
        this lattice: a linear pass that has found nothing in the time of
        several trials waits until they are over, whatever its prediction.
        """
        self.trial_seconds.append(seconds)
        most = self.job.tuning.linear_trials_worth * sum(self.trial_seconds) / len(self.trial_seconds)
        now = time.perf_counter()
        for ahead, started in self.before_trials.items():
            if now - started > most:
                ahead.set()

    def _queued(self, thread: int) -> _Pass | None:
        """The next queued pass, the thread's own queue first (under the lock)."""
        count = len(self.queues)
        for index in ((thread + k) % count for k in range(count)):
            if self.queues[index]:
                return self.queues[index].popleft()
        return None

    def report(self) -> None:
        """Nodes of every pass so far to the job's ``progress``, at most once a second."""
        self.reporter(self._counters)

    def _counters(self) -> dict:
        with self.lock:
            nodes = self.nodes + sum(run.nodes for run in self.running)
        counters = {"engine": NAME, "nodes": nodes, "solutions": len(self.solutions), "elapsed_s": round(self.job.budget.elapsed(), 3), "stage": "pruned passes"}
        if self.trials is not None:
            counters["trials"] = self.trials.walked
        return counters


class Beside:
    """Incomplete passes in a thread of their own, beside what the engine does next.

    Two uses, one thread each (:func:`discrepancy_beside`,
    :func:`trials_beside`). The passes share the ``found`` event with what
    runs beside them: whoever finds first sets it and stops the other.
    The engine ends them with :meth:`halt` once it needs them no more, or
    needs their core. :meth:`join` waits for the thread (none outlives the
    search).

    Parameters
    ----------
    passes : callable
        ``passes(found, halted) -> (solutions, facts)``: the passes, ended
        early once either event is set (:func:`discrepancy_passes`,
        :func:`pruned_passes`).
    name : str
        The thread's name.
    """

    def __init__(self, passes, name: str) -> None:
        self.found = threading.Event()
        self.halted = threading.Event()  # set by halt: the passes end without a solution of theirs
        self.ended = threading.Event()  # set when the passes' thread ends, for whatever reason
        self.solutions, self.facts = [], {}
        self.failure = None
        self.thread = threading.Thread(target=self._run, args=(passes,), name=name)
        self.thread.start()

    def _run(self, passes) -> None:
        try:
            self.solutions, self.facts = passes(self.found, self.halted)
        except BaseException as exc:  # surfaced in the calling thread by join
            self.failure = exc
            self.found.set()
        finally:
            self.ended.set()

    def halt(self) -> None:
        """End the passes at their next chunk (what they found so far stays theirs)."""
        self.halted.set()

    def join(self) -> tuple[list, dict]:
        """The supports these passes found (checked exactly) and their facts, once their thread has ended."""
        self.thread.join()
        if self.failure is not None:
            raise self.failure
        return self.solutions, self.facts


def _halted_by(job: Job, halted: threading.Event) -> Job:
    """``job`` with its budget also stopped by ``halted``."""
    return dataclasses.replace(job, budget=job.budget.also_stopped_by(halted))


def discrepancy_beside(job: Job, lattice: Lattice, seconds: float) -> Beside:
    """Limited-discrepancy passes of one basis beside the rest of the engine, for at most ``seconds``.

    On a tree whose complete walk is hopeless the engine goes on at once to
    its candidate bases, whose reduction takes one core; these passes take
    the other, until the engine halts them to walk its pruned passes and
    trials on every core (the trials' profile is computed meanwhile, in a
    child process).
    """
    return Beside(lambda found, halted: discrepancy_passes(_halted_by(job, halted), lattice, seconds, 1, (), found), "indexset-discrepancy")


def trials_beside(job: Job, lattice: Lattice, seconds: float, first_trial: int = 0) -> Beside:
    """Extreme-pruning trials of ``lattice`` beside its complete walk, for at most ``seconds``.

    A first solution of a long walk comes at a point of the walk's order
    that no estimate predicts: on some trees near its start, on others
    near its end. Each trial is an independent draw (a fresh basis), so
    trials beside the walk, as solvediophant's two processes run depth
    first and limited discrepancy side by side, cut that variance at the
    cost of one thread of the walk for a while. They start at trial
    ``first_trial`` (those before it were walked by an earlier stage).
    """
    return Beside(lambda found, halted: pruned_passes(_halted_by(job, halted), [], seconds, 1, Trials(job, lattice, first_trial), found), "indexset-trials")


class Trials:
    """Randomised extreme pruning: trial k walks a fresh basis under one tight profile.

    Trial k's basis is the lattice's input vectors in an order drawn from
    ``(seed, k)``, reduced as the default basis is (LLL, then BKZ), so the
    trials are different trees, and each is reproducible unless a time
    limit cuts its reduction short. With ``hold_a_thread`` they keep a
    thread of their own from the start, beside the linear passes ahead of
    them (:func:`pruned_passes`). The profile
    (:func:`indexset.search.lattice.extreme.extreme_profile`, relative to the
    radius, so one serves every basis of the lattice) is computed on the
    first basis in a child process from :meth:`start`; :meth:`ready` waits
    for it before the first trial.
    """

    def __init__(self, job: Job, lattice: Lattice, first_trial: int = 0, hold_a_thread: bool = False) -> None:
        self.job, self.first, self.hold_a_thread = job, lattice, hold_a_thread
        self.pending, self.coefficients, self.failed = None, None, False
        self.taken = first_trial  # the index of the next trial: trials of an earlier stage are not walked again
        self.walked = self.unusable_in_a_row = 0
        self.lock = threading.Lock()

    def start(self) -> None:
        """Start computing the profile in a child process (:class:`~indexset.search.lattice.extreme.PendingProfile`); :meth:`ready` waits for it."""
        first, tuning = self.first, self.job.tuning
        basis_nodes = self.job.basis_seconds(first.D) / tuning.node_seconds
        self.pending = extreme.PendingProfile(first.data.rr, first.data.radius2, basis_nodes, tuning.trial_probability, tuning.pruner_seconds)

    def ready(self) -> bool:
        """Whether trials can run: the profile is computed (waiting for it); False when the Pruner failed."""
        self.coefficients = self.pending.result()
        self.failed = self.coefficients is None
        return not self.failed

    def close(self) -> None:
        """End the profile's child process if it still runs."""
        if self.pending is not None:
            self.pending.close()

    def next(self, budget) -> tuple | None:
        """``(basis, bounds)`` of the next trial; None when trials are over.

        They are over after ``max_unusable_in_a_row`` bases in a row that
        cannot be searched (numerics), which no later one is likely to change.
        """
        while True:
            with self.lock:
                if self.unusable_in_a_row >= self.job.tuning.max_unusable_in_a_row:
                    return None
                index, self.taken = self.taken, self.taken + 1
            order = np.random.default_rng([self.job.seed, index])
            lattice = dataclasses.replace(self.job, budget=budget).build(shuffle=order)  # the passes' deadline bounds its BKZ
            usable = lattice.searchable and lattice.D == self.first.D
            with self.lock:
                self.unusable_in_a_row = 0 if usable else self.unusable_in_a_row + 1
                self.walked += usable
            if usable:
                return lattice, extreme.profile_bounds(lattice.data.radius2, self.coefficients)

    def facts(self) -> dict:
        """Trials walked and the success probability of one by the pruning model (nothing when the profile could not be computed)."""
        if self.failed:
            return {}
        return {"trials": self.walked, "trial_probability": self.job.tuning.trial_probability}
