"""The write gate (:class:`WriteGate`): the writes of one pass of the event loop go to
gRPC together, in order; a writer cancelled at the gate, or a stream ended while its
write waits there, leaves the others alone.

The units drive real Connections over the test doubles of ``tests.support.referee`` on the
test's real event loop. ``await asyncio.sleep(0)`` here is one pass of the loop, exactly
what the gate waits for: it lets the writers reach the gate without opening it.
"""

from __future__ import annotations

import asyncio

import pytest
from chinchon_referee.referee import Connection, Disconnected, WriteGate, WriteWatch

from tests.support.referee import LoggingContext, RecordingContext, connection


async def _games_write(names: str, events: list[str]) -> dict[str, asyncio.Task[float]]:
    """One task per name, as a game's: some work, then a write on its own stream. All are
    started in the same pass of the loop."""

    async def game(conn: Connection, name: str) -> float:
        events.append(f"work {name}")
        return await conn.send(name.encode())

    return {n: asyncio.ensure_future(game(connection(LoggingContext(n, events), 5.0), n))
            for n in names}


async def test_write_gate_sends_the_writes_of_a_pass_together_in_order() -> None:
    assert WriteGate.enabled
    events: list[str] = []
    tasks = await _games_write("abc", events)
    await asyncio.wait_for(asyncio.gather(*tasks.values()), 5)
    assert events == ["work a", "work b", "work c", "write a", "write b", "write c"]


async def test_write_gate_off_sends_each_write_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(WriteGate, "enabled", False)
    events: list[str] = []
    tasks = await _games_write("abc", events)
    await asyncio.wait_for(asyncio.gather(*tasks.values()), 5)
    assert events == ["work a", "write a", "work b", "write b", "work c", "write c"]


async def test_a_writer_cancelled_at_the_gate_leaves_the_others_and_its_stream_alone() -> None:
    loop = asyncio.get_running_loop()
    events: list[str] = []
    tasks = await _games_write("abc", events)
    await asyncio.sleep(0)  # one pass of the loop: each did its work and waits at the gate
    assert events == ["work a", "work b", "work c"]
    assert len(WriteGate.of(loop).waiting) == 3
    tasks["b"].cancel()
    done = await asyncio.wait_for(asyncio.gather(*tasks.values(), return_exceptions=True), 5)
    assert isinstance(done[1], asyncio.CancelledError)
    assert all(isinstance(t, float) for t in (done[0], done[2]))
    assert events == ["work a", "work b", "work c", "write a", "write c"]
    assert WriteGate.of(loop).waiting == []
    # b's stream is neither closed nor left marked as writing: it writes again.
    ctx = LoggingContext("b", events)
    conn = connection(ctx, 5.0)
    t = asyncio.ensure_future(conn.send(b"1"))
    await asyncio.sleep(0)  # one pass of the loop: the writer waits at the gate
    t.cancel()
    with pytest.raises(asyncio.CancelledError):
        await t
    assert not conn.closed.is_set() and conn.abort is None
    assert conn not in WriteWatch.of(loop).writing
    await asyncio.wait_for(conn.send(b"2"), 5)
    assert events[-1] == "write b"


async def test_a_stream_ended_while_its_write_waits_at_the_gate_writes_nothing() -> None:
    ctx = RecordingContext()
    conn = connection(ctx, 5.0)
    writer = asyncio.ensure_future(conn.send(b"too late"))
    await asyncio.sleep(0)  # one pass of the loop: the writer waits at the gate
    assert len(WriteGate.of(asyncio.get_running_loop()).waiting) == 1
    conn.end("shutting down")  # the stream ends (a shutdown, a flood) in the same pass
    with pytest.raises(Disconnected):
        await asyncio.wait_for(writer, 5)
    assert ctx.sent == []
