"""Shared helpers of the referee tests over real gRPC (no tests here)."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import grpc
from chinchon.v1 import referee_pb2 as pb
from chinchon.v1 import referee_pb2_grpc as pb_grpc
from chinchon_referee.config import Limits
from chinchon_referee.referee import Connection, GameSpec

from tests.helpers import (
    play,
    printed,
    raw_bot,
    spawn,
    start,
    stop,
)


def messages(lines: list[str]) -> list[dict]:
    return [json.loads(line) for line in lines if line.startswith("{")]


async def connected(server, *names: str, timeout: float = 20) -> None:
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
