"""A tournament game's row through its life, written off the event loop.

A game's start and end are written in one store-writer thread, in order (each is a
transaction with an fsync: the event loop never waits for the disk). Alone on its
database, the referee marks a game ``running`` before it starts it (a game that could
not be marked does not start: the database is out of reach, or its disk is full).
Sharing the database with other referee processes (:mod:`.cluster`), it claims the
game first, and plays it only if the claim succeeds: another process may have claimed
it, and a duplicate-deal twin of it may be running elsewhere.

A game's end is written again and again while the database is out of reach or full (the
result waits in memory, counted in :attr:`GameRows.health`, and no new game starts
meanwhile), until it is written, or, sharing the database, until the store says
the row is not this process's any more: its lease ran out while the database was out of
reach, so it was voided and is played again from a new deal (by whichever process
claims it), and this result is dropped.
"""

from __future__ import annotations

import asyncio
import enum
import functools
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

from ..cluster.member import Cluster
from ..host.pools import for_games
from ..logs import get_logger
from ..metrics import METRICS
from ..storage import GameFilter, GameRow, Store, StoreUnavailable
from ..storage.health import StoreHealth
from ..vocabulary import GameStatus

log = get_logger("director")
_R = TypeVar("_R")
#: Pending games whose status is read again when a claim finds one taken.
PRUNE = 256
#: Only the scheduled games.
_SCHEDULED = GameFilter(status=GameStatus.SCHEDULED)
#: The first and the longest pause between two attempts to write a game's end while
#: the database is out of reach (seconds).
RETRY_FIRST, RETRY_MAX = 0.2, 2.0


class Finish(enum.Enum):
    """What became of a game's end."""

    #: Written: the game is finished for good.
    RECORDED = "recorded"
    #: Not this process's any more (voided when its lease ran out): played again.
    LOST = "lost"


class Played(enum.Enum):
    """What became of a game the director launched."""

    DONE = "done"          # played (or forfeited) and recorded, or stopped by a shutdown
    AGAIN = "again"        # hit an internal error of the referee: to be played again here
    GONE = "gone"          # claimed by another process, or its result was not this one's
    RETRY = "retry"        # the database was out of reach: to be tried again in a moment


class GameRows:
    def __init__(self, store: Store, cluster: Cluster | None) -> None:
        self.store = store
        self.cluster = cluster
        self._writer = ThreadPoolExecutor(max_workers=1, thread_name_prefix="store-writer")
        #: Shared: the games this process claimed and has not finished or voided.
        self.claimed: set[str] = set()
        #: Whether the database takes writes; the results waiting for it.
        self.health = StoreHealth()

    async def write(self, write: Callable[..., _R], *args: Any) -> _R:
        """``write(*args)`` in the writer thread (writes keep their order); its success or
        failure tells :attr:`health`."""
        try:
            out = await asyncio.get_running_loop().run_in_executor(
                self._writer, functools.partial(_timed, write, *args))
        except StoreUnavailable as e:
            self.health.failed(e)
            raise
        self.health.worked()
        return out

    async def begin(self, game: GameRow, twins: bool) -> int | None:
        """Take ``game``'s row for this process: its attempt number (the times it was
        voided before) if it is this process's to play, None if not. ``twins``: its
        tournament plays each deal twice (never two games of one deal at once).
        StoreUnavailable: the database is out of reach (nothing taken)."""
        if self.cluster is None:
            attempt = await self.write(self.store.begin_game, game.id)
            return 0 if attempt is None else attempt  # (a finished game is not played)
        attempt = await self.write(self.store.begin_game, game.id, self.cluster.owner,
                                   self.cluster.lease, game.deal_id if twins else None)
        if attempt is not None:
            self.claimed.add(game.id)
        return attempt

    async def finish(self, game: GameRow, closing: Callable[[], bool],
                     notify: str | None = None) -> Finish:
        """Write ``game``'s end (its result, record and statistics set), retried while
        the database is out of reach, unless ``closing()`` (then StoreUnavailable: the
        row stays ``running``, to be voided and played again)."""
        owner = None if self.cluster is None else self.cluster.owner
        self.health.waiting += 1
        try:
            written = await self.retried(self.store.finish_game, game, owner, notify,
                                         closing=closing)
        finally:
            self.health.waiting -= 1
        self.claimed.discard(game.id)
        # Alone on the database, the row is always this process's (a game finished
        # already is never written again; it is not played twice either).
        return Finish.RECORDED if written or owner is None else Finish.LOST

    async def retried(self, write: Callable[..., _R], *args: Any,
                       closing: Callable[[], bool]) -> _R:
        """``write(*args)`` in the writer thread, tried again while the database is out
        of reach, unless ``closing()`` (then StoreUnavailable)."""
        pause = RETRY_FIRST
        while True:
            try:
                return await self.write(write, *args)
            except StoreUnavailable as e:
                if closing():
                    raise
                log.warning("store_write_retried", write=getattr(write, "__name__", "?"),
                            error=str(e), retry_in=pause)
                await asyncio.sleep(pause)
                pause = min(RETRY_MAX, pause * 2)

    async def void_stopped(self, tid: str) -> int:
        """At a tournament's start: the games this referee was playing when it stopped,
        voided to be played again. Sharing the database, none: the games of a process
        that stopped are voided by the others when their leases run out."""
        if self.cluster is not None:
            return 0
        return await self.write(self.store.void_running, tid)

    async def void(self, game_id: str, closing: Callable[[], bool]) -> None:
        """Set ``game_id`` back to scheduled, to be played again (sharing the database:
        if it is still this process's), retried while the database is out of reach."""
        owner = None if self.cluster is None else self.cluster.owner
        await self.retried(self.store.void_game, game_id, owner, closing=closing)
        self.claimed.discard(game_id)

    async def scheduled(self, tid: str, in_flight: set[str]) -> list[GameRow] | None:
        """Shared: the scheduled games of ``tid`` as the store has them now (voided games
        come back; those launched here are left out), or None if every game is finished."""
        def read() -> list[GameRow] | None:
            counts = self.store.status_counts(tid)
            if counts[GameStatus.SCHEDULED] == counts[GameStatus.RUNNING] == 0:
                return None
            return self.store.schedule(tid, _SCHEDULED)

        try:
            games = await for_games(read)
        except StoreUnavailable as e:
            log.warning("schedule_not_read", tournament=tid, error=str(e))
            return []
        return None if games is None else [g for g in games if g.id not in in_flight]

    async def prune(self, pending: list[GameRow]) -> None:
        """Shared: take out of ``pending`` (in place) the first games that another process
        took or finished meanwhile, so that this process does not try to claim each of
        them in turn (read PRUNE games at a time)."""
        head = [g.id for g in pending[:PRUNE]]
        try:
            left = await for_games(self.store.still_scheduled, head)
        except StoreUnavailable:
            return
        taken = set(head) - left
        pending[:] = [g for g in pending if g.id not in taken]


def _timed(write: Callable[..., _R], *args: Any) -> _R:
    """``write(*args)``, its time in the store-write metric (in the writer thread, which
    alone writes that histogram)."""
    t0 = time.perf_counter()
    try:
        return write(*args)
    finally:
        METRICS.store_seconds.observe(time.perf_counter() - t0)
