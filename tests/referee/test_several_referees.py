"""A bot on several referee processes at once (docs/bots.md, "Several referee
processes"): the Python SDK and the Node sample bot, started once with two addresses,
hold one stream on each of two independent referees (real servers on port 0, each its
own SQLite store) and play both referees' tournaments to the end; a referee that goes
away does not stop the games on the other; a refused token at any address is fatal. The
C++ sample bot's tests are in test_cpp_bot.py."""

from __future__ import annotations

import asyncio
import subprocess
import sys

import pytest
from chinchon.sdk import parse_targets

from tests.support.fixture_types import SpawnBot, SpawnChild, StartEnv
from tests.support.helpers import node_bot, sdk_bot
from tests.support.several import Side, connected, play_both, start_bot, two_referees
from tests.support.waits import until


async def test_the_sdk_plays_two_referees_tournaments_and_exits_0(
        envs: StartEnv, bots: SpawnBot, children: SpawnChild) -> None:
    """Both addresses from CHINCHON_TARGET: one stream on each referee; each referee's
    tournament is played to the end, every game normal; dismissed by both, the bot exits
    0 and reports each address and the sums."""
    sides = await two_referees(envs, bots, "py")
    bot = await start_bot(children, sdk_bot("strong"), "py",
                          f"{sides[0].target},{sides[1].target}")
    await play_both(sides, "py", bot)
    err = "".join(bot.err)
    for side in sides:
        assert f"{side.target}: {side.games} games" in err and "dismissed by the referee" in err, err
        assert err.count(f" vs {side.opponent}: ") == side.games, err
    assert f"{sum(s.games for s in sides)} games, " in err, err
    assert "action refused" not in err, err  # each stream's games kept apart (lean decoders)


def _ended_on(lang: str, side: Side, err: str) -> int:
    """How many games on ``side`` the bot's stderr says ended: the SDK's game lines name
    the opponent, the Node bot's lines the address."""
    if lang == "sdk":
        return err.count(f" vs {side.opponent}: ")
    return sum(f"[{side.target}] game t-" in ln and " ended: " in ln for ln in err.splitlines())


@pytest.mark.parametrize("lang", ["sdk", "node"])
async def test_a_referee_that_goes_away_does_not_stop_the_games_on_the_other(
        lang: str, envs: StartEnv, bots: SpawnBot, children: SpawnChild) -> None:
    """Referee a stops after the bot's first game there (b's tournament under way): the
    bot's stream to a fails, retries for --reconnect-for and gives up on a alone (a
    warning), while b's tournament goes on to its end, every game normal; dismissed by
    b, the bot exits 0."""
    a, b = await two_referees(envs, bots, lang, games=4)
    command = sdk_bot("greedy") if lang == "sdk" else node_bot()
    bot = await start_bot(children, [*command, "--reconnect-for", "1",
                                     "--target", f"{a.target},{b.target}"], lang, None)
    await connected((a, b), lang)
    run_a = asyncio.ensure_future(a.env.director.run(a.tid, force_start=True))
    run_b = asyncio.ensure_future(b.env.director.run(b.tid, force_start=True))
    await until(lambda: _ended_on(lang, a, "".join(bot.err)) > 0, "a game played on a", 30,
                lambda: "".join(bot.err))
    await a.env.server.stop(0)
    assert len([g for g in b.env.store.games(b.tid) if g.result]) < b.games  # b: mid-run
    await asyncio.wait_for(run_a, 10)  # a's tournament is paused by the shutdown
    await asyncio.wait_for(run_b, 60)
    assert len(b.env.store.games(b.tid)) == b.games and b.unplayed() == [], "".join(bot.err)
    assert await bot.wait(15) == 0, "".join(bot.err)
    err = "".join(bot.err)
    assert _ended_on(lang, b, err) == b.games, err
    if lang == "sdk":
        assert f"cannot reach the referee at {a.target}; giving up on that address" in err, err
        assert f"{a.target}: " in err and "unreachable, gave up" in err, err
    else:
        assert f"[{a.target}] cannot reach the referee at {a.target}" in err, err
        assert "playing on the other addresses" in err, err


async def test_a_refused_token_at_one_address_is_fatal(
        envs: StartEnv, bots: SpawnBot, children: SpawnChild) -> None:
    """Referee b does not know the bot's token: the bot exits 1 at once, naming b's
    address, though a accepted it."""
    (a,) = await two_referees(envs, bots, "py", sides=("a",))
    b = await envs("b")
    bot = await start_bot(children, sdk_bot("greedy"), "py", f"{a.target},{b.server.target}")
    assert await bot.wait(20) == 1, "".join(bot.err)
    err = "".join(bot.err)
    assert f"error: the referee at {b.server.target} refused the bot: UNAUTHENTICATED" in err, err


async def test_the_node_bot_plays_two_referees_tournaments_and_exits_0(
        envs: StartEnv, bots: SpawnBot, children: SpawnChild) -> None:
    """The Node sample bot, both addresses in --target: as the SDK."""
    sides = await two_referees(envs, bots, "js")
    bot = await start_bot(children, [*node_bot(), "--target", f"{sides[0].target},{sides[1].target}"],
                          "js", None)
    await play_both(sides, "js", bot)
    err = "".join(bot.err)
    for side in sides:
        assert f"[{side.target}] dismissed by the referee" in err, err
        assert err.count(f"[{side.target}] game t-") == 2 * side.games, err  # started, ended
    assert "every stream has ended: 4 game(s)" in err, err


async def test_the_node_bot_treats_a_refused_token_at_one_address_as_fatal(
        envs: StartEnv, bots: SpawnBot, children: SpawnChild) -> None:
    (a,) = await two_referees(envs, bots, "js", sides=("a",))
    b = await envs("b")
    bot = await start_bot(children, node_bot(), "js", f"{a.target},{b.server.target}")
    assert await bot.wait(20) == 3, "".join(bot.err)
    err = "".join(bot.err)
    assert f"the referee at {b.server.target} refused the token (UNAUTHENTICATED" in err, err


def test_several_addresses_are_parsed_and_checked() -> None:
    assert parse_targets("h:1") == ["h:1"]
    assert parse_targets(" h:1, k:2 ") == ["h:1", "k:2"]
    assert parse_targets(["h:1", "k:2,m:3"]) == ["h:1", "k:2", "m:3"]
    for bad, says in (("h:1,", "empty"), (",", "empty"), ([], "empty"), ("h:1,h:1", "twice")):
        with pytest.raises(ValueError, match=says):
            parse_targets(bad)


@pytest.mark.parametrize("command", [[sys.executable, "-m", "chinchon.sdk"], node_bot()],
                         ids=["sdk", "node"])
def test_practice_with_several_addresses_is_a_usage_error(command: list[str]) -> None:
    proc = subprocess.run([*command, "--target", "h:1,k:2", "--token", "t" * 16,
                           "--practice", "greedy"], capture_output=True, text=True, timeout=30)
    assert proc.returncode == 2, proc.stderr
    assert "--practice plays on one referee" in proc.stderr, proc.stderr
