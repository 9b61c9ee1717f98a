"""Plays one game: chance from the shuffle source, decisions from house bots or remote
seats, the clock (per-move time plus a bank, on the server's monotonic clock, from the
moment a request is written to the moment its answer is read), retries, default
actions, strikes and forfeits, and the game record.

A :class:`GameRunner` knows nothing of the :class:`~.referee.Referee`: it is handed
what it needs in a :class:`GameServices`."""

from __future__ import annotations

import asyncio
import itertools
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from chinchon.engine import (
    Action,
    GameState,
    IllegalAction,
    MalformedInput,
    Outcome,
    ShuffleSource,
    Termination,
    apply,
    legal_actions,
    new_game,
    observation,
)
from chinchon.engine.macros import resolve
from chinchon.engine.policies import default_action
from chinchon.engine.record import ActionOrigin, RecordBuilder, SeatIncidentKind
from chinchon.v1 import game_pb2 as g
from chinchon.v1 import referee_pb2 as pb
from chinchon.wire import (
    RequestEncoder,
    action_to_wire,
    decode_action,
    delimited,
    duration,
    hand_result_to_wire,
    outcome_to_wire,
    record_from_json,
    rules_to_wire,
)

from .. import __version__
from ..logs import get_logger
from ..metrics import METRICS
from .clip import clip
from .connection import Connection
from .defaults import DefaultReason
from .errors import Disconnected, Forfeit, ShuttingDown, TimedOut
from .house import HouseBot
from .house_worker import HouseWorker, WorkerGone
from .incidents import IncidentKind, IncidentSink
from .lobby import Lobby
from .pace import Pacer
from .records import sent_text, terms
from .seats import Seat
from .spec import GameOutcome, GameSpec, RecordDocument

log = get_logger("referee.game")
_house_keys = itertools.count(1)  # names each house seat of each game for the worker


class DecisionCount:
    """The number of answers of remote bots applied (read by the benchmarks and tests)."""

    __slots__ = ("n",)

    def __init__(self) -> None:
        self.n = 0


#: A fault-injection hook (tests only): called before each turn of a remote seat with
#: the game's spec and the seat; an exception it raises is an internal error of the
#: referee at that point of the game. None (the default) costs nothing per decision.
FaultHook = Callable[[GameSpec, Seat], None]

#: A read-only watcher of games in progress (the web view's live tables): called with
#: the runner, the state and the record so far after each step, and with None for both
#: when the game is over. It must not change anything, nor block.
StepObserver = Callable[["GameRunner", GameState | None, RecordBuilder | None], None]


@dataclass
class GameServices:
    """What a game needs from the referee that runs it."""

    lobby: Lobby
    incident: IncidentSink
    decisions: DecisionCount
    #: Set when the referee starts shutting down.
    shutdown: asyncio.Event
    #: Practice games take turns on the event loop (pace.py).
    pacer: Pacer
    #: The worker process for practice games (True) or the others (False).
    worker: Callable[[bool], HouseWorker]
    #: See StepObserver (None: nobody watches).
    observer: StepObserver | None = None
    #: Told of each game's start (True) and end (False) with its id and players (the
    #: launched bots' stderr cut per game: launch/game_logs.py). It must not block.
    on_game: Callable[[str, list[str], bool], None] | None = None


class GameRunner:
    def __init__(
        self, spec: GameSpec, seats: list[Seat], services: GameServices,
        fault: FaultHook | None = None,
    ) -> None:
        self.spec = spec
        self.fault = fault  # see FaultHook
        self.seats = seats
        self.services = services
        self.decisions = services.decisions
        self.names = [s.name for s in seats]
        self.encoder = RequestEncoder(spec.game_id, spec.rules)
        self.task: asyncio.Task[Any] | None = None  # the task playing the game
        #: Why the referee stopped the game before its end (Referee.stop), if it did.
        self.stopped: str | None = None
        self.over = False
        #: Practice games take turns with each other (one step per pass of the loop:
        #: see pace.py) and hand their CPU-heavy work to the practice worker process.
        self.practice = spec.labels.get("practice") == "1"
        self._house_keys: dict[int, tuple[str, RequestEncoder]] = {}
        self._holding = False  # holds the practice games (see _hold)

    async def _send(self, seat: Seat, msg: pb.PlayResponse | bytes) -> None:
        conn = seat.conn
        if conn is None:
            return
        try:
            if conn is not seat.greeted:
                await self._greet(seat, conn)
            if seat.ack:
                raw = msg if isinstance(msg, bytes) else msg.SerializeToString()
                await conn.send(raw + seat.ack)
                seat.ack = b""
            else:
                await conn.send(msg)
        except Disconnected:
            pass

    async def _greet(self, seat: Seat, conn: Connection) -> None:
        """``game_started(resumed)`` to a stream that took the seat over."""
        seat.greeted = conn
        await conn.send(self._started(seat, resumed=True))

    def _lost(self, seat: Seat) -> None:
        """The seat's stream was lost mid-game: hold the seat for the next stream its bot
        opens, so that it is not given a new game meanwhile."""
        if not self.over:
            self.services.lobby.orphan(seat)
            log.info("seat_lost", game_id=self.spec.game_id, bot=seat.name, seat=seat.index)

    def _let_go(self) -> None:
        """The game is over: no seat waits for a stream any more."""
        self.over = True
        for s in self.seats:
            self.services.lobby.unorphan(s)
            s.lost_hook = None
            if s.conn is not None:
                s.conn.on_lost = None

    async def _broadcast(self, make: Callable[[Seat], pb.PlayResponse | bytes]) -> None:
        self._hold(False)  # a bot slow to read must not hold the practice games up
        await asyncio.gather(*(self._send(s, make(s)) for s in self.seats if s.remote))

    def streams(self) -> list[Connection]:
        """The game's streams now (a seat may have resumed on another)."""
        return [s.conn for s in self.seats if s.conn is not None]

    async def tell_ended(self, result: g.GameResult, record: bytes = b"") -> None:
        """``game_ended`` to every remote seat still connected, with ``record`` (the
        encoding of a GameRecord), if given."""
        game_id = self.spec.game_id

        def ended(s: Seat) -> bytes:
            msg = pb.GameEnded(game_id=game_id, result=result, seat=s.index).SerializeToString()
            return delimited(8, msg + delimited(4, record) if record else msg)

        await self._broadcast(ended)

    async def _record_bytes(self, record: RecordDocument) -> bytes:
        """The GameRecord encoding of ``record``: converted by the practice worker for
        a practice game (several milliseconds of CPU), here otherwise."""
        if self.practice:
            try:
                return bytes(await self.services.worker(True).call("record", record))
            except (WorkerGone, RuntimeError) as e:
                log.warning("house_worker_failed", game_id=self.spec.game_id, error=str(e))
        return record_from_json(record).SerializeToString()

    async def _house_move(self, seat: Seat, state: GameState, legal: list[Action]) -> Action:
        """The house bot's decision: from a worker process for the CPU-heavy ones, so
        that they never hold the event loop."""
        house = seat.house
        assert house is not None
        obs = observation(state, seat.index, self.names)
        if isinstance(house, HouseBot) and house.off_loop:
            held = self._house_keys.get(seat.index)
            if held is None:
                held = self._house_keys[seat.index] = (
                    f"{next(_house_keys)}/{seat.index}",
                    RequestEncoder(self.spec.game_id, self.spec.rules))
            key, enc = held
            try:
                i = await self.services.worker(self.practice).call(
                    "choose", key, house.kind, house.seed, enc.observation(obs), enc.legal(legal))
                return legal[int(i)]
            except (WorkerGone, RuntimeError) as e:
                # The game goes on: this decision inline, the next ones by a new worker
                # (from here on, they may differ from those of an undisturbed game).
                log.warning("house_worker_failed", game_id=self.spec.game_id, error=str(e))
        return house.choose(obs, legal)

    def _hold(self, on: bool) -> None:
        """A game that is not practice holds the practice games from the moment it
        has read an answer until it writes its next request (or waits for a stream):
        what it does in between never waits behind a practice step (pace.py)."""
        if on != self._holding and not self.practice:
            self._holding = on
            self.services.pacer.hold(on)

    def _forget_house(self) -> None:
        if self._house_keys:
            worker = self.services.worker(self.practice)
            for key, _ in self._house_keys.values():
                worker.tell("forget", key)
            self._house_keys.clear()

    def _started(self, seat: Seat, resumed: bool = False) -> pb.PlayResponse:
        tc = self.spec.time_control
        return pb.PlayResponse(game_started=pb.GameStarted(
            game_id=self.spec.game_id,
            seat=seat.index,
            players=self.names,
            rules=rules_to_wire(self.spec.rules),
            time_control=g.TimeControl(per_move=duration(tc.per_move), bank=duration(tc.bank)),
            tournament_id=self.spec.tournament_id,
            resumed=resumed,
        ))

    async def run(self) -> GameOutcome:
        self.task = asyncio.current_task()
        spec = self.spec
        rec = self._begin()
        try:
            self._tell_game(True)
            await self._broadcast(lambda s: self._started(s))
            log.info("game_started", game_id=spec.game_id, players=self.names)
            state, forfeit = await self._play_out(rec)
            result = self._result(state, forfeit)
            record = rec.document(state, result, terms(spec))
            outcome = GameOutcome(spec, result, record, [s.stats for s in self.seats])
            await self.tell_ended(outcome_to_wire(result),
                                  await self._record_bytes(record) if spec.send_record else b"")
            log.info("game_ended", game_id=spec.game_id, termination=outcome.termination,
                     winners=[self.names[w] for w in outcome.winners], summary=result.summary)
            return outcome
        finally:
            self._tell_game(False)
            if self.services.observer is not None:
                self.services.observer(self, None, None)
            self._hold(False)
            self._let_go()
            self._forget_house()

    def _begin(self) -> RecordBuilder:
        """The game's record begun (its labels) and its seats made ready."""
        spec = self.spec
        rec = RecordBuilder(spec.game_id, spec.rules, self.names, dict(spec.labels))
        if spec.tournament_id:
            rec.labels.setdefault("tournament", spec.tournament_id)
        rec.labels.setdefault("referee", f"chinchon-referee {__version__}")
        rec.labels.setdefault("started_at", time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()))
        for s in self.seats:
            s.bank = spec.time_control.bank
            s.game_id = spec.game_id
            if s.remote:
                s.lost_hook = self._lost
            if s.conn is not None:
                s.greeted = s.conn
                s.attach(s.conn)
        return rec

    async def _play_out(self, rec: RecordBuilder) -> tuple[GameState, Forfeit | None]:
        """Every step until the game is over, or a seat forfeits (then the state then)."""
        spec = self.spec
        source = ShuffleSource(spec.seed, spec.deal_id, spec.relabel)
        state = new_game(spec.rules)
        forfeit: Forfeit | None = None
        pacer = self.services.pacer if self.practice else None
        remote_turn = self._remote_turn if self.fault is None else self._faulty_turn
        try:
            while not state.is_over:
                n_results = len(state.results)
                if state.is_chance:
                    chance = source.chance(state)
                    rec.chance(chance)
                    state = apply(state, chance)
                else:
                    if pacer is not None:
                        await pacer.turn()
                    seat = self.seats[state.to_act]
                    if seat.house is not None:
                        legal = legal_actions(state)
                        action = await self._house_move(seat, state, legal)
                        after = apply(state, action, seat=seat.index)
                        rec.move(seat.index, action,
                                 resolved=resolve(state, after, seat.index, action))
                        state = after
                        seat.stats.decisions += 1
                    else:
                        state = await remote_turn(seat, state, rec)
                if self.services.observer is not None:
                    self.services.observer(self, state, rec)
                if len(state.results) > n_results:
                    hr = hand_result_to_wire(state.results[-1])
                    await self._broadcast(lambda s, hr=hr: pb.PlayResponse(  # type: ignore[misc]
                        hand_ended=pb.HandEnded(game_id=spec.game_id, result=hr)))
        except Forfeit as f:
            forfeit = f
        if pacer is not None:
            await pacer.turn()
        return state, forfeit

    def _result(self, state: GameState, forfeit: Forfeit | None) -> Outcome:
        if forfeit is None:
            return Outcome.of(state, self.names)
        spec = self.spec
        log.info("game_forfeited", game_id=spec.game_id, seat=forfeit.seat, why=forfeit.why)
        self.services.incident(
            IncidentKind.FORFEIT, game_id=spec.game_id, bot=self.names[forfeit.seat],
            termination=forfeit.termination.value, message=forfeit.why)
        return Outcome.of(
            state, self.names, forfeit.termination, forfeits=[forfeit.seat],
            summary=f"{self.names[forfeit.seat]} forfeited: {forfeit.why}",
        )

    def _tell_game(self, started: bool) -> None:
        hook = self.services.on_game
        if hook is not None:
            try:
                hook(self.spec.game_id, list(self.names), started)
            except Exception as e:  # a watcher's failure never ends a game
                log.warning("on_game_failed", game_id=self.spec.game_id, error=str(e))

    async def _connected(self, seat: Seat) -> Connection:
        """The seat's open stream. When it is lost, a stream of the same bot resumes the
        seat: one the bot opened again before this moment (idle in the lobby) or one it
        opens before the reconnect grace, counted from the loss, runs out; otherwise the
        bot forfeits."""
        lost = seat.conn
        if lost is not None and not lost.closed.is_set():
            return lost
        lobby = self.services.lobby
        if lobby.closing is not None:
            raise ShuttingDown(lobby.closing)  # nobody waits for a reconnect now
        # A spare stream of the bot idle in the lobby (not for a practice seat: only a
        # practice stream takes that over).
        conn = lobby.take(seat.name) if seat.session is None else None
        if conn is not None:
            lobby.unorphan(seat)
            seat.attach(conn)
            log.info("seat_resumed", game_id=self.spec.game_id, bot=seat.name,
                     conn=conn.id, seat=seat.index)
            return conn
        grace = self.spec.policies.reconnect_grace
        lost_at = None if lost is None else lost.closed_at
        left = grace if lost_at is None else grace - (time.monotonic() - lost_at)
        lobby.orphan(seat)  # already held since the loss, when the game saw it
        log.info("seat_waiting", game_id=self.spec.game_id, bot=seat.name,
                 grace=round(max(0.0, left), 3))
        back = asyncio.ensure_future(seat.reattached.wait())
        closing = asyncio.ensure_future(self.services.shutdown.wait())
        try:
            await asyncio.wait((back, closing), timeout=max(0.0, left),
                               return_when=asyncio.FIRST_COMPLETED)
        finally:
            back.cancel()
            closing.cancel()
        if not seat.reattached.is_set():
            lobby.unorphan(seat)
            if lobby.closing is not None:
                raise ShuttingDown(lobby.closing)
            raise Forfeit(
                seat.index, Termination.FORFEIT_DISCONNECT,
                f"disconnected and not back within {grace:g} s",
            )
        assert seat.conn is not None
        return seat.conn

    async def _faulty_turn(self, seat: Seat, state: GameState, rec: RecordBuilder) -> GameState:
        """A remote turn behind the fault-injection hook (see :data:`FaultHook`)."""
        fault = self.fault
        if fault is not None:
            fault(self.spec, seat)
        return await self._remote_turn(seat, state, rec)

    async def _remote_turn(self, seat: Seat, state: GameState, rec: RecordBuilder) -> GameState:
        spec = self.spec
        legal = legal_actions(state)
        enc = self.encoder
        view = observation(state, seat.index, self.names)
        whole = b""  # the full observation's encoding, once a full-mode stream needs it
        legal_b = enc.legal(legal)
        move_left = spec.time_control.per_move
        attempt = 0
        rid = 0
        # Set when the stream was lost with a request outstanding: the bot's clock has
        # run since then, and keeps running until the request is written again.
        running: float | None = None
        while True:
            conn = seat.conn
            if conn is None or conn.closed.is_set():
                self._hold(False)
                conn = await self._connected(seat)
            if conn is not seat.greeted:  # a stream that took the seat over
                try:
                    await self._greet(seat, conn)
                except Disconnected:
                    continue
            if running is not None:
                now = time.monotonic()
                spent, running = now - running, now
                if spent >= move_left + seat.bank:
                    return await self._timed_out(seat, state, legal, rid, rec, spent,
                                                 move_left + seat.bank)
                move_left = self._charge(seat, move_left, spent)
            rid = conn.next_request_id()
            if conn.lean:  # only what this stream has not been sent (ActionRequest.delta)
                obs, delta = enc.lean(view, conn)
            else:
                obs, delta = whole or enc.observation(view), b""
                whole = obs
            req = enc.request(rid, obs, legal_b, move_left, seat.bank, attempt, seat.ack, delta)
            budget = move_left + seat.bank
            self._hold(False)
            try:
                action_raw, took = await conn.ask(req, rid, budget, self.task)
                seat.ack = b""
                self._hold(True)
            except Disconnected as d:
                log.info("seat_disconnected", game_id=spec.game_id, bot=seat.name)
                if d.since is not None:
                    running = d.since
                continue
            except TimedOut as t:
                return await self._timed_out(seat, state, legal, rid, rec, t.waited, budget)
            running = None
            METRICS.decision_seconds.observe(took)  # the hot path's one metric
            move_left = self._charge(seat, move_left, took)
            judged = self._judge(seat, state, rec, rid, action_raw, took)
            if not isinstance(judged, pb.Error):
                return judged
            left = await self._refused(seat, rec, judged, attempt, action_raw)
            if left <= 0:
                return await self._default(seat, state, legal, rid, rec, DefaultReason.ILLEGAL, took)
            attempt += 1

    def _judge(self, seat: Seat, state: GameState, rec: RecordBuilder, rid: int,
               action_raw: bytes, took: float) -> GameState | pb.Error:
        """The answer applied (recorded, counted, its confirmation ready: the new state),
        or the error that refuses it."""
        try:
            action = decode_action(action_raw)
            new_state = apply(state, action, seat=seat.index)
        except MalformedInput as e:  # may quote the bot's text: kept short
            return pb.Error(code=pb.ERROR_CODE_MALFORMED, message=clip(str(e)), request_id=rid)
        except IllegalAction as e:
            return pb.Error(code=pb.ERROR_CODE_ILLEGAL_ACTION, violation=e.code.value,
                            message=clip(e.message), request_id=rid)
        seat.stats.decisions += 1
        self.decisions.n += 1
        rec.move(seat.index, action, ActionOrigin.PLAYER, took,
                 resolve(state, new_state, seat.index, action))
        seat.ack = self.encoder.accepted(rid, action, took)
        return new_state

    async def _refused(self, seat: Seat, rec: RecordBuilder, err: pb.Error, attempt: int,
                       sent: bytes) -> int:
        """A refused answer: counted, logged, kept as an incident (in the record too,
        with what the bot sent) and told to the bot; the retries left."""
        spec = self.spec
        rid = err.request_id
        seat.stats.illegal += 1
        left = spec.policies.max_illegal_retries - attempt
        log.info("illegal_action", game_id=spec.game_id, bot=seat.name,
                 code=pb.ErrorCode.Name(err.code), violation=err.violation, msg=err.message)
        self.services.incident(IncidentKind.ILLEGAL, game_id=spec.game_id, bot=seat.name, request_id=rid,
                              code=pb.ErrorCode.Name(err.code), violation=err.violation,
                              message=err.message, attempt=attempt)
        kind = (SeatIncidentKind.MALFORMED if err.code == pb.ERROR_CODE_MALFORMED
                else SeatIncidentKind.ILLEGAL)
        rec.incident(seat.index, kind, requestId=rid, attempt=attempt, sent=sent_text(sent),
                     violation=err.violation, message=err.message)
        await self._send(seat, pb.PlayResponse(action_rejected=pb.ActionRejected(
            request_id=rid, error=err, retries_left=max(0, left))))
        return left

    @staticmethod
    def _charge(seat: Seat, move_left: float, took: float) -> float:
        """Take ``took`` seconds off the move's time, then off the bank; return the move
        time left."""
        seat.stats.think_time += took
        if took > move_left:
            seat.bank = max(0.0, seat.bank - (took - move_left))
            return 0.0
        return move_left - took

    async def _timed_out(
        self, seat: Seat, state: GameState, legal: list[Action], rid: int,
        rec: RecordBuilder, waited: float, allowed: float,
    ) -> GameState:
        """The bot's time for this move ran out: the default action and a strike."""
        spec = self.spec
        seat.ack = b""
        seat.bank = 0.0
        seat.stats.timeouts += 1
        seat.stats.think_time += waited
        log.info("timeout", game_id=spec.game_id, bot=seat.name, waited=round(waited, 4))
        rec.incident(seat.index, SeatIncidentKind.TIMEOUT, requestId=rid, waited=waited,
                     message=f"no answer within {allowed:.3f} s")
        self.services.incident(IncidentKind.TIMEOUT, game_id=spec.game_id, bot=seat.name,
                              request_id=rid, waited=round(waited, 4),
                              allowed=round(allowed, 4))
        return await self._default(seat, state, legal, rid, rec, DefaultReason.TIMEOUT, waited)

    async def _default(
        self, seat: Seat, state: GameState, legal: list[Action], rid: int,
        rec: RecordBuilder, why: DefaultReason, waited: float,
    ) -> GameState:
        action = default_action(state, legal)
        new_state = apply(state, action, seat=seat.index)
        seat.stats.strikes += 1
        mx = self.spec.policies.max_strikes
        rec.incident(seat.index, SeatIncidentKind.DEFAULT, requestId=rid,
                     strikes=seat.stats.strikes, maxStrikes=mx,
                     message=f"default action played ({why.strikes}): strike "
                             f"{seat.stats.strikes} of {mx}")
        rec.move(seat.index, action, why.origin, waited,
                 resolve(state, new_state, seat.index, action))
        await self._send(seat, pb.PlayResponse(default_played=pb.DefaultPlayed(
            request_id=rid, action=action_to_wire(action),
            reason=why.wire,
            strikes=seat.stats.strikes, max_strikes=mx, time_taken=duration(waited))))
        if seat.stats.strikes >= mx:
            raise Forfeit(seat.index, why.forfeit, f"{mx} strikes ({why.strikes})")
        return new_state

