"""The README's commands and Python snippets run as written, from the repository root.

They run in a temporary folder that looks like the repository root to them
(``instances/`` linked in), so the files they write land there and not in
the checkout.
"""

from __future__ import annotations

import contextlib
import io
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from indexset.cli.main import main

REPOSITORY = Path(__file__).resolve().parent.parent
README = (REPOSITORY / "README.md").read_text(encoding="utf-8")
FENCED = re.compile(r"^```(\w+)\n(.*?)^```", re.S | re.M)
BLOCKS = [(language, body) for language, body in FENCED.findall(README)]
PYTHON = [body for language, body in BLOCKS if language == "python"]
HANG_S = 300  # a guard against a hung process, not a timing assertion


@pytest.fixture
def root(tmp_path):
    """A working folder that looks like the repository root: ``instances/``, and the source tree ``python -c`` imports from there."""
    for name in ("instances", "indexset", "native"):
        (tmp_path / name).symlink_to(REPOSITORY / name, target_is_directory=True)
    return tmp_path


def test_setup_commands_open_the_readme():
    """The first code block is the set-up: install and solve a bundled instance, install the tests and run them."""
    language, body = BLOCKS[0]
    lines = body.strip().splitlines()
    assert language == "bash" and len(lines) == 2
    assert lines[0].startswith("pip install . && indexset solve instances/")
    assert lines[1] == 'pip install ".[test]" && pytest -q'
    assert README.index("```bash") < README.index("## The question")


def run_line(line: str, capsys) -> int:
    """One ``indexset ...`` command line of the README, through the CLI's main() (exit codes: tests/cli/test_exit_codes.py)."""
    argv = shlex.split(line)
    assert argv[0] == "indexset", line
    capsys.readouterr()
    code = main(argv[1:])
    assert capsys.readouterr().err == "", line
    return code


def test_setup_solve_command_runs(root, monkeypatch, capsys):
    """The set-up's ``indexset ...`` part (this checkout is installed already) answers absorbable and writes its witness."""
    monkeypatch.chdir(root)
    command = BLOCKS[0][1].strip().splitlines()[0].split(" && ", 1)[1]
    assert run_line(command, capsys) == 0
    argv = shlex.split(command)
    assert (root / argv[argv.index("--witness") + 1]).is_file()


def test_constructing_instances_block_runs(root, monkeypatch, capsys):
    """Construct, solve, verify and export: every command of that block exits 0 and writes what it says."""
    monkeypatch.chdir(root)
    section = README.split("## Constructing instances", 1)[1]
    language, body = FENCED.search(section).groups()
    assert language == "bash"
    for line in body.strip().splitlines():
        assert run_line(line, capsys) == 0, line
    assert (root / "planted.npz").is_file() and (root / "block.safetensors").is_file()
    assert (root / "block.safetensors").read_bytes()[8:9] == b"{"  # a safetensors header, not a zip archive


@pytest.mark.parametrize("index", range(len(PYTHON)))
def test_python_snippets_run(index, root):
    """Each snippet in a fresh interpreter, importing indexset from the source tree as ``python`` in the repository root does."""
    source = f"import indexset, sys; assert indexset.__file__.startswith({str(root)!r}), indexset.__file__\n" + PYTHON[index]
    process = subprocess.run([sys.executable, "-c", source], cwd=root, capture_output=True, text=True, timeout=HANG_S)
    assert process.returncode == 0, process.stderr[-3000:]


def test_there_are_python_snippets():
    assert PYTHON, "the README has no ```python block"


def _block(heading: str) -> str:
    section = README[README.index(f"\n{heading}\n"):]
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
