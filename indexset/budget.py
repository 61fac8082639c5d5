"""One budget of time and one stop request, shared by every stage of a decision.

Every engine, stage and workflow asks the same two questions: has the
caller asked us to stop, and is the time up? :class:`Budget` answers both
on one clock (``time.perf_counter``) and in one wording
(:data:`INTERRUPTED`, :data:`TIME_LIMIT`), so a reason reads the same
wherever the search ended.

>>> import threading
>>> budget = Budget.of(time_limit=None)
>>> budget.halt_reason() is None
True
>>> budget.stop.set()
>>> budget.halt_reason()
'interrupted'
>>> Budget.of(time_limit=0.0).halt_reason()
'time limit reached'
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field, replace

INTERRUPTED = "interrupted"
"""Why work ended when a stop was requested (Ctrl-C, or another engine decided first)."""

TIME_LIMIT = "time limit reached"
"""Why work ended when its deadline passed."""


class AnyEvent:
    """Set when any of its events is (``None`` entries ignored).

    Duck-types the ``is_set`` of :class:`threading.Event`, so it can stand
    wherever a stop request is read.
    """

    def __init__(self, *events) -> None:
        self.events = tuple(event for event in events if event is not None)

    def is_set(self) -> bool:
        return any(event.is_set() for event in self.events)

    def set(self) -> None:
        """Set the first event (the budget's own)."""
        self.events[0].set()


@dataclass(frozen=True)
class Budget:
    """A deadline and a stop request.

    Attributes
    ----------
    deadline : float or None
        ``time.perf_counter()`` value after which work stops (None: no limit).
    stop : threading.Event or AnyEvent
        Set by anyone who wants the work to end soon.
    start : float
        ``time.perf_counter()`` value that elapsed times count from.
    """

    deadline: float | None = None
    stop: threading.Event | AnyEvent = field(default_factory=threading.Event)
    start: float = field(default_factory=time.perf_counter)

    @classmethod
    def of(cls, time_limit: float | None = None, stop=None, start: float | None = None) -> Budget:
        """A budget of ``time_limit`` seconds from ``start`` (default: now), stopped by ``stop``."""
        start = time.perf_counter() if start is None else start
        deadline = None if time_limit is None else start + float(time_limit)
        return cls(deadline, threading.Event() if stop is None else stop, start)

    def elapsed(self) -> float:
        """Seconds since ``start``."""
        return time.perf_counter() - self.start

    def remaining(self) -> float | None:
        """Seconds left before the deadline, never negative (None: no limit)."""
        return None if self.deadline is None else max(0.0, self.deadline - time.perf_counter())

    def share(self, fraction: float, floor: float = 1e-3) -> float | None:
        """``fraction`` of the time left, at least ``floor`` (None: no limit)."""
        left = self.remaining()
        return None if left is None else max(floor, fraction * left)

    def stopped(self) -> bool:
        """Whether a stop was requested."""
        return self.stop.is_set()

    def expired(self) -> bool:
        """Whether a stop was requested or the deadline passed."""
        return self.halt_reason() is not None

    def halt_reason(self) -> str | None:
        """:data:`INTERRUPTED` once a stop is requested, :data:`TIME_LIMIT` once the deadline passed, else None."""
        if self.stop.is_set():
            return INTERRUPTED
        if self.deadline is not None and time.perf_counter() >= self.deadline:
            return TIME_LIMIT
        return None

    def within(self, seconds: float | None) -> Budget:
        """The same stop request with the deadline brought forward to ``seconds`` from now (if sooner)."""
        if seconds is None:
            return self
        deadline = time.perf_counter() + max(0.0, float(seconds))
        return replace(self, deadline=deadline if self.deadline is None else min(deadline, self.deadline))

    def timed_from_now(self) -> Budget:
        """The same deadline and stop request, its elapsed time counted from now (a stage's own clock)."""
        return replace(self, start=time.perf_counter())

    def also_stopped_by(self, event) -> Budget:
        """The same deadline, stopped by ``event`` as well as by this budget's stop request."""
        return replace(self, stop=AnyEvent(self.stop, event))
