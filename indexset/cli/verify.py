"""``indexset verify FILE --index-set ...``: check (★) exactly, write a witness."""

from __future__ import annotations

import argparse

from indexset.cli.common import add_witness_options, emit_json, parse_index_set, parse_tolerance, readable, witness_targets

EPILOG = """\
exit status:
  0  (★) holds for S (and the witness, when asked for, passed its forward check and was written)
  1  (★) does not hold for S, or the witness failed its forward check (nothing written)
  2  bad input: one line on stderr, nothing written
"""


def register(sub) -> None:
    """Add the ``verify`` subcommand."""
    parser = sub.add_parser("verify", help="check c·W_down[:,S]·W_up[S,:] = −A exactly for a given S",
                            description="Check (★) c·W_down[:,S]·W_up[S,:] = −A exactly (rational arithmetic) for one index set S.",
                            epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("file", help="instance .npz")
    parser.add_argument("--index-set", required=True, help="comma-separated unit indices, e.g. 0,3,5 (empty for S = ∅)")
    add_witness_options(parser)
    parser.add_argument("--tol", help="accept S when every entry of c·W_down[:,S]·W_up[S,:] + A is at most T in absolute value (absolute, on the max entry; compared exactly) and |S| ≥ d (default: exact equality)")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.set_defaults(run=run)


def run(args) -> int:
    """Exit 0 when S satisfies (★) (and the witness checks out), else 1."""
    from indexset.exact.verify import approximate, verify
    from indexset.exact.witness_files import write_witness
    from indexset.model.instance import Instance

    targets = witness_targets(args)  # a bad name or format is refused before any work
    instance = Instance.load(args.file)
    index_set = parse_index_set(args.index_set)
    report = verify(instance, index_set, tol=parse_tolerance(args.tol))
    payload = report.to_json()
    ok = report.holds
    if ok and targets is not None:
        payload["witness"] = write_witness(instance, report.index_set, args.witness, args.format)
        ok = payload["witness"]["written"] is not None
    if args.json:
        emit_json(payload)
        return 0 if ok else 1
    from indexset.text import ranges

    verdict = "holds" if report.holds else "does not hold"
    print(f"S = {{{ranges(report.index_set)}}}: (★) {verdict} (|S| = {len(report.index_set)}, d = {instance.d})")
    exact = readable(f"= {report.max_residual}")
    print(f"  exact max |c·W_down[:,S]·W_up[S,:] + A| {exact}" + ("" if exact.startswith("≈") else f" (≈ {approximate(report.max_residual):.6g})"))
    if report.tolerance is not None:
        print(f"  tolerance {readable(str(report.tolerance))}: {'within' if report.within_tolerance else 'exceeded'}")
    if "witness" in payload:
        print(f"  {payload['witness']['summary']}")
        if payload["witness"]["written"]:
            print(f"  witness written to {', '.join(payload['witness']['written'])}")
    return 0 if ok else 1
