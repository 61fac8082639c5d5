"""indexset: decide, with proof, whether an MLP block absorbs its skip connection.

Main entry points::

    from indexset import Instance, solve, verify, witness
    inst = Instance.load("instances/planted_d2_n12.npz")
    result = solve(inst)          # Result: status, class, index_set, reason, ...

Imports are lazy: ``import indexset`` loads neither numpy-heavy solvers nor
OR-Tools, so the command line starts fast.
"""

from __future__ import annotations

import importlib
import sys
from pathlib import Path

__version__ = "0.1.0"

_EXPORTS = {  # public name: (module, attribute; None for the module itself)
    "InputError": ("indexset.errors", "InputError"),
    "Result": ("indexset.result", "Result"),
    "Instance": ("indexset.model.instance", "Instance"),
    "Stack": ("indexset.model.stack", "Stack"),
    "load": ("indexset.model.loading", "load_any"),
    "Verification": ("indexset.exact.verify", "Verification"),
    "verify": ("indexset.exact.verify", "verify"),
    "witness": ("indexset.exact.witness", "witness"),
    "check_forward": ("indexset.exact.witness", "check_forward"),
    "pwl": ("indexset.exact.pwl", None),
    "solve": ("indexset.solver", "solve"),
    "construct": ("indexset.workflows.construct", None),
    "scan": ("indexset.large.scan", "scan"),
}
__all__ = sorted(_EXPORTS)


def __getattr__(name: str):
    if name not in _EXPORTS:
        raise AttributeError(f"module 'indexset' has no attribute {name!r}")
    module_name, attribute = _EXPORTS[name]
    module = importlib.import_module(module_name)
    value = module if attribute is None else getattr(module, attribute)
    globals()[name] = value
    return value


class _CheckoutKernels:
    """Finds ``indexset.native`` in the top-level ``native/`` folder of a source checkout.

    An installation puts the Numba kernels at ``indexset/native``; run from
    the repository root (``python -m pytest``), the package is the source
    folder, where they sit beside it instead. A meta path finder by its
    ``find_spec`` alone: importing ``importlib.abc`` would cost a noticeable
    share of a small search's process.
    """

    def __init__(self, folder: Path) -> None:
        self.folder = folder

    def find_spec(self, name, path=None, target=None):
        if name != "indexset.native":
            return None
        import importlib.util

        return importlib.util.spec_from_file_location(name, self.folder / "__init__.py", submodule_search_locations=[str(self.folder)])


_here = Path(__file__).resolve().parent
if not (_here / "native").is_dir() and (_here.parent / "native" / "__init__.py").is_file():
    # First: an editable installation's finder maps ``indexset.native`` to its own checkout, and
    # this package may be another checkout (an older commit on PYTHONPATH, paired against it).
    sys.meta_path.insert(0, _CheckoutKernels(_here.parent / "native"))
