"""``indexset solve-system`` on solvediophant-format files, one or several per call, in real subprocesses.

Expected answers come from a brute force over each file's numbers and,
for the Steiner triple systems on 7 points, from the orbit of one Fano
plane under all 5040 permutations of the points, never from an earlier run.
Processes run two at a time (the machine has two cores).
"""

from __future__ import annotations

import itertools
import json
import subprocess
import sys
import threading
from concurrent.futures import ThreadPoolExecutor

import pytest

from indexset.budget import TIME_LIMIT
from indexset.cli.common import BAD_INPUT, run_files
from indexset.errors import InputError

CLI = [sys.executable, "-m", "indexset", "solve-system"]
HANG_S = 120  # a guard against a hung process, not a timing assertion

# Column 2 is not selected (0 in every solution) and the header's third number says a right-hand side follows.
TINY_A = [[3, 1, 4, 1, 5], [1, 1, 1, 1, 1]]
TINY_B = [9, 3]
TINY_FLAGS = [1, 1, 0, 1, 1, 1]
TINY = ("% a 0/1 system\n2 5 1\n3 1 4 1 5 9\n1 1 1 1 1 3\n\nBOUNDS 5\n1 1 1 1 1\n"
        "SELECTEDCOLUMNS\n6\n1 1 0 1 1 1\n")


def brute(A, b, flags) -> list[list[int]]:
    """Every 0/1 vector of the file's width solving it, columns flagged 0 held at 0."""
    positions = [j for j, flag in enumerate(flags) if flag]
    found = []
    for z in itertools.product((0, 1), repeat=len(flags)):
        x = [z[p] for p in positions]
        if all(z[j] == 0 for j, flag in enumerate(flags) if not flag) and all(
                sum(a * v for a, v in zip(row, x)) == rhs for row, rhs in zip(A, b)):
            found.append(list(z))
    return sorted(found)


def fano_orbit() -> int:
    """The number of Steiner triple systems on 7 labelled points: the orbit of one Fano plane under S_7."""
    fano = [(0, 1, 2), (0, 3, 4), (0, 5, 6), (1, 3, 5), (1, 4, 6), (2, 3, 6), (2, 4, 5)]
    return len({frozenset(tuple(sorted(p[i] for i in line)) for line in fano) for p in itertools.permutations(range(7))})


def km_text() -> str:
    """The Kramer-Mesner system of 2-(7,3,1) designs, trivial group, shaped like solvediophant's KM files."""
    pairs = list(itertools.combinations(range(7), 2))
    triples = list(itertools.combinations(range(7), 3))
    rows = [" ".join("1" if set(pair) <= set(triple) else "0" for triple in triples) + " 1" for pair in pairs]
    ones = " ".join("1" for _ in triples)
    return ("% group: trivial\n% t, k:\n% 2 3\n%\n" + f"{len(pairs)} {len(triples)} 1\n" + "\n".join(rows) + "\n"
            f"STABILIZER-ORDER-K-SETS\n{ones}\nSELECTEDCOLUMNS\n{len(triples)}\n{ones}\n")


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    folder = tmp_path_factory.mktemp("systems")
    texts = {
        "tiny": TINY,
        "none": "1 3 1\n2 4 6 5\n",            # even coefficients, odd right-hand side: infeasible
        "bound2": "1 3 1\n1 1 1 2\nBOUNDS 3\n1 -2 1\n",
        "header": "2 3 x\n1 1 1 1\n1 0 1 1\n",
        "km": km_text(),
    }
    paths = {}
    for name, text in texts.items():
        paths[name] = str(folder / f"{name}.txt")
        (folder / f"{name}.txt").write_text(text)
    return paths


def run_all(commands: dict) -> dict:
    def one(argv):
        return subprocess.run(CLI + argv, capture_output=True, text=True, timeout=HANG_S)

    with ThreadPoolExecutor(2) as pool:
        done = dict(zip(commands, pool.map(one, commands.values())))
    for name, process in done.items():
        assert "Traceback" not in process.stderr, (name, process.stderr)
    return done


def test_solve_system_on_solvediophant_files(files):
    f = files
    done = run_all({
        "tiny": [f["tiny"], "--all", "--json"],
        "km": [f["km"], "--count", "--json"],
        "bound2": [f["bound2"]],
        "header": [f["header"], "--json"],
        "batch": [f["tiny"], f["none"], f["bound2"], f["km"], "--json"],
        "batch_no": [f["tiny"], f["none"]],
        "batch_yes": [f["tiny"], f["km"], "--count", "--json"],
    })
    codes = {name: process.returncode for name, process in done.items()}
    assert codes == {"tiny": 0, "km": 0, "bound2": 2, "header": 2, "batch": 2, "batch_no": 1, "batch_yes": 0}, \
        {name: done[name].stderr for name in codes}

    expected = brute(TINY_A, TINY_B, TINY_FLAGS)
    assert expected  # the reference has solutions to compare
    tiny = json.loads(done["tiny"].stdout)
    assert sorted(tiny["solutions"]) == expected and tiny["count"] == len(expected) and tiny["file"] == f["tiny"]
    assert tiny["stages"]["system"] == {"equations": len(TINY_B), "unknowns": sum(TINY_FLAGS), "max_bits": max(abs(v) for row in TINY_A + [TINY_B] for v in row).bit_length()}
    assert json.loads(done["km"].stdout)["count"] == fano_orbit()

    # bad input: one line on stderr naming the file and the problem, nothing on stdout
    for name, words in (("bound2", ["bound -2"]), ("header", ["header"])):
        assert done[name].stdout == "" and len(done[name].stderr.splitlines()) == 1, name
        assert f[name] in done[name].stderr and all(word in done[name].stderr for word in words), done[name].stderr

    # JSON Lines: one object per file, in order; the bad file reported, the others still solved
    lines = [json.loads(line) for line in done["batch"].stdout.splitlines()]
    assert [(p["file"], p["status"]) for p in lines] == [
        (f["tiny"], "feasible"), (f["none"], "infeasible"), (f["bound2"], BAD_INPUT), (f["km"], "feasible")]
    assert "bound -2" in lines[2]["reason"]
    assert done["batch"].stderr.count("indexset: error:") == 1
    firsts = [line for line in done["batch_no"].stdout.splitlines() if not line.startswith(" ")]
    assert firsts == [f"{f['tiny']}: FEASIBLE", f"{f['none']}: INFEASIBLE"]
    counts = [json.loads(line)["count"] for line in done["batch_yes"].stdout.splitlines()]
    assert counts == [len(expected), fano_orbit()]


class Job:
    """A stand-in for a command: 'bad' files fail to load, the rest answer the code in their name."""

    def __init__(self, stop_after=None, start_error=False):
        self.stop, self.as_json, self.started, self.stop_after, self.start_error = threading.Event(), True, 0, stop_after, start_error

    def load(self, path):
        if path == "bad":
            raise InputError(path, "unreadable")
        return int(path)

    def start(self, stack):
        if self.start_error:
            raise InputError("--scheduler", "cannot connect")
        self.started += 1

    def solve(self, path, loaded, since):
        if path == self.stop_after:
            self.stop.set()
        return loaded


def test_run_files_reports_bad_and_unsolved_files(capsys):
    job = Job()
    assert run_files(["0", "bad", "1"], job) == 2 and job.started == 1
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [line["status"] for line in lines] == [BAD_INPUT]
    job = Job(stop_after="1")
    assert run_files(["1", "0", "0"], job) == 3
    assert [json.loads(line)["status"] for line in capsys.readouterr().out.splitlines()] == ["unknown", "unknown"]
    with pytest.raises(InputError, match="unreadable"):
        run_files(["bad"], Job())
    with pytest.raises(InputError, match="--scheduler"):
        run_files(["bad", "0"], Job(start_error=True))  # an option's problem refuses the whole call
    for codes in itertools.product("0132", repeat=3):
        expected = 2 if "2" in codes else 3 if "3" in codes else 1 if "1" in codes else 0
        assert run_files(list(codes), Job()) == expected, codes


def test_a_time_limit_cut_short_is_unknown_and_says_so(tmp_path):
    """Every 2-(7,3,1) design counted under a millisecond: exit 3 with ``halted``, or the full count (exit 0)."""
    path = tmp_path / "km7.txt"
    path.write_text(km_text())
    done = subprocess.run([*CLI, str(path), "--count", "--json", "--time-limit", "0.001"], capture_output=True, text=True,
                          timeout=HANG_S)
    payload = json.loads(done.stdout)
    if payload["status"] == "unknown":
        assert done.returncode == 3 and payload["halted"] == TIME_LIMIT
    else:
        assert done.returncode == 0 and payload["count"] == fano_orbit() and payload["halted"] is None
