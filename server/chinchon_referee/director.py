"""The tournament director: runs scheduled round-robins on a referee, durably.

Every step is written to the store as it happens: a game is marked ``running`` before
it starts and ``finished`` (with its record) when it ends. After a crash the director
voids the games that were running and replays them from the same deal; finished games
are never played again.

Games are started in schedule order as soon as their bots have a free stream, up to
the tournament's concurrency. A bot that is not connected when its game is due gets
the reconnect grace to appear; after that it forfeits that game (NO_SHOW) and is
*absent* (see :mod:`.absence`): its later games are postponed while any other game can
be played; when nothing else can, the game that is due waits the grace and forfeits
alone. After ``policies.absence_limit`` seconds of absence its remaining games forfeit
at once. A bot that connects again plays its postponed games normally.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import time
import uuid
from collections import Counter
from collections.abc import AsyncIterator, Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import asdict
from typing import TypeVar

from chinchon.engine import Termination

from .absence import Absences, Presence
from .auth import TokenBook, digest, new_token
from .events import EventHub, TournamentEvent
from .logs import get_logger
from .referee import GameOutcome, GameSpec, Referee, Seat, ShuttingDown
from .remaining import Remaining
from .round_robin import RoundRobin
from .standings import Standings, compute, summarize_game
from .storage import GameRow, Store, TournamentRow
from .tournament import Participant, SpecError, TournamentSpec, schedule, start_time
from .twins import twin_indices, twin_running
from .vocabulary import GameStatus, TournamentStatus

log = get_logger("director")
_A = TypeVar("_A")
_R = TypeVar("_R")
#: Games read from the store at once, where a whole tournament is read.
PAGE = 200


class Director:
    def __init__(self, referee: Referee, store: Store, tokens: TokenBook) -> None:
        self.referee = referee
        self.store = store
        self.tokens = tokens
        self._tasks: dict[str, asyncio.Task[None]] = {}
        self._absent: dict[str, Absences] = {}
        self._twins: dict[str, dict[str, int]] = {}  # tournament -> game id -> twin index
        #: The tournaments' live events.
        self.events = EventHub(store)
        # The per-game writes (a game's start and end, each a transaction with an fsync)
        # run in this thread, in order: the event loop never waits for the disk.
        self._writer = ThreadPoolExecutor(max_workers=1, thread_name_prefix="store-writer")
        #: Games left per bot; dismisses the bots no tournament needs any more.
        self.remaining = Remaining(store, referee.lobby)

    # -- declaring ------------------------------------------------------------------------
    def create(self, spec: TournamentSpec, tid: str | None = None, *,
               replace_tokens: bool = False) -> tuple[str, list[Participant]]:
        """Store a tournament and its whole schedule; register the new bots' tokens.

        Returns the id and the participants with their tokens: generated ones are shown
        only here; a bot already registered keeps its token (returned empty). Refuses
        (SpecError, nothing stored) a schedule larger than MAX_GAMES, a token that is the
        admin token or another bot's, and a token for a registered bot that differs from
        its registered one (an organizer rotates a token on purpose, RotateBotToken).
        ``replace_tokens``: the caller launches the bots itself and gives every token
        (``tournament run``, on its own database): registered bots take them. Safe to
        call from a worker thread (``create_async``): the store is written in short
        transactions, so the event loop's own store calls are never held up for long."""
        spec = spec.with_seed()
        tid = tid or f"t-{uuid.uuid4().hex[:10]}"
        registered = dict(self.store.bots())
        for p in spec.participants:
            if not p.token:
                continue
            if self.tokens.is_admin(p.token):
                raise SpecError(f"participants: {p.name}'s token is the admin token "
                                "(a bot must never hold admin rights)")
            holder = self.tokens.holder(digest(p.token))
            if holder is not None and holder != p.name:
                raise SpecError(f"participants: {p.name}'s token is already the token of "
                                f"bot {holder} (each bot needs its own)")
            known = registered.get(p.name)
            if known is not None and known != digest(p.token) and not replace_tokens:
                raise SpecError(f"participants: {p.name} is registered with another token; "
                                "leave its token out to keep the registered one, or rotate it "
                                f"on purpose (chinchon admin bots rotate {p.name})")
        parts = [
            Participant(p.name, p.token or ("" if p.name in registered else new_token()),
                        p.command, p.instances)
            for p in spec.participants
        ]
        rr = self.schedule(spec, tid)
        games = (
            GameRow(f"{tid}-g{p.seq:05d}", tid, p.seq, list(p.players), p.deal_id)
            for p in rr
        )
        stored = spec.to_dict(with_secrets=True)
        for p in stored["participants"]:
            p.pop("token", None)  # only digests are kept
        self.store.create_tournament(
            TournamentRow(tid, spec.name, stored, TournamentStatus.SCHEDULED, time.time()), games
        )
        for p in parts:
            if not p.token:
                continue  # registered: keeps its token
            if p.name not in registered:
                self.store.add_bot(p.name, digest(p.token))
            elif replace_tokens:
                self.store.set_bot_token(p.name, digest(p.token))
                self.tokens.remove(p.name)
            self.tokens.add(p.name, p.token)
        self.remaining.changed()
        log.info("tournament_created", tournament=tid, name=spec.name, games=len(rr))
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
        # Keys starting with "_" are bookkeeping of the tools that created the row.
        return TournamentSpec.from_dict({k: v for k, v in row.spec.items() if not k.startswith("_")})

    # -- running --------------------------------------------------------------------------
    def start(self, tid: str, resumed: bool = False) -> None:
        """Run (or resume) a tournament in the background. ``resumed``: it was running
        when the referee stopped (its bots are given time to reconnect first)."""
        row = self.store.tournament(tid)
        if row is None:
            raise KeyError(tid)
        if row.status.over:
            raise ValueError(f"tournament {tid} is {row.status}")
        task = self._tasks.get(tid)
        if task is None or task.done():
            self._tasks[tid] = asyncio.ensure_future(self.run(tid, resumed=resumed))

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
        task = self._tasks.get(tid)
        if task is not None and not task.done():
            row = self.store.tournament(tid)
            if row is not None and row.status is TournamentStatus.RUNNING:
                return
            task.cancel()
            try:
                await task
            except asyncio.CancelledError:
                pass
        row = self.store.tournament(tid)
        if row is None:
            raise KeyError(tid)
        if row.status.over:
            raise ValueError(f"tournament {tid} is {row.status}")
        self.set_status(tid, TournamentStatus.RUNNING)
        self._tasks[tid] = asyncio.ensure_future(self.run(tid))

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

    async def cancel(self, tid: str) -> None:
        task = self._tasks.get(tid)
        if task is not None and not task.done():
            task.cancel()
            try:
                await task
            except asyncio.CancelledError:
                pass
        if self.store.tournament(tid) is None:
            raise KeyError(tid)
        self.store.void_running(tid)
        self.set_status(tid, TournamentStatus.CANCELLED)
        self.remaining.ended(tid, self.spec_of(tid).bots, cancelled=True)
        self.events.emit(tid, "tournament cancelled")
        self.events.close(tid)

    async def run(self, tid: str, force_start: bool = False, resumed: bool = False) -> None:
        try:
            await self._run(tid, force_start, resumed)
        except ShuttingDown:
            # The referee stopped: the tournament stays "running", and its games that
            # were stopped are voided and played again when it resumes.
            log.info("tournament_paused", tournament=tid, why="the referee is shutting down")
            self.events.emit(tid, "the referee is shutting down: the tournament will resume "
                            "where it stopped")
            self.events.close(tid)

    async def _run(self, tid: str, force_start: bool, resumed: bool) -> None:
        spec = self.spec_of(tid)
        row = self.store.tournament(tid)
        assert row is not None
        if row.status is TournamentStatus.SCHEDULED and not force_start:
            await self._wait_for_start(tid, spec)
        elif resumed:
            # The referee was restarted: its bots need a moment to find it again.
            wait = spec.connect_wait
            self.events.emit(tid, f"resuming: waiting up to {wait:g} s for every bot to reconnect")
            if not await self.referee.lobby.wait_all(spec.bots, wait):
                missing = [b for b in spec.bots if not self.referee.lobby.connected(b)]
                log.info("resuming_without", tournament=tid, missing=missing)
        voided = await self._write(self.store.void_running, tid)
        if voided:
            log.info("games_voided", tournament=tid, count=voided)
            self.events.emit(tid, f"{voided} game(s) in flight when the referee stopped were voided "
                            "and will be replayed from the same deal")
        self.set_status(tid, TournamentStatus.RUNNING)
        self.events.emit(tid, "tournament started")
        # The schedule is read in pages in a worker thread (no record; 100,000 games take
        # a while): the loop goes on serving the games of other tournaments meanwhile.
        games = await asyncio.to_thread(self.store.schedule, tid)
        if spec.duplicate_deals:
            self._twins[tid] = twin_indices(games)
        pending = [g for g in games if g.status is not GameStatus.FINISHED]
        del games
        self.remaining.track(tid, pending)
        running: set[asyncio.Task[None]] = set()
        absent = self._absences(tid, spec)
        # Set by whatever may let a game start: a game ended, a stream came to the lobby
        # idle (a bot connected or came back, a game gave its streams back), the lobby
        # closed (shutdown). An absence running past its limit wakes the loop by timer.
        changed = asyncio.Event()

        replayed: set[str] = set()  # games played again after an internal error
        in_play: Counter[str] = Counter()  # deal id -> games of it in play (twins wait)

        def launch(game: GameRow, mode: str, seats: list[Seat] | None = None) -> None:
            pending.remove(game)
            in_play[game.deal_id] += 1

            async def one() -> None:
                try:
                    again = await self._play(tid, spec, game, mode, seats,
                                             may_replay=game.id not in replayed)
                    if again:
                        replayed.add(game.id)
                        pending.insert(0, game)
                finally:
                    in_play[game.deal_id] -= 1
                    # Out of ``running`` before the loop wakes (the task's done callback
                    # would come one pass later, after the loop has looked).
                    running.discard(asyncio.current_task())  # type: ignore[arg-type]
                    changed.set()

            t = asyncio.ensure_future(one())
            running.add(t)
            t.add_done_callback(running.discard)

        stop_listening = self.referee.lobby.listen(changed.set)
        try:
            while pending or running:
                if self.referee.closing is not None:
                    # No game starts once the referee shuts down; those in progress end or
                    # are stopped (without a result) by the shutdown.
                    await asyncio.gather(*running, return_exceptions=True)
                    raise ShuttingDown(self.referee.closing)
                for b in absent.returned(self.referee.lobby.connected):
                    log.info("bot_back", tournament=tid, bot=b)
                if len(running) < spec.concurrency:
                    # Never two games of one deal at once (with nothing running, all may go).
                    ready = [g for g in pending if not twin_running(g, in_play)]
                    chosen = self._next_game(tid, spec, ready, absent, idle=not running)
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
        self.set_status(tid, TournamentStatus.FINISHED)
        self.remaining.ended(tid, spec.bots, cancelled=False)
        self.events.emit(tid, "tournament finished")
        self.events.close(tid)
        log.info("tournament_finished", tournament=tid)

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

    def _absences(self, tid: str, spec: TournamentSpec) -> Absences:
        return self._absent.setdefault(tid, Absences(spec.policies.absence_limit))

    def _next_game(
        self, tid: str, spec: TournamentSpec, pending: list[GameRow], absent: Absences,
        idle: bool,
    ) -> tuple[GameRow, str, list[Seat] | None] | None:
        """The game to start now and how ("seated", "forfeit" or "wait"), or None.

        In schedule order: a game of a bot absent past the absence limit forfeits at
        once; a game of a bot absent for less is postponed; any other game starts when
        its bots have free streams. When nothing runs (``idle``) and nothing can start,
        the first pending game is due: its bots get the grace, then they forfeit it."""
        now = time.monotonic()
        for game in pending:
            presence = absent.presence(game.players, now)
            if presence is Presence.FORFEIT:
                return game, "forfeit", None
            if presence is Presence.POSTPONE:
                continue
            seats = self.referee.seats_for(self._game_spec(tid, spec, game))
            if seats is not None:
                return game, "seated", seats
        if idle and pending:
            return pending[0], "wait", None
        return None

    def _game_spec(self, tid: str, spec: TournamentSpec, game: GameRow) -> GameSpec:
        return GameSpec(
            game_id=game.id, rules=spec.rules, players=game.players, seed=spec.seed,
            deal_id=game.deal_id, time_control=spec.time_control, policies=spec.policies,
            tournament_id=tid, labels={"tournament": tid, "seq": str(game.seq)},
            relabel=self._twin_index(tid, spec, game),
        )

    def _twin_index(self, tid: str, spec: TournamentSpec, game: GameRow) -> int | None:
        """The suit relabelling of a twin game (duplicate deals), None otherwise."""
        if not spec.duplicate_deals:
            return None
        if game.id not in self._twins.get(tid, {}):
            self._twins[tid] = twin_indices(self.store.schedule(tid))
        return self._twins[tid][game.id]

    async def _play(
        self, tid: str, spec: TournamentSpec, game: GameRow, mode: str, seats: list[Seat] | None,
        may_replay: bool = True,
    ) -> bool:
        """Play (or forfeit) one game and record it. Returns True when the game is to be
        played again instead: it hit an internal error of the referee (not a bot's
        fault) for the first time; its row is back to ``scheduled``."""
        gs = self._game_spec(tid, spec, game)
        absent = self._absences(tid, spec)
        if mode == "forfeit" and self.referee.closing is not None:
            # The shutdown began after this forfeit was launched: no result. The game
            # stays scheduled, and the resumed tournament plays it if the bot is back.
            log.info("game_not_recorded", tournament=tid, game_id=game.id)
            return False
        # Not waited for: the game starts in this same step, as a row marked running
        # says it has (its end is written after this, in order).
        self._write_soon(self.store.mark_running, game.id)
        self.events.emit(tid, f"game {game.id} started: {' vs '.join(game.players)}", game.id)
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
                return False
            if outcome.termination is Termination.ABORTED and may_replay:
                await self._write(self.store.void_game, game.id)
                log.warning("game_replayed", tournament=tid, game_id=game.id,
                            why=outcome.result.summary)
                self.events.emit(tid, f"game {game.id} was stopped by an internal error of the "
                                "referee: it will be played again from the same deal", game.id)
                return True
        if outcome.termination is Termination.FORFEIT_NO_SHOW:
            gone = [b for i, b in enumerate(game.players) if i not in outcome.winners]
            absent.mark(gone, time.monotonic())
            log.info("bots_absent", tournament=tid, bots=gone,
                     forfeit_all_after=spec.policies.absence_limit)
        await self._finish(tid, game, outcome)
        return False

    async def _finish(self, tid: str, game: GameRow, outcome: GameOutcome) -> None:
        game.result = outcome.result
        game.record = outcome.record
        game.stats = [asdict(s) for s in outcome.stats]
        await self._write(self.store.finish_game, game)
        self.events.game_finished(tid)
        self.events.emit(tid, f"game {game.id} ended: {outcome.result.summary}", game.id, outcome.result)
        self.remaining.played(tid, game.players)

    async def _write(self, write: Callable[[_A], _R], arg: _A) -> _R:
        """``write(arg)`` in the store's writer thread (writes keep their order)."""
        return await asyncio.get_running_loop().run_in_executor(self._writer, write, arg)

    def _write_soon(self, write: Callable[[_A], None], arg: _A) -> None:
        """``write(arg)`` in the writer thread, not waited for: it is written before any
        later write, and a failure is logged."""
        def done(f: Future[None]) -> None:
            if f.exception() is not None:
                log.error("store_write_failed", write=getattr(write, "__name__", "?"),
                          error=str(f.exception()))

        self._writer.submit(write, arg).add_done_callback(done)

    def set_status(self, tid: str, status: TournamentStatus) -> None:
        self.store.set_tournament_status(tid, status)
        self.events.status_set(tid, status)

    # -- results --------------------------------------------------------------------------
    def counts(self, tid: str) -> tuple[int, int]:
        """(games in the schedule, games finished), counted by the store (no rows read)."""
        return self.store.game_counts(tid)

    def standings(self, tid: str) -> Standings:
        """The standings over the finished games, read a page at a time (their scores
        only, not their action logs; only the summaries are kept). Seconds for a large
        tournament: call it in a worker thread."""
        spec = self.spec_of(tid)
        games, after = [], -1
        while page := self.store.finished_scores(tid, after, PAGE):
            games += [summarize_game(g.players, g.result, g.hands or [], g.stats, g.deal_id)
                      for g in page if g.result is not None]
            after = page[-1].seq
        return compute(spec.bots, games, spec.table_size)

    # -- events ---------------------------------------------------------------------------
    def watch(self, tid: str) -> AsyncIterator[TournamentEvent]:
        """Live events until the tournament ends (ends at once if it already has)."""
        return self.events.watch(tid)
