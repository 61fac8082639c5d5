"""CP-SAT on the open rank sub-case of a degenerate block (MATH.md §7.6–7.7): does it decide rank(B(z)) ≤ 1?

Solves the block (default: the d = 5, n = 70 block with weights in
[−2, 2] that BENCHMARKS.md, "Degenerate weights", names), keeps every
rank question that §7 leaves open, and gives the first one to CP-SAT in
two exact forms, each under ``--seconds``:

- ``factors``: B(z) = a·bᵀ with integer a and b in the boxes of Lemma 7.7a
  (rank ≤ 1 over Q holds exactly when such a and b exist), as products
  ``AddMultiplicationEquality(B_ij, [a_i, b_j])``;
- ``minors``: every 2 × 2 minor of B(z) is 0, each product of two entries
  one product constraint.

Every entry B_ij(z) = B0_ij + Σ_k z_k e_k[i] r_k[j] is an integer variable
within its bound M_ij = |B0_ij| + Σ_k |e_k[i] r_k[j]|. Prints CP-SAT's status,
seconds, branches and conflicts per form; with ``FEASIBLE`` the chosen terms.

Usage::

    python benchmarks/minrank_cpsat.py [--seed 0] [--d 5] [--n 70] [--range 2] [--seconds 60] [--workers 2]
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from ortools.sat.python import cp_model

import indexset
import indexset.theory.flats as flats


def open_questions(instance: indexset.Instance, seconds: float) -> list:
    """The rank questions that §7 leaves open on ``instance`` (kept as the decision asks them)."""
    asked, decide = [], flats.decide_rank

    def keep(question, tuning, budget):
        answer = decide(question, tuning, budget)
        if answer.status == "open":
            asked.append(question)
        return answer

    flats.decide_rank = keep
    try:
        indexset.solve(instance, time_limit=seconds)
    finally:
        flats.decide_rank = decide
    return asked


def model(question, form: str) -> tuple[cp_model.CpModel, list]:
    """CP-SAT's model of rank(B(z)) ≤ 1 in ``form`` (``factors`` or ``minors``), and its 0/1 unknowns z."""
    base, columns, rows = question.base, question.columns, question.rows
    d, w, m = question.d, question.w, len(columns)
    bound = [[abs(base[i][j]) + sum(abs(columns[k][i] * rows[k][j]) for k in range(m)) for j in range(w)] for i in range(d)]
    cp = cp_model.CpModel()
    z = [cp.NewBoolVar(f"z{k}") for k in range(m)]
    B = [[cp.NewIntVar(-bound[i][j], bound[i][j], f"B{i}_{j}") for j in range(w)] for i in range(d)]
    for i in range(d):
        for j in range(w):
            cp.Add(B[i][j] == base[i][j] + sum(columns[k][i] * rows[k][j] * z[k] for k in range(m) if columns[k][i] * rows[k][j]))
    if form == "factors":
        a = [cp.NewIntVar(-max(bound[i]), max(bound[i]), f"a{i}") for i in range(d)]
        b = [cp.NewIntVar(-max(bound[i][j] for i in range(d)), max(bound[i][j] for i in range(d)), f"b{j}") for j in range(w)]
        for i in range(d):
            for j in range(w):
                cp.AddMultiplicationEquality(B[i][j], [a[i], b[j]])
        return cp, z
    products = {}

    def product(first, second):
        key = tuple(sorted((first, second)))
        if key not in products:
            (i, j), (k, col) = key
            most = bound[i][j] * bound[k][col]
            products[key] = cp.NewIntVar(-most, most, f"P{i}_{j}_{k}_{col}")
            cp.AddMultiplicationEquality(products[key], [B[i][j], B[k][col]])
        return products[key]

    for i in range(d):
        for k in range(i + 1, d):
            for j in range(w):
                for col in range(j + 1, w):
                    cp.Add(product((i, j), (k, col)) == product((i, col), (k, j)))
    return cp, z


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--d", type=int, default=5)
    parser.add_argument("--n", type=int, default=70)
    parser.add_argument("--range", type=int, default=2, help="integer weights in [−R, R]")
    parser.add_argument("--seconds", type=float, default=60.0, help="CP-SAT's limit per form")
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    R = args.range
    instance = indexset.Instance(rng.integers(-R, R + 1, (args.n, args.d)), rng.integers(-R, R + 1, (args.d, args.n)))
    questions = open_questions(instance, 40.0)
    print(f"open rank questions: {len(questions)}")
    if not questions:
        return
    question = questions[0]
    print(f"d {question.d}, w {question.w}, terms {len(question.columns)}, q {question.q}")
    for form in ("factors", "minors"):
        cp, z = model(question, form)
        solver = cp_model.CpSolver()
        solver.parameters.max_time_in_seconds = args.seconds
        solver.parameters.num_workers = args.workers
        began = time.perf_counter()
        status = solver.Solve(cp)
        print(f"{form}: {solver.StatusName(status)} in {time.perf_counter() - began:.1f} s, branches {solver.NumBranches()}, conflicts {solver.NumConflicts()}")
        if status in (cp_model.OPTIMAL, cp_model.FEASIBLE):
            print("  terms chosen:", [k for k in range(len(z)) if solver.Value(z[k])])


if __name__ == "__main__":
    main()
