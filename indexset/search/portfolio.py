"""Race engines in threads; the first decisive answer wins.

Lattice enumeration is far faster than CP-SAT on dense unplanted systems
(BENCHMARKS.md, "Evidence for tuning values", `PortfolioTuning`), yet CP-SAT finds some planted sets that enumeration misses. The default
portfolio (lattice and CP-SAT) is therefore staged by what the lattice
engine predicts once its basis is reduced:

- a tree predicted shorter than ``cpsat_from`` seconds is walked by the
  lattice engine alone, on every core, and OR-Tools is never loaded;
- a longer one is walked on every core too, and CP-SAT joins as one more
  thread once the enumeration has run ``cpsat_after`` seconds without an
  answer, for a share of the predicted time (:meth:`PortfolioTuning.cpsat_seconds`).
  The predictions are noisy (Knuth's estimate is heavy-tailed), so CP-SAT
  waits for the tree to prove itself long before it takes a core's worth
  of time;
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
from dataclasses import dataclass

from indexset.budget import Budget
from indexset.errors import InputError
from indexset.result import FEASIBLE, UNKNOWN, Result
from indexset.search import bkz
from indexset.search.engines import NAMES, get_engine
from indexset.trace import Trace

ENGINES = ("lattice", "cpsat")
"""The engines raced by default."""

@dataclass(frozen=True)
class PortfolioTuning:
    """Tunables of the staged portfolio; each line states its rule."""

    cpsat_from: float = 10.0  # predicted enumeration seconds from which CP-SAT runs beside the lattice engine.
    cpsat_after: float = 10.0  # seconds the enumeration runs alone before CP-SAT starts beside it.
    cpsat_share: float = 0.15  # CP-SAT's time: this share of the predicted enumeration time ...
    cpsat_min_seconds: float = 3.0  # ... at least this many seconds ...
    cpsat_max_seconds: float = 30.0  # ... and at most this many (on unplanted systems it never finishes).

    def cpsat_seconds(self, predicted: float) -> float:
        """CP-SAT's share of a long search of ``predicted`` seconds."""
        return min(self.cpsat_max_seconds, max(self.cpsat_min_seconds, self.cpsat_share * predicted))


DEFAULT = PortfolioTuning()
"""The schedule every portfolio uses unless given another."""


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


def run_portfolio(system, reduction=None, *, engines=None, find_all=False, budget: Budget | None = None, time_limit=None, seed=0, stop=None, progress=None,
                  portfolio_tuning: PortfolioTuning = DEFAULT, trace: Trace | None = None, **extra) -> Result:
    """Run several engines on one system and return the first decisive Result.

    Parameters
    ----------
    engines : sequence of str, optional
        Engine names (default: lattice and CP-SAT, staged as the module says).
    budget : Budget, optional
        The caller's deadline and stop request, shared with every engine
        (else built from ``time_limit`` and ``stop``).
    stop : threading.Event, optional
        Set by the caller (Ctrl-C) to stop every engine.
    portfolio_tuning : PortfolioTuning
        When CP-SAT joins the lattice engine, and for how long.
    trace : Trace, optional
        Where the race records each engine's stages (under its name, as the
        engine goes: an engine stopped or failed still shows what it did)
        and ``portfolio``, every engine's status and time.
    extra : dict
        Engine-specific keyword options (e.g. ``min_size`` for CP-SAT,
        ``tuning`` for the lattice engine); each engine gets those it
        declares in its ``options``.

    Returns
    -------
    Result
        The winner's result, unknown when none decided; its ``stages`` are
        the trace's record.
    """
    names = list(engines or ENGINES)
    unknown = [name for name in names if name not in NAMES]
    if unknown:
        raise InputError("engines", f"unknown engine {unknown[0]!r}; choose from {', '.join(NAMES)}")
    # fpylll (cysignals) cannot be imported for the first time from a worker thread.
    bkz.load()
    race = _Race(system, reduction, find_all, budget or Budget.of(time_limit, stop), seed, progress, extra, trace or Trace())
    if sorted(names) == ["cpsat", "lattice"]:
        return race.staged(portfolio_tuning)
    return race.side_by_side([get_engine(name) for name in names])


class _Race:
    """Engine threads on one system, a shared stop event, and what they answered."""

    def __init__(self, system, reduction, find_all, budget: Budget, seed, progress, extra, trace: Trace) -> None:
        self.system, self.reduction, self.find_all = system, reduction, find_all
        self.seed, self.budget, self.progress, self.extra, self.trace = seed, budget, progress, extra, trace
        self.stop_all = threading.Event()
        self.results: dict[str, Result] = {}
        self.done = threading.Condition()
        self.threads: list[threading.Thread] = []
        self.names: list[str] = []

    def remaining(self) -> float | None:
        return self.budget.remaining()

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
        # The caller's budget, cut to the engine's share, and stopped too once the race is decided.
        budget = self.budget.within(seconds).also_stopped_by(self.stop_all).timed_from_now()
        trace = self.trace.child(engine.name)
        if "trace" in engine.options:
            options = dict(options, trace=trace)
        try:
            result = engine.search(self.system, self.reduction, find_all=self.find_all, budget=budget, seed=self.seed,
                                   progress=self.progress, **options)
        except Exception as exc:  # an engine bug must not hide the others' answers
            return Result(UNKNOWN, f"engine {engine.name} failed: {type(exc).__name__}: {exc}", engine=engine.name)
        if result.stages is not trace.record:
            trace.merge(result.stages)
        return result

    def wait(self, until=None) -> bool:
        """Until ``until()`` holds, every engine answered, or one decided; True when one decided or the race stopped."""
        with self.done:
            while not self.stop_all.is_set() and len(self.results) < len(self.names) and not (until and until()):
                self.done.wait(0.1)
                if self.budget.stopped():
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
            winner = _pick(dict(self.results), self.names, self.find_all)
        self.trace.note(portfolio={name: {"status": r.status, "time_s": round(r.time_s, 4), "complete": r.complete} for name, r in self.results.items()})
        winner.stages = self.trace.record
        return winner

    def side_by_side(self, engines) -> Result:
        try:
            for engine in engines:
                self.start(engine, **({"workers": 1} if len(engines) > 1 else {}))  # one core per engine: the machine has few
            self.wait()
        finally:
            result = self.finish()
        return result

    def staged(self, tuning: PortfolioTuning) -> Result:
        cores = os.cpu_count() or 1
        cpsat_scheduled = threading.Event()

        def plan(predicted):
            if predicted is None:
                return 1  # a tree too small to estimate: one thread is quickest
            if predicted >= tuning.cpsat_from and cores >= 2 and not self.stop_all.is_set():
                cpsat_scheduled.set()
                self.start(get_engine("cpsat"), seconds=tuning.cpsat_seconds(predicted), delay=tuning.cpsat_after, workers=1)
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
    decisive = [results[n] for n in names if n in results and _decisive(results[n], find_all)]
    if decisive:
        winner = min(decisive, key=lambda r: r.time_s)
    else:
        # No proof: keep any solutions found so far (partial enumeration).
        found = [results[n] for n in names if n in results and results[n].status == FEASIBLE]
        if found:
            winner = found[0]
        elif len(results) == 1:
            winner = next(iter(results.values()))
        else:
            winner = Result(UNKNOWN, "; ".join(r.reason for r in results.values()) or "no engine ran")
    return winner
