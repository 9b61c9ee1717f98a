"""Dropping and resuming a seat over a real server on port 0, with raw ``grpc.aio``
clients: the bot's clock keeps running while it is away, a bot that comes back before
its turn resumes its seat, and the reconnect grace counts from the moment it left."""

from __future__ import annotations

import asyncio
import time

import grpc
import pytest
from chinchon.engine import replay
from chinchon.v1 import game_pb2 as g
from chinchon.v1 import record_pb2
from chinchon.v1 import referee_pb2 as pb
from chinchon.wire import seconds_of
from chinchon_referee.config import Policies, RefereeConfig, TimeControl
from chinchon_referee.referee import Seat
from google.protobuf import json_format

from tests.support.fixture_types import StartServer
from tests.support.helpers import spec
from tests.support.referee import Bot
from tests.support.waits import until

#: How long a bot thinks before it drops: time its clock must count (the behaviour
#: under test).
THINK = 0.5
#: A negative check's window: nothing may change meanwhile.
QUIET = 0.3


async def test_the_clock_keeps_running_while_the_bot_is_away(servers: StartServer) -> None:
    """Dropping the stream with a request outstanding does not buy time: the request
    sent again on the new stream carries what is left, and a bot that comes back after
    its time ran out gets a timeout (default action, strike), not a fresh clock."""

    server = await servers(["A"])
    bot = Bot(server.target, "A")
    await bot.back()
    s = spec("clock-away", ["A", "house:greedy"], tc=TimeControl(0.6, 0.6),
             policies=Policies(reconnect_grace=10.0, max_strikes=3))
    game = asyncio.ensure_future(server.referee.play(s))
    first = (await bot.next("action_request")).action_request
    allowed = seconds_of(first.move_time) + seconds_of(first.bank_time)
    assert abs(allowed - 1.2) < 1e-9
    # Think 0.5 s (THINK), then drop and come back: 0.5 s of the 1.2 s are gone.
    await asyncio.sleep(THINK)
    t_drop = time.monotonic()
    await bot.drop()
    await bot.back()
    resumed = await bot.next("game_started")
    assert resumed.game_started.resumed
    again = (await bot.next("action_request")).action_request
    away = time.monotonic() - t_drop
    # Request ids are numbered per stream: the new stream's first request is 1.
    assert first.request_id == again.request_id == 1
    assert list(again.legal_actions) == list(first.legal_actions)  # the same decision
    left = seconds_of(again.move_time) + seconds_of(again.bank_time)
    assert left <= 1.2 - 0.5 + 0.01, (left, away)
    assert left >= 1.2 - 0.5 - away - 0.05, (left, away)
    # Now leave at once and stay away past what is left: the move is timed out
    # when the bot comes back.
    await bot.drop()
    await asyncio.sleep(left + 0.2)  # away longer than the time left: the behaviour under test
    await bot.back()
    default = (await bot.next("default_played")).default_played
    assert default.reason == pb.DEFAULT_REASON_TIMEOUT and default.strikes == 1
    assert default.request_id == again.request_id
    ended = await bot.play_on()
    out = await asyncio.wait_for(game, 60)
    assert out.termination in ("TERMINATION_NORMAL", "TERMINATION_CHINCHON")
    assert g.Termination.Name(ended.game_ended.result.termination) == out.termination
    assert out.stats[0].timeouts == 1 and out.stats[0].strikes == 1
    # Both stretches away count as thinking time.
    assert out.stats[0].think_time >= 0.5 + left
    timeouts = [i for i in server.referee.incidents if i["kind"] == "timeout"]
    assert len(timeouts) == 1 and timeouts[0]["waited"] >= timeouts[0]["allowed"]
    # The record says what the bots played under, and still replays.
    assert out.record["timeControl"] == {"perMove": "0.600s", "bank": "0.600s"}
    assert out.record["policies"] == {
        "maxIllegalRetries": 2, "maxStrikes": 3, "reconnectGrace": "10s"}
    wire_record = json_format.ParseDict(out.record, record_pb2.GameRecord())
    assert wire_record.time_control.per_move.nanos == 600_000_000
    assert replay(out.record).state.is_over


@pytest.mark.parametrize("seated_by_caller", [False, True])
async def test_a_bot_back_before_its_turn_resumes_its_seat(
    servers: StartServer, seated_by_caller: bool,
) -> None:
    """A bot that drops while its opponent thinks and reconnects at once gets its seat
    back (before, its new stream waited in the lobby and the seat forfeited when the
    grace ran out): the new stream is held for the seat at once, so no new game can take
    it meanwhile. After the game that stream is back in the lobby, also when the caller
    seated the streams itself (practice)."""

    server = await servers(["A", "B", "C"])
    a, b, c = Bot(server.target, "A"), Bot(server.target, "B"), Bot(server.target, "C")
    await a.back()
    await b.back()
    await c.back()
    assert await server.referee.lobby.wait_all(["A", "B", "C"], 120)
    s = spec("back-early", ["A", "B"], tc=TimeControl(5.0, 10.0),
             policies=Policies(reconnect_grace=2.0))
    lobby = server.referee.lobby
    seats = None
    if seated_by_caller:
        seats = [Seat(i, n, conn=lobby.take(n)) for i, n in enumerate(["A", "B"])]
    game = asyncio.ensure_future(server.referee.play(s, seats))
    ended_b = asyncio.ensure_future(b.play_on())
    # A answers until it has discarded once, then leaves while B "thinks".
    await a.until_first_discard(then_hold=b)
    await a.drop()
    await a.back()
    # A is back before its turn: its new stream is the seat's already, not idle (and
    # stays so: a negative check over QUIET), and a game A against C cannot be seated
    # with it.
    await asyncio.sleep(QUIET)
    assert lobby.connected("A") == 0
    assert server.referee.seats_for(spec("steal", ["A", "C"])) is None
    assert lobby.connected("C") == 1  # nothing taken
    b.gate.set()
    resumed = await a.next("game_started")
    assert resumed.game_started.resumed and resumed.game_started.game_id == "back-early"
    ended_a = await a.play_on()
    out = await asyncio.wait_for(game, 60)
    assert out.termination in ("TERMINATION_NORMAL", "TERMINATION_CHINCHON")
    assert out.forfeited is None
    assert g.Termination.Name(ended_a.game_ended.result.termination) == out.termination
    assert all(st.timeouts == 0 for st in out.stats), out.stats
    await asyncio.wait_for(ended_b, 10)
    assert lobby.connected("A") == 1
    assert lobby.connected("B") == (0 if seated_by_caller else 1)


async def test_the_grace_counts_from_the_moment_the_bot_left(servers: StartServer) -> None:
    """A bot that leaves during its opponent's long think and stays away forfeits as soon
    as its turn comes if the grace has run out by then, not a whole grace later."""

    server = await servers(["A", "B"])
    a, b = Bot(server.target, "A"), Bot(server.target, "B")
    await a.back()
    await b.back()
    assert await server.referee.lobby.wait_all(["A", "B"], 120)
    grace, think = 1.0, 2.0
    s = spec("grace-from-loss", ["A", "B"], tc=TimeControl(5.0, 10.0),
             policies=Policies(reconnect_grace=grace))
    game = asyncio.ensure_future(server.referee.play(s))
    ended_b = asyncio.ensure_future(b.play_on())
    await a.until_first_discard(then_hold=b)
    t_left = time.monotonic()
    await a.drop()
    await asyncio.sleep(think)  # B thinks longer than A's grace...
    b.gate.set()
    out = await asyncio.wait_for(game, 30)  # ...so A forfeits when its turn comes
    took = time.monotonic() - t_left
    assert out.termination == "TERMINATION_FORFEIT_DISCONNECT"
    assert out.forfeited == 0 and out.winners == [1]
    assert f"not back within {grace:g} s" in out.record["result"]["summary"]
    assert out.record["policies"]["reconnectGrace"] == "1s"
    assert out.record["timeControl"] == {"perMove": "5s", "bank": "10s"}
    # A whole grace after A's turn came would be think + grace = 3 s.
    assert took < think + grace / 2, took
    await asyncio.wait_for(ended_b, 10)


async def test_a_practice_session_survives_a_dropped_stream(servers: StartServer) -> None:
    """A bot in a practice session (Hello.practice) that drops its stream mid-game and
    says the same practice hello again takes its seat back, finishes that game and plays
    the rest of the session on the new stream (before, the session died with the first
    stream and the new hello started another one). A queue-mode stream of the same bot,
    waiting in the lobby, is not the one that takes the practice seat."""

    server = await servers(["A"])
    bot, queued = Bot(server.target, "A"), Bot(server.target, "A")
    practice = pb.PracticeRequest(opponent="greedy", games=2, seed="resume")
    await queued.back()
    assert await server.referee.lobby.wait_all(["A"], 120)
    await bot.back(practice)
    started = (await bot.next("game_started")).game_started
    for _ in range(3):
        await bot.answer((await bot.next("action_request")).action_request)
    await bot.next("action_request")  # left unanswered: the bot drops now
    await bot.drop()
    # The referee has seen the stream go: only the queued one is left.
    await until(lambda: sum(c.bot == "A" for c in server.referee.connections) == 1,
                "the dropped practice stream to close")
    await bot.back(practice)
    resumed = (await bot.next("game_started")).game_started
    assert resumed.resumed and resumed.game_id == started.game_id
    ended = []
    while True:
        msg = await asyncio.wait_for(bot.call.read(), 30)
        if msg is grpc.aio.EOF:
            break  # the referee ends the stream after the session's last game
        kind = msg.WhichOneof("kind")
        if kind == "action_request":
            await bot.answer(msg.action_request)
        elif kind == "game_ended":
            ended.append(msg.game_ended)
        elif kind == "game_started":
            assert not msg.game_started.resumed
    assert [e.game_id for e in ended] == [started.game_id,
                                          started.game_id[:-1] + "2"]
    assert all(g.Termination.Name(e.result.termination) in
               ("TERMINATION_NORMAL", "TERMINATION_CHINCHON") for e in ended)
    assert await bot.call.code() == grpc.StatusCode.OK
    assert not any(i["kind"] == "forfeit" for i in server.referee.incidents)
    assert server.referee.lobby.connected("A") == 1  # the queued stream, untouched


async def test_a_practice_session_whose_bot_does_not_come_back_ends_with_a_forfeit(
    servers: StartServer,
) -> None:
    config = RefereeConfig(policies=Policies(reconnect_grace=0.5))
    server = await servers(["A"], config)
    bot = Bot(server.target, "A")
    await bot.back(pb.PracticeRequest(opponent="greedy", games=3))
    await bot.next("action_request")
    await bot.drop()
    # The grace, then the forfeit, then the session ends.
    await until(lambda: server.referee.games_running == 0, "the practice game to end")
    assert server.referee.games_running == 0
    forfeits = [i for i in server.referee.incidents if i["kind"] == "forfeit"]
    assert len(forfeits) == 1 and forfeits[0]["bot"] == "A"
    assert forfeits[0]["termination"] == "TERMINATION_FORFEIT_DISCONNECT"
    await asyncio.sleep(QUIET)  # a negative check: no second game may start meanwhile
    assert server.referee.games_running == 0  # no second game was started
