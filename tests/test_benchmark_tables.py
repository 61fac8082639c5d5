"""Every table of BENCHMARKS.md is rendered from its result file in benchmarks/results/, so the doc cannot drift from the data.

The harness (``benchmarks/run.py``) renders each table of each result file
as the line naming its command, code and machine, then the Markdown table;
every such block must be in BENCHMARKS.md, and every Markdown table of
BENCHMARKS.md must be one of them. Each table's command is one the harness
(or the ``indexset`` command line) accepts as written.
"""

from __future__ import annotations

import copy
import importlib.util
import json
import re
import shlex
import sys
from pathlib import Path

import pytest

from indexset.cli.main import build_parser

REPOSITORY = Path(__file__).resolve().parent.parent
BENCHMARKS = REPOSITORY / "benchmarks"
DOC = (REPOSITORY / "BENCHMARKS.md").read_text(encoding="utf-8")
FILES = sorted((BENCHMARKS / "results").glob("*.json"))
MARKDOWN_TABLE = re.compile(r"^\|.*\|\n\|(?:---\|)+\n(?:\|.*\|\n?)*", re.M)


def _harness():
    sys.path.insert(0, str(BENCHMARKS))
    spec = importlib.util.spec_from_file_location("run", BENCHMARKS / "run.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


RUN = _harness()


def _result(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


def _blocks(path: Path) -> list:
    result = _result(path)
    return RUN.blocks(result["suite"], result, path)


@pytest.mark.parametrize("path", FILES, ids=[path.stem for path in FILES])
def test_every_table_of_a_result_file_is_in_the_doc(path):
    result = _result(path)
    assert result["suite"] == path.stem and path.stem in RUN.MODULES
    blocks = _blocks(path)
    assert blocks, path.name
    missing = [block.splitlines()[0] for block in blocks if block not in DOC]
    assert missing == [], (path.name, missing)


def test_every_table_of_the_doc_comes_from_a_result_file():
    rendered = "\n\n".join(block for path in FILES for block in _blocks(path))
    tables = [table.strip() for table in MARKDOWN_TABLE.findall(DOC)]
    assert tables
    strays = [table.splitlines()[0] for table in tables if table not in rendered]
    assert strays == []


def test_a_changed_result_changes_its_table():
    """The check can fail: one number changed in a result file renders a block that BENCHMARKS.md does not hold."""
    result = _result(BENCHMARKS / "results" / "versus.json")
    changed = copy.deepcopy(result)
    changed["tables"]["dotests"]["rows"][0]["summary"]["indexset_wall"] += 1.0
    before, after = (RUN.render("versus", "dotests", r["tables"]["dotests"], "dotests") for r in (result, changed))
    assert before in DOC and after not in DOC


def _commands():
    for path in FILES:
        for name, part in _result(path)["tables"].items():
            if part.get("command"):
                yield f"{path.stem}/{name}", part["command"]
            for row in part.get("rows", []) if path.stem == "tuning" else []:
                yield f"{path.stem}/{row['tunable']}", row["command"]


@pytest.mark.parametrize("where, command", list(_commands()))
def test_every_command_parses(where, command):
    """Every command of a table (a harness suite, or ``indexset``, after any ``&&``) is accepted by its parser as written."""
    for part in command.split(" && "):
        argv = shlex.split(part)
        argv = argv[1:] if argv[0].startswith("PYTHONPATH=") else argv
        if argv[0] == "indexset":
            build_parser().parse_args(argv[1:])
        else:
            assert argv[:2] == ["python", "benchmarks/run.py"], where
            RUN.parser(argv[2]).parse_args(argv[3:])


def test_the_folder_stays_small():
    """At most 8 scripts and 12 result files: one harness, its suites, the instance writer a test needs."""
    assert len(list(BENCHMARKS.glob("**/*.py"))) <= 8
    assert 1 <= len(FILES) <= 12
    figures = {path.name for path in (BENCHMARKS / "results").glob("*.png")}
    assert figures and all(f"benchmarks/results/{name}" in DOC for name in figures)
