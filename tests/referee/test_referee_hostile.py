"""Hostile input on the Play stream: garbage bytes, oversize, unsolicited and flooding messages."""

from __future__ import annotations

import asyncio
import time

import grpc
import pytest
from chinchon.engine import (
    replay,
)
from chinchon.v1 import referee_pb2 as pb
from chinchon_referee.config import Limits, Policies, RefereeConfig

from tests.support.fixture_types import SpawnBot, StartServer
from tests.support.helpers import (
    bot_token,
    play,
    spec,
)
from tests.support.inproc import sdk
from tests.support.referee import (
    GARBAGE,
    connected,
    play_call,
    raw_play_call,
)

# -- hostile input ---------------------------------------------------------------------------


async def test_garbage_bytes_fail_only_that_stream(servers: StartServer, bots: SpawnBot) -> None:
    server = await servers(["alice", "bob", "carol"])
    await bots(sdk("greedy"), server, "bob")
    await bots(sdk("greedy"), server, "carol")
    channel, call = raw_play_call(server.target, bot_token("alice"))
    await call.write(GARBAGE)
    with pytest.raises(grpc.aio.AioRpcError) as err:
        await call.read()
    assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "PlayRequest" in (err.value.details() or "")
    await channel.close()
    await connected(server, "bob", "carol")
    out = await play(server.referee, spec("after-garbage", ["bob", "carol"]))
    assert out.termination in ("TERMINATION_NORMAL", "TERMINATION_CHINCHON")


async def test_garbage_bytes_mid_game_fail_that_stream_and_the_seat_is_a_disconnect(
    servers: StartServer, bots: SpawnBot,
) -> None:
    """A seated bot sends bytes that are not a PlayRequest while it is asked to act: its
    stream ends with INVALID_ARGUMENT, its seat is handled as a dropped stream (not back
    within the grace: it forfeits), and the other bots' streams and games go on."""

    names = ["alice", "bob", "carol", "dave"]
    server = await servers(names)
    for n in names[1:]:
        await bots(sdk("greedy"), server, n)
    channel, call = raw_play_call(server.target, bot_token("alice"))
    try:
        await call.write(pb.PlayRequest(hello=pb.Hello(client="garbage")).SerializeToString())
        assert pb.PlayResponse.FromString(await call.read()).WhichOneof("kind") == "welcome"
        await connected(server, *names)
        grace = 1.0
        game = asyncio.ensure_future(play(server.referee, spec(
            "garbage-mid", ["alice", "bob"], policies=Policies(reconnect_grace=grace))))
        bystander = asyncio.ensure_future(play(server.referee, spec(
            "bystander", ["carol", "dave"])))
        asked = 0
        while asked < 3:  # play a few moves first: the game is well under way
            msg = pb.PlayResponse.FromString(await call.read())
            if msg.WhichOneof("kind") != "action_request":
                continue
            asked += 1
            req = msg.action_request
            if asked < 3:
                await call.write(pb.PlayRequest(action=pb.ActionReply(
                    request_id=req.request_id, action=req.legal_actions[0]))
                    .SerializeToString())
        t0 = time.monotonic()
        await call.write(GARBAGE)  # instead of answering the third request
        with pytest.raises(grpc.aio.AioRpcError) as err:
            while True:  # (a referee that kept the stream would fail the wait_for)
                assert await asyncio.wait_for(call.read(), 30) is not grpc.aio.EOF
        assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT
        assert "PlayRequest" in (err.value.details() or "")
        out = await game
        waited = time.monotonic() - t0
        assert out.termination == "TERMINATION_FORFEIT_DISCONNECT"
        assert out.forfeited == 0 and out.winners == [1]
        assert "disconnected" in out.record["result"]["summary"]
        assert waited >= grace  # the seat was kept for the grace first
        replay(out.record)  # the moves before the garbage stand
        alice_moves = [x for x in out.record["actions"]
                       if "move" in x and x["move"].get("seat", 0) == 0]
        assert len(alice_moves) == 2
        assert out.stats[0].timeouts == 0 and out.stats[0].illegal == 0
        assert any(i["kind"] == "protocol" and i["bot"] == "alice"
                   and i["code"] == "INVALID_ARGUMENT" for i in server.referee.incidents)
        # The game next door did not notice.
        other = await bystander
        assert other.termination in ("TERMINATION_NORMAL", "TERMINATION_CHINCHON")
        assert replay(other.record).state.is_over
        # Bob's stream is back in the lobby and plays on.
        await connected(server, "bob", "carol")
        again = await play(server.referee, spec("bob-again", ["bob", "carol"]))
        assert again.termination in ("TERMINATION_NORMAL", "TERMINATION_CHINCHON")
    finally:
        await channel.close()


async def test_oversize_message_is_refused(servers: StartServer) -> None:
    server = await servers(["alice"], RefereeConfig(limits=Limits(max_message_bytes=4096)))
    call = await play_call(server.target, bot_token("alice"))
    await call.write(pb.PlayRequest(hello=pb.Hello(client="x" * 10_000)))
    with pytest.raises(grpc.aio.AioRpcError) as err:
        await call.read()
    assert err.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED


async def test_a_message_over_64_kib_ends_the_stream_though_the_admin_service_takes_more(
    servers: StartServer,
) -> None:
    """The server reads messages up to the organizer's limit (1 MiB: a declaration of
    200 bots); a Play message over the bots' 64 KiB still ends its stream, naming the
    limit."""
    server = await servers(["alice"])
    call = await play_call(server.target, bot_token("alice"))
    await call.write(pb.PlayRequest(hello=pb.Hello(client="x" * 70_000)))
    with pytest.raises(grpc.aio.AioRpcError) as err:
        await call.read()
    assert err.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
    assert "over the limit of 65,536 (max_message_bytes)" in (err.value.details() or "")


async def test_an_answer_to_a_stopped_game_is_told_the_game_stopped(servers: StartServer) -> None:
    """The referee stops a game (a lost lease, a cancel) while a request is outstanding:
    the bot's late answer is told its game was stopped (before: "request N is not
    outstanding ... (request N is outstanding)")."""
    server = await servers(["alice"])
    call = await play_call(server.target, bot_token("alice"))
    await call.write(pb.PlayRequest(hello=pb.Hello(client="late")))
    assert (await call.read()).WhichOneof("kind") == "welcome"
    await connected(server, "alice")
    game = asyncio.ensure_future(server.referee.play(spec("stopped", ["alice", "house:greedy"])))
    while (msg := await call.read()).WhichOneof("kind") != "action_request":
        pass
    req = msg.action_request
    assert server.referee.stop(["stopped"], "stopped by the test") == {"stopped"}
    assert (await asyncio.wait_for(game, 30)).termination.value == "TERMINATION_ABORTED"
    while (await call.read()).WhichOneof("kind") != "game_ended":
        pass
    await call.write(pb.PlayRequest(action=pb.ActionReply(
        request_id=req.request_id, action=req.legal_actions[0])))
    err = (await call.read()).error
    assert err.code == pb.ERROR_CODE_STALE_REQUEST
    assert err.message == (f"request {req.request_id} is not outstanding: its game stopped "
                           "was stopped before the answer came"), err.message


async def test_stale_unsolicited_and_protocol_errors_are_answered_in_band(servers: StartServer) -> None:
    server = await servers(["alice"])
    call = await play_call(server.target, bot_token("alice"))
    # An action before anything was asked.
    await call.write(pb.PlayRequest(hello=pb.Hello(client="test")))
    assert (await call.read()).WhichOneof("kind") == "welcome"
    await call.write(pb.PlayRequest(action=pb.ActionReply(request_id=999_999)))
    err = (await call.read()).error
    assert err.code == pb.ERROR_CODE_UNSOLICITED
    assert err.message.startswith("not your turn")
    await call.write(pb.PlayRequest(hello=pb.Hello(client="again")))
    err = (await call.read()).error
    assert err.code == pb.ERROR_CODE_PROTOCOL
    await call.write(pb.PlayRequest())
    assert (await call.read()).error.code == pb.ERROR_CODE_MALFORMED
    game = asyncio.ensure_future(
        server.referee.play(spec("stale", ["alice", "house:greedy"]))
    )
    answered = 0
    stale_checked = False
    backlog: list[pb.PlayResponse] = []

    async def next_msg() -> pb.PlayResponse:
        return backlog.pop(0) if backlog else await call.read()

    async def next_error() -> pb.Error:
        while True:
            m = await call.read()
            if m.WhichOneof("kind") == "error":
                return m.error
            backlog.append(m)  # the game goes on meanwhile

    while True:
        msg = await next_msg()
        kind = msg.WhichOneof("kind")
        if kind == "game_ended":
            break
        if kind != "action_request":
            continue
        req = msg.action_request
        if not stale_checked:
            # A wrong id while a request is outstanding: stale, nothing changes.
            await call.write(pb.PlayRequest(action=pb.ActionReply(
                request_id=req.request_id - 1, action=req.legal_actions[0])))
            err = await next_error()
            assert err.code == pb.ERROR_CODE_STALE_REQUEST
            assert f"request {req.request_id} is outstanding" in err.message
        await call.write(pb.PlayRequest(action=pb.ActionReply(
            request_id=req.request_id, action=req.legal_actions[0])))
        answered += 1
        if not stale_checked:
            # The same answer twice: the second is stale.
            await call.write(pb.PlayRequest(action=pb.ActionReply(
                request_id=req.request_id, action=req.legal_actions[0])))
            err = await next_error()
            assert err.code == pb.ERROR_CODE_STALE_REQUEST
            stale_checked = True
    out = await game
    assert out.termination in ("TERMINATION_NORMAL", "TERMINATION_CHINCHON")
    assert answered > 5 and out.stats[0].illegal == 0
    call.cancel()


async def test_flood_of_unsolicited_messages_closes_the_stream(servers: StartServer) -> None:
    server = await servers(["flooder"], RefereeConfig(limits=Limits(max_unsolicited=20)))
    call = await play_call(server.target, bot_token("flooder"))
    await call.write(pb.PlayRequest(hello=pb.Hello(client="flood")))
    assert (await call.read()).WhichOneof("kind") == "welcome"
    # One more than the limit: each is answered in-band until the limit is
    # passed, then the stream is closed with RESOURCE_EXHAUSTED.
    for i in range(21):
        await call.write(pb.PlayRequest(action=pb.ActionReply(request_id=10**9 + i)))
    answered = 0
    with pytest.raises(grpc.aio.AioRpcError) as err:
        while True:
            msg = await call.read()
            assert msg is not grpc.aio.EOF
            assert msg.error.code == pb.ERROR_CODE_UNSOLICITED
            answered += 1
    assert err.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
    assert "flood" in err.value.details()
    assert answered <= 20
    assert any(i["kind"] == "flood" for i in server.referee.incidents)
