"""The run of one tournament: an object per tournament being played, whose fields are the
state of its scheduling loop (the games pending, those in play, the absent bots, what
woke the loop), so each step of the loop is a method that reads and changes them.

:meth:`TournamentRun.execute` waits for the start (or for the bots of a resumed run),
voids the games stopped by a previous life of the referee, reads the schedule, then
loops: it starts the next game the seating chooses while the concurrency and the
database allow, and otherwise sleeps until something may let a game start (a game
ended, a stream came to the lobby, the database takes writes again, a heartbeat of the
cluster, an absence running past its limit). The director plays each game
(``Director._play``); the run only decides when.
"""

from __future__ import annotations

import asyncio
import time
from collections import Counter
from typing import Protocol

from ..cluster.member import Cluster
from ..host.pools import for_games
from ..logs import get_logger
from ..referee import Referee, Seat, ShuttingDown
from ..storage import GameRow, Store, StoreUnavailable
from ..tournament.formats.chain import plan_of
from ..tournament.model import TournamentSpec, declared
from ..tournament.twins import twin_running
from ..vocabulary import GameStatus, TournamentStatus
from .absence import Absences
from .cluster_link import ClusterLink
from .events import EventHub
from .game_rows import GameRows, Played
from .planner import Planner
from .remaining import Remaining
from .seating import Launch, Seating

log = get_logger("director")
#: How long a game waits before it is tried again when the database could not be
#: reached to claim it (seconds).
CLAIM_RETRY = 1.0


class Host(Protocol):
    """What a run needs of the director that hosts it (:class:`.director.Director`)."""

    referee: Referee
    store: Store
    cluster: Cluster | None
    link: ClusterLink | None
    seating: Seating
    events: EventHub
    rows: GameRows
    remaining: Remaining

    async def set_status(self, tid: str, status: TournamentStatus,
                         message: str | None = None) -> bool: ...

    def emit(self, tid: str, message: str) -> None: ...

    async def play_game(self, tid: str, spec: TournamentSpec, game: GameRow, mode: Launch,
                        seats: list[Seat] | None, may_replay: bool = True) -> Played: ...


class TournamentRun:
    """One tournament being played by this process's director."""

    def __init__(self, director: Host, tid: str) -> None:
        self.d = director
        self.tid = tid
        self.spec: TournamentSpec | None = None
        self.pending: list[GameRow] = []
        self.running: set[asyncio.Task[None]] = set()
        self.absent: Absences | None = None
        #: Set by whatever may let a game start (see the module's docstring).
        self.changed = asyncio.Event()
        #: Games played again after an internal error (once each).
        self.replayed: set[str] = set()
        #: Deal id -> games of it in play (twins wait for each other).
        self.in_play: Counter[str] = Counter()
        #: Ids of the games launched and not over.
        self.in_flight: set[str] = set()
        #: Shared: the scheduled games are read again when games were voided (the
        #: cluster's voids changed) or this process has none left (``look``).
        cluster = director.cluster
        self.voids_seen = cluster.voids if cluster is not None else 0
        self.look = False
        #: A game was found taken by another process: prune the pending list.
        self.stale = False
        #: A format's tournament (not the round-robin of old): its games are created as
        #: they come due (:mod:`.planner`); ``due``: a game ended since it was last asked.
        self.planner: Planner | None = None
        self.due = True

    async def execute(self, force_start: bool, resumed: bool) -> None:
        if not await self._prepare(force_start, resumed):
            return
        spec = self.spec
        assert spec is not None
        d = self.d
        stop_listening = d.referee.lobby.listen(self.changed.set)
        stop_health = d.rows.health.listen(self.changed.set)  # results wait: no game starts
        stop_beat = d.cluster.on_beat(self._beat) if d.cluster is not None else (lambda: None)
        try:
            await self._loop(spec)
        except asyncio.CancelledError:
            # Cancelled (CancelTournament), wherever the loop was: the games in flight
            # stop too, so nothing is recorded after the cancel; the caller voids their rows.
            await d.referee.cancel(self.running)
            raise
        finally:
            stop_listening()
            stop_health()
            stop_beat()
        if d.link is not None:
            await d.link.reconcile(self.tid)  # its watchers miss no game, whatever the bus lost
        if await d.set_status(self.tid, TournamentStatus.FINISHED, "tournament finished"):
            log.info("tournament_finished", tournament=self.tid)
        d.remaining.ended(self.tid, spec.bots, cancelled=False)
        d.events.close(self.tid)

    async def _prepare(self, force_start: bool, resumed: bool) -> bool:
        """Everything before the first game; False if the tournament is not to be run."""
        d, tid = self.d, self.tid
        # Read off the loop, with the counts the events start from.
        row, counts = await for_games(lambda: (d.store.tournament(tid), d.store.game_counts(tid)))
        if row is None or row.status.over:
            log.info("tournament_not_run", tournament=tid,
                     why="no such tournament" if row is None else f"it is {row.status}")
            return False
        d.events.prime(tid, row.status, counts)
        spec = self.spec = declared(row.spec)
        if row.status is TournamentStatus.SCHEDULED and not force_start:
            await d.seating.wait_for_start(tid, spec, lambda m: d.events.emit(tid, m))
        elif resumed:
            await self._await_bots(spec)
        voided = await d.rows.void_stopped(tid)
        if voided:
            log.info("games_voided", tournament=tid, count=voided)
            d.events.emit(tid, f"{voided} game(s) in flight when the referee stopped were voided "
                          "and will be played again from a new deal")
        await d.set_status(tid, TournamentStatus.RUNNING, "tournament started")
        self.absent = d.seating.absences(tid, spec)
        if not plan_of(spec).in_advance:
            self.planner = Planner(d.store, spec, tid)
            return True  # its games are read (and the due ones created) by _advance
        # The schedule is read in pages in a worker thread (no record; 100,000 games take
        # a while): the loop goes on serving the games of other tournaments meanwhile.
        games = await for_games(d.store.schedule, tid)
        if spec.duplicate_deals:
            d.seating.know_twins(tid, games)
        self.pending = [g for g in games if g.status is not GameStatus.FINISHED]
        d.remaining.track(tid, self.pending)
        return True

    async def _await_bots(self, spec: TournamentSpec) -> None:
        """The referee was restarted: its bots need a moment to find it again."""
        d, tid = self.d, self.tid
        wait = spec.connect_wait
        d.events.emit(tid, f"resuming: waiting up to {wait:g} s for every bot to reconnect")
        if not await d.referee.lobby.wait_all(spec.bots, wait):
            missing = [b for b in spec.bots if not d.referee.lobby.connected(b)]
            log.info("resuming_without", tournament=tid, missing=missing)

    async def _loop(self, spec: TournamentSpec) -> None:
        d, absent = self.d, self.absent
        assert absent is not None
        while True:
            if d.referee.closing is not None:
                # No game starts once the referee shuts down; those in progress end or
                # are stopped (without a result) by the shutdown. Shielded: a cancel
                # meanwhile reaches the games through run's handler, between writes.
                await asyncio.shield(asyncio.gather(*self.running, return_exceptions=True))
                raise ShuttingDown(d.referee.closing)
            if not await self._refresh():
                break
            for b in absent.returned(d.referee.lobby.connected):
                log.info("bot_back", tournament=self.tid, bot=b)
            if len(self.running) < spec.concurrency and d.rows.health.may_start(bool(self.running)):
                # Never two games of one deal at once (with nothing running, all may go).
                ready = [g for g in self.pending if not twin_running(g, self.in_play)]
                chosen = d.seating.next_game(self.tid, spec, ready, absent, idle=not self.running)
                if chosen is not None:
                    self._launch(*chosen)
                    continue
            await self._sleep(absent)

    async def _refresh(self) -> bool:
        """What is left to play: False when the tournament is over."""
        cluster = self.d.cluster
        if cluster is None:
            if self._asks():
                return await self._advance()
            return bool(self.pending or self.running)
        if cluster.voids != self.voids_seen or (self.look and not self.pending):
            self.voids_seen, self.look = cluster.voids, False
            fresh = await self.d.rows.scheduled(self.tid, self.in_flight)
            if fresh is None and not self.running and self.planner is None:
                return False  # every game is finished, by whichever process
            self.pending[:] = fresh or []
            # Every game stored is finished, by whichever process: the format is asked.
            self.due = self.due or fresh is None
        elif self.stale:
            self.stale = False
            await self.d.rows.prune(self.pending)
        if self._asks():
            return await self._advance()
        return True

    def _asks(self) -> bool:
        """The format is to be asked for its next games now: a game ended since it was
        last asked, and this run has room for more than it holds."""
        spec = self.spec
        assert spec is not None
        return self.planner is not None and self.due and len(self.pending) < spec.concurrency

    async def _advance(self) -> bool:
        """Ask the format for its next games (:mod:`.planner`) and take the scheduled
        ones as pending: False when it says every stage is over."""
        d, planner, spec = self.d, self.planner, self.spec
        assert planner is not None and spec is not None
        self.due = False
        try:
            adv = await for_games(planner.advance)
        except StoreUnavailable as e:
            log.warning("next_games_not_created", tournament=self.tid, error=str(e))
            self._again_soon()
            return True
        if adv.over:
            if not self.running:
                log.info("format_over", tournament=self.tid, ranking=list(adv.ranking))
                return False
            return True
        if adv.created:
            d.emit(self.tid, f"games created: {adv.created}")
        if spec.duplicate_deals:
            d.seating.know_twins(self.tid, adv.stored)
        self.pending[:] = [g for g in adv.scheduled if g.id not in self.in_flight]
        d.remaining.track(self.tid, adv.unfinished, hold=adv.alive)
        if not self.pending and not self.running and d.cluster is None:
            # Nothing to play and nothing that could end: a game must be left to another
            # life of the referee (it cannot, alone); looked at again in a moment.
            self._again_soon()
        return True

    def _again_soon(self) -> None:
        """Ask the format again after CLAIM_RETRY seconds."""
        def wake() -> None:
            self.due = True
            self.changed.set()

        asyncio.get_running_loop().call_later(CLAIM_RETRY, wake)

    async def _sleep(self, absent: Absences) -> None:
        """Until something may let a game start, or the next absence runs past its limit."""
        self.changed.clear()
        now = time.monotonic()
        expiry = absent.next_expiry(now)
        timeout = None if expiry is None else expiry - now
        waiter = asyncio.ensure_future(self.changed.wait())
        try:
            await asyncio.wait({waiter}, timeout=timeout)
        finally:
            waiter.cancel()

    def _launch(self, game: GameRow, mode: Launch, seats: list[Seat] | None = None) -> None:
        self.pending.remove(game)
        self.in_play[game.deal_id] += 1
        self.in_flight.add(game.id)
        t = asyncio.ensure_future(self._one(game, mode, seats))
        self.running.add(t)
        t.add_done_callback(self.running.discard)

    async def _one(self, game: GameRow, mode: Launch, seats: list[Seat] | None) -> None:
        spec = self.spec
        assert spec is not None
        try:
            what = await self.d.play_game(self.tid, spec, game, mode, seats,
                                      may_replay=game.id not in self.replayed)
            self.stale = self.stale or what is Played.GONE
            if what is Played.AGAIN:
                self.replayed.add(game.id)
            elif what is Played.RETRY:
                await asyncio.sleep(CLAIM_RETRY)  # the database is out of reach
            if what in (Played.AGAIN, Played.RETRY):
                self.pending.insert(0, game)
        finally:
            self.in_play[game.deal_id] -= 1
            self.in_flight.discard(game.id)
            self.look = True
            self.due = True
            # Out of ``running`` before the loop wakes (the task's done callback would
            # come one pass later, after the loop has looked).
            current = asyncio.current_task()
            if current is not None:
                self.running.discard(current)
            self.changed.set()

    def _beat(self) -> None:
        self.look = True
        self.changed.set()
