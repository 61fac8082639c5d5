"""``indexset construct FAMILY [options] -o FILE.npz``: build an instance file.

One sub-command per family of :mod:`indexset.workflows.construct`; options left out
take the library defaults (every option is ``argparse.SUPPRESS`` by
default, so the defaults live in one place: the family's spec).
"""

from __future__ import annotations

import argparse
import functools

from indexset.errors import InputError
from indexset.workflows.vocabulary import DEGENERACIES, DTYPES, SKIPS

LOW_PRECISION_DEGENERACY = ("any", "nondegenerate", "collinear", "zero_row", "zero_column")
"""The low-precision family's ``degeneracy`` choices (the library's ``low_precision.DEGENERACY``; the parsers are built without it)."""

_OPTIONS = {
    "d": (("--d",), {"type": int, "help": "dimension d"}),
    "n": (("--n",), {"type": int, "help": "width n (number of hidden units)"}),
    "k": (("--k",), {"type": int, "help": "size of the planted index set S (d ≤ k ≤ n; default: max(d, n // 2); low-precision: at least the fewest units its construction needs)"}),
    "range": (("--range",), {"type": int, "metavar": "R", "help": "integer entries (numerators) in [−R, R]"}),
    "activation": (("--activation",), {"help": "activation name, e.g. relu, gelu, leaky_relu:1/2"}),
    "biases": (("--biases",), {"action": "store_true", "help": "draw random biases"}),
    "skip": (("--skip",), {"choices": SKIPS, "help": "skip matrix A"}),
    "denominator": (("--denominator",), {"type": int, "metavar": "Q", "help": "store integer numerators over Q (default: integer weights)"}),
    "streams": (("--streams",), {"type": int, "help": "mhc: number of residual streams (divides d)"}),
    "dtype": (("--dtype",), {"choices": DTYPES, "help": "integer or Gaussian float weights"}),
    "tol": (("--tol",), {"help": "tolerance the planted S must meet"}),
    "kind": (("--kind",), {"choices": DEGENERACIES, "help": "which degeneracy to create"}),
    "density": (("--density",), {"type": float, "help": "target density n / (d²·log2 max|M|)"}),
    "plant": (("--unplanted",), {"action": "store_false", "help": "draw an unplanted instance (hard: a probable negative)"}),
    "scale": (("--scale",), {"metavar": "P/Q", "help": "every weight is an integer in [−R, R] times this positive rational"}),
    "degeneracy": (("--degeneracy",), {"choices": LOW_PRECISION_DEGENERACY,
                                       "help": "any: as drawn; nondegenerate: rows on distinct lines, nothing zero; or at least this degeneracy"}),
    "layers": (("--layers",), {"type": int, "metavar": "L", "help": "number of blocks in the stack"}),
    "trap": (("--trap",), {"action": "store_true", "help": "plant an S satisfying (★) with c = 1 anyway (metadata trap_S); still not absorbable by --class"}),
    "pairs": (("--pairs",), {"action": "store_true", "help": "d pairs of units with opposite gate rows and parallel down columns: absorbable with biases in g (MATH.md §8.6)"}),
    "collinear": (("--collinear",), {"action": "store_true", "help": "relu2: four units on each of d lines: absorbable with biases in g (MATH.md §8.6)"}),
    "target_class": (("--class",), {"choices": ("affine", "bias-free"), "help": "with --trap: the class the trap stays a negative for"}),
}

FAMILY_OPTIONS = {  # family: (summary, the options of its spec in indexset.workflows.construct but seed)
    "planted": ("exact weights with a hidden absorbing index set S",
                ("d", "n", "k", "range", "activation", "biases", "skip", "denominator", "streams")),
    "random": ("unplanted nondegenerate weights (negatives)",
               ("d", "n", "range", "activation", "biases", "skip", "denominator", "streams", "dtype")),
    "float-planted": ("Gaussian weights with S holding up to rounding (for --tol)",
                      ("d", "n", "k", "activation", "biases", "skip", "streams", "tol")),
    "degenerate": ("a planted instance with one stated degeneracy",
                   ("kind", "d", "n", "k", "range", "activation", "biases")),
    "hard": ("integer instances near density one",
             ("d", "n", "k", "density", "plant", "activation")),
    "gated": ("SwiGLU/GeGLU/ReGLU/GLU blocks",
              ("activation", "d", "n", "range", "biases", "skip", "dtype", "trap", "pairs", "target_class")),
    "homogeneous": ("ReLU²/ReGLU blocks",
                    ("activation", "d", "n", "range", "biases", "skip", "dtype", "trap", "collinear", "target_class")),
    "stack": ("a stack of L blocks, each planted (or gated/homogeneous)",
              ("layers", "d", "n", "k", "range", "activation", "biases", "skip")),
    "low-precision": ("integer weights in [−R, R] times a scale (R = 1: ternary), planted or not",
                      ("d", "n", "k", "range", "scale", "plant", "degeneracy", "activation")),
    "whole-stack": ("two ReLU blocks on R (or lifted to R^d, units parallel to e_1) that absorb their skips only as a whole "
                    "(MATH.md §9.5)", ("d", "n", "range")),
}

WITNESSED = ("whole-stack",)
"""Families whose instance carries a witness stack, written by ``--witness``."""


EPILOG = """\
exit status:
  0  written (every planted S passed the exact verifier first)
  2  bad input: one line on stderr, nothing written
"""


class _FamilyHelp(argparse.RawDescriptionHelpFormatter):
    """Help for one family, each option with its default read from the family's spec.

    The defaults live in :mod:`indexset.workflows.construct` only; they are
    read (importing the numerical libraries) when this help is printed,
    never when the parsers are built.
    """

    def __init__(self, prog, family: str, **kwargs) -> None:
        super().__init__(prog, **kwargs)
        self._family = family
        self._defaults = None

    def _get_help_string(self, action) -> str:
        text = action.help or ""
        if self._defaults is None:
            import indexset.workflows.construct as construct

            self._defaults = construct.family(self._family).spec.defaults()
        value = self._defaults.get(action.dest)
        if value is None or isinstance(value, bool) or "default" in text:
            return text
        return f"{text} (default: {str(value).replace('%', '%%')})"  # argparse %-formats help strings


def register(sub) -> None:
    """Add the ``construct`` subcommand with one sub-command per family."""
    parser = sub.add_parser("construct", help="build an instance file: planted positives, negatives, hard instances",
                            description="Build an instance file of one family; the same options and seed always give the same bytes.",
                            epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    families = parser.add_subparsers(dest="family", required=True, metavar="FAMILY")
    for family, (summary, names) in FAMILY_OPTIONS.items():
        aliases = [family.replace("-", "_")] if "-" in family else []
        child = families.add_parser(family, aliases=aliases, help=summary, description=summary, epilog=EPILOG,
                                    formatter_class=functools.partial(_FamilyHelp, family=family))
        for name in names:
            flags, spec = _OPTIONS[name]
            child.add_argument(*flags, dest=name, default=argparse.SUPPRESS, **spec)
        child.add_argument("--seed", type=int, default=argparse.SUPPRESS, help="random seed")
        child.add_argument("-o", "--output", required=True, metavar="FILE.npz", help="file to write")
        if family in WITNESSED:
            child.add_argument("--witness", metavar="FILE.npz", help="also write the residual-free witness stack")
        child.set_defaults(run=run, options=names + ("seed",))


def run(args) -> int:
    """Build, verify and write the instance; print one summary line; exit 0."""
    witness_path = getattr(args, "witness", None)
    for path in (args.output, witness_path):
        if path is not None and not path.endswith(".npz"):
            raise InputError(path, "output file name must end in .npz")
    options = {name: getattr(args, name) for name in args.options if hasattr(args, name)}
    import indexset.workflows.construct as construct  # numerics only once a family is built

    instance = construct.build(args.family, **options)
    construct.write_reproducible(instance, args.output)
    if witness_path is not None:
        construct.write_reproducible(construct.witness_of(instance), witness_path)
    planted = instance.planted
    what = f"planted S = {planted}" if planted is not None else "no planted S"
    layers = f"L = {instance.L}, " if hasattr(instance, "L") else ""
    print(
        f"{args.family.replace('_', '-')}: {layers}n = {instance.n}, d = {instance.d}, "
        f"{instance.activation}, {what} -> {args.output}" + (f", witness -> {witness_path}" if witness_path else "")
    )
    return 0
