"""What each stream counts for itself: the flood bound counts the messages not asked for
since the bot's last answer (not over the stream's life), and request ids are numbered
per stream from 1 (they reveal no other traffic).

Games run over a real server on port 0 with raw ``grpc.aio`` clients.
"""

from __future__ import annotations

import asyncio
from typing import Any

import grpc
from chinchon.v1 import referee_pb2 as pb
from chinchon_referee.config import Limits, RefereeConfig

from tests.support.fixture_types import StartServer
from tests.support.helpers import bot_token, spec
from tests.support.referee import play_call as _play_call


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
