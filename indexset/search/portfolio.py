"""Race engines in threads; the first decisive answer wins.

Lattice enumeration is 100× faster than CP-SAT on dense unplanted systems,
yet CP-SAT finds some planted sets that enumeration misses. The default
portfolio (lattice and CP-SAT) is therefore staged by what the lattice
engine predicts once its basis is reduced:

- a tree predicted shorter than :data:`CPSAT_FROM` seconds is walked by the
  lattice engine alone, on every core, and OR-Tools is never loaded;
- a longer one is walked on every core too, and CP-SAT joins as one more
  thread once the enumeration has run :data:`CPSAT_AFTER` seconds without
  an answer, for a share of the predicted time (:func:`cpsat_seconds`).
  The predictions are noisy (Knuth's estimate is heavy-tailed: 447 M nodes
  predicted for a tree of 85 M at d = 3, n = 80; 35 M for one of 240 M at
  d = 2, n = 70), so CP-SAT waits for the tree to prove itself long
  before it takes a core's worth of time;
- when the lattice engine cannot search at all (tolerance rows, numerics),
  CP-SAT takes over on every core.

Other engine sets race side by side from the start. The first engine that
decides (a solution when one is wanted, a complete search otherwise) stops
the others, and the portfolio joins every engine thread before it returns:
an engine left running inside C++ code at interpreter exit aborts the
process. Engines therefore answer a stop request within a fraction of a
second (see :mod:`indexset.search.engines`).
"""

from __future__ import annotations

import os
import threading
import time

from indexset.errors import InputError
from indexset.result import FEASIBLE, UNKNOWN, Result
from indexset.search import bkz
from indexset.search.engines import NAMES, get_engine

ENGINES = ("lattice", "cpsat")
"""The engines raced by default."""

CPSAT_FROM = 10.0
"""Predicted enumeration seconds from which CP-SAT runs beside the lattice engine."""

CPSAT_AFTER = 10.0
"""Seconds the enumeration runs alone before CP-SAT starts beside it."""

CPSAT_SHARE = 0.15
CPSAT_MIN_SECONDS = 3.0
CPSAT_MAX_SECONDS = 30.0


def cpsat_seconds(predicted: float) -> float:
    """CP-SAT's share of a long search: 15 % of the predicted time, within [3 s, 30 s].

    The planted d = 3, n = 90 family that CP-SAT solves and enumeration does
    not took it 16 s here; on unplanted systems CP-SAT never finishes, so
    its share is what the portfolio pays for the chance.
    """
    return min(CPSAT_MAX_SECONDS, max(CPSAT_MIN_SECONDS, CPSAT_SHARE * predicted))


def available_engines() -> list[str]:
    """Default engines that import on this installation."""
    names = []
    for name in ENGINES:
        try:
            get_engine(name)
        except ImportError:
            continue
        names.append(name)
    return names


def _decisive(result: Result, find_all: bool) -> bool:
    if find_all:
        return result.complete
    return result.status != UNKNOWN


def run_portfolio(system, reduction=None, *, engines=None, find_all=False, time_limit=None, seed=0, stop=None, progress=None, **extra) -> Result:
    """Run several engines on one system and return the first decisive Result.

    Parameters
    ----------
    engines : sequence of str, optional
        Engine names (default: lattice and CP-SAT, staged as the module says).
    stop : threading.Event, optional
        Set by the caller (Ctrl-C) to stop every engine.
    extra : dict
        Engine-specific keyword options (e.g. ``min_size`` for CP-SAT);
        each engine gets those it declares in its ``options``.

    Returns
    -------
    Result
        The winner's result, with ``stages["portfolio"]`` listing every
        engine's status and time; unknown when none decided.
    """
    names = list(engines or ENGINES)
    unknown = [name for name in names if name not in NAMES]
    if unknown:
        raise InputError("engines", f"unknown engine {unknown[0]!r}; choose from {', '.join(NAMES)}")
    # fpylll (cysignals) cannot be imported for the first time from a worker thread.
    bkz.load()
    race = _Race(system, reduction, find_all, time_limit, seed, stop, progress, extra)
    if sorted(names) == ["cpsat", "lattice"]:
        return race.staged()
    return race.side_by_side([get_engine(name) for name in names])


class _Race:
    """Engine threads on one system, a shared stop event, and what they answered."""

    def __init__(self, system, reduction, find_all, time_limit, seed, stop, progress, extra) -> None:
        self.system, self.reduction, self.find_all = system, reduction, find_all
        self.seed, self.stop, self.progress, self.extra = seed, stop, progress, extra
        self.deadline = None if time_limit is None else time.perf_counter() + float(time_limit)
        self.stop_all = threading.Event()
        self.results: dict[str, Result] = {}
        self.done = threading.Condition()
        self.threads: list[threading.Thread] = []
        self.names: list[str] = []

    def remaining(self) -> float | None:
        return None if self.deadline is None else max(0.0, self.deadline - time.perf_counter())

    def start(self, engine, *, seconds: float | None = None, delay: float = 0.0, **options) -> None:
        """Run one engine in a thread of its own, after ``delay`` seconds, for at most ``seconds``.

        An engine whose race is decided, or whose time runs out, during its
        delay never starts; it answers unknown at once.
        """
        options = {k: v for k, v in {**self.extra, **options}.items() if k in engine.options}

        def work():
            left = self.remaining()
            if delay > 0 and self.stop_all.wait(delay if left is None else min(delay, left)):
                result = Result(UNKNOWN, f"engine {engine.name} not started: the race was decided first", engine=engine.name)
            elif delay > 0 and self.remaining() == 0.0:
                result = Result(UNKNOWN, f"engine {engine.name} not started: the time limit came first", engine=engine.name)
            else:
                result = self._search(engine, seconds, options)
            with self.done:
                self.results[engine.name] = result
                if _decisive(result, self.find_all):
                    self.stop_all.set()
                self.done.notify_all()

        thread = threading.Thread(target=work, name=f"indexset-{engine.name}")
        with self.done:
            self.names.append(engine.name)
            self.threads.append(thread)
        thread.start()

    def _search(self, engine, seconds: float | None, options: dict) -> Result:
        left = self.remaining()
        limit = seconds if left is None else left if seconds is None else min(seconds, left)
        try:
            return engine.search(self.system, self.reduction, find_all=self.find_all, time_limit=limit, seed=self.seed,
                                 stop=self.stop_all, progress=self.progress, **options)
        except Exception as exc:  # an engine bug must not hide the others' answers
            return Result(UNKNOWN, f"engine {engine.name} failed: {type(exc).__name__}: {exc}", engine=engine.name)

    def wait(self, until=None) -> bool:
        """Until ``until()`` holds, every engine answered, or one decided; True when one decided or the race stopped."""
        with self.done:
            while not self.stop_all.is_set() and len(self.results) < len(self.names) and not (until and until()):
                self.done.wait(0.1)
                if self.stop is not None and self.stop.is_set():
                    self.stop_all.set()
            return self.stop_all.is_set()

    def finish(self) -> Result:
        """Stop every engine, join them all (those started while joining too), and pick the answer."""
        self.stop_all.set()
        while True:
            with self.done:
                alive = [thread for thread in self.threads if thread.is_alive()]
            if not alive:
                break
            _join(alive)
        with self.done:
            return _pick(dict(self.results), self.names, self.find_all)

    def side_by_side(self, engines) -> Result:
        try:
            for engine in engines:
                self.start(engine, **({"workers": 1} if len(engines) > 1 else {}))  # one core per engine: the machine has few
            self.wait()
        finally:
            result = self.finish()
        return result

    def staged(self) -> Result:
        cores = os.cpu_count() or 1
        cpsat_scheduled = threading.Event()

        def plan(predicted):
            if predicted is None:
                return 1  # a tree too small to estimate: one thread is quickest
            if predicted >= CPSAT_FROM and cores >= 2 and not self.stop_all.is_set():
                cpsat_scheduled.set()
                self.start(get_engine("cpsat"), seconds=cpsat_seconds(predicted), delay=CPSAT_AFTER, workers=1)
            return cores

        try:
            self.start(get_engine("lattice"), plan=plan, workers=cores)  # alone until the plan starts CP-SAT
            decided = self.wait(until=lambda: "lattice" in self.results)
            if not decided and not cpsat_scheduled.is_set() and self.remaining() != 0.0 and not self.stop_all.is_set():
                # The lattice engine could not search (tolerance rows, numerics): CP-SAT on every core.
                self.start(get_engine("cpsat"), workers=cores)
                self.wait()
            elif not decided:
                self.wait()
        finally:
            result = self.finish()
        return result


def _join(threads) -> None:
    """Wait for these threads (in short joins, so that a second Ctrl-C still interrupts)."""
    for thread in threads:
        while thread.is_alive():
            thread.join(0.05)


def _pick(results: dict, names: list, find_all: bool) -> Result:
    summary = {name: {"status": r.status, "time_s": round(r.time_s, 4), "complete": r.complete} for name, r in results.items()}
    decisive = [results[n] for n in names if n in results and _decisive(results[n], find_all)]
    if decisive:
        winner = min(decisive, key=lambda r: r.time_s)
    else:
        # No proof: keep any solutions found so far (partial enumeration).
        found = [results[n] for n in names if n in results and results[n].status == FEASIBLE]
        winner = found[0] if found else Result(UNKNOWN, "; ".join(r.reason for r in results.values()) or "no engine ran")
    winner.stages = dict(winner.stages, portfolio=summary)
    return winner
