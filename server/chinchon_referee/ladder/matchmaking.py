"""Matchmaking: the next tables of a ladder, as a pure function of the bots that wait.

:func:`next_tables` takes the entered bots that are connected and idle (a free stream,
at no table of the ladder), their ratings, each one's last table, how many tables may
start now (the concurrency left) and whether any game of the ladder is in progress.
The rule (docs/ladder.md says why):

1. **Who plays first.** The waiting bots are taken by uncertainty, the largest sigma
   first (ties: the name): a new entrant, whose sigma is the prior's, is seated before
   bots whose rating has settled, and each game it plays narrows it, so it plays more
   until its interval narrows (Kaggle's ladder gives new submissions more games).
2. **Against whom.** The first bot not seated yet (the *anchor*) is given the
   opponents that make the best table: one at a time, the waiting bot with the highest
   TrueSkill match quality with those already at the table (the mean over them: close
   in mu, and sure, so that the game says much about the anchor).
3. **Not the same table twice in a row.** A table whose bots are exactly the last table
   of one of them is formed only when no other table can be, and no game of the ladder
   is in progress (one could end and give another opponent: the bots wait for it).
4. **Seats rotated.** At a table, the bot that sat furthest back in its last game sits
   first (those with no game yet last), so a pair meeting again swaps its seats.
5. **How many.** Tables are formed while ``slots`` allow and enough bots wait; a bot
   sits at one table at a time.

Pure: the same arguments give the same tables.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from .ratings import PRIOR, Rating, match_quality


@dataclass(frozen=True)
class LastTable:
    """A bot's last game in the ladder: who sat at it (by seat) and where it sat."""

    players: tuple[str, ...]
    seat: int


def next_tables(idle: Sequence[str], ratings: Mapping[str, Rating],
                last: Mapping[str, LastTable], table_size: int, slots: int,
                in_progress: bool) -> list[tuple[str, ...]]:
    """The tables to start now, each its players by seat (see the module's rule)."""
    if table_size < 2:
        raise ValueError(f"table_size: at least 2, got {table_size}")
    rating = {b: ratings.get(b, PRIOR) for b in idle}
    waiting = sorted(set(idle), key=lambda b: (-rating[b].sigma, b))
    tables: list[tuple[str, ...]] = []
    while len(tables) < max(0, slots) and len(waiting) >= table_size:
        table = _table(waiting, rating, last, table_size, allow_repeat=not in_progress)
        if table is None:
            break
        tables.append(_seated(table, last))
        waiting = [b for b in waiting if b not in table]
    return tables


def _table(waiting: list[str], rating: Mapping[str, Rating], last: Mapping[str, LastTable],
           size: int, allow_repeat: bool) -> list[str] | None:
    """The best table around the first waiting bot that can have one that is no repeat
    (or a repeat, if allowed and nothing else can be formed)."""
    for anchor in waiting:
        table = _around(anchor, waiting, rating, last, size)
        if table is not None:
            return table
    if allow_repeat:
        return _around(waiting[0], waiting, rating, {}, size)
    return None


def _around(anchor: str, waiting: list[str], rating: Mapping[str, Rating],
            last: Mapping[str, LastTable], size: int) -> list[str] | None:
    """The table of ``anchor`` and its best opponents among ``waiting``, None if every
    such table would repeat one of its bots' last (the table is built greedily; when
    the last opponent to add would make a repeat, the next best is taken)."""
    table = [anchor]
    pool = [b for b in waiting if b != anchor]
    while len(table) < size:
        def quality(b: str) -> float:
            return sum(match_quality(rating[b], rating[t]) for t in table) / len(table)

        ranked = sorted(pool, key=lambda b: (-quality(b), b))
        if len(table) == size - 1:
            ranked = [b for b in ranked if not _repeats([*table, b], last)]
        if not ranked:
            return None
        table.append(ranked[0])
        pool.remove(ranked[0])
    return table


def _repeats(table: Sequence[str], last: Mapping[str, LastTable]) -> bool:
    """The table is exactly the last table of one of its bots."""
    members = frozenset(table)
    return any(b in last and frozenset(last[b].players) == members for b in table)


def _seated(table: Sequence[str], last: Mapping[str, LastTable]) -> tuple[str, ...]:
    """The players by seat: the furthest back last time first; no game yet: last."""
    return tuple(sorted(table, key=lambda b: (-(last[b].seat if b in last else -1), b)))
