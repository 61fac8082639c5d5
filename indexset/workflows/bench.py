"""Benchmark sweeps: search time against width, beside baselines.

A sweep fixes the dimension d and a family of constructed instances, and
for every width n and seed builds one instance with the constructor
(:mod:`indexset.workflows.construct`, so the seed alone reproduces it) and runs every
requested method on it:

``pipeline``
    The full :func:`indexset.solve` (linear algebra, pruning, portfolio).
``no-prune``, ``no-lattice``
    The pipeline with a stage switched off (``solve(..., ablate=...)``).
``cpsat-plain``
    A direct CP-SAT model of ``M z = t``: no reduction, no pruning.
``milp``
    The same system in HiGHS (``scipy.optimize.milp``). The exact integer
    data is converted to float only when every coefficient is below 2^53;
    a hit is re-checked exactly; an "infeasible" answer is a floating-point
    solver's claim, not a proof, and is recorded as ``infeasible_float``.
``brute``
    All 2^n subsets (n ≤ 22; wider points are skipped with a note).

Every answer is checked against the exact verifier and against the other
methods (and the constructor's planted S or brute-force certificate): a
contradiction is recorded in the report's ``disagreements``, never
averaged away. On degenerate weights the pipeline may answer "absorbable"
with a witness block and no S (MATH.md §7): status ``absorbable_witness``,
solved, the witness re-checked against the block on random points, and a
contradiction if some S does satisfy (★). Library code: nothing here prints.
"""

from __future__ import annotations

import json
import math
import os
import platform
import statistics
import threading
import time
from dataclasses import asdict, dataclass

import numpy as np

import indexset.workflows.construct as construct
from indexset.errors import InputError
from indexset.exact.verify import verify
from indexset.exact.witness import check_forward, result_witness
from indexset.model.files import atomic_write
from indexset.search import bkz
from indexset.search.engines import brute, cpsat
from indexset.search.system import build_system
from indexset.search.tuning import DEFAULT as SEARCH_TUNING
from indexset.solver import solve
from indexset.workflows.vocabulary import BENCH_FAMILIES, BENCH_METHODS

METHODS = BENCH_METHODS
"""Methods a sweep can run (see the module docstring)."""

FAMILIES = BENCH_FAMILIES
"""Instance families a sweep can draw from."""

UNPLANTED = ("hard", "low_precision")
"""Families whose sweeps may draw unplanted instances (``plant``)."""

ABLATE = {"pipeline": (), "no-prune": ("prune",), "no-lattice": ("lattice",)}
"""The ``solve(..., ablate=...)`` argument of each pipeline method."""

FLOAT_EXACT = 2**53
"""MILP gets the system only when every |coefficient| is below this."""

FEASIBLE = "feasible"
WITNESS = "absorbable_witness"
"""Absorbable by a witness block although no index set S satisfies (★) (degenerate weights, MATH.md §7)."""
INFEASIBLE = "infeasible"
INFEASIBLE_FLOAT = "infeasible_float"
TIMEOUT = "timeout"
UNKNOWN = "unknown"
SKIPPED = "skipped"
UNVERIFIED_HIT = "unverified_hit"
ERROR = "error"
INTERRUPTED = "interrupted"

DECIDED = (FEASIBLE, WITNESS, INFEASIBLE, INFEASIBLE_FLOAT)
"""Statuses counted as solved (``infeasible_float`` is a claim, kept apart in the JSON)."""

NEGATIVE = (INFEASIBLE, INFEASIBLE_FLOAT)

NO_S = (*NEGATIVE, WITNESS)
"""Statuses that say no index set S satisfies (★): a verified S contradicts them."""


# =================================================================== sweep
@dataclass
class Sweep:
    """What to run: one dimension, one family, widths × seeds × methods.

    Attributes
    ----------
    d : int
        Dimension (≥ 2).
    widths : list of int
        Widths n, each ≥ d.
    seeds : list of int
        Constructor seeds.
    family : {"planted", "random", "hard", "low_precision"}
    range : int or None
        Entries in [−range, range] (planted, random; low_precision: the
        integer parts, at scale 1); None: the constructor's default. Not
        used by ``hard`` (it derives the range from the density).
    density : float or None
        ``hard`` only: target density (None: the constructor's default).
    plant : bool
        ``hard`` and ``low_precision``: plant an index set (False: ``hard``
        draws probable negatives, ``low_precision`` uniform weights).
    methods : tuple of str
    time_limit : float
        Seconds per run.
    """

    d: int
    widths: list
    seeds: list
    family: str = "planted"
    range: int | None = None
    density: float | None = None
    plant: bool = True
    methods: tuple = ("pipeline",)
    time_limit: float = 30.0

    def validate(self) -> None:
        """Raise :class:`InputError` for options no sweep can run."""
        if self.family not in FAMILIES:
            raise InputError("family", f"unknown family {self.family!r}; choose from {', '.join(FAMILIES)}")
        unknown = [m for m in self.methods if m not in METHODS]
        if unknown or not self.methods:
            raise InputError("methods", f"unknown method {unknown[0] if unknown else '(none)'!r}; choose from {', '.join(METHODS)}")
        if len(set(self.methods)) != len(self.methods):
            raise InputError("methods", "a method is listed twice")
        if not isinstance(self.d, int) or self.d < 2:
            raise InputError("d", f"d must be an integer ≥ 2, got {self.d!r}")
        _check_widths(self.widths, self.d)
        if not self.seeds or any(s < 0 for s in self.seeds):
            raise InputError("seeds", "need at least one nonnegative seed")
        if not (self.time_limit > 0 and math.isfinite(self.time_limit)):
            raise InputError("time_limit", f"must be a positive number of seconds, got {self.time_limit}")
        self._validate_family_options()

    def _validate_family_options(self) -> None:
        if self.family == "hard" and self.range is not None:
            raise InputError("range", "family hard derives the range from --density; leave --range out")
        if self.family != "hard" and self.density is not None:
            raise InputError("density", "only family hard takes a density")
        if self.family not in UNPLANTED and not self.plant:
            raise InputError("plant", f"only families {' and '.join(UNPLANTED)} take --unplanted (random is the unplanted family)")
        if self.range is not None and self.range < 1:
            raise InputError("range", f"range must be ≥ 1, got {self.range}")

    def options(self, n: int, seed: int) -> dict:
        """Keyword options of the constructor for one point."""
        options = {"d": self.d, "n": n, "seed": seed}
        if self.range is not None:
            options["range"] = self.range
        if self.family in UNPLANTED:
            options["plant"] = self.plant
        if self.family == "hard" and self.density is not None:
            options["density"] = self.density
        return options

    def to_json(self) -> dict:
        """JSON-ready copy."""
        return dict(asdict(self), methods=list(self.methods))


def _check_widths(widths, d: int) -> None:
    if not widths:
        raise InputError("widths", "no width given")
    small = [n for n in widths if n < d]
    if small:
        raise InputError("widths", f"width {small[0]} < d = {d}: (★) needs at least d units")


def parse_widths(text: str) -> list:
    """Parse ``10:80:10`` (start:stop:step, stop included), ``12`` or ``4,10:60:10``.

    Raises
    ------
    InputError
        For anything else (empty parts, non-integers, step ≤ 0, stop < start).
    """
    widths = []
    for part in str(text).split(","):
        widths.extend(_parse_width_part(part.strip(), text))
    return sorted(set(widths))


def _parse_width_part(part: str, text: str) -> list:
    fields = part.split(":")
    try:
        numbers = [int(f) for f in fields]
    except ValueError:
        raise InputError("widths", f"{text!r}: expected START:STOP:STEP, START:STOP or a list of integers") from None
    if len(numbers) == 1:
        start, stop, step = numbers[0], numbers[0], 1
    elif len(numbers) in (2, 3):
        start, stop, step = numbers[0], numbers[1], numbers[2] if len(numbers) == 3 else 1
    else:
        raise InputError("widths", f"{text!r}: too many ':' in {part!r}")
    if start < 1 or step < 1 or stop < start:
        raise InputError("widths", f"{text!r}: need 1 ≤ START ≤ STOP and STEP ≥ 1 in {part!r}")
    return list(range(start, stop + 1, step))


# ================================================================== runs
@dataclass
class Run:
    """One method on one instance: the unit of the JSON report."""

    method: str
    family: str
    d: int
    n: int
    seed: int
    params: dict
    status: str = UNKNOWN
    time_s: float = 0.0
    index_set: list | None = None
    verified: bool = False
    timed_out: bool = False
    engine: str = ""
    note: str = ""
    reason: str = ""
    rerun: str = ""
    construct: str = ""


def make_instance(sweep: Sweep, n: int, seed: int):
    """The instance of one point, from the constructor and the seed."""
    return construct.build(sweep.family, **sweep.options(n, seed))


def run_method(method: str, instance, time_limit: float, stop: threading.Event | None = None) -> dict:
    """Run one method; return the outcome fields of :class:`Run`.

    Parameters
    ----------
    method : str
        One of :data:`METHODS`.
    instance : Instance
    time_limit : float
        Seconds.
    stop : threading.Event, optional
        Stops the running method early (reported as ``interrupted``).

    Returns
    -------
    dict
        ``status, time_s, index_set, verified, timed_out, engine, note,
        reason``; ``engine`` says what decided (for the pipeline methods:
        ``exact`` linear algebra, ``prune``, ``lattice``, ``cpsat``, ...).
    """
    start = time.perf_counter()
    try:
        outcome = _dispatch(method, instance, time_limit, stop)
    except Exception as exc:  # a crash is a result to report, not to hide
        outcome = _outcome(ERROR, note=f"{type(exc).__name__}: {exc}")
    outcome["engine"] = outcome["engine"] or _ENGINE.get(method, "")
    outcome["time_s"] = round(time.perf_counter() - start, 6)
    if stop is not None and stop.is_set() and outcome["status"] not in DECIDED:
        outcome.update(status=INTERRUPTED, timed_out=False)
    return outcome


_ENGINE = {"cpsat-plain": "cpsat", "milp": "highs", "brute": "brute"}


def _dispatch(method, instance, time_limit, stop) -> dict:
    if method in ABLATE:
        return _run_pipeline(instance, time_limit, ABLATE[method], stop)
    if method == "cpsat-plain":
        return _run_cpsat_plain(instance, time_limit, stop)
    if method == "milp":
        return _run_milp(instance, time_limit)
    if method == "brute":
        return _run_brute(instance)
    raise InputError("methods", f"unknown method {method!r}")


def _outcome(status, index_set=None, verified=False, timed_out=False, note="", reason="", engine="") -> dict:
    return {"status": status, "index_set": index_set, "verified": verified, "timed_out": timed_out, "engine": engine, "note": note, "reason": reason}


def _checked_hit(instance, support, reason: str, note: str = "") -> dict:
    """A claimed S, re-checked by the exact verifier."""
    support = sorted(int(i) for i in support)
    if verify(instance, support).holds:
        return _outcome(FEASIBLE, support, True, note=note, reason=reason)
    return _outcome(UNVERIFIED_HIT, support, False, note="claimed S fails the exact verifier", reason=reason)


def _checked_witness(instance, result) -> dict:
    """An "absorbable" answer without S, its witness block re-checked against the block on random points."""
    check = check_forward(instance, result_witness(instance, result))
    if check.ok:
        return _outcome(WITNESS, verified=True, note=f"no S; witness block: {check.describe()}", reason=result.reason)
    return _outcome(UNVERIFIED_HIT, note=f"the witness block fails the forward check: {check.describe()}", reason=result.reason)


def _run_pipeline(instance, time_limit, ablate, stop) -> dict:
    result = solve(instance, time_limit=time_limit, ablate=ablate, stop=stop)
    if result.status == "absorbable" and result.index_set is None:
        outcome = _checked_witness(instance, result)
    elif result.status == "absorbable":
        outcome = _checked_hit(instance, result.index_set, result.reason)
    elif result.status == "not_absorbable":
        outcome = _outcome(INFEASIBLE, reason=result.reason)
    else:
        timed_out = "time limit" in result.reason
        outcome = _outcome(TIMEOUT if timed_out else UNKNOWN, timed_out=timed_out, reason=result.reason)
    outcome["engine"] = result.engine or ""
    return outcome


def _run_cpsat_plain(instance, time_limit, stop) -> dict:
    result = cpsat.search(build_system(instance), None, time_limit=time_limit, stop=stop)
    if result.status == "feasible":
        return _checked_hit(instance, result.index_set, result.reason)
    if result.status == "infeasible":
        return _outcome(INFEASIBLE, reason=result.reason)
    return _outcome(TIMEOUT, timed_out=True, reason=result.reason)


def _run_milp(instance, time_limit) -> dict:
    from scipy.optimize import Bounds, LinearConstraint, milp

    system = build_system(instance)
    if system.max_abs() >= FLOAT_EXACT:
        return _outcome(SKIPPED, note="skipped: coefficients too large (|M|, |t| ≥ 2^53 are not exact in float64)")
    A = np.array(system.M.tolist(), dtype=np.float64).reshape(system.m, system.n)
    b = np.array(system.t.tolist(), dtype=np.float64)
    result = milp(
        np.zeros(system.n), constraints=LinearConstraint(A, b, b), integrality=np.ones(system.n),
        bounds=Bounds(0, 1), options={"time_limit": float(time_limit), "disp": False},
    )
    return _milp_outcome(instance, result)


def _milp_outcome(instance, result) -> dict:
    reason = f"HiGHS: {result.message}"
    if result.x is not None and result.status in (0, 1):
        support = np.nonzero(np.round(result.x) == 1)[0].tolist()
        return _checked_hit(instance, support, reason, note="float solution rounded, checked exactly")
    if result.status == 2:
        return _outcome(INFEASIBLE_FLOAT, note="HiGHS (floating point) claims infeasible: a claim, not a proof", reason=reason)
    if result.status == 1:
        return _outcome(TIMEOUT, timed_out=True, reason=reason)
    return _outcome(UNKNOWN, reason=reason)


def _run_brute(instance) -> dict:
    if instance.n > SEARCH_TUNING.brute_max_width:
        return _outcome(SKIPPED, note=f"skipped: brute force is for n ≤ {SEARCH_TUNING.brute_max_width}")
    supports = brute.absorbing_sets_brute(instance)
    reason = f"brute force over all 2^{instance.n} subsets: {len(supports)} solution(s)"
    if supports:
        return _checked_hit(instance, supports[0], reason)
    return _outcome(INFEASIBLE, reason=reason)


# ================================================================= sweep
def run_sweep(sweep: Sweep, *, progress=None, stop: threading.Event | None = None, warmup: bool = True, runner=None) -> dict:
    """Run every method on every point of the sweep.

    Parameters
    ----------
    sweep : Sweep
    progress : callable, optional
        Called with a dict ``{"phase", "done", "total", "method", "n",
        "seed", "status", "time_s"}`` while instances are constructed
        (phase ``construct``), during the warm-up (``warmup``) and before
        and after each run (``run``; ``status`` and ``time_s`` are None
        before).
    stop : threading.Event, optional
        Set it (Ctrl-C) to stop: the running method stops early and the
        remaining runs are recorded as ``interrupted``.
    warmup : bool
        Solve one tiny instance with every method first (not recorded), so
        the first timed run does not pay for Numba compilation or imports
        (on every worker when ``cluster`` is given).
    runner : optional
        Runs the points elsewhere: an object with ``run(sweep, instances,
        progress, stop, warmup) -> list of Run`` and ``to_json() -> dict``
        (:class:`indexset.workflows.sweeps.OnCluster`: every run a Dask
        task); the report is the same, plus ``machine["cluster"]``.

    Returns
    -------
    dict
        The report: ``sweep, machine, instances, runs, summary,
        disagreements`` (see :func:`summarize`, :func:`find_disagreements`).
    """
    sweep.validate()
    stop = stop or threading.Event()
    machine = machine_info()
    machine["fpylll_preloaded"] = bkz.load() is not None  # on this (main) thread, before any engine thread
    instances = _build_instances(sweep, progress)
    if runner is not None:
        runs = runner.run(sweep, instances, progress, stop, warmup)
        machine["cluster"] = runner.to_json()
    else:
        if warmup:
            _warm_up(sweep, progress)
        runs = _run_all(sweep, instances, progress, stop)
    references = [reference(sweep, n, seed, inst) for n, seed, inst in instances]
    machine["load_average_end"] = _load_average()
    run_dicts = [asdict(run) for run in runs]
    return {
        "sweep": sweep.to_json(),
        "machine": machine,
        "instances": references,
        "runs": run_dicts,
        "summary": summarize(run_dicts, sweep),
        "disagreements": find_disagreements(run_dicts, references),
        "interrupted": stop.is_set(),
    }


def notify(progress, **event) -> None:
    """Send one progress event (when there is a listener)."""
    if progress is not None:
        progress(event)


def _build_instances(sweep: Sweep, progress) -> list:
    points = [(n, seed) for n in sweep.widths for seed in sweep.seeds]
    instances = []
    for i, (n, seed) in enumerate(points):
        notify(progress, phase="construct", done=i, total=len(points), method=None, n=n, seed=seed, status=None, time_s=None)
        instances.append((n, seed, make_instance(sweep, n, seed)))
    return instances


def _warm_up(sweep: Sweep, progress) -> None:
    notify(progress, phase="warmup", done=0, total=1, method=None, n=None, seed=None, status=None, time_s=None)
    warm_up(sweep)


def warm_up(sweep: Sweep) -> None:
    """Solve one tiny instance with every method of the sweep (untimed: imports, Numba)."""
    instance = construct.planted(d=sweep.d, n=sweep.d**2 + 4, seed=0)  # past d²: the search stage runs
    for method in sweep.methods:
        run_method(method, instance, min(5.0, sweep.time_limit))


def _run_all(sweep: Sweep, instances, progress, stop) -> list:
    total = len(instances) * len(sweep.methods)
    runs = []
    for n, seed, instance in instances:
        for method in sweep.methods:
            notify(progress, phase="run", done=len(runs), total=total, method=method, n=n, seed=seed, status=None, time_s=None)
            run = one_run(sweep, method, n, seed, instance, stop)
            runs.append(run)
            notify(progress, phase="run", done=len(runs), total=total, method=method, n=n, seed=seed, status=run.status, time_s=run.time_s)
    return runs


def one_run(sweep: Sweep, method, n, seed, instance, stop) -> Run:
    """Run one method on one point of the sweep; the :class:`Run` record."""
    run = record(sweep, method, n, seed, instance)
    if stop.is_set():
        run.status, run.note = INTERRUPTED, "not run: the sweep was interrupted"
        return run
    for key, value in run_method(method, instance, sweep.time_limit, stop).items():
        setattr(run, key, value)
    return run


def record(sweep: Sweep, method, n, seed, instance) -> Run:
    """The record of one point, before it runs."""
    run = Run(method, sweep.family, sweep.d, n, seed, json.loads(instance.metadata["params"]))
    run.rerun = rerun_command(sweep, method, n, seed)
    run.construct = construct_command(sweep, n, seed)
    return run


def reference(sweep: Sweep, n: int, seed: int, instance) -> dict:
    """What the constructor knows about one instance (never shown to a solver).

    ``planted_S`` is re-checked with the exact verifier; ``negative`` is the
    constructor's certificate for unplanted draws (``brute_force`` for
    random integer instances with n ≤ 16, else ``unchecked``).
    """
    params = json.loads(instance.metadata["params"])
    planted = instance.planted
    return {
        "family": sweep.family, "d": sweep.d, "n": n, "seed": seed, "params": params,
        "planted_S": planted,
        "planted_verified": None if planted is None else bool(verify(instance, planted).holds),
        "negative": params.get("negative"),
    }


# ====================================================== cross-checking
def find_disagreements(runs: list, references: list) -> list:
    """Contradictions between methods, the verifier and the constructor.

    Kinds: ``contradiction`` (a verified S exists, planted or found, but a
    method answered infeasible or absorbable by a witness without S, or a
    brute-force-certified negative has a verified S), ``unverified_hit`` (a
    method's S fails the exact verifier, or its witness block the forward
    check), ``error`` (a method crashed).

    Returns
    -------
    list of dict
        One entry per problem, with the point (family, d, n, seed, params)
        and the methods involved.
    """
    problems = []
    for ref in references:
        point_runs = [r for r in runs if r["n"] == ref["n"] and r["seed"] == ref["seed"]]
        problems.extend(_point_problems(ref, point_runs))
    return problems


def _point_problems(ref: dict, runs: list) -> list:
    point = {k: ref[k] for k in ("family", "d", "n", "seed", "params")}
    problems = []
    yes = [r for r in runs if r["status"] == FEASIBLE and r["verified"]]
    no = [r for r in runs if r["status"] in NO_S]
    witnesses = [{"by": r["method"], "S": r["index_set"]} for r in yes]
    if ref["planted_S"] is not None and ref["planted_verified"]:
        witnesses.append({"by": "constructor (planted S)", "S": ref["planted_S"]})
    if witnesses and no:
        problems.append(dict(point, kind="contradiction", verified_S=witnesses, infeasible=[{"method": r["method"], "status": r["status"], "reason": r["reason"]} for r in no]))
    if yes and ref["negative"] == "brute_force":
        problems.append(dict(point, kind="contradiction", verified_S=witnesses, infeasible=[{"method": "constructor (brute-force negative)", "status": INFEASIBLE}]))
    if ref["planted_S"] is not None and not ref["planted_verified"]:
        problems.append(dict(point, kind="unverified_hit", method="constructor", S=ref["planted_S"]))
    for r in runs:
        if r["status"] in (UNVERIFIED_HIT, ERROR):
            problems.append(dict(point, kind=r["status"], method=r["method"], S=r["index_set"], note=r["note"]))
    return problems


# ============================================================= summary
def summarize(runs: list, sweep: Sweep) -> list:
    """Per method and width: median and max time, solved and timeout counts.

    Undecided runs (timeout, unknown, error, interrupted) count as +inf in
    the median and the maximum, so a median that is ``inf`` means more than
    half the runs were not decided within the time limit. Skipped runs are
    left out.

    Returns
    -------
    list of dict
        ``method, n, runs, solved, timeouts, skipped, infeasible_float,
        median_s, max_s, note``; ``median_s``/``max_s`` are None for inf.
    """
    rows = []
    for method in sweep.methods:
        for n in sweep.widths:
            cell = [r for r in runs if r["method"] == method and r["n"] == n]
            rows.append(_summary_row(method, n, cell))
    return rows


def _summary_row(method: str, n: int, cell: list) -> dict:
    counted = [r for r in cell if r["status"] != SKIPPED]
    times = [r["time_s"] if r["status"] in DECIDED else math.inf for r in counted]
    median = statistics.median(times) if times else None
    worst = max(times) if times else None
    notes = sorted({r["note"] for r in cell if r["status"] == SKIPPED and r["note"]})
    return {
        "method": method, "n": n, "runs": len(counted),
        "solved": sum(r["status"] in DECIDED for r in counted),
        "timeouts": sum(r["timed_out"] for r in counted),
        "undecided": sum(r["status"] not in DECIDED for r in counted),
        "skipped": len(cell) - len(counted),
        "infeasible_float": sum(r["status"] == INFEASIBLE_FLOAT for r in counted),
        "median_s": _finite(median), "max_s": _finite(worst),
        "note": "; ".join(notes),
    }


def _finite(value):
    return None if value is None or math.isinf(value) else round(value, 6)


# ============================================================ commands
def _family_flags(sweep: Sweep) -> list:
    flags = []
    if sweep.range is not None:
        flags += ["--range", str(sweep.range)]
    if sweep.density is not None:
        flags += ["--density", str(sweep.density)]
    if sweep.family in UNPLANTED and not sweep.plant:
        flags.append("--unplanted")
    return flags


def rerun_command(sweep: Sweep, method: str, n: int, seed: int) -> str:
    """The ``indexset bench`` command that re-runs one point alone."""
    parts = ["indexset", "bench", "--d", str(sweep.d), "--widths", str(n), "--seeds", "1", "--first-seed", str(seed),
             "--family", sweep.family, *_family_flags(sweep), "--methods", method, "--time-limit", f"{sweep.time_limit:g}"]
    return " ".join(parts)


def construct_command(sweep: Sweep, n: int, seed: int) -> str:
    """The ``indexset construct`` command that writes the instance of one point."""
    parts = ["indexset", "construct", sweep.family, "--d", str(sweep.d), "--n", str(n), *_family_flags(sweep),
             "--seed", str(seed), "-o", f"{sweep.family}_d{sweep.d}_n{n}_s{seed}.npz"]
    return " ".join(parts)


def sweep_command(sweep: Sweep, out: str | None = None, plot: str | None = None) -> str:
    """The ``indexset bench`` command for a whole sweep (consecutive seeds)."""
    seeds = sweep.seeds
    parts = ["indexset", "bench", "--d", str(sweep.d), "--widths", ",".join(str(n) for n in sweep.widths),
             "--seeds", str(len(seeds)), "--first-seed", str(seeds[0]), "--family", sweep.family, *_family_flags(sweep),
             "--methods", ",".join(sweep.methods), "--time-limit", f"{sweep.time_limit:g}"]
    if out:
        parts += ["--out", out]
    if plot:
        parts += ["--plot", plot]
    return " ".join(parts)


# ============================================================== output
def machine_info() -> dict:
    """CPU count, platform, versions and the load average (the machine may be shared)."""
    import ortools
    import scipy

    return {
        "cpus": os.cpu_count(), "platform": platform.platform(), "processor": platform.processor() or platform.machine(),
        "python": platform.python_version(), "numpy": np.__version__, "scipy": scipy.__version__,
        "ortools": ortools.__version__, "load_average_start": _load_average(),
        "started": time.strftime("%Y-%m-%d %H:%M:%S %Z"),
    }


def _load_average():
    try:
        return [round(v, 2) for v in os.getloadavg()]
    except OSError:  # pragma: no cover - not on every platform
        return None


def write_json(report: dict, path) -> None:
    """Write the report as JSON, atomically."""
    text = json.dumps(report, indent=1, ensure_ascii=False, default=str) + "\n"
    atomic_write(path, lambda stream: stream.write(text.encode("utf-8")), suffix=".json")
