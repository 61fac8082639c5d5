"""The examples in docstrings run, and say what they print."""

from __future__ import annotations

import doctest
import importlib
import importlib.util
import pkgutil
from pathlib import Path

import pytest

import indexset


def _modules_with_examples() -> list[str]:
    names = []
    for info in pkgutil.walk_packages(indexset.__path__, "indexset."):
        if info.name.startswith("indexset.native"):
            continue  # the kernels carry no examples
        spec = importlib.util.find_spec(info.name)
        if spec is not None and spec.origin and spec.origin.endswith(".py") and ">>> " in Path(spec.origin).read_text(encoding="utf-8"):
            names.append(info.name)
    return names


MODULES = _modules_with_examples()


def test_some_modules_carry_examples():
    assert {"indexset.budget", "indexset.trace"} <= set(MODULES)


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples_run(name):
    failures, tried = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS)
    assert tried > 0 and failures == 0
