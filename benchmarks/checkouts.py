"""The ``checkouts`` suite: first solutions (or counts) of system files by several checkouts or settings of indexset, alternating.

Each run is ``decide_system`` on one file (a system file, or a block's ``.npz``:
its (★) system) with its default engines, in a
fresh Python process started in the checkout's folder with the checkout on
``PYTHONPATH``; its wall time runs from the start of the process to the
answer (``--count``: every solution, a complete walk), and the lattice engine's stages add the extreme-pruning trials
started, the pruned passes' seconds and the nodes (None where a checkout
reports none). The checkouts run one after another on each (file, seed),
in the order given, so that a noisy machine hits them alike; ``--seeds``
repeats everything with each seed of ``decide_system`` (its trials'
directions and candidates' orders). A checkout may carry LatticeTuning
fields to change (``NAME=PATH:field=value:...``), to compare settings of one
code. The table (``--name``) gives, per file and over all files, each
checkout's sum and median, and the last checkout against the first: the
ratio of the sums, the median per-run ratio and their geometric mean.

    python benchmarks/run.py checkouts --checkout old=PATH/old --checkout new=. --dir QOBLIB --files 'ms_10_100_*.dat' --seeds 0,1,2 --name NAME
"""

from __future__ import annotations

import glob
import json
import math
import os
import statistics
import subprocess
import sys
import time

_CHILD = """
import json
import sys
from dataclasses import fields, replace
from indexset.search.decide import decide_system
from indexset.search.systemfile import load_system
seed, count = int(sys.argv[2]), sys.argv[3] == "count"
changes = dict(item.split("=", 1) for item in sys.argv[4:])
options = {}
if changes:  # older checkouts have no LatticeTuning: import it only to change it
    from indexset.search.lattice.tuning import LatticeTuning
    tuning = LatticeTuning()
    kinds = {f.name: type(getattr(tuning, f.name)) for f in fields(tuning)}
    options["tuning"] = replace(tuning, **{k: (v == "True") if kinds[k] is bool else kinds[k](v) for k, v in changes.items()})
try:
    system = load_system(sys.argv[1])
except Exception:  # a block's .npz: its (★) system
    from indexset.model.instance import Instance
    from indexset.search.system import build_system
    system = build_system(Instance.load(sys.argv[1]))
result = decide_system(system, seed=seed, engine_options=options, **({"find_all": True, "count_only": True} if count else {}))
lattice = result.stages.get("search", {}).get("lattice", {})
pruned = lattice.get("pruned", {})
print(json.dumps({"status": result.status, "count": result.count, "trials": pruned.get("trials"), "pruned_s": pruned.get("seconds"), "nodes": lattice.get("nodes")}))
"""


def run(path: str, checkout: str, changes: list, timeout: float, seed: int = 0, count: bool = False) -> dict:
    """One process: the status and its wall seconds (status ``timeout`` when it did not answer in time)."""
    root = os.path.abspath(checkout)
    began = time.perf_counter()
    try:
        # In the checkout's folder: ``python -c`` puts the working folder first on sys.path, ahead of PYTHONPATH,
        # so a run started from another checkout would import that one.
        child = subprocess.run([sys.executable, "-c", _CHILD, os.path.abspath(path), str(seed), "count" if count else "first", *changes], env=dict(os.environ, PYTHONPATH=root), cwd=root,
                               capture_output=True, text=True, timeout=timeout)
        answer = json.loads(child.stdout.strip().splitlines()[-1]) if child.returncode == 0 and child.stdout.strip() else {"status": f"failed ({child.returncode})"}
    except subprocess.TimeoutExpired:
        answer = {"status": "timeout"}
    return {**answer, "wall_s": round(time.perf_counter() - began, 3)}


class Checkouts:
    """First solutions of system files by several checkouts or settings of indexset, one fresh process per run, alternating."""

    def arguments(self, parser) -> None:
        parser.add_argument("--checkout", action="append", default=[], metavar="NAME=PATH[:field=value...]", help="a checkout (repeat the option; two or more)")
        parser.add_argument("--files", help="comma list of system files or glob patterns, relative to --dir ('ms_10_100_*.dat')")
        parser.add_argument("--dir", default=".", help="the folder of the files (default: here)")
        parser.add_argument("--seeds", default="0", help="comma list of decide_system seeds (default 0)")
        parser.add_argument("--timeout", type=float, default=300.0, help="seconds per run (default 300)")
        parser.add_argument("--count", action="store_true", help="count every solution (a complete walk) instead of a first one")
        parser.add_argument("--name", default="runs", help="the table of the result file these runs make (default %(default)s)")

    def measure(self, args):
        if len(args.checkout) < 2 or not args.files:
            raise SystemExit("checkouts: name two --checkout or more, and --files")
        checkouts = []
        for spec in args.checkout:
            name, _, rest = spec.partition("=")
            path, *changes = rest.split(":")
            checkouts.append((name, path, changes))
        files = [os.path.relpath(path, args.dir) for pattern in args.files.split(",") for path in sorted(glob.glob(os.path.join(args.dir, pattern)))]
        if not files:
            raise SystemExit(f"checkouts: no file in {args.dir} matches {args.files}")
        runs = []
        for seed in (int(v) for v in args.seeds.split(",")):
            for file in files:
                for label, path, changes in checkouts:
                    runs.append(dict(run(os.path.join(args.dir, file), path, changes, args.timeout, seed, args.count), file=file, checkout=label, seed=seed))
                    print(f"{file} {label} seed {seed} {runs[-1]['wall_s']:.2f} s {runs[-1]['status']} trials {runs[-1].get('trials')}", file=sys.stderr, flush=True)
                    yield args.name, {"checkouts": [name for name, _, _ in checkouts], "runs": runs}

    def table(self, name: str, part: dict) -> dict:
        return {name: sums_table(part["checkouts"], part["runs"])}


SUITES = {"checkouts": Checkouts()}


def _row(label: str, checkouts: list, runs: list) -> list:
    by = {(r["file"], r["seed"], r["checkout"]): r["wall_s"] for r in runs}
    keys = sorted({(r["file"], r["seed"]) for r in runs})
    pairs = [(by[(*k, checkouts[0])], by[(*k, checkouts[-1])]) for k in keys if (*k, checkouts[0]) in by and (*k, checkouts[-1]) in by]
    cells = [label]
    for checkout in checkouts:
        walls = [by[(*k, checkout)] for k in keys if (*k, checkout) in by]
        cells.append(f"{sum(walls):.1f}, {statistics.median(walls):.2f}")
    ratios = [new / old for old, new in pairs]
    cells += [f"{sum(n for _, n in pairs) / sum(o for o, _ in pairs):.2f}", f"{statistics.median(ratios):.2f}", f"{math.exp(statistics.fmean(math.log(r) for r in ratios)):.2f}"]
    return cells


def sums_table(checkouts: list, runs: list) -> tuple:
    """Per file and over all files: each checkout's sum and median, and the last against the first."""
    header = ["file"] + [f"{c}: sum, median (s)" for c in checkouts] + [f"{checkouts[-1]} / {checkouts[0]}: ratio of sums", "median per-run ratio", "geometric mean"]
    files = sorted({r["file"] for r in runs})
    rows = [_row(file.removesuffix(".dat"), checkouts, [r for r in runs if r["file"] == file]) for file in files]
    runs_per = len({(r["file"], r["seed"]) for r in runs})
    rows.append(_row(f"**all: {len(files)} files, {runs_per} runs of each**", checkouts, runs))
    return header, rows
