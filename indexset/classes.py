"""The classes of residual-free blocks a verdict is about.

A skip-connected block is *absorbable* when a residual-free block ``g`` of
the same width equals it everywhere. Which blocks ``g`` count is part of
the question (docs/MATH.md §8):

- ``affine`` (the default): ``g(x) = V_down σ(V_up x + c_up) + c_down``,
  biases allowed everywhere;
- ``bias-free``: ``g(x) = V_down σ(V_up x) + c_down``, no bias inside σ
  (neither on the up nor on the gate projection): the setting of the
  paper's impossibility results and of LLaMA-style MLPs. The output bias
  ``c_down`` stays free in both classes.
"""

from __future__ import annotations

from indexset.errors import InputError

AFFINE = "affine"
BIAS_FREE = "bias-free"
CLASSES = (AFFINE, BIAS_FREE)

DEFINITIONS = {
    AFFINE: "g(x) = V_down σ(V_up x + c_up) + c_down (biases allowed)",
    BIAS_FREE: "g(x) = V_down σ(V_up x) + c_down (no bias inside σ)",
}


def check_class(target_class: str) -> str:
    """The canonical name of a class of residual-free blocks.

    Raises
    ------
    InputError
        For a name that is not ``affine`` or ``bias-free`` (``bias_free``
        is accepted too).
    """
    name = str(target_class).strip().lower().replace("_", "-")
    if name not in CLASSES:
        raise InputError("target_class", f"unknown class {target_class!r}; choose from {', '.join(CLASSES)}")
    return name


def phrase(target_class: str) -> str:
    """``"residual-free blocks of class affine (g(x) = ...)"`` for reasons."""
    return f"residual-free blocks of class {target_class}, {DEFINITIONS[target_class]}"
