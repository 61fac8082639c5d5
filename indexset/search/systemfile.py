"""Reading plain 0/1 systems ``A x = b`` from files.

Two formats:

- QOBLIB market split ``.dat``: ``#`` comment lines, then a line ``m n``,
  then m lines of n integer entries of A followed by that row's b;
- ``.npz`` with integer arrays ``A`` (m × n) and ``b`` (m), read with
  ``allow_pickle=False``.

Every problem raises :class:`indexset.errors.InputError` naming the file.
"""

from __future__ import annotations

import os
import zipfile

import numpy as np

from indexset.errors import InputError
from indexset.search.system import System, plain_system


def load_system(path) -> System:
    """Read a plain 0/1 system from a ``.dat`` or ``.npz`` file.

    Parameters
    ----------
    path : str or os.PathLike

    Returns
    -------
    System
        Exact integer ``M = A``, ``t = b`` (Python ints).

    Raises
    ------
    InputError
        Missing or unreadable file, unknown format, malformed content.
    """
    path = os.fspath(path)
    if not os.path.isfile(path):
        raise InputError(path, "no such file")
    if path.endswith(".npz"):
        A, b = _read_npz(path)
    elif path.endswith(".dat") or path.endswith(".txt"):
        A, b = _read_dat(path)
    else:
        raise InputError(path, "unknown system format: expected a QOBLIB .dat file or an .npz with arrays A and b")
    return plain_system(A, b)


def _read_dat(path: str) -> tuple[list, list]:
    """QOBLIB market split format (Python ints, so any size is exact)."""
    try:
        with open(path, encoding="utf-8") as handle:
            lines = [line.split() for line in handle if line.strip() and not line.lstrip().startswith("#")]
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(path, f"cannot read the file: {exc}") from None
    if not lines:
        raise InputError(path, "empty system file: expected a line 'm n'")
    header = _ints(path, lines[0], 1)
    if len(header) != 2 or header[0] < 0 or header[1] < 0:
        raise InputError(path, "line 1: expected 'm n' (two nonnegative integers)")
    m, n = header
    if len(lines) - 1 != m:
        raise InputError(path, f"expected {m} rows after the header, found {len(lines) - 1}")
    A, b = [], []
    for k, tokens in enumerate(lines[1:], start=2):
        row = _ints(path, tokens, k)
        if len(row) != n + 1:
            raise InputError(path, f"row {k - 1}: expected {n} coefficients and a right-hand side, found {len(row)} numbers")
        A.append(row[:n])
        b.append(row[n])
    return A, b


def _ints(path: str, tokens: list[str], line: int) -> list[int]:
    try:
        return [int(token) for token in tokens]
    except ValueError:
        raise InputError(path, f"data line {line}: not all entries are integers") from None


def _read_npz(path: str) -> tuple[np.ndarray, np.ndarray]:
    """``.npz`` with integer ``A`` (m × n) and ``b`` (m,)."""
    try:
        with np.load(path, allow_pickle=False) as data:
            missing = [key for key in ("A", "b") if key not in data.files]
            if missing:
                raise InputError(path, f"missing array(s) {', '.join(missing)}: a system file needs A (m × n) and b (m)")
            A, b = data["A"], data["b"]
    except InputError:
        raise
    except (OSError, ValueError, zipfile.BadZipFile, EOFError) as exc:
        raise InputError(path, f"cannot read the .npz archive: {exc}") from None
    A, b = _integral(path, "A", A), _integral(path, "b", b)
    if A.ndim != 2:
        raise InputError(path, f"A must be a 2-D array, got shape {A.shape}")
    if b.ndim != 1 or b.shape[0] != A.shape[0]:
        raise InputError(path, f"b must have shape ({A.shape[0]},) to match A {A.shape}, got {b.shape}")
    return A, b


def _integral(path: str, name: str, array: np.ndarray) -> np.ndarray:
    """Integer arrays as they are; float arrays only when every value is an integer."""
    if array.dtype.kind in "iu":
        return array
    if array.dtype.kind == "b":
        return array.astype(np.int64)
    if array.dtype.kind == "f":
        if not np.all(np.isfinite(array)) or not np.all(array == np.round(array)):
            raise InputError(path, f"{name} must hold integers; found non-integer or non-finite values")
        if array.size and np.abs(array).max() >= 2.0**53:
            raise InputError(path, f"{name} holds floats beyond 2^53, which are not exact integers here; store them as integers")
        return np.array([[int(v) for v in row] for row in array] if array.ndim == 2 else [int(v) for v in array.ravel()], dtype=object).reshape(array.shape)
    raise InputError(path, f"{name} must be an integer array, got dtype {array.dtype}")
