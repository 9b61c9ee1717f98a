"""Raw Play streams that keep every message each seat received (leak and practice-key tests)."""

from __future__ import annotations

import random
import time
from dataclasses import dataclass, field
from typing import Any

import grpc
from chinchon.engine import (
    Close,
)
from chinchon.v1 import referee_pb2 as pb
from chinchon.v1 import referee_pb2_grpc as pb_grpc
from chinchon.wire import action_from_wire

from tests.support.helpers import bot_token

RULES = {"score_limit": 25, "max_turns_per_hand": 24}


@dataclass
class Stream:
    """What one raw client received: (arrival time, message), in order."""

    bot: str
    got: list[tuple[float, pb.PlayResponse]] = field(default_factory=list)


async def client(target: str, bot: str, hello: pb.Hello, seed: int, into: list[Stream]) -> None:
    """A raw client: closes when it may, otherwise a seeded random legal action."""
    stream = Stream(bot)
    into.append(stream)
    rng = random.Random(seed)
    async with grpc.aio.insecure_channel(target) as channel:
        call = pb_grpc.RefereeServiceStub(channel).Play(
            metadata=(("authorization", f"Bearer {bot_token(bot)}"),))
        await call.write(pb.PlayRequest(hello=hello))
        while True:
            try:
                msg = await call.read()
            except grpc.aio.AioRpcError:
                return
            if msg is grpc.aio.EOF:
                return
            stream.got.append((time.monotonic(), msg))
            if msg.WhichOneof("kind") != "action_request":
                continue
            req = msg.action_request
            closes = [a for a in req.legal_actions if isinstance(action_from_wire(a), Close)]
            action = closes[0] if closes else rng.choice(list(req.legal_actions))
            await call.write(pb.PlayRequest(action=pb.ActionReply(
                request_id=req.request_id, action=action)))


def decks(record: dict[str, Any]) -> list[tuple[str, ...]]:
    """Every deck of a record: each hand's deal and each reshuffle, in order."""
    out = []
    for step in record["actions"]:
        if "deal" in step:
            out.append(tuple(step["deal"]["deck"]))
        elif "reshuffle" in step:
            out.append(tuple(next(iter(step["reshuffle"].values()))))
    return out
