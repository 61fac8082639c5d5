"""Race engines in threads; the first decisive answer wins.

Lattice enumeration is 100× faster than CP-SAT on dense unplanted systems,
yet CP-SAT finds some planted sets that enumeration misses, so both run side
by side (their kernels and solvers release the GIL). The first engine that
decides (a solution when one is wanted, a complete search otherwise) stops
the others, and the portfolio joins every engine thread before it returns:
an engine left running inside C++ code at interpreter exit aborts the
process. Engines therefore answer a stop request within a fraction of a
second (see :mod:`indexset.search.engines`).
"""

from __future__ import annotations

import threading

from indexset.errors import InputError
from indexset.result import FEASIBLE, UNKNOWN, Result
from indexset.search import bkz
from indexset.search.engines import NAMES, get_engine

ENGINES = ("lattice", "cpsat")
"""The engines raced by default."""


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
        Engine names (default: every available engine).
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
    names = list(engines or available_engines())
    unknown = [name for name in names if name not in NAMES]
    if unknown:
        raise InputError("engines", f"unknown engine {unknown[0]!r}; choose from {', '.join(NAMES)}")
    # fpylll (cysignals) cannot be imported for the first time from a worker thread.
    bkz.load()
    chosen = {name: get_engine(name) for name in names}
    stop_all = threading.Event()
    results: dict[str, Result] = {}
    done = threading.Condition()

    def worker(name):
        engine = chosen[name]
        options = {k: v for k, v in extra.items() if k in engine.options}
        if len(names) > 1 and "workers" in engine.options:
            options.setdefault("workers", 1)  # one core per engine: the machine has few
        try:
            result = engine.search(system, reduction, find_all=find_all, time_limit=time_limit, seed=seed, stop=stop_all, progress=progress, **options)
        except Exception as exc:  # an engine bug must not hide the others' answers
            result = Result(UNKNOWN, f"engine {name} failed: {type(exc).__name__}: {exc}", engine=name)
        with done:
            results[name] = result
            if _decisive(result, find_all):
                stop_all.set()
            done.notify_all()

    threads = [threading.Thread(target=worker, args=(name,), name=f"indexset-{name}") for name in names]
    for thread in threads:
        thread.start()
    try:
        with done:
            while len(results) < len(names) and not stop_all.is_set():
                done.wait(0.1)
                if stop is not None and stop.is_set():
                    stop_all.set()
    finally:
        stop_all.set()
        _join(threads)
    with done:
        return _pick(dict(results), names, find_all)


def _join(threads) -> None:
    """Wait for every engine thread (in short joins, so that a second Ctrl-C still interrupts)."""
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
