"""Bot tokens are managed on purpose: a CreateTournament never re-keys a
registered bot; the admin service lists, adds, rotates and revokes tokens, and says who
is connected."""

from __future__ import annotations

import asyncio
from pathlib import Path

import grpc
import pytest
from chinchon.v1 import tournament_pb2 as tpb
from chinchon.v1 import tournament_pb2_grpc as tpb_grpc
from chinchon_referee.auth import digest

from tests.support.admin import ADMIN_MD, admin_env, hello
from tests.support.helpers import ADMIN, bot_token
from tests.support.serve import Serve, free_port


def _spec(name: str, parts: list[tpb.Participant]) -> tpb.CreateTournamentRequest:
    return tpb.CreateTournamentRequest(spec=tpb.TournamentSpec(name=name, participants=parts))


async def _welcomed(target: str, token: str) -> str:
    call = await hello(target, token)
    call.cancel()
    return "ok"


async def _refused(target: str, token: str) -> grpc.StatusCode:
    with pytest.raises(grpc.aio.AioRpcError) as err:
        call = await hello(target, token)
        call.cancel()
    return err.value.code()


async def test_a_registered_token_survives_create_tournament_and_a_restart(tmp_path: Path) -> None:
    """`serve --bot alice=@FILE`, then a CreateTournament naming alice without a token:
    alice keeps her token, after a kill -9 and a restart too (before: re-keyed, then
    UNAUTHENTICATED after the restart)."""
    (tmp_path / "alice.token").write_text(bot_token("alice"))
    port, db = free_port(), tmp_path / "league.sqlite3"
    first = Serve(tmp_path, port, db, 1, ["--bot", f"alice=@{tmp_path / 'alice.token'}"])
    try:
        with grpc.insecure_channel(f"127.0.0.1:{port}") as ch:
            made = tpb_grpc.TournamentServiceStub(ch).CreateTournament(
                _spec("league", [tpb.Participant(name="alice"), tpb.Participant(name="newbie")]),
                metadata=ADMIN_MD, timeout=30)
        tokens = {p.name: p.token for p in made.participants}
        assert tokens["alice"] == ""  # kept, so not shown
        assert len(tokens["newbie"]) >= 16  # generated, shown once
        assert await _welcomed(f"127.0.0.1:{port}", bot_token("alice")) == "ok"
        first.kill9()
        second = Serve(tmp_path, port, db, 2)  # no --bot: the registrations are stored
        try:
            target = f"127.0.0.1:{port}"
            assert await _welcomed(target, bot_token("alice")) == "ok"
            assert await _welcomed(target, tokens["newbie"]) == "ok"
        finally:
            second.stop()
    finally:
        first.stop()


async def test_a_different_token_for_a_registered_bot_is_refused(tmp_path: Path) -> None:
    db = tmp_path / "a.sqlite3"
    async with admin_env(db) as env:
        await env.stub.AddBot(tpb.AddBotRequest(name="alice", token=bot_token("alice")),
                              metadata=ADMIN_MD)
        with pytest.raises(grpc.aio.AioRpcError) as err:
            await env.stub.CreateTournament(_spec("cup", [
                tpb.Participant(name="alice", token="another-token-of-alice"),
                tpb.Participant(name="bob")]), metadata=ADMIN_MD)
        assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT
        assert "alice is registered with another token" in err.value.details()
        assert "rotate" in err.value.details()
        assert "another-token-of-alice" not in err.value.details()
        assert env.store.tournaments() == []  # nothing stored
        assert dict(env.store.bots()) == {"alice": digest(bot_token("alice"))}
        assert await _welcomed(env.server.target, bot_token("alice")) == "ok"
        # The same token as registered is accepted, and kept.
        made = await env.stub.CreateTournament(_spec("cup", [
            tpb.Participant(name="alice", token=bot_token("alice")),
            tpb.Participant(name="bob")]), metadata=ADMIN_MD)
        assert made.tournament.games_total == 2
        assert dict(env.store.bots())["alice"] == digest(bot_token("alice"))


async def test_add_list_rotate_revoke(tmp_path: Path) -> None:
    db = tmp_path / "bots.sqlite3"
    async with admin_env(db) as env:
        stub, target = env.stub, env.server.target
        added = await stub.AddBot(tpb.AddBotRequest(name="carol"), metadata=ADMIN_MD)
        token = added.token
        assert added.bot.name == "carol" and len(token) >= 16
        assert dict(env.store.bots()) == {"carol": digest(token)}  # a digest only
        listed = await stub.ListBots(tpb.ListBotsRequest(), metadata=ADMIN_MD)
        assert [b.name for b in listed.bots] == ["carol"]
        assert listed.bots[0].created.seconds > 0 and listed.bots[0].streams == 0

        # Connected: one stream waiting in the lobby.
        stream = await hello(target, token)
        connected = await stub.ListConnectedBots(tpb.ListConnectedBotsRequest(), metadata=ADMIN_MD)
        assert [(b.name, b.streams, b.seated, b.idle) for b in connected.bots] == [
            ("carol", 1, 0, 1)]
        assert (await stub.ListBots(tpb.ListBotsRequest(), metadata=ADMIN_MD)).bots[0].streams == 1

        # Rotate: the open stream ends at once, the old token fails, the new one works.
        rotated = await stub.RotateBotToken(tpb.RotateBotTokenRequest(name="carol"),
                                            metadata=ADMIN_MD)
        assert rotated.streams_ended == 1 and rotated.token != token
        with pytest.raises(grpc.aio.AioRpcError) as err:
            await stream.read()
        assert err.value.code() == grpc.StatusCode.UNAUTHENTICATED
        assert "rotated" in err.value.details()
        assert await _refused(target, token) == grpc.StatusCode.UNAUTHENTICATED
        stream = await hello(target, rotated.token)
        assert dict(env.store.bots()) == {"carol": digest(rotated.token)}

        # Revoke: the open stream ends, the token fails, the bot is gone.
        revoked = await stub.RevokeBot(tpb.RevokeBotRequest(name="carol"), metadata=ADMIN_MD)
        assert revoked.streams_ended == 1
        with pytest.raises(grpc.aio.AioRpcError) as err:
            await stream.read()
        assert err.value.code() == grpc.StatusCode.UNAUTHENTICATED
        assert await _refused(target, rotated.token) == grpc.StatusCode.UNAUTHENTICATED
        assert (await stub.ListBots(tpb.ListBotsRequest(), metadata=ADMIN_MD)).bots == []
        assert env.store.bots() == []

        # A chosen token; the refusals.
        await stub.AddBot(tpb.AddBotRequest(name="dave", token=bot_token("dave")),
                          metadata=ADMIN_MD)
        assert await _welcomed(target, bot_token("dave")) == "ok"
        refusals = [
            (tpb.AddBotRequest(name="dave"), grpc.StatusCode.ALREADY_EXISTS),
            (tpb.AddBotRequest(name="erin", token=ADMIN), grpc.StatusCode.INVALID_ARGUMENT),
            (tpb.AddBotRequest(name="erin", token="short"), grpc.StatusCode.INVALID_ARGUMENT),
            (tpb.AddBotRequest(name="erin", token=bot_token("dave")),
             grpc.StatusCode.INVALID_ARGUMENT),
            (tpb.AddBotRequest(name="bad name!"), grpc.StatusCode.INVALID_ARGUMENT),
        ]
        for req, code in refusals:
            with pytest.raises(grpc.aio.AioRpcError) as err:
                await stub.AddBot(req, metadata=ADMIN_MD)
            assert err.value.code() == code, req
            assert ADMIN not in err.value.details() and "tok-dave" not in err.value.details()
        for call in (stub.RotateBotToken(tpb.RotateBotTokenRequest(name="nobody"),
                                         metadata=ADMIN_MD),
                     stub.RevokeBot(tpb.RevokeBotRequest(name="nobody"), metadata=ADMIN_MD)):
            with pytest.raises(grpc.aio.AioRpcError) as err:
                await call
            assert err.value.code() == grpc.StatusCode.NOT_FOUND
        assert [n for n, _ in env.store.bots()] == ["dave"]
    # Tokens are never stored in the clear.
    raw = db.read_bytes()
    for t in (token, rotated.token, bot_token("dave")):
        assert t.encode() not in raw


async def test_bot_calls_need_the_admin_token(tmp_path: Path) -> None:
    async with admin_env(tmp_path / "x.sqlite3") as env:
        for md in ((), (("authorization", f"Bearer {bot_token('x')}"),)):
            for call in (env.stub.ListBots(tpb.ListBotsRequest(), metadata=md),
                         env.stub.AddBot(tpb.AddBotRequest(name="x"), metadata=md),
                         env.stub.ListConnectedBots(tpb.ListConnectedBotsRequest(), metadata=md)):
                with pytest.raises(grpc.aio.AioRpcError) as err:
                    await call
                assert err.value.code() == grpc.StatusCode.UNAUTHENTICATED
        assert env.store.bots() == []


async def test_a_rotated_token_ends_a_practice_stream_at_once(tmp_path: Path) -> None:
    """A practice stream whose token is rotated ends at once, UNAUTHENTICATED saying
    why (before: only after the reconnect grace, when its session gave up the seat)."""
    from chinchon.v1 import referee_pb2 as pb

    from tests.support.referee import play_call

    async with admin_env(tmp_path / "bots.sqlite3") as env:
        added = await env.stub.AddBot(tpb.AddBotRequest(name="carol"), metadata=ADMIN_MD)
        call = await play_call(env.server.target, added.token)
        await call.write(pb.PlayRequest(hello=pb.Hello(client="t", practice=pb.PracticeRequest(
            opponent="greedy", games=5))))
        while (await call.read()).WhichOneof("kind") != "action_request":
            pass  # welcome, game_started: the bot holds its turn from here on
        await env.stub.RotateBotToken(tpb.RotateBotTokenRequest(name="carol"),
                                      metadata=ADMIN_MD)
        with pytest.raises(grpc.aio.AioRpcError) as err:
            while True:  # nothing more is sent to it: the grace (10 s) would end it later
                assert await asyncio.wait_for(call.read(), 5.0) is not grpc.aio.EOF
        assert err.value.code() == grpc.StatusCode.UNAUTHENTICATED
        assert "rotated" in (err.value.details() or "")
