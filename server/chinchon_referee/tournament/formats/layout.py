"""Where each stage's games sit (each kind says how many seq numbers its stage owns and
the most games it can take: :mod:`.kinds`; :func:`.chain.layout` lays them end to end).

Every game of a tournament has a ``seq`` (its place in the schedule, and with the
tournament's id its game id, ``<tid>-g<seq>``). A stage owns a span of seq numbers,
fixed by the declaration alone: stage 0 from 0, stage 1 after it, and so on; inside it:

* round-robin and gauntlet: the round-robin scheduler's own order (steps of every
  table's seat rotations);
* Swiss: round r, table t (best table first), game j at ``r * per_round + t * games + j``;
* brackets: match m (numbered winners' rounds first, then losers' rounds, then the
  finals), its i-th game at ``m * capacity + i`` (a match's capacity is its most games
  plus :data:`~.spec.ABORT_SLACK`).

So a game's seq says which stage, round, table or match it belongs to, and the same
game always gets the same seq, whichever process creates it and whenever: creating a
game twice is storing one id twice (refused by the database's key), never two games.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

from ..round_robin import MAX_TABLES, RoundRobin
from .seeding import snake
from .spec import Stage, default_rounds


@dataclass(frozen=True)
class StageLayout:
    index: int
    stage: Stage
    #: Bots in the stage.
    size: int
    #: Its first seq, and how many seq numbers it owns.
    base: int
    span: int
    #: The most games it can take.
    most: int

    def owns(self, seq: int) -> bool:
        return self.base <= seq < self.base + self.span


def bracket_size(n: int) -> int:
    """The bracket's slots: the power of two at or above ``n`` (byes fill the rest)."""
    return 1 << max(0, (n - 1).bit_length())


def rounds_of(stage: Stage, n: int, k: int) -> int:
    """A Swiss's rounds (declared, or automatic)."""
    return stage.rounds or default_rounds(n, k)


def group_sizes(n: int, groups: int) -> list[int]:
    """Group sizes when ``n`` bots are snaked over ``groups``."""
    return [len(g) for g in snake([str(i) for i in range(n)], groups)]


def rr_tables(n: int, k: int, seed: str | None) -> int:
    """Tables of a round-robin of ``n`` bots: every k-subset, or the balanced set the
    scheduler picks (exactly, given the seed; at least, without one)."""
    if math.comb(n, k) <= MAX_TABLES:
        return math.comb(n, k)
    if seed is None:
        return max(math.ceil(math.comb(n, 2) / math.comb(k, 2)), math.ceil(n / k))
    return _balanced_tables(n, k, seed)


@lru_cache(maxsize=64)
def _balanced_tables(n: int, k: int, seed: str) -> int:
    return len(RoundRobin([str(i) for i in range(n)], k, 1, seed).tables)


def stage_seed(seed: str, index: int, group: int = 0) -> str:
    """The seed of a stage's (or group's) round-robin tables and seats."""
    return f"{seed}/stage{index}/group{group}"


__all__ = ["StageLayout", "bracket_size", "group_sizes", "rounds_of", "rr_tables",
           "stage_seed"]
