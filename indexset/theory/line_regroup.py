"""Witnesses for stacks of three or more blocks on R from decisions about fewer: groups and rewrites (MATH.md §9.5, Propositions 9.9b, 9.9c).

Both are sufficient searches only: a witness need not respect a grouping,
and a rewrite search follows one witness per pair. The decisions they call
come from :mod:`indexset.theory.line_stacks`, passed in as functions (that
module imports this one).
"""

from __future__ import annotations

from indexset.budget import Budget
from indexset.model.stack import Stack
from indexset.result import ABSORBABLE
from indexset.theory.line import LineMap, block_map, block_values


def grouped(stack, n: int, clock: Budget, decide, single=block_values) -> tuple | None:
    """Proposition 9.9b: consecutive groups of blocks, each equal to a residual-free stack of its own length.

    A single block is decided by ``single`` (its map and n to its weights,
    or None: Lemma 9.5's :func:`block_values` by default), a group of two or
    more by ``decide`` (the line decision of the class) on it; groups are
    found left to right, the longest first, each segment decided once. The
    whole stack is not one of the groups.

    Returns
    -------
    tuple or None
        ``(groups, values)``: the groups as (first, last) block numbers from
        1, and per block the residual-free weights; None when no cover by
        such groups was found.
    """
    layers = stack.L
    memo: dict = {}

    def witness(start: int, end: int):
        if (start, end) not in memo:
            if end - start == 1:
                found = single(block_map(stack.blocks[start]), n)
                memo[start, end] = None if found is None else [found]
            else:
                verdict = decide(Stack(list(stack.blocks[start:end])), time_limit=clock.remaining(), stop=clock.stop, width=n)
                memo[start, end] = verdict.witness if verdict.status == ABSORBABLE else None
        return memo[start, end]

    def cover(start: int) -> list | None:
        if start == layers:
            return []
        for end in range(layers, start, -1):
            if (start, end) == (0, layers) or clock.expired():
                continue
            if witness(start, end) is not None:
                rest = cover(end)
                if rest is not None:
                    return [(start, end), *rest]
        return None

    groups = cover(0)
    if groups is None:
        return None
    values = [v for start, end in groups for v in memo[start, end]]
    return [(start + 1, end) for start, end in groups], values


def rewritten(maps: list, n: int, clock: Budget, pair, most_rewrites: int, single=block_values) -> list | None:
    """Proposition 9.9c: adjacent maps replaced by two residual-free blocks with their composite, until every map is one.

    ``maps``: the blocks' maps; ``pair(first, second)``: two residual-free
    block maps of width n whose composite is ``second ∘ first``, or None;
    ``single`` tells a residual-free block's map (as in :func:`grouped`).
    Breadth first over at most ``most_rewrites`` rewrites, each sequence of
    maps met once.

    Returns
    -------
    list of LineMap or None
        Residual-free block maps of width n composing to the same function.
    """
    def free(g: LineMap) -> bool:
        return single(g, n) is not None

    frontier, seen = [tuple(maps)], {tuple(maps)}
    for _ in range(most_rewrites):
        ahead = []
        for state in frontier:
            for i in range(len(state) - 1):
                if clock.expired():
                    return None
                if free(state[i]) and free(state[i + 1]):
                    continue
                found = pair(state[i], state[i + 1])
                if found is None:
                    continue
                new = (*state[:i], *found, *state[i + 2:])
                if all(free(g) for g in new):
                    return list(new)
                if new not in seen:
                    seen.add(new)
                    ahead.append(new)
        frontier = ahead
    return None
