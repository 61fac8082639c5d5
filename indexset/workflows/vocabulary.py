"""The names the workflows accept (families, skips, methods), importable without their machinery.

The command line builds its parsers from these before any numerical
library is imported.
"""

from __future__ import annotations

SKIPS = ("identity", "unimodular", "permutation", "mhc")
DEGENERACIES = ("duplicate", "collinear", "zero_row", "zero_column", "dimension_one")
DTYPES = ("int", "float")

BENCH_METHODS = ("pipeline", "cpsat-plain", "milp", "brute", "no-prune", "no-lattice")
"""Methods of :mod:`indexset.workflows.bench`."""

BENCH_FAMILIES = ("planted", "random", "hard", "low_precision")
