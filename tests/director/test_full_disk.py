"""A full disk loses no result. On a real full filesystem (a small
tmpfs, tests/support/small_disk.py) the games in progress finish, their results wait in memory,
no new game starts, and the organizer is told (the log, GetServerStatus, the web view,
the tournament's events); once space is back every result is written, each game once.
PostgreSQL's full disk (its tablespace on a full tmpfs: SQLSTATE 53100) is mapped and
shown the same way."""

from __future__ import annotations

import asyncio
import json
import os
import secrets
import shutil
import sqlite3
import tempfile
from collections.abc import AsyncIterator, Iterator
from dataclasses import asdict
from pathlib import Path

import aiohttp
import psycopg
import pytest
from chinchon.engine import Outcome, RuleSet, Termination, new_game
from chinchon.v1 import tournament_pb2 as tpb
from chinchon_referee.director.game_rows import GameRows
from chinchon_referee.referee import SeatStats
from chinchon_referee.service.tournaments import server_status
from chinchon_referee.storage import GameRow, StoreFull, TournamentRow
from chinchon_referee.storage.health import StoreState
from chinchon_referee.storage.postgres import PostgresStore
from chinchon_referee.tournament.model import TournamentSpec
from chinchon_referee.vocabulary import TournamentStatus
from chinchon_referee.web import RunningWeb, WebContext, start_web

from tests.support.fixture_types import SpawnBot
from tests.support.helpers import sdk_bot
from tests.support.postgres import Cluster
from tests.support.small_disk import SmallDisk, small_disk
from tests.support.tournament import InProcess, spec_dict
from tests.support.waits import until, until_async

#: A negative check's window: no game may start meanwhile.
QUIET = 1.0
FULL_TEXT = "the database cannot take results now"
BACK_TEXT = "the database takes results again"


@pytest.fixture
async def disk_env(tmp_path: Path) -> AsyncIterator[tuple[InProcess, SmallDisk, RunningWeb]]:
    """An in-process referee and director whose SQLite database is on a 16 MB tmpfs, with
    its web view."""
    with small_disk(tmp_path / "disk", "16m") as disk:
        env = await InProcess.start(disk.path)
        web = await start_web(WebContext(referee=env.server.referee, db=env.store.path,
                                         store_health=env.director.rows.health))
        try:
            yield env, disk, web
        finally:
            disk.free()  # the store may write as it closes
            await web.stop()
            await env.close()


async def _home(web: RunningWeb) -> dict[str, object]:
    async with aiohttp.ClientSession() as http, http.get(web.url.rstrip("/") + "/api/home") as r:
        assert r.status == 200
        return dict(json.loads(await r.read()))


def _checkpoint(db: str) -> bool:
    """Empty the write-ahead log into the database file (so that any later write must
    grow a file): True once done."""
    con = sqlite3.connect(db, timeout=5)
    try:
        busy, _, _ = con.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
        return bool(busy == 0)
    finally:
        con.close()


async def test_a_full_disk_loses_no_result_and_starts_no_game(
    disk_env: tuple[InProcess, SmallDisk, RunningWeb], bots: SpawnBot,
) -> None:
    env, disk, web = disk_env
    spec = TournamentSpec.from_dict(spec_dict(
        "full", ["a", "b"], games_per_pairing=16, concurrency=2,
        rules={"score_limit": 30}, policies={"reconnect_grace": 10.0}))
    tid, _ = env.director.create(spec)
    for b in ("a", "b", "a", "b"):  # two streams each: two games at once
        await bots(sdk_bot("greedy"), env.server, b)
    await until(lambda: all(env.server.referee.lobby.connected(b) == 2 for b in "ab"),
                "the bots' streams", 30)
    health = env.director.rows.health
    env.watch(tid)
    run = asyncio.ensure_future(env.director.run(tid))
    await until(lambda: len(env.ended()) >= 2, "two games recorded", 120)
    await until(lambda: _checkpoint(env.store.path), "the WAL emptied", 30)
    disk.fill()

    # Told: a write failed for lack of space.
    await until(lambda: health.problem is not None, "a write to fail on the full disk", 120)
    status = server_status(env.director)
    assert status.store == tpb.STORE_STATE_FULL and "disk is full" in status.store_problem
    assert status.store_problem_since.seconds > 0
    # The web process hears of it on its feed, a moment later.
    async def web_says_full() -> bool:
        store = (await _home(web)).get("store")
        return isinstance(store, dict) and store.get("state") == StoreState.FULL.value

    await until_async(web_says_full, "the web view to say the disk is full", 60)
    # The games in progress finish; nothing starts while the disk stays full.
    await until(lambda: env.server.referee.games_running == 0, "the games in progress to end", 120)
    waiting = health.waiting
    await asyncio.sleep(QUIET)
    assert health.problem is not None and env.server.referee.games_running == 0
    assert health.waiting == waiting
    assert server_status(env.director).results_waiting == waiting

    disk.free()
    await asyncio.wait_for(run, 300)
    await env.watched()
    games = env.store.games(tid)
    assert len(games) == 16 and all(g.status == "finished" and g.record for g in games)
    assert set(env.ended().values()) == {1} and len(env.ended()) == 16
    assert health.problem is None and health.waiting == 0
    async def web_says_ok() -> bool:
        return (await _home(web)).get("store") is None

    await until_async(web_says_ok, "the web view to say the store is back", 60)
    assert server_status(env.director).store == tpb.STORE_STATE_OK
    # The watchers heard it both ways, and no game started between the two.
    texts = [e.message for e in env.events]
    assert any(t.startswith(FULL_TEXT) for t in texts) and BACK_TEXT in texts
    full = False
    for t in texts:
        if t.startswith(FULL_TEXT):
            full = True
        elif t == BACK_TEXT:
            full = False
        elif full:
            assert " started: " not in t, f"a game started while the disk was full: {t}"


@pytest.fixture
def full_pg(tmp_path: Path, pg_cluster: Cluster) -> Iterator[tuple[str, SmallDisk]]:
    """A database of the session's PostgreSQL cluster whose tables live in a tablespace on
    a 64 MB tmpfs (owned by the server's own user): its URL, and the disk."""
    owner = "postgres" if os.geteuid() == 0 else None
    # Outside the test's folder, which the server's user may not enter.
    top = Path(tempfile.mkdtemp(prefix="chinchon-pgdisk-"))
    top.chmod(0o755)
    with small_disk(top / "disk", "64m", owner) as disk:
        name = f"full_{tmp_path.name[-20:].replace('-', '_').lower()}"
        space = f"space_{name}"
        with psycopg.connect(pg_cluster.url(), autocommit=True) as admin:
            admin.execute(f"CREATE TABLESPACE {space} LOCATION '{disk.path}'")  # type: ignore[arg-type]
            admin.execute(f"CREATE DATABASE {name} TABLESPACE {space}")  # type: ignore[arg-type]
        try:
            yield pg_cluster.url(name), disk
        finally:
            disk.free()
            with psycopg.connect(pg_cluster.url(), autocommit=True) as admin:
                admin.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")  # type: ignore[arg-type]
                admin.execute(f"DROP TABLESPACE IF EXISTS {space}")  # type: ignore[arg-type]
    shutil.rmtree(top, ignore_errors=True)


async def test_postgresql_s_full_disk_is_mapped_shown_and_the_result_written_later(
    full_pg: tuple[str, SmallDisk],
) -> None:
    """A game's end written while PostgreSQL's disk is full fails with StoreFull (not an
    unknown error); the director's rows keep the result, say the disk is full (what
    GetServerStatus and the web view show), and write it once space is back."""
    url, disk = full_pg
    store = PostgresStore(url, exclusive=True)
    rows = GameRows(store, None)
    try:
        store.create_tournament(TournamentRow("t", "t", {}, TournamentStatus.RUNNING, 0.0),
                                [GameRow("t-g0", "t", 0, ["a", "b"], "d0")])
        game = GameRow("t-g0", "t", 0, ["a", "b"], "d0")
        assert await rows.begin(game, False) == 0
        disk.fill()
        with pytest.raises(StoreFull) as err:
            # Records of many kilobytes until a page must be added: the table cannot grow.
            for i in range(2000):
                store.create_tournament(  # random text: compressed, it stays as large
                    TournamentRow(f"x{i}", "x", {"pad": secrets.token_hex(4000)},
                                  TournamentStatus.SCHEDULED, 0.0), [])
        assert "disk is full" in str(err.value)
        game.result = Outcome.of(new_game(RuleSet()), ["a", "b"], Termination.ABORTED)
        game.record = {"gameId": game.id, "pad": secrets.token_hex(20000)}
        game.stats = [asdict(SeatStats()), asdict(SeatStats())]
        finishing = asyncio.ensure_future(rows.finish(game, lambda: False))
        await until(lambda: rows.health.problem is not None and rows.health.waiting == 1,
                    "the result to wait", 30)
        assert rows.health.state is StoreState.FULL
        assert not finishing.done()
        disk.free()
        await asyncio.wait_for(finishing, 60)
        assert rows.health.problem is None and rows.health.waiting == 0
        stored = store.game("t-g0")
        assert stored is not None and stored.status == "finished"
        assert stored.record == game.record
    finally:
        store.close()
