"""The benchmark harness: run a suite, write its result file, render its tables.

    python benchmarks/run.py SUITE [options]    measure; write benchmarks/results/SUITE.json; print the tables
    python benchmarks/run.py SUITE --table      print the tables of the result file; measure nothing
    python benchmarks/run.py SUITE ... --doc    also put them into BENCHMARKS.md, each in place of its block
    python benchmarks/run.py SUITE --help       the suite's options

Suites (the module that measures each):

==============  =============================================================  ===============
``versus``      indexset against solvediophant, paired, on the same systems      ``versus.py``
``kernel``      the enumeration kernel: per node and per core, walks alone       ``kernel.py``
``width``       search time against width, beside baselines, with figures        ``scaling.py``
``dask``        the split search on local Dask workers against threads           ``scaling.py``
``checkpoints`` the Gram path and ``indexset scan`` of large float layers        ``scaling.py``
``degenerate``  the decision on degenerate low-precision blocks (MATH.md §7)     ``surveys.py``
``stacks``      ``indexset explore`` on small ReLU stacks (MATH.md §9)           ``surveys.py``
``clean``       clean process exits, and ``--time-limit`` on whole processes     ``clean.py``
``checkouts``   first solutions by several checkouts or settings, alternating    ``checkouts.py``
``tuning``      the evidence for the tuning values (rendered only)               this file
==============  =============================================================  ===============

A result file holds the suite's tables by name. Each table records the
command that measures it, the commit of the code measured, the machine, and
its raw runs; a table whose runs were kept only as a summary holds that
summary (``transcribed``) instead. A run replaces the tables it measured
and keeps the others, so one table can be measured again alone (``--part``).
``--table`` renders every table as a line naming its command, the code,
the machine and the file, then the Markdown table: the blocks BENCHMARKS.md
holds, which ``tests/test_benchmark_tables.py`` rebuilds from the files.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import platform
import re
import shlex
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPOSITORY = HERE.parent
RESULTS = HERE / "results"

MODULES = {"versus": "versus", "kernel": "kernel", "width": "scaling", "dask": "scaling", "checkpoints": "scaling",
           "degenerate": "surveys", "stacks": "surveys", "clean": "clean", "checkouts": "checkouts", "tuning": None}
"""Each suite and the module (in this folder) that defines it; ``tuning`` is rendered here and measured by its rows' commands."""


def suite(name: str):
    """The suite object of ``name``: ``arguments(parser)``, ``measure(args)`` yielding (table name, table) as each grows, ``table(name, part) -> dict of views``.

    Parameters
    ----------
    name : str
        A key of :data:`MODULES`.

    Returns
    -------
    object
        The module's ``SUITES[name]``; for ``tuning``, :data:`TUNING`.
    """
    if MODULES[name] is None:
        return TUNING
    if str(HERE) not in sys.path:
        sys.path.insert(0, str(HERE))
    return importlib.import_module(MODULES[name]).SUITES[name]


# ------------------------------------------------------------------ provenance


def machine() -> dict:
    """The machine a run measures on: CPUs, platform, Python, and the load average at the start."""
    return {"cpus": os.cpu_count(), "platform": platform.platform(), "python": platform.python_version(),
            "load_average_start": [round(v, 2) for v in os.getloadavg()]}


def commit() -> str:
    """The short commit of this checkout, with ``+changes`` when the code under indexset/ or native/ differs from it."""
    try:
        head = subprocess.run(["git", "-C", str(REPOSITORY), "rev-parse", "--short", "HEAD"], capture_output=True, text=True, check=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", str(REPOSITORY), "status", "--porcelain", "--", "indexset", "native"], capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return head + ("+changes" if dirty else "")


def machine_text(facts: dict) -> str:
    """One line for a machine record: CPUs and platform (and the load average when recorded)."""
    text = f"{facts.get('cpus', '?')} CPUs, {facts.get('platform', 'platform not recorded')}"
    if facts.get("load_average_start"):
        text += f", load {facts['load_average_start'][0]:.1f} at the start"
    return text


# ------------------------------------------------------------------ result files


def load(path: Path) -> dict:
    """A result file (an empty one when it does not exist yet)."""
    return json.loads(path.read_text(encoding="utf-8")) if path.exists() else {"tables": {}}


def _dump(value, depth: int = 0) -> str:
    """JSON indented by one space a level, but a list of dicts with one dict per line: a long file stays small and diffable."""
    pad = " " * (depth + 1)
    if isinstance(value, dict) and value:
        items = [f"{pad}{json.dumps(str(k), ensure_ascii=False)}: {_dump(v, depth + 1)}" for k, v in value.items()]
        return "{\n" + ",\n".join(items) + "\n" + " " * depth + "}"
    if isinstance(value, list) and value and all(isinstance(v, dict) for v in value):
        return "[\n" + ",\n".join(pad + json.dumps(v, ensure_ascii=False, default=str) for v in value) + "\n" + " " * depth + "]"
    return json.dumps(value, ensure_ascii=False, default=str)


def save(result: dict, path: Path) -> None:
    """Write a result file (see :func:`_dump`)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(_dump(result) + "\n", encoding="utf-8")


# ------------------------------------------------------------------ rendering


def cell(value) -> str:
    """A Markdown cell: the text with its pipes escaped."""
    return str(value).replace("|", "\\|")


def markdown(header: list, rows: list) -> str:
    """A Markdown table."""
    lines = ["| " + " | ".join(cell(h) for h in header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(cell(v) for v in row) + " |" for row in rows]
    return "\n".join(lines)


def views(suite_name: str, name: str, part: dict) -> dict:
    """The tables of one part of a result file, by view name: (header, rows) each."""
    if "transcribed" in part:
        return {name: (part["transcribed"]["header"], part["transcribed"]["rows"])}
    return suite(suite_name).table(name, part)


def _shown(path: Path) -> str:
    path = path.resolve()
    return str(path.relative_to(REPOSITORY)) if path.is_relative_to(REPOSITORY) else str(path)


def render(suite_name: str, name: str, part: dict, view: str, path: Path | None = None) -> str:
    """The block of one table: a line with its command, the code, machine and file it comes from; then the Markdown table."""
    header, rows = views(suite_name, name, part)[view]
    label = name if view == name else f"{name}/{view}"
    where = f"`{_shown(path or RESULTS / f'{suite_name}.json')}`, table `{label}`"
    command = f"`{part['command']}`: code" if part.get("command") else "Code"
    return f"{command} {part.get('commit', 'unknown')}; {machine_text(part.get('machine') or {})}; {where}.\n\n{markdown(header, rows)}"


def blocks(suite_name: str, result: dict, path: Path | None = None) -> list:
    """Every rendered block of a result file, in the file's order of tables."""
    return [render(suite_name, name, part, view, path) for name, part in result["tables"].items() for view in views(suite_name, name, part)]


def update_doc(suite_name: str, result: dict, doc: Path = REPOSITORY / "BENCHMARKS.md") -> list:
    """Put the rendered tables of a result file into BENCHMARKS.md, each in place of the block of the same file and table.

    Returns
    -------
    list of str
        The blocks that have no place in the doc yet (to be placed by hand).
    """
    text, missing = doc.read_text(encoding="utf-8"), []
    for name, part in result["tables"].items():
        for view in views(suite_name, name, part):
            block = render(suite_name, name, part, view)
            label = name if view == name else f"{name}/{view}"
            marker = re.escape(f"`benchmarks/results/{suite_name}.json`, table `{label}`.")
            text, found = re.subn(r"^[^\n]*" + marker + r"\n\n(?:\|[^\n]*\|(?:\n|$))+", lambda _, block=block: block + "\n", text, count=1, flags=re.M)
            if not found:
                missing.append(block)
    doc.write_text(text, encoding="utf-8")
    return missing


# ------------------------------------------------------------------ the tuning evidence


class _Tuning:
    """The evidence for the tuning values: one table of rows recorded by hand, each with the command that measures it."""

    def arguments(self, parser) -> None:
        """No options: the rows' commands measure."""

    def measure(self, args) -> dict:
        raise SystemExit("tuning: each row names the command that measures it; this suite is rendered only (--table)")

    def table(self, name: str, part: dict) -> dict:
        header = ["tunable", "value", "alternatives tried", "effect", "code", "command"]
        rows = [[f"`{r['tunable']}`", r["value"], r["alternatives"], r["effect"], r["commit"], f"`{r['command']}`"] for r in part["rows"]]
        return {name: (header, rows)}


TUNING = _Tuning()


# ------------------------------------------------------------------ the command line


def parser(name: str) -> argparse.ArgumentParser:
    """The command line of one suite: the harness's options and the suite's own."""
    measuring = suite(name)
    parser = argparse.ArgumentParser(prog=f"run.py {name}", description=(measuring.__doc__ or "").strip().split("\n\n")[0])
    parser.add_argument("--table", action="store_true", help="print the tables of the result file and stop")
    parser.add_argument("--out", type=Path, default=RESULTS / f"{name}.json", help=f"the result file (default: benchmarks/results/{name}.json)")
    parser.add_argument("--code", help="the commit recorded for the code measured, when it is not this checkout's (e.g. another installation's)")
    parser.add_argument("--doc", action="store_true", help="also write the tables into BENCHMARKS.md, each in place of the block of the same file and table")
    measuring.arguments(parser)
    return parser


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    if not argv or argv[0] not in MODULES:
        print(__doc__.split("\n\n")[0] + "\n\nsuites: " + ", ".join(MODULES) + "\n\nusage: python benchmarks/run.py SUITE [--table] [options]", file=sys.stderr)
        return 0 if argv and argv[0] in ("-h", "--help") else 2
    name = argv[0]
    args = parser(name).parse_args(argv[1:])
    result = load(args.out)
    if not args.table:
        facts, code, command = machine(), args.code or commit(), shlex.join(["python", "benchmarks/run.py", *argv])
        result["suite"] = name
        for table_name, part in suite(name).measure(args):  # saved as each table grows: a run stopped part-way keeps what it measured
            part.setdefault("machine", {}).update({k: v for k, v in facts.items() if k not in part["machine"]})
            result["tables"][table_name] = {"command": command, "commit": code, **part}
            save(result, args.out)
    print("\n\n".join(blocks(name, result, args.out)))
    if args.doc:
        if args.out.resolve() != (RESULTS / f"{name}.json").resolve():
            raise SystemExit("run.py: --doc writes the tables of benchmarks/results/ only")
        for block in update_doc(name, result):
            print(f"run.py: not in BENCHMARKS.md yet, to be placed by hand:\n{block}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
