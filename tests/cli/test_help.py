"""Every ``--help`` states the exit statuses and the defaults; ``--help`` stays free of numerical imports."""

from __future__ import annotations

import argparse
import subprocess
import sys

import pytest

from indexset.cli.main import build_parser
from indexset.workflows import construct


def _parsers(parser, path=("indexset",)):
    """Every parser of the tree, with its command path (construct's families included)."""
    yield path, parser
    for action in parser._actions:  # argparse keeps no public list of its actions
        if isinstance(action, argparse._SubParsersAction):
            seen = set()
            for name, child in action.choices.items():
                if id(child) not in seen:  # aliases share a parser
                    seen.add(id(child))
                    yield from _parsers(child, path + (name,))


PARSERS = dict(_parsers(build_parser()))


@pytest.mark.parametrize("path", sorted(PARSERS), ids=" ".join)
def test_help_states_exit_statuses(path):
    text = PARSERS[path].format_help()
    assert "exit" in text.lower() and "bad input" in text, path
    if path[-1] in ("solve", "solve-system", "indexset"):
        assert "3" in text and "unknown" in text


@pytest.mark.parametrize("path", sorted(PARSERS), ids=" ".join)
def test_every_default_is_in_the_help(path):
    for action in PARSERS[path]._actions:
        if isinstance(action, (argparse._HelpAction, argparse._SubParsersAction)) or not action.option_strings:
            continue
        if action.default in (None, False, argparse.SUPPRESS):
            continue
        assert "default" in (action.help or ""), (path, action.option_strings)


@pytest.mark.parametrize("family", ["planted", "random", "float-planted", "degenerate", "hard", "gated", "homogeneous", "stack", "low-precision"])
def test_construct_help_shows_the_family_specs_defaults(family):
    """The defaults live in the family's spec; the help reads them from there when it is printed."""
    text = " ".join(PARSERS[("indexset", "construct", family)].format_help().split())
    parser = PARSERS[("indexset", "construct", family)]
    defaults = construct.family(family).spec.defaults()
    shown = 0
    for action in parser._actions:
        default = defaults.get(action.dest)
        if default is None or isinstance(default, bool):
            continue
        assert f"(default: {default})" in text, (family, action.dest)
        shown += 1
    assert shown >= 3


def test_help_and_version_import_no_numerical_library():
    code = ("import sys, contextlib, io; from indexset.cli.main import main\n"
            "with contextlib.redirect_stdout(io.StringIO()):\n"
            "    codes = [main(['--help']), main(['solve', '--help']), main(['bench', '--help']), main(['--version'])]\n"
            "heavy = [m for m in ('numpy', 'scipy', 'matplotlib', 'safetensors', 'flint', 'numba', 'ortools') if m in sys.modules]\n"
            "print(codes, heavy)")
    process = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert process.stdout.strip() == "[0, 0, 0, 0] []", process.stderr
