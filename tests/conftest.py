"""Shared test set-up.

- ``reference.py`` (the independent references: brute force, Fraction
  arithmetic, forward passes in plain numpy) is importable from every test
  folder, because pytest puts this folder on ``sys.path`` for this file.
- ``tunings.py`` holds the engine tunings tests pass explicitly (e.g.
  ``KERNEL_WALK``: every tree walked by the Numba kernel), importable the
  same way.
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

