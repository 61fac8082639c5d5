"""First solutions of 0/1 system files by several checkouts of indexset, one fresh process per file and checkout, alternating.

Each run is ``decide_system`` on the file (the engine portfolio, as
``indexset solve-system FILE`` decides it) in a new Python process whose
``PYTHONPATH`` is the checkout; its wall time, from the start of the
process to its answer, is printed and written to JSON. The checkouts run
one after another on each file, in the order given, so that a noisy
machine hits them alike. A checkout may carry LatticeTuning fields to
change (``NAME=PATH:field=value:field=value``), to compare settings of
one code.

Usage::

    python benchmarks/checkouts.py --checkout old=/path/to/old --checkout new=. \\
        [--checkout new-off=.:trials_beside_share=0] --files A.dat,B.dat [--dir DIR] \\
        [--timeout 300] [--json OUT]
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
import sys
from dataclasses import fields, replace
from indexset.search.decide import decide_system
from indexset.search.lattice.tuning import LatticeTuning
from indexset.search.systemfile import load_system
changes = dict(item.split("=", 1) for item in sys.argv[2:])
tuning = LatticeTuning()
kinds = {f.name: type(getattr(tuning, f.name)) for f in fields(tuning)}
tuning = replace(tuning, **{k: (v == "True") if kinds[k] is bool else kinds[k](v) for k, v in changes.items()})
result = decide_system(load_system(sys.argv[1]), engine_options={"tuning": tuning})
print(result.status)
"""


def run(path: str, checkout: str, changes: list, timeout: float) -> dict:
    """One process: the status and its wall seconds (``timeout`` when it did not answer in time)."""
    env = dict(os.environ, PYTHONPATH=os.path.abspath(checkout))
    began = time.perf_counter()
    try:
        child = subprocess.run([sys.executable, "-c", _CHILD, path, *changes], env=env, capture_output=True, text=True, timeout=timeout)
        status = child.stdout.strip().splitlines()[-1] if child.returncode == 0 and child.stdout.strip() else f"failed ({child.returncode})"
    except subprocess.TimeoutExpired:
        status = "timeout"
    return {"status": status, "wall_s": round(time.perf_counter() - began, 3)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--checkout", action="append", required=True, metavar="NAME=PATH[:field=value...]")
    parser.add_argument("--files", required=True, help="comma-separated files (relative to --dir)")
    parser.add_argument("--dir", default=".")
    parser.add_argument("--timeout", type=float, default=300.0)
    parser.add_argument("--json", default=None)
    args = parser.parse_args()
    checkouts = []
    for spec in args.checkout:
        name, _, rest = spec.partition("=")
        path, *changes = rest.split(":")
        checkouts.append((name, path, changes))
    report = {"command": sys.argv, "platform": platform.platform(), "cpus": os.cpu_count(), "runs": []}
    for name in args.files.split(","):
        for label, path, changes in checkouts:
            record = dict(run(os.path.join(args.dir, name), path, changes, args.timeout), file=name, checkout=label)
            report["runs"].append(record)
            print(f"{name} {label} {record['wall_s']:.2f} {record['status']}", flush=True)
    if args.json:
        with open(args.json, "w", encoding="utf-8") as handle:
            json.dump(report, handle, indent=1)
            handle.write("\n")


if __name__ == "__main__":
    main()
