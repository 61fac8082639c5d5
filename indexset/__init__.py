"""indexset: decide, with proof, whether an MLP block absorbs its skip connection.

Main entry points::

    from indexset import Instance, verify, witness, solve
    inst = Instance.load("instances/planted_d2_n12.npz")
    result = solve(inst)          # Result: status, index_set, reason, ...
"""

from indexset.errors import InputError
from indexset.exact.verify import Verification, verify
from indexset.exact.witness import check_forward, witness
from indexset.model.instance import Instance
from indexset.result import Result

__all__ = ["InputError", "Instance", "Result", "Verification", "check_forward", "solve", "verify", "witness"]
__version__ = "0.1.0"


def solve(instance, **options):
    """Decide whether ``instance`` absorbs its skip; see :func:`indexset.solver.solve`."""
    from indexset.solver import solve as _solve

    return _solve(instance, **options)
