"""The W update in explicit vectors (``advance_l1``) against its plain loop, on random data and on every vector width."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest
from indexset.native import enumerate as kernel

WIDTHS = [0, 1, 3, 4, 7, 8, 9, 15, 16, 17, 31, 32, 33, 48, 63, 64, 65, 96, 127, 128, 129, 160, 200]


def _rows(rng, width: int, dtype):
    """W (3 rows), b* (2 rows) and weights padded as the engine pads them, b* zero past ``width`` as on a tree."""
    N = -(-max(width, 1) // kernel.ROW_PADDING) * kernel.ROW_PADDING
    W = rng.normal(size=(3, N)).astype(dtype)
    bstar = rng.normal(size=(2, N)).astype(dtype)
    bstar[:, width:] = 0.0
    weight = rng.integers(0, 4, size=N).astype(dtype)
    return W, bstar, weight


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_the_vector_update_matches_the_plain_loop(dtype):
    rng = np.random.default_rng(5)
    lanes = kernel.vector_lanes(np.dtype(dtype).itemsize * 8)
    tolerance = 8 * np.finfo(dtype).eps
    for width in WIDTHS:
        for _ in range(3):
            W, bstar, weight = _rows(rng, width, dtype)
            plain_W = W.copy()
            diff = float(rng.normal())
            vector = float(kernel.advance_l1(W, bstar, 1, diff, width, weight))
            plain = float(kernel.plain_advance_l1(plain_W, bstar, 1, diff, width, weight))
            assert np.allclose(W[1, :width], plain_W[1, :width], rtol=tolerance, atol=tolerance), width
            scale = float(np.sum(weight[:width] * np.abs(plain_W[1, :width]))) + 1.0
            assert abs(vector - plain) <= tolerance * width * scale, (width, vector, plain)
            # Past width: the last vector's lanes hold row 2 (b* is zero there), the rest is untouched.
            end = -(-width // lanes) * lanes
            assert np.array_equal(W[1, width:end], plain_W[2, width:end]), width
            assert np.array_equal(W[1, end:], plain_W[1, end:]), width
            assert np.array_equal(W[[0, 2]], plain_W[[0, 2]]), width


def test_the_weights_past_width_are_never_summed():
    W = np.zeros((2, 32), dtype=np.float32)
    W[1] = 1.0
    bstar = np.zeros((1, 32), dtype=np.float32)
    weight = np.ones(32, dtype=np.float32)
    for width in range(33):
        assert float(kernel.advance_l1(W, bstar, 0, 0.5, width, weight)) == width


CHILD = """
import numpy as np
from indexset.native import enumerate as kernel
rng = np.random.default_rng(0)
bad = 0
for dtype in (np.float32, np.float64):
    for width in range(0, 70):
        N = -(-max(width, 1) // kernel.ROW_PADDING) * kernel.ROW_PADDING
        W = rng.normal(size=(2, N)).astype(dtype)
        bstar = rng.normal(size=(1, N)).astype(dtype)
        bstar[:, width:] = 0
        weight = np.ones(N, dtype=dtype)
        plain_W = W.copy()
        got = float(kernel.advance_l1(W, bstar, 0, 0.25, width, weight))
        want = float(kernel.plain_advance_l1(plain_W, bstar, 0, 0.25, width, weight))
        bad += not (np.allclose(W[0, :width], plain_W[0, :width], rtol=1e-6) and abs(got - want) <= 1e-5 * (1 + abs(want)))
print(kernel.vector_lanes(32), bad)
"""


def _widths_this_cpu_runs() -> list:
    """Feature sets to compile for, with the widest vector each allows: those this CPU can run (SSE2 every x86-64 has)."""
    import llvmlite.binding as llvm

    host = llvm.get_host_cpu_features()
    sets = [("+sse2,-avx,-avx2,-avx512f", 16)]
    if host.get("avx2"):
        sets.append(("+avx,+avx2,-avx512f", 32))
    if host.get("avx512f"):
        sets.append(("+avx,+avx2,+avx512f", 64))
    return sets


def test_every_vector_width_gives_the_plain_loop(tmp_path):
    """The width follows the features Numba compiles for (here forced, in a fresh process with its own cache each)."""
    for k, (features, widest) in enumerate(_widths_this_cpu_runs()):
        lanes = min(widest, kernel.WIDEST_VECTOR_BYTES) // 4
        env = dict(os.environ, NUMBA_CPU_NAME="generic", NUMBA_CPU_FEATURES=features, NUMBA_CACHE_DIR=str(tmp_path / str(k)))
        run = subprocess.run([sys.executable, "-c", CHILD], capture_output=True, text=True, env=env, timeout=300)
        assert run.returncode == 0, (features, run.stderr[-2000:])
        assert run.stdout.split() == [str(lanes), "0"], features
