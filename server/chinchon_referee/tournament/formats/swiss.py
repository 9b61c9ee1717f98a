"""Pairing a Swiss round at tables of two: a maximum-weight perfect matching.

The bots are ranked for pairing by points, then by pairing number (their seed). With
an odd number of bots a dummy "bye" vertex joins them; the bot matched to it sits the
round out. Every possible pair (and every bot's bye) is an edge, weighted so that a
heavier matching is better by these rules, each one absolutely before the next:

1. **no repeats**: fewer pairs that met before (and byes to bots that had one): a
   pairing that repeats nothing is chosen whenever one exists;
2. **the bye** goes to the lowest-ranked bot that has not had one;
3. **equal or close points**: the smallest sum of squared point differences (pairs of
   one score group first; then a bot "floats" to the nearest group);
4. **top half against bottom half** within a score group (the Dutch system: in a
   group of 2h bots, the i-th meets the (i + h)-th; round 1 pairs seed 1 with seed
   n/2 + 1), floaters from the edges of their groups;
5. **seats**: with an odd number of games per pairing, fewer pairs of two bots that
   are both owed seat 0 (or both seat 1).

Each rule is a digit of the weight in a base larger than the whole range of the rules
after it over a matching, so the weights are exact integers and networkx's
``max_weight_matching`` (Edmonds' blossom algorithm; ``maxcardinality=True``, so
everyone is paired) finds the best pairing by rule 1, then 2, and so on.

A small field (up to 12 bots) is paired looking ahead: among the pairings best by these
rules, one after which the remaining rounds can still be paired without a repeat
(:mod:`.swiss_lookahead`).

The blossom algorithm takes O(n^3): fields above :data:`BAND` bots are cut, in ranking
order, into bands of :data:`BAND` paired separately (the dummy in the last one); a
band that could only be paired with a repeat is merged with its neighbour and paired
again, up to the whole field, so rule 1 holds exactly at any size (docs/benchmarks.md:
1,000 bots).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from .swiss_lookahead import LOOKAHEAD, best_completable

#: Fields larger than this are paired in bands of this many bots.
BAND = 64
#: Points are compared in units of 1/840 (a share of a game among up to 8 winners is exact).
UNIT = 840


@dataclass(frozen=True)
class History:
    """What the pairing reads about the rounds played."""

    points: Mapping[str, float]
    #: Times each pair has met.
    met: Mapping[frozenset[str], int]
    byes: Mapping[str, int]
    #: Games in seat 0 minus games in seat 1.
    seats: Mapping[str, int]


@dataclass(frozen=True)
class Round:
    #: Each pair, seat 0 first (the bot owed seat 0), best table first.
    tables: tuple[tuple[str, ...], ...]
    byes: tuple[str, ...]


def ranked(seeds: Sequence[str], points: Mapping[str, float]) -> list[str]:
    """Pairing order: points, then pairing number."""
    num = {b: i for i, b in enumerate(seeds)}
    return sorted(seeds, key=lambda b: (-round(points.get(b, 0.0) * UNIT), num[b]))


def pair(seeds: Sequence[str], h: History, odd_games: bool, band: int = BAND,
         later: int = 0) -> Round:
    """The next round of a Swiss of ``seeds`` (seed order) after history ``h``;
    ``later``: rounds still to pair after this one (a small field is paired so that
    they can be, :mod:`.swiss_lookahead`)."""
    order = ranked(seeds, h.points)
    bye = len(order) % 2 == 1
    if later and len(order) + bye <= LOOKAHEAD:
        return _finish(order, _ahead(order, h, odd_games, bye, later), h)
    bands = _bands(len(order), bye, band)
    memo: dict[tuple[tuple[int, ...], bool], tuple[list[tuple[int, int]], int]] = {}
    while True:
        chosen: list[list[tuple[int, int]]] = []
        for i, members in enumerate(bands):
            key = (tuple(members), bye and i == len(bands) - 1)
            if key not in memo:
                memo[key] = _match(order, members, key[1], h, odd_games)
            pairs, repeats = memo[key]
            if repeats and len(bands) > 1:
                j = i + 1 if i + 1 < len(bands) else i - 1
                lo, hi = min(i, j), max(i, j)
                bands[lo:hi + 1] = [bands[lo] + bands[hi]]
                break
            chosen.append(pairs)
        else:
            break
    return _finish(order, [p for pairs in chosen for p in pairs], h)


def _finish(order: Sequence[str], pairs: Sequence[tuple[int, int]], h: History) -> Round:
    """The round of these pairs of positions (the dummy's partner has the bye)."""
    tables, byes = [], []
    for a, b in pairs:
        if b == len(order):
            byes.append(order[a])
        else:
            tables.append((a, b))
    tables.sort()
    return Round(tuple(_seated(order[a], order[b], h.seats) for a, b in tables), tuple(byes))


def _ahead(order: Sequence[str], h: History, odd_games: bool, bye: bool, later: int
           ) -> list[tuple[int, int]]:
    """The best pairing after which ``later`` more rounds can be paired without repeats."""
    dummy = len(order)
    nodes = list(range(len(order))) + ([dummy] if bye else [])
    pairs, repeats = _match(order, nodes[:len(order)], bye, h, odd_games)
    if repeats:
        return pairs
    edges = _edges(order, nodes, dummy, h, odd_games)
    fresh = {e for e, t in edges.items() if t[0] == 0}

    def rank(m: list[tuple[int, int]]) -> tuple[int, ...]:
        tiers = [edges[e] for e in m]
        return (sum(t[0] for t in tiers), -sum(t[1] for t in tiers),
                *(sum(t[r] for t in tiers) for r in (2, 3, 4)))

    return best_completable(nodes, fresh, later, pairs, rank)


def _bands(n: int, bye: bool, band: int) -> list[list[int]]:
    """Positions cut into bands of ``band`` (even); the last takes the rest, and is
    merged into the one before if it is less than half a band."""
    cuts = [list(range(s, min(n, s + band))) for s in range(0, n, band)]
    if len(cuts) > 1 and len(cuts[-1]) < band // 2:
        cuts[-2:] = [cuts[-2] + cuts[-1]]
    return cuts


def _seated(a: str, b: str, seats: Mapping[str, int]) -> tuple[str, str]:
    """The pair in seat order: the bot that had seat 0 less often first (a, the better
    ranked, when even)."""
    return (b, a) if seats.get(b, 0) < seats.get(a, 0) else (a, b)


def _match(order: Sequence[str], band: list[int], bye: bool, h: History, odd_games: bool
           ) -> tuple[list[tuple[int, int]], int]:
    """The best pairing of the positions ``band`` (with the dummy, position len(order),
    if ``bye``): its pairs (lower position first) and how many repeat."""
    dummy = len(order)
    nodes = band + ([dummy] if bye else [])
    edges = _edges(order, nodes, dummy, h, odd_games)
    weights = _weights(edges, len(nodes) // 2)
    # Imported here: networkx is a large package that only a Swiss pairing uses (every
    # `chinchon serve` and `tournament run` would pay its import at start-up).
    import networkx as nx  # type: ignore[import-untyped]

    g = nx.Graph()
    g.add_nodes_from(nodes)
    for (a, b), w in zip(edges, weights, strict=True):
        g.add_edge(a, b, weight=w)
    mate = nx.max_weight_matching(g, maxcardinality=True)
    pairs = sorted((min(a, b), max(a, b)) for a, b in mate)
    repeats = sum(edges[(a, b)][0] > 0 for a, b in pairs)
    return pairs, repeats


#: An edge's rule values: (repeats, bye rank, squared point gap, Dutch gap, seat clash);
#: rule 2 is "higher is better", the others "lower is better".
Tiers = tuple[int, int, int, int, int]


def _edges(order: Sequence[str], nodes: list[int], dummy: int, h: History, odd_games: bool
           ) -> dict[tuple[int, int], Tiers]:
    q = {p: round(h.points.get(order[p], 0.0) * UNIT) for p in nodes if p != dummy}
    # Score groups within the band: each bot's index in its group, and the group's size.
    index: dict[int, int] = {}
    size: dict[int, int] = {}
    for p, v in q.items():  # in ranking order
        index[p] = size.get(v, 0)
        size[v] = index[p] + 1
    out: dict[tuple[int, int], Tiers] = {}
    for x, a in enumerate(nodes):
        for b in nodes[x + 1:]:
            if b == dummy:
                out[(a, b)] = (h.byes.get(order[a], 0), a, 0, 0, 0)
                continue
            ba, bb = order[a], order[b]
            gap = abs(q[a] - q[b])
            if gap == 0:
                dutch = (abs(index[a] - index[b]) - size[q[a]] // 2) ** 2
            else:  # a is above: the closer both are to their groups' boundary, the better
                dutch = (size[q[a]] - 1 - index[a]) + index[b]
            sa, sb = h.seats.get(ba, 0), h.seats.get(bb, 0)
            clash = max(0, min(sa, sb)) + max(0, min(-sa, -sb)) if odd_games else 0
            out[(a, b)] = (h.met.get(frozenset((ba, bb)), 0), 0, gap * gap, dutch, clash)
    return out


def _weights(edges: Mapping[tuple[int, int], Tiers], per_matching: int) -> list[int]:
    """Each edge's weight: its rules as digits, rule 1 the most significant; every
    digit "higher is better" and at least 0, in a base above its total over a matching."""
    tiers = list(edges.values())
    tops = [max((t[r] for t in tiers), default=0) for r in range(5)]
    out = []
    for t in tiers:
        digits = [tops[0] - t[0] + 1, t[1], tops[2] - t[2], tops[3] - t[3], tops[4] - t[4]]
        w = 0
        for r, d in enumerate(digits):
            w = w * (per_matching * (tops[r] + 1) + 1) + d if r else d
        out.append(w)
    return out
