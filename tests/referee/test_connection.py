"""Connection.send: one write at a time per stream, in order, whatever the writers do.

The referee writes to a stream from the game's task and, now and then, from a task
answering a stray message in-band; gRPC allows one write in flight per call. These
tests drive the real Connection with a stream context whose writes complete only when
the test says so, to see the queue at work.
"""

from __future__ import annotations

import asyncio

import pytest
from chinchon.v1 import referee_pb2 as pb
from chinchon_referee.config import Limits
from chinchon_referee.referee import Connection, Disconnected


class SlowStream:
    """A stream context whose writes each wait for the test to release them."""

    def __init__(self) -> None:
        self.active = 0
        self.max_active = 0
        self.written: list[bytes] = []
        self.gates: list[asyncio.Event] = []
        #: Set when a write starts waiting for its gate.
        self.gate_added = asyncio.Event()

    async def write(self, msg: bytes) -> None:
        self.active += 1
        self.max_active = max(self.max_active, self.active)
        gate = asyncio.Event()
        self.gates.append(gate)
        self.gate_added.set()
        try:
            await gate.wait()
            self.written.append(msg)
        finally:
            self.active -= 1


async def _release_all(stream: SlowStream, until: int) -> None:
    released = 0
    while released < until:
        await stream.gate_added.wait()  # a write is waiting for its gate
        stream.gate_added.clear()
        for gate in stream.gates[released:]:
            gate.set()
            released += 1


async def _stream_is_free(conn: Connection, stream: SlowStream) -> None:
    """The stream is left free: no write holds it, none waits for it. A next write
    reaches the stream at once (it would wait forever behind a writer that never let go),
    and is the only one there."""
    stream.gate_added.clear()
    probe = asyncio.ensure_future(conn.send(b"probe"))
    await asyncio.wait_for(stream.gate_added.wait(), 5)
    assert stream.active == 1
    stream.gates[-1].set()
    await asyncio.wait_for(probe, 5)
    assert stream.written[-1] == b"probe"


async def test_concurrent_sends_are_written_one_at_a_time_in_order() -> None:
    stream = SlowStream()
    conn = Connection("bot", stream, Limits(write_timeout=5.0))
    sends = [asyncio.ensure_future(conn.send(f"m{i}".encode())) for i in range(5)]
    await asyncio.gather(_release_all(stream, 5), *sends)
    assert stream.written == [b"m0", b"m1", b"m2", b"m3", b"m4"]
    assert stream.max_active == 1
    await _stream_is_free(conn, stream)


async def test_a_cancelled_waiting_writer_is_skipped_and_the_rest_go_on() -> None:
    stream = SlowStream()
    conn = Connection("bot", stream, Limits(write_timeout=5.0))
    first = asyncio.ensure_future(conn.send(b"first"))
    await asyncio.wait_for(stream.gate_added.wait(), 5)  # the first write is with the stream
    second = asyncio.ensure_future(conn.send(b"second"))
    third = asyncio.ensure_future(conn.send(b"third"))
    await asyncio.sleep(0)  # one pass of the loop: both wait behind the first
    second.cancel()
    await _release_all(stream, 2)
    await asyncio.gather(first, third)
    with pytest.raises(asyncio.CancelledError):
        await second
    assert stream.written == [b"first", b"third"]
    await _stream_is_free(conn, stream)


async def test_writers_waiting_on_a_stream_that_stops_reading_are_disconnected() -> None:
    stream = SlowStream()  # never released: the bot stopped reading
    conn = Connection("bot", stream, Limits(write_timeout=0.2))
    sends = [asyncio.ensure_future(conn.send(b"x")) for _ in range(3)]
    done, _ = await asyncio.wait(sends, timeout=3.0)
    assert len(done) == 3
    for s in sends:
        assert isinstance(s.exception(), Disconnected)
    assert conn.closed.is_set() and conn.abort is not None
    assert "stopped reading" in conn.abort[1]
    assert stream.max_active == 1  # the waiting writers never reached the stream
    with pytest.raises(Disconnected):
        await conn.send(b"later")


async def test_a_message_is_written_as_its_encoding_and_bytes_as_they_are() -> None:
    """The Play method has no response serializer: the stream only ever gets bytes."""

    stream = SlowStream()
    conn = Connection("bot", stream, Limits(write_timeout=5.0))
    msg = pb.PlayResponse(error=pb.Error(code=pb.ERROR_CODE_PROTOCOL, message="x"))
    sends = [asyncio.ensure_future(conn.send(msg)),
             asyncio.ensure_future(conn.send(b"\x4a\x00"))]
    await asyncio.gather(_release_all(stream, 2), *sends)
    assert stream.written == [msg.SerializeToString(), b"\x4a\x00"]
