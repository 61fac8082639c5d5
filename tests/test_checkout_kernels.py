"""A source checkout imports its own kernels, whatever else is installed (pairing one commit against another)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_a_checkout_on_pythonpath_loads_its_own_native_folder(tmp_path):
    checkout = tmp_path / "older"
    shutil.copytree(ROOT / "indexset", checkout / "indexset", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(ROOT / "native", checkout / "native", ignore=shutil.ignore_patterns("__pycache__"))
    code = "import indexset, indexset.native.enumerate as kernels; print(indexset.__file__); print(kernels.__file__)"
    run = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=120,
                         env=dict(os.environ, PYTHONPATH=str(checkout)))
    assert run.returncode == 0, run.stderr
    package, kernels = (Path(line).resolve() for line in run.stdout.split())
    assert package.is_relative_to(checkout.resolve()) and kernels.is_relative_to(checkout.resolve() / "native")
