"""The referee over real gRPC: a server on port 0, real bot processes, hostile clients."""

from __future__ import annotations

import asyncio
import json
import re

import grpc
import pytest
from chinchon.engine import GameState, Phase, RuleSet, cards_of, new_game, replay
from chinchon.engine.record import _replay_step
from chinchon.v1 import referee_pb2 as pb
from chinchon.v1 import referee_pb2_grpc as pb_grpc
from chinchon_referee.config import Limits, Policies, RefereeConfig, TimeControl
from hypothesis import Phase as HPhase
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.helpers import node_bot, play, printed, raw_bot, sdk_bot, spawn, spec, start, stop


def run(coro):
    return asyncio.run(coro)


def _messages(lines: list[str]) -> list[dict]:
    return [json.loads(line) for line in lines if line.startswith("{")]


async def _connected(server, *names: str, timeout: float = 20) -> None:
    ok = await server.referee.lobby.wait_all(list(names), timeout)
    assert ok, f"bots {names} did not connect"


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
        server = await start(["py", "js", "js2"])
        py = await spawn(sdk_bot("greedy"), server, "py")
        js = await spawn(node_bot(), server, "js")
        js2 = await spawn(node_bot("--strategy", "random"), server, "js2")
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
            await call.write(pb.PlayRequest(hello=pb.Hello(client="x")))
            with pytest.raises(grpc.aio.AioRpcError) as err:
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


def test_garbage_bytes_fail_only_that_stream() -> None:
    async def main() -> None:
        server = await start(["alice", "bob", "carol"])
        b = await spawn(sdk_bot("greedy"), server, "bob")
        c = await spawn(sdk_bot("greedy"), server, "carol")
        try:
            channel = grpc.aio.insecure_channel(server.target)
            raw = channel.stream_stream(
                "/chinchon.v1.RefereeService/Play",
                request_serializer=lambda b: b, response_deserializer=lambda b: b,
            )
            call = raw(metadata=(("authorization", "Bearer tok-alice"),))
            await call.write(b"\xff\xfe\x00garbage\x13\x37" * 10)
            with pytest.raises(grpc.aio.AioRpcError) as err:
                await call.read()
            assert err.value.code() != grpc.StatusCode.OK
            await channel.close()
            await _connected(server, "bob", "carol")
            out = await play(server.referee, spec("after-garbage", ["bob", "carol"]))
            assert out.termination in ("TERMINATION_NORMAL", "TERMINATION_CHINCHON")
        finally:
            await stop(b, c)
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


async def _kill_mid_game(restart_after: float | None, grace: float) -> tuple:
    server = await start(["victim", "other"])
    victim = await spawn(raw_bot("slow", "--delay", "0.02"), server, "victim")
    other = await spawn(sdk_bot("greedy"), server, "other")
    procs = [victim, other]
    try:
        await _connected(server, "victim", "other")
        s = spec("kill9", ["victim", "other"], policies=Policies(reconnect_grace=grace))
        game = asyncio.ensure_future(play(server.referee, s))
        for _ in range(400):  # wait until a few requests went through
            if sum('"actionRequest"' in line for line in victim.out) >= 6:
                break
            await asyncio.sleep(0.02)
        victim.proc.kill()  # SIGKILL: no goodbye
        await victim.wait()
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

CARD_RE = re.compile(r'"(JK[12]|1[0-2][OCEB]|[1-9][OCEB])"')


def _hidden_from(state: GameState, seat: int, face_up: str) -> set[str]:
    """Cards ``seat`` must not see now: other hands and the stock, less every card that
    was public in this hand (the face-up card, discards, cards taken from the pile,
    which a reshuffle may have put back in the stock), and a face-down closing discard."""
    if state.phase in (Phase.DEAL, Phase.GAME_OVER):
        return set()
    public = {str(e.card) for e in state.hand_events() if e.card is not None} | {face_up}
    hidden: set[str] = set()
    for s in range(state.n):
        if s != seat:
            hidden |= {str(c) for c in cards_of(state.hands[s])}
    hidden |= {str(c) for c in state.stock[state.stock_top:]}
    hidden -= public
    if state.close_discard is not None:
        hidden.add(str(state.close_discard))
    return hidden


@settings(max_examples=6, deadline=None, phases=[HPhase.explicit, HPhase.generate])
@given(seed=st.text(min_size=1, max_size=8), jokers=st.integers(0, 2), players=st.integers(2, 3))
def test_no_message_to_a_seat_holds_a_card_hidden_from_it(seed: str, jokers: int, players: int) -> None:
    names = [f"p{i}" for i in range(players)]

    async def main() -> tuple:
        server = await start(names)
        procs = [await spawn(raw_bot("first"), server, n) for n in names]
        try:
            await _connected(server, *names)
            s = spec("leak", names, seed=seed, rules=RuleSet(players=players, jokers=jokers))
            out = await play(server.referee, s)
            await printed(procs, "gameEnded")
        finally:
            await stop(*procs)
            await server.stop(0)
        return out, [_messages(p.out) for p in procs]

    out, per_seat = run(main())
    assert out.termination in ("TERMINATION_NORMAL", "TERMINATION_CHINCHON")
    # Replay the record; the k-th request to seat s is seat s's k-th decision.
    decisions: list[list[tuple[GameState, str]]] = [[] for _ in names]
    state = new_game(RuleSet(players=players, jokers=jokers))
    face_up = ""
    for step in out.record["actions"]:
        if "deal" in step:
            alive = sum(state.alive) if state.hand_no else players
            face_up = step["deal"]["deck"][7 * alive]
        if "move" in step:
            decisions[state.to_act].append((state, face_up))
        state = _replay_step(state, step)
    for seat, msgs in enumerate(per_seat):
        requests = [m["actionRequest"] for m in msgs if "actionRequest" in m]
        assert len(requests) == len(decisions[seat])
        for req, (st_, up) in zip(requests, decisions[seat], strict=True):
            obs = dict(req["observation"])
            obs.pop("pastHands", None)  # finished hands are shown to everyone
            shown = set(CARD_RE.findall(json.dumps(obs)))
            leaked = shown & _hidden_from(st_, seat, up)
            assert not leaked, f"seat {seat} was shown {leaked}"
            assert sorted(req["observation"].get("hand", [])) == sorted(
                str(c) for c in cards_of(st_.hands[seat]))
        held = {c for r in requests for c in r["observation"].get("hand", [])}
        for m in msgs:  # other messages carry no hidden card during a hand
            for part in ("accepted", "gameStarted", "defaultPlayed"):
                if part in m:
                    assert not set(CARD_RE.findall(json.dumps(m[part]))) - held


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
