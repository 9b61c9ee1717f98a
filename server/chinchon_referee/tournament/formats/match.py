"""A match: the games two bots of a bracket play until one of them wins it.

``match.games = N`` and ``match.mode``: *best of N* (the first to win more than half of
N games, at most N regular games) or *first to N* (the first to win N games, at most
2N - 1 regular games). Seats alternate game by game (side a, the better seed, takes
seat 0 in the first game). With duplicate deals each deal is played twice, the seats
swapped, and the match is only decided between deals (regular games rounded up to
whole deals).

Games are asked for in batches that cannot overshoot: at w wins against fewer, with
t wins needed, the next t - w games are all needed whatever their results, so a match
never plays a game after it was decided. A match level after its regular games (as
many wins; a shared win counts for neither) is settled by up to ``extra_games`` extra
games, a seat rotation (two games, of one deal with duplicate deals) at a time, until
one leads after a rotation; then by up to ``sudden_death`` single games, the first one
won outright deciding; still level, the better seed (side a) goes on. A game stopped by
an internal error of the referee (ABORTED) does not count and is played again; a match
that runs out of game numbers that way is decided by wins, then by seed.

:func:`settle` is pure: the match's games so far in, what it needs next out.
"""

from __future__ import annotations

import enum
from collections.abc import Sequence
from dataclasses import dataclass

from .spec import MatchSpec


@dataclass(frozen=True)
class MatchGame:
    """One game of a match, in the order the games were created."""

    finished: bool
    #: Finished: 0 or 1, the side that won it alone; None: shared, or nobody.
    winner: int | None = None
    #: Stopped by the referee (does not count).
    aborted: bool = False


class Decider(enum.StrEnum):
    """What decided a match."""

    WINS = "wins"
    EXTRA_GAMES = "extra games"
    SUDDEN_DEATH = "sudden death"
    SEED = "seed"
    WALKOVER = "walkover"
    #: Aborted games used up the match's game numbers: more wins, then the seed.
    EXHAUSTED = "out of games"


@dataclass(frozen=True)
class Decided:
    #: 0 or 1: the side that goes on.
    winner: int
    by: Decider
    wins: tuple[int, int]


@dataclass(frozen=True)
class Playing:
    """Some of its games are not finished yet."""


@dataclass(frozen=True)
class Needs:
    """Games to create now: for each, its position among the counted games (which fixes
    its seats: even positions give side a seat 0) and whether it is one deal's twin."""

    positions: tuple[int, ...]
    twins: bool


State = Decided | Playing | Needs


def settle(m: MatchSpec, duplicate: bool, games: Sequence[MatchGame]) -> State:
    """Where a match stands after ``games`` (all it has, in creation order)."""
    if not all(g.finished for g in games):
        return Playing()
    results = [g.winner for g in games if not g.aborted]
    room = m.capacity(duplicate) - len(games)  # game numbers left
    wins = [0, 0]
    pos = 0
    step = 2 if duplicate else 1

    def need(upto: int, twins: bool) -> Needs | Decided:
        if room <= 0:  # out of game numbers (aborted games): more wins, then the seed
            a, b = results.count(0), results.count(1)
            return Decided(1 if b > a else 0, Decider.EXHAUSTED, (a, b))
        return Needs(tuple(range(len(results), upto))[:room], twins)

    def take(n: int) -> None:
        nonlocal pos
        for r in results[pos:pos + n]:
            if r is not None:
                wins[r] += 1
        pos += n

    regular, target = m.regular(duplicate), m.target
    while pos < regular and max(wins) < target:
        n = min(target - max(wins), regular - pos)
        n = min(regular - pos, -(-n // step) * step)
        if len(results) < pos + n:
            return need(pos + n, duplicate)
        take(n)
    if wins[0] != wins[1]:
        return Decided(0 if wins[0] > wins[1] else 1, Decider.WINS, (wins[0], wins[1]))
    extra = 0
    while extra < m.extras:
        if len(results) < pos + 2:
            return need(pos + 2, duplicate)
        take(2)
        extra += 2
        if wins[0] != wins[1]:
            return Decided(0 if wins[0] > wins[1] else 1, Decider.EXTRA_GAMES,
                           (wins[0], wins[1]))
    for _ in range(m.sudden_death):
        if len(results) < pos + 1:
            return need(pos + 1, False)
        r = results[pos]
        take(1)
        if r is not None:
            return Decided(r, Decider.SUDDEN_DEATH, (wins[0], wins[1]))
    return Decided(0, Decider.SEED, (wins[0], wins[1]))


def seats(position: int) -> tuple[int, int]:
    """The sides in seat order for the game at ``position``: side a first at even ones."""
    return (0, 1) if position % 2 == 0 else (1, 0)
