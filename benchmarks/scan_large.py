"""The certified scan of a BERT-size checkpoint against the bare Gram solves of its layers.

Builds a seeded BERT-layout checkpoint (default 6 layers, d = 384,
n = 1536, float32 weights N(0, 1/d) and N(0, 1/n), GELU) and times, in
alternating repetitions, the whole ``indexset scan`` process and the bare
float64 work the scan rests on for the same layers: reading the tensors,
forming ``G = (W_downᵀW_down) ∘ (W_up W_upᵀ)`` and the right-hand side, and
one ``numpy.linalg.solve``. Reports medians and the median per-pair ratio.

    python benchmarks/scan_large.py --repeat 5 [--layers 6 --d 384 --n 1536] [--indexset indexset]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np


def build(folder: Path, layers: int, d: int, n: int, seed: int) -> None:
    from safetensors.numpy import save_file

    rng = np.random.default_rng(seed)
    tensors = {}
    for i in range(layers):
        prefix = f"bert.encoder.layer.{i}."
        tensors[prefix + "intermediate.dense.weight"] = (rng.standard_normal((n, d)) / np.sqrt(d)).astype(np.float32)
        tensors[prefix + "intermediate.dense.bias"] = (0.02 * rng.standard_normal(n)).astype(np.float32)
        tensors[prefix + "output.dense.weight"] = (rng.standard_normal((d, n)) / np.sqrt(n)).astype(np.float32)
        tensors[prefix + "output.dense.bias"] = (0.02 * rng.standard_normal(d)).astype(np.float32)
    save_file(tensors, str(folder / "model.safetensors"))
    (folder / "config.json").write_text(json.dumps({"model_type": "bert", "hidden_act": "gelu"}))


def bare(folder: Path, layers: int) -> float:
    """Seconds of the bare float64 Gram solves of every layer (tensors read from the file)."""
    from safetensors.numpy import load_file

    start = time.perf_counter()
    tensors = load_file(str(folder / "model.safetensors"))
    for i in range(layers):
        prefix = f"bert.encoder.layer.{i}."
        U = tensors[prefix + "intermediate.dense.weight"].astype(np.float64)
        D = tensors[prefix + "output.dense.weight"].astype(np.float64)
        G = (D.T @ D) * (U @ U.T)
        rhs = -np.einsum("ri,ir->i", D, U)  # (Mᵀt)_i = W_down[:,i]ᵀ (−I) W_up[i,:]ᵀ
        np.linalg.solve(G, rhs)
    return time.perf_counter() - start


def scan(folder: Path, indexset: str) -> float:
    start = time.perf_counter()
    process = subprocess.run([indexset, "scan", str(folder), "--json"], capture_output=True, text=True)
    elapsed = time.perf_counter() - start
    if process.returncode not in (0, 1, 3):
        raise SystemExit(f"scan failed ({process.returncode}): {process.stderr[-500:]}")
    return elapsed


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--layers", type=int, default=6)
    parser.add_argument("--d", type=int, default=384)
    parser.add_argument("--n", type=int, default=1536)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--indexset", default="indexset")
    args = parser.parse_args(argv)
    folder = Path(tempfile.mkdtemp(prefix="indexset-scan-"))
    build(folder, args.layers, args.d, args.n, args.seed)
    scan(folder, args.indexset)  # warm-up: the file cache, and nothing compiled at first use
    pairs = []
    for rep in range(args.repeat):
        if rep % 2 == 0:
            pairs.append((scan(folder, args.indexset), bare(folder, args.layers)))
        else:
            b = bare(folder, args.layers)
            pairs.append((scan(folder, args.indexset), b))
    scans, bares = zip(*pairs)
    ratio = statistics.median(s / b for s, b in pairs)
    print(f"{args.layers} layers, d = {args.d}, n = {args.n}: scan (whole process) median {statistics.median(scans):.2f} s, "
          f"bare Gram solves median {statistics.median(bares):.2f} s, ratio median {ratio:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
