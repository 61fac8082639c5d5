"""README.md's "From PyTorch" block runs as written and prints what its comments say."""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

REPOSITORY = Path(__file__).resolve().parent.parent


def _block(heading: str) -> str:
    text = (REPOSITORY / "README.md").read_text(encoding="utf-8")
    section = text[text.index(f"\n{heading}\n"):]
    section = section[: section.index("\n## ", 1)]
    (code,) = re.findall(r"```python\n(.*?)```", section, flags=re.S)
    return code


def test_from_pytorch_block_runs_as_written(tmp_path, monkeypatch):
    code = _block("## From PyTorch")
    expected = [line.split("  # ", 1)[1] for line in code.splitlines() if line.lstrip().startswith("print(")]
    assert len(expected) == 5, expected  # every print states its output
    monkeypatch.chdir(tmp_path)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code, "README.md (From PyTorch)", "exec"), {"__name__": "readme"})
    assert out.getvalue().splitlines() == expected
