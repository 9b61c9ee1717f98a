"""A ladder simulated on its pure core: matchmaking (``next_tables``) seats the idle
bots of a field whenever a table ends, each game lasts a seeded random time and ends
by a seeded coin weighted by the bots' strengths, and openskill rates it (the ladder's
own update). No referee, no clock: thousands of games in seconds, the same for a seed.

A bot's strength is a number; ``certain`` bots' games are predictable (the stronger
always wins), the others' a logistic coin on the difference."""

from __future__ import annotations

import heapq
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from chinchon_referee.ladder.matchmaking import LastTable, next_tables
from chinchon_referee.ladder.ratings import PRIOR, Rating, update


@dataclass
class Sim:
    strengths: Mapping[str, float]
    certain: frozenset[str] = frozenset()
    table_size: int = 2
    concurrency: int = 2
    seed: int = 0
    #: The players of every table started, in order.
    tables: list[tuple[str, ...]] = field(default_factory=list)
    ratings: dict[str, Rating] = field(default_factory=dict)

    def run(self, games: int) -> list[tuple[str, ...]]:
        rnd = random.Random(self.seed)
        bots = sorted(self.strengths)
        self.ratings = {b: PRIOR for b in bots}
        last: dict[str, LastTable] = {}
        running: list[tuple[float, int, tuple[str, ...]]] = []
        now, n = 0.0, 0
        while len(self.tables) < games:
            busy = {b for _, _, t in running for b in t}
            idle = [b for b in bots if b not in busy]
            for table in next_tables(idle, self.ratings, last, self.table_size,
                                     self.concurrency - len(running), bool(running),
                                     self.tables, len(bots)):
                self.tables.append(table)
                n += 1
                heapq.heappush(running, (now + rnd.uniform(1.0, 2.0), n, table))
            if not running:
                raise AssertionError(f"nothing seated among {idle}")
            now, _, table = heapq.heappop(running)
            places = self._places(table, rnd)
            after = update([self.ratings[b] for b in table], places)
            for seat, (b, r) in enumerate(zip(table, after, strict=True)):
                self.ratings[b] = r
                last[b] = LastTable(table, seat)
        return self.tables

    def _places(self, table: Sequence[str], rnd: random.Random) -> list[int]:
        s = self.strengths
        if any(b in self.certain for b in table):  # predictable: by strength
            order = sorted(table, key=lambda b: -s[b])
        else:
            keyed = {b: s[b] + rnd.gauss(0.0, 1.0) for b in table}
            order = sorted(table, key=lambda b: -keyed[b])
        return [order.index(b) for b in table]


def max_share(tables: Sequence[tuple[str, ...]], window: int) -> dict[str, int]:
    """Each bot's most tables in any ``window`` consecutive tables."""
    best: dict[str, int] = {}
    count: dict[str, int] = {}
    for i, t in enumerate(tables):
        for b in t:
            count[b] = count.get(b, 0) + 1
        if i >= window:
            for b in tables[i - window]:
                count[b] -= 1
        if i >= window - 1:
            for b, c in count.items():
                best[b] = max(best.get(b, 0), c)
    return best
