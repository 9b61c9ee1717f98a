"""The referee: plays games (taking their streams from the lobby), answers no-shows,
stops games at shutdown, and keeps the incidents bot authors should hear about."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterable, Sequence
from typing import Any

from chinchon.engine import Outcome, Termination, new_game
from chinchon.engine.record import RecordBuilder
from chinchon.v1 import referee_pb2 as pb
from chinchon.wire import outcome_to_wire

from ..config import RefereeConfig
from ..logs import get_logger
from ..metrics import METRICS
from .connection import Connection, cancel_between_writes
from .errors import ShuttingDown
from .house import make_house_bot
from .house_worker import HouseWorker
from .incidents import Incident, IncidentKind, make_incident
from .lobby import Lobby
from .pace import Pacer
from .practice_keys import new_practice_secret
from .practice_sessions import PracticeRoom
from .quota import Quota
from .records import terms
from .runner import DecisionCount, FaultHook, GameRunner, GameServices
from .seats import Seat, SeatStats
from .spec import GameOutcome, GameSpec

log = get_logger("referee")

GameListener = Callable[[GameOutcome], Awaitable[None]]


class Referee:
    #: The fault-injection hook of the tests (see runner.FaultHook), read from the class
    #: when a game starts (so it reaches referees a test does not hold: ``chinchon
    #: practice`` makes its own). None, always, outside tests.
    fault_hook: FaultHook | None = None

    def __init__(self, config: RefereeConfig | None = None,
                 practice_secret: bytes | None = None) -> None:
        self.config = config or RefereeConfig()
        #: Keys practice deals (see practice_keys): kept by ``chinchon serve`` in its
        #: database, so a seed gives the same deals after a restart.
        self.practice_secret = practice_secret or new_practice_secret()
        self.lobby = Lobby()
        self._decisions = DecisionCount()
        self.games_running = 0
        self._playing: dict[str, GameRunner] = {}  # game id -> its runner, while it runs
        #: Set while no game is in progress (see :meth:`wait_games`).
        self._idle = asyncio.Event()
        self._idle.set()
        #: Every open Play stream (the servicer adds and removes them).
        self.connections: set[Connection] = set()
        #: Set when the referee starts shutting down (see :meth:`begin_shutdown`).
        self.shutdown = asyncio.Event()
        self.listeners: list[GameListener] = []
        self.incidents: list[Incident] = []
        self.max_incidents = 10_000
        #: Practice games take turns on the event loop (pace.py).
        self.pacer = Pacer()
        #: Worker processes for CPU-heavy work (house_worker.py), started on first use:
        #: one for practice games, one for the others (a practice flood never makes a
        #: tournament's house bot wait).
        self._workers: dict[bool, HouseWorker] = {}
        lim = self.config.limits
        #: Open Play streams and running practice sessions, per bot and in all.
        self.streams = Quota("open Play streams", lim.max_streams_per_bot, lim.max_streams,
                             "max_streams_per_bot", "max_streams")
        self.practice_sessions = Quota(
            "practice sessions", lim.max_practice_per_bot, lim.max_practice,
            "max_practice_per_bot", "max_practice")
        self.practice_room = PracticeRoom(self.config, self.practice_secret, self.play)
        #: What each game needs of the referee.
        self.services = GameServices(
            lobby=self.lobby, incident=self.incident, decisions=self._decisions,
            shutdown=self.shutdown, pacer=self.pacer, worker=self.worker)

    @property
    def decisions(self) -> int:
        """The number of answers of remote bots applied so far."""
        return self._decisions.n

    @property
    def closing(self) -> str | None:
        """Why the referee is shutting down, or None while it runs."""
        return self.lobby.closing

    def begin_shutdown(self, why: str) -> int:
        """Start shutting down: no game starts from now on (:meth:`play` raises
        :class:`ShuttingDown`), idle streams and streams that come back from a game are
        ended with UNAVAILABLE and ``why``; games in progress go on. Returns how many idle
        streams were ended."""
        n = self.lobby.close_idle(why)
        self.shutdown.set()
        return n

    async def wait_games(self, timeout: float) -> bool:
        """Wait up to ``timeout`` s for the games in progress to end; True if none is left."""
        if self.games_running:
            try:
                await asyncio.wait_for(self._idle.wait(), timeout)
            except TimeoutError:
                pass
        return not self.games_running

    async def end_streams(self, why: str) -> int:
        """End every open Play stream with UNAVAILABLE and ``why``, and wait (boundedly)
        for the games in progress to stop: each raises :class:`ShuttingDown` and has no
        result. Call after :meth:`begin_shutdown`. Returns how many games were stopped."""
        stopped = self.games_running
        for conn in list(self.connections):
            conn.end(why)
        await self.wait_games(5.0)
        return stopped

    def worker(self, practice: bool) -> HouseWorker:
        """The worker process for practice games, or for the others."""
        w = self._workers.get(practice)
        if w is None or w.closed:
            w = self._workers[practice] = HouseWorker("practice" if practice else "games")
        return w

    async def close_workers(self) -> None:
        """End the worker processes (when the server stops)."""
        workers, self._workers = list(self._workers.values()), {}
        await asyncio.gather(*(w.close() for w in workers))

    def incident(self, kind: IncidentKind, **fields: Any) -> None:
        """Remember something a bot author should hear about (bounded list)."""
        if kind is IncidentKind.ILLEGAL:
            METRICS.illegal_answers += 1
        elif kind is IncidentKind.TIMEOUT:
            METRICS.timeouts += 1
        if len(self.incidents) < self.max_incidents:
            self.incidents.append(make_incident(kind, fields))

    async def play(
        self, spec: GameSpec, seats: list[Seat] | None = None, release: bool | None = None
    ) -> GameOutcome:
        """Play one game. Remote seats get a connection from the lobby (waiting up to the
        reconnect grace); a bot that does not come forfeits with NO_SHOW. Connections
        taken from the lobby go back to it after the game."""
        if release is None:
            release = seats is None
        if self.closing is not None:
            await self._release(seats)  # the lobby ends their streams, saying why
            raise ShuttingDown(self.closing)
        if seats is None:
            seated = await self._seat(spec)
            if isinstance(seated, GameOutcome):
                return seated
            seats = seated
        self.games_running += 1
        self._idle.clear()
        given = [s.conn for s in seats]
        runner = GameRunner(spec, seats, self.services, type(self).fault_hook)
        self._playing[spec.game_id] = runner
        try:
            outcome = await runner.run()
        except asyncio.CancelledError:
            if runner.stopped is None:
                raise
            task = asyncio.current_task()
            if task is not None:
                task.uncancel()  # the cancel was this referee's way to stop the game
            log.warning("game_stopped", game_id=spec.game_id, why=runner.stopped)
            outcome = self._aborted(spec, seats, runner.stopped)
            await runner.tell_ended(outcome_to_wire(outcome.result))
        except ShuttingDown:
            log.info("game_stopped", game_id=spec.game_id, why="the referee is shutting down")
            raise
        except Exception:
            log.exception("game_crashed", game_id=spec.game_id)
            outcome = self._aborted(spec, seats, "the referee hit an internal error")
            self.incident(IncidentKind.ABORTED, game_id=spec.game_id,
                          message=outcome.result.summary)
            await runner.tell_ended(outcome_to_wire(outcome.result))
        finally:
            self._playing.pop(spec.game_id, None)
            self.games_running -= 1
            if not self.games_running:
                self._idle.set()
            for s, first in zip(seats, given, strict=True):
                # A queue-mode stream that resumed a seat goes back to the lobby even
                # when the caller keeps the streams it gave.
                if s.conn is not None and (release or (s.conn is not first and s.conn.queue)):
                    await self.lobby.release(s.conn)
        _count(outcome)
        for listener in self.listeners:
            await listener(outcome)
        return outcome

    async def _seat(self, spec: GameSpec) -> list[Seat] | GameOutcome:
        """The game's seats, each remote one with a stream from the lobby (waiting up to
        the reconnect grace); the NO_SHOW outcome if a bot does not come."""
        seats = []
        for i, name in enumerate(spec.players):
            if name.startswith("house:"):
                seats.append(Seat(i, name, house=make_house_bot(name[6:], i)))
            else:
                seats.append(Seat(i, name))
        absent = []
        try:
            for s in seats:
                if s.remote:
                    s.conn = await self.lobby.acquire(s.name, spec.policies.reconnect_grace)
                    if s.conn is None:
                        absent.append(s.index)
        except ShuttingDown:
            await self._release(seats)
            raise
        if not absent:
            return seats
        await self._release(seats)
        no_show = self._no_show(spec, seats, absent)
        _count(no_show)
        return no_show

    def stop(self, game_ids: Iterable[str], why: str) -> set[str]:
        """Stop these games now, without a result: each ends ABORTED (``why`` its
        summary, told to its bots), and its caller decides whether it is played again.
        Games not being played here are left alone. Returns the ids of those stopped."""
        stopped = set()
        for gid in list(game_ids):
            runner = self._playing.get(gid)
            if runner is not None and runner.task is not None and runner.stopped is None:
                runner.stopped = why
                cancel_between_writes(runner.task, runner.streams)
                stopped.add(gid)
        return stopped

    async def cancel(self, tasks: Iterable[asyncio.Task[Any]]) -> None:
        """Cancel these tasks (a tournament's or a ladder's games, stopped with it) and
        wait until they have ended. One playing a game here is cancelled once none of the
        game's streams has a write in flight (``cancel_between_writes``: a write cancelled
        mid-way breaks its stream, which the bot may be using for another tournament's
        games); any other (not seated yet) at once."""
        tasks = list(tasks)
        playing = {r.task: r for r in self._playing.values() if r.task is not None}
        for task in tasks:
            runner = playing.get(task)
            if runner is not None:
                cancel_between_writes(task, runner.streams)
            else:
                task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

    async def _release(self, seats: Sequence[Seat] | None) -> None:
        """Give the seats' streams back to the lobby (which ends them, saying why, once
        the referee is shutting down)."""
        for s in seats or ():
            if s.conn is not None:
                await self.lobby.release(s.conn)

    def _aborted(self, spec: GameSpec, seats: list[Seat], why: str) -> GameOutcome:
        return self._ended_early(spec, [s.stats for s in seats], Termination.ABORTED, (), why)

    def connected(self, bot: str) -> bool:
        """``bot`` has an open tournament (queue-mode) stream here, idle or in a game."""
        return any(c.bot == bot and c.queue and not c.closed.is_set()
                   for c in self.connections)

    def seats_for(self, spec: GameSpec) -> list[Seat] | None:
        """Seats with a free connection for every remote player, taken now; or None (and
        nothing taken) when some player has no free connection."""
        seats: list[Seat] = []
        for i, name in enumerate(spec.players):
            if name.startswith("house:"):
                seats.append(Seat(i, name, house=make_house_bot(name[6:], i)))
                continue
            conn = self.lobby.take(name)
            if conn is None:
                for s in seats:
                    if s.conn is not None:
                        self.lobby.give_back(s.conn)
                return None
            seats.append(Seat(i, name, conn=conn))
        return seats

    def no_show(self, spec: GameSpec, absent: list[int]) -> GameOutcome:
        """The outcome of a game that cannot start: ``absent`` seats forfeit."""
        seats = [Seat(i, n) for i, n in enumerate(spec.players)]
        return self._no_show(spec, seats, absent)

    def _no_show(self, spec: GameSpec, seats: list[Seat], absent: list[int]) -> GameOutcome:
        names = ", ".join(spec.players[i] for i in absent)
        log.info("game_no_show", game_id=spec.game_id, absent=names)
        # The absent seats forfeit; the engine's one forfeit rule names the winners.
        return self._ended_early(spec, [SeatStats() for _ in seats], Termination.FORFEIT_NO_SHOW,
                                 absent, f"not connected in time: {names}")

    @staticmethod
    def _ended_early(spec: GameSpec, stats: list[SeatStats], termination: Termination,
                     forfeits: Sequence[int], why: str) -> GameOutcome:
        """The outcome of a game ended before its first deal."""
        state = new_game(spec.rules)
        result = Outcome.of(state, spec.players, termination, forfeits, why)
        rec = RecordBuilder(spec.game_id, spec.rules, spec.players, dict(spec.labels))
        return GameOutcome(spec, result, rec.document(state, result, terms(spec)), stats)

    async def practice(self, conn: Connection, req: pb.PracticeRequest) -> None:
        """Play the practice session ``req`` asks for on ``conn`` (practice_sessions.py)."""
        await self.practice_room.run(conn, req)


def _count(outcome: GameOutcome) -> None:
    """A finished game in the metrics, and its forfeit if it was one."""
    how = outcome.result.termination.value.removeprefix("TERMINATION_").lower()
    METRICS.finished(how)
    if how.startswith("forfeit"):
        METRICS.forfeited(how)
