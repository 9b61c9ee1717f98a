"""A ladder game's result is never lost: on a real full filesystem (a small
tmpfs, tests/support/small_disk.py) the ladder games in progress end, their results and
rating updates wait in memory (counted where the organizer sees them: GetServerStatus),
no new table is seated, and once space is back each is stored and rated exactly once:
the update numbers run 1..n without a gap and the ratings equal a recomputation. The
same when PostgreSQL ends the referee's sessions (pg_terminate_backend) while a ladder
game ends."""

from __future__ import annotations

import asyncio
import logging
import os
import sqlite3
from collections.abc import AsyncIterator
from pathlib import Path

import psycopg
import pytest
from chinchon.v1 import tournament_pb2 as tpb
from chinchon_referee.auth import TokenBook
from chinchon_referee.director.director import Director
from chinchon_referee.ladder.ladders import Ladders
from chinchon_referee.ladder.spec import LadderSpec
from chinchon_referee.service.server import start_server
from chinchon_referee.service.tournaments import server_status
from chinchon_referee.storage import SqliteStore
from chinchon_referee.storage.ladders import LadderGameStatus
from chinchon_referee.storage.postgres import PostgresStore

from tests.support.fixture_types import SpawnBot
from tests.support.helpers import ADMIN
from tests.support.inproc import sdk
from tests.support.ladder_run import LADDER, LadderEnv, check_ratings, entrants
from tests.support.small_disk import SmallDisk, small_disk
from tests.support.waits import until

#: A negative check's window: no table may be seated meanwhile.
QUIET = 1.0


@pytest.fixture
async def disk_ladder(tmp_path: Path) -> AsyncIterator[tuple[LadderEnv, SmallDisk]]:
    """A referee and its ladders whose SQLite database is on a 16 MB tmpfs; the ladders
    share the director's store health (as service/tournaments.py wires them)."""
    with small_disk(tmp_path / "disk", "16m") as disk:
        tokens = TokenBook(ADMIN)
        server = await start_server("127.0.0.1:0", None, tokens)
        store = SqliteStore(str(disk.path / "ladder.sqlite3"))
        director = Director(server.referee, store, tokens)
        ladders = Ladders(server.referee, store, tokens, keep=director.remaining.declared,
                          release=lambda t, b: director.remaining.ended(t, b, cancelled=False),
                          health=director.rows.health)
        env = LadderEnv(server, store, director, ladders)
        ladders.listeners.append(env.heard)
        try:
            yield env, disk
        finally:
            disk.free()
            await server.stop(0)
            await ladders.settle(5.0)
            store.close()


def _checkpoint(db: str) -> bool:
    """Empty the write-ahead log into the database file (so that any later write must
    grow a file): True once done."""
    con = sqlite3.connect(db, timeout=5)
    try:
        busy, _, _ = con.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
        return bool(busy == 0)
    finally:
        con.close()


async def test_a_ladder_game_ending_on_a_full_disk_is_stored_and_rated_once_later(
        disk_ladder: tuple[LadderEnv, SmallDisk], bots: SpawnBot,
        caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING, logger="chinchon.ladder")
    env, disk = disk_ladder
    spec = LadderSpec.from_toml_text(LADDER + entrants(["a", "b", "c", "d"]))
    lid, _ = env.ladders.create(spec)
    env.ladders.start(lid)
    for name in "abcd":
        await bots(sdk("greedy"), env.server, name)
    await env.played(3)
    referee, health = env.server.referee, env.ladders.health
    await until(lambda: referee.games_running > 0, "a ladder game in progress", 60)
    await until(lambda: _checkpoint(env.store.path), "the WAL emptied", 30)
    disk.fill()
    # The games begun before the disk filled (their rows say running).
    begun = {g for g, s in _statuses(env.store.path, lid).items() if s == "running"}

    await until(lambda: health.problem is not None, "a write to fail on the full disk", 120)
    await until(lambda: referee.games_running == 0, "the games in progress to end", 120)
    waiting = health.waiting
    rated = len(env.rated)
    await asyncio.sleep(QUIET)  # a negative check: nothing is seated meanwhile
    assert referee.games_running == 0 and health.problem is not None
    assert health.waiting == waiting and len(env.rated) == rated
    status = server_status(env.director)
    assert status.store == tpb.STORE_STATE_FULL and status.results_waiting == waiting
    ended_waiting = {g for g in begun if g not in {r.id for r in env.rated}}
    assert waiting == len(ended_waiting) >= 1
    assert _retried(caplog), "no ladder result was tried again"

    disk.free()
    await env.until(lambda: {r.id for r in env.rated} >= ended_waiting,
                    "the waiting results stored", 120)
    await until(lambda: health.waiting == 0 and health.problem is None, "the store healthy", 60)
    await env.until(lambda: len(env.rated) >= rated + waiting + 2, "games after the disk freed")
    await env.ladders.close(lid)
    await asyncio.wait_for(env.ladders.wait(lid), 60)

    for gid in ended_waiting:
        row = env.store.ladder_game(gid)
        assert row is not None and row.status is LadderGameStatus.FINISHED and row.rated
        assert row.record is not None
    ids = [r.id for r in env.rated]
    assert len(ids) == len(set(ids))  # each rated once
    check_ratings(env, lid)  # update numbers 1..n, ratings equal a recomputation
    assert server_status(env.director).results_waiting == 0


def _statuses(db: str, lid: str) -> dict[str, str]:
    con = sqlite3.connect(db, timeout=5)
    try:
        return {str(g): str(s) for g, s in con.execute(
            "SELECT id, status FROM ladder_games WHERE ladder_id = ?", (lid,))}
    finally:
        con.close()


@pytest.fixture
async def pg_ladder(pg_url: str) -> AsyncIterator[LadderEnv]:
    """A referee and its ladders on a new PostgreSQL database (the store in this process,
    its sessions named after this process's pid)."""
    tokens = TokenBook(ADMIN)
    server = await start_server("127.0.0.1:0", None, tokens)
    store = PostgresStore(pg_url, exclusive=True)
    director = Director(server.referee, store, tokens)
    ladders = Ladders(server.referee, store, tokens, keep=director.remaining.declared,
                      release=lambda t, b: director.remaining.ended(t, b, cancelled=False),
                      health=director.rows.health)
    env = LadderEnv(server, store, director, ladders)  # type: ignore[arg-type]
    ladders.listeners.append(env.heard)
    try:
        yield env
    finally:
        await server.stop(0)
        await ladders.settle(5.0)
        store.close()


async def test_a_ladder_game_ending_while_postgresql_cuts_its_sessions_is_rated_once(
        pg_ladder: LadderEnv, pg_url: str, bots: SpawnBot,
        caplog: pytest.LogCaptureFixture) -> None:
    """PostgreSQL ends every session of this process as soon as it is made
    (pg_terminate_backend) until a ladder game's result has failed to be written and
    waits; once the cuts stop, it is stored and rated once, ratings equal to a
    recomputation."""
    caplog.set_level(logging.WARNING, logger="chinchon.ladder")
    env = pg_ladder
    spec = LadderSpec.from_toml_text(LADDER + entrants(["a", "b", "c", "d"]))
    lid, _ = env.ladders.create(spec)
    env.ladders.start(lid)
    for name in "abcd":
        await bots(sdk("greedy"), env.server, name)
    await env.played(3)
    health = env.ladders.health
    waited: list[int] = []

    def cut() -> int:
        """Cut this process's sessions until a result waits on a failed write (its
        retry logged: another write's failure can be the health's problem while a
        result's first write is still under way, and cuts stopped then could let that
        one through), or a minute passes on the database's clock: how many sessions
        were cut."""
        app, n = f"chinchon-referee pid {os.getpid()}", 0
        with psycopg.connect(pg_url, autocommit=True, application_name="cutter") as admin:
            (start,), = admin.execute("SELECT extract(epoch FROM clock_timestamp())").fetchall()
            while not waited:
                if _retried(caplog) > 0:
                    waited.append(health.waiting)
                n += admin.execute("SELECT count(pg_terminate_backend(pid)) FROM "
                                   "pg_stat_activity WHERE application_name = %s",
                                   (app,)).fetchall()[0][0]
                (now,), = admin.execute(
                    "SELECT extract(epoch FROM clock_timestamp())").fetchall()
                if float(now) - float(start) > 60:
                    break
        return n

    assert await asyncio.to_thread(cut) >= 1
    assert waited, "no ladder result waited on a failed write"
    await until(lambda: _retried(caplog) > 0, "a ladder result tried again", 30)
    rated = len(env.rated)
    await until(lambda: health.waiting == 0 and health.problem is None, "the results stored", 60)
    await env.until(lambda: len(env.rated) >= rated + 3, "games after the cuts")
    await env.ladders.close(lid)
    await asyncio.wait_for(env.ladders.wait(lid), 60)
    ids = [r.id for r in env.rated]
    assert len(ids) == len(set(ids))  # each rated once
    check_ratings(env, lid)
    counts = env.store.ladder_game_counts(lid)
    assert counts.get(LadderGameStatus.RUNNING, 0) == 0


def _retried(caplog: pytest.LogCaptureFixture) -> int:
    """How many times a ladder game's end was written again (the log says so)."""
    return sum("ladder_result_retried" in r.getMessage() for r in caplog.records)
