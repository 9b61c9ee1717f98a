"""Shared helpers of the referee tests over real gRPC (no tests here)."""

from __future__ import annotations

import asyncio
import json
from collections import Counter
from typing import Any

import grpc
import pytest
from chinchon.v1 import referee_pb2 as pb
from chinchon.v1 import referee_pb2_grpc as pb_grpc
from chinchon_referee.config import Limits
from chinchon_referee.referee import Connection, GameSpec, Referee, Seat

from tests.support.helpers import (
    bot_token,
    play,
    printed,
    raw_bot,
    spawn,
    start,
    stop,
)


def messages(lines: list[str]) -> list[dict]:
    return [json.loads(line) for line in lines if line.startswith("{")]


async def connected(server, *names: str, timeout: float = 120) -> None:
    ok = await server.referee.lobby.wait_all(list(names), timeout)
    assert ok, f"bots {names} did not connect"


async def raw_bots_game(s: GameSpec, bots: list[list[str]]) -> tuple:
    """Play ``s`` on a fresh server between raw bot processes, ``bots[i]`` the arguments
    of seat i's (``raw_bot(*bots[i])``): the outcome, and the messages each seat read."""
    server = await start(s.players)
    procs = [await spawn(raw_bot(*args), server, n) for args, n in zip(bots, s.players, strict=True)]
    try:
        await connected(server, *s.players)
        out = await play(server.referee, s)
        await printed(procs, "gameEnded")
    finally:
        await stop(*procs)
        await server.stop(0)
    return out, [messages(p.out) for p in procs]



async def play_call(target: str, token: str | None) -> grpc.aio.StreamStreamCall:
    channel = grpc.aio.insecure_channel(target)
    md = (("authorization", f"Bearer {token}"),) if token is not None else ()
    return pb_grpc.RefereeServiceStub(channel).Play(metadata=md)


async def stream_on_now(target: str, token: str) -> bool:
    """Whether ``token`` opens a stream on ``target`` now (False: UNAUTHENTICATED)."""
    call = await play_call(target, token)
    try:
        await call.write(pb.PlayRequest(hello=pb.Hello(client="probe")))
        first = await call.read()
    except grpc.aio.AioRpcError:
        first = None  # refused: the write may fail before the status is read
    if first is None or first is grpc.aio.EOF or not first.HasField("welcome"):
        code = await call.code()
        assert code == grpc.StatusCode.UNAUTHENTICATED, (code, await call.details())
        return False
    # Closed the polite way, and waited for: the referee has let it go when this returns
    # (a probe repeated in a loop never piles up streams against the per-bot cap).
    await call.done_writing()
    while await call.read() is not grpc.aio.EOF:
        pass
    return True


GARBAGE = b"\xff\xfe\x00garbage\x13\x37" * 10  # not a PlayRequest: field 2031, wire type 7


def raw_play_call(target: str, token: str) -> tuple[grpc.aio.Channel, grpc.aio.StreamStreamCall]:
    """A Play stream that writes and reads bytes, so that it can send anything."""
    channel = grpc.aio.insecure_channel(target)
    raw = channel.stream_stream(
        "/chinchon.v1.RefereeService/Play",
        request_serializer=lambda b: b, response_deserializer=lambda b: b,
    )
    return channel, raw(metadata=(("authorization", f"Bearer {token}"),))


# -- stream contexts for driving a real Connection without gRPC ------------------------------


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
    """Writes complete at once and are kept in ``sent``."""

    def __init__(self) -> None:
        self.sent: list[Any] = []

    async def write(self, msg: Any) -> None:
        self.sent.append(msg)


class BrokenContext:
    """Every write fails (a reset stream)."""

    async def write(self, msg: Any) -> None:
        raise RuntimeError("stream reset")


class LoggingContext:
    """Writes complete at once and are logged in ``events`` with the stream's name."""

    def __init__(self, name: str, events: list[str]) -> None:
        self.name, self.events = name, events

    async def write(self, msg: Any) -> None:
        self.events.append(f"write {self.name}")


def connection(context: Any, write_timeout: float) -> Connection:
    """A real Connection over ``context`` that has said hello."""
    conn = Connection("bot", context, Limits(write_timeout=write_timeout))
    conn.hello.set_result(pb.Hello())  # the stream said hello (no unretrieved exception)
    return conn


class Bot:
    """One raw client stream of a bot in queue mode; ``drop()`` cuts it from the client
    side (the channel is closed, as when the process dies) and ``back()`` opens a new one
    with the same token."""

    def __init__(self, target: str, name: str) -> None:
        self.target = target
        self.name = name
        self.call: Any = None
        self.channel: Any = None
        self.gate = asyncio.Event()  # play_on answers only while it is set
        self.gate.set()

    async def back(self, practice: pb.PracticeRequest | None = None) -> None:
        self.channel = grpc.aio.insecure_channel(self.target)
        self.call = await _play_call_on(self.channel, bot_token(self.name))
        hello = (pb.Hello(client="reconnect-test", queue=pb.QueueMode()) if practice is None
                 else pb.Hello(client="reconnect-test", practice=practice))
        try:
            await self.call.write(pb.PlayRequest(hello=hello))
        except grpc.aio.AioRpcError:
            # A refusal can end the call before the write completes; the write then fails
            # with a transport error, and the read below raises the call's own status.
            pass
        welcome = await asyncio.wait_for(self.call.read(), 10)
        assert welcome.WhichOneof("kind") == "welcome"

    async def drop(self) -> None:
        self.call.cancel()
        await self.channel.close()

    async def next(self, kind: str) -> pb.PlayResponse:
        """The next message of ``kind`` (others are skipped)."""
        while True:
            msg = await asyncio.wait_for(self.call.read(), 30)
            assert msg is not grpc.aio.EOF, f"{self.name}: the stream ended"
            if msg.WhichOneof("kind") == kind:
                return msg

    async def answer(self, req: pb.ActionRequest) -> None:
        await self.call.write(pb.PlayRequest(action=pb.ActionReply(
            request_id=req.request_id, action=req.legal_actions[0])))

    async def play_on(self) -> pb.PlayResponse:
        """Answer every request (once the gate is open) until the game ends; the
        game_ended message."""
        while True:
            msg = await asyncio.wait_for(self.call.read(), 30)
            assert msg is not grpc.aio.EOF, f"{self.name}: the stream ended"
            kind = msg.WhichOneof("kind")
            if kind == "game_ended":
                return msg
            if kind == "action_request":
                await self.gate.wait()
                await self.answer(msg.action_request)

    async def until_first_discard(self, then_hold: Bot) -> None:
        """Answer requests until the first discard; close ``then_hold``'s gate just before
        answering it, so that the opponent's next request waits."""
        while True:
            req = (await self.next("action_request")).action_request
            if req.legal_actions[0].WhichOneof("kind") == "discard":
                then_hold.gate.clear()
                await self.answer(req)
                return
            await self.answer(req)


def referee_fails(monkeypatch: pytest.MonkeyPatch, game_id: str, times: int) -> list[str]:
    """Make the referee hit an internal error (a RuntimeError inside the game loop) at
    the 20th turn of ``game_id``, in its first ``times`` attempts, through the referees'
    fault-injection hook (``Referee.fault_hook``). Returns the log of the failures, one
    entry per failed attempt."""
    failed: list[str] = []
    turns: Counter[int] = Counter()  # remote turns per attempt

    def fault(spec: GameSpec, seat: Seat) -> None:
        if spec.game_id == game_id and len(failed) < times:
            turns[len(failed)] += 1
            if turns[len(failed)] == 20:
                failed.append(game_id)
                raise RuntimeError("injected fault")

    monkeypatch.setattr(Referee, "fault_hook", fault)
    return failed


async def _play_call_on(channel: Any, token: str) -> Any:
    from chinchon.v1 import referee_pb2_grpc as pb_grpc

    return pb_grpc.RefereeServiceStub(channel).Play(
        metadata=(("authorization", f"Bearer {token}"),))
