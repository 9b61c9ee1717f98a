"""The referee: plays games between bots connected over gRPC streams (and house bots).

Pieces, from the wire inwards:

* :class:`Connection` wraps one ``Play`` stream. A reader task drains the stream and
  dispatches each message at once (answers are matched to the one outstanding request
  by id; anything else is answered in-band and counted against the flood limit).
  Writes go through a lock with a timeout, so a bot that stops reading only hurts its
  own game.
* :class:`Lobby` holds idle connections per bot, and the seats of bots that dropped
  mid-game so that a new stream with the same token resumes them.
* :class:`GameRunner` plays one game: chance from the shuffle source, decisions from
  house bots or remote seats, the clock (per-move time plus a bank, on the server's
  monotonic clock, from the moment a request is written to the moment its answer is
  read), retries, default actions, strikes and forfeits, and the game record.
* :class:`Referee` ties them together; :class:`RefereeServicer` is the gRPC face.
"""

from __future__ import annotations

import asyncio
import collections
import heapq
import itertools
import time
import uuid
import weakref
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, Self

import grpc
from chinchon.engine import (
    Action,
    Bot,
    GameState,
    IllegalAction,
    MalformedInput,
    RuleSet,
    RuleSetError,
    ShuffleSource,
    apply,
    legal_actions,
    new_game,
    observation,
)
from chinchon.engine.policies import default_action
from chinchon.engine.record import RecordBuilder
from chinchon.v1 import game_pb2 as g
from chinchon.v1 import record_pb2 as r
from chinchon.v1 import referee_pb2 as pb
from chinchon.v1 import referee_pb2_grpc as pb_grpc
from chinchon.wire import (
    RequestEncoder,
    action_to_wire,
    answer_fields,
    decode_action,
    delimited,
    duration,
    hand_result_to_wire,
    rules_from_wire,
    rules_to_wire,
    seconds_of,
)

from . import __version__
from .clip import clip
from .config import Limits, Policies, RefereeConfig, TimeControl
from .house import HOUSE_BOTS, HouseBot, make_house_bot
from .house_worker import HouseWorker, WorkerGone
from .logs import get_logger
from .pace import Pacer
from .practice_keys import new_practice_secret, practice_deal_id, practice_key
from .quota import Quota

log = get_logger("referee")
_house_keys = itertools.count(1)  # names each house seat of each game for the worker


class Disconnected(Exception):
    """The stream is gone (closed, cancelled, or not reading).

    ``since``: when the stream was lost with a request outstanding, the monotonic time
    that request was written (the bot's clock has been running since); otherwise None.
    """

    def __init__(self, since: float | None = None) -> None:
        super().__init__("the stream is gone")
        self.since = since


class TimedOut(Exception):
    def __init__(self, waited: float) -> None:
        super().__init__(f"no answer in {waited:.3f} s")
        self.waited = waited


class Forfeit(Exception):
    def __init__(self, seat: int, termination: str, why: str) -> None:
        super().__init__(why)
        self.seat = seat
        self.termination = termination
        self.why = why


class ShuttingDown(Exception):
    """The referee is shutting down: no game starts, and a game that is stopped before
    its end has no result (a tournament plays it again when it resumes)."""


# -- one stream ---------------------------------------------------------------------------


class _PerLoop:
    """A class with one instance per event loop, kept in a weak mapping keyed by the
    loop (so the instance does not hold its loop: it runs on the loop that is running)."""

    _instances: ClassVar[weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, Any]]

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls._instances = weakref.WeakKeyDictionary()

    @classmethod
    def of(cls, loop: asyncio.AbstractEventLoop) -> Self:
        """The one instance of the loop."""
        inst: Self | None = cls._instances.get(loop)
        if inst is None:
            inst = cls._instances[loop] = cls()
        return inst


class Deadlines(_PerLoop):
    """Expires the futures of outstanding requests at their deadlines, with one event-loop
    timer for all of them.

    ``loop.call_at`` per request would put a TimerHandle per decision on the loop's heap,
    compared in Python, and leave it there, cancelled, until its deadline (a move's
    time plus the bank: thousands of dead handles at a few thousand decisions per
    second). Here a request costs one push of a tuple on a heap compared in C; answered
    requests are dropped lazily (from the top, and in a compaction when the heap has
    grown), and the single timer is armed for the earliest deadline still pending.
    """

    def __init__(self) -> None:
        self.heap: list[tuple[float, int, asyncio.Future[Any]]] = []
        self.seq = itertools.count()
        self.timer: asyncio.TimerHandle | None = None
        self.armed = float("inf")
        self.compact_at = 1024

    def add(self, when: float, fut: asyncio.Future[Any]) -> None:
        """Fail ``fut`` with TimeoutError at loop time ``when`` unless it is done by then."""
        heap = self.heap
        heapq.heappush(heap, (when, next(self.seq), fut))
        if when < self.armed:
            self._arm(when)
        if len(heap) >= self.compact_at:
            heap[:] = [e for e in heap if not e[2].done()]
            heapq.heapify(heap)
            self.compact_at = max(1024, 4 * len(heap))

    def _arm(self, when: float) -> None:
        if self.timer is not None:
            self.timer.cancel()
        self.armed = when
        self.timer = asyncio.get_running_loop().call_at(when, self._fire)

    def _fire(self) -> None:
        self.timer = None
        heap = self.heap
        now = max(asyncio.get_running_loop().time(), self.armed)
        while heap and (heap[0][0] <= now or heap[0][2].done()):
            fut = heapq.heappop(heap)[2]
            if not fut.done():
                fut.set_exception(TimeoutError())
        self.armed = float("inf")
        if heap:
            self._arm(heap[0][0])


class WriteWatch(_PerLoop):
    """Bounds every write to a bot in time, without a timer per write.

    A write to a bot that does not read its stream waits for HTTP/2 flow control and
    could wait forever. Each write is registered here with its deadline and its task;
    one sweeper task per event loop (running only while writes are in flight) cancels
    a write past its deadline, and :meth:`Connection.send` turns that into a
    disconnect. A timer per write (``asyncio.timeout``) costs a heap push and pop on
    the event loop for each of the thousands of writes per second; a sweep every
    ``write_timeout / 10`` (at most 1 s) costs nothing measurable.
    """

    def __init__(self) -> None:
        self.writing: dict[Connection, tuple[float, asyncio.Task[Any]]] = {}
        self.period = 1.0
        self.shortest = float("inf")  # the shortest write timeout seen sets the period
        self.sweeper: asyncio.Task[None] | None = None

    def start(
        self, conn: Connection, timeout: float, task: asyncio.Task[Any] | None,
        loop: asyncio.AbstractEventLoop,
    ) -> None:
        """Watch ``conn``'s write by ``task`` (None: the current task) on ``loop`` (the
        running loop)."""
        if task is None:
            task = asyncio.current_task()
            assert task is not None
        self.writing[conn] = (loop.time() + timeout, task)
        if timeout < self.shortest:
            self.shortest = timeout
            self.period = min(1.0, max(0.01, timeout / 10))
        if self.sweeper is None:
            self.sweeper = loop.create_task(self._sweep())

    async def _sweep(self) -> None:
        try:
            while self.writing:
                await asyncio.sleep(self.period)
                self.expire(asyncio.get_running_loop())
        finally:
            self.sweeper = None

    def expire(self, loop: asyncio.AbstractEventLoop) -> None:
        """Cancel the writes past their deadline at ``loop``'s time. Each is cancelled
        after the callbacks already due on the loop: a write whose completion reached
        the loop before this sweep resumes its task first, and is not taken for a
        timeout."""
        now = loop.time()
        for conn, entry in self.writing.items():
            if now >= entry[0]:
                loop.call_soon(self._cancel, conn, entry)

    def _cancel(self, conn: Connection, entry: tuple[float, asyncio.Task[Any]]) -> None:
        if self.writing.get(conn) is not entry:
            return  # the write completed meanwhile (and maybe another one began)
        del self.writing[conn]
        conn.write_expired = True
        entry[1].cancel()


class WriteGate(_PerLoop):
    """Holds each write to a bot until the tasks already due to run in this pass of the
    event loop have run, then lets the writes through together, in the order they came.

    Under load, the games' tasks run one after another in each pass of the loop, and
    each one's Python work (apply, observation, encoding) would sit between two writes
    to gRPC. Written back to back instead, the writes meet gRPC's transport together:
    it sends them in fewer system calls, and the bots receive them in fewer wake-ups.
    Measured with ``bench/bench_server.py`` (``--write-gate off`` is the baseline):
    about 10% more decisions per second, mostly from cheaper work on the bots' side;
    a write waits one extra pass of the loop.

    Each writer waits on a future of its own: a cancelled writer (a write timeout, a
    game stopped) leaves the others alone.
    """

    #: Off, writes go to gRPC at once (the benchmark's baseline).
    enabled = True

    def __init__(self) -> None:
        self.waiting: list[asyncio.Future[None]] = []

    def wait(self, loop: asyncio.AbstractEventLoop) -> asyncio.Future[None]:
        """A future done when the gate next opens (on ``loop``, the running loop)."""
        fut = loop.create_future()
        if not self.waiting:
            loop.call_soon(self._open)
        self.waiting.append(fut)
        return fut

    def _open(self) -> None:
        waiting, self.waiting = self.waiting, []
        for fut in waiting:
            if not fut.done():
                fut.set_result(None)


class Connection:
    """One ``Play`` stream of one bot."""

    def __init__(
        self, bot: str, context: Any, limits: Limits,
        on_incident: Callable[..., None] | None = None,
    ) -> None:
        self.bot = bot
        self.on_incident = on_incident
        self.id = uuid.uuid4().hex[:12]
        self.context = context
        self.limits = limits
        self.closed = asyncio.Event()
        self.closed_at: float | None = None  # monotonic time the stream was lost
        # Called once when the stream is lost, while a game holds it (see Seat.attach).
        self.on_lost: Callable[[], None] | None = None
        self.abort: tuple[grpc.StatusCode, str] | None = None
        self.hello: asyncio.Future[pb.Hello] = asyncio.get_running_loop().create_future()
        self.unsolicited = 0
        self.busy = False
        self.queue = False  # said Hello in queue mode: between games it waits in the lobby
        # One write at a time per stream (gRPC allows no more): a flag, and the writers
        # waiting for it in order. Almost always free, so no lock object is awaited.
        self._writing = False
        self._write_queue: collections.deque[asyncio.Future[None]] = collections.deque()
        # The outstanding request: its id, and the future of the time its answer was
        # read; the answer (an encoded action) waits in _reply. The future holds no bytes:
        # the deadline heap keeps answered futures for a while, and an answer may be 64 KiB.
        self._pending: tuple[int, asyncio.Future[float]] | None = None
        self._reply = b""
        self._last_request = 0
        # Request ids are numbered per stream (from 1): a bot learns nothing of the
        # traffic of other streams or games from them.
        self._request_ids = itertools.count(1)
        self.request_written = 0.0  # monotonic time the last action request was written
        # The game this stream plays now (set by Seat.attach), and the first request id
        # of each of its last games: a late answer is reported in the game it belongs to.
        self.game_id = ""
        self._games: list[tuple[int, str]] = []
        self._tasks: set[asyncio.Task[Any]] = set()
        self._loop = loop = asyncio.get_running_loop()
        self._watch = WriteWatch.of(loop)
        self._deadlines = Deadlines.of(loop)
        self._gate = WriteGate.of(loop) if WriteGate.enabled else None
        self.write_expired = False

    # reading ------------------------------------------------------------------------
    async def read_loop(self) -> None:
        """Read the stream's messages (as bytes: the Play method has no request
        deserializer) and dispatch each at once. Reads with ``context.read()`` (one
        coroutine per message rather than the request iterator's async generator around
        it), never under a timeout: cancelling a read breaks the stream."""
        read = self.context.read
        eof = grpc.aio.EOF
        try:
            while True:
                raw = await read()
                if raw is eof:
                    break
                now = time.monotonic()
                if self._pending is not None:
                    # The hot path: the answer to the outstanding request, read without
                    # building a PlayRequest.
                    got = answer_fields(raw)
                    if got is not None and self._answer(got[0], got[1], now):
                        continue
                self._on_message(pb.PlayRequest.FromString(raw), now)
                if self.abort is not None:
                    break
        except asyncio.CancelledError:
            pass
        except Exception as e:
            log.info("stream_broken", bot=self.bot, conn=self.id, error=clip(repr(e)))
            self.abort = (
                grpc.StatusCode.INVALID_ARGUMENT,
                "a message could not be read as a chinchon.v1.PlayRequest",
            )
            if self.on_incident is not None:
                self.on_incident("protocol", bot=self.bot, code="INVALID_ARGUMENT",
                                 message=self.abort[1])
        finally:
            self._close()

    def _close(self) -> None:
        if self.closed_at is None:
            self.closed_at = time.monotonic()
        self.closed.set()
        if self._pending is not None and not self._pending[1].done():
            self._pending[1].set_exception(Disconnected())
        if not self.hello.done():
            self.hello.set_exception(Disconnected())
            self.hello.exception()  # maybe nobody waits for it: nothing to log then
        lost, self.on_lost = self.on_lost, None
        if lost is not None:
            lost()

    def _answer(self, request_id: int, action: bytes, now: float) -> bool:
        """Resolve the outstanding request if ``request_id`` is its id."""
        pending = self._pending
        if pending is None or pending[0] != request_id or pending[1].done():
            return False
        self._pending = None
        self.unsolicited = 0  # the flood bound counts from the last answer
        self._reply = action
        pending[1].set_result(now)
        return True

    def _on_message(self, msg: pb.PlayRequest, now: float) -> None:
        kind = msg.WhichOneof("kind")
        if kind == "action":
            rid = msg.action.request_id
            if self._answer(rid, msg.action.action.SerializeToString(), now):
                return
            pending = self._pending
            if pending is None and rid > self._last_request:
                self._reject(pb.Error(
                    code=pb.ERROR_CODE_UNSOLICITED, request_id=rid,
                    message=f"not your turn: nothing is asked of you now (request {rid} was never sent)",
                ))
            else:
                want = f" (request {pending[0]} is outstanding)" if pending else ""
                self._reject(pb.Error(
                    code=pb.ERROR_CODE_STALE_REQUEST, request_id=rid,
                    message=f"request {rid} is not outstanding: answered already or too late"
                    + want,
                ), self._game_of(rid))
        elif kind == "hello":
            if not self.hello.done():
                self.hello.set_result(msg.hello)
            else:
                self._reject(pb.Error(
                    code=pb.ERROR_CODE_PROTOCOL, message="hello was already received on this stream"
                ))
        else:
            self._reject(pb.Error(
                code=pb.ERROR_CODE_MALFORMED, message="empty message: set hello or action"
            ))

    def _game_of(self, request_id: int) -> str | None:
        """The game in which this stream was sent request ``request_id``, if known."""
        for first, game in reversed(self._games):
            if request_id >= first:
                return game
        return None

    def _reject(self, err: pb.Error, game_id: str | None = None) -> None:
        self.unsolicited += 1
        if self.unsolicited > self.limits.max_unsolicited:
            self.abort = (
                grpc.StatusCode.RESOURCE_EXHAUSTED,
                f"flood: more than {self.limits.max_unsolicited} messages not asked for "
                "since the last answer",
            )
            log.warning("flood", bot=self.bot, conn=self.id, count=self.unsolicited)
            if self.on_incident is not None:
                self.on_incident("flood", bot=self.bot, message=self.abort[1])
            self._close()
            return
        log.info("bad_message", bot=self.bot, code=pb.ErrorCode.Name(err.code), msg=err.message)
        if self.on_incident is not None:
            where = {} if game_id is None else {"game_id": game_id}
            self.on_incident("protocol", bot=self.bot, code=pb.ErrorCode.Name(err.code),
                             message=err.message, **where)
        self.spawn(self._send_quiet(pb.PlayResponse(error=err)))

    def spawn(self, coro: Awaitable[Any]) -> None:
        t = asyncio.ensure_future(coro)
        self._tasks.add(t)
        t.add_done_callback(self._tasks.discard)

    async def _send_quiet(self, msg: pb.PlayResponse) -> None:
        try:
            await self.send(msg)
        except Disconnected:
            pass

    # writing ------------------------------------------------------------------------
    async def send(self, msg: pb.PlayResponse | bytes, task: asyncio.Task[Any] | None = None) -> float:
        """Write one message (or its encoding); return the monotonic time when it was
        written."""
        if self.closed.is_set():
            raise Disconnected()
        if msg.__class__ is not bytes:
            msg = msg.SerializeToString()  # type: ignore[union-attr]  # the stream takes bytes
        if self._writing:
            turn: asyncio.Future[None] = self._loop.create_future()
            self._write_queue.append(turn)
            try:
                await turn  # the writer before us hands the stream over
            except BaseException:
                if turn.done() and not turn.cancelled():
                    self._next_writer()  # handed over, but we will not write: pass it on
                elif turn in self._write_queue:
                    self._write_queue.remove(turn)
                raise
            if self.closed.is_set():
                self._next_writer()
                raise Disconnected()
        self._writing = True
        self._watch.start(self, self.limits.write_timeout, task, self._loop)
        try:
            if self._gate is not None:
                await self._gate.wait(self._loop)
                if self.closed.is_set():
                    raise Disconnected()  # ended while the write waited at the gate
            await self.context.write(msg)
        except asyncio.CancelledError:
            if not self.write_expired:
                raise
            task = asyncio.current_task()
            if task is not None:
                task.uncancel()
            log.warning("write_timeout", bot=self.bot, conn=self.id,
                        seconds=self.limits.write_timeout)
            self.abort = (grpc.StatusCode.DEADLINE_EXCEEDED,
                          f"the bot stopped reading its stream for "
                          f"{self.limits.write_timeout:g} s")
            self._close()
            raise Disconnected() from None
        except Exception:
            self._close()
            raise Disconnected() from None
        finally:
            self._watch.writing.pop(self, None)
            self._next_writer()
        return time.monotonic()

    def _next_writer(self) -> None:
        """Hand the stream to the next waiting writer, or mark it free."""
        queue = self._write_queue
        while queue:
            turn = queue.popleft()
            if not turn.done():
                turn.set_result(None)  # _writing stays True: it is theirs now
                return
        self._writing = False

    def next_request_id(self) -> int:
        """The id of the next action request written on this stream."""
        return next(self._request_ids)

    async def ask(
        self, request: bytes, request_id: int, budget: float,
        task: asyncio.Task[Any] | None = None,
    ) -> tuple[bytes, float]:
        """Send an action request (``PlayResponse`` bytes whose request has id
        ``request_id``); return the answer (an encoded ``chinchon.v1.Action``) and the
        time the bot took, on the referee's clock from the end of the write to the
        moment the answer was read. ``task``: the current task, if the caller knows it."""
        loop = self._loop
        fut: asyncio.Future[float] = loop.create_future()
        self._pending = (request_id, fut)
        self._last_request = request_id
        games = self._games
        if not games or games[-1][1] != self.game_id:
            games.append((request_id, self.game_id))  # the first request of a game
            if len(games) > 8:
                del games[0]
        try:
            t0 = await self.send(request, task)
        except BaseException:
            if self._pending is not None and self._pending[1] is fut:
                self._pending = None
            fut.cancel()  # nobody will wait for it
            raise
        self.request_written = t0
        # The deadline fails the future itself (asyncio.wait_for would wrap it in more
        # futures and a timer per request).
        self._deadlines.add(loop.time() + max(0.0, budget - (time.monotonic() - t0)), fut)
        try:
            t1 = await fut
        except TimeoutError:
            if self._pending is not None and self._pending[0] == request_id:
                self._pending = None
            raise TimedOut(time.monotonic() - t0) from None
        except Disconnected:
            raise Disconnected(since=t0) from None  # the bot's clock started at t0
        action, self._reply = self._reply, b""
        took = t1 - t0
        if took > budget:
            # Read after the deadline, before the timer could fire: late all the same.
            raise TimedOut(took)
        return action, max(0.0, took)


# -- seats ------------------------------------------------------------------------------


@dataclass
class SeatStats:
    timeouts: int = 0
    illegal: int = 0
    strikes: int = 0
    decisions: int = 0
    think_time: float = 0.0


@dataclass
class Seat:
    index: int
    name: str
    house: Bot | None = None
    conn: Connection | None = None
    bank: float = 0.0
    stats: SeatStats = field(default_factory=SeatStats)
    #: ``PlayResponse.accepted`` for the seat's last applied answer, until it is sent
    #: with the next message to the seat.
    ack: bytes = b""
    reattached: asyncio.Event = field(default_factory=asyncio.Event)
    #: The stream that has had this game's ``game_started``: a stream that takes the
    #: seat over gets ``game_started(resumed)`` before anything else.
    greeted: Connection | None = None
    #: Called when the seat's stream is lost while its game runs (set by the game).
    lost_hook: Callable[[Seat], None] | None = None
    #: The practice session the seat belongs to, if any: a practice stream of the bot
    #: that comes back takes the seat over and stays until the session ends.
    session: asyncio.Future[None] | None = None
    #: The game the seat is in (set by the game when it starts).
    game_id: str = ""

    @property
    def remote(self) -> bool:
        return self.house is None

    def attach(self, conn: Connection) -> None:
        """Seat ``conn`` here (a stream of this seat's bot), and watch it."""
        self.conn = conn
        conn.busy = True
        conn.game_id = self.game_id
        hook = self.lost_hook
        conn.on_lost = None if hook is None else (lambda: hook(self))
        self.reattached.set()


# -- lobby ------------------------------------------------------------------------------


class Lobby:
    """Idle connections per bot, and seats waiting for their bot to come back."""

    def __init__(self) -> None:
        self.idle: dict[str, list[Connection]] = {}
        self.orphans: dict[str, list[Seat]] = {}
        self._changed = asyncio.Condition()
        self.seen: set[str] = set()
        #: Why the lobby is closed (the referee is shutting down), or None while open.
        self.closing: str | None = None
        self._notifier: asyncio.Future[None] | None = None

    async def add(self, conn: Connection) -> None:
        self.seen.add(conn.bot)
        if self.closing is not None:
            # Shutting down: a stream back from its game, or a new one, is ended.
            _end(conn, self.closing)
            return
        if self._take_over(conn, practice=False) is not None:
            return
        self.idle.setdefault(conn.bot, []).append(conn)
        async with self._changed:
            self._changed.notify_all()

    def take(self, bot: str) -> Connection | None:
        """An idle open connection of ``bot`` right now, or None."""
        if self.closing is not None:
            return None
        lst = self.idle.get(bot, [])
        while lst:
            conn = lst.pop(0)
            if not conn.closed.is_set():
                conn.busy = True
                return conn
        return None

    def give_back(self, conn: Connection) -> None:
        """Undo :meth:`take` (no waiter is woken: nothing changed for them)."""
        conn.busy = False
        if not conn.closed.is_set():
            self.idle.setdefault(conn.bot, []).insert(0, conn)

    def remove(self, conn: Connection) -> None:
        lst = self.idle.get(conn.bot)
        if lst and conn in lst:
            lst.remove(conn)

    async def release(self, conn: Connection) -> None:
        conn.busy = False
        if not conn.closed.is_set():
            await self.add(conn)

    def orphan(self, seat: Seat) -> None:
        """Hold ``seat`` for the next stream its bot opens (once)."""
        lst = self.orphans.setdefault(seat.name, [])
        if seat not in lst:
            seat.reattached.clear()
            lst.append(seat)

    def unorphan(self, seat: Seat) -> None:
        lst = self.orphans.get(seat.name)
        if lst and seat in lst:
            lst.remove(seat)

    def resume_practice(self, conn: Connection) -> asyncio.Future[None] | None:
        """Give ``conn`` (a practice stream) the seat its bot left in a practice session,
        if one is held; that session, or None."""
        seat = self._take_over(conn, practice=True)
        return None if seat is None else seat.session

    def _take_over(self, conn: Connection, practice: bool) -> Seat | None:
        """Give ``conn`` the first seat held for its bot, a practice seat or a game's
        (each kind is taken over only by a stream of its kind); that seat, or None."""
        held = self.orphans.get(conn.bot, [])
        for seat in list(held):
            if (seat.session is not None) != practice:
                continue
            held.remove(seat)
            if seat.conn is not None and not seat.conn.closed.is_set():
                continue  # resumed another way meanwhile
            if seat.session is not None and seat.session.done():
                continue  # its session is over
            seat.attach(conn)
            log.info("seat_resumed", bot=conn.bot, conn=conn.id, seat=seat.index,
                     practice=practice)
            return seat
        return None

    def close_idle(self, why: str) -> int:
        """Close the lobby (shutdown): end every idle stream with UNAVAILABLE and ``why``,
        and every stream that comes to the lobby from now on; give no more streams out.
        Returns how many streams were ended."""
        self.closing = why
        n = 0
        for conns in self.idle.values():
            for conn in conns:
                if not conn.closed.is_set():
                    _end(conn, why)
                    n += 1
            conns.clear()
        self._notifier = asyncio.ensure_future(self._notify())  # acquire / wait_all give up
        return n

    async def _notify(self) -> None:
        async with self._changed:
            self._changed.notify_all()

    def connected(self, bot: str) -> int:
        return sum(1 for c in self.idle.get(bot, []) if not c.closed.is_set())

    async def acquire(self, bot: str, timeout: float) -> Connection | None:
        """An idle connection of ``bot``, waiting up to ``timeout`` seconds."""
        deadline = time.monotonic() + timeout
        async with self._changed:
            while True:
                if self.closing is not None:
                    raise ShuttingDown(self.closing)
                conn = self.take(bot)
                if conn is not None:
                    return conn
                left = deadline - time.monotonic()
                if left <= 0:
                    return None
                try:
                    await asyncio.wait_for(self._changed.wait(), left)
                except TimeoutError:
                    return None

    async def wait_all(self, bots: Sequence[str], timeout: float | None) -> bool:
        """Wait until every bot has at least one idle connection."""
        deadline = None if timeout is None else time.monotonic() + timeout
        async with self._changed:
            while not all(self.connected(b) for b in bots):
                if self.closing is not None:
                    raise ShuttingDown(self.closing)
                left = None if deadline is None else deadline - time.monotonic()
                if left is not None and left <= 0:
                    return False
                try:
                    await asyncio.wait_for(self._changed.wait(), left)
                except TimeoutError:
                    return False
            return True


def _end(conn: Connection, why: str) -> None:
    """End ``conn``'s call with UNAVAILABLE and ``why`` (the referee is shutting down)."""
    if not conn.closed.is_set():
        if conn.abort is None:
            conn.abort = (grpc.StatusCode.UNAVAILABLE, why)
        conn._close()


# -- games ------------------------------------------------------------------------------


@dataclass
class GameSpec:
    game_id: str
    rules: RuleSet
    players: list[str]  # bot names by seat (house bots: "house:<kind>")
    seed: bytes | str
    deal_id: str
    time_control: TimeControl
    policies: Policies
    tournament_id: str = ""
    labels: dict[str, str] = field(default_factory=dict)
    send_record: bool = False
    #: The suit relabelling of the deal (twins of a duplicate deal: distinct indices).
    relabel: int | None = None


@dataclass
class GameOutcome:
    spec: GameSpec
    record: dict[str, Any]
    stats: list[SeatStats]
    termination: str
    forfeited: int | None
    winners: list[int]


class GameRunner:
    def __init__(self, spec: GameSpec, seats: list[Seat], referee: Referee) -> None:
        self.spec = spec
        self.seats = seats
        self.referee = referee
        self.names = [s.name for s in seats]
        self.encoder = RequestEncoder(spec.game_id, spec.rules)
        self.task: asyncio.Task[Any] | None = None  # the task playing the game
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
            self.referee.lobby.orphan(seat)
            log.info("seat_lost", game_id=self.spec.game_id, bot=seat.name, seat=seat.index)

    def _let_go(self) -> None:
        """The game is over: no seat waits for a stream any more."""
        self.over = True
        for s in self.seats:
            self.referee.lobby.unorphan(s)
            s.lost_hook = None
            if s.conn is not None:
                s.conn.on_lost = None

    async def _broadcast(self, make: Callable[[Seat], pb.PlayResponse | bytes]) -> None:
        self._hold(False)  # a bot slow to read must not hold the practice games up
        await asyncio.gather(*(self._send(s, make(s)) for s in self.seats if s.remote))

    async def tell_ended(self, result: g.GameResult, record: bytes = b"") -> None:
        """``game_ended`` to every remote seat still connected, with ``record`` (the
        encoding of a GameRecord), if given."""
        game_id = self.spec.game_id

        def ended(s: Seat) -> bytes:
            msg = pb.GameEnded(game_id=game_id, result=result, seat=s.index).SerializeToString()
            return delimited(8, msg + delimited(4, record) if record else msg)

        await self._broadcast(ended)

    async def _record_bytes(self, record: dict[str, Any]) -> bytes:
        """The GameRecord encoding of ``record``: converted by the practice worker for
        a practice game (several milliseconds of CPU), here otherwise."""
        if self.practice:
            try:
                return bytes(await self.referee.worker(practice=True).call("record", record))
            except (WorkerGone, RuntimeError) as e:
                log.warning("house_worker_failed", game_id=self.spec.game_id, error=str(e))
        return _record_to_wire(record).SerializeToString()

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
                i = await self.referee.worker(self.practice).call(
                    "choose", key, house.kind, house.seed, enc.observation(obs), enc.legal(legal))
                return legal[i]
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
            self.referee.pacer.hold(on)

    def _forget_house(self) -> None:
        if self._house_keys:
            worker = self.referee.worker(self.practice)
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
        rules = spec.rules
        source = ShuffleSource(spec.seed, spec.deal_id, spec.relabel)
        rec = RecordBuilder(spec.game_id, rules, self.names, dict(spec.labels))
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
        try:
            await self._broadcast(lambda s: self._started(s))
            log.info("game_started", game_id=spec.game_id, players=self.names)
            state = new_game(rules)
            forfeit: Forfeit | None = None
            pacer = self.referee.pacer if self.practice else None
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
                            state = apply(state, action, seat=seat.index)
                            rec.move(seat.index, action)
                            seat.stats.decisions += 1
                        else:
                            state = await self._remote_turn(seat, state, rec)
                    if len(state.results) > n_results:
                        hr = hand_result_to_wire(state.results[-1])
                        await self._broadcast(lambda s, hr=hr: pb.PlayResponse(  # type: ignore[misc]
                            hand_ended=pb.HandEnded(game_id=spec.game_id, result=hr)))
            except Forfeit as f:
                forfeit = f
            if pacer is not None:
                await pacer.turn()
            if forfeit is not None:
                record = rec.to_json(
                    state, forfeit.termination, forfeited=forfeit.seat,
                    summary=f"{self.names[forfeit.seat]} forfeited: {forfeit.why}",
                )
                log.info("game_forfeited", game_id=spec.game_id, seat=forfeit.seat, why=forfeit.why)
                self.referee.incident("forfeit", game_id=spec.game_id, bot=self.names[forfeit.seat],
                                      termination=forfeit.termination, message=forfeit.why)
            else:
                record = rec.to_json(state)
            record.update(_terms(spec))
            result = record["result"]
            outcome = GameOutcome(
                spec=spec,
                record=record,
                stats=[s.stats for s in self.seats],
                termination=result["termination"],
                forfeited=forfeit.seat if forfeit else None,
                winners=list(result["winners"]),
            )
            await self.tell_ended(_result_to_wire(result),
                                  await self._record_bytes(record) if spec.send_record else b"")
            log.info("game_ended", game_id=spec.game_id, termination=outcome.termination,
                     winners=[self.names[w] for w in outcome.winners], summary=result["summary"])
            return outcome
        finally:
            self._hold(False)
            self._let_go()
            self._forget_house()

    async def _connected(self, seat: Seat) -> Connection:
        """The seat's open stream. When it is lost, a stream of the same bot resumes the
        seat: one the bot opened again before this moment (idle in the lobby) or one it
        opens before the reconnect grace, counted from the loss, runs out; otherwise the
        bot forfeits."""
        lost = seat.conn
        if lost is not None and not lost.closed.is_set():
            return lost
        lobby = self.referee.lobby
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
        closing = asyncio.ensure_future(self.referee.shutdown.wait())
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
                seat.index, "TERMINATION_FORFEIT_DISCONNECT",
                f"disconnected and not back within {grace:g} s",
            )
        assert seat.conn is not None
        return seat.conn

    async def _remote_turn(self, seat: Seat, state: GameState, rec: RecordBuilder) -> GameState:
        spec = self.spec
        pol = spec.policies
        legal = legal_actions(state)
        enc = self.encoder
        obs = enc.observation(observation(state, seat.index, self.names))
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
            req = enc.request(rid, obs, legal_b, move_left, seat.bank, attempt, seat.ack)
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
            move_left = self._charge(seat, move_left, took)
            err: pb.Error
            try:
                action = decode_action(action_raw)
                new_state = apply(state, action, seat=seat.index)
            except MalformedInput as e:  # may quote the bot's text: kept short
                err = pb.Error(code=pb.ERROR_CODE_MALFORMED, message=clip(str(e)),
                               request_id=rid)
            except IllegalAction as e:
                err = pb.Error(code=pb.ERROR_CODE_ILLEGAL_ACTION, violation=e.code.value,
                               message=clip(e.message), request_id=rid)
            else:
                seat.stats.decisions += 1
                self.referee.decisions += 1
                rec.move(seat.index, action, "ACTION_ORIGIN_PLAYER", took)
                seat.ack = self.encoder.accepted(rid, action, took)
                return new_state
            seat.stats.illegal += 1
            left = pol.max_illegal_retries - attempt
            log.info("illegal_action", game_id=spec.game_id, bot=seat.name,
                     code=pb.ErrorCode.Name(err.code), violation=err.violation, msg=err.message)
            self.referee.incident("illegal", game_id=spec.game_id, bot=seat.name, request_id=rid,
                                  code=pb.ErrorCode.Name(err.code), violation=err.violation,
                                  message=err.message, attempt=attempt)
            await self._send(seat, pb.PlayResponse(action_rejected=pb.ActionRejected(
                request_id=rid, error=err, retries_left=max(0, left))))
            if left <= 0:
                return await self._default(seat, state, legal, rid, rec, "illegal", took)
            attempt += 1

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
        self.referee.incident("timeout", game_id=spec.game_id, bot=seat.name,
                              request_id=rid, waited=round(waited, 4),
                              allowed=round(allowed, 4))
        return await self._default(seat, state, legal, rid, rec, "timeout", waited)

    async def _default(
        self, seat: Seat, state: GameState, legal: list[Action], rid: int,
        rec: RecordBuilder, why: str, waited: float,
    ) -> GameState:
        action = default_action(state, legal)
        new_state = apply(state, action, seat=seat.index)
        seat.stats.strikes += 1
        origin = "ACTION_ORIGIN_DEFAULT_TIMEOUT" if why == "timeout" else "ACTION_ORIGIN_DEFAULT_ILLEGAL"
        rec.move(seat.index, action, origin, waited)
        mx = self.spec.policies.max_strikes
        await self._send(seat, pb.PlayResponse(default_played=pb.DefaultPlayed(
            request_id=rid, action=action_to_wire(action),
            reason=pb.DEFAULT_REASON_TIMEOUT if why == "timeout" else pb.DEFAULT_REASON_ILLEGAL,
            strikes=seat.stats.strikes, max_strikes=mx, time_taken=duration(waited))))
        if seat.stats.strikes >= mx:
            term = "TERMINATION_FORFEIT_TIMEOUT" if why == "timeout" else "TERMINATION_FORFEIT_ILLEGAL"
            what = "timeouts" if why == "timeout" else "illegal actions"
            raise Forfeit(seat.index, term, f"{mx} strikes ({what})")
        return new_state


def _terms(spec: GameSpec) -> dict[str, Any]:
    """The record's ``timeControl`` and ``policies``: what the bots played under."""
    from google.protobuf import json_format

    tc, pol = spec.time_control, spec.policies
    return {
        "timeControl": json_format.MessageToDict(g.TimeControl(
            per_move=duration(tc.per_move), bank=duration(tc.bank))),
        "policies": json_format.MessageToDict(g.Policies(
            max_illegal_retries=pol.max_illegal_retries, max_strikes=pol.max_strikes,
            reconnect_grace=duration(pol.reconnect_grace))),
    }


def _result_to_wire(result: dict[str, Any]) -> g.GameResult:
    from google.protobuf import json_format

    return json_format.ParseDict(result, g.GameResult())


def _record_to_wire(record: dict[str, Any]) -> r.GameRecord:
    from google.protobuf import json_format

    return json_format.ParseDict(record, r.GameRecord())


# -- the referee ----------------------------------------------------------------------------


GameListener = Callable[[GameOutcome], Awaitable[None]]


class Referee:
    def __init__(self, config: RefereeConfig | None = None,
                 practice_secret: bytes | None = None) -> None:
        self.config = config or RefereeConfig()
        #: Keys practice deals (see practice_keys): kept by ``chinchon serve`` in its
        #: database, so a seed gives the same deals after a restart.
        self.practice_secret = practice_secret or new_practice_secret()
        self.lobby = Lobby()
        self.decisions = 0
        self.games_running = 0
        #: Every open Play stream (the servicer adds and removes them).
        self.connections: set[Connection] = set()
        #: Set when the referee starts shutting down (see :meth:`begin_shutdown`).
        self.shutdown = asyncio.Event()
        self.listeners: list[GameListener] = []
        self.incidents: list[dict[str, Any]] = []
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
        self._practice_waiting: dict[
            tuple[RuleSet, TimeControl, int, str],
            list[tuple[Connection, asyncio.Future[None]]],
        ] = {}

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
        deadline = time.monotonic() + timeout
        while self.games_running and time.monotonic() < deadline:
            await asyncio.sleep(0.02)
        return not self.games_running

    async def end_streams(self, why: str) -> int:
        """End every open Play stream with UNAVAILABLE and ``why``, and wait (boundedly)
        for the games in progress to stop: each raises :class:`ShuttingDown` and has no
        result. Call after :meth:`begin_shutdown`. Returns how many games were stopped."""
        stopped = self.games_running
        for conn in list(self.connections):
            _end(conn, why)
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

    def incident(self, kind: str, **fields: Any) -> None:
        """Remember something a bot author should hear about (bounded list)."""
        if len(self.incidents) < self.max_incidents:
            self.incidents.append({"kind": kind, **{
                k: clip(v) if isinstance(v, str) else v for k, v in fields.items()}})

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
            if absent:
                await self._release(seats)
                return self._no_show(spec, seats, absent)
        self.games_running += 1
        given = [s.conn for s in seats]
        runner = GameRunner(spec, seats, self)
        try:
            outcome = await runner.run()
        except ShuttingDown:
            log.info("game_stopped", game_id=spec.game_id, why="the referee is shutting down")
            raise
        except Exception:
            log.exception("game_crashed", game_id=spec.game_id)
            outcome = self._aborted(spec, seats, "the referee hit an internal error")
            self.incident("aborted", game_id=spec.game_id, message=outcome.record["result"]["summary"])
            await runner.tell_ended(_result_to_wire(outcome.record["result"]))
        finally:
            self.games_running -= 1
            for s, first in zip(seats, given, strict=True):
                # A queue-mode stream that resumed a seat goes back to the lobby even
                # when the caller keeps the streams it gave.
                if s.conn is not None and (release or (s.conn is not first and s.conn.queue)):
                    await self.lobby.release(s.conn)
        for listener in self.listeners:
            await listener(outcome)
        return outcome

    async def _release(self, seats: Sequence[Seat] | None) -> None:
        """Give the seats' streams back to the lobby (which ends them, saying why, once
        the referee is shutting down)."""
        for s in seats or ():
            if s.conn is not None:
                await self.lobby.release(s.conn)

    def _aborted(self, spec: GameSpec, seats: list[Seat], why: str) -> GameOutcome:
        rec = RecordBuilder(spec.game_id, spec.rules, spec.players, dict(spec.labels))
        record = rec.to_json(new_game(spec.rules), "TERMINATION_ABORTED", summary=why)
        record.update(_terms(spec))
        return GameOutcome(spec, record, [s.stats for s in seats], "TERMINATION_ABORTED", None, [])

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
        state = new_game(spec.rules)
        rec = RecordBuilder(spec.game_id, spec.rules, spec.players, dict(spec.labels))
        names = ", ".join(spec.players[i] for i in absent)
        record = rec.to_json(
            state, "TERMINATION_FORFEIT_NO_SHOW", forfeited=absent[0],
            summary=f"not connected in time: {names}",
        )
        record.update(_terms(spec))
        present = [s.index for s in seats if s.index not in absent]
        record["result"]["winners"] = present
        log.info("game_no_show", game_id=spec.game_id, absent=names)
        return GameOutcome(spec, record, [SeatStats() for _ in seats],
                           "TERMINATION_FORFEIT_NO_SHOW", absent[0], present)

    # practice ----------------------------------------------------------------------------
    async def practice(self, conn: Connection, req: pb.PracticeRequest) -> None:
        try:
            rules = rules_from_wire(req.rules)
            if rules.players != 2:
                raise RuleSetError("players", "practice games are for 2 players")
        except RuleSetError as e:
            await _refuse(conn, str(e))
            return
        games = req.games or 1
        if not 1 <= games <= 100:
            await _refuse(conn, f"games must be 1 to 100, got {games}")
            return
        tc = self.config.time_control
        if req.HasField("time_control"):
            try:
                tc = TimeControl(
                    seconds_of(req.time_control.per_move) or tc.per_move,
                    seconds_of(req.time_control.bank) if req.time_control.HasField("bank") else tc.bank,
                )
            except ValueError as e:
                await _refuse(conn, str(e))
                return
        opponent = req.opponent or "greedy"
        if opponent == "any":
            lim = self.config.limits
            wait = seconds_of(req.wait) if req.HasField("wait") else lim.practice_wait
            if not 0 < wait <= lim.max_practice_wait:
                await _refuse(conn, f"wait must be more than 0 s and at most "
                                    f"{lim.max_practice_wait:g} s, got {wait:g} s")
                return
            await self._practice_pair(conn, req, rules, tc, games, wait)
            return
        if opponent not in HOUSE_BOTS:
            await _refuse(conn, f"unknown opponent '{opponent}': choose "
                                f"{', '.join(HOUSE_BOTS)} or any")
            return
        session = asyncio.current_task()
        sid = conn.id  # names the session's games, whichever stream holds the seat
        seed = practice_key(self.practice_secret, req.seed, [conn.bot, f"house:{opponent}"])
        for i in range(games):
            me = i % 2  # alternate seats
            players = [conn.bot, f"house:{opponent}"] if me == 0 else [f"house:{opponent}", conn.bot]
            seats = [
                Seat(0, players[0]) if me == 0 else Seat(0, players[0], house=make_house_bot(opponent, i)),
                Seat(1, players[1]) if me == 1 else Seat(1, players[1], house=make_house_bot(opponent, i)),
            ]
            seats[me].conn = conn
            seats[me].session = session
            spec = GameSpec(
                game_id=f"practice-{sid}-{i + 1}", rules=rules, players=players, seed=seed,
                deal_id=practice_deal_id(i + 1), time_control=tc, policies=self.config.policies,
                labels={"practice": "1"}, send_record=True,
            )
            try:
                await self.play(spec, seats)
            except ShuttingDown:
                return
            conn = seats[me].conn or conn  # the stream that holds the seat now
            if conn.closed.is_set():
                return

    async def _practice_pair(
        self, conn: Connection, req: pb.PracticeRequest, rules: RuleSet, tc: TimeControl,
        games: int, wait: float,
    ) -> None:
        # Bots meet when they ask for the same practice: the rule set and clock they
        # resolve to (however the request spells them), the number of games and the seed.
        key = (rules, tc, games, req.seed)
        waiting = self._practice_waiting.setdefault(key, [])
        waiting[:] = [(c, f) for c, f in waiting if not c.closed.is_set()]
        if not waiting:
            done: asyncio.Future[None] = asyncio.get_running_loop().create_future()
            waiting.append((conn, done))
            closed = asyncio.ensure_future(conn.closed.wait())
            try:
                await asyncio.wait([done, closed], timeout=wait,
                                   return_when=asyncio.FIRST_COMPLETED)
                if not (done.done() or closed.done()) and (conn, done) not in waiting:
                    # A partner took us (its session plays our games): wait for the end.
                    await asyncio.wait([done, closed], return_when=asyncio.FIRST_COMPLETED)
            finally:
                closed.cancel()
            if (conn, done) in waiting:
                # Nobody came in time (a partner that took us would have removed us).
                waiting.remove((conn, done))
                if not waiting:
                    self._practice_waiting.pop(key, None)
                if not conn.closed.is_set():
                    await _refuse(conn, "no other bot asked for the same practice (rules, "
                                        f"clock, games and seed) within {wait:g} s")
            return
        other, done = waiting.pop(0)
        session = asyncio.current_task()
        sid = conn.id  # names the session's games, whichever streams hold the seats
        seed = practice_key(self.practice_secret, req.seed, [conn.bot, other.bot])
        try:
            for i in range(games):
                mine, theirs = (1, 0) if i % 2 == 0 else (0, 1)  # seats alternate
                pair = [other, conn] if i % 2 == 0 else [conn, other]
                seats = [Seat(k, c.bot, conn=c, session=session) for k, c in enumerate(pair)]
                spec = GameSpec(
                    game_id=f"practice-{sid}-{i + 1}", rules=rules,
                    players=[c.bot for c in pair], seed=seed, deal_id=practice_deal_id(i + 1),
                    time_control=tc, policies=self.config.policies, labels={"practice": "1"},
                    send_record=True,
                )
                try:
                    await self.play(spec, seats)
                except ShuttingDown:
                    break
                # The streams that hold the seats now (a bot may have come back).
                conn, other = seats[mine].conn or conn, seats[theirs].conn or other
                if conn.closed.is_set() or other.closed.is_set():
                    break
        finally:
            if not done.done():
                done.set_result(None)


# -- the gRPC service -------------------------------------------------------------------------


async def _refuse(conn: Connection, message: str) -> None:
    """Refuse a practice request: an ERROR_CODE_BAD_REQUEST error saying why."""
    await conn.send(pb.PlayResponse(error=pb.Error(code=pb.ERROR_CODE_BAD_REQUEST,
                                                   message=clip(message))))


def _log_session_error(session: asyncio.Future[None]) -> None:
    if not session.cancelled() and session.exception() is not None:
        log.error("practice_session_failed", error=repr(session.exception()))


class RefereeServicer(pb_grpc.RefereeServiceServicer):
    def __init__(self, referee: Referee, tokens: Any) -> None:
        self.referee = referee
        self.tokens = tokens

    async def _new_session(
        self, conn: Connection, req: pb.PracticeRequest
    ) -> asyncio.Future[None] | None:
        """Start a practice session for ``conn``; or, when its bot or the referee runs
        as many as the limits allow, refuse it (an in-band error, then the stream ends
        with RESOURCE_EXHAUSTED) and return None."""
        sessions = self.referee.practice_sessions
        refused = sessions.refusal(conn.bot)
        if refused is not None:
            n = sessions.worth_logging(conn.bot)
            if n is not None:
                log.warning("practice_refused", bot=conn.bot, conn=conn.id, why=refused,
                            refusals=n)
            try:
                await _refuse(conn, refused)
            except Disconnected:
                pass
            conn.abort = (grpc.StatusCode.RESOURCE_EXHAUSTED, refused)
            return None
        bot = conn.bot
        sessions.take(bot)
        session = asyncio.ensure_future(self.referee.practice(conn, req))
        session.add_done_callback(lambda _: sessions.give_back(bot))
        session.add_done_callback(_log_session_error)
        return session

    async def Play(self, request_iterator: AsyncIterator[bytes], context: Any) -> None:
        bot = self.tokens.bot_for_metadata(context.invocation_metadata())
        if bot is None:  # the interceptor already refused it; belt and braces
            await context.abort(grpc.StatusCode.UNAUTHENTICATED, "unknown or missing token")
            return
        if self.referee.closing is not None:
            await context.abort(grpc.StatusCode.UNAVAILABLE, self.referee.closing)
            return
        refused = self.referee.streams.refusal(bot)
        if refused is not None:
            n = self.referee.streams.worth_logging(bot)
            if n is not None:
                log.warning("stream_refused", bot=bot, why=refused, refusals=n)
            await context.abort(grpc.StatusCode.RESOURCE_EXHAUSTED, refused)
            return
        limits = self.referee.config.limits
        conn = Connection(bot, context, limits, self.referee.incident)
        reader = asyncio.ensure_future(conn.read_loop())
        self.referee.connections.add(conn)
        self.referee.streams.take(bot)
        log.info("stream_opened", bot=bot, conn=conn.id)
        try:
            try:
                hello = await asyncio.wait_for(asyncio.shield(conn.hello), limits.hello_timeout)
            except TimeoutError:
                await context.abort(
                    grpc.StatusCode.DEADLINE_EXCEEDED,
                    f"no hello within {limits.hello_timeout:g} s: send Hello first",
                )
                return
            except Disconnected:
                if conn.abort:
                    await context.abort(*conn.abort)
                return
            await conn.send(pb.PlayResponse(welcome=pb.Welcome(
                bot_name=bot, server_version=__version__, protocol="chinchon.v1",
                limits=pb.Limits(
                    max_message_bytes=limits.max_message_bytes,
                    max_unsolicited_messages=limits.max_unsolicited,
                    max_illegal_retries=self.referee.config.policies.max_illegal_retries,
                    max_strikes=self.referee.config.policies.max_strikes,
                    reconnect_grace=duration(self.referee.config.policies.reconnect_grace),
                ),
            )))
            if hello.WhichOneof("mode") == "practice":
                # The session runs on its own: if this stream is lost, its game holds
                # the seat, and the bot's next practice stream takes it over (and stays
                # until the session ends) instead of starting a new session.
                session = self.referee.lobby.resume_practice(conn)
                if session is None:
                    session = await self._new_session(conn, hello.practice)
                if session is not None:
                    await asyncio.shield(session)
            else:
                conn.queue = True
                await self.referee.lobby.add(conn)
                await conn.closed.wait()
            if conn.abort:
                await context.abort(*conn.abort)
        except Disconnected:
            if conn.abort:
                await context.abort(*conn.abort)
        finally:
            self.referee.connections.discard(conn)
            self.referee.streams.give_back(bot)
            self.referee.lobby.remove(conn)
            reader.cancel()
            log.info("stream_closed", bot=bot, conn=conn.id)
