"""The package keeps its layers: imports only downward, no cycles, kernels on their own, lint clean.

These run the same checks CI needs, through pytest: the import-linter
contract of pyproject.toml (imports inside functions count), a cycle check
over the whole import graph, the Numba kernels' independence, and ruff.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import networkx as nx

REPOSITORY = Path(__file__).resolve().parent.parent


def _import_graph() -> nx.DiGraph:
    import grimp

    graph = grimp.build_graph("indexset")
    return nx.DiGraph([(module, imported) for module in graph.modules for imported in graph.find_modules_directly_imported_by(module)])


def test_layers_contract_is_kept():
    command = [sys.executable, "-c", "import sys; from importlinter.cli import lint_imports_command; sys.exit(lint_imports_command())", "--no-cache"]
    process = subprocess.run(command, cwd=REPOSITORY, capture_output=True, text=True)
    assert process.returncode == 0, process.stdout[-3000:]


def test_no_import_cycles():
    cycles = list(nx.simple_cycles(_import_graph()))
    assert cycles == [], cycles


def test_kernels_import_nothing_of_indexset():
    for path in (REPOSITORY / "native").glob("*.py"):
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            names = [alias.name for alias in node.names] if isinstance(node, ast.Import) else [node.module or ""] if isinstance(node, ast.ImportFrom) and node.level == 0 else []
            assert not any(name.startswith("indexset") for name in names), (path.name, names)


def test_ruff_is_clean():
    process = subprocess.run([sys.executable, "-m", "ruff", "check", "indexset", "native", "tests", "benchmarks"], cwd=REPOSITORY, capture_output=True, text=True)
    assert process.returncode == 0, process.stdout[-3000:]


def test_the_source_tree_imports_from_the_repository_root():
    """``python -m pytest`` from the root imports the source folder, whose kernels sit in native/ beside it."""
    code = ("import sys; sys.path.insert(0, sys.argv[1]); import indexset, indexset.native.enumerate as kernels; "
            "assert indexset.__file__.startswith(sys.argv[1]), indexset.__file__; print(kernels.__name__)")
    process = subprocess.run([sys.executable, "-c", code, str(REPOSITORY)], capture_output=True, text=True, cwd=REPOSITORY)
    assert process.returncode == 0 and process.stdout.strip() == "indexset.native.enumerate", process.stderr
