"""Shared test set-up.

- ``reference.py`` (the independent references: brute force, Fraction
  arithmetic, forward passes in plain numpy) is importable from every test
  folder, because pytest puts this folder on ``sys.path`` for this file.
- ``slow`` marks tests that take more than a few seconds here:
  ``pytest -m "not slow"`` is the quick run (under a minute on 2 cores).
"""

from __future__ import annotations

from pathlib import Path

import pytest

REPOSITORY = Path(__file__).resolve().parent.parent


def pytest_configure(config) -> None:
    config.addinivalue_line("markers", "slow: takes more than a few seconds; `pytest -m \"not slow\"` leaves it out")


@pytest.fixture
def instances() -> Path:
    """The bundled instances folder."""
    return REPOSITORY / "instances"


@pytest.fixture
def kernel_walk(monkeypatch):
    """Lattice searches walk every tree with the Numba kernel.

    Small trees (and, for a first solution, pruned trees) otherwise go to
    the NumPy breadth-first walks; tests of the
    kernel's own machinery (threads, split trees, staging, Dask parts) use
    small trees and need the kernel to walk them. No tree, not even one
    without nodes, fits a budget of −1 nodes.
    """
    from indexset.search.engines import lattice

    monkeypatch.setattr(lattice, "SMALL_TREE_NODES", -1)
    monkeypatch.setattr(lattice, "REDUCED_TREE_NODES", -1)
    monkeypatch.setattr(lattice, "PRUNED_WALK_NODES", -1)
    monkeypatch.setattr(lattice, "FIRST_WALK_NODES", -1)
