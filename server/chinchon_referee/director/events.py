"""A tournament's live events: what watchers (WatchTournament, `tournament run`'s
progress bar, the web view) hear, and the progress they carry.

The hub keeps each tournament's status and [games in all, games finished] itself, so that
an event (two come with every game) reads nothing from the store.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass

from chinchon.engine import Outcome

from ..host.pools import for_organizer
from ..storage import Store
from ..vocabulary import TournamentStatus


@dataclass
class TournamentEvent:
    time: float
    tournament_id: str
    #: The tournament's status when the event was sent (None: the tournament is gone).
    status: TournamentStatus | None
    games_total: int
    games_done: int
    message: str
    game_id: str = ""
    #: How the game of ``game_id`` ended, on a game's end.
    result: Outcome | None = None


class EventHub:
    def __init__(self, store: Store) -> None:
        self.store = store
        self._watchers: dict[str, list[asyncio.Queue[TournamentEvent | None]]] = {}
        self._status: dict[str, TournamentStatus] = {}
        self._progress: dict[str, list[int]] = {}
        #: Sharing the database: the games whose end was told, per tournament (to
        #: reconcile with the store after a gap of the bus).
        self.track = False
        self._ended: dict[str, set[str]] = {}
        #: The tournaments whose watchers were told an event of a status that is over.
        self._over_told: set[str] = set()

    def prime(self, tid: str, status: TournamentStatus, counts: tuple[int, int]) -> None:
        """What the store says of ``tid`` (read by the caller off the event loop): its
        events carry it from now on, kept up to date as games end."""
        self._status[tid] = status
        self._progress[tid] = list(counts)

    def status_set(self, tid: str, status: TournamentStatus) -> None:
        """The tournament's status changed (the caller stored it)."""
        self._status[tid] = status

    def running(self) -> list[str]:
        """The tournaments known to be running (their events carry that status)."""
        return [t for t, st in self._status.items() if st is TournamentStatus.RUNNING]

    def done(self, tid: str) -> int | None:
        """Games finished of ``tid`` as its events count them (None: not counted here)."""
        p = self._progress.get(tid)
        return None if p is None else p[1]

    def status_of(self, tid: str) -> TournamentStatus | None:
        return self._status.get(tid)

    def game_finished(self, tid: str, game_id: str) -> bool:
        """A game of this process ended (it was stored); False if its end was told
        already (a reconciliation read it from the store first)."""
        if game_id in self._ended.get(tid, ()):
            return False
        self._progress_of(tid)[1] += 1
        self._told(tid, game_id)
        return True

    def _told(self, tid: str, game_id: str) -> None:
        """Sharing the database (``track``): remember which games' ends were told."""
        if self.track and game_id:
            self._ended.setdefault(tid, set()).add(game_id)

    def reconcile(self, tid: str, finished: list[tuple[str, Outcome]],
                  counts: tuple[int, int]) -> list[str]:
        """What the store holds of ``tid`` (read by the caller after a possible gap: the
        bus was lost, the tournament ended): each finished game whose end its watchers
        were not told is told now, and the progress is the store's. The games told."""
        told = self._ended.setdefault(tid, set())
        missed = [(g, r) for g, r in finished if g not in told]
        self._progress[tid] = list(counts)
        for game_id, result in missed:
            told.add(game_id)
            self._tell(TournamentEvent(time.time(), tid, self._status.get(tid), counts[0],
                                       counts[1], f"game {game_id} ended: {result.summary}",
                                       game_id, result))
        return [g for g, _ in missed]

    def _tell(self, ev: TournamentEvent) -> None:
        """Put ``ev`` to every watcher of its tournament."""
        if ev.status is not None and ev.status.over:
            self._over_told.add(ev.tournament_id)
        for q in self._watchers.get(ev.tournament_id, []):
            q.put_nowait(ev)

    def _progress_of(self, tid: str) -> list[int]:
        """[games in all, games finished] of ``tid``: counted by the store once, then
        kept up to date as games end."""
        p = self._progress.get(tid)
        if p is None:
            p = self._progress[tid] = list(self.store.game_counts(tid))
            if tid not in self._status:
                row = self.store.tournament(tid)
                if row is not None:
                    self._status[tid] = row.status
        return p

    def emit(self, tid: str, message: str, game_id: str = "",
             result: Outcome | None = None) -> TournamentEvent:
        """Tell the watchers of ``tid``; returns the event."""
        total, done = self._progress_of(tid)
        ev = TournamentEvent(time.time(), tid, self._status.get(tid), total, done, message,
                             game_id, result)
        self._tell(ev)
        return ev

    def deliver(self, ev: TournamentEvent) -> None:
        """An event of another referee process sharing the database: counted (a game's
        end, when ``ev.result`` is set), told to the watchers of this process with its
        progress as counted here, and the end of their watch if the tournament is over."""
        tid = ev.tournament_id
        if ev.result is not None:
            if ev.game_id and ev.game_id in self._ended.get(tid, ()):
                return  # told already (by a reconciliation)
            self._told(tid, ev.game_id)
            if tid in self._progress:
                self._progress[tid][1] += 1
        if ev.status is not None:
            self._status[tid] = ev.status
        if tid not in self._watchers:
            return
        total, done = self._progress_of(tid)
        self._tell(TournamentEvent(ev.time, tid, self._status.get(tid), total, done,
                                   ev.message, ev.game_id, ev.result))
        if ev.status is not None and ev.status.over and not self.track:
            self.close(tid)  # (tracked: closed once reconciled with the store, cluster_link)

    def close(self, tid: str) -> None:
        """The tournament's events are over: every watch of it ends, on an event of its
        final status if they were not told it yet (sharing the database, another process
        stored the end first and its word has not come through the bus)."""
        status = self._status.get(tid)
        if (status is not None and status.over and tid not in self._over_told
                and self._watchers.get(tid)):
            self.emit(tid, f"tournament is {status}")
        self._over_told.discard(tid)
        for q in self._watchers.pop(tid, []):
            q.put_nowait(None)

    async def watch(self, tid: str) -> AsyncIterator[TournamentEvent]:
        """Live events until the tournament ends (ends at once if it already has)."""
        # Listening before the store is read (in a worker thread): nothing emitted
        # meanwhile, the end included, is lost.
        q: asyncio.Queue[TournamentEvent | None] = asyncio.Queue()
        self._watchers.setdefault(tid, []).append(q)
        try:
            row, (total, done) = await for_organizer(
                lambda: (self.store.tournament(tid), self.store.game_counts(tid)))
            if row is None:
                raise KeyError(tid)
            yield TournamentEvent(time.time(), tid, row.status, total, done,
                                  f"tournament is {row.status}")
            if row.status.over:
                return
            while (ev := await q.get()) is not None:
                yield ev
        finally:
            lst = self._watchers.get(tid)
            if lst and q in lst:
                lst.remove(q)
