"""The C++ sample bot (sample_bots/cpp), built with CMake from the repository's protos
and played for real: the conformance check, a practice session with the token from the
environment, a reconnect to a restarted referee, a tournament against the Python
and Node bots, and two referees at once (several addresses in ``--target``).

The build needs the distribution's C++ gRPC toolchain (``.ci/run`` installs it). Under
CI (``CI=true``) a missing toolchain fails these tests; elsewhere they are skipped with
the command that installs it.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from chinchon_referee.service.server import RunningServer

from tests.support.fixture_types import SpawnBot, SpawnChild, StartEnv, StartServer
from tests.support.helpers import NODE_BOT, ROOT, BotProc, bot_token, play, spec, stop
from tests.support.serve import ALICE, serve
from tests.support.several import play_both, start_bot, two_referees
from tests.support.waits import until

CLI = [sys.executable, "-m", "chinchon_referee.cli"]
def test_cpp_bot_passes_the_conformance_check(cpp_bot: Path, tmp_path: Path) -> None:
    report = tmp_path / "report.json"
    proc = subprocess.run(
        [*CLI, "practice", "--games", "4", "--json", str(report), "--out", str(tmp_path / "out"),
         "--", str(cpp_bot)],
        capture_output=True, text=True, timeout=300, cwd=ROOT,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "PASS" in proc.stdout
    data = json.loads(report.read_text())
    assert data["clean"] and len(data["games"]) == 4 and not data["incidents"], data


@pytest.mark.parametrize("server", [["cpp"]], indirect=True)
async def test_cpp_bot_practices_with_the_token_from_the_environment(
    cpp_bot: Path, server: RunningServer, children: SpawnChild,
) -> None:
    bot = await children(
        [str(cpp_bot), "--practice", "greedy", "--games", "2"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        env=dict(os.environ, CHINCHON_TARGET=server.target, CHINCHON_TOKEN=bot_token("cpp")),
    )
    rc = await bot.wait(120)
    err = "".join(bot.err)
    assert rc == 0, err
    assert "welcome cpp" in err
    assert err.count(" ended: ") == 2, err
    assert "rejected" not in err and "timeout" not in err, err


@pytest.mark.parametrize("server", [["cpp"]], indirect=True)
async def test_cpp_bot_refuses_a_bad_command_line_and_a_bad_token(
    cpp_bot: Path, server: RunningServer,
) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("CHINCHON_")}
    usage = subprocess.run([str(cpp_bot), "--token", "x"], capture_output=True, text=True,
                           timeout=30, env=env)
    assert usage.returncode == 2 and "CHINCHON_TARGET" in usage.stderr
    for args, says in ((["--games", "5x"], "--games"), (["--games", "0"], "--games"),
                       (["--bogus"], "unknown option --bogus"), (["--target"], "needs a value")):
        bad = subprocess.run([str(cpp_bot), "--target", "h:1", "--token", "t", *args],
                             capture_output=True, text=True, timeout=30, env=env)
        assert bad.returncode == 2 and says in bad.stderr, (args, bad.stderr)

    refused = await asyncio.to_thread(
        subprocess.run, [str(cpp_bot), "--target", server.target, "--token", "wrong"],
        capture_output=True, text=True, timeout=60, env=env)
    assert refused.returncode == 3, refused.stderr
    assert "token refused" in refused.stderr


def test_cpp_bot_practices_over_tls_trusting_the_given_certificate(
    cpp_bot: Path, tmp_path: Path
) -> None:
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", str(key),
         "-out", str(cert), "-days", "1", "-subj", "/CN=localhost",
         "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1"],
        check=True, capture_output=True, timeout=60,
    )
    with serve(tmp_path, "--tls-cert", str(cert), "--tls-key", str(key)) as (_, port):
        proc = subprocess.run(
            [str(cpp_bot), "--target", f"localhost:{port}", "--token", ALICE,
             "--tls-roots", str(cert), "--practice", "random", "--games", "1"],
            capture_output=True, text=True, timeout=120,
        )
    assert proc.returncode == 0, proc.stderr
    assert "welcome alice" in proc.stderr and " ended: " in proc.stderr
    unreadable = subprocess.run(
        [str(cpp_bot), "--target", "localhost:1", "--token", "t",
         "--tls-roots", str(tmp_path / "missing.pem")],
        capture_output=True, text=True, timeout=30,
    )
    assert unreadable.returncode == 2 and "--tls-roots: cannot read" in unreadable.stderr


async def lines(bot: BotProc, text: str, count: int, timeout: float = 60) -> None:
    """Wait until the bot has logged ``count`` lines containing ``text``."""
    def logged() -> bool:
        return sum(text in line for line in bot.err) >= count

    await until(lambda: logged() or bot.proc.returncode is not None,
                f"{count} x {text!r} logged", timeout, lambda: "".join(bot.err))
    if not logged():
        raise AssertionError(f"{count} x {text!r} not logged: {''.join(bot.err)}")


async def test_cpp_bot_reconnects_to_a_restarted_referee_and_plays_on(
    cpp_bot: Path, servers: StartServer, children: SpawnChild,
) -> None:
    """The referee goes away (its streams end UNAVAILABLE) and comes back on the same
    port: the bot dials again on a fresh channel, says hello and plays a game."""

    first = await servers(["cpp"])
    bot = await children([str(cpp_bot), "--target", first.target, "--token", bot_token("cpp")],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    await lines(bot, "welcome cpp", 1)
    await first.stop(grace=0.5)
    await lines(bot, "stream lost", 1)
    second = await servers(["cpp"], first.referee.config, port=first.port)
    await lines(bot, "welcome cpp", 2)
    outcome = await play(second.referee, spec("after-restart", ["cpp", "house:greedy"]))
    assert outcome.termination in ("TERMINATION_NORMAL", "TERMINATION_CHINCHON"), "".join(bot.err)
    # The bot says so once it has read the game's end (its stderr is read as it comes).
    await lines(bot, "game after-restart ended", 1)
    await second.stop(grace=0.5)


async def test_cpp_and_node_bots_play_under_the_house_rules(
    cpp_bot: Path, servers: StartServer, bots: SpawnBot,
) -> None:
    """The wild 1O, a joker, one joker per meld and no first-round close (docs/bots.md:
    both sample bots read wild_cards as jokers and only send listed actions): two games,
    seats swapped, nothing refused, no timeout, and the records replay under the rules."""
    from chinchon.engine import RuleSet, replay

    from tests.support.helpers import node_bot
    from tests.support.referee import connected

    rules = RuleSet(wild_cards=("1O",), jokers=1, jokers_per_meld=1, close_first_round=False,
                    score_limit=40)
    server = await servers(["cpp", "js"])
    cpp = await bots([str(cpp_bot), "--target", server.target, "--token", bot_token("cpp")],
                     server, "cpp")
    js = await bots(node_bot(), server, "js")
    await connected(server, "cpp", "js")
    outs = [await play(server.referee, spec(f"house-{i}", seats, seed=f"house-{i}", rules=rules))
            for i, seats in enumerate((["cpp", "js"], ["js", "cpp"]))]
    for out in outs:
        assert out.termination in ("TERMINATION_NORMAL", "TERMINATION_CHINCHON"), out
        assert all(s.illegal == 0 and s.timeouts == 0 and s.decisions > 0 for s in out.stats)
        assert replay(out.record).state.rules == rules
        assert out.record["rules"]["wildCards"] == ["1O"]
    await stop(cpp, js)


def test_python_node_and_cpp_bots_play_one_tournament(cpp_bot: Path, tmp_path: Path) -> None:
    assert (NODE_BOT.parent / "node_modules").is_dir(), "run: npm ci --prefix sample_bots/node"
    toml = tmp_path / "three.toml"
    toml.write_text(f"""
name = "Three languages"
table_size = 2
games_per_pairing = 2
duplicate_deals = true
concurrency = 2
start = "when_connected"
seed = "three-languages"

[rules]
score_limit = 50

[time_control]
per_move = 2.0
bank = 20.0

[[participants]]
name = "python"
command = ["{{python}}", "-m", "chinchon.sdk", "--bot", "greedy"]

[[participants]]
name = "node"
command = ["node", {json.dumps(str(NODE_BOT))}]

[[participants]]
name = "cpp"
command = [{json.dumps(str(cpp_bot))}]
""", encoding="utf-8")
    results = tmp_path / "results"
    proc = subprocess.run(
        [*CLI, "tournament", "run", str(toml), "--results", str(results),
         "--db", str(tmp_path / "three.sqlite3"), "--quiet", "--log-level", "info",
         "--log-format", "json"],
        capture_output=True, text=True, timeout=300, cwd=tmp_path,
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    # Dismissed at the end, the three bots exited 0 by themselves.
    logs = [json.loads(ln) for ln in proc.stderr.splitlines() if ln.startswith("{")]
    exits = [e for e in logs if e["event"] == "bot_exited"]
    assert {e["bot"] for e in exits} == {"cpp", "node", "python"}, exits
    assert all(e["code"] == 0 and e["by_itself"] for e in exits), exits
    cpp_log = "".join(p.read_text(encoding="utf-8") for p in (results / "logs").glob("cpp.*.log"))
    assert "dismissed by the referee (DISMISS_REASON_GAMES_PLAYED)" in cpp_log, cpp_log[-2000:]
    st = json.loads((results / "standings.json").read_text(encoding="utf-8"))
    assert st["games"] == 6
    assert sorted(r["bot"] for r in st["rows"]) == ["cpp", "node", "python"]
    for r in st["rows"]:
        assert r["games"] == 4, r
        assert r["forfeits"] == 0 and r["timeouts"] == 0 and r["illegal_actions"] == 0, r
    for rec in (results / "records").glob("*.json"):
        result = json.loads(rec.read_text(encoding="utf-8"))["result"]
        assert result["termination"] in ("TERMINATION_NORMAL", "TERMINATION_CHINCHON"), result


async def test_cpp_bot_plays_two_referees_tournaments_and_exits_0(
    cpp_bot: Path, envs: StartEnv, bots: SpawnBot, children: SpawnChild,
) -> None:
    """Several referee processes (docs/bots.md): started once with two addresses, the bot
    holds one stream on each of two independent referees, plays both tournaments to the
    end (every game normal) and, dismissed by both, exits 0."""
    sides = await two_referees(envs, bots, "cpp")
    bot = await start_bot(children, [str(cpp_bot), "--target", f"{sides[0].target},{sides[1].target}"],
                          "cpp", None)
    await play_both(sides, "cpp", bot)
    err = "".join(bot.err)
    for side in sides:
        assert f"[{side.target}] dismissed by the referee (DISMISS_REASON_GAMES_PLAYED)" in err, err
        assert err.count(f"[{side.target}] game t-") == 2 * side.games, err  # started, ended
    assert "every stream has ended: 4 games" in err, err


async def test_cpp_bot_treats_a_refused_token_at_one_address_as_fatal(
    cpp_bot: Path, envs: StartEnv, bots: SpawnBot, children: SpawnChild,
) -> None:
    """Referee b does not know the bot's token: the bot exits 3 at once, naming b, though
    a accepted it. Several addresses and --practice: a usage error."""
    (a,) = await two_referees(envs, bots, "cpp", sides=("a",))
    b = await envs("b")
    bot = await start_bot(children, [str(cpp_bot)], "cpp", f"{a.target},{b.server.target}")
    assert await bot.wait(20) == 3, "".join(bot.err)
    assert f"token refused by the referee at {b.server.target}" in "".join(bot.err)
    usage = await asyncio.to_thread(
        subprocess.run, [str(cpp_bot), "--target", "h:1,k:2", "--token", "t", "--practice", "greedy"],
        capture_output=True, text=True, timeout=30)
    assert usage.returncode == 2 and "--practice plays on one referee" in usage.stderr, usage.stderr
