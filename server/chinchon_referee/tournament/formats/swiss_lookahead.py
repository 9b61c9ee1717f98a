"""Looking ahead in a small Swiss: pair a round so that the rounds after it can still be
paired without a repeat.

Pairing round by round, the best pairing of one round can leave a graph of unplayed
pairs that has no perfect matching later (6 bots, 5 rounds: after 3 rounds the pairs
left may form two triangles). Up to :data:`LOOKAHEAD` bots (with the bye's dummy), a
round's pairing is therefore chosen among those after which the remaining rounds can
be completed without a repeat (the search is bounded by :data:`BUDGET` steps; past
it, a pairing counts as completable). Above that size, and for the rounds up to half
the field (where, every bot having more unplayed opponents than half the field, a
pairing without a repeat always exists: Dirac's theorem), each round alone is best.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence

#: Most vertices (bots, and the bye's dummy) paired with lookahead.
LOOKAHEAD = 12
#: Most search steps (matchings tried) for one round.
BUDGET = 20_000

Edge = tuple[int, int]


class _Budget:
    def __init__(self, steps: int) -> None:
        self.left = steps

    def spend(self) -> bool:
        self.left -= 1
        return self.left >= 0


def perfect_matchings(nodes: Sequence[int], edges: set[Edge]) -> Iterator[list[Edge]]:
    """Every perfect matching of ``nodes`` using ``edges`` (each (low, high))."""
    adj: dict[int, list[int]] = {v: [] for v in nodes}
    for a, b in edges:
        if a in adj and b in adj:
            adj[a].append(b)
            adj[b].append(a)

    def rec(free: frozenset[int]) -> Iterator[list[Edge]]:
        if not free:
            yield []
            return
        # The vertex with the fewest free neighbours first: dead ends show at once.
        v = min(free, key=lambda x: (sum(1 for y in adj[x] if y in free), x))
        for u in sorted(y for y in adj[v] if y in free):
            for rest in rec(free - {u, v}):
                yield [(min(u, v), max(u, v)), *rest]

    yield from rec(frozenset(nodes))


def completable(nodes: Sequence[int], edges: set[Edge], rounds: int, budget: _Budget,
                memo: dict[frozenset[Edge], bool] | None = None) -> bool | None:
    """Whether ``rounds`` edge-disjoint perfect matchings fit in ``edges``; None when
    the budget ran out before it could tell."""
    if rounds == 0:
        return True
    memo = {} if memo is None else memo
    key = frozenset(edges)
    if key in memo:
        return memo[key]
    for m in perfect_matchings(nodes, edges):
        if not budget.spend():
            return None
        found = completable(nodes, edges - set(m), rounds - 1, budget, memo)
        if found is None:
            return None
        if found:
            memo[key] = True
            return True
    memo[key] = False
    return False


def best_completable(nodes: Sequence[int], fresh: set[Edge], later: int, best: list[Edge],
                     rank: Callable[[list[Edge]], tuple[int, ...]]) -> list[Edge]:
    """``best`` if the rounds after it can be completed (or the search cannot tell);
    else the best-ranked pairing of fresh pairs after which they can; else ``best``."""
    budget = _Budget(BUDGET)
    if completable(nodes, fresh - set(best), later, budget) is not False:
        return best
    found: list[tuple[tuple[int, ...], list[Edge]]] = []
    memo: dict[frozenset[Edge], bool] = {}
    for m in perfect_matchings(nodes, fresh):
        if not budget.spend():
            break
        ok = completable(nodes, fresh - set(m), later, budget, memo)
        if ok is None:
            break
        if ok:
            found.append((rank(m), sorted(m)))
    return min(found)[1] if found else best
