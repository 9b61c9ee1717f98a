"""One ``Play`` stream of one bot: a reader task dispatches each message at once (the
answer to the one outstanding request by id; anything else is answered in-band and
counted against the flood limit), and writes go one at a time, bounded in time (a bot
that stops reading only hurts its own game)."""

from __future__ import annotations

import asyncio
import collections
import itertools
import time
import uuid
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, Protocol

import grpc
from chinchon.v1 import referee_pb2 as pb
from chinchon.wire import answer_fields

from ..config import Limits
from ..logs import get_logger
from .clip import clip
from .errors import Disconnected, TimedOut
from .incidents import IncidentKind, IncidentSink
from .timers import Deadlines, WriteGate, WriteWatch

log = get_logger("referee.connection")


class PlayStream(Protocol):
    """What a connection needs of its gRPC call: a ``Play`` method's
    ``grpc.aio.ServicerContext`` (raw bytes both ways), or a test's stand-in."""

    async def read(self) -> Any: ...  # bytes, or grpc.aio.EOF

    async def write(self, message: bytes) -> None: ...


class Connection:
    """One ``Play`` stream of one bot."""

    def __init__(
        self, bot: str, context: PlayStream, limits: Limits,
        on_incident: IncidentSink | None = None,
    ) -> None:
        self.bot = bot
        self.on_incident = on_incident
        self.id = uuid.uuid4().hex[:12]
        self.context = context
        self.limits = limits
        self.closed = asyncio.Event()
        self.closed_at: float | None = None  # monotonic time the stream was lost
        #: When the stream was opened (a ``time.time()``: a ladder compares it with the
        #: stored moment a bot was suspended, to tell a new stream from an old one).
        self.opened = time.time()
        # Called once when the stream is lost, while a game holds it (see Seat.attach).
        self.on_lost: Callable[[], None] | None = None
        self.abort: tuple[grpc.StatusCode, str] | None = None
        self.hello: asyncio.Future[pb.Hello] = asyncio.get_running_loop().create_future()
        self.unsolicited = 0
        self.busy = False
        self.queue = False  # said Hello in queue mode: between games it waits in the lobby
        self.lean = False  # asked in Hello for lean requests (OBSERVATION_MODE_LEAN)
        # One write at a time per stream (gRPC allows no more): a flag, and the writers
        # waiting for it in order. Almost always free, so no lock object is awaited.
        self._writing = False
        self._write_queue: collections.deque[asyncio.Future[None]] = collections.deque()
        #: Called once no write is in flight or waiting (:meth:`when_written`).
        self._quiet: list[Callable[[], None]] = []
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
        #: The last request whose game was stopped while it was outstanding, and its game.
        self._stopped: tuple[int, str] | None = None
        self._tasks: set[asyncio.Task[Any]] = set()
        self._loop = loop = asyncio.get_running_loop()
        self._watch = WriteWatch.of(loop)
        self._deadlines = Deadlines.of(loop)
        self._gate = WriteGate.of(loop) if WriteGate.enabled else None
        self.write_expired = False
        self._on_write_expired = self._write_expired  # bound once: passed with each write

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
                if len(raw) > self.limits.max_message_bytes:
                    self._oversize(len(raw))
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
                self.on_incident(IncidentKind.PROTOCOL, bot=self.bot, code="INVALID_ARGUMENT",
                                 message=self.abort[1])
        finally:
            self._close()

    def _oversize(self, size: int) -> None:
        """A message over the bots' limit (the server takes larger ones for the
        organizer's service): the stream ends with RESOURCE_EXHAUSTED."""
        limit = self.limits.max_message_bytes
        self.abort = (grpc.StatusCode.RESOURCE_EXHAUSTED,
                      f"a message of {size:,} bytes, over the limit of {limit:,} "
                      "(max_message_bytes)")
        log.info("stream_oversize", bot=self.bot, conn=self.id, size=size, limit=limit)
        if self.on_incident is not None:
            self.on_incident(IncidentKind.PROTOCOL, bot=self.bot, code="RESOURCE_EXHAUSTED",
                             message=self.abort[1])

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
        if self._quiet:
            self._run_quiet()

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
                self._reject(pb.Error(code=pb.ERROR_CODE_STALE_REQUEST, request_id=rid,
                                      message=self._stale(rid)), self._game_of(rid))
        elif kind == "hello":
            if not self.hello.done():
                self.lean = msg.hello.observations == pb.OBSERVATION_MODE_LEAN
                self.hello.set_result(msg.hello)
            else:
                self._reject(pb.Error(
                    code=pb.ERROR_CODE_PROTOCOL, message="hello was already received on this stream"
                ))
        else:
            self._reject(pb.Error(
                code=pb.ERROR_CODE_MALFORMED, message="empty message: set hello or action"
            ))

    def _stale(self, rid: int) -> str:
        """Why an answer to request ``rid`` is not taken."""
        if self._stopped is not None and self._stopped[0] == rid:
            return (f"request {rid} is not outstanding: its game {self._stopped[1]} was "
                    "stopped before the answer came")
        pending = self._pending
        want = ""
        if pending is not None and pending[0] != rid and not pending[1].done():
            want = f" (request {pending[0]} is outstanding)"
        return f"request {rid} is not outstanding: answered already or too late" + want

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
                self.on_incident(IncidentKind.FLOOD, bot=self.bot, message=self.abort[1])
            self._close()
            return
        log.info("bad_message", bot=self.bot, code=pb.ErrorCode.Name(err.code), msg=err.message)
        if self.on_incident is not None:
            where = {} if game_id is None else {"game_id": game_id}
            self.on_incident(IncidentKind.PROTOCOL, bot=self.bot, code=pb.ErrorCode.Name(err.code),
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
        self._watch.start(self, self.limits.write_timeout, task, self._loop, self._on_write_expired)
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

    def _write_expired(self) -> None:
        """The write watch's callback: the write in flight is past its deadline (its
        task is cancelled next, and :meth:`send` turns that into a disconnect)."""
        self.write_expired = True

    def end(self, why: str) -> None:
        """End the call with UNAVAILABLE and ``why`` (the referee is shutting down)."""
        if not self.closed.is_set():
            if self.abort is None:
                self.abort = (grpc.StatusCode.UNAVAILABLE, why)
            self._close()

    def finish(self) -> None:
        """End the call normally (status OK): the stream has nothing more to do."""
        if not self.closed.is_set():
            self._close()

    def _next_writer(self) -> None:
        """Hand the stream to the next waiting writer, or mark it free."""
        queue = self._write_queue
        while queue:
            turn = queue.popleft()
            if not turn.done():
                turn.set_result(None)  # _writing stays True: it is theirs now
                return
        self._writing = False
        if self._quiet:
            self._run_quiet()

    @property
    def writing(self) -> bool:
        """A write is in flight or waiting on this stream. A write begun cannot be taken
        back: a task cancelled mid-write leaves it in flight in gRPC, which then refuses
        the stream's next write (GRPC_CALL_ERROR_TOO_MANY_OPERATIONS) and the stream ends
        (seen: a bot whose game was stopped lost its stream and left). Whoever cancels a
        task that writes here waits for :meth:`when_written` (Referee.stop)."""
        return self._writing

    def when_written(self, callback: Callable[[], None]) -> None:
        """Call ``callback`` once no write is in flight or waiting (at once if none is),
        or the stream has closed."""
        self._quiet.append(callback)
        if not self._writing or self.closed.is_set():
            self._run_quiet()

    def _run_quiet(self) -> None:
        quiet, self._quiet = self._quiet, []
        for callback in quiet:
            callback()

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
        except BaseException as e:
            if self._pending is not None and self._pending[1] is fut:
                self._pending = None
            fut.cancel()  # nobody will wait for it
            if isinstance(e, asyncio.CancelledError):
                self._stopped = (request_id, self.game_id)  # stopped as it was written
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
        except asyncio.CancelledError:
            # The game was stopped with this request outstanding: a late answer is told so.
            if self._pending is not None and self._pending[0] == request_id:
                self._pending = None
            self._stopped = (request_id, self.game_id)
            raise
        action, self._reply = self._reply, b""
        took = t1 - t0
        if took > budget:
            # Read after the deadline, before the timer could fire: late all the same.
            raise TimedOut(took)
        return action, max(0.0, took)


def cancel_between_writes(task: asyncio.Task[Any],
                          streams: Callable[[], Sequence[Connection]]) -> None:
    """Cancel ``task``, which writes on ``streams()`` (a game's, read again each time:
    a seat may change streams), once none of them has a write in flight
    (:attr:`Connection.writing`). Looked at from the event loop, never from inside a
    write, so that the cancel finds the task waiting on anything but a write; a stream
    that closes counts as done."""
    if task.done():
        return
    busy = [c for c in streams() if c.writing and not c.closed.is_set()]
    if not busy:
        task.cancel()
        return
    loop = asyncio.get_running_loop()

    def again() -> None:
        loop.call_soon(cancel_between_writes, task, streams)

    busy[0].when_written(again)

