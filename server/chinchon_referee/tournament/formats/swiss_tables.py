"""A Swiss round at tables of 3 or more: grouped by score.

A matching pairs two bots; for tables of k >= 3 the round is formed greedily, in the
pairing order (points, then pairing number):

1. **byes**: when the bots are not a multiple of k, the n mod k bots with the fewest
   byes so far sit out, the lowest-ranked first;
2. **tables**: the best-ranked bot not yet seated heads a table; the other k - 1 seats
   go, one at a time, to the bot not yet seated that has met the table's bots least
   often, then is closest to the head in points, then is ranked highest. Candidates are
   looked for among the next 4k bots in the order first, then among all of them when
   each of those would repeat a meeting;
3. **seats**: a table's seat order puts first the bot that has sat in seat 0 least
   often (then the better ranked); its games rotate the seats from there.

So tables hold bots of equal or close points, and meetings repeat only when the bots
near in the standings have all met.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from .swiss import UNIT, History, Round, ranked


def group(seeds: Sequence[str], h: History, k: int) -> Round:
    """The next round of a Swiss at tables of ``k`` (3 or more)."""
    order = ranked(seeds, h.points)
    rank = {b: i for i, b in enumerate(order)}
    sit = len(order) % k
    byes = sorted(order, key=lambda b: (h.byes.get(b, 0), -rank[b]))[:sit]
    left = [b for b in order if b not in set(byes)]
    tables = []
    while left:
        head = left.pop(0)
        table = [head]
        while len(table) < k:
            pick = _best(table, left, h, 4 * k)
            left.remove(pick)
            table.append(pick)
        tables.append(tuple(_seat_order(table, h.seats, rank)))
    return Round(tuple(tables), tuple(sorted(byes, key=lambda b: rank[b])))


def _best(table: list[str], left: list[str], h: History, window: int) -> str:
    def cost(b: str) -> tuple[int, int, int]:
        met = sum(h.met.get(frozenset((b, t)), 0) for t in table)
        gap = abs(round((h.points.get(b, 0.0) - h.points.get(table[0], 0.0)) * UNIT))
        return met, gap, left.index(b)

    near = left[:window]
    best = min(near, key=cost)
    if cost(best)[0] > 0 and len(left) > window:
        best = min(left, key=cost)
    return best


def _seat_order(table: list[str], seats: Mapping[str, int], rank: Mapping[str, int]) -> list[str]:
    first = min(table, key=lambda b: (seats.get(b, 0), rank[b]))
    rest = [b for b in table if b != first]
    return [first, *rest]
