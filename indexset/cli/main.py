"""Command line: ``indexset SUBCOMMAND ...``.

Each subcommand lives in :mod:`indexset.cli` as a module with
``register(subparsers)``; this file only wires them and turns errors into
one-line messages with exit status 2.
"""

from __future__ import annotations

import argparse
import gc
import os
import sys

from indexset.errors import InputError

COMMANDS = ("info", "verify", "solve", "construct", "bench", "solve_system", "scan", "explore")


EPILOG = """\
exit status:
  0  yes: absorbable (solve), (★) holds (verify), feasible (solve-system),
     done (info, construct, bench without disagreements)
  1  proven no: not absorbable, (★) fails, infeasible; bench: methods disagree
  2  bad input: one line on stderr, no traceback, nothing written
  3  unknown: time limit, Ctrl-C, or nothing decides (solve, solve-system, scan)
  130  a second Ctrl-C
'indexset COMMAND --help' gives each command's options, their defaults and its exit statuses.
"""


class _Parser(argparse.ArgumentParser):
    """argparse with a one-line error and exit status 2."""

    def error(self, message: str) -> None:
        raise InputError(self.prog, message)


class _Version(argparse.Action):
    """``--version``: print ``indexset VERSION`` and exit 0."""

    def __init__(self, option_strings, dest=argparse.SUPPRESS, default=argparse.SUPPRESS, help="print the package version and exit") -> None:
        super().__init__(option_strings, dest, nargs=0, default=default, help=help)

    def __call__(self, parser, namespace, values, option_string=None) -> None:
        import indexset

        print(f"indexset {indexset.__version__}")
        parser.exit()


def build_parser() -> argparse.ArgumentParser:
    """The full parser with every available subcommand."""
    import importlib

    parser = _Parser(prog="indexset", description="Can an MLP absorb its own skip connection? Decide it, with proof.",
                     epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--version", action=_Version)
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser, metavar="COMMAND")
    for name in COMMANDS:
        try:
            module = importlib.import_module(f"indexset.cli.{name}")
        except ModuleNotFoundError as exc:
            if exc.name == f"indexset.cli.{name}":
                continue  # subcommand not built yet
            raise
        module.register(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run the CLI; return the exit status.

    0: yes (absorbable / holds / feasible), 1: proven no, 2: bad input,
    3: unknown, 130: interrupted before anything was known. Output into a
    closed pipe (``indexset solve F | head -1``) is dropped quietly and the
    status stays the command's own.
    """
    stdout = sys.stdout
    sys.stdout = _PipeSafe(stdout)
    parser = build_parser()
    try:
        try:
            args = parser.parse_args(argv)
        except SystemExit as exc:  # --help and --version end argparse with SystemExit(0)
            return int(exc.code or 0)
        return int(args.run(args))
    except InputError as exc:
        print(f"indexset: error: {_as_flag(exc, parser)}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("indexset: interrupted", file=sys.stderr)
        return 130
    finally:
        sys.stdout.flush()
        sys.stdout = stdout


def _as_flag(error: InputError, parser: argparse.ArgumentParser) -> str:
    """The error's one line, a library parameter named by its command-line flag (``target_class`` → ``--class``)."""
    flags = _flags(parser)
    if error.source in flags:
        return f"{flags[error.source]}: {error.problem}"
    return str(error)


def _flags(parser: argparse.ArgumentParser) -> dict:
    """Every option's destination → its long flag, over all subcommands."""
    flags = {}
    for action in parser._actions:  # argparse keeps no public list of its actions
        if isinstance(action, argparse._SubParsersAction):
            for child in action.choices.values():
                flags.update(_flags(child))
        elif action.option_strings:
            flags.setdefault(action.dest, max(action.option_strings, key=len))
    return flags


class _PipeSafe:
    """A text stream that drops its output once the reader has gone (EPIPE).

    After the first BrokenPipeError the real standard output is pointed at
    /dev/null, so that the interpreter's own flush at exit stays quiet.
    """

    def __init__(self, stream) -> None:
        self._stream = stream
        self._gone = False

    def write(self, text: str) -> int:
        if not self._gone:
            try:
                return self._stream.write(text)
            except BrokenPipeError:
                self._drop()
        return len(text)

    def flush(self) -> None:
        if not self._gone:
            try:
                self._stream.flush()
            except BrokenPipeError:
                self._drop()

    def _drop(self) -> None:
        self._gone = True
        try:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, self._stream.fileno())
            os.close(devnull)
        except (OSError, ValueError, AttributeError):  # not a real file (tests capture stdout)
            pass

    def __getattr__(self, name):
        return getattr(self._stream, name)


def entry() -> None:
    """The program's entry point (console script and ``python -m indexset``): :func:`main`, then exit.

    Before exiting, every live object is frozen out of the garbage
    collector: the interpreter's last collection would otherwise walk all
    of them, Numba's type registries above all, only for the operating
    system to reclaim the memory anyway.
    Atexit handlers, thread joins and file closing run as usual. Only the
    program's own exit does this; callers of :func:`main` keep their
    collector as it was.
    """
    status = main()
    gc.freeze()
    sys.exit(status)


if __name__ == "__main__":
    entry()
