"""Two `chinchon serve --shared` processes on one PostgreSQL database play one ladder,
as a cluster: declared through one, it runs on both (the other reads it at a heartbeat);
each bot has a stream on each; both processes seat and rate games, every game's rating
update is applied once whichever process played it, the ratings equal a replay of the
stored games, and no bot ever sits at two tables at once (its games' times never
overlap, whichever processes played them); closed through the other process, the bots
are dismissed by both. A process killed (-9) mid-game: its game is voided once its lease
runs out (never rated), and the other process seats its bots again."""

from __future__ import annotations

import json
import re
import signal
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


def _rows(url: str, lid: str) -> list[tuple[str, list[str], str, str | None, float,
                                             float | None]]:
    """Every game of ``lid``: id, players, status, owner, started, finished."""
    with psycopg.connect(url) as c:
        return [(str(g), list(json.loads(p)), str(s), o, float(a), None if b is None else float(b))
                for g, p, s, o, a, b in c.execute(
                    "SELECT id, players, status, owner, started, finished FROM ladder_games "
                    "WHERE ladder_id = %s ORDER BY started", (lid,)).fetchall()]


def _no_bot_at_two_tables(url: str, lid: str) -> None:
    """Each bot's finished games, in order of start: each began after the one before had
    ended (a table's row is begun only once its players' games are over, on any process;
    both processes run on this host, so their clocks are one)."""
    last: dict[str, tuple[str, float]] = {}
    for gid, players, status, _, started, finished in _rows(url, lid):
        if status != "finished":
            continue
        assert finished is not None
        for b in players:
            if b in last:
                before, ended = last[b]
                assert started >= ended, f"{b} at {before} and {gid} at once"
            last[b] = (gid, finished)


def _check(url: str, lid: str) -> int:
    """Once the closed ladder's games in progress have ended (they end and are rated, and
    CI saw one rated between two reads of this check): each update once, in one order,
    and the stored ratings equal to a replay of the stored games."""
    until_sync(lambda: all(s != "running" for _, _, s, *_ in _rows(url, lid)),
               "the games in progress ended", 120)
    with psycopg.connect(url) as c:
        rated = [int(r) for (r,) in c.execute(
            "SELECT rated FROM ladder_games WHERE ladder_id = %s AND status = 'finished' "
            "ORDER BY rated", (lid,)).fetchall()]
    assert rated == list(range(1, len(rated) + 1))  # each game's update once, in one order
    assert ratings_recomputed(url, lid) == len(rated)
    return len(rated)


def _create(tmp_path: Path, first: AdminCli, second: AdminCli) -> str:
    """The ladder, created through the first process; its id once the second lists it."""
    toml = tmp_path / "ladder.toml"
    toml.write_text(LADDER)
    m = re.search(r"created ladder (l-[0-9a-f]+)", first("ladder", "create", str(toml)))
    assert m
    lid = m.group(1)
    until_sync(lambda: lid in second("ladder", "list"), "the other process lists it", 30)
    return lid


def test_two_processes_play_one_ladder_and_rate_each_game_once(tmp_path: Path, url: str) -> None:
    shared = Shared(tmp_path, url, 2)
    try:
        first, second = (AdminCli(tmp_path, p) for p in shared.ports)
        lid = _create(tmp_path, first, second)
        shared.launch(BOTS)
        until_sync(lambda: len(_owners(url, lid)) == 2 and rated(first, lid) >= 10,
                   "games rated by both processes", 180, lambda: _owners(url, lid))
        assert "is now closed" in second("ladder", "close", lid)
        for p in shared.bots:  # dismissed by both processes
            assert p.wait(90) == 0
        assert _check(url, lid) >= 10
        _no_bot_at_two_tables(url, lid)
    finally:
        shared.close()


def test_a_process_killed_mid_game_has_its_game_voided_and_its_bots_seated_again(
        tmp_path: Path, url: str) -> None:
    shared = Shared(tmp_path, url, 2)
    try:
        first, second = (AdminCli(tmp_path, p) for p in shared.ports)
        lid = _create(tmp_path, first, second)
        victim, survivor = shared.servers
        victim_name = victim._listening()[0]["process"]
        survivor_name = survivor._listening()[0]["process"]
        shared.launch(BOTS)

        def frozen_mid_game() -> bool:
            """Both processes have rated games, then the victim is frozen (SIGSTOP) with
            a game running: what the store holds then is what the kill leaves. A victim
            caught between two games is let go and caught again."""
            if len(_owners(url, lid)) < 2:
                return False
            victim.proc.send_signal(signal.SIGSTOP)
            if any(s == "running" and o == victim_name for *_, s, o, _a, _b in _rows(url, lid)):
                return True
            victim.proc.send_signal(signal.SIGCONT)
            return False

        until_sync(frozen_mid_game, "both processes playing", 180, lambda: _owners(url, lid))
        lost = {g: ps for g, ps, s, o, *_ in _rows(url, lid)
                if s == "running" and o == victim_name}
        rated_before = rated(second, lid)
        victim.kill9()
        lost_bots = {b for ps in lost.values() for b in ps}

        def seated_again() -> bool:
            rows = {g: (ps, s, o, a) for g, ps, s, o, a, _ in _rows(url, lid)}
            if any(rows[g][1] != "void" for g in lost):
                return False
            t_void = max(rows[g][3] for g in lost)
            again = Counter(b for ps, s, o, a in rows.values()
                            if s == "finished" and o == survivor_name and a > t_void
                            for b in ps)
            return all(again[b] >= 2 for b in lost_bots)

        until_sync(seated_again, "the lost game voided and its bots playing on", 120,
                   lambda: _rows(url, lid)[-4:])
        assert rated(second, lid) > rated_before
        assert "is now closed" in second("ladder", "close", lid)
        # The lost game was never rated; every update once; no bot at two tables.
        with psycopg.connect(url) as c:
            for g in lost:
                (status, r), = c.execute("SELECT status, rated FROM ladder_games WHERE id = %s",
                                         (g,)).fetchall()
                assert (status, r) == ("void", None)
        _check(url, lid)
        _no_bot_at_two_tables(url, lid)
        err = survivor.err.read_text(encoding="utf-8")
        assert "ladder_games_voided" in err, err[-3000:]
    finally:
        shared.close()
