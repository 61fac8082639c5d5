"""Command line: ``indexset SUBCOMMAND ...``.

Each subcommand lives in :mod:`indexset.commands` as a module with
``register(subparsers)``; this file only wires them and turns errors into
one-line messages with exit status 2.
"""

from __future__ import annotations

import argparse
import sys

from .errors import InputError

COMMANDS = ("info", "verify", "solve", "construct", "bench", "solve_system", "scan")


class _Parser(argparse.ArgumentParser):
    """argparse with a one-line error and exit status 2."""

    def error(self, message: str) -> None:  # noqa: D102 - argparse hook
        raise InputError(self.prog, message)


def build_parser() -> argparse.ArgumentParser:
    """The full parser with every available subcommand."""
    import importlib

    parser = _Parser(prog="indexset", description="Can an MLP absorb its own skip connection? Decide it, with proof.")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    for name in COMMANDS:
        try:
            module = importlib.import_module(f"indexset.commands.{name}")
        except ModuleNotFoundError as exc:
            if exc.name == f"indexset.commands.{name}":
                continue  # subcommand not built yet
            raise
        module.register(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run the CLI; return the exit status.

    0: yes (absorbable / holds / feasible), 1: proven no, 2: bad input,
    3: unknown, 130: interrupted before anything was known.
    """
    try:
        try:
            args = build_parser().parse_args(argv)
        except SystemExit as exc:  # --help and --version end argparse with SystemExit(0)
            return int(exc.code or 0)
        return int(args.run(args))
    except InputError as exc:
        print(f"indexset: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("indexset: interrupted", file=sys.stderr)
        return 130


def entry() -> None:  # pragma: no cover - console script shim
    """Console-script entry point."""
    sys.exit(main())


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
