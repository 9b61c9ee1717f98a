"""The SDK writes one line per finished game to stderr: game id, seat, opponent(s),
result and the bot's own points, so whoever runs a bot can tell that it is alive.
Real referee on port 0, real ``python -m chinchon.sdk`` processes."""

from __future__ import annotations

import re

import pytest
from chinchon_referee.service.server import RunningServer

from tests.support.fixture_types import SpawnBot
from tests.support.helpers import BotProc, play, sdk_bot, spec
from tests.support.waits import until

LINE = re.compile(
    r"^chinchon: game (?P<game>\S+) seat (?P<seat>\d) vs (?P<opp>.+): "
    r"(?P<outcome>won|lost|draw), (?P<points>-?\d+) points"
)


async def _line_about(proc: BotProc, game_id: str, timeout: float = 60) -> str:
    """The stderr line about ``game_id`` once it is there (waits on the line, bounded)."""
    def about() -> list[str]:
        return [ln for ln in proc.err if f"game {game_id} " in ln]

    await until(about, f"a line about {game_id} on stderr", timeout, lambda: list(proc.err)[-10:])
    return about()[0].rstrip("\n")


@pytest.mark.parametrize("server", [["alice", "bob"]], indirect=True)
async def test_sdk_writes_one_line_per_game_to_stderr(server: RunningServer, bots: SpawnBot) -> None:
    procs = [await bots(sdk_bot("greedy"), server, n) for n in ("alice", "bob")]
    await server.referee.lobby.wait_all(["alice", "bob"], 120)
    results = []
    for gid in ("line-1", "line-2"):
        out = await play(server.referee, spec(gid, ["alice", "bob"], seed=gid))
        results.append((gid, out))
    for seat, (_name, other) in enumerate((("alice", "bob"), ("bob", "alice"))):
        for gid, out in results:
            line = await _line_about(procs[seat], gid)
            m = LINE.match(line)
            assert m, line
            assert m["game"] == gid and int(m["seat"]) == seat and m["opp"] == other
            winners = list(out.winners)
            want = ("won" if winners == [seat] else "draw" if seat in winners
                    else "lost")
            assert m["outcome"] == want, (line, winners)
            assert int(m["points"]) == out.record["result"]["totals"][seat], line
        lines = [ln for ln in procs[seat].err if ln.startswith("chinchon: game ")]
        assert len(lines) == 2, lines  # one per game, no more
