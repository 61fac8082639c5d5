"""Heavy libraries load only when used: `indexset --help` and the scan modules import none of them."""

from __future__ import annotations

import subprocess
import sys

HEAVY = ("torch", "huggingface_hub", "matplotlib", "safetensors")


def test_cli_and_scan_modules_import_no_heavy_library():
    code = (
        "import sys, indexset.cli.main as cli; cli.build_parser(); "
        "import indexset.model.torch_io, indexset.large.checkpoint, indexset.large.scan, indexset.workflows.scanplot, indexset.cli.scan; "
        "from indexset import Instance, scan; "
        f"print(','.join(name for name in {HEAVY!r} if name in sys.modules))"
    )
    process = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert process.returncode == 0, process.stderr
    assert process.stdout.strip() == ""
