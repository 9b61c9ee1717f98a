"""Disconnects: kill -9 and reconnect within or after the grace, absent bots."""

from __future__ import annotations

import asyncio
import time

from chinchon.engine import (
    replay,
)
from chinchon_referee.config import Policies
from chinchon_referee.referee import GameOutcome
from chinchon_referee.service.server import RunningServer

from tests.support.fixture_types import SpawnBot, StartServer
from tests.support.helpers import (
    BotProc,
    play,
    printed,
    raw_bot,
    spec,
    stop,
)
from tests.support.inproc import raw, sdk
from tests.support.referee import (
    connected,
    messages,
)
from tests.support.waits import until

#: A negative check's window: time for anything wrongly sent to a bot to arrive.
QUIET = 0.5


# -- disconnects ---------------------------------------------------------------------------


async def _requests_seen(bot: BotProc, n: int, timeout: float = 20) -> None:
    """Wait until ``bot`` has printed ``n`` action requests (a game well under way)."""
    await until(lambda: sum('"actionRequest"' in line for line in bot.out) >= n,
                f"{n} action requests printed", timeout)


async def _victim_killed_mid_game(
    server: RunningServer, bots: SpawnBot, victim_cmd: list[str], game_id: str, grace: float,
    procs: list[BotProc],
) -> tuple[asyncio.Future[GameOutcome], float]:
    """Start a game between ``victim`` (a raw bot run as ``victim_cmd``) and ``other`` (an
    SDK bot), both appended to ``procs``, and SIGKILL the victim once it has seen six
    requests. The game's task, and the monotonic time of the kill."""
    victim = await bots(victim_cmd, server, "victim")
    procs.append(victim)
    procs.append(await bots(sdk("greedy"), server, "other"))
    await connected(server, "victim", "other")
    s = spec(game_id, ["victim", "other"], policies=Policies(reconnect_grace=grace))
    game = asyncio.ensure_future(play(server.referee, s))
    await _requests_seen(victim, 6)
    killed = time.monotonic()
    victim.proc.kill()  # SIGKILL: no goodbye
    await victim.wait()
    return game, killed


async def _kill_mid_game(servers: StartServer, bots: SpawnBot, restart_after: float | None,
                         grace: float) -> tuple:
    """A game whose victim is killed mid-game and, unless ``restart_after`` is None,
    started again that long after the kill (the time it is away is the scenario)."""
    server = await servers(["victim", "other"])
    procs: list[BotProc] = []
    game, _ = await _victim_killed_mid_game(
        server, bots, raw_bot("slow", "--delay", "0.02"), "kill9", grace, procs)
    if restart_after is not None:
        await asyncio.sleep(restart_after)  # away that long: the behaviour under test
        again = await bots(raw("slow", "--delay", "0.0"), server, "victim")
        procs.append(again)
    out = await game
    await stop(*procs)
    return out, procs


async def test_kill9_and_reconnect_within_grace_resumes_the_seat(
    servers: StartServer, bots: SpawnBot,
) -> None:
    out, procs = await _kill_mid_game(servers, bots, restart_after=0.3, grace=10)
    assert out.termination in ("TERMINATION_NORMAL", "TERMINATION_CHINCHON")
    resumed = [m["gameStarted"] for m in messages(procs[2].out) if "gameStarted" in m]
    assert resumed and resumed[0]["resumed"] is True and resumed[0]["gameId"] == "kill9"
    assert replay(out.record).state.is_over


async def test_kill9_without_reconnect_forfeits_after_grace(
    servers: StartServer, bots: SpawnBot,
) -> None:
    out, _ = await _kill_mid_game(servers, bots, restart_after=None, grace=0.5)
    assert out.termination == "TERMINATION_FORFEIT_DISCONNECT"
    assert out.forfeited == 0 and out.winners == [1]
    assert "disconnected" in out.record["result"]["summary"]


async def test_reconnect_after_the_grace_finds_the_game_forfeited_and_waits_in_the_lobby(
    servers: StartServer, bots: SpawnBot,
) -> None:
    """The bot comes back only after its grace ran out: the game was forfeited at the end
    of the grace, and the new stream is not attached to it (no game_started, no request):
    it waits in the lobby like any new stream, and plays the next game from the start."""
    grace = 0.5

    server = await servers(["victim", "other"])
    procs: list[BotProc] = []
    game, killed = await _victim_killed_mid_game(
        server, bots, raw_bot("first"), "kill9-late", grace, procs)
    out = await game
    assert time.monotonic() - killed >= grace  # the seat was kept for the grace
    assert out.termination == "TERMINATION_FORFEIT_DISCONNECT"
    assert out.forfeited == 0 and out.winners == [1]
    # Back after the grace.
    again = await bots(raw("first"), server, "victim")
    procs.append(again)
    await connected(server, "victim")
    await printed([again], "welcome")
    await asyncio.sleep(QUIET)  # a negative check: nothing else may arrive meanwhile
    assert [next(iter(m)) for m in messages(again.out)] == ["welcome"]
    assert not server.referee.lobby.orphans.get("victim")
    assert server.referee.lobby.connected("victim") == 1
    # It is a free stream: the next game seats it afresh and runs to the end.
    nxt = await play(server.referee, spec("next", ["victim", "other"]))
    assert nxt.termination in ("TERMINATION_NORMAL", "TERMINATION_CHINCHON")
    started = [m["gameStarted"] for m in messages(again.out) if "gameStarted" in m]
    assert [(x["gameId"], x.get("resumed", False)) for x in started] == [("next", False)]


async def test_absent_bot_forfeits_with_no_show(servers: StartServer, bots: SpawnBot) -> None:
    server = await servers(["here", "absent"])
    await bots(sdk("greedy"), server, "here")
    await connected(server, "here")
    s = spec("noshow", ["here", "absent"], policies=Policies(reconnect_grace=0.3))
    out = await play(server.referee, s)
    assert out.termination == "TERMINATION_FORFEIT_NO_SHOW"
    assert out.forfeited == 1 and out.winners == [0]
    replay(out.record)  # a valid record with no actions
    # The present bot is free again for the next game.
    assert server.referee.lobby.connected("here") == 1
