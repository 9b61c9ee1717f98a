"""The write watchdog (:class:`WriteWatch`): a write that does not complete within the
write timeout (a bot that stopped reading) disconnects its stream, and only its stream.

The units drive a real Connection over the test doubles of ``tests.support.referee`` on the
test's real event loop, with short times and generous bounds; the last test is a bot
that stops reading over real gRPC.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import grpc
import pytest
from chinchon.v1 import referee_pb2 as pb
from chinchon.v1 import referee_pb2_grpc as pb_grpc
from chinchon_referee.config import Limits, Policies, RefereeConfig, TimeControl
from chinchon_referee.referee import Connection, Disconnected, WriteWatch
from chinchon_referee.referee.connection import cancel_between_writes

from tests.support.fixture_types import StartServer
from tests.support.helpers import bot_token, spec
from tests.support.referee import (
    BrokenContext,
    HangingContext,
    RecordingContext,
    connection,
)
from tests.support.waits import until

#: A negative check's window, twice the write timeout of these tests: nothing may be
#: cancelled meanwhile.
QUIET = 0.4

#: The ``tiny_window_channels`` fixture: ``await open(target)`` gives a channel.
OpenChannel = Callable[[str], Awaitable[grpc.aio.Channel]]


@pytest.fixture
async def tiny_window_channels() -> AsyncIterator[OpenChannel]:
    """Channels to a server with a tiny HTTP/2 receive window that never grows, so that
    a client that does not read stalls the server's writes; closed after the test."""
    channels: list[grpc.aio.Channel] = []

    async def _open(target: str) -> grpc.aio.Channel:
        channel = grpc.aio.insecure_channel(target, options=[
            ("grpc.http2.lookahead_bytes", 1024),  # a tiny receive window
            ("grpc.http2.bdp_probe", 0),  # that never grows
        ])
        channels.append(channel)
        return channel

    yield _open
    for channel in channels:
        await channel.close()


async def test_a_write_that_never_completes_disconnects_with_deadline_exceeded() -> None:
    loop = asyncio.get_running_loop()
    ctx = HangingContext()
    conn = connection(ctx, 0.2)
    other_ctx = RecordingContext()
    other = connection(other_ctx, 0.2)
    t0 = time.monotonic()
    stuck = asyncio.ensure_future(conn.send(b"request"))
    await asyncio.wait_for(ctx.called.wait(), 5)  # the write is with gRPC, and stuck
    assert conn in WriteWatch.of(loop).writing
    # Another stream is not held up by the stuck one.
    await asyncio.wait_for(other.send(b"fine"), 1)
    assert other_ctx.sent == [b"fine"]
    with pytest.raises(Disconnected):
        await asyncio.wait_for(stuck, 5)
    assert time.monotonic() - t0 < 1.5
    assert conn.abort is not None
    assert conn.abort[0] == grpc.StatusCode.DEADLINE_EXCEEDED
    assert conn.abort[1] == "the bot stopped reading its stream for 0.2 s"
    assert conn.closed.is_set()
    assert conn not in WriteWatch.of(loop).writing
    assert not other.closed.is_set() and other.abort is None
    # A closed connection refuses further writes at once, without writing.
    with pytest.raises(Disconnected):
        await asyncio.wait_for(conn.send(b"more"), 1)
    assert ctx.calls == 1


async def test_an_ask_whose_request_cannot_be_written_disconnects() -> None:
    conn = connection(HangingContext(), 0.2)
    with pytest.raises(Disconnected):
        await asyncio.wait_for(conn.ask(b"req", 1, 30.0), 5)
    assert conn.abort is not None and conn.abort[0] == grpc.StatusCode.DEADLINE_EXCEEDED


async def test_writers_queued_behind_a_stuck_write_fail_fast_without_writing() -> None:
    ctx = HangingContext()
    conn = connection(ctx, 0.2)
    t0 = time.monotonic()
    sends = [asyncio.ensure_future(conn.send(b"%d" % i)) for i in range(3)]
    results = await asyncio.wait_for(asyncio.gather(*sends, return_exceptions=True), 5)
    assert all(isinstance(r, Disconnected) for r in results), results
    assert time.monotonic() - t0 < 1.5  # one write timeout, not one per queued write
    assert ctx.calls == 1


async def test_a_completed_write_is_not_watched_any_more() -> None:
    loop = asyncio.get_running_loop()
    ctx = RecordingContext()
    conn = connection(ctx, 0.2)
    watch = WriteWatch.of(loop)
    t = await conn.send(b"hello")
    assert isinstance(t, float) and t <= time.monotonic()
    assert ctx.sent == [b"hello"]
    assert conn not in watch.writing
    # Well past the write timeout nothing is cancelled (a negative check over QUIET),
    # and the sweeper stops.
    await asyncio.sleep(QUIET)
    assert not conn.closed.is_set() and conn.abort is None and not conn.write_expired
    await until(lambda: watch.sweeper is None, "the write watch's sweeper stopped", 10)
    assert watch.sweeper is None
    await conn.send(b"again")  # and a later write works
    assert ctx.sent == [b"hello", b"again"]


async def test_a_failing_write_disconnects() -> None:
    conn = connection(BrokenContext(), 5.0)
    with pytest.raises(Disconnected):
        await conn.send(b"x")
    assert conn.closed.is_set() and conn.abort is None
    assert conn not in WriteWatch.of(asyncio.get_running_loop()).writing


async def test_cancelling_a_writer_from_outside_raises_cancelled_error() -> None:
    loop = asyncio.get_running_loop()
    ctx = HangingContext()
    conn = connection(ctx, 5.0)
    task = asyncio.ensure_future(conn.send(b"x"))
    await asyncio.wait_for(ctx.called.wait(), 5)
    assert conn in WriteWatch.of(loop).writing
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert task.cancelled()
    assert not conn.closed.is_set() and conn.abort is None
    assert conn not in WriteWatch.of(loop).writing
    # A writer queued behind a stuck one and cancelled there does not wedge the stream.
    gate = asyncio.Event()
    entered = asyncio.Event()

    class Gated(RecordingContext):
        async def write(self, msg: Any) -> None:
            entered.set()
            await gate.wait()
            await super().write(msg)

    gated = Gated()
    conn2 = connection(gated, 5.0)
    first = asyncio.ensure_future(conn2.send(b"1"))
    queued = asyncio.ensure_future(conn2.send(b"2"))
    third = asyncio.ensure_future(conn2.send(b"3"))
    # The first write is with the stream; the two others, started in the same pass, wait
    # behind it.
    await asyncio.wait_for(entered.wait(), 5)
    queued.cancel()
    gate.set()
    await asyncio.wait_for(asyncio.gather(first, third), 5)
    assert queued.cancelled()
    assert gated.sent == [b"1", b"3"]


def _past_deadline(watch: WriteWatch, conn: Connection, loop: asyncio.AbstractEventLoop) -> None:
    """Move the deadline of ``conn``'s watched write into the past."""
    _, *rest = watch.writing[conn]
    watch.writing[conn] = (loop.time() - 1.0, *rest)  # type: ignore[assignment]


async def test_a_write_completed_in_the_pass_of_its_deadline_is_not_a_timeout() -> None:
    """The write's completion reaches the loop in the same pass as the sweep that finds
    it past its deadline: the write stands, the stream stays open."""

    loop = asyncio.get_running_loop()
    done: asyncio.Future[None] = loop.create_future()

    writing = asyncio.Event()

    class Completing(RecordingContext):
        async def write(self, msg: Any) -> None:
            writing.set()
            await done
            await super().write(msg)

    ctx = Completing()
    conn = connection(ctx, 0.2)
    watch = WriteWatch.of(loop)
    writer = asyncio.ensure_future(conn.send(b"late but written"))
    await asyncio.wait_for(writing.wait(), 5)  # the write is with gRPC
    _past_deadline(watch, conn, loop)
    done.set_result(None)  # the completion arrives ...
    watch.expire(loop)  # ... in the pass the sweep finds the deadline passed
    t = await asyncio.wait_for(writer, 5)
    assert isinstance(t, float)
    assert ctx.sent == [b"late but written"]
    assert not conn.closed.is_set() and conn.abort is None and not conn.write_expired
    assert conn not in watch.writing
    # A write still stuck at its deadline is cancelled all the same.
    hanging = HangingContext()
    stuck = connection(hanging, 0.2)
    hung = asyncio.ensure_future(stuck.send(b"x"))
    await asyncio.wait_for(hanging.called.wait(), 5)  # with gRPC, past the gate
    assert hanging.calls == 1
    _past_deadline(watch, stuck, loop)
    watch.expire(loop)
    with pytest.raises(Disconnected):
        await asyncio.wait_for(hung, 5)
    assert stuck.abort is not None and stuck.abort[0] == grpc.StatusCode.DEADLINE_EXCEEDED


async def test_a_bot_that_stops_reading_is_dropped_and_forfeits(
    servers: StartServer, tiny_window_channels: OpenChannel,
) -> None:
    """The client reads its Welcome, is seated, then never reads again while it sends
    stale answers (each answered in-band): with a tiny HTTP/2 receive window the
    referee's writes stall, the write timeout drops the stream with DEADLINE_EXCEEDED,
    and the seat forfeits by disconnect (not by timeout: the clock is far longer)."""

    config = RefereeConfig(limits=Limits(write_timeout=0.5, max_unsolicited=100_000))
    server = await servers(["deaf"], config)
    channel = await tiny_window_channels(server.target)
    call = pb_grpc.RefereeServiceStub(channel).Play(
        metadata=(("authorization", f"Bearer {bot_token('deaf')}"),))
    await call.write(pb.PlayRequest(hello=pb.Hello(client="deaf")))
    assert (await call.read()).WhichOneof("kind") == "welcome"
    assert await server.referee.lobby.wait_all(["deaf"], 120)
    t0 = time.monotonic()
    s = spec("deaf", ["deaf", "house:greedy"], tc=TimeControl(10.0, 10.0),
             policies=Policies(reconnect_grace=0.3))
    game = asyncio.ensure_future(server.referee.play(s))
    for _ in range(400):  # far more replies than the window holds
        await call.write(pb.PlayRequest(action=pb.ActionReply(request_id=0)))
    out = await asyncio.wait_for(game, 15)
    assert time.monotonic() - t0 < 10  # well before any clock could run out
    assert out.termination == "TERMINATION_FORFEIT_DISCONNECT"
    assert out.forfeited == 0 and out.winners == [1]
    assert "disconnected" in out.record["result"]["summary"]
    assert out.stats[0].timeouts == 0
    assert server.referee.lobby.connected("deaf") == 0
    # Reading now, the client finds the stream ended with DEADLINE_EXCEEDED.
    with pytest.raises(grpc.aio.AioRpcError) as err:
        for _ in range(1000):
            msg = await asyncio.wait_for(call.read(), 10)
            assert msg is not grpc.aio.EOF
    assert err.value.code() == grpc.StatusCode.DEADLINE_EXCEEDED
    assert err.value.details() == "the bot stopped reading its stream for 0.5 s"


async def _writer_to_a_slow_reader(cancel: Callable[[asyncio.Task[Any], Connection], None]
                                   ) -> tuple[bool, bytes | None]:
    """A real Connection on a real gRPC stream writes 20 kB messages to a client that
    reads slowly; ``cancel`` stops the writing task mid-stream, then the stream writes
    once more. Whether that last write was taken, and the client's last message."""
    outcome: list[bool] = []

    async def handler(_requests: Any, context: Any) -> None:
        conn = connection(context, 60.0)

        async def write_on() -> None:
            while True:
                await conn.send(b"x" * 20_000)
                await asyncio.sleep(0)

        task = asyncio.ensure_future(write_on())
        await asyncio.sleep(0.05)  # the client's window fills: writes wait on it
        # Seen from this task, the writer is suspended: inside a write, when one is on.
        await until(lambda: conn.writing, "a write in flight", 10)
        cancel(task, conn)
        with pytest.raises(asyncio.CancelledError):
            await task
        try:
            await conn.send(b"after")
            outcome.append(True)
        except Disconnected:
            outcome.append(False)

    server = grpc.aio.server()
    server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler(
        "t.Writes", {"Play": grpc.stream_stream_rpc_method_handler(handler)}),))
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    last = None
    try:
        async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
            call = channel.stream_stream("/t.Writes/Play")()
            n = 0
            async for msg in call:
                last, n = msg, n + 1
                if n % 5 == 0:
                    await asyncio.sleep(0.02)  # a slow reader
    finally:
        await server.stop(0)
    return outcome[0], last


async def test_a_task_cancelled_mid_write_breaks_its_stream_so_a_game_is_stopped_between_writes(
) -> None:
    """The premise (gRPC's own behaviour): a task cancelled while its write is in flight
    may leave the write with gRPC, and the stream refuses its next write (it ends:
    how a bot whose game was stopped lost its stream). ``cancel_between_writes``, which
    Referee.stop uses, cancels the task only once no write is in flight: the stream
    takes the next write, and the client reads it."""
    def at_once(task: asyncio.Task[Any], _conn: Connection) -> None:
        task.cancel()

    def between_writes(task: asyncio.Task[Any], conn: Connection) -> None:
        cancel_between_writes(task, lambda: [conn])

    # Whether the write in flight is caught mid-way depends on timing: it is, within a
    # few tries (3 in 12 single tries survived on a loaded machine).
    tries = 0
    while (await _writer_to_a_slow_reader(at_once))[0]:
        tries += 1
        assert tries < 8, "a write cancelled mid-way never broke the stream"
    written, last = await _writer_to_a_slow_reader(between_writes)
    assert written and last == b"after"
