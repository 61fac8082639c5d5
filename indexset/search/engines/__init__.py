"""Search engines for systems ``M z = t`` over a box: one protocol, one result type.

Every engine implements :class:`Engine` (dimod's sampler interface is the
model): a ``name``, the engine-specific keyword ``options`` it accepts, and
``search``. The portfolio hands an engine only the options it declares, and
``tests/search/test_engines.py`` runs one conformance suite over every
engine against the brute force.

- ``system`` is an :class:`indexset.search.system.System` (exact integers;
  a ``slack`` vector means ``|M z − t| ≤ slack``).
- ``reduction`` is the :class:`indexset.search.reduce.Reduction` of the
  system when the caller has it (z0, LLL-reduced kernel basis K), else None.
- ``find_all``: enumerate every solution (no duplicates) instead of
  stopping at the first.
- ``budget``: the :class:`indexset.budget.Budget` (deadline and stop
  request) the caller shares with every stage; or, when it is None,
  ``time_limit`` in seconds (None: no limit) and ``stop``, a
  ``threading.Event``. The engine honours a stop within a fraction of a
  second; ``progress(dict)`` is called now and then with counters.
- ``count_only`` (an option every engine declares): with ``find_all``,
  count every solution but list only the first (or a few).
- The box is 0 ≤ z_j ≤ u_j (``system.upper``; 0/1 when None). A solution
  of a 0/1 system is its support (sorted indices of the ones), of a
  bounded one its values (:meth:`indexset.search.system.System.solution`).
- Returns a :class:`indexset.result.Result` with status ``feasible``,
  ``infeasible`` (only after a complete search) or ``unknown``;
  ``solutions`` holds the solutions found (all of them when ``find_all``
  and ``complete``, but for ``count_only``), ``index_set`` the first,
  ``count`` the number when complete, ``engine`` the engine's name. Every
  reported solution satisfies the system exactly.

``brute`` is the slow, obviously-correct reference.
"""

from __future__ import annotations

import importlib
from typing import Protocol, runtime_checkable

from indexset.result import Result

NAMES = ("lattice", "cpsat", "brute")
"""Every engine; the portfolio races ``lattice`` and ``cpsat`` by default."""

_MODULES = {"lattice": "indexset.search.lattice.engine", "cpsat": "indexset.search.engines.cpsat", "brute": "indexset.search.engines.brute"}
"""Where each engine lives (the lattice engine is a package of its own)."""


@runtime_checkable
class Engine(Protocol):
    """What every search engine provides."""

    name: str
    options: tuple
    """Engine-specific keyword options that ``search`` accepts (beyond the common ones)."""

    def search(self, system, reduction=None, *, find_all: bool = False, budget=None, time_limit: float | None = None,
               seed: int = 0, stop=None, progress=None, **options) -> Result:
        """Decide the system (see the module documentation)."""
        ...


def get_engine(name: str) -> Engine:
    """The engine called ``name`` (its module is imported on first use: OR-Tools, Numba).

    Raises
    ------
    KeyError
        For a name not in :data:`NAMES`.
    """
    if name not in NAMES:
        raise KeyError(name)
    return importlib.import_module(_MODULES[name]).ENGINE
