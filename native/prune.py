"""Pruning kernels: interval bound propagation on integer systems over a box.

Arrays and scalars in, arrays out; the caller guarantees int64 cannot
overflow (every row's activity over the box, and its right-hand side, below
2^62 in magnitude) and validates shapes.
"""

from __future__ import annotations

from .config import kernel


@kernel
def propagate_bounds(M, row_low, row_high, low, high, max_rounds):
    """Narrow the domains ``low ≤ z ≤ high`` by the row intervals ``row_low ≤ M z ≤ row_high``.

    Each row's least and greatest activity over the box bounds every one of
    its unknowns: ``a_j z_j ∈ [row_low − (max − a_j·z_j's max), row_high −
    (min − a_j·z_j's min)]``, rounded inward. Rows are taken in turn, the
    domains narrowed at once (Gauss–Seidel), until a round narrows nothing
    or ``max_rounds`` rounds have run.

    Parameters
    ----------
    M : int64[:, :]
        Coefficients (m × n).
    row_low, row_high : int64[:]
        Row bounds (equal for an equation).
    low, high : int64[:]
        The domains; narrowed in place.
    max_rounds : int

    Returns
    -------
    int
        −1 when some row cannot be met (infeasible), else the number of
        unknowns whose domain narrowed.
    """
    m, n = M.shape
    first_low = low.copy()
    first_high = high.copy()
    for _ in range(max_rounds):
        changed = False
        for r in range(m):
            least = 0
            greatest = 0
            for j in range(n):
                a = M[r, j]
                if a > 0:
                    least += a * low[j]
                    greatest += a * high[j]
                elif a < 0:
                    least += a * high[j]
                    greatest += a * low[j]
            if least > row_high[r] or greatest < row_low[r]:
                return -1
            for j in range(n):
                a = M[r, j]
                if a == 0 or low[j] == high[j]:
                    continue
                term_low = a * low[j] if a > 0 else a * high[j]
                term_high = a * high[j] if a > 0 else a * low[j]
                below = row_low[r] - (greatest - term_high)  # a·z_j ≥ below
                above = row_high[r] - (least - term_low)  # a·z_j ≤ above
                if a > 0:
                    new_low, new_high = -((-below) // a), above // a
                else:
                    new_low, new_high = -((-above) // a), below // a
                new_low = max(new_low, low[j])
                new_high = min(new_high, high[j])
                if new_low > new_high:
                    return -1
                if new_low != low[j] or new_high != high[j]:
                    if a > 0:
                        least += a * (new_low - low[j])
                        greatest += a * (new_high - high[j])
                    else:
                        least += a * (new_high - high[j])
                        greatest += a * (new_low - low[j])
                    low[j] = new_low
                    high[j] = new_high
                    changed = True
        if not changed:
            break
    narrowed = 0
    for j in range(n):
        if low[j] != first_low[j] or high[j] != first_high[j]:
            narrowed += 1
    return narrowed
