"""The round-robin scheduler: a deterministic, resumable iterator of games.

Every table (each pair, or each k-subset, or a balanced set of k-subsets when there are
too many) plays the same number of games; within a table the seats rotate so each bot
sits in each position equally often; with duplicate deals the games of one rotation
share one deal id, played far apart in the schedule (see :class:`RoundRobin`).
"""

from __future__ import annotations

import hashlib
import itertools
import math
import random
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

#: Above this many k-subsets the scheduler picks a balanced subset of tables.
MAX_TABLES = 200


@dataclass(frozen=True)
class Pairing:
    """One game of the schedule."""

    seq: int
    table: int
    players: tuple[str, ...]  # by seat
    deal_id: str
    rotation: int


class RoundRobin:
    """The schedule of a tournament: a deterministic, resumable iterator of games.

    ``iter(rr)`` gives every game in order; ``rr.resume(done)`` the ones not yet done.
    Games are interleaved step by step (each step: every table, every rotation once), so
    standings part-way through are balanced; twins of one deal are steps apart.
    """

    def __init__(
        self,
        bots: Sequence[str],
        table_size: int,
        games_per_table: int,
        seed: str,
        duplicate: bool = True,
        tag: str = "t",
        max_tables: int = MAX_TABLES,
        tables: Sequence[tuple[str, ...]] | None = None,
    ) -> None:
        if len(set(bots)) != len(bots) or len(bots) < table_size or table_size < 2:
            raise ValueError("need distinct bots, at least table_size of them")
        self.bots = list(bots)
        self.k = table_size
        self.seed = seed
        self.duplicate = duplicate
        self.tag = tag
        rng = random.Random(hashlib.sha256(f"{seed}/schedule".encode()).digest())
        # Given tables (a gauntlet's, a stage's groups') replace the choice of tables.
        self.tables = [tuple(t) for t in tables] if tables is not None else self._tables(
            rng, max_tables)
        # Whole rotations: each bot sits in each seat of its table equally often.
        self.blocks = math.ceil(games_per_table / self.k)
        self.games_per_table = self.blocks * self.k
        # Each table's base seat order is shuffled once, from the seed.
        self.base = [tuple(rng.sample(list(t), len(t))) for t in self.tables]

    def _tables(self, rng: random.Random, max_tables: int) -> list[tuple[str, ...]]:
        n, k = len(self.bots), self.k
        if math.comb(n, k) <= max_tables:
            return [tuple(c) for c in itertools.combinations(self.bots, k)]
        # Too many k-subsets: pick tables greedily so that every pair meets and pairs
        # and bots meet as evenly as the greedy choice manages (not exactly equal).
        # Bots are handled by index (pair counts in a matrix, a count of the pairs that
        # never met): O(tables * k * k * n) work, bounded by MAX_PARTICIPANTS.
        bots = self.bots
        idx = range(n)
        meet = [[0] * n for _ in idx]
        plays = [0] * n
        unmet = math.comb(n, 2)
        chosen: list[tuple[str, ...]] = []
        target = max(math.ceil(unmet / math.comb(k, 2)), math.ceil(n / k))
        while len(chosen) < target or unmet:
            start = min(idx, key=lambda b: (plays[b], rng.random()))
            table = [start]
            while len(table) < k:
                rows = [meet[t] for t in table]
                best = min(
                    (b for b in idx if b not in table),
                    key=lambda b: (sum(row[b] for row in rows), plays[b], rng.random()),
                )
                table.append(best)
            for a, b in itertools.combinations(table, 2):
                if meet[a][b] == 0:
                    unmet -= 1
                meet[a][b] += 1
                meet[b][a] += 1
            for b in table:
                plays[b] += 1
            chosen.append(tuple(bots[b] for b in sorted(table)))
        return chosen

    def __len__(self) -> int:
        return len(self.tables) * self.games_per_table

    @property
    def twin_gap(self) -> int:
        """Steps between two rotations of one deal (at least): ``blocks // k``, 1 at least."""
        return max(1, self.blocks // self.k)

    def __iter__(self) -> Iterator[Pairing]:
        # Step by step, every table plays every rotation once, so seats and tables stay
        # balanced part-way through; but rotation r plays deal (step - r * gap) mod
        # blocks, so the twins of one deal (its rotations) are ``twin_gap`` steps apart
        # or more (when there are at least k blocks), and the director need not hold
        # games back to keep twins from running at once.
        seq = 0
        for step in range(self.blocks):
            for t, base in enumerate(self.base):
                for r in range(self.k):
                    block = (step - r * self.twin_gap) % self.blocks
                    players = tuple(base[(i - r) % self.k] for i in range(self.k))
                    if self.duplicate:
                        deal = f"{self.tag}/table{t}/deal{block}"
                    else:
                        deal = f"{self.tag}/table{t}/deal{block}/rot{r}"
                    yield Pairing(seq, t, players, deal, r)
                    seq += 1
