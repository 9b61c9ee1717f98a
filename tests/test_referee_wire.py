"""The wire after the hot-path change: confirmations in ``PlayResponse.accepted``, the
single deadline timer (:class:`Deadlines`) and the write watchdog (:class:`WriteWatch`).

Games run over a real server on port 0 with a raw ``grpc.aio`` client; the deadline and
write-watch units run on a real event loop (``asyncio.run``) with short times and
generous bounds.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field
from typing import Any

import grpc
import pytest
from chinchon.engine import cards_of, deck_cards
from chinchon.v1 import game_pb2 as g
from chinchon.v1 import referee_pb2 as pb
from chinchon.v1 import referee_pb2_grpc as pb_grpc
from chinchon.wire import seconds_of
from chinchon_referee.config import Limits, Policies, RefereeConfig, TimeControl
from chinchon_referee.referee import Connection, Deadlines, Disconnected, WriteGate, WriteWatch

from tests.fixture_types import StartServer
from tests.helpers import bot_token, spec, start
from tests.referee_support import play_call as _play_call

# -- confirmations over a real server -------------------------------------------------------


@dataclass
class Transcript:
    """What a raw client saw and did, in order: ("recv", PlayResponse) and
    ("sent", request_id, Action) entries."""

    events: list[tuple[Any, ...]] = field(default_factory=list)

    @property
    def received(self) -> list[pb.PlayResponse]:
        return [e[1] for e in self.events if e[0] == "recv"]

    @property
    def sent(self) -> list[tuple[int, g.Action]]:
        return [(e[1], e[2]) for e in self.events if e[0] == "sent"]


def _card_not_in(hand: Any) -> str:
    held = set(hand)
    for c in cards_of(sum(1 << c for c in deck_cards(40, 0))):
        if str(c) not in held:
            return str(c)
    raise AssertionError("a hand cannot hold the whole deck")


async def _play_raw(players: list[str], me: str, illegal_once: bool = False):
    """Seat a raw client (queue mode) named ``me`` in a game against a house bot; it
    answers every request with legal_actions[0], except (``illegal_once``) the first
    discard request, answered first with a card it does not hold."""
    server = await start([me])
    try:
        call = await _play_call(server.target, bot_token(me))
        await call.write(pb.PlayRequest(hello=pb.Hello(client="wire-test", queue=pb.QueueMode())))
        welcome = await call.read()
        assert welcome.WhichOneof("kind") == "welcome"
        game = asyncio.ensure_future(server.referee.play(spec(f"wire-{me}", players)))
        tr = Transcript([("recv", welcome)])
        cheated = not illegal_once
        while True:
            msg = await asyncio.wait_for(call.read(), 30)
            assert msg is not grpc.aio.EOF, "the stream ended before game_ended"
            tr.events.append(("recv", msg))
            kind = msg.WhichOneof("kind")
            if kind == "game_ended":
                break
            if kind != "action_request":
                continue
            req = msg.action_request
            if not cheated and req.observation.phase == g.PHASE_DISCARD:
                action = g.Action(discard=g.Discard(card=_card_not_in(req.observation.hand)))
                cheated = True
            else:
                action = req.legal_actions[0]
            await call.write(pb.PlayRequest(action=pb.ActionReply(
                request_id=req.request_id, action=action)))
            tr.events.append(("sent", req.request_id, action))
        out = await asyncio.wait_for(game, 30)
        call.cancel()
        return out, tr
    finally:
        await server.stop(0)


def _check_confirmations(
    tr: Transcript, rejected: frozenset[int] = frozenset()
) -> list[pb.ActionAccepted]:
    """Every legal answer is confirmed by the very next message, exactly once; nothing
    else carries ``accepted``. Returns the confirmations in order."""
    confirmations: list[pb.ActionAccepted] = []
    awaiting: tuple[int, g.Action] | None = None
    for ev in tr.events:
        if ev[0] == "sent":
            assert awaiting is None, "two answers without a message in between"
            awaiting = (ev[1], ev[2])
            continue
        msg = ev[1]
        if awaiting is not None and awaiting[0] not in rejected:
            rid, action = awaiting
            assert msg.HasField("accepted"), (
                f"answer to request {rid} not confirmed by the next message "
                f"({msg.WhichOneof('kind')})")
            acc = msg.accepted
            assert acc.request_id == rid
            assert acc.action == action
            assert 0.0 <= seconds_of(acc.time_taken) < 5.0
            assert acc.time_taken.seconds >= 0 and acc.time_taken.nanos >= 0
            confirmations.append(acc)
        else:
            assert not msg.HasField("accepted"), (
                f"unexpected confirmation on {msg.WhichOneof('kind')}: {msg.accepted}")
        awaiting = None
    ids = [c.request_id for c in confirmations]
    assert len(ids) == len(set(ids)), "an answer was confirmed twice"
    assert set(ids) == {rid for rid, _ in tr.sent} - set(rejected)
    return confirmations


def test_action_accepted_is_gone_from_the_oneof() -> None:
    kinds = {f.name for f in pb.PlayResponse.DESCRIPTOR.oneofs_by_name["kind"].fields}
    assert "action_accepted" not in kinds
    accepted = pb.PlayResponse.DESCRIPTOR.fields_by_name["accepted"]
    assert accepted.containing_oneof is None
    assert accepted.message_type.full_name == "chinchon.v1.ActionAccepted"


@pytest.mark.parametrize("seat", [0, 1])
async def test_every_answer_is_confirmed_once_on_the_next_message(seat: int) -> None:
    players = ["alice", "house:greedy"] if seat == 0 else ["house:greedy", "alice"]
    out, tr = await _play_raw(players, "alice")
    assert out.termination in ("TERMINATION_NORMAL", "TERMINATION_CHINCHON")
    kinds = [m.WhichOneof("kind") for m in tr.received]
    assert "action_accepted" not in kinds
    assert None not in kinds
    assert kinds[0] == "welcome" and kinds[1] == "game_started" and kinds[-1] == "game_ended"
    assert len(tr.sent) > 5
    confirmations = _check_confirmations(tr)
    # The final answer is confirmed on the hand's (and game's) end, as no request follows.
    last_sent = max(i for i, e in enumerate(tr.events) if e[0] == "sent")
    after = tr.events[last_sent + 1][1]
    assert after.WhichOneof("kind") in ("hand_ended", "game_ended")
    assert after.accepted.request_id == tr.sent[-1][0]
    # Confirmations match the record and the stats.
    moves = [a["move"] for a in out.record["actions"] if "move" in a and a["move"]["seat"] == seat]
    assert len(moves) == len(confirmations) == out.stats[seat].decisions
    assert all(m["origin"] == "ACTION_ORIGIN_PLAYER" for m in moves)
    assert out.stats[seat].illegal == 0 and out.stats[seat].timeouts == 0


async def test_rejected_answer_is_not_confirmed_and_the_retry_is() -> None:
    out, tr = await _play_raw(["alice", "house:greedy"], "alice", illegal_once=True)
    assert out.termination in ("TERMINATION_NORMAL", "TERMINATION_CHINCHON")
    rejections = [m for m in tr.received if m.WhichOneof("kind") == "action_rejected"]
    assert len(rejections) == 1
    rej = rejections[0]
    bad_rid = rej.action_rejected.request_id
    # The illegal answer is the one refused, at once (the next message), unconfirmed.
    i = next(k for k, e in enumerate(tr.events) if e[0] == "sent" and e[1] == bad_rid)
    assert tr.events[i][2].WhichOneof("kind") == "discard"
    assert tr.events[i + 1] == ("recv", rej)
    assert not rej.HasField("accepted")
    err = rej.action_rejected.error
    assert err.code == pb.ERROR_CODE_ILLEGAL_ACTION and err.violation == "CARD_NOT_IN_HAND"
    assert err.request_id == bad_rid
    assert rej.action_rejected.retries_left == 2
    # The retry: a new request (attempt 1, nothing to confirm), answered legally and
    # confirmed on the next message.
    retry = tr.events[i + 2][1]
    assert retry.WhichOneof("kind") == "action_request"
    assert retry.action_request.attempt == 1 and retry.action_request.request_id != bad_rid
    assert not retry.HasField("accepted")
    assert tr.events[i + 3] == ("sent", retry.action_request.request_id,
                                retry.action_request.legal_actions[0])
    assert tr.events[i + 4][1].accepted.request_id == retry.action_request.request_id
    confirmations = _check_confirmations(tr, rejected=frozenset({bad_rid}))
    assert bad_rid not in {c.request_id for c in confirmations}
    assert len(confirmations) == len(tr.sent) - 1
    moves = [a["move"] for a in out.record["actions"] if "move" in a and a["move"]["seat"] == 0]
    assert len(moves) == len(confirmations)
    assert out.stats[0].illegal == 1 and out.stats[0].strikes == 0


# -- Deadlines --------------------------------------------------------------------------------


async def test_deadlines_expire_futures_in_deadline_order_at_about_their_time() -> None:
    loop = asyncio.get_running_loop()
    d = Deadlines.of(loop)
    assert Deadlines.of(loop) is d
    t0 = loop.time()
    offsets = [0.25, 0.05, 0.15, 0.1, 0.1]  # two equal deadlines: the seq breaks ties
    fired: list[tuple[float, float]] = []
    futs = []
    for off in offsets:
        f = loop.create_future()
        f.add_done_callback(lambda _f, off=off: fired.append((off, loop.time() - t0)))
        d.add(t0 + off, f)
        futs.append(f)
    _done, pending = await asyncio.wait(futs, timeout=5)
    assert not pending
    for f in futs:
        assert isinstance(f.exception(), TimeoutError)
    assert [off for off, _ in fired] == sorted(offsets)
    for off, at in fired:
        assert off - 0.005 <= at < off + 1.5, (off, at)
    assert d.heap == [] and d.timer is None and d.armed == float("inf")


async def test_deadlines_never_fail_a_future_completed_in_time() -> None:
    loop = asyncio.get_running_loop()
    d = Deadlines.of(loop)
    t0 = loop.time()
    answered = loop.create_future()
    answered_late_but_in_time = loop.create_future()
    cancelled = loop.create_future()
    unanswered = loop.create_future()
    d.add(t0 + 0.05, answered)
    d.add(t0 + 0.15, answered_late_but_in_time)
    d.add(t0 + 0.1, cancelled)
    d.add(t0 + 0.2, unanswered)
    answered.set_result("a")
    loop.call_later(0.03, answered_late_but_in_time.set_result, "b")
    cancelled.cancel()
    with pytest.raises(TimeoutError):
        await asyncio.wait_for(unanswered, 5)
    await asyncio.sleep(0.05)  # past every deadline
    assert answered.result() == "a"
    assert answered_late_but_in_time.result() == "b"
    assert cancelled.cancelled()
    assert d.heap == []


async def test_deadlines_rearm_for_an_earlier_deadline_added_later() -> None:
    loop = asyncio.get_running_loop()
    d = Deadlines.of(loop)
    t0 = loop.time()
    far = loop.create_future()
    d.add(t0 + 30, far)
    assert d.armed == t0 + 30
    near = loop.create_future()
    d.add(t0 + 0.05, near)
    assert d.armed == t0 + 0.05
    with pytest.raises(TimeoutError):
        await asyncio.wait_for(near, 5)
    assert loop.time() - t0 < 5  # the far deadline's timer was not the one used
    assert not far.done()
    assert d.armed == t0 + 30 and len(d.heap) == 1  # re-armed for what is left
    # A later deadline than the armed one does not move the timer.
    later = loop.create_future()
    d.add(t0 + 60, later)
    assert d.armed == t0 + 30
    far.set_result(None)
    later.set_result(None)
    assert d.timer is not None
    d.timer.cancel()


async def test_deadlines_compaction_keeps_the_heap_small() -> None:
    loop = asyncio.get_running_loop()
    d = Deadlines.of(loop)
    t0 = loop.time()
    biggest = 0
    live = []
    answered = []
    for i in range(5000):
        f = loop.create_future()
        if i % 500 == 0:
            d.add(t0 + 0.2, f)  # a few stay outstanding: compaction must keep them
            live.append(f)
        else:
            d.add(t0 + 60 + i * 1e-3, f)
            f.set_result(i)  # answered at once, as almost every request is
            answered.append(f)
        biggest = max(biggest, len(d.heap))
    assert biggest <= 1024
    assert len(d.heap) < 1024
    assert sum(1 for _, _, f in d.heap if not f.done()) == len(live) == 10
    # The outstanding ones still expire; the answered ones keep their results.
    _done, pending = await asyncio.wait(live, timeout=5)
    assert not pending and all(isinstance(f.exception(), TimeoutError) for f in live)
    assert all(not f.cancelled() and f.exception() is None for f in answered)
    if d.timer is not None:
        d.timer.cancel()


# -- WriteWatch -------------------------------------------------------------------------------


class HangingContext:
    """A stream whose writes never complete (a bot that stopped reading). ``called`` is
    set once a write has reached it (past the WriteGate)."""

    def __init__(self) -> None:
        self.calls = 0
        self.called = asyncio.Event()

    async def write(self, msg: Any) -> None:
        self.calls += 1
        self.called.set()
        await asyncio.Event().wait()


class RecordingContext:
    def __init__(self) -> None:
        self.sent: list[Any] = []

    async def write(self, msg: Any) -> None:
        self.sent.append(msg)


class BrokenContext:
    async def write(self, msg: Any) -> None:
        raise RuntimeError("stream reset")


def _conn(context: Any, write_timeout: float) -> Connection:
    conn = Connection("bot", context, Limits(write_timeout=write_timeout))
    conn.hello.set_result(pb.Hello())  # the stream said hello (no unretrieved exception)
    return conn


async def test_a_write_that_never_completes_disconnects_with_deadline_exceeded() -> None:
    loop = asyncio.get_running_loop()
    ctx = HangingContext()
    conn = _conn(ctx, 0.2)
    other_ctx = RecordingContext()
    other = _conn(other_ctx, 0.2)
    t0 = time.monotonic()
    stuck = asyncio.ensure_future(conn.send(b"request"))
    await asyncio.sleep(0)
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
    conn = _conn(HangingContext(), 0.2)
    with pytest.raises(Disconnected):
        await asyncio.wait_for(conn.ask(b"req", 1, 30.0), 5)
    assert conn.abort is not None and conn.abort[0] == grpc.StatusCode.DEADLINE_EXCEEDED


async def test_writers_queued_behind_a_stuck_write_fail_fast_without_writing() -> None:
    ctx = HangingContext()
    conn = _conn(ctx, 0.2)
    t0 = time.monotonic()
    sends = [asyncio.ensure_future(conn.send(b"%d" % i)) for i in range(3)]
    results = await asyncio.wait_for(asyncio.gather(*sends, return_exceptions=True), 5)
    assert all(isinstance(r, Disconnected) for r in results), results
    assert time.monotonic() - t0 < 1.5  # one write timeout, not one per queued write
    assert ctx.calls == 1


async def test_a_completed_write_is_not_watched_any_more() -> None:
    loop = asyncio.get_running_loop()
    ctx = RecordingContext()
    conn = _conn(ctx, 0.2)
    watch = WriteWatch.of(loop)
    t = await conn.send(b"hello")
    assert isinstance(t, float) and t <= time.monotonic()
    assert ctx.sent == [b"hello"]
    assert conn not in watch.writing
    # Well past the write timeout nothing is cancelled, and the sweeper stops.
    await asyncio.sleep(0.4)
    assert not conn.closed.is_set() and conn.abort is None and not conn.write_expired
    for _ in range(100):
        if watch.sweeper is None:
            break
        await asyncio.sleep(0.02)
    assert watch.sweeper is None
    await conn.send(b"again")  # and a later write works
    assert ctx.sent == [b"hello", b"again"]


async def test_a_failing_write_disconnects() -> None:
    conn = _conn(BrokenContext(), 5.0)
    with pytest.raises(Disconnected):
        await conn.send(b"x")
    assert conn.closed.is_set() and conn.abort is None
    assert conn not in WriteWatch.of(asyncio.get_running_loop()).writing


async def test_cancelling_a_writer_from_outside_raises_cancelled_error() -> None:
    loop = asyncio.get_running_loop()
    ctx = HangingContext()
    conn = _conn(ctx, 5.0)
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

    class Gated(RecordingContext):
        async def write(self, msg: Any) -> None:
            await gate.wait()
            await super().write(msg)

    gated = Gated()
    conn2 = _conn(gated, 5.0)
    first = asyncio.ensure_future(conn2.send(b"1"))
    queued = asyncio.ensure_future(conn2.send(b"2"))
    third = asyncio.ensure_future(conn2.send(b"3"))
    await asyncio.sleep(0.01)
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
    conn = _conn(ctx, 0.2)
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
    stuck = _conn(hanging, 0.2)
    hung = asyncio.ensure_future(stuck.send(b"x"))
    await asyncio.wait_for(hanging.called.wait(), 5)  # with gRPC, past the gate
    assert hanging.calls == 1
    _past_deadline(watch, stuck, loop)
    watch.expire(loop)
    with pytest.raises(Disconnected):
        await asyncio.wait_for(hung, 5)
    assert stuck.abort is not None and stuck.abort[0] == grpc.StatusCode.DEADLINE_EXCEEDED


# -- WriteGate --------------------------------------------------------------------------------


class LoggingContext:
    """Writes complete at once and are logged in ``events`` with the stream's name."""

    def __init__(self, name: str, events: list[str]) -> None:
        self.name, self.events = name, events

    async def write(self, msg: Any) -> None:
        self.events.append(f"write {self.name}")


async def _games_write(names: str, events: list[str]) -> dict[str, asyncio.Task[float]]:
    """One task per name, as a game's: some work, then a write on its own stream. All are
    started in the same pass of the loop."""

    async def game(conn: Connection, name: str) -> float:
        events.append(f"work {name}")
        return await conn.send(name.encode())

    return {n: asyncio.ensure_future(game(_conn(LoggingContext(n, events), 5.0), n))
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
    await asyncio.sleep(0)  # each did its work and waits at the gate
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
    conn = _conn(ctx, 5.0)
    t = asyncio.ensure_future(conn.send(b"1"))
    await asyncio.sleep(0)
    t.cancel()
    with pytest.raises(asyncio.CancelledError):
        await t
    assert not conn.closed.is_set() and conn.abort is None
    assert conn not in WriteWatch.of(loop).writing
    await asyncio.wait_for(conn.send(b"2"), 5)
    assert events[-1] == "write b"


async def test_a_stream_ended_while_its_write_waits_at_the_gate_writes_nothing() -> None:
    ctx = RecordingContext()
    conn = _conn(ctx, 5.0)
    writer = asyncio.ensure_future(conn.send(b"too late"))
    await asyncio.sleep(0)  # the writer waits at the gate
    assert len(WriteGate.of(asyncio.get_running_loop()).waiting) == 1
    conn._close()  # the stream ends (a shutdown, a flood) in the same pass
    with pytest.raises(Disconnected):
        await asyncio.wait_for(writer, 5)
    assert ctx.sent == []


# -- a bot that stops reading, over real gRPC ----------------------------------------------------


async def test_a_bot_that_stops_reading_is_dropped_and_forfeits() -> None:
    """The client reads its Welcome, is seated, then never reads again while it sends
    stale answers (each answered in-band): with a tiny HTTP/2 receive window the
    referee's writes stall, the write timeout drops the stream with DEADLINE_EXCEEDED,
    and the seat forfeits by disconnect (not by timeout: the clock is far longer)."""

    config = RefereeConfig(limits=Limits(write_timeout=0.5, max_unsolicited=100_000))
    server = await start(["deaf"], config)
    channel = grpc.aio.insecure_channel(server.target, options=[
        ("grpc.http2.lookahead_bytes", 1024),  # a tiny receive window
        ("grpc.http2.bdp_probe", 0),  # that never grows
    ])
    try:
        call = pb_grpc.RefereeServiceStub(channel).Play(
            metadata=(("authorization", f"Bearer {bot_token('deaf')}"),))
        await call.write(pb.PlayRequest(hello=pb.Hello(client="deaf")))
        assert (await call.read()).WhichOneof("kind") == "welcome"
        assert await server.referee.lobby.wait_all(["deaf"], 10)
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
    finally:
        await channel.close()
        await server.stop(0)


# -- the flood bound counts from the last answer ------------------------------------------------


async def test_the_flood_bound_counts_from_the_last_answer(servers: StartServer) -> None:
    """A bot that sends a few stale answers now and then (a late answer after each
    timeout, say) is never cut off however many it sends over the stream's life: the
    bound is on messages not asked for since its last answer to a request."""

    config = RefereeConfig(limits=Limits(max_unsolicited=5))
    server = await servers(["late"], config)
    call = await _play_call(server.target, bot_token("late"))
    await call.write(pb.PlayRequest(hello=pb.Hello(client="late", queue=pb.QueueMode())))
    assert (await call.read()).WhichOneof("kind") == "welcome"
    game = asyncio.ensure_future(server.referee.play(
        spec("late", ["late", "house:greedy"])))
    stale_sent = errors = 0
    while True:
        msg = await asyncio.wait_for(call.read(), 30)
        assert msg is not grpc.aio.EOF, "the stream ended before game_ended"
        kind = msg.WhichOneof("kind")
        if kind == "error":
            assert msg.error.code == pb.ERROR_CODE_STALE_REQUEST
            errors += 1
        if kind == "game_ended":
            break
        if kind != "action_request":
            continue
        req = msg.action_request
        if stale_sent < 20:
            for _ in range(5):  # the most allowed between two answers
                await call.write(pb.PlayRequest(action=pb.ActionReply(
                    request_id=req.request_id - 1, action=req.legal_actions[0])))
                stale_sent += 1
        await call.write(pb.PlayRequest(action=pb.ActionReply(
            request_id=req.request_id, action=req.legal_actions[0])))
    out = await asyncio.wait_for(game, 30)
    assert stale_sent == 20 and errors == 20  # four times the bound, all answered
    assert out.termination in ("TERMINATION_NORMAL", "TERMINATION_CHINCHON")
    assert not any(i["kind"] == "flood" for i in server.referee.incidents)


# -- request ids are numbered per stream ------------------------------------------------------


async def _answer_all(call: Any) -> list[int]:
    """Answer every request of one game on a queue stream with legal_actions[0]; return
    the request ids seen, in order."""
    ids: list[int] = []
    while True:
        msg = await asyncio.wait_for(call.read(), 60)
        assert msg is not grpc.aio.EOF, "the stream ended before game_ended"
        kind = msg.WhichOneof("kind")
        if kind == "game_ended":
            return ids
        if kind == "action_request":
            req = msg.action_request
            ids.append(req.request_id)
            await call.write(pb.PlayRequest(action=pb.ActionReply(
                request_id=req.request_id, action=req.legal_actions[0])))


async def test_request_ids_are_numbered_per_stream_and_reveal_no_other_traffic(servers: StartServer) -> None:
    """Two bots playing each other see request ids 1, 2, 3... on their own streams, not
    the interleaved ids of a server-wide counter; a stream opened after a whole game was
    played elsewhere starts at 1 too (it cannot tell how busy the server was)."""

    server = await servers(["a", "b", "c"])
    calls = {}
    for name in ("a", "b", "c"):
        call = await _play_call(server.target, bot_token(name))
        await call.write(pb.PlayRequest(hello=pb.Hello(client=name,
                                                       queue=pb.QueueMode())))
        assert (await call.read()).WhichOneof("kind") == "welcome"
        calls[name] = call
    game = asyncio.ensure_future(server.referee.play(spec("ids-ab", ["a", "b"])))
    ids_a, ids_b = await asyncio.gather(_answer_all(calls["a"]), _answer_all(calls["b"]))
    await asyncio.wait_for(game, 60)
    assert ids_a and ids_b
    assert ids_a == list(range(1, len(ids_a) + 1))
    assert ids_b == list(range(1, len(ids_b) + 1))
    game = asyncio.ensure_future(server.referee.play(
        spec("ids-c", ["c", "house:greedy"])))
    ids_c = await _answer_all(calls["c"])
    await asyncio.wait_for(game, 60)
    assert ids_c[0] == 1 and ids_c == list(range(1, len(ids_c) + 1))
    for call in calls.values():
        call.cancel()
