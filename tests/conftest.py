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
