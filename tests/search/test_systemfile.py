"""Reading system files: solvediophant's text format (QOBLIB .dat its plain case) and .npz.

Solutions of every file read are compared with a brute force over the
file's own numbers (all 0/1 vectors of its full width, columns outside the
selection or with bound 0 held at 0), never with the reader's output.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from indexset.errors import InputError
from indexset.search.engines.brute import solve_system_brute
from indexset.search.systemfile import load_system, load_system_file


def sd_text(A, b, *, header=None, bounds=None, selected=None, before="", between="", after=""):
    """A system in solvediophant's format, one row per line."""
    lines = [before + (header or f"{len(A)} {len(A[0])} 1")]
    lines += [" ".join(map(str, row + [rhs])) for row, rhs in zip(A, b)]
    lines.append(between)
    if bounds is not None:
        lines += [f"BOUNDS {len(bounds)}", " ".join(map(str, bounds))]
    if selected is not None:
        lines += ["SELECTEDCOLUMNS", str(len(selected)), " ".join(map(str, selected))]
    return "\n".join(lines) + "\n" + after


def file_solutions(A, b, bounds=None, selected=None) -> list[list[int]]:
    """Every 0/1 vector of the file's width solving it, by brute force over the file's numbers."""
    n = len(A[0])
    selected = selected or [1] * n
    bounds = bounds or [1] * n
    positions = [j for j, flag in enumerate(selected) if flag]
    found = []
    for z in itertools.product((0, 1), repeat=len(selected)):
        x = [z[p] for p in positions]
        if any(z[j] for j, flag in enumerate(selected) if not flag) or any(v > bound for v, bound in zip(x, bounds)):
            continue
        if all(sum(a * v for a, v in zip(row, x)) == rhs for row, rhs in zip(A, b)):
            found.append(list(z))
    return sorted(found)


def read_solutions(path) -> list[list[int]]:
    loaded = load_system_file(path)
    return sorted(loaded.vector(s) for s in solve_system_brute(loaded.system.M, loaded.system.t, upper=loaded.system.upper))


def planted(rng, m, n):
    A = rng.integers(-3, 6, size=(m, n)).tolist()
    z = rng.integers(0, 2, size=n).tolist()
    return A, [sum(a * v for a, v in zip(row, z)) for row in A]


@pytest.mark.parametrize("seed", range(6))
def test_solutions_in_the_files_columns_match_brute_force(seed, tmp_path):
    rng = np.random.default_rng(seed)
    A, b = planted(rng, 2, 6)
    bounds = [int(v) for v in rng.integers(0, 2, size=6)] if seed % 2 else [1] * 6
    bounds[0] = 1
    flags = [1] * 6 + [0, 0]
    rng.shuffle(flags)
    flags = [int(v) for v in flags]
    path = tmp_path / "s.txt"
    path.write_text(sd_text(A, b, bounds=bounds, selected=flags))
    expected = file_solutions(A, b, bounds, flags)
    assert read_solutions(path) == expected
    loaded = load_system_file(path)
    assert loaded.width == 8 and loaded.system.n == sum(bounds)


def test_bounds_all_one_and_no_bounds_read_the_same(tmp_path):
    A, b = [[1, 2, 3, 4], [1, 1, 1, 1]], [5, 2]
    (tmp_path / "plain.txt").write_text(sd_text(A, b))
    (tmp_path / "ones.txt").write_text(sd_text(A, b, bounds=[1, 1, 1, 1]))
    expected = file_solutions(A, b)
    assert expected == [[0, 1, 1, 0], [1, 0, 0, 1]]
    assert read_solutions(tmp_path / "plain.txt") == read_solutions(tmp_path / "ones.txt") == expected


def test_header_without_the_one_comments_wrapped_rows_and_skipped_sections(tmp_path):
    A, b = [[3, 1, 4, 1, 5], [2, 7, 1, 8, 2]], [8, 4]
    text = ("% stopafter 1\n# generated\n\n2 5\n"
            "3 1 4\n1 5 8\n"            # row 1 wraps onto a second line
            "% a comment inside\n2 7 1 8 2 4\n"
            "STABILIZER-ORDER-K-SETS\n1 1 1 1 1\n"
            "GENERATORS\nASCII 3\nBOUNDS 9 inside a block is data\n5 4 3\nASCIIEND\n"
            "BOUNDS 5\n1 1\n1 1 1 7 7\n"  # numbers after the counted ones are left over, as solvediophant leaves them
            "200 200\n")
    path = tmp_path / "km.in"
    path.write_text(text)
    assert read_solutions(path) == file_solutions(A, b)
    assert load_system(path).M.tolist() == A


def test_qoblib_dat_and_npz_by_content(tmp_path):
    dat = tmp_path / "ms.dat"
    dat.write_text("# QOBLIB\n2 3\n  1   2   3   3\n  4   5   6   9\n")
    system = load_system(dat)
    assert system.M.tolist() == [[1, 2, 3], [4, 5, 6]] and system.t.tolist() == [3, 9]
    archive = tmp_path / "system.data"  # an .npz under another name: told by its content
    with open(archive, "wb") as handle:
        np.savez(handle, A=np.array([[1, 1, 1]]), b=np.array([2]))
    assert load_system_file(archive).system.n == 3


@pytest.mark.parametrize("name, text, words", [
    ("negative.txt", sd_text([[1, 1, 1]], [2], bounds=[1, -1, 1]), ["column 1", "bound -1"]),
    ("fewbounds.txt", sd_text([[1, 1, 1]], [2], bounds=[1, 1]), ["BOUNDS 2"]),
    ("freerhs_zero.txt", sd_text([[1, 1]], [0], before="% FREERHS\n"), ["FREERHS", "b = 0"]),
    ("header4.txt", sd_text([[1, 1]], [1], header="1 2 1 5"), ["header"]),
    ("header0.txt", sd_text([[1, 1]], [1], header="1 2 0"), ["third number"]),
    ("headerword.txt", sd_text([[1, 1]], [1], header="r 1 1"), ["header"]),
    ("headerzero.txt", sd_text([[1, 1]], [1], header="0 2"), ["positive"]),
    ("extra_rows.txt", "1 2 1\n1 1 1\n1 0 1\n", ["after the 1 rows"]),
    ("long_row.txt", "2 2 1\n1 1 1 1 0 1\n", ["more than"]),
    ("short_row.txt", "2 2 1\n1 1 1\n1 0\n", ["ends in row 2"]),
    ("word.txt", "1 2 1\n1 x 1\n", ["'x'"]),
    ("underscore.txt", "1 2 1\n1 1_0 1\n", ["1_0"]),
    ("selection.txt", sd_text([[1, 1]], [1], selected=[1, 0, 0]), ["flags 1 columns"]),
    ("selection2.txt", sd_text([[1, 1]], [1], selected=[1, 2]), ["0 or 1"]),
    ("cut.txt", "1 2 1\n1 1 1\nBOUNDS 2\n1\n", ["BOUNDS", "ends"]),
    ("named.txt", "1 2 1\n1 1 1\nMY-BOUNDS 2\n1 1\n", ["MY-BOUNDS"]),
    ("twice.txt", sd_text([[1, 1]], [1], bounds=[1, 1], after="BOUNDS 2\n1 1\n"), ["second BOUNDS"]),
    ("allzero.txt", sd_text([[1, 1]], [1], bounds=[0, 0]), ["every bound is 0"]),
    ("empty.txt", "% nothing\n\n", ["empty"]),
    ("binary.bin", "\x00\x01\x02 junk\n", ["header"]),
])
def test_bad_files_name_the_file_and_the_problem(name, text, words, tmp_path):
    path = tmp_path / name
    path.write_text(text)
    with pytest.raises(InputError) as caught:
        load_system_file(path)
    message = str(caught.value)
    assert message.startswith(str(path)) and "\n" not in message
    for word in words:
        assert word in message, message


def test_missing_file_and_bad_npz(tmp_path):
    for path in (tmp_path / "missing.txt", tmp_path):
        with pytest.raises(InputError, match="no such file"):
            load_system_file(path)
    np.savez(tmp_path / "noB.npz", A=np.array([[1]]))
    with pytest.raises(InputError, match="missing array"):
        load_system_file(tmp_path / "noB.npz")


@pytest.mark.parametrize("seed", range(4))
def test_bounded_files_read_every_bound_and_their_solutions_match_brute_force(seed, tmp_path):
    """BOUNDS above 1: bounded integers, solutions with their values in the file's columns (a brute force over the file's numbers)."""
    rng = np.random.default_rng(50 + seed)
    m, n = int(rng.integers(1, 3)), int(rng.integers(2, 5))
    A = rng.integers(-2, 5, size=(m, n)).tolist()
    bounds = rng.integers(0, 4, size=n).tolist()
    x = [int(rng.integers(0, u + 1)) for u in bounds]
    b = [sum(a * v for a, v in zip(row, x)) for row in A]
    path = tmp_path / "bounded.txt"
    path.write_text(sd_text(A, b, bounds=bounds))
    expected = sorted(list(z) for z in itertools.product(*(range(u + 1) for u in bounds))
                      if all(sum(a * v for a, v in zip(row, z)) == rhs for row, rhs in zip(A, b)))
    assert read_solutions(path) == expected and x in expected


def test_free_rhs_and_numbers_of_any_size_are_read_exactly(tmp_path):
    huge = 10**44 + 7
    path = tmp_path / "free.txt"
    path.write_text(sd_text([[1, 2, huge]], [huge], before="% a comment\n% FREERHS\n", bounds=[3, 1, 1]))
    loaded = load_system_file(path)
    assert loaded.free_rhs and loaded.system.M.tolist() == [[1, 2, huge]] and loaded.system.t.tolist() == [huge]
    assert loaded.system.bounds() == [3, 1, 1]
    plain = tmp_path / "plain.txt"
    plain.write_text(sd_text([[1, 1]], [1]))
    assert not load_system_file(plain).free_rhs


def test_npz_with_upper_bounds(tmp_path):
    path = tmp_path / "bounded.npz"
    np.savez(path, A=np.array([[1, 2, 3]]), b=np.array([7]), upper=np.array([5, 0, 2]))
    system = load_system(path)
    assert system.bounds() == [5, 0, 2]
    assert sorted(solve_system_brute(system.M, system.t, upper=system.upper)) == [[1, 0, 2], [4, 0, 1]]
    bad = tmp_path / "negative.npz"
    np.savez(bad, A=np.array([[1, 2]]), b=np.array([1]), upper=np.array([1, -1]))
    with pytest.raises(InputError, match="nonnegative"):
        load_system(bad)
