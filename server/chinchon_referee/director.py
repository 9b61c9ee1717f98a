"""The tournament director: runs scheduled round-robins on a referee, durably.

Every step is written to the store as it happens: a game is marked ``running`` before
it starts and ``finished`` (with its record) when it ends (:mod:`.game_rows`). After a
crash the director voids the games that were running and replays them from the same
deal; finished games are never played again.

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
import datetime as dt
import enum
import time
from collections import Counter
from collections.abc import AsyncIterator, Sequence
from dataclasses import asdict

from chinchon.engine import Outcome, Termination

from .auth import TokenBook
from .cluster import BOTS, EVENT, TOURNAMENTS, Cluster
from .cluster_link import ClusterLink
from .declare import declare
from .events import EventHub, TournamentEvent
from .game_rows import Finish, GameRows
from .logs import get_logger
from .referee import GameOutcome, Referee, Seat, ShuttingDown
from .remaining import Remaining
from .round_robin import RoundRobin
from .seating import Seating
from .standings import Standings, stored_standings
from .storage import GameRow, Store, StoreUnavailable, TournamentRow
from .tournament import Participant, TournamentSpec, schedule, start_time
from .twins import twin_running
from .vocabulary import GameStatus, TournamentStatus

log = get_logger("director")
#: How long a game waits before it is tried again when the database could not be
#: reached to claim it (seconds).
CLAIM_RETRY = 1.0


class Played(enum.Enum):
    """What became of a game the director launched."""

    DONE = "done"          # played (or forfeited) and recorded, or stopped by a shutdown
    AGAIN = "again"        # hit an internal error of the referee: to be played again here
    GONE = "gone"          # claimed by another process, or its result was not this one's
    RETRY = "retry"        # the database was out of reach: to be tried again in a moment


class Director:
    def __init__(self, referee: Referee, store: Store, tokens: TokenBook,
                 cluster: Cluster | None = None) -> None:
        self.referee = referee
        self.store = store
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
        if cluster is not None:
            ClusterLink(self, cluster)
            cluster.on_leases_lost(self._leases_lost)

    # -- declaring ------------------------------------------------------------------------
    def create(self, spec: TournamentSpec, tid: str | None = None, *,
               replace_tokens: bool = False) -> tuple[str, list[Participant]]:
        """Store a tournament and its schedule, and register its new bots (see
        :func:`.declare.declare`); the other processes of a shared database hear of it."""
        tid, parts = declare(self.store, self.tokens, spec, tid, replace_tokens=replace_tokens)
        self.remaining.declared(tid, [p.name for p in parts])
        if self.cluster is not None:
            self.cluster.publish(BOTS)
            self.cluster.publish(TOURNAMENTS)
        return tid, parts

    async def create_async(self, spec: TournamentSpec) -> tuple[str, list[Participant]]:
        """``create`` in a worker thread: building and storing a large schedule takes
        seconds, during which the event loop keeps serving the games in progress."""
        return await asyncio.to_thread(self.create, spec)

    @staticmethod
    def schedule(spec: TournamentSpec, tid: str) -> RoundRobin:
        return schedule(spec, tid)

    def spec_of(self, tid: str) -> TournamentSpec:
        row = self.store.tournament(tid)
        if row is None:
            raise KeyError(tid)
        return _declared(row)

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
        row = await asyncio.to_thread(self.store.tournament, tid)
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
            self.cluster.publish(TOURNAMENTS)

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
        spec = await asyncio.to_thread(self.spec_of, tid)  # KeyError: no such tournament
        # Every process's games of it: a result another process writes after this is
        # refused (the row is not its any more).
        await self.rows.write(self.store.void_running, tid)
        await self.set_status(tid, TournamentStatus.CANCELLED)
        self.remaining.ended(tid, spec.bots, cancelled=True)
        self._emit(tid, "tournament cancelled")
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
        # Read off the loop, with the counts the events start from.
        row, counts = await asyncio.to_thread(
            lambda: (self.store.tournament(tid), self.store.game_counts(tid)))
        if row is None or row.status.over:
            log.info("tournament_not_run", tournament=tid,
                     why="no such tournament" if row is None else f"it is {row.status}")
            return
        self.events.prime(tid, row.status, counts)
        spec = _declared(row)
        if row.status is TournamentStatus.SCHEDULED and not force_start:
            await self._wait_for_start(tid, spec)
        elif resumed:
            # The referee was restarted: its bots need a moment to find it again.
            wait = spec.connect_wait
            self.events.emit(tid, f"resuming: waiting up to {wait:g} s for every bot to reconnect")
            if not await self.referee.lobby.wait_all(spec.bots, wait):
                missing = [b for b in spec.bots if not self.referee.lobby.connected(b)]
                log.info("resuming_without", tournament=tid, missing=missing)
        voided = await self.rows.void_stopped(tid)
        if voided:
            log.info("games_voided", tournament=tid, count=voided)
            self.events.emit(tid, f"{voided} game(s) in flight when the referee stopped were voided "
                            "and will be replayed from the same deal")
        if await self.set_status(tid, TournamentStatus.RUNNING) or self.cluster is None:
            self._emit(tid, "tournament started")
        # The schedule is read in pages in a worker thread (no record; 100,000 games take
        # a while): the loop goes on serving the games of other tournaments meanwhile.
        games = await asyncio.to_thread(self.store.schedule, tid)
        if spec.duplicate_deals:
            self.seating.know_twins(tid, games)
        pending = [g for g in games if g.status is not GameStatus.FINISHED]
        del games
        self.remaining.track(tid, pending)
        running: set[asyncio.Task[None]] = set()
        absent = self.seating.absences(tid, spec)
        # Set by whatever may let a game start: a game ended, a stream came to the lobby
        # idle (a bot connected or came back, a game gave its streams back), the lobby
        # closed (shutdown), a heartbeat of the cluster. An absence running past its
        # limit wakes the loop by timer.
        changed = asyncio.Event()

        replayed: set[str] = set()  # games played again after an internal error
        in_play: Counter[str] = Counter()  # deal id -> games of it in play (twins wait)
        in_flight: set[str] = set()  # ids of the games launched and not over
        # Shared: the scheduled games are read again when games were voided (cluster
        # voids changed) or this process has none left (``look``: something happened).
        voids_seen = self.cluster.voids if self.cluster is not None else 0
        look = False
        stale = False  # a game was found taken by another process: prune the list

        def launch(game: GameRow, mode: str, seats: list[Seat] | None = None) -> None:
            pending.remove(game)
            in_play[game.deal_id] += 1
            in_flight.add(game.id)

            async def one() -> None:
                nonlocal look, stale
                try:
                    what = await self._play(tid, spec, game, mode, seats,
                                            may_replay=game.id not in replayed)
                    stale = stale or what is Played.GONE
                    if what is Played.AGAIN:
                        replayed.add(game.id)
                    elif what is Played.RETRY:
                        await asyncio.sleep(CLAIM_RETRY)  # the database is out of reach
                    if what in (Played.AGAIN, Played.RETRY):
                        pending.insert(0, game)
                finally:
                    in_play[game.deal_id] -= 1
                    in_flight.discard(game.id)
                    look = True
                    # Out of ``running`` before the loop wakes (the task's done callback
                    # would come one pass later, after the loop has looked).
                    running.discard(asyncio.current_task())  # type: ignore[arg-type]
                    changed.set()

            t = asyncio.ensure_future(one())
            running.add(t)
            t.add_done_callback(running.discard)

        def beat() -> None:
            nonlocal look
            look = True
            changed.set()

        stop_listening = self.referee.lobby.listen(changed.set)
        stop_beat = self.cluster.on_beat(beat) if self.cluster is not None else (lambda: None)
        try:
            while True:
                if self.referee.closing is not None:
                    # No game starts once the referee shuts down; those in progress end or
                    # are stopped (without a result) by the shutdown.
                    await asyncio.gather(*running, return_exceptions=True)
                    raise ShuttingDown(self.referee.closing)
                if self.cluster is None:
                    if not pending and not running:
                        break
                elif self.cluster.voids != voids_seen or (look and not pending):
                    voids_seen, look = self.cluster.voids, False
                    fresh = await self.rows.scheduled(tid, in_flight)
                    if fresh is None and not running:
                        break  # every game is finished, by whichever process
                    pending[:] = fresh or []
                elif stale:
                    stale = False
                    await self.rows.prune(pending)
                for b in absent.returned(self.referee.lobby.connected):
                    log.info("bot_back", tournament=tid, bot=b)
                if len(running) < spec.concurrency:
                    # Never two games of one deal at once (with nothing running, all may go).
                    ready = [g for g in pending if not twin_running(g, in_play)]
                    chosen = self.seating.next_game(tid, spec, ready, absent, idle=not running)
                    if chosen is not None:
                        launch(*chosen)
                        continue
                changed.clear()
                now = time.monotonic()
                expiry = absent.next_expiry(now)
                timeout = None if expiry is None else expiry - now
                waiter = asyncio.ensure_future(changed.wait())
                try:
                    await asyncio.wait({waiter}, timeout=timeout)
                except asyncio.CancelledError:
                    # Cancelled (CancelTournament): the games in flight stop too, so nothing is
                    # recorded after the cancel; their rows are voided by the caller.
                    for t in list(running):
                        t.cancel()
                    await asyncio.gather(*running, return_exceptions=True)
                    raise
                finally:
                    waiter.cancel()
        finally:
            stop_listening()
            stop_beat()
        if await self.set_status(tid, TournamentStatus.FINISHED) or self.cluster is None:
            self._emit(tid, "tournament finished")
            log.info("tournament_finished", tournament=tid)
        self.remaining.ended(tid, spec.bots, cancelled=False)
        self.events.close(tid)

    async def _wait_for_start(self, tid: str, spec: TournamentSpec) -> None:
        when = start_time(spec.start)
        if when is not None:
            delay = (when - dt.datetime.now(dt.UTC)).total_seconds()
            if delay > 0:
                self.events.emit(tid, f"waiting until {when.isoformat()}")
                await asyncio.sleep(delay)
        elif spec.start == "when_connected":
            self.events.emit(tid, "waiting for every bot to connect")
            # Wait for everyone, but never forever: after the grace, start anyway and
            # let the absent forfeit.
            while not await self.referee.lobby.wait_all(spec.bots, max(1.0, spec.policies.reconnect_grace)):
                missing = [b for b in spec.bots if not self.referee.lobby.connected(b)]
                connected = len(spec.bots) - len(missing)
                if connected >= 2 or not missing:
                    log.info("starting_without", tournament=tid, missing=missing)
                    break

    async def _play(
        self, tid: str, spec: TournamentSpec, game: GameRow, mode: str, seats: list[Seat] | None,
        may_replay: bool = True,
    ) -> Played:
        """Play (or forfeit) one game and record it."""
        gs = self.seating.game_spec(tid, spec, game)
        absent = self.seating.absences(tid, spec)
        if mode == "forfeit" and self.referee.closing is not None:
            # The shutdown began after this forfeit was launched: no result. The game
            # stays scheduled, and the resumed tournament plays it if the bot is back.
            log.info("game_not_recorded", tournament=tid, game_id=game.id)
            return Played.DONE
        try:
            mine = await self.rows.begin(game, spec.duplicate_deals)
        except StoreUnavailable as e:
            log.warning("game_not_claimed", tournament=tid, game_id=game.id, error=str(e))
            mine = None
        if not mine:
            for s in seats or []:
                if s.conn is not None:
                    self.referee.lobby.give_back(s.conn)
            return Played.RETRY if mine is None else Played.GONE
        self._emit(tid, f"game {game.id} started: {' vs '.join(game.players)}", game.id)
        missing = absent.missing(game.players)
        if mode == "forfeit" and not missing:
            mode = "wait"  # its bots came back between the launch and now: play it
        if mode == "forfeit":
            outcome = self.referee.no_show(gs, missing)
        else:
            try:
                if mode == "seated":
                    outcome = await self.referee.play(gs, seats, release=True)
                else:
                    outcome = await self.referee.play(gs)
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
                           "from the same deal", game.id)
                return Played.RETRY if lost else Played.AGAIN
        if outcome.termination is Termination.FORFEIT_NO_SHOW:
            gone = [b for i, b in enumerate(game.players) if i not in outcome.winners]
            absent.mark(gone, time.monotonic())
            log.info("bots_absent", tournament=tid, bots=gone,
                     forfeit_all_after=spec.policies.absence_limit)
        return await self._finish(tid, game, outcome)

    async def _finish(self, tid: str, game: GameRow, outcome: GameOutcome) -> Played:
        game.result = outcome.result
        game.record = outcome.record
        game.stats = [asdict(s) for s in outcome.stats]
        try:
            done = await self.rows.finish(game, lambda: self.referee.closing is not None)
        except StoreUnavailable:
            log.warning("game_not_recorded", tournament=tid, game_id=game.id,
                        why="the database is out of reach and the referee is shutting down")
            return Played.DONE
        if done is Finish.LOST:
            log.warning("game_result_dropped", tournament=tid, game_id=game.id,
                        why="its lease ran out while the database was out of reach: it was "
                        "voided, and is played again from the same deal")
            return Played.GONE
        self.events.game_finished(tid)
        self._emit(tid, f"game {game.id} ended: {outcome.result.summary}", game.id,
                   outcome.result, game.players)
        self.remaining.played(tid, game.players)
        return Played.DONE

    def _leases_lost(self) -> None:
        """The database is out of reach and this process's leases may run out: its games
        stop now, before another process may take them (:mod:`.cluster`)."""
        self._lease_stopped |= self.referee.stop(
            self.rows.claimed, "this referee process lost its database for too long")

    async def set_status(self, tid: str, status: TournamentStatus) -> bool:
        """Store the status of ``tid`` (in the writer thread, after the games' writes;
        tried again while the database is out of reach); False if it had it already."""
        changed = await self.rows.retried(self.store.set_tournament_status, tid, status,
                                          closing=lambda: self.referee.closing is not None)
        self.events.status_set(tid, status)
        return changed

    # -- the other processes --------------------------------------------------------------
    def _emit(self, tid: str, message: str, game_id: str = "", result: Outcome | None = None,
              players: Sequence[str] = ()) -> None:
        """An event for the watchers of every process (those of this one, and through the
        cluster the others'); ``players``: of a game that ended."""
        ev = self.events.emit(tid, message, game_id, result)
        if self.cluster is not None:
            self.cluster.publish(
                EVENT, t=tid, m=message, g=game_id, ts=ev.time, p=list(players),
                s=ev.status.value if ev.status is not None else None,
                r=result.to_json() if result is not None else None)

    # -- results --------------------------------------------------------------------------
    def counts(self, tid: str) -> tuple[int, int]:
        """(games in the schedule, games finished), counted by the store (no rows read)."""
        return self.store.game_counts(tid)

    def standings(self, tid: str) -> Standings:
        """The standings over the finished games (seconds for a large tournament: call
        it in a worker thread)."""
        spec = self.spec_of(tid)
        return stored_standings(self.store, tid, spec.bots, spec.table_size)

    # -- events ---------------------------------------------------------------------------
    def watch(self, tid: str) -> AsyncIterator[TournamentEvent]:
        """Live events until the tournament ends (ends at once if it already has)."""
        return self.events.watch(tid)


def _declared(row: TournamentRow) -> TournamentSpec:
    """The declaration a stored tournament was created from (keys starting with "_" are
    bookkeeping of the tools that created the row)."""
    return TournamentSpec.from_dict({k: v for k, v in row.spec.items() if not k.startswith("_")})
