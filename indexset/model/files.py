"""Atomic file output: nothing half-written, one-line errors.

Every file indexset writes goes through :func:`atomic_write`: the content is
written to a temporary file in the target folder and renamed over the target
only when complete, so an error or Ctrl-C never leaves a partial file, and
it gets the permissions the user's umask gives new files (mkstemp alone
would make it private, 0600).
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable
from typing import BinaryIO

from indexset.errors import InputError


def atomic_write(path: str | os.PathLike, write: Callable[[BinaryIO], None], suffix: str = "") -> None:
    """Write a file atomically.

    Parameters
    ----------
    path : str or PathLike
        Target file.
    write : callable
        ``write(stream)`` writes the whole content to a binary stream.
    suffix : str
        Suffix of the temporary file (for recognisability only).

    Raises
    ------
    InputError
        Missing output folder, a folder as target, or an OS error on write.
    """
    path = os.fspath(path)
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        raise InputError(path, "output folder does not exist")
    if os.path.isdir(path):
        raise InputError(path, "is a folder, expected an output file name")
    try:
        handle, temp = tempfile.mkstemp(suffix=suffix, dir=folder)
    except OSError as exc:
        raise InputError(path, f"cannot write to the output folder ({exc.strerror or exc})") from None
    try:
        with os.fdopen(handle, "wb") as stream:
            write(stream)
        os.chmod(temp, 0o666 & ~_umask())
        os.replace(temp, path)
    except BaseException as exc:
        if os.path.exists(temp):
            os.unlink(temp)
        if isinstance(exc, OSError):
            raise InputError(path, f"cannot write ({exc.strerror or exc})") from None
        raise


def _umask() -> int:
    """The process umask (read by setting it and putting it back)."""
    mask = os.umask(0o022)
    os.umask(mask)
    return mask
