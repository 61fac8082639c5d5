"""A bench report written by hand (no sweep runs) that holds every marker class: decided runs, a timeout, an unknown and a disagreement."""

from __future__ import annotations

from indexset.workflows import bench


def _run(method, n, seed, status, time_s, timed_out=False):
    return {"method": method, "family": "planted", "d": 2, "n": n, "seed": seed, "params": {}, "status": status, "time_s": time_s,
            "index_set": None, "verified": status == "feasible", "timed_out": timed_out, "engine": "", "note": "", "reason": "",
            "rerun": f"indexset bench --widths {n} --first-seed {seed}", "construct": ""}


def report() -> dict:
    sweep = bench.Sweep(d=2, widths=[6, 8, 10], seeds=[0, 1], methods=("pipeline", "milp"), range=20, time_limit=10.0)
    runs = []
    for n in sweep.widths:
        for seed in sweep.seeds:
            runs.append(_run("pipeline", n, seed, "feasible", 0.01 * n))
            runs.append(_run("milp", n, seed, "feasible", 0.02 * n))
    runs[-1] = _run("milp", 10, 1, "timeout", 10.0, timed_out=True)
    runs[-3] = _run("milp", 10, 0, "unknown", 0.5)
    runs[1] = _run("milp", 6, 0, "infeasible_float", 0.1)
    disagreement = {"family": "planted", "d": 2, "n": 6, "seed": 0, "params": {}, "kind": "contradiction",
                    "verified_S": [{"by": "pipeline", "S": [0, 1]}], "infeasible": [{"method": "milp", "status": "infeasible_float", "reason": ""}]}
    run_dicts = runs
    return {"sweep": sweep.to_json(), "machine": {"cpus": 2, "started": "2030-01-02 03:04:05 UTC"}, "instances": [], "runs": run_dicts,
            "summary": bench.summarize(run_dicts, sweep), "disagreements": [disagreement], "interrupted": False}
