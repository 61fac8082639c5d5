"""Numba kernels of indexset (installed as ``indexset.native``).

Kernels take arrays and scalars only; validation lives in the Python
wrappers under :mod:`indexset`. Every Numba flag is set in :mod:`.config`.
"""
