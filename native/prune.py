"""Pruning kernels: interval bound propagation on integer 0/1 systems.

Arrays and scalars in, arrays out; the caller guarantees int64 cannot
overflow (every |row sum| < 2^62) and validates shapes.
"""

from __future__ import annotations

from .config import kernel


@kernel
def propagate_bounds(M, low, high, fixed):
    """Fix variables forced by the row intervals ``low ≤ M z ≤ high``.

    Parameters
    ----------
    M : int64[:, :]
        Coefficients (m × n).
    low, high : int64[:]
        Row bounds (equal for an equation).
    fixed : int8[:]
        −1 for a free variable, else its value; updated in place.

    Returns
    -------
    int
        −1 when some row cannot be met (infeasible), else the number of
        variables newly fixed.
    """
    m, n = M.shape
    newly = 0
    changed = True
    while changed:
        changed = False
        for r in range(m):
            lo_sum = 0
            hi_sum = 0
            for i in range(n):
                a = M[r, i]
                if fixed[i] >= 0:
                    lo_sum += a * fixed[i]
                    hi_sum += a * fixed[i]
                elif a > 0:
                    hi_sum += a
                else:
                    lo_sum += a
            if lo_sum > high[r] or hi_sum < low[r]:
                return -1
            for i in range(n):
                a = M[r, i]
                if fixed[i] >= 0 or a == 0:
                    continue
                # Range of the row if z_i is set to 1 (resp. 0).
                lo_free = lo_sum - min(a, 0)
                hi_free = hi_sum - max(a, 0)
                one_ok = lo_free + a <= high[r] and hi_free + a >= low[r]
                zero_ok = lo_free <= high[r] and hi_free >= low[r]
                if not one_ok and not zero_ok:
                    return -1
                if one_ok != zero_ok:
                    fixed[i] = 1 if one_ok else 0
                    lo_sum = lo_free + a * fixed[i]
                    hi_sum = hi_free + a * fixed[i]
                    newly += 1
                    changed = True
    return newly
