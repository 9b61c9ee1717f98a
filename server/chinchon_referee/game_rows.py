"""A tournament game's row through its life, written off the event loop.

A game's start and end are written in one store-writer thread, in order (each is a
transaction with an fsync: the event loop never waits for the disk). Alone on its
database, the referee marks a game ``running`` as it starts it (not waited for: the
row's end is written after it). Sharing the database with other referee processes
(:mod:`.cluster`), it claims the game first, and plays it only if the claim succeeds:
another process may have claimed it, and a duplicate-deal twin of it may be running
elsewhere.

A game's end is written again and again while the database is out of reach (the result
waits in memory), until it is written, or, sharing the database, until the store says
the row is not this process's any more: its lease ran out while the database was out of
reach, so it was voided and is played again from the same deal (by whichever process
claims it), and this result is dropped.
"""

from __future__ import annotations

import asyncio
import enum
import functools
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, TypeVar

from .cluster import Cluster
from .logs import get_logger
from .storage import GameFilter, GameRow, Store, StoreUnavailable
from .vocabulary import GameStatus

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


class GameRows:
    def __init__(self, store: Store, cluster: Cluster | None) -> None:
        self.store = store
        self.cluster = cluster
        self._writer = ThreadPoolExecutor(max_workers=1, thread_name_prefix="store-writer")
        #: Shared: the games this process claimed and has not finished or voided.
        self.claimed: set[str] = set()

    async def write(self, write: Callable[..., _R], *args: Any) -> _R:
        """``write(*args)`` in the writer thread (writes keep their order)."""
        return await asyncio.get_running_loop().run_in_executor(
            self._writer, functools.partial(write, *args))

    def write_soon(self, write: Callable[..., object], *args: Any) -> None:
        """``write(*args)`` in the writer thread, not waited for: it is written before any
        later write, and a failure is logged."""
        def done(f: Future[object]) -> None:
            if f.exception() is not None:
                log.error("store_write_failed", write=getattr(write, "__name__", "?"),
                          error=str(f.exception()))

        self._writer.submit(write, *args).add_done_callback(done)

    async def begin(self, game: GameRow, twins: bool) -> bool:
        """Take ``game``'s row for this process: True if it is this process's to play.
        ``twins``: its tournament plays each deal twice (never two games of one deal at
        once). StoreUnavailable: the database is out of reach (nothing taken)."""
        if self.cluster is None:
            self.write_soon(self.store.mark_running, game.id)
            return True
        mine = await self.write(self.store.claim_game, game.id, self.cluster.owner,
                                self.cluster.lease, game.deal_id if twins else None)
        if mine:
            self.claimed.add(game.id)
        return mine

    async def finish(self, game: GameRow, closing: Callable[[], bool]) -> Finish:
        """Write ``game``'s end (its result, record and statistics set), retried while
        the database is out of reach, unless ``closing()`` (then StoreUnavailable: the
        row stays ``running``, to be voided and played again)."""
        owner = None if self.cluster is None else self.cluster.owner
        written = await self.retried(self.store.finish_game, game, owner, closing=closing)
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
            games = await asyncio.to_thread(read)
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
            left = await asyncio.to_thread(self.store.still_scheduled, head)
        except StoreUnavailable:
            return
        taken = set(head) - left
        pending[:] = [g for g in pending if g.id not in taken]
