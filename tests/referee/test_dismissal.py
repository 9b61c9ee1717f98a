"""Bots learn that their tournaments are over: a queue stream of a bot no tournament has a
game for any more gets ``PlayResponse.dismissed``, then the stream ends with OK (real
server on port 0, real bot processes, a real SQLite store)."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import grpc
from chinchon.v1 import referee_pb2 as pb
from chinchon_referee.tournament.model import TournamentSpec

from tests.support.fixture_types import SpawnBot
from tests.support.helpers import BotProc, bot_token, node_bot, sdk_bot
from tests.support.inproc import raw
from tests.support.referee import play_call
from tests.support.tournament import InProcess, spec_dict
from tests.support.waits import until


def _dismissed(proc: BotProc) -> list[dict[str, Any]]:
    """The ``dismissed`` messages a raw bot printed."""
    msgs = [json.loads(ln) for ln in proc.out if ln.startswith("{")]
    return [m["dismissed"] for m in msgs if "dismissed" in m]


async def _queue_stream(env: InProcess, bot: str) -> tuple[grpc.aio.StreamStreamCall, pb.Welcome]:
    call = await play_call(env.server.target, bot_token(bot))
    await call.write(pb.PlayRequest(hello=pb.Hello(client="test", queue=pb.QueueMode())))
    first = await asyncio.wait_for(call.read(), 10)
    assert first.WhichOneof("kind") == "welcome", first
    return call, first.welcome


async def test_a_bot_is_dismissed_when_no_tournament_has_a_game_left_for_it(
        env: InProcess, bots: SpawnBot) -> None:
    """a plays tournament A (against b), then B (against c); B is declared from the start.
    When A is over, b (in A only) is dismissed and exits 0; a is kept (B has games for
    it), and so is c, which connected before any of its games was due. A late stream of
    b is dismissed at once. When B is over, a and c are dismissed too."""
    lobby = env.server.referee.lobby
    one = {"games_per_pairing": 1, "concurrency": 1}
    tid_a, _ = env.director.create(TournamentSpec.from_dict(spec_dict("first", ["a", "b"], **one)))
    tid_b, _ = env.director.create(TournamentSpec.from_dict(spec_dict("second", ["a", "c"], **one)))
    a = await bots(raw("first"), env.server, "a")
    b = await bots(raw("first"), env.server, "b")
    c = await bots(raw("first"), env.server, "c")
    assert await lobby.wait_all(["a", "b", "c"], 120)

    await asyncio.wait_for(env.director.run(tid_a, force_start=True), 90)
    assert await b.wait(15) == 0, b.err
    (why,) = _dismissed(b)
    assert why["reason"] == "DISMISS_REASON_GAMES_PLAYED" and why["tournamentId"] == tid_a
    assert "no other tournament has a game for you" in why["message"]
    # a and c are still waiting: B has games for them.
    assert lobby.connected("a") == 1 and lobby.connected("c") == 1
    assert a.returncode is None and c.returncode is None
    assert _dismissed(a) == [] and _dismissed(c) == []

    # A stream of b that connects now is dismissed at once, and ends with OK.
    late, _ = await _queue_stream(env, "b")
    msg = await asyncio.wait_for(late.read(), 10)
    assert msg.WhichOneof("kind") == "dismissed", msg
    assert msg.dismissed.reason == pb.DISMISS_REASON_GAMES_PLAYED
    assert await asyncio.wait_for(late.read(), 10) is grpc.aio.EOF
    assert await late.code() is grpc.StatusCode.OK

    await asyncio.wait_for(env.director.run(tid_b, force_start=True), 90)
    for proc in (a, c):
        assert await proc.wait(15) == 0, proc.err
        (why,) = _dismissed(proc)
        assert why["reason"] == "DISMISS_REASON_GAMES_PLAYED" and why["tournamentId"] == tid_b
    # One stream played every game of a in both tournaments.
    played = [ln for ln in a.out if '"gameEnded"' in ln]
    assert len(played) == len(env.store.games(tid_a)) + len(env.store.games(tid_b))


async def test_a_bot_that_connects_before_its_tournament_is_created_waits(env: InProcess) -> None:
    """A bot no tournament of this referee has ended for is never dismissed: a bot that
    connects early waits, and is seated once its tournament runs. (Its token is known
    here from another tournament, declared and still scheduled.)"""
    env.director.create(TournamentSpec.from_dict(spec_dict("later", ["early", "other"])))
    call, welcome = await _queue_stream(env, "early")
    assert welcome.bot_name == "early"
    lobby = env.server.referee.lobby
    assert lobby.dismissal is not None and lobby.dismissal("early") is None
    # The stream joins the lobby just after its welcome is written.
    await until(lambda: lobby.connected("early") == 1, "the early stream in the lobby", 10)
    call.cancel()


async def test_a_cancelled_tournament_dismisses_its_waiting_bots(env: InProcess) -> None:
    """Cancelling a tournament dismisses the queue streams of its bots (reason
    TOURNAMENT_CANCELLED), which end with OK. Once a new tournament is declared with one
    of them, that bot's next stream waits again."""
    tid, _ = env.director.create(TournamentSpec.from_dict(spec_dict("called-off", ["p", "q"])))
    calls = [(await _queue_stream(env, b))[0] for b in ("p", "q")]
    assert await env.server.referee.lobby.wait_all(["p", "q"], 120)
    await env.director.cancel(tid)
    for call in calls:
        msg = await asyncio.wait_for(call.read(), 10)
        assert msg.WhichOneof("kind") == "dismissed", msg
        assert msg.dismissed.reason == pb.DISMISS_REASON_TOURNAMENT_CANCELLED
        assert msg.dismissed.tournament_id == tid
        assert await asyncio.wait_for(call.read(), 10) is grpc.aio.EOF
        assert await call.code() is grpc.StatusCode.OK
    lobby = env.server.referee.lobby
    assert lobby.dismissal is not None and lobby.dismissal("p") is not None
    env.director.create(TournamentSpec.from_dict(spec_dict("replay", ["p", "r"])))
    assert lobby.dismissal("p") is None and lobby.dismissal("q") is not None
    again, _ = await _queue_stream(env, "p")
    assert await lobby.wait_all(["p"], 120)
    again.cancel()


async def test_a_stream_given_back_after_its_bot_was_dismissed_is_dismissed_then(
        env: InProcess) -> None:
    """A game's seats are taken, then given back (in shared mode its claim is refused:
    another process played it). A bot dismissed meanwhile has its stream dismissed when
    it is given back, not left idle in the lobby with nothing to come (a loaded run saw
    two bots of a shared tournament wait so for ever)."""
    tid, _ = env.director.create(TournamentSpec.from_dict(spec_dict("taken", ["u", "v"])))
    call, _ = await _queue_stream(env, "u")
    lobby = env.server.referee.lobby
    assert await lobby.wait_all(["u"], 120)
    conn = lobby.take("u")
    assert conn is not None
    await env.director.cancel(tid)  # u is dismissed while its stream is taken
    assert lobby.dismissal is not None and lobby.dismissal("u") is not None
    lobby.give_back(conn)
    msg = await asyncio.wait_for(call.read(), 10)
    assert msg.WhichOneof("kind") == "dismissed", msg
    assert msg.dismissed.tournament_id == tid
    assert await asyncio.wait_for(call.read(), 10) is grpc.aio.EOF
    assert await call.code() is grpc.StatusCode.OK
    assert lobby.connected("u") == 0


async def test_the_sdk_and_the_node_bot_exit_0_when_dismissed(
        env: InProcess, bots: SpawnBot) -> None:
    """The Python SDK and the sample Node bot, queued for a tournament, play it and exit
    0 by themselves when the referee dismisses them (no signal)."""
    tid, _ = env.director.create(TournamentSpec.from_dict(
        spec_dict("exits", ["py", "js"], games_per_pairing=1, concurrency=1)))
    py = await bots(sdk_bot("greedy"), env.server, "py")  # the SDK process exits 0
    js = await bots(node_bot(), env.server, "js")
    assert await env.server.referee.lobby.wait_all(["py", "js"], 120)
    await asyncio.wait_for(env.director.run(tid, force_start=True), 90)
    assert await py.wait(15) == 0, list(py.err)
    assert await js.wait(15) == 0, list(js.err)
    assert any("dismissed by the referee" in ln for ln in py.err), list(py.err)
    assert any("dismissed" in ln for ln in js.err), list(js.err)
