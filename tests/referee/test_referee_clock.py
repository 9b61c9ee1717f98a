"""The referee's clock: timeouts, reported think time, stale answers, illegal actions."""

from __future__ import annotations

import asyncio
import re

import pytest
from chinchon.engine import (
    replay,
)
from chinchon_referee.config import Policies, TimeControl

from tests.support.fixture_types import SpawnBot, StartServer
from tests.support.helpers import (
    play,
    printed,
    spec,
    stop,
)
from tests.support.inproc import raw, sdk
from tests.support.referee import (
    connected,
    messages,
)

# -- the clock ----------------------------------------------------------------------------


async def test_stalling_bot_times_out_forfeits_and_the_other_game_goes_on(
    servers: StartServer, bots: SpawnBot,
) -> None:
    server = await servers(["staller", "g1", "g2", "g3"])
    procs = [
        await bots(raw("stall"), server, "staller"),
        await bots(sdk("greedy"), server, "g1"),
        await bots(sdk("greedy"), server, "g2"),
        await bots(sdk("random"), server, "g3"),
    ]
    await connected(server, "staller", "g1", "g2", "g3")
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
    # (The staller's, seat 0: on a loaded machine its opponent may be late once too.)
    origins = [x["move"]["origin"] for x in a.record["actions"]
               if "move" in x and x["move"].get("seat", 0) == 0]
    assert origins.count("ACTION_ORIGIN_DEFAULT_TIMEOUT") == 3
    replay(a.record)
    await printed(procs[:1], "gameEnded")
    await stop(*procs)
    msgs = messages(procs[0].out)
    defaults = [m["defaultPlayed"] for m in msgs if "defaultPlayed" in m]
    assert [d["reason"] for d in defaults] == ["DEFAULT_REASON_TIMEOUT"] * 3
    assert [d["strikes"] for d in defaults] == [1, 2, 3]
    ended = [m["gameEnded"] for m in msgs if "gameEnded" in m]
    assert ended and ended[0]["result"]["termination"] == "TERMINATION_FORFEIT_TIMEOUT"


def _seconds(duration: str) -> float:
    """A protobuf JSON Duration ("0.301234s") in seconds."""
    assert duration.endswith("s"), duration
    return float(duration[:-1])


async def test_reported_time_is_the_time_the_bot_took(servers: StartServer, bots: SpawnBot) -> None:
    """``accepted.time_taken`` (and the record's think time) is what the bot took: about
    0.3 s for the answers it held back 0.3 s, far less for the others."""
    delay, held = 0.3, 3

    server = await servers(["ponder", "quick"])
    ponder = await bots(raw("delayed", "--delay", str(delay), "--delayed-count",
                                 str(held)), server, "ponder")
    quick = await bots(sdk("greedy"), server, "quick")
    await connected(server, "ponder", "quick")
    out = await play(server.referee, spec("timed", ["ponder", "quick"]))
    await printed([ponder], "gameEnded")
    await stop(ponder, quick)
    msgs = messages(ponder.out)
    assert out.termination in ("TERMINATION_NORMAL", "TERMINATION_CHINCHON")
    assert out.stats[0].timeouts == 0 and out.stats[0].illegal == 0
    requests = [m["actionRequest"]["requestId"] for m in msgs if "actionRequest" in m]
    accepted = {m["accepted"]["requestId"]: _seconds(m["accepted"]["timeTaken"])
                for m in msgs if "accepted" in m}
    assert set(accepted) == set(requests)  # every answer confirmed once
    slow = [accepted[r] for r in requests[:held]]
    fast = sorted(accepted[r] for r in requests[held:])
    # The clock starts when the event loop sees the request written: on a loaded machine
    # it may see that a little after the bot has read it (the bot is never charged for
    # the referee's own lateness), so a held answer may measure a little under the hold
    # (0.289 s for 0.3 at load 10), never more than the hold and the machine's delays.
    assert all(delay - 0.1 <= t <= delay + 1.0 for t in slow), slow
    assert fast and fast[len(fast) // 2] < 0.2, fast[-5:]  # (a constant would fail one)
    # The record states the same think times.
    think = [_seconds(x["move"]["thinkTime"]) for x in out.record["actions"]
             if "move" in x and x["move"].get("seat", 0) == 0]
    assert think[:held] == pytest.approx(slow, abs=2e-6)
    assert out.stats[0].think_time >= held * (delay - 0.1)


async def test_an_answer_after_the_timeout_is_stale_and_the_default_stands(
    servers: StartServer, bots: SpawnBot,
) -> None:
    """The bot answers its first request 1 s after its time ran out: the referee has
    played the default action by then; the late answer is refused in-band as stale and
    changes nothing (it was a draw from the pile, the default a draw from the stock)."""
    per_move, delay = 2.0, 3.0  # late by 1 s; the next request (2 s) is answered in time

    server = await servers(["late", "other"])
    late = await bots(raw("delayed", "--delay", str(delay)), server, "late")
    other = await bots(sdk("greedy"), server, "other")
    await connected(server, "late", "other")
    s = spec("late", ["late", "other"], tc=TimeControl(per_move, 0.0),
             policies=Policies(max_strikes=5, reconnect_grace=10.0))
    out = await play(server.referee, s)
    await printed([late], "gameEnded")
    await stop(late, other)
    msgs, incidents = messages(late.out), list(server.referee.incidents)
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


async def test_illegal_bot_gets_the_exact_reasons_then_defaults_then_forfeits(
    servers: StartServer, bots: SpawnBot,
) -> None:
    server = await servers(["cheat", "good"])
    cheat = await bots(raw("illegal"), server, "cheat")
    good = await bots(sdk("greedy"), server, "good")
    await connected(server, "cheat", "good")
    s = spec("ill", ["cheat", "good"],
             policies=Policies(max_illegal_retries=1, max_strikes=2))
    out = await play(server.referee, s)
    assert out.termination == "TERMINATION_FORFEIT_ILLEGAL"
    assert out.forfeited == 0 and out.winners == [1]
    assert out.stats[0].illegal == 4 and out.stats[0].strikes == 2
    await printed([cheat], "gameEnded")
    await stop(cheat, good)
    msgs = messages(cheat.out)
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
