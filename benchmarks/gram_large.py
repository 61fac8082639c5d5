"""Benchmark the Gram path on one transformer-sized layer (issue 7).

Decides one random, seeded layer (default d = 768, n = 3072, the BERT-base /
GPT-2-small MLP shape, weights N(0, 1/d) and N(0, 1/n), GELU) with
:func:`indexset.large.gram.gram_decide`, and reports its wall time and peak
memory next to the bare n × n solve it rests on (forming G, then
``numpy.linalg.solve`` and ``scipy.linalg.cho_factor``/``cho_solve``).

Usage::

    python benchmarks/gram_large.py [--d 768] [--n 3072] [--seed 0] [--threads T] [--json]

``--threads T`` sets ``OPENBLAS_NUM_THREADS``/``OMP_NUM_THREADS`` before numpy
is imported (on a busy shared machine one BLAS thread is far more stable:
a multithreaded Cholesky degrades badly when the cores are oversubscribed).

Peak memory: ``tracemalloc`` peak of a second, traced run (numpy reports
its buffers to tracemalloc), and the process's maximum resident set size.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import resource
import sys
import time
import tracemalloc


def _threads_from_argv(argv) -> None:
    """Apply ``--threads`` before numpy (and its BLAS) is loaded."""
    args = sys.argv[1:] if argv is None else argv
    for flag, value in itertools.pairwise(args):
        if flag == "--threads":
            os.environ["OPENBLAS_NUM_THREADS"] = os.environ["OMP_NUM_THREADS"] = value


_threads_from_argv(None)

import numpy as np  # noqa: E402
import scipy.linalg  # noqa: E402

from indexset.large.gram import gram_decide  # noqa: E402
from indexset.model.instance import Instance  # noqa: E402


def layer(d: int, n: int, seed: int) -> Instance:
    """A random GELU layer with biases, seeded."""
    rng = np.random.default_rng(seed)
    W_up = rng.standard_normal((n, d)) / np.sqrt(d)
    W_down = rng.standard_normal((d, n)) / np.sqrt(n)
    return Instance(W_up, W_down, b_up=rng.standard_normal(n) * 0.02, b_down=np.zeros(d), activation="gelu", source=f"random d={d} n={n} seed={seed}")


def bare_solve(instance: Instance) -> dict:
    """Seconds for G alone, G + numpy.linalg.solve, and the Cholesky factor + solve."""
    U, D = instance.W_up, instance.W_down
    start = time.perf_counter()
    G = (D.T @ D) * (U @ U.T)  # the full matrix, as a plain numpy user forms it
    rhs = np.einsum("ai,ia->i", D, U) * -1.0
    gram_s = time.perf_counter() - start
    start = time.perf_counter()
    np.linalg.solve(G, rhs)
    solve_s = time.perf_counter() - start
    start = time.perf_counter()
    scipy.linalg.cho_solve(scipy.linalg.cho_factor(G, check_finite=False), rhs, check_finite=False)
    cholesky_s = time.perf_counter() - start
    return {"gram_s": gram_s, "numpy_solve_s": solve_s, "cholesky_solve_s": cholesky_s}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--d", type=int, default=768)
    parser.add_argument("--n", type=int, default=3072)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--threads", help="BLAS threads (set before numpy is imported)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    instance = layer(args.d, args.n, args.seed)
    bare = bare_solve(instance)
    start = time.perf_counter()
    result = gram_decide(instance)
    decide_s = time.perf_counter() - start
    tracemalloc.start()
    gram_decide(instance)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    rss_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    report = {
        "d": args.d,
        "n": args.n,
        "seed": args.seed,
        "blas_threads": os.environ.get("OPENBLAS_NUM_THREADS", "default"),
        "cpus": os.cpu_count(),
        "load_average": os.getloadavg(),
        "status": result.status,
        "distance_lower": result.certificate["distance_lower"],
        "distance_upper": result.certificate["distance_upper"],
        "relative_lower": result.certificate["relative_lower"],
        "lambda_min_lower": result.stages["lambda_min_lower"],
        "lambda_min_estimate": result.stages["lambda_min_estimate"],
        "decide_s": decide_s,
        "stage_timings_s": result.stages["timings"],
        "tracemalloc_peak_mib": peak / 2**20,
        "max_rss_mib": rss_kib / 1024,
        **bare,
        "bare_total_s": bare["gram_s"] + bare["numpy_solve_s"],
    }
    if args.json:
        print(json.dumps(report, indent=2))
        return 0
    print(f"Gram path, d = {args.d}, n = {args.n}, seed {args.seed}: {result.status}")
    print(f"  {report['cpus']} CPUs, BLAS threads {report['blas_threads']}, load average {report['load_average'][0]:.2f}")
    print(f"  certified distance [{report['distance_lower']:.6g}, {report['distance_upper']:.6g}] (relative lower {report['relative_lower']:.4g})")
    print(f"  λ_min(G): certified ≥ {report['lambda_min_lower']:.6g} (estimate {report['lambda_min_estimate']:.6g})")
    print(f"  gram_decide: {decide_s:.2f} s; stages {result.stages['timings']}")
    print(f"  peak memory: tracemalloc {report['tracemalloc_peak_mib']:.0f} MiB, max RSS {report['max_rss_mib']:.0f} MiB")
    print(f"  bare: forming G {bare['gram_s']:.2f} s + numpy.linalg.solve {bare['numpy_solve_s']:.2f} s "
          f"(Cholesky factor + solve {bare['cholesky_solve_s']:.2f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
