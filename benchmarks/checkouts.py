"""First solutions of 0/1 system files by several checkouts of indexset, one fresh process per file and checkout, alternating.

Each run is ``decide_system`` on the file with its default engines (the
staged portfolio: the lattice engine, and CP-SAT beside a long walk), in a
new Python process started in the checkout's folder with the checkout on
``PYTHONPATH``; its wall time, from the start of the process to its
answer, is printed and written to JSON, with what the lattice engine's
stages report (the extreme-pruning trials started, the pruned passes'
seconds, the nodes; None where a checkout reports none). The checkouts run one after
another on each file, in the order given, so that a noisy machine hits
them alike; ``--seeds`` repeats every run with each seed of
``decide_system`` (its trials' directions and candidates' orders). A
checkout may carry LatticeTuning fields to change
(``NAME=PATH:field=value:field=value``), to compare settings of one code.

Usage::

    python benchmarks/checkouts.py --checkout old=/path/to/old --checkout new=. \\
        [--checkout new-off=.:trials_beside_share=0] --files A.dat,B.dat [--dir DIR] \\
        [--timeout 300] [--seeds 0,1,2] [--json OUT]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import time

_CHILD = """
import json
import sys
from dataclasses import fields, replace
from indexset.search.decide import decide_system
from indexset.search.systemfile import load_system
seed = int(sys.argv[2])
changes = dict(item.split("=", 1) for item in sys.argv[3:])
options = {}
if changes:  # older checkouts have no LatticeTuning: import it only to change it
    from indexset.search.lattice.tuning import LatticeTuning
    tuning = LatticeTuning()
    kinds = {f.name: type(getattr(tuning, f.name)) for f in fields(tuning)}
    options["tuning"] = replace(tuning, **{k: (v == "True") if kinds[k] is bool else kinds[k](v) for k, v in changes.items()})
result = decide_system(load_system(sys.argv[1]), seed=seed, engine_options=options)
lattice = result.stages.get("search", {}).get("lattice", {})
pruned = lattice.get("pruned", {})
print(json.dumps({"status": result.status, "trials": pruned.get("trials"), "pruned_s": pruned.get("seconds"), "nodes": lattice.get("nodes")}))
"""


def run(path: str, checkout: str, changes: list, timeout: float, seed: int = 0) -> dict:
    """One process: the status and its wall seconds (``timeout`` when it did not answer in time)."""
    root = os.path.abspath(checkout)
    env = dict(os.environ, PYTHONPATH=root)
    began = time.perf_counter()
    try:
        # In the checkout's folder: ``python -c`` puts the working folder first on sys.path, ahead of PYTHONPATH,
        # so a run started from another checkout would import that one.
        child = subprocess.run([sys.executable, "-c", _CHILD, os.path.abspath(path), str(seed), *changes], env=env, cwd=root,
                               capture_output=True, text=True, timeout=timeout)
        answer = json.loads(child.stdout.strip().splitlines()[-1]) if child.returncode == 0 and child.stdout.strip() else {"status": f"failed ({child.returncode})"}
    except subprocess.TimeoutExpired:
        answer = {"status": "timeout"}
    return {**answer, "wall_s": round(time.perf_counter() - began, 3)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--checkout", action="append", required=True, metavar="NAME=PATH[:field=value...]")
    parser.add_argument("--files", required=True, help="comma-separated files (relative to --dir)")
    parser.add_argument("--dir", default=".")
    parser.add_argument("--timeout", type=float, default=300.0)
    parser.add_argument("--json", default=None)
    parser.add_argument("--seeds", default="0", help="comma-separated seeds of decide_system (default 0): every file runs once per seed and checkout")
    args = parser.parse_args()
    checkouts = []
    for spec in args.checkout:
        name, _, rest = spec.partition("=")
        path, *changes = rest.split(":")
        checkouts.append((name, path, changes))
    report = {"command": sys.argv, "platform": platform.platform(), "cpus": os.cpu_count(), "runs": []}
    for seed in (int(v) for v in args.seeds.split(",")):
        for name in args.files.split(","):
            for label, path, changes in checkouts:
                record = dict(run(os.path.join(args.dir, name), path, changes, args.timeout, seed), file=name, checkout=label, seed=seed)
                report["runs"].append(record)
                print(f"{name} {label} seed {seed} {record['wall_s']:.2f} {record['status']} trials {record.get('trials')}", flush=True)
    if args.json:
        with open(args.json, "w", encoding="utf-8") as handle:
            json.dump(report, handle, indent=1)
            handle.write("\n")


if __name__ == "__main__":
    main()
