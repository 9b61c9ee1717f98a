"""Two `chinchon serve --shared` processes on one PostgreSQL database play one ladder
(issue #28): declared through one, it runs on both (the other reads it at a heartbeat);
each bot has a stream on each; both processes seat and rate games, every game's rating
update is applied once whichever process played it, the ratings equal a replay of the
stored games; closed through the other process, the bots are dismissed by both."""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

import psycopg
import pytest

from tests.support.admin import AdminCli
from tests.support.helpers import bot_token
from tests.support.ladder import rated, ratings_recomputed
from tests.support.shared import Shared
from tests.support.waits import until_sync

BOTS = {"sa": "greedy", "sb": "random", "sc": "greedy", "sd": "random"}
LADDER = """name = "shared ladder"
concurrency = 2
[rules]
score_limit = 20
[time_control]
per_move = 2.0
bank = 10.0
[policies]
reconnect_grace = 5.0
""" + "".join(f'[[entrants]]\nname = "{b}"\ntoken = "{bot_token(b)}"\n' for b in BOTS)


@pytest.fixture
def url(request: pytest.FixtureRequest) -> str:
    return str(request.getfixturevalue("pg_url"))


def _owners(url: str, lid: str) -> Counter[str]:
    with psycopg.connect(url) as c:
        return Counter({str(o): int(n) for o, n in c.execute(
            "SELECT owner, COUNT(*) FROM ladder_games WHERE ladder_id = %s AND "
            "status = 'finished' GROUP BY owner", (lid,)).fetchall()})


def _check(url: str, lid: str) -> int:
    with psycopg.connect(url) as c:
        rated = [int(r) for (r,) in c.execute(
            "SELECT rated FROM ladder_games WHERE ladder_id = %s AND status = 'finished' "
            "ORDER BY rated", (lid,)).fetchall()]
    assert rated == list(range(1, len(rated) + 1))  # each game's update once, in one order
    assert ratings_recomputed(url, lid) == len(rated)
    return len(rated)


def test_two_processes_play_one_ladder_and_rate_each_game_once(tmp_path: Path, url: str) -> None:
    shared = Shared(tmp_path, url, 2)
    try:
        first, second = (AdminCli(tmp_path, p) for p in shared.ports)
        toml = tmp_path / "ladder.toml"
        toml.write_text(LADDER)
        m = re.search(r"created ladder (l-[0-9a-f]+)", first("ladder", "create", str(toml)))
        assert m
        lid = m.group(1)
        until_sync(lambda: lid in second("ladder", "list"), "the other process lists it", 30)
        shared.launch(BOTS)
        until_sync(lambda: len(_owners(url, lid)) == 2 and rated(first, lid) >= 10,
                   "games rated by both processes", 180, lambda: _owners(url, lid))
        assert "is now closed" in second("ladder", "close", lid)
        for p in shared.bots:  # dismissed by both processes
            assert p.wait(90) == 0
        assert _check(url, lid) >= 10
    finally:
        shared.close()
