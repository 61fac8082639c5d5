"""A stage recorder: what each stage of a decision took and counted.

In the manner of fpylll's tracer (``tools/bkz_stats.py``), in small: a
stage is timed by a ``with`` block, and facts (counters, choices) are noted
beside the timings. The record is one flat dict whose keys say what they
hold (``basis_s`` seconds of the basis stage, ``nodes`` a count), which is
what :class:`indexset.result.Result` carries as ``stages`` and the command
line prints with ``--json``.

>>> trace = Trace()
>>> with trace.stage("basis"):
...     trace.note(candidates=3)
>>> sorted(trace.record)
['basis_s', 'candidates']
>>> trace.record["candidates"]
3
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable, Iterator

DIGITS = 4
"""Decimal places kept of a stage's seconds."""


class Trace:
    """Timings (``<stage>_s``) and facts of the stages of one decision.

    Parameters
    ----------
    record : dict, optional
        Facts known before the first stage (they are copied).
    """

    def __init__(self, record: dict | None = None) -> None:
        self.record = dict(record or {})

    @contextlib.contextmanager
    def stage(self, name: str) -> Iterator[Trace]:
        """Time the block as ``<name>_s`` (seconds, also when the block raises)."""
        began = time.perf_counter()
        try:
            yield self
        finally:
            self.record[f"{name}_s"] = round(time.perf_counter() - began, DIGITS)

    def note(self, **facts) -> None:
        """Record ``facts`` (later values replace earlier ones)."""
        self.record.update(facts)

    def merge(self, facts: dict) -> None:
        """Record every key of ``facts``."""
        self.record.update(facts)

    def get(self, key: str, default=None):
        """A recorded fact, or ``default``."""
        return self.record.get(key, default)

    def seconds(self, name: str, since: float) -> None:
        """Record ``<name>_s`` as the seconds since the ``time.perf_counter()`` value ``since``."""
        self.record[f"{name}_s"] = round(time.perf_counter() - since, DIGITS)

    def child(self, name: str) -> Trace:
        """The trace of a sub-stage, recorded under ``name`` as it fills (so a stage cut short still shows what it did).

        >>> trace = Trace()
        >>> trace.child("search").child("lattice").note(nodes=5)
        >>> trace.record
        {'search': {'lattice': {'nodes': 5}}}
        """
        sub = Trace()
        sub.record = self.record.setdefault(name, {})
        return sub

    def __contains__(self, key: str) -> bool:
        return key in self.record


class Reporter:
    """Counters to a ``progress`` callable at most once every ``every`` seconds.

    Every long stage reports through one: it builds its counters only when
    a report is due, and several threads may ask at once.

    >>> sent = []
    >>> report = Reporter(sent.append, every=0.0)
    >>> report(lambda: {"nodes": 1})
    >>> sent
    [{'nodes': 1}]
    >>> Reporter(None)(lambda: 1 / 0)  # no callable: the counters are never built
    """

    def __init__(self, progress: Callable | None, every: float = 1.0) -> None:
        self.progress, self.every = progress, every
        self.last = time.perf_counter()
        self.lock = threading.Lock()

    def __call__(self, counters: Callable[[], dict]) -> None:
        """Send ``counters()`` when a report is due."""
        if self.progress is None:
            return
        now = time.perf_counter()
        with self.lock:
            if now - self.last < self.every:
                return
            self.last = now
        self.progress(counters())
