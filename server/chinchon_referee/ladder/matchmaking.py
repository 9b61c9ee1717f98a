"""Matchmaking: the next tables of a ladder, as a pure function of the bots that wait.

:func:`next_tables` takes the entered bots that are connected and idle (a free stream,
at no table of the ladder), their ratings, each one's last table, how many tables may
start now (the concurrency left), whether any game of the ladder is in progress, the
tables started most recently and how many bots are active (idle or at a table).
The rule (docs/ladder.md says why):

0. **No more than twice a fair share.** With N active bots and tables of s, a bot's
   fair share is s / N of the tables. Over the window of the last W = 10 * ceil(N / s)
   tables started (about 10 tables each at a fair share), a bot that sits at
   cap = floor(2 * W * s / N) of them, counting the table to start, is not seated: no
   bot sits at more than ``cap`` tables of any W consecutive ones. Only when no table
   could start otherwise and nothing is in progress are such bots seated (the ladder
   never stalls).
1. **Who plays first.** The waiting bots are taken by fewest tables in the window first,
   then by uncertainty, the largest sigma first (ties: the name): a new entrant, with no
   table yet and the prior's sigma, is seated before bots whose rating has settled and
   plays more until it has its share (Kaggle's ladder gives new submissions more games);
   a bot whose sigma stays a little above the others' (a bot whose games are
   predictable) is not the first of every table for it.
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

import itertools
import math
from collections import Counter, deque
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from .ratings import PRIOR, Rating, match_quality

#: The window's length in tables per bot at its fair share.
WINDOW_PER_BOT = 10
#: The most tables of a window a bot sits at, in fair shares.
SHARE_CAP = 2


def window(active: int, table_size: int) -> int:
    """W: the tables over which a bot's share is counted, with ``active`` bots."""
    return WINDOW_PER_BOT * math.ceil(max(active, table_size) / table_size)


def cap(active: int, table_size: int) -> int:
    """The most tables of any W consecutive ones a bot sits at (SHARE_CAP fair shares)."""
    active = max(active, table_size)
    return math.floor(SHARE_CAP * window(active, table_size) * table_size / active)


@dataclass(frozen=True)
class LastTable:
    """A bot's last game in the ladder: who sat at it (by seat) and where it sat."""

    players: tuple[str, ...]
    seat: int


def next_tables(idle: Sequence[str], ratings: Mapping[str, Rating],
                last: Mapping[str, LastTable], table_size: int, slots: int,
                in_progress: bool, recent: Sequence[Sequence[str]] = (),
                active: int = 0) -> list[tuple[str, ...]]:
    """The tables to start now, each its players by seat (see the module's rule).
    ``recent``: the tables started so far, oldest first (the last W - 1 are read);
    ``active``: the bots idle or at a table (at least the idle ones)."""
    if table_size < 2:
        raise ValueError(f"table_size: at least 2, got {table_size}")
    rating = {b: ratings.get(b, PRIOR) for b in idle}
    n = max(active, len(rating))
    most, size = cap(n, table_size), window(n, table_size) - 1
    # (a deque takes no slice: the last ``size`` read from its end)
    shown: deque[Sequence[str]] = deque(
        reversed(list(itertools.islice(reversed(recent), size))), maxlen=size)
    count = Counter(b for t in shown for b in t)
    waiting = sorted(rating)
    tables: list[tuple[str, ...]] = []
    while len(tables) < max(0, slots) and len(waiting) >= table_size:
        waiting.sort(key=lambda b: (count[b], -rating[b].sigma, b))
        busy = in_progress or bool(tables)
        table = _table([b for b in waiting if count[b] < most], rating, last, table_size,
                       allow_repeat=not in_progress)
        if table is None and not busy:  # nothing else could start: never stall
            table = _table(waiting, rating, last, table_size, allow_repeat=True)
        if table is None:
            break
        tables.append(_seated(table, last))
        waiting = [b for b in waiting if b not in table]
        if size:
            if len(shown) == size:
                count.subtract(shown[0])
            shown.append(table)
            count.update(table)
    return tables


def _table(waiting: list[str], rating: Mapping[str, Rating], last: Mapping[str, LastTable],
           size: int, allow_repeat: bool) -> list[str] | None:
    """The best table around the first waiting bot that can have one that is no repeat
    (or a repeat, if allowed and nothing else can be formed)."""
    if len(waiting) < size:
        return None
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

        ranked = sorted(pool, key=lambda b: -quality(b))  # ties: the order of waiting
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
