"""The names the workflows accept (families, skips, methods), importable without their machinery.

The command line builds its parsers from these before any numerical
library is imported.
"""

from __future__ import annotations

FAMILIES = ("planted", "random", "float_planted", "degenerate", "hard", "gated", "homogeneous", "stack")
"""Instance families of :mod:`indexset.workflows.construct`."""

SKIPS = ("identity", "unimodular", "permutation", "mhc")
DEGENERACIES = ("duplicate", "collinear", "zero_row", "zero_column", "dimension_one")
DTYPES = ("int", "float")

BENCH_METHODS = ("pipeline", "cpsat-plain", "milp", "brute", "no-prune", "no-lattice")
"""Methods of :mod:`indexset.workflows.bench`."""

BENCH_FAMILIES = ("planted", "random", "hard")
