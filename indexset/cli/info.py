"""``indexset info FILE``: what an instance is, before any search."""

from __future__ import annotations

import argparse

from indexset.classes import DEFINITIONS
from indexset.cli.common import add_class_option, emit_json


def register(sub) -> None:
    """Add the ``info`` subcommand."""
    parser = sub.add_parser("info", help="shapes, activation class, skip and degeneracy of an instance",
                            description="Describe an instance before any search: shapes, activation class and theorem, skip, degeneracy, and the argument for --class.",
                            epilog="exit status:\n  0  described\n  2  bad input: one line on stderr\n", formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("file", help="instance .npz (a block, a hyper-connection layer or a stack)")
    add_class_option(parser)
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.set_defaults(run=run)


def report(instance, target_class: str = "affine") -> dict:
    """Everything ``info`` reports, as a JSON-ready dict."""
    import indexset.theory.degenerate as degenerate
    import indexset.theory.explain as explain
    from indexset.theory.nondegeneracy import find_degeneracy

    degeneracy = find_degeneracy(instance)
    act = instance.act
    return {
        "file": instance.source,
        "n": instance.n,
        "d": instance.d,
        "activation": instance.activation,
        "activation_class": act.kind,
        "odd_coefficient": None if act.c is None else str(act.c),
        "theorem": act.reason,
        "extension": act.extension,
        "skip": "none (residual-free block)" if instance.residual_free else ("identity" if instance.identity_skip else "invertible matrix"),
        "biases": instance.has_biases,
        "denominator": instance.denominator,
        "dtype": str(instance.W_up.dtype),
        "degeneracy": degeneracy.to_json(),
        "degeneracy_summary": degeneracy.describe(),
        "metadata_keys": sorted(instance.metadata),
        "class": target_class,
        "argument": explain.argument(instance, target_class),
        "hyper_connection": explain.hyper_report(instance),
        "degenerate_classes": None if degeneracy.nondegenerate else degenerate.report(instance),
    }


def run(args) -> int:
    """Print the description; exit 0."""
    import indexset.model.loading as loading
    import indexset.model.stack as stack

    loaded = loading.load_any(args.file)
    if isinstance(loaded, stack.Stack):
        return _run_stack(loaded, args)
    info = report(loaded, args.target_class)
    if args.json:
        emit_json(info)
        return 0
    print(f"{info['file']}: block of width n = {info['n']} on R^{info['d']}")
    print(f"  activation   {info['activation']} ({info['activation_class']}" + (f", c = {info['odd_coefficient']})" if info["odd_coefficient"] else ")"))
    print(f"  skip         {info['skip']}; biases: {'yes' if info['biases'] else 'no'}; dtype {info['dtype']}" + (f" over {info['denominator']}" if info["denominator"] != 1 else ""))
    print(f"  weights      {info['degeneracy_summary']}")
    print(f"  theory       {info['theorem']}")
    if info["hyper_connection"]:
        hc = info["hyper_connection"]
        print(f"  hyper-conn.  s = {hc['s']} streams of width C = {hc['C']}: effective block on R^{hc['effective_d']}")
    print(f"  class        {info['class']}: {DEFINITIONS[info['class']]}")
    print(f"  argument     {info['argument']}")
    if info["metadata_keys"]:
        print(f"  metadata     {', '.join(info['metadata_keys'])}")
    return 0


def _run_stack(loaded, args) -> int:
    """``info`` for a stack file: the stack's argument and each block's description."""
    import indexset.theory.stacks as stacks

    info = dict(stacks.report(loaded, args.target_class), blocks=[report(block, args.target_class) for block in loaded.blocks])
    if args.json:
        emit_json(info)
        return 0
    print(f"{info['file']}: stack of L = {info['layers']} block(s) of width n = {info['n']} on R^{info['d']}")
    print(f"  activation   {info['activation']} ({info['activation_class']})")
    print(f"  argument     {info['argument']}")
    for index, block in enumerate(info["blocks"]):
        print(f"  block {index:<6} {block['skip']} skip; biases: {'yes' if block['biases'] else 'no'}; {block['degeneracy_summary']}")
    return 0
