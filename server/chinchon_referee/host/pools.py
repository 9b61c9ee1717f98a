"""The worker threads of the referee, in two pools that never wait for each other.

Blocking work (a database call, building a large schedule) runs off the event loop in a
worker thread. The games' own work (their rows' reads, practice records, the cluster's
heartbeat, the director's readings of the store) has its pool, and the organizer's calls
(the admin service) theirs: forty ``CreateTournament`` calls at once queue among
themselves and never delay a game's record or a heartbeat (before, every
``asyncio.to_thread`` shared the loop's default pool of min(32, cores + 4) threads).
A game's end is written in the store-writer thread of :mod:`.game_rows`, a third one.
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

_R = TypeVar("_R")

#: Threads of each pool: the database takes a few writers at a time anyway.
GAME_THREADS = 4
ORGANIZER_THREADS = 4

_GAMES = ThreadPoolExecutor(max_workers=GAME_THREADS, thread_name_prefix="games")
_ORGANIZER = ThreadPoolExecutor(max_workers=ORGANIZER_THREADS, thread_name_prefix="organizer")


async def for_games(fn: Callable[..., _R], *args: Any) -> _R:
    """``fn(*args)`` in a thread of the games' pool."""
    return await asyncio.get_running_loop().run_in_executor(
        _GAMES, functools.partial(fn, *args))


async def for_organizer(fn: Callable[..., _R], *args: Any) -> _R:
    """``fn(*args)`` in a thread of the organizer's pool (the admin service's calls)."""
    return await asyncio.get_running_loop().run_in_executor(
        _ORGANIZER, functools.partial(fn, *args))
