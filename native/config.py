"""The one place where Numba flags are set for every kernel.

Kernels compile (or load from Numba's cache) at their first call, not at
import: importing Numba and initialising its CPU target costs more than a
whole small search, which can run a kernel's Python source
(:attr:`Kernel.py_func`) or a NumPy path instead and never load Numba.
"""

from __future__ import annotations

import functools
import sys
import threading

JIT_OPTIONS = {"cache": True, "nogil": True, "boundscheck": False}
"""Options of every ``@njit`` kernel: compiled once, cached on disk, GIL released
so CP-SAT and an enumeration kernel can run side by side in threads."""

REORDERED_SUMS = {"fastmath": {"reassoc", "nsz"}}
"""Extra options of a kernel declared with ``reorder_sums=True``: LLVM may
reassociate its float additions (so a sum vectorises) and ignore the sign of
zero; NaN and infinity keep their IEEE meaning. Only kernels whose float
results have a proved error bound in any order (MATH.md §6.1) take them."""

_COMPILING = threading.Lock()


class Kernel:
    """A Numba kernel that imports Numba at its first call.

    Parameters
    ----------
    function : callable
        The kernel's Python source, kept as :attr:`py_func` (as on a Numba
        dispatcher).

    Notes
    -----
    The first call turns every kernel of the function's module into a
    Numba dispatcher and rebinds the module's names to them, so a kernel
    that calls another of its module is typed against a dispatcher, as
    under a plain ``@njit``. A kernel may call only kernels of its own
    module: another module's names are not rebound, and Numba's cache keys
    a compiled kernel by its own file only, so one compiled against a
    kernel of another file would be reloaded stale once that file changed.
    """

    def __init__(self, function, options: dict | None = None) -> None:
        self.py_func = function
        self.options = {**JIT_OPTIONS, **(options or {})}
        self.dispatcher = None
        functools.update_wrapper(self, function)

    def __call__(self, *args):
        if self.dispatcher is None:
            _compile_module(self.py_func.__globals__)
        return self.dispatcher(*args)


def _compile_module(namespace: dict) -> None:
    """Replace every :class:`Kernel` in a module's namespace by its Numba dispatcher."""
    with _COMPILING:  # enumeration workers may make their first calls at once
        numba = _import_numba()
        from numba.extending import intrinsic

        # Intrinsics first: the kernels that call them are typed against them.
        namespace.update({name: intrinsic(value.typer) for name, value in namespace.items() if isinstance(value, Intrinsic)})
        kernels = {name: value for name, value in namespace.items() if isinstance(value, Kernel) and value.dispatcher is None}
        dispatchers = {name: numba.njit(**value.options)(value.py_func) for name, value in kernels.items()}
        namespace.update(dispatchers)
        # Set last: a thread that sees a dispatcher (without the lock) sees every name rebound.
        for name, value in kernels.items():
            value.dispatcher = dispatchers[name]


class Intrinsic:
    """A kernel written as LLVM IR (a Numba ``@intrinsic``), built at its module's first compile.

    Parameters
    ----------
    typer : callable
        ``typer(typingctx, *argument_types) -> (signature, codegen)``, as
        ``numba.extending.intrinsic`` takes it; it imports Numba and
        llvmlite itself, so defining one loads neither.

    Notes
    -----
    The first call of any kernel of the module replaces the name by the
    Numba intrinsic, which only compiled kernels can call. It must live
    in the file of the kernels that call it: Numba's cache keys a kernel by
    its own file, so an intrinsic changed in another file would leave them
    stale.
    """

    def __init__(self, typer) -> None:
        self.typer = typer
        functools.update_wrapper(self, typer)


def intrinsic_kernel(typer) -> Intrinsic:
    """Declare ``typer`` an indexset intrinsic (see :class:`Intrinsic`)."""
    return Intrinsic(typer)


def kernel(function=None, *, reorder_sums: bool = False, inline: bool = False):
    """Declare ``function`` an indexset kernel, compiled with the shared options at its first call.

    Used bare (``@kernel``) or with ``reorder_sums=True``, which adds
    :data:`REORDERED_SUMS`, or ``inline=True``: Numba inlines it into
    every kernel that calls it (``inline="always"``), so a hot loop pays
    no call for it.
    """
    options = dict(REORDERED_SUMS if reorder_sums else {}, **({"inline": "always"} if inline else {})) or None
    if function is None:
        return lambda f: Kernel(f, options)
    return Kernel(function, options)


def is_loaded(function) -> bool:
    """Whether calling the kernel ``function`` no longer imports Numba (its module's kernels are dispatchers)."""
    return not isinstance(function, Kernel) or function.dispatcher is not None


def _import_numba():
    """Numba, its array-math registry loaded without importing SciPy's linear algebra.

    At its first compile or cache load Numba imports ``numba.np.arraymath``,
    which calls ``numba.np.linalg.ensure_blas`` once, only to choose how it
    compiles ``np.correlate`` and ``np.convolve`` (BLAS, or its own loop,
    equal up to rounding); that imports all of ``scipy.linalg``, a large
    share of the kernels' load. No kernel calls either, so
    that one import runs with Numba's ``ensure_blas`` swapped for one that
    reports BLAS missing, and the original is put back straight after, in
    both modules: Numba's linear algebra, which calls it again when it
    compiles, finds SciPy as usual, and nothing outside Numba sees the
    swap (a process's own Numba ``np.correlate`` then uses the loop).
    Called under :data:`_COMPILING`.
    """
    import numba

    if "numba.np.arraymath" not in sys.modules:
        import numba.np.linalg as linalg

        ensure_blas = linalg.ensure_blas
        linalg.ensure_blas = _no_blas
        try:
            import numba.np.arraymath as arraymath
        finally:
            linalg.ensure_blas = ensure_blas
        arraymath.ensure_blas = ensure_blas
    return numba


def _no_blas() -> None:
    raise ImportError("SciPy's BLAS is not looked for while indexset loads its kernels")
