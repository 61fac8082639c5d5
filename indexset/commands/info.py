"""``indexset info FILE``: what an instance is, before any search."""

from __future__ import annotations

from ..degeneracy import find_degeneracy
from ..instance import Instance
from .common import emit_json
from .. import degenerate, hyper, loading, stack  # issue 6 hook


def register(sub) -> None:
    """Add the ``info`` subcommand."""
    parser = sub.add_parser("info", help="shapes, activation class, skip and degeneracy of an instance")
    parser.add_argument("file", help="instance .npz")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.set_defaults(run=run)


def describe(instance: Instance) -> dict:
    """Everything ``info`` reports, as a JSON-ready dict."""
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
        # --- issue 6 hook: the argument behind the verdict, HC shape, §7 classes ---
        "argument": loading.argument(instance),
        "hyper_connection": hyper.describe(instance),
        "degenerate_classes": None if degeneracy.nondegenerate else degenerate.describe(instance),
    }


def run(args) -> int:
    """Print the description; exit 0."""
    loaded = loading.load_any(args.file)  # issue 6 hook: blocks, stacks, hyper-connection files
    if isinstance(loaded, stack.Stack):
        return _run_stack(loaded, args)
    info = describe(loaded)
    if args.json:
        emit_json(info)
        return 0
    print(f"{info['file']}: block of width n = {info['n']} on R^{info['d']}")
    print(f"  activation   {info['activation']} ({info['activation_class']}" + (f", c = {info['odd_coefficient']})" if info["odd_coefficient"] else ")"))
    print(f"  skip         {info['skip']}; biases: {'yes' if info['biases'] else 'no'}; dtype {info['dtype']}" + (f" over {info['denominator']}" if info["denominator"] != 1 else ""))
    print(f"  weights      {info['degeneracy_summary']}")
    print(f"  theory       {info['theorem']}")
    if info["hyper_connection"]:  # issue 6 hook
        hc = info["hyper_connection"]
        print(f"  hyper-conn.  s = {hc['s']} streams of width C = {hc['C']}: effective block on R^{hc['effective_d']}")
    print(f"  argument     {info['argument']}")  # issue 6 hook
    if info["metadata_keys"]:
        print(f"  metadata     {', '.join(info['metadata_keys'])}")
    return 0


def _run_stack(loaded, args) -> int:
    """``info`` for a stack file (issue 6): the stack's argument and each block's description."""
    info = dict(stack.describe(loaded), blocks=[describe(block) for block in loaded.blocks])
    if args.json:
        emit_json(info)
        return 0
    print(f"{info['file']}: stack of L = {info['layers']} block(s) of width n = {info['n']} on R^{info['d']}")
    print(f"  activation   {info['activation']} ({info['activation_class']})")
    print(f"  argument     {info['argument']}")
    for index, block in enumerate(info["blocks"]):
        print(f"  block {index:<6} {block['skip']} skip; biases: {'yes' if block['biases'] else 'no'}; {block['degeneracy_summary']}")
    return 0
