"""One loader for every file kind: blocks, hyper-connection layers and stacks.

:func:`load_any` looks at the keys of an ``.npz`` file:

- ``H_res``, ``H_pre`` or ``H_post`` present: a hyper-connection layer
  (:mod:`indexset.model.hyper`); the effective :class:`Instance` on R^{sC}.
- a 3-D ``W_up``: a deep stack (:mod:`indexset.model.stack`), a :class:`Stack`.
- otherwise: a single block, an :class:`Instance`.

Files that fit two kinds (hyper-connection keys with stacked arrays or with
a ``skip``), and per-layer suffix keys (``W_up_0``), are refused with an
:class:`InputError` that says why. :func:`solve_any` and :func:`argument`
dispatch to the right decision and name the theorem or argument behind it.
"""

from __future__ import annotations

import indexset.model.hyper as hyper
import indexset.model.stack as stack
from indexset.errors import InputError
from indexset.model.instance import Instance, read_npz


def load_any(path) -> Instance | stack.Stack:
    """Read a block, a stack or a hyper-connection file.

    Raises
    ------
    InputError
        Unreadable files, ambiguous or mixed layouts, and everything the
        specific loaders refuse.
    """
    source = str(path)
    arrays = read_npz(source)
    kind = file_kind(arrays, source)
    if kind == "hyper":
        return hyper.effective_instance(arrays, source)
    if kind == "stack":
        return stack.Stack.from_arrays(arrays, source)
    return Instance.load(source)


def file_kind(arrays: dict, source: str = "<memory>") -> str:
    """``hyper``, ``stack`` or ``block``; InputError for ambiguous layouts."""
    suffixed = stack.suffix_keys(arrays)
    if suffixed:
        stack.Stack.from_arrays(arrays, source)  # raises the explanation
    if hyper.is_hyper(arrays):
        if stack.is_stack(arrays):
            raise InputError(source, "ambiguous file: hyper-connection keys (H_res, H_pre, H_post) with a stacked "
                                     "3-D W_up; stacks of hyper-connection layers are not a supported format")
        return "hyper"
    if stack.is_stack(arrays):
        return "stack"
    return "block"
