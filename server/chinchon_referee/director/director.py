"""The tournament director: runs tournaments of every format on a referee, durably.

Every step is written to the store as it happens: a game is marked ``running`` before
it starts and ``finished`` (with its record) when it ends (:mod:`.game_rows`). After a
crash the director voids the games that were running and plays them again, each attempt
from a deal of its own (``chinchon.engine.attempt_deal``); finished games are never
played again.

Games are started in schedule order as soon as their bots have a free stream, up to
the tournament's concurrency. A bot that is not connected when its game is due gets
the reconnect grace to appear; after that it forfeits that game (NO_SHOW) and is
*absent* (see :mod:`.absence`): its later games are postponed while any other game can
be played; when nothing else can, the game that is due waits the grace and forfeits
alone. After ``policies.absence_limit`` seconds of absence its remaining games forfeit
at once. A bot that connects again plays its postponed games normally.

Sharing its database with other referee processes (a :class:`~.cluster.Cluster`), the
director runs every tournament of the database too, and plays the games it can seat:
it claims each before playing it; it leaves to the others a game of a bot that is
connected to another process only (it never forfeits such a bot); it reads the
scheduled games again when games were voided, and whenever it has none left; the
tournament is over when the store counts every game finished. Tournaments declared,
started or cancelled through another process, and every process's events, reach it
through the cluster.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Sequence
from dataclasses import asdict

from chinchon.engine import Outcome, Termination

from ..auth import TokenBook
from ..cluster.member import Cluster
from ..cluster.messages import BusEvent, Kind
from ..host.pools import for_organizer
from ..logs import get_logger
from ..referee import GameOutcome, Referee, Seat, ShuttingDown
from ..storage import GameRow, Store, StoreUnavailable
from ..tournament.model import Participant, TournamentSpec, schedule
from ..tournament.round_robin import RoundRobin
from ..vocabulary import TournamentStatus
from .cluster_link import ClusterLink
from .declare import declare
from .events import EventHub, TournamentEvent
from .game_rows import Finish, GameRows, Played
from .reads import TournamentReads
from .remaining import Remaining
from .run import TournamentRun
from .seating import Launch, Seating

log = get_logger("director")


class Director(TournamentReads):
    def __init__(self, referee: Referee, store: Store, tokens: TokenBook,
                 cluster: Cluster | None = None) -> None:
        super().__init__(store)
        self.referee = referee
        self.tokens = tokens
        #: The other referee processes sharing the database (None: this one alone).
        self.cluster = cluster
        self._tasks: dict[str, asyncio.Task[None]] = {}
        #: Which game starts next, and its spec.
        self.seating = Seating(referee, store, cluster)
        #: The tournaments' live events.
        self.events = EventHub(store)
        #: The games' rows, written in a thread of their own.
        self.rows = GameRows(store, cluster)
        #: Games left per bot; dismisses the bots no tournament needs any more.
        self.remaining = Remaining(store, referee.lobby)
        #: Games stopped because this process could not renew its leases in time.
        self._lease_stopped: set[str] = set()
        self.rows.health.listen(self._health_changed)
        self.link = ClusterLink(self, cluster) if cluster is not None else None
        if cluster is not None:
            cluster.on_leases_lost(self._leases_lost)

    # -- declaring ------------------------------------------------------------------------
    def create(self, spec: TournamentSpec, tid: str | None = None, *,
               replace_tokens: bool = False) -> tuple[str, list[Participant]]:
        """Store a tournament and its schedule, and register its new bots (see
        :func:`.declare.declare`); the other processes of a shared database hear of it."""
        tid, parts = declare(self.store, self.tokens, spec, tid, replace_tokens=replace_tokens)
        self.remaining.declared(tid, [p.name for p in parts])
        if self.cluster is not None:
            self.cluster.publish(Kind.BOTS)
            self.cluster.publish(Kind.TOURNAMENTS)
        return tid, parts

    def adopt(self, tid: str, parts: Sequence[tuple[str, str]]) -> None:
        """A tournament declared by the organizer's worker process (stored there): the
        tokens it generated or was given (``(bot, token)``, empty for a bot that keeps
        its registered one) take effect here, its bots are counted, and the other
        processes of a shared database hear of it. Cheap: no store call."""
        for name, token in parts:
            if token:
                self.tokens.add(name, token)
        self.remaining.declared(tid, [name for name, _ in parts])
        if self.cluster is not None:
            self.cluster.publish(Kind.BOTS)
            self.cluster.publish(Kind.TOURNAMENTS)

    async def create_async(self, spec: TournamentSpec) -> tuple[str, list[Participant]]:
        """``create`` in a worker thread: building and storing a large schedule takes
        seconds, during which the event loop keeps serving the games in progress."""
        return await for_organizer(self.create, spec)

    @staticmethod
    def schedule(spec: TournamentSpec, tid: str) -> RoundRobin:
        return schedule(spec, tid)

    # -- running --------------------------------------------------------------------------
    def start(self, tid: str, resumed: bool = False) -> None:
        """Run (or resume) a tournament in the background. ``resumed``: it was running
        when the referee stopped (its bots are given time to reconnect first). Its row
        is read by the run, off the event loop: a finished one ends it at once."""
        self.run_soon(tid, resumed)

    def resume_all(self) -> list[str]:
        """At start-up: pick up every tournament that was running, or scheduled to start
        by itself (a "manual" one waits for StartTournament)."""
        rows = [
            t for t in self.store.tournaments()
            if t.status is TournamentStatus.RUNNING
            or (t.status is TournamentStatus.SCHEDULED and t.spec.get("start") != "manual")
        ]
        for t in rows:
            self.start(t.id, resumed=t.status is TournamentStatus.RUNNING)
        return [t.id for t in rows]

    async def start_now(self, tid: str) -> None:
        """Start at once, whatever the declared start (admin StartTournament)."""
        row = await for_organizer(self.store.tournament, tid)
        if row is None:
            raise KeyError(tid)
        if self.active(tid) and row.status is TournamentStatus.RUNNING:
            return
        await self.stop_task(tid)
        if row.status.over:
            raise ValueError(f"tournament {tid} is {row.status}")
        await self.set_status(tid, TournamentStatus.RUNNING)
        self.run_soon(tid)
        if self.cluster is not None:
            self.cluster.publish(Kind.TOURNAMENTS)

    async def settle(self, timeout: float) -> None:
        """Wait up to ``timeout`` s for every tournament's task to end (after the referee
        began shutting down, they stop without starting a game)."""
        tasks = [t for t in self._tasks.values() if not t.done()]
        if tasks:
            await asyncio.wait(tasks, timeout=timeout)

    async def wait(self, tid: str) -> None:
        task = self._tasks.get(tid)
        if task is not None:
            await task

    def active(self, tid: str) -> bool:
        """A run of ``tid`` is in progress here."""
        task = self._tasks.get(tid)
        return task is not None and not task.done()

    def run_soon(self, tid: str, resumed: bool = False) -> None:
        """Run ``tid`` here, unless it runs already."""
        if not self.active(tid):
            self._tasks[tid] = asyncio.ensure_future(self.run(tid, resumed=resumed))

    async def stop_task(self, tid: str) -> None:
        """Stop the run of ``tid`` here, writing nothing."""
        task = self._tasks.get(tid)
        if task is not None and not task.done():
            task.cancel()
            try:
                await task
            except asyncio.CancelledError:
                pass

    async def cancel(self, tid: str) -> None:
        await self.stop_task(tid)
        spec = await for_organizer(self.spec_of, tid)  # KeyError: no such tournament
        # Every process's games of it: a result another process writes after this is
        # refused (the row is not its any more).
        await self.rows.write(self.store.void_running, tid)
        await self.set_status(tid, TournamentStatus.CANCELLED, "tournament cancelled")
        self.remaining.ended(tid, spec.bots, cancelled=True)
        self.events.close(tid)

    async def run(self, tid: str, force_start: bool = False, resumed: bool = False) -> None:
        try:
            await self._run(tid, force_start, resumed)
        except StoreUnavailable as e:
            # Sharing the database, the run starts again at the next reading of the
            # tournaments (ClusterLink); alone, at the next start of the referee.
            log.error("tournament_run_stopped", tournament=tid, error=str(e))
        except ShuttingDown:
            # The referee stopped: the tournament stays "running", and its games that
            # were stopped are voided and played again when it resumes.
            log.info("tournament_paused", tournament=tid, why="the referee is shutting down")
            self.events.emit(tid, "the referee is shutting down: the tournament will resume "
                            "where it stopped")
            self.events.close(tid)

    async def _run(self, tid: str, force_start: bool, resumed: bool) -> None:
        await TournamentRun(self, tid).execute(force_start, resumed)

    async def play_game(
        self, tid: str, spec: TournamentSpec, game: GameRow, mode: Launch, seats: list[Seat] | None,
        may_replay: bool = True,
    ) -> Played:
        """Play (or forfeit) one game and record it."""
        absent = self.seating.absences(tid, spec)
        if mode is Launch.FORFEIT and self.referee.closing is not None:
            # The shutdown began after this forfeit was launched: no result. The game
            # stays scheduled, and the resumed tournament plays it if the bot is back.
            log.info("game_not_recorded", tournament=tid, game_id=game.id)
            return Played.DONE
        if mode is Launch.FORFEIT and not absent.missing(game.players):
            mode = Launch.WAIT  # its bots came back between the launch and now: play it
        gone: list[int] = []
        if mode is Launch.WAIT:  # due: its bots' free streams, or those not connected at all
            try:
                seats, gone = await self.seating.wait_for_seats(
                    tid, spec, game, lambda m: self.events.emit(tid, m, game.id))
            except ShuttingDown:
                return Played.DONE
            if seats is None and not gone:
                return Played.RETRY  # a bot is on another process only: left to it
            mode = Launch.SEATED if seats is not None else Launch.FORFEIT
        unreachable = False
        try:
            attempt = await self.rows.begin(game, spec.duplicate_deals)
        except StoreUnavailable as e:
            log.warning("game_not_claimed", tournament=tid, game_id=game.id, error=str(e))
            attempt, unreachable = None, True
        if attempt is None:
            for s in seats or []:
                if s.conn is not None:
                    self.referee.lobby.give_back(s.conn)
            return Played.RETRY if unreachable else Played.GONE
        gs = self.seating.game_spec(tid, spec, game, attempt)  # dealt anew for each attempt
        self._emit(tid, f"game {game.id} started: {' vs '.join(game.players)}", game.id)
        if mode is Launch.FORFEIT:
            outcome = self.referee.no_show(gs, gone or absent.missing(game.players))
        else:
            try:
                outcome = await self.referee.play(gs, seats, release=True)
            except ShuttingDown:
                # Stopped before its end (or before its start): no result; the row stays
                # "running" and is voided, then played again, when the tournament resumes.
                log.info("game_not_recorded", tournament=tid, game_id=game.id)
                return Played.DONE
            lost = game.id in self._lease_stopped
            if outcome.termination is Termination.ABORTED and (may_replay or lost):
                self._lease_stopped.discard(game.id)
                try:
                    await self.rows.void(game.id, lambda: self.referee.closing is not None)
                except StoreUnavailable:
                    return Played.DONE  # shutting down: voided when the tournament resumes
                log.warning("game_replayed", tournament=tid, game_id=game.id,
                            why=outcome.result.summary)
                why = "this process lost its database" if lost else "an internal error of the referee"
                self._emit(tid, f"game {game.id} was stopped by {why}: it will be played again "
                           "from a new deal", game.id)
                return Played.RETRY if lost else Played.AGAIN
        if outcome.termination is Termination.FORFEIT_NO_SHOW:
            away = [b for i, b in enumerate(game.players) if i not in outcome.winners]
            absent.mark(away, time.monotonic())
            log.info("bots_absent", tournament=tid, bots=away,
                     forfeit_all_after=spec.policies.absence_limit)
        return await self._finish(tid, game, outcome)

    async def _finish(self, tid: str, game: GameRow, outcome: GameOutcome) -> Played:
        game.result = outcome.result
        game.record = outcome.record
        game.stats = [asdict(s) for s in outcome.stats]
        message = f"game {game.id} ended: {outcome.result.summary}"
        # Shared: told to the others in the transaction that stores it (cluster.py).
        note = self._note(tid, message, game.id, outcome.result, game.players)
        try:
            done = await self.rows.finish(game, lambda: self.referee.closing is not None, note)
        except StoreUnavailable:
            log.warning("game_not_recorded", tournament=tid, game_id=game.id,
                        why="the database is out of reach and the referee is shutting down")
            return Played.DONE
        if done is Finish.LOST:
            log.warning("game_result_dropped", tournament=tid, game_id=game.id,
                        why="its lease ran out while the database was out of reach: it was "
                        "voided, and is played again from a new deal")
            return Played.GONE
        if self.events.game_finished(tid, game.id):
            self._emit(tid, message, game.id, outcome.result, game.players, sent=note is not None)
        self.remaining.played(tid, game.players)
        return Played.DONE

    def _health_changed(self) -> None:
        """The database stopped or started again taking writes: every running tournament's
        watchers hear it."""
        h = self.rows.health
        text = (f"the database cannot take results now ({h.problem}): the games in progress "
                "finish and their results wait; no new game starts until it can"
                if h.problem is not None else "the database takes results again")
        for tid in self.events.running():
            self.events.emit(tid, text)

    def _leases_lost(self) -> None:
        """The database is out of reach and this process's leases may run out: its games
        stop now, before another process may take them (:mod:`.cluster`)."""
        self._lease_stopped |= self.referee.stop(
            self.rows.claimed, "this referee process lost its database for too long")

    async def set_status(self, tid: str, status: TournamentStatus, message: str | None = None
                         ) -> bool:
        """Store the status of ``tid`` (in the writer thread, after the games' writes;
        tried again while the database is out of reach); False if it had it already.
        ``message``: the event that tells it, if it changed (or alone on the database)."""
        note = None if message is None else self._note(tid, message, status=status)
        changed = await self.rows.retried(self.store.set_tournament_status, tid, status, note,
                                          closing=lambda: self.referee.closing is not None)
        self.events.status_set(tid, status)
        if message is not None and (changed or self.cluster is None):
            self._emit(tid, message, sent=note is not None)
        return changed

    def _note(self, tid: str, message: str, game_id: str = "", result: Outcome | None = None,
              players: Sequence[str] = (), status: TournamentStatus | None = None) -> str | None:
        if self.cluster is None:
            return None
        return self.cluster.event_note(BusEvent(
            tid, message, game_id, status or self.events.status_of(tid), result, tuple(players)))

    # -- the other processes --------------------------------------------------------------
    def emit(self, tid: str, message: str) -> None:
        """An event of ``tid`` for the watchers of every process."""
        self._emit(tid, message)

    def _emit(self, tid: str, message: str, game_id: str = "", result: Outcome | None = None,
              players: Sequence[str] = (), sent: bool = False) -> None:
        """An event for the watchers of every process (those of this one, and through the
        cluster the others', unless ``sent`` with its write); ``players``: of a game that
        ended."""
        ev = self.events.emit(tid, message, game_id, result)
        if self.cluster is not None and not sent:
            self.cluster.publish(Kind.EVENT, BusEvent(
                tid, message, game_id, ev.status, result, tuple(players), ev.time))

    # -- events ---------------------------------------------------------------------------
    def watch(self, tid: str) -> AsyncIterator[TournamentEvent]:
        """Live events until the tournament ends (ends at once if it already has)."""
        return self.events.watch(tid)
