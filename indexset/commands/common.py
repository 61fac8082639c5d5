"""Small helpers shared by the subcommands: printing and option parsing."""

from __future__ import annotations

import json
import sys
from fractions import Fraction

from ..activations import parse_fraction
from ..errors import InputError


def emit_json(payload: dict) -> None:
    """Print one JSON object on stdout."""
    print(json.dumps(payload, indent=2, default=_default))


def _default(value):
    if isinstance(value, Fraction):
        return str(value)
    if hasattr(value, "tolist"):
        return value.tolist()
    return str(value)


def parse_index_set(text: str) -> list[int]:
    """Parse ``0,3,5`` (or an empty string for S = ∅) into ints."""
    text = text.strip()
    if not text:
        return []
    try:
        return [int(part) for part in text.split(",")]
    except ValueError:
        raise InputError("--index-set", f"{text!r} is not a comma-separated list of integers") from None


def parse_tolerance(text: str | None) -> Fraction | None:
    """Parse ``--tol`` as an exact nonnegative rational."""
    if text is None:
        return None
    value = parse_fraction(text, "--tol")
    if value < 0:
        raise InputError("--tol", "tolerance must be ≥ 0")
    return value


def warn(message: str) -> None:
    """A line on stderr."""
    print(message, file=sys.stderr)
