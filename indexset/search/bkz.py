"""fpylll's BKZ, imported where that is possible: on a main thread.

fpylll uses cysignals, which installs signal handlers when it is first
imported; Python allows that only on a main thread, and it replaces the
SIGINT handler. So the entry points that may later run the lattice engine
in a worker thread (the portfolio, Dask workers) or install their own
Ctrl-C handler call :func:`load` first, on their main thread. BKZ only
speeds the search up: without fpylll, LLL alone keeps every answer right.
"""

from __future__ import annotations

_LOADED: tuple | None = None


def load() -> tuple | None:
    """fpylll's ``(BKZ, IntegerMatrix)``, or None when it cannot be imported on this thread."""
    global _LOADED
    if _LOADED is None:
        try:
            from fpylll import BKZ, IntegerMatrix
        except (ImportError, ValueError):  # ValueError: a first import off the main thread
            return None
        _LOADED = (BKZ, IntegerMatrix)
    return _LOADED
