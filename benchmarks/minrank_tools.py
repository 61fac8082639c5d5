"""Exact tools on the open rank sub-case of a degenerate block (MATH.md §7.6–7.7): does one decide rank(B(z)) ≤ 1?

Solves the block (default: the d = 5, n = 70 block with weights in
[−2, 2] that BENCHMARKS.md, "Degenerate weights", names), keeps every
rank question that §7 leaves open, and gives the first one to each tool
of ``--tools``, each under ``--seconds``. CP-SAT in two exact forms:

- ``factors``: B(z) = a·bᵀ with integer a and b in the boxes of Lemma 7.7a
  (rank ≤ 1 over Q holds exactly when such a and b exist), as products
  ``AddMultiplicationEquality(B_ij, [a_i, b_j])``;
- ``minors``: every 2 × 2 minor of B(z) is 0, each product of two entries
  one product constraint.

Every entry B_ij(z) = B0_ij + Σ_k z_k e_k[i] r_k[j] is an integer variable
within its bound M_ij = |B0_ij| + Σ_k |e_k[i] r_k[j]|. And one system of
Lemma 7.7c (``modp``): for one annihilator X of a line mod ``--prime``,
drawn at random among those Lemma 7.4d enumerates, the
congruences X·B(z) ≡ 0 as a bounded integer
system (one slack unknown per congruence), decided by ``decide_system``
under ``--seconds``; the lemma needs one such system per line,
[d, 1]_p = (pᵈ − 1)/(p − 1) of them. And the systems of Lemma 7.7e
(``boxes``): the lemma's count of primitive a and b in their boxes, and
``--samples`` of its 0/1 systems (col B(z) ⊆ span a, or row B(z) ⊆ span b,
for a and b drawn from the boxes), each decided by ``decide_system``, to
give the seconds per system that the whole count would cost (the decision
itself predicts the same way, from its first systems). Prints each
tool's status and seconds (CP-SAT's branches and conflicts; with
``FEASIBLE`` the chosen terms). ``short`` decides the systems themselves,
as the decision does, for ``--part k/K`` (K processes, one share each),
under ``--seconds``, and prints the answer as JSON. ``planes`` runs the
decision's complete pass over level u = 2 alone (its 0/1 sub-cases), which
the decision leaves to its probe once level 0 is open.

Usage::

    python benchmarks/minrank_tools.py [--tools factors,minors,modp] [--seed 0] [--d 5] [--n 70] [--range 2] \
        [--seconds 60] [--workers 2] [--prime 13] [--samples 40]
"""

from __future__ import annotations

import argparse
import itertools
import json
import random
import time

import numpy as np
from ortools.sat.python import cp_model

import indexset
import indexset.theory.flats as flats
import indexset.theory.lowrank as lowrank
from indexset.budget import Budget
from indexset.search.decide import decide_system
from indexset.search.system import plain_system
from indexset.theory.degenerate_tuning import DegenerateTuning
from indexset.theory.shortside import decide_short_side, direction_system, entry_bounds, short_plan, short_vectors


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


def congruence_system(question, prime: int, rng: random.Random):
    """Lemma 7.7c's system for one annihilator X of a line mod ``prime``, drawn among those the lemma enumerates: X·B(z) ≡ 0 with a slack unknown per congruence."""
    d, m = question.d, len(question.columns)
    count = lowrank._gaussian_binomial(d, d - 1, prime)  # the annihilators of the lines of F_p^d, in Lemma 7.4d's order
    X = next(itertools.islice(lowrank._subspace_bases(d, d - 1, prime), rng.randrange(count), None))
    terms = np.array([(X @ np.outer(question.columns[k], question.rows[k])).reshape(-1) for k in range(m)]).T
    rhs = -(X @ np.array(question.base)).reshape(-1)
    low = np.minimum(terms, 0).sum(axis=1) - rhs  # terms·z − rhs lies in [low, high] and equals −prime·y
    high = np.maximum(terms, 0).sum(axis=1) - rhs
    y_low, y_high = -(high // prime), (-low) // prime
    M = np.hstack([terms, prime * np.eye(len(rhs), dtype=np.int64)])
    upper = [1] * m + [int(v) for v in y_high - y_low]
    return X, count, plain_system(M.astype(object), (rhs - prime * y_low).astype(object), upper=upper)


def box_systems(question, samples: int, seed: int, seconds: float) -> None:
    """Lemma 7.7e: count the systems of its boxes, and time ``samples`` of them drawn at random."""
    plan = short_plan(question)
    print(f"boxes: N ≤ {max(max(row) for row in entry_bounds(question))}, limits of a {list(plan.a_limits)}, of b {list(plan.b_limits)}: {plan.count} systems")
    directions = [(a, "column") for a in short_vectors(plan.a_limits)] + [(b, "row") for b in short_vectors(plan.b_limits)]
    rng = random.Random(seed)
    times, statuses = [], {}
    for vector, side in rng.sample(directions, samples):
        system = direction_system(question, vector, side)
        began = time.perf_counter()
        result = decide_system(system, budget=Budget.of(seconds), seed=seed)
        times.append(time.perf_counter() - began)
        statuses[result.status] = statuses.get(result.status, 0) + 1
    times.sort()
    median = times[len(times) // 2]
    print(f"boxes: {samples} systems {statuses}, seconds per system median {median:.3f}, max {times[-1]:.3f}; the count at the median: {plan.count * median / 3600:.1f} hours")


def short_part(question, part: tuple, seconds: float) -> None:
    """Decide part k of K of Lemma 7.7e's systems (the positions ≡ k mod K), as the decision does, and print the answer as JSON."""
    plan = short_plan(question)
    tuning = DegenerateTuning(max_short_seconds=float("inf"))
    began = time.perf_counter()
    answer = decide_short_side(question, plan, tuning, Budget.of(seconds), part=part)
    print(
        json.dumps(
            {"part": list(part), "systems": plan.count, "status": answer.status, "how": answer.how, "decided": answer.done, "chosen": answer.chosen, "seconds": round(time.perf_counter() - began, 1)}
        ),
        flush=True,
    )


def planes(instance: indexset.Instance) -> None:
    """The decision's complete pass over level u = 2 alone (every plane a 0/1 sub-case), which it leaves to its probe once level 0 is open."""
    import math

    from indexset.theory.canonical import classes_of

    _, classes = classes_of(instance)
    data = flats.class_data(classes)
    top = flats._rank_of(data.lines, data.d)
    level = flats.Level(2, (data.spare - 2) // 2, math.comb(len(set(data.lines)), 2))
    began = time.perf_counter()
    plan = flats._run_level(data, level, flats._flat_bases(data, 2, top), Budget.of(), DegenerateTuning())
    print(
        json.dumps(
            {
                "levels": flats.levels_of(data.spare, top),
                "level": 2,
                "q": level.q,
                "found": plan is not None,
                "flats": level.flats,
                "refuted": level.refuted,
                "open": len(level.open),
                "seconds": round(time.perf_counter() - began, 1),
            }
        ),
        flush=True,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--d", type=int, default=5)
    parser.add_argument("--n", type=int, default=70)
    parser.add_argument("--range", type=int, default=2, help="integer weights in [−R, R]")
    parser.add_argument("--seconds", type=float, default=60.0, help="CP-SAT's limit per form")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--tools", default="factors,minors,modp")
    parser.add_argument("--prime", type=int, default=13, help="the modulus of the modp system")
    parser.add_argument("--samples", type=int, default=40, help="systems of the boxes tool to time")
    parser.add_argument("--part", default="0/1", help="the short tool's share: k/K decides the systems at positions ≡ k mod K")
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
    tools = args.tools.split(",")
    if "boxes" in tools:
        box_systems(question, args.samples, args.seed, args.seconds)
    if "planes" in tools:
        planes(instance)
    if "short" in tools:
        short_part(question, tuple(int(v) for v in args.part.split("/")), args.seconds)
    if "modp" in tools:
        X, count, system = congruence_system(question, args.prime, random.Random(args.seed))
        began = time.perf_counter()
        result = decide_system(system, budget=Budget.of(args.seconds), seed=args.seed)
        print(
            f"modp: annihilator {X.tolist()} mod {args.prime} (one of {count}), {system.M.shape[0]} congruences, {system.M.shape[1]} unknowns: {result.status} in {time.perf_counter() - began:.1f} s"
        )
    for form in (tool for tool in tools if tool in ("factors", "minors")):
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
