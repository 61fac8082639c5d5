"""Small helpers shared by the subcommands: printing and option parsing."""

from __future__ import annotations

import json
import os
import re
import sys
from fractions import Fraction

from indexset.errors import InputError


def emit_json(payload: dict) -> None:
    """Print one JSON object on stdout."""
    print(json.dumps(payload, indent=2, default=_default, ensure_ascii=False))


def emit_json_line(payload: dict) -> None:
    """Print one JSON object on one line of stdout (JSON Lines), flushed so a batch can be followed."""
    print(json.dumps(payload, default=_default, ensure_ascii=False), flush=True)


BAD_INPUT = "bad_input"
"""``status`` of a file of a batch that could not be solved (exit status 2)."""


def aggregate(codes: list[int]) -> int:
    """The exit status of a batch: 2 if any bad input, else 3 if any unknown, else 1 if any no, else 0."""
    for code in (2, 3, 1):
        if code in codes:
            return code
    return 0


def run_files(paths: list[str], job) -> int:
    """Solve each file in turn; the exit status of the one file, or the batch's (:func:`aggregate`).

    With several files a bad file is reported (a line on stderr and, with
    ``job.as_json``, a JSON line with status ``bad_input``) and the others
    are still solved; a single bad file raises. After a stop request the
    files not yet started are reported unknown, not solved.

    Parameters
    ----------
    paths : list of str
    job : object
        ``job.stop`` (threading.Event), ``job.as_json`` (bool),
        ``job.load(path)`` (raises InputError on bad input),
        ``job.start(stack)`` (enters what solving needs, such as the
        Ctrl-C handler and a cluster, into a contextlib.ExitStack at the
        first good file, so a bad file alone is refused before any heavy
        import) and ``job.solve(path, loaded, since)`` (prints the answer,
        returns the exit status; ``since`` is None for the first file,
        whose time limit counts from process start, else
        ``time.perf_counter()`` when the file started).
    """
    import contextlib
    import time

    codes = []
    with contextlib.ExitStack() as stack:
        started = False
        for index, path in enumerate(paths):
            if job.stop.is_set():
                codes.append(_not_solved(path, job.as_json))
                continue
            since = None if index == 0 else time.perf_counter()
            try:
                loaded = job.load(path)
            except InputError as exc:
                codes.append(_bad_file(path, exc, job.as_json, alone=len(paths) == 1))
                continue
            if not started:
                job.start(stack)  # a problem here is an option's, and refuses the whole call
                started = True
            try:
                codes.append(job.solve(path, loaded, since))
            except InputError as exc:
                codes.append(_bad_file(path, exc, job.as_json, alone=len(paths) == 1))
    return aggregate(codes)


def _bad_file(path: str, error: InputError, as_json: bool, alone: bool) -> int:
    """Report a bad file of a batch (exit status 2); a file alone raises its error."""
    if alone:
        raise error
    warn(f"indexset: error: {error}")
    if as_json:
        emit_json_line({"file": path, "status": BAD_INPUT, "reason": str(error)})
    return 2


def _not_solved(path: str, as_json: bool) -> int:
    """Report a file of a batch left unsolved after Ctrl-C; exit status 3."""
    reason = "not solved: interrupted before this file"
    if as_json:
        emit_json_line({"file": path, "status": "unknown", "reason": reason})
    else:
        print(f"{path}: UNKNOWN\n  why      {reason}")
    return 3


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
    from indexset.rational import parse_fraction  # numpy and flint only when there is a number to read

    value = parse_fraction(text, "--tol")
    if value < 0:
        raise InputError("--tol", "tolerance must be ≥ 0")
    return value


EXIT_SECONDS = 0.3
"""Seconds of ``--time-limit`` kept back for printing, writing and interpreter exit."""


def process_seconds() -> float:
    """Seconds since this process started (imports included); 0 where the OS does not tell.

    ``--time-limit`` bounds the whole process, so the time spent before the
    command runs (interpreter start, imports) counts against it.
    """
    try:
        with open("/proc/self/stat") as stream:
            fields = stream.read().rsplit(")", 1)[1].split()
        with open("/proc/uptime") as stream:
            uptime = float(stream.read().split()[0])
        return max(0.0, uptime - int(fields[19]) / os.sysconf("SC_CLK_TCK"))  # field 22: start time in ticks
    except (OSError, ValueError, IndexError):
        return 0.0


def time_budget(time_limit: float | None, cluster=None, since: float | None = None) -> float | None:
    """What is left of ``--time-limit`` for the work itself (None: no limit).

    Parameters
    ----------
    time_limit : float or None
        The option's value.
    cluster : optional
        A cluster that may start a local Dask cluster in what is left: the
        time its closing takes is kept back too.
    since : float, optional
        ``time.perf_counter()`` at which this limit started (a later file
        of a batch); by default the limit counts from process start.

    Raises
    ------
    InputError
        A time limit that is not a positive number.
    """
    if time_limit is None:
        return None
    if not time_limit > 0 or time_limit == float("inf"):
        raise InputError("--time-limit", f"must be a positive number of seconds, got {time_limit}")
    import time

    spent = process_seconds() if since is None else time.perf_counter() - since
    left = time_limit - spent - EXIT_SECONDS
    if cluster is not None:
        left -= cluster.reserve_seconds(left)
    return max(0.01, left)


def add_class_option(parser) -> None:
    """``--class affine|bias-free``: which residual-free blocks count."""
    from indexset.classes import AFFINE, CLASSES, DEFINITIONS

    parser.add_argument(
        "--class", dest="target_class", choices=CLASSES, default=AFFINE,
        help=f"residual-free blocks that count: affine = {DEFINITIONS['affine']}; bias-free = {DEFINITIONS['bias-free']} (default: affine)",
    )


def add_cluster_options(parser, workers_help: str | None = None) -> None:
    """``--scheduler`` and ``--workers``: where long searches (or sweep runs) go."""
    parser.add_argument("--scheduler", metavar="tcp://HOST:PORT", help="run on this Dask cluster (its workers need indexset installed)")
    parser.add_argument("--workers", type=int, metavar="N", help=workers_help or "local Dask worker processes for a lattice enumeration predicted to take ≥ 20 s (default: none: the search runs in threads in this process)")


def cluster_from_args(args):
    """The :class:`indexset.search.cluster.Cluster` the options ask for (a context manager).

    With neither ``--scheduler`` nor ``--workers``, a no-op context that
    yields None: the work stays in this process, in threads; the comparison
    with a local Dask cluster is in BENCHMARKS.md ("Split search on Dask").
    """
    import contextlib

    from indexset.search.cluster import Cluster

    if args.workers is not None and args.workers < 1:
        raise InputError("--workers", "must be at least 1")
    if args.scheduler is None and args.workers is None:
        return contextlib.nullcontext()
    cluster = Cluster(scheduler=args.scheduler, workers=args.workers, on_problem=lambda message: warn(f"indexset: {message}"))
    if args.scheduler is not None:
        try:
            cluster.client()  # connect now: a wrong address is bad input (exit 2), not a failed engine
        except InputError as exc:
            raise InputError("--scheduler", exc.problem) from None
    return cluster


def add_witness_options(parser) -> None:
    """``--witness OUT`` and ``--format``: the residual-free block, in the format OUT's extension names."""
    parser.add_argument(
        "--witness", metavar="OUT",
        help="write the residual-free witness block to OUT, in the format its extension names: .npz (exact values, the "
             "instance format) or .safetensors (PyTorch nn.Linear names up, down, gate; float64); written only after its forward check",
    )
    parser.add_argument(
        "--format", choices=("npz", "safetensors", "both"),
        help="format for an OUT without either extension (default: npz, under exactly that name); both: OUT and the same "
             "name with the other extension, both or neither. A format contradicting OUT's extension is bad input",
    )


def witness_targets(args) -> dict | None:
    """The files ``--witness``/``--format`` ask for (format → path), checked before any work; None without ``--witness``.

    Raises
    ------
    InputError
        ``--format`` without ``--witness``, or a name and a format that do
        not fit (:func:`indexset.exact.witness_files.targets`).
    """
    if args.witness is None:
        if args.format is not None:
            raise InputError("--format", "needs --witness OUT")
        return None
    from indexset.exact.witness_files import targets

    try:
        return targets(args.witness, args.format)
    except InputError as exc:
        raise InputError({"fmt": "--format", "out": "--witness"}.get(exc.source, exc.source), exc.problem) from None


_INDEX_LIST = re.compile(r"\[(\d+(?:, \d+){2,})\]")
_NUMBER = re.compile(r"(?<![\w.])-?\d+(?:/\d+)?(?![\w.])")
LONG_NUMBER = 20
"""Numbers written with more characters than this are shown as decimals in text output."""


def readable(text: str) -> str:
    """A reason for people: increasing index lists as ranges, long numbers as decimals.

    ``S = [0, 1, 2, 5]`` becomes ``S = {0–2, 5}``; an integer or rational
    longer than :data:`LONG_NUMBER` characters becomes a 6-digit decimal,
    with ``=`` before it turned into ``≈``. Text output only: JSON keeps
    the exact values.
    """
    from indexset.text import ranges, short

    def index_list(match: re.Match) -> str:
        values = [int(v) for v in match.group(1).split(", ")]
        if values != sorted(set(values)):  # only strictly increasing lists are index sets
            return match.group(0)
        return "{" + ranges(values) + "}"

    text = _INDEX_LIST.sub(index_list, text)
    parts, last = [], 0
    for match in _NUMBER.finditer(text):
        if len(match.group(0)) <= LONG_NUMBER:
            continue
        before = text[last:match.start()]
        if before.endswith("= "):
            before = before[:-2] + "≈ "
        parts += [before, _decimal(match.group(0), short)]
        last = match.end()
    return "".join(parts) + text[last:]


def _decimal(token: str, short) -> str:
    """``short(token)``, or a decimal built from the digits when the value is beyond the float64 range."""
    try:
        return short(token)
    except OverflowError:
        value = Fraction(token)
        digits = str(abs(value.numerator) // value.denominator)
        return f"{'-' if value < 0 else ''}{digits[0]}.{digits[1:6]}e+{len(digits) - 1}"


def warn(message: str) -> None:
    """A line on stderr."""
    print(message, file=sys.stderr)


PLAIN_SECONDS = 10.0
"""Seconds between plain progress lines off a terminal, unless the environment sets :data:`PLAIN_SECONDS_VARIABLE`."""

PLAIN_SECONDS_VARIABLE = "INDEXSET_PROGRESS_SECONDS"
"""Environment variable with the seconds between plain progress lines (a number ≥ 0; batch logs that want more or fewer)."""


def plain_seconds() -> float:
    """Seconds between plain progress lines: :data:`PLAIN_SECONDS_VARIABLE` when it holds a number ≥ 0, else :data:`PLAIN_SECONDS`."""
    import math
    import os

    try:
        value = float(os.environ.get(PLAIN_SECONDS_VARIABLE, PLAIN_SECONDS))
    except ValueError:
        return PLAIN_SECONDS
    return value if math.isfinite(value) and value >= 0 else PLAIN_SECONDS


class Progress:
    """Progress on stderr: a live line on a terminal, else a plain line about every ``interval`` seconds.

    Call it with a dict of counters (the ``progress`` callback of solvers
    and engines); use as a context manager. Off a terminal (batch logs:
    SLURM, CI), a heartbeat thread writes a line whenever ``interval``
    seconds have passed without one, with the latest counters, so long
    stretches without callbacks still show; a run that lasted at least
    ``interval`` and ended without an exception ends with a ``done`` line.
    The thread is joined on exit.

    Parameters
    ----------
    label : str
        What the lines are about (``solving FILE``, ``bench``, ``scan``).
    enabled : bool, optional
        A live line (True) or plain lines (False); None: live on a terminal.
    interval : float, optional
        Seconds between plain lines; None: :func:`plain_seconds`.
    """

    def __init__(self, label: str, enabled: bool | None = None, interval: float | None = None) -> None:
        import threading

        self.label = label
        self.live = sys.stderr.isatty() if enabled is None else enabled
        self.interval = plain_seconds() if interval is None else interval
        self._status = None
        self._start = None
        self._last = 0.0
        self._counters = {}
        self._lock = threading.Lock()
        self._done = threading.Event()
        self._heartbeat = None

    def __enter__(self) -> Progress:
        import threading
        import time

        self._start = self._last = time.perf_counter()
        if self.live:
            from rich.console import Console

            self._status = Console(stderr=True).status(self.label)
            self._status.__enter__()
        else:
            self._heartbeat = threading.Thread(target=self._beat, name="indexset-progress")
            self._heartbeat.start()
        return self

    def __call__(self, counters: dict) -> None:
        import time

        self._counters = dict(counters)
        now = time.perf_counter()
        if now - self._last >= (0.2 if self.live else self.interval):
            self._show(now)

    def _show(self, now: float, tail: str = "") -> None:
        with self._lock:
            self._last = now
            counters = ", ".join(f"{k} {v}" for k, v in self._counters.items())
            text = f"{self.label} [{now - self._start:.1f} s]" + (f" {counters}" if counters else "") + tail
            if self._status is not None:
                self._status.update(text)
            else:
                print(f"indexset: {text}", file=sys.stderr, flush=True)

    def _beat(self) -> None:
        import time

        # Wakes several times per interval, so a line is at most a fifth of it late.
        while not self._done.wait(max(0.05, self.interval / 5)):
            now = time.perf_counter()
            if now - self._last >= self.interval:
                self._show(now)

    def __exit__(self, *exc) -> None:
        import time

        if self._status is not None:
            self._status.__exit__(*exc)
        if self._heartbeat is not None:
            self._done.set()
            self._heartbeat.join()
            now = time.perf_counter()
            if exc[0] is None and now - self._start >= self.interval:
                self._show(now, " done")


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

    def __enter__(self) -> StopOnInterrupt:
        import signal
        import threading

        from indexset.search import bkz

        bkz.load()  # cysignals replaces the SIGINT handler when fpylll is first imported: before ours, not after
        if threading.current_thread() is threading.main_thread():
            self._previous = signal.signal(signal.SIGINT, self._handler)
        return self

    def __exit__(self, *exc) -> None:
        import signal

        if self._previous is not None:
            signal.signal(signal.SIGINT, self._previous)
