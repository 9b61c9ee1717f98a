"""What the director hears from the other referee processes sharing its database: their
tournaments' events, and word that tournaments were declared, started, finished or
cancelled (also read from the store at every lease of the cluster, in case a word was
missed)."""

from __future__ import annotations

from typing import Protocol

from chinchon.engine import Outcome

from ..cluster.member import Cluster
from ..cluster.messages import Kind, Message
from ..host.pools import for_games
from ..logs import get_logger
from ..referee import Referee
from ..storage import Store, StoreUnavailable
from ..tournament.model import TournamentSpec
from ..vocabulary import TournamentStatus
from .events import EventHub, TournamentEvent
from .remaining import Remaining, participants

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
        cluster.handlers[Kind.EVENT] = self._heard
        cluster.handlers[Kind.TOURNAMENTS] = lambda _msg: self._discover_soon()
        cluster.handlers[Kind.RECONCILE] = lambda _msg: self._reconcile_soon()
        cluster.on_beat(self._beat)
        director.events.track = True

    def _beat(self) -> None:
        self._beats += 1
        if self._beats % DISCOVER_EVERY == 0:
            self._discover_soon()

    def _heard(self, msg: Message) -> None:
        """An event of another process (see ``Director._emit``)."""
        ev = msg.event
        if ev is None:
            return
        tid, status, result = ev.tournament, ev.status, ev.result
        self.director.events.deliver(TournamentEvent(
            ev.time, tid, status, 0, 0, ev.message, ev.game_id, result))
        if result is not None and ev.players:
            self.director.remaining.played(tid, list(ev.players))
        if status is not None and status.over:
            self.cluster.soon(self._stopped_elsewhere(tid, status))

    async def _stopped_elsewhere(self, tid: str, status: TournamentStatus) -> None:
        """Another process finished or cancelled ``tid`` (and wrote it in the store): its
        run here stops, if it has not, and its bots are dismissed from this process too."""
        if self.director.active(tid):
            await self.director.stop_task(tid)
        self.director.events.status_set(tid, status)
        await self.reconcile(tid)  # its watchers miss no game before their watch ends
        self.director.events.close(tid)
        try:
            spec = await for_games(self.director.spec_of, tid)
        except (StoreUnavailable, KeyError) as e:
            log.warning("tournament_not_read", tournament=tid, error=str(e))
            return
        self.director.remaining.ended(tid, spec.bots,
                                      cancelled=status is TournamentStatus.CANCELLED)

    def _reconcile_soon(self) -> None:
        for tid in self.director.events.running():
            self.cluster.soon(self.reconcile(tid))

    async def reconcile(self, tid: str) -> None:
        """Bring what the watchers of ``tid`` were told to what the store holds: the ends
        of games they missed (the bus was lost a while), and the store's counts."""
        store = self.director.store

        def read() -> tuple[list[tuple[str, list[str], Outcome]], tuple[int, int]]:
            out, after = [], -1
            while page := store.finished_scores(tid, after, 500):
                out += [(g.id, g.players, g.result) for g in page if g.result is not None]
                after = page[-1].seq
            return out, store.game_counts(tid)

        try:
            finished, counts = await for_games(read)
        except StoreUnavailable as e:
            log.warning("tournament_not_reconciled", tournament=tid, error=str(e))
            return
        missed = self.director.events.reconcile(tid, [(g, r) for g, _, r in finished], counts)
        players = {g: p for g, p, _ in finished}
        for g in missed:
            self.director.remaining.played(tid, players[g])
        if missed:
            log.info("events_reconciled", tournament=tid, games=len(missed))

    def _discover_soon(self) -> None:
        self.cluster.soon(self.discover())

    async def discover(self) -> None:
        """Shared: run the tournaments declared or started through another process, and
        stop those it finished or cancelled."""
        if self.director.referee.closing is not None:
            return
        try:
            rows = await for_games(self.director.store.tournaments)
        except StoreUnavailable as e:
            log.warning("tournaments_not_read", error=str(e))
            return
        hub = self.director.events
        for t in rows:
            active = self.director.active(t.id)
            if not t.status.over and hub.done(t.id) is not None:
                # Every few heartbeats: the events' count against the store's (cheap),
                # reconciled if they differ (a message of the bus lost unnoticed).
                try:
                    _, done = await for_games(self.director.store.game_counts, t.id)
                except StoreUnavailable:
                    continue
                if done != hub.done(t.id):
                    await self.reconcile(t.id)
            if t.status.over:
                if active:
                    await self._stopped_elsewhere(t.id, t.status)
                elif self.director.remaining.holds(t.id):
                    # Its end was said while this process could not hear (the bus or the
                    # database out of reach): its bots are not kept waiting here.
                    self.director.remaining.ended(t.id, participants(t.spec),
                                                  cancelled=t.status is TournamentStatus.CANCELLED)
            elif not active and (t.status is TournamentStatus.RUNNING
                                 or t.spec.get("start") != "manual"):
                self.director.remaining.declared(t.id, participants(t.spec))
                self.director.run_soon(t.id)

