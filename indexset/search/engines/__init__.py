"""Search engines for 0/1 systems ``M z = t``; every engine returns a Result.

The engine interface (every engine module exposes one ``search``)::

    search(system, reduction=None, *, find_all=False, time_limit=None,
           seed=0, stop=None, progress=None) -> Result

- ``system`` is an :class:`indexset.search.system.System` (exact integers; a
  ``slack`` vector means ``|M z − t| ≤ slack``).
- ``reduction`` is the :class:`indexset.search.reduce.Reduction` of the system when
  the caller has it (z0, LLL-reduced kernel basis K), else None.
- ``find_all``: enumerate every solution (no duplicates) instead of stopping
  at the first.
- ``time_limit`` in seconds (None: no limit); ``stop`` a
  ``threading.Event`` that asks the engine to stop soon (portfolio,
  Ctrl-C); ``progress(dict)`` is called now and then with counters.
- Returns a :class:`indexset.result.Result` with status ``feasible``,
  ``infeasible`` (only after a complete search) or ``unknown``;
  ``solutions`` holds the supports found (all of them when ``find_all`` and
  ``complete``), ``index_set`` the first, ``count`` the number when
  complete, ``engine`` the engine's name.

``brute`` is the slow, obviously-correct reference used by the tests.
"""
