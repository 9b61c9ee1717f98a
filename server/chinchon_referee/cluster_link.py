"""What the director hears from the other referee processes sharing its database: their
tournaments' events, and word that tournaments were declared, started, finished or
cancelled (also read from the store at every lease of the cluster, in case a word was
missed)."""

from __future__ import annotations

import asyncio
import time
from typing import Protocol

from chinchon.engine import Outcome

from .cluster import EVENT, TOURNAMENTS, Cluster
from .events import EventHub, TournamentEvent
from .logs import get_logger
from .referee import Referee
from .remaining import Remaining, participants
from .storage import Store, StoreUnavailable
from .tournament import TournamentSpec
from .vocabulary import TournamentStatus

log = get_logger("director")
#: Heartbeats between two readings of the tournaments (besides the bus's words).
DISCOVER_EVERY = 3


class Runs(Protocol):
    """What the link needs of the director: its tournaments' runs, events and bots."""

    referee: Referee
    store: Store
    events: EventHub
    remaining: Remaining

    def active(self, tid: str) -> bool: ...

    def run_soon(self, tid: str, resumed: bool = False) -> None: ...

    async def stop_task(self, tid: str) -> None: ...

    def spec_of(self, tid: str) -> TournamentSpec: ...


class ClusterLink:
    def __init__(self, director: Runs, cluster: Cluster) -> None:
        self.director = director
        self.cluster = cluster
        self._beats = 0
        cluster.handlers[EVENT] = self._heard
        cluster.handlers[TOURNAMENTS] = lambda _msg: self._discover_soon()
        cluster.on_beat(self._beat)

    def _beat(self) -> None:
        self._beats += 1
        if self._beats % DISCOVER_EVERY == 0:
            self._discover_soon()

    def _heard(self, msg: dict[str, object]) -> None:
        """An event of another process (see :meth:`_emit`)."""
        tid = str(msg["t"])
        status = TournamentStatus(str(msg["s"])) if msg.get("s") else None
        raw = msg.get("r")
        result = Outcome.from_json(raw) if isinstance(raw, dict) else None
        when = msg.get("ts")
        self.director.events.deliver(TournamentEvent(
            float(when) if isinstance(when, (int, float)) else time.time(), tid, status, 0, 0,
            str(msg["m"]), str(msg.get("g") or ""), result))
        players = msg.get("p")
        if result is not None and isinstance(players, list):
            self.director.remaining.played(tid, [str(p) for p in players])
        if status is not None and status.over:
            self.cluster.soon(self._stopped_elsewhere(tid, status))

    async def _stopped_elsewhere(self, tid: str, status: TournamentStatus) -> None:
        """Another process finished or cancelled ``tid`` (and wrote it in the store): its
        run here stops, if it has not, and its bots are dismissed from this process too."""
        if self.director.active(tid):
            await self.director.stop_task(tid)
        self.director.events.status_set(tid, status)
        self.director.events.close(tid)
        try:
            spec = await asyncio.to_thread(self.director.spec_of, tid)
        except (StoreUnavailable, KeyError) as e:
            log.warning("tournament_not_read", tournament=tid, error=str(e))
            return
        self.director.remaining.ended(tid, spec.bots,
                                      cancelled=status is TournamentStatus.CANCELLED)

    def _discover_soon(self) -> None:
        self.cluster.soon(self.discover())

    async def discover(self) -> None:
        """Shared: run the tournaments declared or started through another process, and
        stop those it finished or cancelled."""
        if self.director.referee.closing is not None:
            return
        try:
            rows = await asyncio.to_thread(self.director.store.tournaments)
        except StoreUnavailable as e:
            log.warning("tournaments_not_read", error=str(e))
            return
        for t in rows:
            active = self.director.active(t.id)
            if t.status.over:
                if active:
                    await self._stopped_elsewhere(t.id, t.status)
            elif not active and (t.status is TournamentStatus.RUNNING
                                 or t.spec.get("start") != "manual"):
                self.director.remaining.declared(t.id, participants(t.spec))
                self.director.run_soon(t.id)

