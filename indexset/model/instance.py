"""The :class:`Instance` type: one MLP block, validated, with exact values.

File format (``.npz``, always read with ``allow_pickle=False``):

========== ========= =====================================================
key        shape     meaning
========== ========= =====================================================
W_up       (n, d)    up projection (value projection of a gated block)
W_down     (d, n)    down projection
skip       (d, d)    skip matrix A, default identity; must be invertible
b_up       (n,)      up bias, default zero
b_down     (d,)      down bias, default zero
W_gate     (n, d)    gate projection, gated activations only
activation ()        activation name, default ``relu``
denominator ()       positive integer: every weight array above holds
                     numerators over it (the default identity skip is the
                     true identity)
block      ()        ``residual_free`` marks a block with no skip (witness
                     files); absent for skip-connected blocks
========== ========= =====================================================

Integer arrays are exact; float arrays are taken at their exact binary value.
Every other key is metadata: kept and saved back, never read by a solver.
"""

from __future__ import annotations

import json
import os
import zipfile
from dataclasses import dataclass, field
from fractions import Fraction
from functools import cached_property

import flint
import numpy as np

import indexset.model.activations as activations
from indexset.errors import InputError
from indexset.model.files import atomic_write
from indexset.rational import fmpz_matrix, integer_numerators

WEIGHT_KEYS = ("W_up", "W_down", "skip", "b_up", "b_down", "W_gate")
CONTROL_KEYS = ("activation", "denominator", "block")
RESIDUAL_FREE = "residual_free"
FIXED_ZIP_TIME = (1980, 1, 1, 0, 0, 0)


@dataclass(eq=False)
class Instance:
    """One MLP block ``f(x) = A x + W_down σ(W_up x + b_up) + b_down``.

    Arrays are stored as given (integer or float numpy arrays); every value
    is ``array / denominator`` exactly. Construction validates everything and
    raises :class:`~indexset.errors.InputError` with ``source`` in the message.

    Parameters
    ----------
    W_up, W_down : ndarray
        Shapes (n, d) and (d, n).
    skip : ndarray, optional
        (d, d) invertible skip matrix; ``None`` means the identity.
    b_up, b_down : ndarray, optional
        Biases; ``None`` means zero.
    activation : str
        Activation name (see :mod:`indexset.model.activations`).
    W_gate : ndarray, optional
        (n, d) gate projection for gated activations.
    denominator : int
        Common denominator of every weight array.
    residual_free : bool
        True for a block with no skip (``skip`` must then be ``None``).
    metadata : dict
        Extra keys, kept verbatim.
    source : str
        Where the instance came from, for error messages.
    """

    W_up: np.ndarray
    W_down: np.ndarray
    skip: np.ndarray | None = None
    b_up: np.ndarray | None = None
    b_down: np.ndarray | None = None
    activation: str = "relu"
    W_gate: np.ndarray | None = None
    denominator: int = 1
    residual_free: bool = False
    metadata: dict = field(default_factory=dict)
    source: str = "<memory>"

    def __post_init__(self) -> None:
        self.act = activations.get(self.activation, self.source)
        self.activation = self.act.name
        self._validate()

    # ------------------------------------------------------------------ shape
    @property
    def n(self) -> int:
        """Width: number of hidden units."""
        return int(self.W_up.shape[0])

    @property
    def d(self) -> int:
        """Model dimension."""
        return int(self.W_up.shape[1])

    def _fail(self, problem: str) -> None:
        raise InputError(self.source, problem)

    def _validate(self) -> None:
        if not isinstance(self.denominator, (int, np.integer)) or int(self.denominator) < 1:
            self._fail(f"denominator must be a positive integer, got {self.denominator!r}")
        self.denominator = int(self.denominator)
        self.W_up = self._numeric("W_up", self.W_up, 2)
        self.W_down = self._numeric("W_down", self.W_down, 2)
        for key, ndim in (("b_up", 1), ("b_down", 1), ("W_gate", 2), ("skip", 2)):
            value = getattr(self, key)
            if value is not None:
                setattr(self, key, self._numeric(key, value, ndim))
        n, d = self._width_and_dimension()
        if n == 0 or d == 0:
            self._fail(f"W_up has shape {self.W_up.shape}: width n and dimension d must be ≥ 1")
        for key in ("W_up", "W_down", "b_up", "b_down", "W_gate", "skip"):
            value = getattr(self, key)
            if value is not None and value.shape != _expected_shape(key, n, d):
                self._fail(_shape_problem(key, value.shape, n, d))
        if self.act.gated and self.W_gate is None:
            self._fail(f"activation {self.activation} is gated and needs a W_gate array of shape ({n}, {d})")
        if not self.act.gated and self.W_gate is not None:
            self._fail(f"W_gate given but activation {self.activation} is not gated")
        if self.residual_free and self.skip is not None:
            self._fail("a residual-free block (block = residual_free) cannot carry a skip")
        if self.skip is not None and not self._skip_invertible():
            self._fail(
                "skip matrix is singular: the reduction to the identity skip (MATH.md §3) "
                "needs an invertible A"
            )

    def _width_and_dimension(self) -> tuple[int, int]:
        """(n, d) as most arrays say: W_up's shape unless W_down and the others outvote it.

        A transposed W_up or W_down makes the two disagree; the optional
        arrays break the tie, and without them n ≥ d (needed for |S| ≥ d)
        decides, so the message can name the array that is wrong.
        """
        candidates = [tuple(self.W_up.shape), tuple(reversed(self.W_down.shape))]

        def votes(candidate) -> tuple[int, bool]:
            n, d = candidate
            present = [key for key in WEIGHT_KEYS if getattr(self, key) is not None]
            agreeing = sum(getattr(self, key).shape == _expected_shape(key, n, d) for key in present)
            return agreeing, n >= d

        return max(candidates, key=votes)  # max keeps the first (W_up's) on a full tie

    def _numeric(self, key, value, ndim) -> np.ndarray:
        array = np.asarray(value)
        if array.dtype.kind == "O":
            self._fail(f"array {key} holds Python objects; only integer or float arrays are accepted")
        if array.dtype.kind not in "iuf":
            self._fail(f"array {key} has dtype {array.dtype}; expected integers or floats")
        if array.ndim != ndim:
            self._fail(f"array {key} has shape {array.shape}, expected a {ndim}-D array of shape {_SHAPE_NAMES[key]}")
        if array.dtype.kind == "f":
            if not np.isfinite(array).all():
                self._fail(f"array {key} contains NaN or Inf")
            if array.dtype.itemsize > 8:
                self._fail(f"array {key} has dtype {array.dtype}; use float64 or narrower")
        return array

    def _skip_invertible(self) -> bool:
        numerators, _ = integer_numerators(self.skip)
        return fmpz_matrix(numerators).rank() == self.d

    # ------------------------------------------------------------ exact data
    def exact(self, key: str) -> tuple[np.ndarray, int]:
        """Exact value of a weight array as integer numerators over one denominator.

        Parameters
        ----------
        key : str
            One of ``W_up``, ``W_down``, ``skip``, ``b_up``, ``b_down``,
            ``W_gate``. Missing optional arrays give their default (identity
            skip, zero biases).

        Returns
        -------
        numerators : ndarray of object
        den : int
        """
        return self._exact_cache[key]

    @cached_property
    def _exact_cache(self) -> dict:
        cache = {}
        for key in WEIGHT_KEYS:
            value = getattr(self, key)
            if value is not None:
                cache[key] = integer_numerators(value, self.denominator)
        if "skip" not in cache:
            if self.residual_free:
                cache["skip"] = (np.zeros((self.d, self.d), dtype=object), 1)
            else:
                cache["skip"] = (np.eye(self.d, dtype=np.int64).astype(object), 1)
        cache.setdefault("b_up", (np.zeros(self.n, dtype=object), 1))
        cache.setdefault("b_down", (np.zeros(self.d, dtype=object), 1))
        return cache

    def exact_fraction_matrix(self, key: str) -> flint.fmpq_mat:
        """Exact value of a 2-D weight array as a python-flint rational matrix."""
        numerators, den = self.exact(key)
        return flint.fmpq_mat(fmpz_matrix(numerators)) / den

    def float_array(self, key: str) -> np.ndarray:
        """A weight array as float64 values (for forward checks and plots)."""
        value = getattr(self, key)
        if value is None:
            numerators, den = self.exact(key)
            return numerators.astype(np.float64) / den
        return np.asarray(value, dtype=np.float64) / self.denominator

    @property
    def has_biases(self) -> bool:
        """Whether any bias is present and nonzero."""
        return any(
            getattr(self, key) is not None and np.any(getattr(self, key) != 0)
            for key in ("b_up", "b_down")
        )

    @property
    def identity_skip(self) -> bool:
        """Whether the skip is exactly the identity."""
        numerators, den = self.exact("skip")
        return not self.residual_free and all(
            int(numerators[i, j]) == (den if i == j else 0)
            for i in range(self.d)
            for j in range(self.d)
        )

    @property
    def planted(self) -> list[int] | None:
        """The planted index set stored as metadata by the constructor, if any.

        Solvers never read this; tests and benchmarks do.
        """
        value = self.metadata.get("planted_S")
        return None if value is None else [int(i) for i in np.asarray(value).ravel()]

    # -------------------------------------------------------------- file I/O
    @classmethod
    def load(cls, path: str | os.PathLike) -> Instance:
        """Read and validate an instance file.

        Raises
        ------
        InputError
            For a missing or unreadable file, a file that is not an npz
            archive, pickled object arrays, missing keys, bad shapes,
            NaN/Inf, a singular skip or an unknown activation.
        """
        source = str(path)
        arrays = read_npz(source)
        for key in ("W_up", "W_down"):
            if key not in arrays:
                raise InputError(source, f"missing required array {key}")
        activation = _scalar_string(arrays, "activation", "relu", source)
        block = _scalar_string(arrays, "block", "", source)
        if block not in ("", RESIDUAL_FREE):
            raise InputError(source, f"block must be {RESIDUAL_FREE!r} when given, got {block!r}")
        denominator = _denominator(arrays, source)
        metadata = {k: v for k, v in arrays.items() if k not in WEIGHT_KEYS + CONTROL_KEYS}
        return cls(
            **{key: arrays.get(key) for key in WEIGHT_KEYS},
            activation=activation,
            denominator=denominator,
            residual_free=block == RESIDUAL_FREE,
            metadata=metadata,
            source=source,
        )

    def to_arrays(self) -> dict[str, np.ndarray]:
        """Every key this instance writes to its file."""
        out = {key: getattr(self, key) for key in WEIGHT_KEYS if getattr(self, key) is not None}
        out["activation"] = np.array(self.activation)
        if self.denominator != 1:
            out["denominator"] = np.array(self.denominator, dtype=np.int64)
        if self.residual_free:
            out["block"] = np.array(RESIDUAL_FREE)
        for key, value in self.metadata.items():
            out[key] = np.array(json.dumps(value)) if isinstance(value, dict) else np.asarray(value)
        return out

    def save(self, path: str | os.PathLike) -> None:
        """Write the instance to ``path`` atomically (no half-written file)."""
        write_npz(path, self.to_arrays())

    @classmethod
    def from_torch(cls, up, down, activation="relu", gate=None, skip=None, **options) -> Instance:
        """The block ``x + down(σ(up(x)))`` of PyTorch layers, weights exact: see :func:`indexset.model.torch_io.block_arrays`."""
        from indexset.model.torch_io import block_arrays  # torch objects are read only when given

        return cls(**block_arrays(up, down, activation, gate, skip, **options))

    def to_torch(self, kind: str = "sequential", strict: bool = False):
        """This residual-free block as a float64 PyTorch module or state dict: see :func:`indexset.model.torch_io.to_torch`."""
        from indexset.model.torch_io import to_torch  # imports torch: only when asked for

        return to_torch(self, kind, strict)

    def with_source(self, source: str) -> Instance:
        """Same instance, reporting errors against another source name."""
        self.source = source
        return self


_SHAPE_NAMES = {"W_up": "(n, d)", "W_down": "(d, n)", "skip": "(d, d)", "b_up": "(n,)", "b_down": "(d,)", "W_gate": "(n, d)"}
"""Each weight array's shape in the symbols of the file format."""


def _expected_shape(key: str, n: int, d: int) -> tuple:
    return {"W_up": (n, d), "W_down": (d, n), "skip": (d, d), "b_up": (n,), "b_down": (d,), "W_gate": (n, d)}[key]


def _shape_problem(key: str, shape: tuple, n: int, d: int) -> str:
    """One line naming the wrong array, its shape in symbols when it is a transpose, and the expected shape."""
    expected = _expected_shape(key, n, d)
    want = f"expected {_SHAPE_NAMES[key]} = {expected}"
    if len(shape) == 2 and shape == expected[::-1] and shape[0] != shape[1]:
        symbols = _SHAPE_NAMES[key][1:-1].split(", ")
        return f"{key} has shape ({symbols[1]}, {symbols[0]}) = {shape}, {want}: transposed?"
    return f"{key} has shape {shape}, {want} (n = {n}, d = {d})"


def read_npz(source: str) -> dict[str, np.ndarray]:
    """Read every array of an npz archive without pickle.

    Raises
    ------
    InputError
        Missing file, not an npz archive, or an array that needs pickle.
    """
    if not os.path.exists(source):
        raise InputError(source, "no such file")
    if os.path.isdir(source):
        raise InputError(source, "is a folder, expected an .npz file")
    try:
        loaded = np.load(source, allow_pickle=False)
        if not isinstance(loaded, np.lib.npyio.NpzFile):
            raise InputError(source, "is a single .npy array, not an .npz archive of named arrays")
        with loaded as archive:
            keys = list(archive.files)
            out = {}
            for key in keys:
                try:
                    out[key] = archive[key]
                except ValueError as exc:
                    if "allow_pickle" in str(exc):
                        raise InputError(
                            source, f"array {key} is a pickled object array (refused: files are read without pickle)"
                        ) from None
                    raise InputError(source, f"array {key} is unreadable: {exc}") from None
    except InputError:
        raise
    except Exception as exc:
        raise InputError(source, f"not a readable .npz archive ({type(exc).__name__})") from None
    return out


def write_npz(path: str | os.PathLike, arrays: dict[str, np.ndarray]) -> None:
    """Write an npz archive atomically (see :func:`indexset.model.files.atomic_write`)."""

    def write(stream) -> None:
        # Written member by member (as np.savez does) so that any key works,
        # including ones np.savez would take as its own arguments ("file",
        # "allow_pickle"), and so that nothing is ever pickled.
        with zipfile.ZipFile(stream, "w", allowZip64=True) as archive:
            for key, value in arrays.items():
                # A fixed timestamp: the same instance always gives the same bytes.
                info = zipfile.ZipInfo(f"{key}.npy", date_time=FIXED_ZIP_TIME)
                info.external_attr = 0o644 << 16
                with archive.open(info, "w", force_zip64=True) as member:
                    np.lib.format.write_array(member, np.asanyarray(value), allow_pickle=False)

    atomic_write(path, write, ".npz")


def _scalar_string(arrays, key, default, source) -> str:
    if key not in arrays:
        return default
    value = arrays[key]
    if value.ndim != 0 or value.dtype.kind not in "US":
        raise InputError(source, f"{key} must be a 0-d string array, got dtype {value.dtype} shape {value.shape}")
    text = value.item()
    if isinstance(text, bytes):
        try:
            return text.decode()
        except UnicodeDecodeError:
            raise InputError(source, f"{key} is not a UTF-8 string: {text!r}") from None
    return str(text)


def _denominator(arrays, source) -> int:
    if "denominator" not in arrays:
        return 1
    value = arrays["denominator"]
    if value.ndim != 0 or value.dtype.kind not in "iu" or int(value) < 1:
        raise InputError(source, "denominator must be a positive 0-d integer array")
    return int(value)


def exact_value(instance: Instance, key: str) -> np.ndarray:
    """A weight array of an instance as an object array of Fractions."""
    numerators, den = instance.exact(key)
    out = np.empty(numerators.shape, dtype=object)
    for index, value in np.ndenumerate(numerators):
        out[index] = Fraction(int(value), den)
    return out
