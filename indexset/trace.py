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
import time
from collections.abc import Iterator

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

    def __contains__(self, key: str) -> bool:
        return key in self.record
