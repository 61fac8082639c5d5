"""The one place where Numba flags are set for every kernel."""

from __future__ import annotations

import numba

JIT_OPTIONS = {"cache": True, "nogil": True, "boundscheck": False}
"""Options of every ``@njit`` kernel: compiled once, cached on disk, GIL released
so CP-SAT and an enumeration kernel can run side by side in threads."""


def kernel(function):
    """Compile ``function`` as an indexset kernel with the shared options."""
    return numba.njit(**JIT_OPTIONS)(function)
