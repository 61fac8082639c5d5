"""The README's and the user guide's commands and Python snippets run as written, from the repository root.

They run in a temporary folder that looks like the repository root to them
(``instances/`` linked in), so the files they write land there and not in
the checkout. The reference documents' relative links resolve, and they
read as a reference: no history, a README of bounded length.
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
USAGE = (REPOSITORY / "docs" / "USAGE.md").read_text(encoding="utf-8")
FENCED = re.compile(r"^```(\w+)\n(.*?)^```", re.S | re.M)
BLOCKS = [(language, body) for language, body in FENCED.findall(README)]
PYTHON = [body for text in (README, USAGE) for language, body in FENCED.findall(text) if language == "python"]
HANG_S = 300  # a guard against a hung process, not a timing assertion
README_LINES = 250
REFERENCE_DOCS = ("README.md", "BENCHMARKS.md", "docs/USAGE.md", "benchmarks/README.md", "instances/MANIFEST.md")
CURRENT_DOCS = ("README.md", "BENCHMARKS.md", "docs/USAGE.md", "benchmarks/README.md", "instances/MANIFEST.md")
DIARY = re.compile(r"\bissue[s]? \d+|\bissue-\d+|this stop|previous stop|a later change|later stop", re.I)
LINK = re.compile(r"\]\(([^)\s]+)\)")


@pytest.fixture
def root(tmp_path):
    """A working folder that looks like the repository root: ``instances/``, and the source tree ``python -c`` imports from there."""
    for name in ("instances", "indexset", "native"):
        (tmp_path / name).symlink_to(REPOSITORY / name, target_is_directory=True)
    return tmp_path


def test_setup_commands_open_the_readme():
    """The first code block, before any section: install and solve a bundled instance; install the tests and run them as CI does."""
    language, body = BLOCKS[0]
    lines = body.strip().splitlines()
    assert language == "bash" and len(lines) == 2
    assert lines[0].startswith("pip install . && indexset solve instances/")
    assert lines[1] == 'pip install ".[test]" && pytest -q -p no:cacheprovider'
    assert README.index("```bash") < README.index("\n## ")
    assert README.split("\n", 1)[1].lstrip("\n").startswith("```bash\n")  # right under the title


def test_readme_test_command_is_what_ci_runs():
    """``.ci/run`` installs the same extra and runs the same pytest line as the README's second command."""
    install, tests = BLOCKS[0][1].strip().splitlines()[1].split(" && ")
    ci = (REPOSITORY / ".ci" / "run").read_text(encoding="utf-8").splitlines()
    assert tests in ci
    assert any(line.split()[-1] == install.split()[-1] and " pip install " in f" {line} " for line in ci)


def run_line(line: str, capsys) -> int:
    """One ``indexset ...`` command line of the docs, through the CLI's main() (exit codes: tests/cli/test_exit_codes.py)."""
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
    """Construct, solve, verify and export (docs/USAGE.md): every command of that block exits 0 and writes what it says."""
    monkeypatch.chdir(root)
    section = USAGE.split("## Constructing instances", 1)[1]
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


def test_readme_python_example_prints_what_it_says(root):
    """The README's example: every ``print`` states its output in its comment, and prints exactly that."""
    code = next(body for language, body in BLOCKS if language == "python")
    expected = [line.split("  # ", 1)[1].split(":", 1)[0] for line in code.splitlines() if line.startswith("print(")]
    assert expected
    process = subprocess.run([sys.executable, "-c", code], cwd=root, capture_output=True, text=True, timeout=HANG_S)
    assert process.stdout.splitlines() == expected, process.stderr[-3000:]


def test_there_are_python_snippets():
    assert any(language == "python" for language, _ in BLOCKS), "the README has no ```python block"


def _block(text: str, heading: str) -> str:
    section = text[text.index(f"\n{heading}\n"):]
    section = section[: section.index("\n## ", 1)]
    (code,) = re.findall(r"```python\n(.*?)```", section, flags=re.S)
    return code


def test_from_pytorch_block_runs_as_written(tmp_path, monkeypatch):
    code = _block(USAGE, "## From PyTorch")
    expected = [line.split("  # ", 1)[1] for line in code.splitlines() if line.lstrip().startswith("print(")]
    assert len(expected) == 5, expected  # every print states its output
    monkeypatch.chdir(tmp_path)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code, "docs/USAGE.md (From PyTorch)", "exec"), {"__name__": "readme"})
    assert out.getvalue().splitlines() == expected


def _anchors(path: Path) -> set[str]:
    """GitHub's anchors of a Markdown file's headings: lower case, punctuation dropped, spaces as hyphens."""
    text = re.sub(r"^```.*?^```", "", path.read_text(encoding="utf-8"), flags=re.S | re.M)
    headings = re.findall(r"^#+ (.+)$", text, flags=re.M)
    return {re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-") for heading in headings}


@pytest.mark.parametrize("name", REFERENCE_DOCS)
def test_relative_links_resolve(name):
    """Every relative link of the reference documents names an existing file, and an existing heading when it has an anchor."""
    path = REPOSITORY / name
    text = re.sub(r"^```.*?^```", "", path.read_text(encoding="utf-8"), flags=re.S | re.M)
    broken = []
    for target in LINK.findall(text):
        if re.match(r"[a-z]+:", target):
            continue  # an absolute URL
        file, _, anchor = target.partition("#")
        linked = (path.parent / file).resolve() if file else path
        missing_anchor = anchor and linked.suffix == ".md" and linked.exists() and anchor not in _anchors(linked)
        if not linked.exists() or missing_anchor:
            broken.append(target)
    assert not broken, (name, broken)


@pytest.mark.parametrize("name", CURRENT_DOCS)
def test_reference_documents_carry_no_history(name):
    """History (issue numbers, session stops, "a later change") belongs in git, not in the reference."""
    lines = (REPOSITORY / name).read_text(encoding="utf-8").splitlines()
    assert [line for line in lines if DIARY.search(line)] == [], name


def test_readme_is_short():
    assert len(README.splitlines()) <= README_LINES
