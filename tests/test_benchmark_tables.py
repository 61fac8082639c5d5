"""The deep-stack tables of BENCHMARKS.md are rendered from their result files, so the doc cannot drift from the data."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

REPOSITORY = Path(__file__).resolve().parent.parent
BENCHMARKS = REPOSITORY / "benchmarks"


def _script(name):
    spec = importlib.util.spec_from_file_location(name, BENCHMARKS / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("script, result, key", [("explore_survey", "explore_survey.json", "summary"),
                                                 ("line_width", "line_width.json", "rows")])
def test_table_is_rendered_from_its_result_file(script, result, key):
    rendered = _script(script).table(json.loads((BENCHMARKS / result).read_text())[key])
    assert rendered in (REPOSITORY / "BENCHMARKS.md").read_text()
