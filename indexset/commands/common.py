"""Small helpers shared by the subcommands: printing and option parsing."""

from __future__ import annotations

import json
import sys
from fractions import Fraction

from ..activations import parse_fraction
from ..errors import InputError


def emit_json(payload: dict) -> None:
    """Print one JSON object on stdout."""
    print(json.dumps(payload, indent=2, default=_default, ensure_ascii=False))


def _default(value):
    if isinstance(value, Fraction):
        return str(value)
    if hasattr(value, "tolist"):
        return value.tolist()
    return str(value)


def parse_index_set(text: str) -> list[int]:
    """Parse ``0,3,5`` (or an empty string for S = ∅) into ints."""
    text = text.strip()
    if not text:
        return []
    try:
        return [int(part) for part in text.split(",")]
    except ValueError:
        raise InputError("--index-set", f"{text!r} is not a comma-separated list of integers") from None


def parse_tolerance(text: str | None) -> Fraction | None:
    """Parse ``--tol`` as an exact nonnegative rational."""
    if text is None:
        return None
    value = parse_fraction(text, "--tol")
    if value < 0:
        raise InputError("--tol", "tolerance must be ≥ 0")
    return value


def add_cluster_options(parser, workers_help: str | None = None) -> None:
    """``--scheduler`` and ``--workers``: where long searches (or sweep runs) go."""
    parser.add_argument("--scheduler", metavar="tcp://HOST:PORT", help="run on this Dask cluster (its workers need indexset installed)")
    parser.add_argument("--workers", type=int, metavar="N", help=workers_help or "local Dask worker processes for a long lattice enumeration (default: every CPU; started only when the search is predicted to take ≥ 20 s)")


def cluster_from_args(args, *, always: bool = True):
    """The :class:`indexset.distributed.Cluster` the options ask for (a context manager).

    With ``always=False`` and neither option given, a no-op context that
    yields None (work stays in this process).
    """
    import contextlib

    from ..distributed import Cluster

    if args.workers is not None and args.workers < 1:
        raise InputError("--workers", "must be at least 1")
    if not always and args.scheduler is None and args.workers is None:
        return contextlib.nullcontext()
    cluster = Cluster(scheduler=args.scheduler, workers=args.workers)
    if args.scheduler is not None:
        cluster.client()  # connect now: a wrong address is bad input (exit 2), not a failed engine
    return cluster


def warn(message: str) -> None:
    """A line on stderr."""
    print(message, file=sys.stderr)


class Progress:
    """A throttled one-line progress display on stderr (silent when not a TTY).

    Call it with a dict of counters (the ``progress`` callback of solvers
    and engines); use as a context manager.
    """

    def __init__(self, label: str, enabled: bool | None = None) -> None:
        self.label = label
        self.enabled = sys.stderr.isatty() if enabled is None else enabled
        self._status = None
        self._start = None
        self._last = 0.0

    def __enter__(self) -> "Progress":
        import time

        self._start = time.perf_counter()
        if self.enabled:
            from rich.console import Console

            self._status = Console(stderr=True).status(self.label)
            self._status.__enter__()
        return self

    def __call__(self, counters: dict) -> None:
        import time

        now = time.perf_counter()
        if self._status is None or now - self._last < 0.2:
            return
        self._last = now
        text = ", ".join(f"{k} {v}" for k, v in counters.items())
        self._status.update(f"{self.label} [{now - self._start:.1f} s] {text}")

    def __exit__(self, *exc) -> None:
        if self._status is not None:
            self._status.__exit__(*exc)


class StopOnInterrupt:
    """Turn the first Ctrl-C into ``event.set()`` so work stops and reports.

    A second Ctrl-C raises KeyboardInterrupt as usual.
    """

    def __init__(self, event) -> None:
        self.event = event
        self._previous = None

    def _handler(self, signum, frame) -> None:
        if self.event.is_set():
            raise KeyboardInterrupt
        self.event.set()
        warn("indexset: interrupted, stopping and reporting what is known (Ctrl-C again to abort)")

    def __enter__(self) -> "StopOnInterrupt":
        import signal
        import threading

        try:  # cysignals replaces the SIGINT handler when fpylll is first imported: before ours, not after
            import fpylll  # noqa: F401
        except (ImportError, ValueError):
            pass
        if threading.current_thread() is threading.main_thread():
            self._previous = signal.signal(signal.SIGINT, self._handler)
        return self

    def __exit__(self, *exc) -> None:
        import signal

        if self._previous is not None:
            signal.signal(signal.SIGINT, self._previous)
