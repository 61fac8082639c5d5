"""The rank argument: (★) needs the chosen rows and columns to span R^d.

For every S, ``rank(c·W_down[:,S]·W_up[S,:]) ≤ min(rank W_down[:,S],
rank W_up[S,:])``, and −A has rank d (A is invertible). So when the units
that may still be in S (none excluded before the search, the free and
fixed-in ones after pruning) have W_up rows or W_down columns of rank below
d, no S satisfies (★). For a hyper-connection layer with s ≥ 2 streams the
write projection has rank ≤ C < sC = d, so this decides without any search
(MATH.md §3).
"""

from __future__ import annotations

import numpy as np

from indexset.model.hyper import hyper_info
from indexset.model.instance import Instance
from indexset.rational import fmpz_matrix


def rank_argument(instance: Instance, fixed: np.ndarray | None = None) -> dict:
    """Check the rank argument exactly.

    Parameters
    ----------
    instance : Instance
    fixed : ndarray of int8, optional
        −1 free, 0 excluded, 1 in every S (from pruning); None: no unit excluded.

    Returns
    -------
    dict
        ``rank_write``, ``rank_read``, ``d``, ``applies`` (no S exists) and ``text``.
    """
    allowed = [i for i in range(instance.n) if fixed is None or fixed[i] != 0]
    d = instance.d
    if not allowed:
        return {"rank_write": 0, "rank_read": 0, "d": d, "applies": True,
                "text": f"every unit is excluded, but (★) needs rank d = {d}"}
    up, _ = instance.exact("W_up")
    down, _ = instance.exact("W_down")
    read, write = fmpz_matrix(up[allowed, :]).rank(), fmpz_matrix(down[:, allowed]).rank()
    applies = min(write, read) < d
    info = hyper_info(instance) if fixed is None else None
    if info is not None:
        text = _hyper_text(write, read, d, info, applies)
    elif not applies:
        text = f"rank argument does not apply: the W_down columns and W_up rows have rank {write} and {read}, not below d = {d}"
    else:
        which = "W_up rows" if read < d else "W_down columns"
        scope = "of the units not excluded by pruning " if fixed is not None else ""
        text = f"the {which} {scope}span less than R^{d} (rank {min(read, write)}), but (★) needs rank d"
    return {"rank_write": write, "rank_read": read, "d": d, "applies": applies, "text": text}


def _hyper_text(write: int, read: int, d: int, info: dict, applies: bool) -> str:
    bound = f" ≤ C = {info['C']}" if "C" in info else ""
    if not applies:
        return (f"rank argument does not apply: the write and read projections have rank {write} and {read}, "
                f"not below sC = {d}")
    return (f"rank argument: the write projection (H_postᵀ ⊗ I_C)·W_down has rank {write}{bound} and the read "
            f"projection rank {read}, so c·W_down'[:,S]·W_up'[S,:] has rank ≤ {min(write, read)} < sC = {d} for "
            f"every S and never equals −(H_res ⊗ I_C), which has rank {d}: no S satisfies (★), no search needed "
            "(the invertible skip H_res ⊗ I_C reduces the layer to the identity case, MATH.md §3)")
