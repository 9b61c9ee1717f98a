"""The referee over real gRPC: a server on port 0, real bot processes, hostile clients."""

from __future__ import annotations

import asyncio
import collections
import json
import re
import time

import grpc
import pytest
from chinchon.engine import (
    GameEnd,
    GameState,
    GreedyBot,
    Phase,
    RuleSet,
    cards_of,
    new_game,
    observation,
    play_game,
    replay,
)
from chinchon.engine.record import _replay_step
from chinchon.v1 import referee_pb2 as pb
from chinchon.v1 import referee_pb2_grpc as pb_grpc
from chinchon.wire import observation_to_wire
from chinchon_referee.config import Limits, Policies, RefereeConfig, TimeControl
from chinchon_referee.referee import GameOutcome, GameSpec
from chinchon_referee.server import RunningServer
from google.protobuf import json_format
from hypothesis import Phase as HPhase
from hypothesis import example, given, settings
from hypothesis import strategies as st

from tests.helpers import (
    BotProc,
    node_bot,
    play,
    printed,
    raw_bot,
    sdk_bot,
    spawn,
    spec,
    start,
    stop,
)


def run(coro):
    return asyncio.run(coro)


def _messages(lines: list[str]) -> list[dict]:
    return [json.loads(line) for line in lines if line.startswith("{")]


async def _connected(server, *names: str, timeout: float = 20) -> None:
    ok = await server.referee.lobby.wait_all(list(names), timeout)
    assert ok, f"bots {names} did not connect"


async def _raw_bots_game(s: GameSpec, bots: list[list[str]]) -> tuple:
    """Play ``s`` on a fresh server between raw bot processes, ``bots[i]`` the arguments
    of seat i's (``raw_bot(*bots[i])``): the outcome, and the messages each seat read."""
    server = await start(s.players)
    procs = [await spawn(raw_bot(*args), server, n) for args, n in zip(bots, s.players, strict=True)]
    try:
        await _connected(server, *s.players)
        out = await play(server.referee, s)
        await printed(procs, "gameEnded")
    finally:
        await stop(*procs)
        await server.stop(0)
    return out, [_messages(p.out) for p in procs]


# -- full games ---------------------------------------------------------------------------


def test_sdk_bots_play_a_full_game_and_the_record_replays() -> None:
    async def main() -> None:
        server = await start(["alice", "bob"])
        a = await spawn(sdk_bot("greedy"), server, "alice")
        b = await spawn(sdk_bot("random"), server, "bob")
        try:
            await _connected(server, "alice", "bob")
            out = await play(server.referee, spec("g1", ["alice", "bob"]))
            assert out.termination in ("TERMINATION_NORMAL", "TERMINATION_CHINCHON")
            assert out.record["result"]["winners"]
            rep = replay(out.record)
            assert rep.state.is_over
            assert [w for w in rep.state.result.winners] == out.winners
            assert all(s.decisions > 0 for s in out.stats)
            assert all(s.timeouts == 0 and s.illegal == 0 for s in out.stats)
            moves = [x["move"] for x in out.record["actions"] if "move" in x]
            assert all(m["origin"] == "ACTION_ORIGIN_PLAYER" for m in moves)
            assert all(m["thinkTime"].endswith("s") for m in moves)
        finally:
            await stop(a, b)
            await server.stop(0)

    run(main())


def test_python_and_node_bots_play_full_games() -> None:
    async def main() -> None:
        # (The commands first: without the Node dependencies this fails before a server
        # is left running.)
        js_cmd, js2_cmd = node_bot(), node_bot("--strategy", "random")
        server = await start(["py", "js", "js2"])
        py = await spawn(sdk_bot("greedy"), server, "py")
        js = await spawn(js_cmd, server, "js")
        js2 = await spawn(js2_cmd, server, "js2")
        try:
            await _connected(server, "py", "js", "js2")
            outs = await asyncio.gather(
                play(server.referee, spec("pj-1", ["py", "js"], seed="a")),
                play(server.referee, spec("pj-2", ["js2", "py"], seed="b")),
            )
            out3 = await play(server.referee, spec("pj-3", ["js", "js2", "py"], seed="c"))
            for out in [*outs, out3]:
                assert out.termination in ("TERMINATION_NORMAL", "TERMINATION_CHINCHON")
                assert all(st_.illegal == 0 and st_.timeouts == 0 for st_ in out.stats)
                assert replay(out.record).state.is_over
        finally:
            await stop(py, js, js2)
            await server.stop(0)
        assert not any("Error" in line for line in js.err), js.err[-5:]

    run(main())


#: A deal where two GreedyBots end the first hand with a chinchón. Found once by an
#: engine-only search (``play_game(RuleSet(players=2), [GreedyBot(), GreedyBot()],
#: seed=f"c{i}", deal_id="chinchon")`` over i = 0..199: c2, c62, c74, ... qualify; c74
#: does it in the first hand, 35 actions in). The test replays the search's game first,
#: so a change to the bot or the shuffle says so rather than failing obscurely.
CHINCHON_SEED = "c74"


def _steps(actions: list[dict]) -> list[object]:
    """A record's deals and reshuffles, and each move's seat and action."""
    return [x if "move" not in x else (x["move"]["seat"], x["move"]["action"]) for x in actions]


def test_a_chinchon_ends_the_game_on_the_wire_and_in_the_record() -> None:
    engine_state, engine_record = play_game(
        RuleSet(players=2), [GreedyBot(), GreedyBot()], seed=CHINCHON_SEED, deal_id="chinchon")
    assert engine_state.result is not None and engine_state.result.end is GameEnd.CHINCHON, (
        f"seed {CHINCHON_SEED} no longer gives a chinchón: search again")

    out, per_seat = run(_raw_bots_game(
        spec("chinchon", ["p0", "p1"], seed=CHINCHON_SEED), [["greedy"], ["greedy"]]))
    closer = engine_state.results[-1].closer
    # The same game as the engine's, deal for deal and move for move.
    assert _steps(out.record["actions"]) == _steps(engine_record["actions"])  # type: ignore[arg-type]
    assert out.termination == "TERMINATION_CHINCHON"
    assert out.winners == [closer] and out.forfeited is None
    result = out.record["result"]
    assert result["termination"] == "TERMINATION_CHINCHON"
    assert result["end"] == "GAME_END_KIND_CHINCHON" and result["winners"] == [closer]
    last = out.record["hands"][-1]
    assert last["end"] == "HAND_END_KIND_CHINCHON" and last["bonus"] == "BONUS_CHINCHON"
    assert last["closer"] == closer and last["points"][closer] == -10
    rep = replay(out.record)
    assert rep.state.result is not None and rep.state.result.end is GameEnd.CHINCHON
    for seat, msgs in enumerate(per_seat):
        hands = [m["handEnded"]["result"] for m in msgs if "handEnded" in m]
        assert hands[-1]["end"] == "HAND_END_KIND_CHINCHON"
        assert hands[-1]["bonus"] == "BONUS_CHINCHON"
        ended = [m["gameEnded"] for m in msgs if "gameEnded" in m]
        assert len(ended) == 1 and ended[0].get("seat", 0) == seat
        assert ended[0]["result"]["termination"] == "TERMINATION_CHINCHON"
        assert ended[0]["result"]["end"] == "GAME_END_KIND_CHINCHON"
        assert ended[0]["result"]["winners"] == [closer]


# -- the clock ----------------------------------------------------------------------------


def test_stalling_bot_times_out_forfeits_and_the_other_game_goes_on() -> None:
    async def main() -> None:
        server = await start(["staller", "g1", "g2", "g3"])
        procs = [
            await spawn(raw_bot("stall"), server, "staller"),
            await spawn(sdk_bot("greedy"), server, "g1"),
            await spawn(sdk_bot("greedy"), server, "g2"),
            await spawn(sdk_bot("random"), server, "g3"),
        ]
        try:
            await _connected(server, "staller", "g1", "g2", "g3")
            slow = spec("stall", ["staller", "g1"], tc=TimeControl(0.2, 0.3),
                        policies=Policies(max_strikes=3))
            normal = spec("normal", ["g2", "g3"])
            a, b = await asyncio.gather(play(server.referee, slow), play(server.referee, normal))
            assert a.termination == "TERMINATION_FORFEIT_TIMEOUT"
            assert a.forfeited == 0 and a.winners == [1]
            assert a.stats[0].timeouts == 3 and a.stats[0].strikes == 3
            # (Only the staller's: on a loaded machine its opponent, on the same short
            # clock, may be late once too.)
            timeouts = [i for i in server.referee.incidents
                        if i["kind"] == "timeout" and i["bot"] == "staller"]
            assert len(timeouts) == 3
            # The first wait has the move time plus the bank; later ones the move time only.
            assert timeouts[0]["allowed"] == pytest.approx(0.5)
            assert all(t["waited"] >= t["allowed"] for t in timeouts)
            assert timeouts[1]["allowed"] == pytest.approx(0.2)
            assert b.termination in ("TERMINATION_NORMAL", "TERMINATION_CHINCHON")
            assert replay(b.record).state.is_over
            # The forfeited game's record replays up to the forfeit, defaults included.
            origins = [x["move"]["origin"] for x in a.record["actions"] if "move" in x]
            assert origins.count("ACTION_ORIGIN_DEFAULT_TIMEOUT") == 3
            replay(a.record)
            await printed(procs[:1], "gameEnded")
        finally:
            await stop(*procs)
            await server.stop(0)
        msgs = _messages(procs[0].out)
        defaults = [m["defaultPlayed"] for m in msgs if "defaultPlayed" in m]
        assert [d["reason"] for d in defaults] == ["DEFAULT_REASON_TIMEOUT"] * 3
        assert [d["strikes"] for d in defaults] == [1, 2, 3]
        ended = [m["gameEnded"] for m in msgs if "gameEnded" in m]
        assert ended and ended[0]["result"]["termination"] == "TERMINATION_FORFEIT_TIMEOUT"

    run(main())


def _seconds(duration: str) -> float:
    """A protobuf JSON Duration ("0.301234s") in seconds."""
    assert duration.endswith("s"), duration
    return float(duration[:-1])


def test_reported_time_is_the_time_the_bot_took() -> None:
    """``accepted.time_taken`` (and the record's think time) is what the bot took: about
    0.3 s for the answers it held back 0.3 s, far less for the others."""
    delay, held = 0.3, 3

    async def main() -> tuple:
        server = await start(["ponder", "quick"])
        ponder = await spawn(raw_bot("delayed", "--delay", str(delay), "--delayed-count",
                                     str(held)), server, "ponder")
        quick = await spawn(sdk_bot("greedy"), server, "quick")
        try:
            await _connected(server, "ponder", "quick")
            out = await play(server.referee, spec("timed", ["ponder", "quick"]))
            await printed([ponder], "gameEnded")
        finally:
            await stop(ponder, quick)
            await server.stop(0)
        return out, _messages(ponder.out)

    out, msgs = run(main())
    assert out.termination in ("TERMINATION_NORMAL", "TERMINATION_CHINCHON")
    assert out.stats[0].timeouts == 0 and out.stats[0].illegal == 0
    requests = [m["actionRequest"]["requestId"] for m in msgs if "actionRequest" in m]
    accepted = {m["accepted"]["requestId"]: _seconds(m["accepted"]["timeTaken"])
                for m in msgs if "accepted" in m}
    assert set(accepted) == set(requests)  # every answer confirmed once
    slow = [accepted[r] for r in requests[:held]]
    fast = sorted(accepted[r] for r in requests[held:])
    # Never less than the bot waited; the margin is for a loaded machine.
    assert all(delay - 0.005 <= t <= delay + 1.0 for t in slow), slow
    assert fast and fast[len(fast) // 2] < 0.2, fast[-5:]  # (a constant would fail one)
    # The record states the same think times.
    think = [_seconds(x["move"]["thinkTime"]) for x in out.record["actions"]
             if "move" in x and x["move"].get("seat", 0) == 0]
    assert think[:held] == pytest.approx(slow, abs=2e-6)
    assert out.stats[0].think_time >= held * delay - 0.015


def test_an_answer_after_the_timeout_is_stale_and_the_default_stands() -> None:
    """The bot answers its first request 1 s after its time ran out: the referee has
    played the default action by then; the late answer is refused in-band as stale and
    changes nothing (it was a draw from the pile, the default a draw from the stock)."""
    per_move, delay = 2.0, 3.0  # late by 1 s; the next request (2 s) is answered in time

    async def main() -> tuple:
        server = await start(["late", "other"])
        late = await spawn(raw_bot("delayed", "--delay", str(delay)), server, "late")
        other = await spawn(sdk_bot("greedy"), server, "other")
        try:
            await _connected(server, "late", "other")
            s = spec("late", ["late", "other"], tc=TimeControl(per_move, 0.0),
                     policies=Policies(max_strikes=5, reconnect_grace=10.0))
            out = await play(server.referee, s)
            await printed([late], "gameEnded")
        finally:
            await stop(late, other)
            await server.stop(0)
        return out, _messages(late.out), list(server.referee.incidents)

    out, msgs, incidents = run(main())
    assert out.termination in ("TERMINATION_NORMAL", "TERMINATION_CHINCHON")
    first = next(m["actionRequest"] for m in msgs if "actionRequest" in m)
    rid = first["requestId"]
    assert "drawDiscard" in first["legalActions"][-1]  # what the late answer was
    defaults = [m["defaultPlayed"] for m in msgs if "defaultPlayed" in m]
    assert defaults[0]["requestId"] == rid
    assert defaults[0]["reason"] == "DEFAULT_REASON_TIMEOUT" and "drawStock" in defaults[0]["action"]
    # DefaultPlayed.time_taken: at least the time allowed (and it did not wait for the
    # late answer).
    assert per_move <= _seconds(defaults[0]["timeTaken"]) < delay
    errors = [m["error"] for m in msgs if "error" in m]
    assert len(errors) == 1, errors
    assert errors[0]["code"] == "ERROR_CODE_STALE_REQUEST" and errors[0]["requestId"] == rid
    assert errors[0]["message"].startswith(f"request {rid} is not outstanding: answered already or too late")
    assert rid not in {m["accepted"]["requestId"] for m in msgs if "accepted" in m}
    # The game: the default draw from the stock, then the bot's own discard; the late
    # draw from the pile was never applied.
    mine = [x["move"] for x in out.record["actions"] if "move" in x and x["move"].get("seat", 0) == 0]
    assert mine[0]["origin"] == "ACTION_ORIGIN_DEFAULT_TIMEOUT" and "drawStock" in mine[0]["action"]
    assert mine[1]["origin"] == "ACTION_ORIGIN_PLAYER" and "discard" in mine[1]["action"]
    assert sum(m["origin"] != "ACTION_ORIGIN_PLAYER" for m in mine) == len(defaults)
    assert replay(out.record).state.is_over
    timeouts = [i for i in incidents if i["kind"] == "timeout" and i["bot"] == "late"]
    assert timeouts[0]["allowed"] == pytest.approx(per_move) and timeouts[0]["waited"] >= per_move
    assert any(i["kind"] == "protocol" and i["bot"] == "late" and i["code"] == "ERROR_CODE_STALE_REQUEST"
               for i in incidents)


def test_illegal_bot_gets_the_exact_reasons_then_defaults_then_forfeits() -> None:
    async def main() -> None:
        server = await start(["cheat", "good"])
        cheat = await spawn(raw_bot("illegal"), server, "cheat")
        good = await spawn(sdk_bot("greedy"), server, "good")
        try:
            await _connected(server, "cheat", "good")
            s = spec("ill", ["cheat", "good"],
                     policies=Policies(max_illegal_retries=1, max_strikes=2))
            out = await play(server.referee, s)
            assert out.termination == "TERMINATION_FORFEIT_ILLEGAL"
            assert out.forfeited == 0 and out.winners == [1]
            assert out.stats[0].illegal == 4 and out.stats[0].strikes == 2
            await printed([cheat], "gameEnded")
        finally:
            await stop(cheat, good)
            await server.stop(0)
        msgs = _messages(cheat.out)
        rejected = [m["actionRejected"] for m in msgs if "actionRejected" in m]
        assert len(rejected) == 4
        # Seat 0 starts or not: the first refusal is either a discard before drawing or,
        # when seat 1 started, the same; the referee then draws for it (a strike) and
        # the bot discards a card it does not hold.
        first, second, third, _fourth = rejected
        assert first["error"]["code"] == "ERROR_CODE_ILLEGAL_ACTION"
        assert first["error"]["violation"] == "WRONG_PHASE"
        assert re.fullmatch(r"cannot 'discard \w+' now: time to draw: 'draw stock' or "
                            r"'draw discard'", first["error"]["message"])
        assert first["retriesLeft"] == 1 and second.get("retriesLeft", 0) == 0
        assert third["error"]["violation"] == "CARD_NOT_IN_HAND"
        assert re.fullmatch(r"\w+ is not in your hand", third["error"]["message"])
        defaults = [m["defaultPlayed"] for m in msgs if "defaultPlayed" in m]
        assert [d["reason"] for d in defaults] == ["DEFAULT_REASON_ILLEGAL"] * 2
        assert "drawStock" in defaults[0]["action"] and "discard" in defaults[1]["action"]
        requests = [m["actionRequest"] for m in msgs if "actionRequest" in m]
        assert [r.get("attempt", 0) for r in requests] == [0, 1, 0, 1]

    run(main())


# -- identity -----------------------------------------------------------------------------


async def _play_call(target: str, token: str | None) -> grpc.aio.StreamStreamCall:
    channel = grpc.aio.insecure_channel(target)
    md = (("authorization", f"Bearer {token}"),) if token is not None else ()
    return pb_grpc.RefereeServiceStub(channel).Play(metadata=md)


@pytest.mark.parametrize("token", [None, "wrong-token", ""])
def test_wrong_or_missing_token_is_unauthenticated(token: str | None) -> None:
    async def main() -> None:
        server = await start(["alice"])
        try:
            call = await _play_call(server.target, token)
            with pytest.raises(grpc.aio.AioRpcError) as err:
                # The refusal may come before the write is done: the write raises then.
                await call.write(pb.PlayRequest(hello=pb.Hello(client="x")))
                await call.read()
            assert err.value.code() == grpc.StatusCode.UNAUTHENTICATED
            # The server still serves the right token.
            ok = await _play_call(server.target, "tok-alice")
            await ok.write(pb.PlayRequest(hello=pb.Hello(client="x")))
            msg = await ok.read()
            assert msg.welcome.bot_name == "alice"
            ok.cancel()
        finally:
            await server.stop(0)

    run(main())


# -- hostile input ---------------------------------------------------------------------------


GARBAGE = b"\xff\xfe\x00garbage\x13\x37" * 10  # not a PlayRequest: field 2031, wire type 7


def _raw_play_call(target: str, token: str) -> tuple[grpc.aio.Channel, grpc.aio.StreamStreamCall]:
    """A Play stream that writes and reads bytes, so that it can send anything."""
    channel = grpc.aio.insecure_channel(target)
    raw = channel.stream_stream(
        "/chinchon.v1.RefereeService/Play",
        request_serializer=lambda b: b, response_deserializer=lambda b: b,
    )
    return channel, raw(metadata=(("authorization", f"Bearer {token}"),))


def test_garbage_bytes_fail_only_that_stream() -> None:
    async def main() -> None:
        server = await start(["alice", "bob", "carol"])
        b = await spawn(sdk_bot("greedy"), server, "bob")
        c = await spawn(sdk_bot("greedy"), server, "carol")
        try:
            channel, call = _raw_play_call(server.target, "tok-alice")
            await call.write(GARBAGE)
            with pytest.raises(grpc.aio.AioRpcError) as err:
                await call.read()
            assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT
            assert "PlayRequest" in (err.value.details() or "")
            await channel.close()
            await _connected(server, "bob", "carol")
            out = await play(server.referee, spec("after-garbage", ["bob", "carol"]))
            assert out.termination in ("TERMINATION_NORMAL", "TERMINATION_CHINCHON")
        finally:
            await stop(b, c)
            await server.stop(0)

    run(main())


def test_garbage_bytes_mid_game_fail_that_stream_and_the_seat_is_a_disconnect() -> None:
    """A seated bot sends bytes that are not a PlayRequest while it is asked to act: its
    stream ends with INVALID_ARGUMENT, its seat is handled as a dropped stream (not back
    within the grace: it forfeits), and the other bots' streams and games go on."""

    async def main() -> None:
        names = ["alice", "bob", "carol", "dave"]
        server = await start(names)
        others = [await spawn(sdk_bot("greedy"), server, n) for n in names[1:]]
        channel, call = _raw_play_call(server.target, "tok-alice")
        try:
            await call.write(pb.PlayRequest(hello=pb.Hello(client="garbage")).SerializeToString())
            assert pb.PlayResponse.FromString(await call.read()).WhichOneof("kind") == "welcome"
            await _connected(server, *names)
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
            await _connected(server, "bob", "carol")
            again = await play(server.referee, spec("bob-again", ["bob", "carol"]))
            assert again.termination in ("TERMINATION_NORMAL", "TERMINATION_CHINCHON")
        finally:
            await channel.close()
            await stop(*others)
            await server.stop(0)

    run(main())


def test_oversize_message_is_refused() -> None:
    async def main() -> None:
        server = await start(["alice"], RefereeConfig(limits=Limits(max_message_bytes=4096)))
        try:
            call = await _play_call(server.target, "tok-alice")
            await call.write(pb.PlayRequest(hello=pb.Hello(client="x" * 10_000)))
            with pytest.raises(grpc.aio.AioRpcError) as err:
                await call.read()
            assert err.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
        finally:
            await server.stop(0)

    run(main())


def test_stale_unsolicited_and_protocol_errors_are_answered_in_band() -> None:
    async def main() -> None:
        server = await start(["alice"])
        try:
            call = await _play_call(server.target, "tok-alice")
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
        finally:
            await server.stop(0)

    run(main())


def test_flood_of_unsolicited_messages_closes_the_stream() -> None:
    async def main() -> None:
        server = await start(["flooder"], RefereeConfig(limits=Limits(max_unsolicited=20)))
        try:
            call = await _play_call(server.target, "tok-flooder")
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
        finally:
            await server.stop(0)

    run(main())


# -- disconnects ---------------------------------------------------------------------------


async def _requests_seen(bot: BotProc, n: int, timeout: float = 20) -> None:
    """Wait until ``bot`` has printed ``n`` action requests (a game well under way)."""
    for _ in range(int(timeout / 0.02)):
        if sum('"actionRequest"' in line for line in bot.out) >= n:
            return
        await asyncio.sleep(0.02)
    raise AssertionError(f"fewer than {n} requests in {timeout:g} s")


async def _victim_killed_mid_game(
    server: RunningServer, victim_cmd: list[str], game_id: str, grace: float,
    procs: list[BotProc],
) -> tuple[asyncio.Future[GameOutcome], float]:
    """Start a game between ``victim`` (a raw bot run as ``victim_cmd``) and ``other`` (an
    SDK bot), both appended to ``procs``, and SIGKILL the victim once it has seen six
    requests. The game's task, and the monotonic time of the kill."""
    victim = await spawn(victim_cmd, server, "victim")
    procs.append(victim)
    procs.append(await spawn(sdk_bot("greedy"), server, "other"))
    await _connected(server, "victim", "other")
    s = spec(game_id, ["victim", "other"], policies=Policies(reconnect_grace=grace))
    game = asyncio.ensure_future(play(server.referee, s))
    await _requests_seen(victim, 6)
    killed = time.monotonic()
    victim.proc.kill()  # SIGKILL: no goodbye
    await victim.wait()
    return game, killed


async def _kill_mid_game(restart_after: float | None, grace: float) -> tuple:
    server = await start(["victim", "other"])
    procs: list[BotProc] = []
    try:
        game, _ = await _victim_killed_mid_game(
            server, raw_bot("slow", "--delay", "0.02"), "kill9", grace, procs)
        if restart_after is not None:
            await asyncio.sleep(restart_after)
            again = await spawn(raw_bot("slow", "--delay", "0.0"), server, "victim")
            procs.append(again)
        out = await game
        return out, procs
    finally:
        await stop(*procs)
        await server.stop(0)


def test_kill9_and_reconnect_within_grace_resumes_the_seat() -> None:
    out, procs = run(_kill_mid_game(restart_after=0.3, grace=10))
    assert out.termination in ("TERMINATION_NORMAL", "TERMINATION_CHINCHON")
    resumed = [m["gameStarted"] for m in _messages(procs[2].out) if "gameStarted" in m]
    assert resumed and resumed[0]["resumed"] is True and resumed[0]["gameId"] == "kill9"
    assert replay(out.record).state.is_over


def test_kill9_without_reconnect_forfeits_after_grace() -> None:
    out, _ = run(_kill_mid_game(restart_after=None, grace=0.5))
    assert out.termination == "TERMINATION_FORFEIT_DISCONNECT"
    assert out.forfeited == 0 and out.winners == [1]
    assert "disconnected" in out.record["result"]["summary"]


def test_reconnect_after_the_grace_finds_the_game_forfeited_and_waits_in_the_lobby() -> None:
    """The bot comes back only after its grace ran out: the game was forfeited at the end
    of the grace, and the new stream is not attached to it (no game_started, no request):
    it waits in the lobby like any new stream, and plays the next game from the start."""
    grace = 0.5

    async def main() -> None:
        server = await start(["victim", "other"])
        procs: list[BotProc] = []
        try:
            game, killed = await _victim_killed_mid_game(
                server, raw_bot("first"), "kill9-late", grace, procs)
            out = await game
            assert time.monotonic() - killed >= grace  # the seat was kept for the grace
            assert out.termination == "TERMINATION_FORFEIT_DISCONNECT"
            assert out.forfeited == 0 and out.winners == [1]
            # Back after the grace.
            again = await spawn(raw_bot("first"), server, "victim")
            procs.append(again)
            await _connected(server, "victim")
            await printed([again], "welcome")
            await asyncio.sleep(0.5)  # time for anything wrongly sent to it to arrive
            assert [next(iter(m)) for m in _messages(again.out)] == ["welcome"]
            assert not server.referee.lobby.orphans.get("victim")
            assert server.referee.lobby.connected("victim") == 1
            # It is a free stream: the next game seats it afresh and runs to the end.
            nxt = await play(server.referee, spec("next", ["victim", "other"]))
            assert nxt.termination in ("TERMINATION_NORMAL", "TERMINATION_CHINCHON")
            started = [m["gameStarted"] for m in _messages(again.out) if "gameStarted" in m]
            assert [(x["gameId"], x.get("resumed", False)) for x in started] == [("next", False)]
        finally:
            await stop(*procs)
            await server.stop(0)

    run(main())


def test_absent_bot_forfeits_with_no_show() -> None:
    async def main() -> None:
        server = await start(["here", "absent"])
        here = await spawn(sdk_bot("greedy"), server, "here")
        try:
            await _connected(server, "here")
            s = spec("noshow", ["here", "absent"], policies=Policies(reconnect_grace=0.3))
            out = await play(server.referee, s)
            assert out.termination == "TERMINATION_FORFEIT_NO_SHOW"
            assert out.forfeited == 1 and out.winners == [0]
            replay(out.record)  # a valid record with no actions
            # The present bot is free again for the next game.
            assert server.referee.lobby.connected("here") == 1
        finally:
            await stop(here)
            await server.stop(0)

    run(main())


# -- privacy -------------------------------------------------------------------------------

#: A card's text, as a JSON value or in free text (error messages).
CARD_RE = re.compile(r"\b(JK[12]|1[0-2][OCEB]|[1-9][OCEB])\b")


def _hidden_from(state: GameState, seat: int, face_up: str) -> set[str]:
    """Cards ``seat`` must not see now: other hands (the closer's cards left unmatched
    included) and the stock, less every card that was public in this hand (the face-up
    card, discards, cards taken from the pile, cards laid off: a reshuffle may put them
    back in the stock, and a player may hold a card it took from the pile); plus the
    closer's face-down card, for everyone but the closer.

    A face-down card whose name was public earlier in the hand (a player may take a
    card from the pile and close with it on a later turn) still shows in the hand's
    events, as the rules want: it is not counted hidden here (no card text can say
    where it is); the events themselves are checked to carry no face-down card."""
    if state.phase in (Phase.DEAL, Phase.GAME_OVER):
        return set()
    public = {str(e.card) for e in state.hand_events() if e.card is not None} | {face_up}
    hidden: set[str] = set()
    for s in range(state.n):
        if s != seat:
            hidden |= {str(c) for c in cards_of(state.hands[s])}
    hidden |= {str(c) for c in state.stock[state.stock_top:]}
    if state.close_discard is not None and seat != state.closer:
        hidden.add(str(state.close_discard))
    return hidden - public


def _cards_in(part: object) -> set[str]:
    """The card texts anywhere in a JSON part of a message (values and free text)."""
    return set(CARD_RE.findall(json.dumps(part)))


def _expected_view(state: GameState, seat: int, names: list[str]) -> dict:
    """What the rules let ``seat`` see, as the JSON of ``chinchon.v1.Observation``."""
    return json_format.MessageToDict(observation_to_wire(observation(state, seat, names)))


def _varied_seed(seed: str, seat: int) -> str:
    # Any hypothesis text, as a command-line argument (no NUL): its UTF-8 in hex.
    return f"{seed.encode().hex()}/{seat}"


#: Games (seed, jokers, players) with the ``varied`` bots that are known to reach every
#: part of a hand: closes (one with a card taken from the pile on an earlier turn and
#: put face down, one that melds all seven and locks the table), draws from the pile,
#: lay-off and lay-down turns with single lay-offs, ``layoff best`` and passes, a
#: reshuffle, and refused actions whose messages name cards. Found once by replaying the
#: bots' policy with the engine alone; the test checks they still do.
RICH_GAMES = [("r40", 0, 2), ("r40", 2, 3)]


@settings(max_examples=6, deadline=None, phases=[HPhase.explicit, HPhase.generate])
@given(seed=st.text(min_size=1, max_size=8), jokers=st.integers(0, 2), players=st.integers(2, 3))
@example(*RICH_GAMES[0])
@example(*RICH_GAMES[1])
def test_no_message_to_a_seat_holds_a_card_hidden_from_it(seed: str, jokers: int, players: int) -> None:
    names = [f"p{i}" for i in range(players)]
    rules = RuleSet(players=players, jokers=jokers)

    out, per_seat = run(_raw_bots_game(
        spec("leak", names, seed=seed, rules=rules),
        [["varied", "--varied-seed", _varied_seed(seed, i)] for i in range(players)]))
    assert out.termination in ("TERMINATION_NORMAL", "TERMINATION_CHINCHON")
    # Replay the record: the state at each decision, the face-up card of its hand.
    decisions: list[list[tuple[GameState, str]]] = [[] for _ in names]
    state = new_game(rules)
    face_up = ""
    moves = []
    seen = collections.Counter()
    for step in out.record["actions"]:
        if "deal" in step:
            alive = sum(state.alive) if state.hand_no else players
            face_up = step["deal"]["deck"][7 * alive]
        if "reshuffle" in step:
            seen["reshuffle"] += 1
        if "move" in step:
            decisions[state.to_act].append((state, face_up))
            seen[state.phase.name] += 1
            act = step["move"]["action"]
            moves.append(act)
            if "close" in act and act["close"]["card"] in {
                    str(e.card) for e in state.hand_events() if e.card is not None}:
                seen["close with a card public before"] += 1
        after = _replay_step(state, step)
        if "move" in step and "close" in step["move"]["action"] and after.closer_locked:
            seen["locked"] += 1  # all seven melded: nobody lays off
        state = after
    # The game went where the property matters: a close (the face-down card, the melds
    # on the table) and a draw from the pile (a card that becomes public in a hand).
    assert any("close" in m for m in moves), "no close in this game: the bots' policy changed"
    assert any("drawDiscard" in m for m in moves), "no draw from the discard pile in this game"
    rejections = 0
    for seat, msgs in enumerate(per_seat):
        by_request: dict[str, tuple[GameState, str]] = {}
        k = -1
        for m in msgs:
            if "actionRequest" in m:
                req = m["actionRequest"]
                if req.get("attempt", 0) == 0:
                    k += 1  # a new decision; a retry shows the same one again
                assert k < len(decisions[seat]), f"seat {seat}: more requests than decisions"
                st_, up = decisions[seat][k]
                by_request[req["requestId"]] = (st_, up)
                obs = req["observation"]
                # Exactly what the rules let this seat see, nothing more...
                assert obs == _expected_view(st_, seat, names)
                # ...and, whatever the engine's view: no card hidden from the seat, in
                # the observation (finished hands are shown to everyone) or the actions.
                hidden = _hidden_from(st_, seat, up)
                now = _cards_in({key: v for key, v in obs.items() if key != "pastHands"})
                assert not now & hidden, f"seat {seat} was shown {now & hidden}"
                assert not _cards_in(req["legalActions"]) & hidden, f"seat {seat}: {req['legalActions']}"
                # Events carry no face-down card: a close names only the melds shown.
                for e in obs.get("events", []):
                    if e.get("kind") == "EVENT_KIND_CLOSE":
                        assert "card" not in e, e
                assert len(obs.get("pastHands", [])) == len(st_.results)
            # Every other message about a decision: no card hidden at that decision.
            for part in ("accepted", "actionRejected", "defaultPlayed"):
                if part in m:
                    st_, up = by_request[m[part]["requestId"]]
                    leaked = _cards_in(m[part]) & _hidden_from(st_, seat, up)
                    assert not leaked, f"seat {seat}: {part} names {leaked}: {m[part]}"
            if "actionRejected" in m:
                rejections += 1
                assert m["actionRejected"]["error"]["message"]
            if "error" in m:  # in-band errors (none expected): none naming a card
                assert not _cards_in(m["error"]), m["error"]
            if "gameStarted" in m:
                assert not _cards_in(m["gameStarted"])
        assert k + 1 == len(decisions[seat]), f"seat {seat}: {k + 1} decisions asked"
        assert out.stats[seat].illegal == sum("actionRejected" in m for m in msgs)
    if (seed, jokers, players) in RICH_GAMES:
        for what in ("LAYOFF", "LAYDOWN", "reshuffle", "close with a card public before", "locked"):
            assert seen[what], f"game {seed, jokers, players} no longer has a {what}: {seen}"
        assert rejections, "no refused action to check the messages of"


def test_admin_service_needs_the_admin_token() -> None:
    async def main() -> None:
        server = await start(["alice"])
        try:
            from chinchon.v1 import tournament_pb2 as tpb
            from chinchon.v1 import tournament_pb2_grpc as tpb_grpc

            async with grpc.aio.insecure_channel(server.target) as ch:
                stub = tpb_grpc.TournamentServiceStub(ch)
                for md in ((), (("authorization", "Bearer tok-alice"),)):
                    with pytest.raises(grpc.aio.AioRpcError) as err:
                        await stub.ListTournaments(tpb.ListTournamentsRequest(), metadata=md)
                    assert err.value.code() == grpc.StatusCode.UNAUTHENTICATED
        finally:
            await server.stop(0)

    run(main())
