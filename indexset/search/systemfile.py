"""Reading plain 0/1 systems ``A x = b`` from files.

Two formats, told apart by content (an ``.npz`` is a zip archive):

- solvediophant's text format (A. Wassermann's lattice solver), of which a
  QOBLIB market split ``.dat`` file is the plain case. Blank lines and lines
  starting with ``%`` or ``#`` are comments. The first other line is the
  header ``m n`` or ``m n 1`` (the optional 1 says that a right-hand side
  follows each row). Then m rows, each n integer coefficients followed by
  the row's right-hand side; a row may wrap onto further lines, but no line
  holds the end of one row and the start of the next. After the rows come
  optional sections, each opened by a line starting with its keyword:

  - ``BOUNDS n``, then one upper bound per column, any nonnegative
    integer u: the unknown is a bounded integer 0 ≤ x ≤ u (1: a 0/1
    unknown; 0: fixed at 0);
  - ``SELECTEDCOLUMNS``, then a count N and N flags 0 or 1: the file's
    solutions have N columns, the matrix's columns are those flagged 1 (in
    order), and a column flagged 0 is 0 in every solution;
  - any other section (the group data of Kramer–Mesner files: generators,
    orbit representatives, ``ASCII`` … ``ASCIIEND`` blocks) is skipped, as
    solvediophant skips it, and so are numbers left over in a section
    after the ones it counts.

  A comment line ``% FREERHS`` before the header asks, as in solvediophant,
  for the solutions of ``A x = λ b`` for any integer λ ≠ 0
  (:mod:`indexset.search.multiples`); the other directives (``% stopafter``,
  ``% stoploops``, ``% cutafter``) tune solvediophant's run or output only,
  and are comments here. Numbers of any size are read exactly.
- ``.npz`` with integer arrays ``A`` (m × n) and ``b`` (m), and optionally
  ``upper`` (n: the bounds of bounded integer unknowns), read with
  ``allow_pickle=False``.

Every problem raises :class:`indexset.errors.InputError` naming the file.
"""

from __future__ import annotations

import os
import zipfile
from dataclasses import dataclass
from typing import NoReturn

import numpy as np

from indexset.errors import InputError
from indexset.search.system import System, bounded, plain_system

ZIP_MAGIC = b"PK\x03\x04"
"""The first bytes of a zip archive, hence of an ``.npz`` file."""

_SKIPPED_BLOCK = ("ASCII", "ASCIIEND")
"""Keywords opening and closing a block whose lines are skipped whatever they start with."""


@dataclass(frozen=True)
class SystemFile:
    """A system read from a file, and where its unknowns sit among the file's columns.

    Attributes
    ----------
    system : System
        The system to decide: one unknown per column that can be nonzero
        (0/1, or bounded integers when a bound exceeds 1).
    columns : tuple of int
        The file's column (counted from 0) of each unknown of ``system``.
    width : int
        The number of columns of the file's solutions; columns not in
        ``columns`` (not selected, or bound 0) are 0 in every solution.
    free_rhs : bool
        ``% FREERHS``: the file asks for ``A x = λ b`` with any integer λ ≠ 0.
    """

    system: System
    columns: tuple[int, ...]
    width: int
    free_rhs: bool = False

    def vector(self, solution) -> list[int]:
        """The file's solution vector for a solution of ``system`` (a support, or values)."""
        z = [0] * self.width
        for i, value in enumerate(self.system.values(solution)):
            z[self.columns[i]] = value
        return z


def load_system(path) -> System:
    """Read a system (0/1 or bounded integers) from a solvediophant / QOBLIB text file or an ``.npz``.

    The unknowns are the columns that can be 1 (see :func:`load_system_file`
    for where they sit among the file's columns).

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
    return load_system_file(path).system


def load_system_file(path) -> SystemFile:
    """Read a system file: the system and the map of its unknowns to the file's columns.

    Parameters
    ----------
    path : str or os.PathLike

    Returns
    -------
    SystemFile

    Raises
    ------
    InputError
        Missing or unreadable file, unknown format, malformed content.
    """
    path = os.fspath(path)
    if not os.path.isfile(path):
        raise InputError(path, "no such file")
    try:
        with open(path, "rb") as handle:
            data = handle.read()
    except OSError as exc:
        raise InputError(path, f"cannot read the file: {exc}") from None
    if path.endswith(".npz") or data.startswith(ZIP_MAGIC):
        A, b, upper = _read_npz(path)
        system = plain_system(A, b, upper)
        return SystemFile(system, tuple(range(system.n)), system.n)
    # latin-1 decodes every byte: binary junk then fails as a malformed header, and the
    # skipped sections of Kramer–Mesner files may hold any byte.
    return _Text(path, data.decode("latin-1").splitlines()).read()


class _Text:
    """solvediophant's text format, read line by line (line numbers in messages count from 1)."""

    def __init__(self, path: str, lines: list[str]) -> None:
        self.path = path
        self.lines = lines
        self.at = 0  # index of the next line to read

    def fail(self, problem: str, line: int | None = None) -> NoReturn:
        raise InputError(self.path, problem if line is None else f"line {line + 1}: {problem}")

    def read(self) -> SystemFile:
        m, n = self._header()
        A, b = self._rows(m, n)
        bounds, selected = self._sections(m, n)
        return self._system(A, b, bounds, selected)

    def _header(self) -> tuple[int, int]:
        self.free_rhs = False
        for index, line in enumerate(self.lines):
            if "% FREERHS" in line:  # solvediophant looks for the directive anywhere in a line before the header
                self.free_rhs = True
            if _is_comment(line):
                continue
            self.at = index + 1
            tokens = line.split()
            shape = "expected the header 'm n' or 'm n 1' (rows, columns, and 1 for the right-hand side)"
            if len(tokens) not in (2, 3) or not all(_is_int(t) for t in tokens):
                self.fail(f"{shape}, found {line.strip()[:40]!r}", index)
            numbers = [int(t) for t in tokens]
            if len(numbers) == 3 and numbers[2] != 1:
                self.fail(f"{shape}: the third number must be 1, found {numbers[2]}", index)
            if numbers[0] < 1 or numbers[1] < 1:
                self.fail(f"{shape}: m and n must be positive, found {numbers[0]} and {numbers[1]}", index)
            return numbers[0], numbers[1]
        self.fail("empty system file: expected the header 'm n' or 'm n 1'")

    def _rows(self, m: int, n: int) -> tuple[list, list]:
        """m rows of n coefficients and a right-hand side; refuses numbers straight after them."""
        width, A, b, row = n + 1, [], [], []
        while len(A) < m:
            if self.at >= len(self.lines):
                self.fail(f"the file ends in row {len(A) + 1} of {m}: each row is {n} coefficients and a right-hand side")
            index, line = self.at, self.lines[self.at]
            self.at += 1
            if _is_comment(line):
                continue
            row += self._integers(line, index, f"row {len(A) + 1} of {m}")
            if len(row) > width:
                self.fail(f"row {len(A) + 1} has more than the header's {n} coefficients and a right-hand side "
                          "(a row may wrap onto further lines, but each row starts on a line of its own)", index)
            if len(row) == width:
                A.append(row[:n])
                b.append(row[n])
                row = []
        return A, b

    def _integers(self, line: str, index: int, where: str) -> list[int]:
        tokens = line.split()
        if "_" not in line:  # int() would read 1_000
            try:
                return [int(token) for token in tokens]
            except ValueError:
                pass
        bad = next(token for token in tokens if not _is_int(token))
        self.fail(f"{bad[:20]!r} in {where} is not an integer", index)

    def _sections(self, m: int, n: int) -> tuple[list | None, list | None]:
        """BOUNDS and SELECTEDCOLUMNS after the rows; other sections are skipped."""
        found, keyword = {}, None
        while self.at < len(self.lines):
            index, line = self.at, self.lines[self.at]
            self.at += 1
            tokens = line.split()
            if not tokens or _is_comment(line):
                continue
            if not tokens[0][0].isalpha():
                if keyword is None:
                    self.fail(f"numbers after the {m} rows the header announces: check its m "
                              "(a section after the rows starts with its keyword, such as BOUNDS)", index)
                continue  # left over in a section, as solvediophant leaves them
            keyword = tokens[0]
            if keyword in found:
                self.fail(f"a second {keyword} section", index)
            if keyword == "BOUNDS":
                found[keyword] = self._bounds(tokens, n, index)
            elif keyword == "SELECTEDCOLUMNS":
                found[keyword] = self._selection(tokens, index)
            elif keyword == _SKIPPED_BLOCK[0]:
                self._skip_block()
            elif "BOUNDS" in line or "SELECTEDCOLUMNS" in line:  # solvediophant would read such a line as the section
                self.fail(f"a line starting {keyword[:30]!r} names BOUNDS or SELECTEDCOLUMNS; each section starts with its keyword", index)
        return found.get("BOUNDS"), found.get("SELECTEDCOLUMNS")

    def _bounds(self, tokens: list[str], n: int, index: int) -> list[int]:
        if len(tokens) != 2 or not _is_int(tokens[1]):
            self.fail("expected 'BOUNDS k' with k the number of bounds that follow", index)
        count = int(tokens[1])
        if count != n:
            self.fail(f"BOUNDS {count}: one bound per column is needed ({n}); solvediophant itself treats columns "
                      "without a bound inconsistently (its preprocessing as 0, its lattice as 0/1)", index)
        numbers = self._numbers("BOUNDS")
        bounds = [next(numbers) for _ in range(count)]
        for column, bound in enumerate(bounds):
            if bound < 0:
                self.fail(f"BOUNDS: column {column} (counted from 0) has the negative bound {bound}; bounds are upper ends of 0 ≤ x ≤ u", index)
        return bounds

    def _selection(self, tokens: list[str], index: int) -> list[int]:
        if len(tokens) != 1:
            self.fail("expected SELECTEDCOLUMNS alone on its line, then the count N and N flags", index)
        numbers = self._numbers("SELECTEDCOLUMNS")
        count = next(numbers)
        if count < 1:
            self.fail(f"SELECTEDCOLUMNS: the count must be positive, found {count}", index)
        flags = [next(numbers) for _ in range(count)]
        if any(flag not in (0, 1) for flag in flags):
            self.fail("SELECTEDCOLUMNS: every flag must be 0 or 1", index)
        return flags

    def _numbers(self, section: str):
        """The integers of a section, across lines; what is left of the line where the reader stops is left over."""
        while True:
            if self.at >= len(self.lines):
                self.fail(f"{section}: the file ends before all of its numbers")
            index, line = self.at, self.lines[self.at]
            tokens = line.split()
            if tokens and tokens[0][0].isalpha():
                self.fail(f"{section}: the next section starts before all of its numbers", index)
            self.at += 1
            if _is_comment(line):
                continue
            yield from self._integers(line, index, section)

    def _skip_block(self) -> None:
        """Skip an ``ASCII`` … ``ASCIIEND`` block (its lines may start with anything)."""
        while self.at < len(self.lines):
            line = self.lines[self.at]
            self.at += 1
            if line.split()[:1] == [_SKIPPED_BLOCK[1]]:
                return

    def _system(self, A: list, b: list, bounds: list | None, selected: list | None) -> SystemFile:
        n = len(A[0])
        if selected is None:
            selected = [1] * n
        positions = [column for column, flag in enumerate(selected) if flag]
        if len(positions) != n:
            self.fail(f"SELECTEDCOLUMNS flags {len(positions)} columns, but the rows have {n}")
        keep = [j for j in range(n) if bounds is None or bounds[j] > 0]
        if not keep:
            self.fail("every bound is 0: no unknown is left to decide")
        if len(keep) < n:
            A = [[row[j] for j in keep] for row in A]
        # The entries are Python ints already: plain_system's conversion of each would only cost time.
        M = np.empty((len(A), len(keep)), dtype=object)
        M[:] = A
        upper = None if bounds is None else bounded([bounds[j] for j in keep])
        system = System(M, np.array(b, dtype=object), None, list(range(len(b))), upper=upper)
        if self.free_rhs and not any(b):
            self.fail("'% FREERHS' with b = 0: every multiple λ·b is 0, so λ is not determined; without the directive the file asks for A x = 0")
        return SystemFile(system, tuple(positions[j] for j in keep), len(selected), self.free_rhs)


def _is_comment(line: str) -> bool:
    stripped = line.lstrip()
    return not stripped or stripped[0] in "%#"


def _is_int(token: str) -> bool:
    digits = token[1:] if token[:1] in "+-" else token
    return digits.isascii() and digits.isdigit()


def _read_npz(path: str) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """``.npz`` with integer ``A`` (m × n), ``b`` (m,) and optionally ``upper`` (n,)."""
    try:
        with np.load(path, allow_pickle=False) as data:
            missing = [key for key in ("A", "b") if key not in data.files]
            if missing:
                raise InputError(path, f"missing array(s) {', '.join(missing)}: a system file needs A (m × n) and b (m)")
            A, b = data["A"], data["b"]
            upper = data["upper"] if "upper" in data.files else None
    except InputError:
        raise
    except (OSError, ValueError, zipfile.BadZipFile, EOFError) as exc:
        raise InputError(path, f"cannot read the .npz archive: {exc}") from None
    A, b = _integral(path, "A", A), _integral(path, "b", b)
    if A.ndim != 2:
        raise InputError(path, f"A must be a 2-D array, got shape {A.shape}")
    if b.ndim != 1 or b.shape[0] != A.shape[0]:
        raise InputError(path, f"b must have shape ({A.shape[0]},) to match A {A.shape}, got {b.shape}")
    if upper is not None:
        upper = _integral(path, "upper", upper)
        if upper.shape != (A.shape[1],):
            raise InputError(path, f"upper must have shape ({A.shape[1]},) to match A {A.shape}, got {upper.shape}")
        if any(int(u) < 0 for u in upper):
            raise InputError(path, "upper must hold nonnegative bounds (0 ≤ x_j ≤ upper[j])")
    return A, b, upper


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
