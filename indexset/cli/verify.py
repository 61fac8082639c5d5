"""``indexset verify FILE --index-set ...``: check (★) exactly, write a witness."""

from __future__ import annotations

from indexset.cli.common import emit_json, parse_index_set, parse_tolerance


def register(sub) -> None:
    """Add the ``verify`` subcommand."""
    parser = sub.add_parser("verify", help="check c·W_down[:,S]·W_up[S,:] = −A exactly for a given S")
    parser.add_argument("file", help="instance .npz")
    parser.add_argument("--index-set", required=True, help="comma-separated unit indices, e.g. 0,3,5")
    parser.add_argument("--witness", metavar="OUT", help="write the residual-free witness block here (.npz)")
    parser.add_argument("--format", choices=("npz", "safetensors"), default="npz", help="witness format; safetensors also writes the .npz")
    parser.add_argument("--tol", help="accept S when every entry of c·W_down[:,S]·W_up[S,:] + A is at most T in absolute value (absolute, on the max entry; compared exactly) and |S| ≥ d")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.set_defaults(run=run)


def run(args) -> int:
    """Exit 0 when S satisfies (★) (and the witness checks out), else 1."""
    from indexset.exact.verify import approximate, verify
    from indexset.exact.witness_files import write_witness
    from indexset.model.instance import Instance

    instance = Instance.load(args.file)
    index_set = parse_index_set(args.index_set)
    report = verify(instance, index_set, tol=parse_tolerance(args.tol))
    payload = report.to_json()
    ok = report.holds
    if ok and args.witness:
        payload["witness"] = write_witness(instance, report.index_set, args.witness, args.format)
        ok = payload["witness"]["written"] is not None
    if args.json:
        emit_json(payload)
        return 0 if ok else 1
    verdict = "holds" if report.holds else "does not hold"
    print(f"S = {list(report.index_set)}: (★) {verdict} (|S| = {len(report.index_set)}, d = {instance.d})")
    print(f"  exact max |c·W_down[:,S]·W_up[S,:] + A| = {report.max_residual} (≈ {approximate(report.max_residual):.6g})")
    if report.tolerance is not None:
        print(f"  tolerance {report.tolerance}: {'within' if report.within_tolerance else 'exceeded'}")
    if "witness" in payload:
        print(f"  {payload['witness']['summary']}")
        if payload["witness"]["written"]:
            print(f"  witness written to {', '.join(payload['witness']['written'])}")
    return 0 if ok else 1
