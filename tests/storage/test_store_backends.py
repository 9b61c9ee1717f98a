"""The Store contract, run alike on SQLite and on a real PostgreSQL server: every query
of the referee means the same on both; each refuses a database it cannot use with a
clear StoreError; one server per database."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest
from chinchon.engine import GameEnd, Outcome, Termination
from chinchon_referee.storage import (
    SCHEMA_VERSION,
    GameRow,
    SqlStore,
    StoreError,
    TournamentRow,
    open_store,
)
from chinchon_referee.storage.ladders import LadderRow, LadderStatus
from chinchon_referee.storage.sql import TABLES
from chinchon_referee.vocabulary import GameStatus, TournamentStatus

from tests.support.waits import until_sync

BACKENDS = ["sqlite", "postgres"]


@pytest.fixture(params=BACKENDS)
def target(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """Where a new, empty database of each backend is."""
    if request.param == "sqlite":
        return str(tmp_path / "store.sqlite3")
    return str(request.getfixturevalue("pg_url"))


@pytest.fixture
def store(target: str) -> Iterator[SqlStore]:
    s = open_store(target, exclusive=True)
    yield s
    s.close()


def run_sql(target: str, script: str) -> None:
    """Run ``script`` (statements separated by ';') on the database at ``target``, with
    the database's own driver: what another program, or an older referee, would do."""
    if target.startswith("postgresql://"):
        with psycopg.connect(target, autocommit=True) as c:
            for statement in filter(str.strip, script.split(";")):
                c.execute(statement)  # type: ignore[call-overload]
    else:
        with sqlite3.connect(target) as c:
            c.executescript(script)


def won(summary: str, winner: int = 0) -> Outcome:
    return Outcome(Termination.NORMAL, GameEnd.LAST_PLAYER, (winner,), (10, 100), 3, summary)


def games(tid: str, n: int) -> list[GameRow]:
    return [GameRow(f"{tid}-g{i:05d}", tid, i, ["a", "b"] if i % 2 else ["b", "a"],
                    f"{tid}/deal{i // 2}") for i in range(n)]


def test_a_tournament_and_its_games_round_trip(store: SqlStore) -> None:
    store.create_tournament(TournamentRow("t1", "cup", {"seed": "s", "n": 1}, TournamentStatus.SCHEDULED,
                                          time.time()), games("t1", 5))
    row = store.tournament("t1")
    assert row is not None and row.name == "cup" and row.spec == {"seed": "s", "n": 1}
    assert row.status is TournamentStatus.SCHEDULED and row.started is None
    store.set_tournament_status("t1", TournamentStatus.RUNNING)
    store.set_tournament_spec("t1", {"seed": "s2"})
    row = store.tournament("t1")
    assert row is not None and row.status is TournamentStatus.RUNNING and row.started
    assert row.spec == {"seed": "s2"}
    assert [t.id for t in store.tournaments()] == ["t1"]
    assert store.tournament("nope") is None

    got = store.games("t1")
    assert [g.seq for g in got] == [0, 1, 2, 3, 4]
    assert got[1].players == ["a", "b"] and got[1].status is GameStatus.SCHEDULED
    assert store.game_counts("t1") == (5, 0)

    done = got[0]
    store.mark_running(done.id)
    done.result, done.record, done.stats = won("a won"), {"gameId": done.id}, [{"timeouts": 1}]
    store.finish_game(done)
    again = store.games("t1")[0]
    assert again.status is GameStatus.FINISHED and again.result == won("a won")
    assert again.record == {"gameId": done.id} and again.stats == [{"timeouts": 1}]
    assert store.game_counts("t1") == (5, 1)

    # A finished game is never written again; running games are voided, then replayed.
    store.mark_running(done.id)
    store.finish_game(GameRow(done.id, "t1", 0, ["b", "a"], "x", result=won("b won", 1)))
    store.void_game(done.id)
    assert store.games("t1")[0] == again
    for g in got[1:3]:
        store.mark_running(g.id)
    assert store.void_running("t1") == 2
    after = store.games("t1")
    assert [g.status for g in after[1:3]] == [GameStatus.SCHEDULED] * 2
    assert [g.voided for g in after[1:3]] == [1, 1]


def test_practice_games_are_pruned_and_tournament_games_never(store: SqlStore) -> None:
    store.create_tournament(TournamentRow("t", "t", {}, TournamentStatus.RUNNING, time.time()),
                            games("t", 1))
    t_game = store.games("t")[0]
    t_game.result = won("kept")
    store.finish_game(t_game)
    for i in range(5):
        store.finish_game(GameRow(f"p-{i}", None, 0, ["a", "b"], "d", result=won(f"p{i}"),
                                  record={}, stats=[]))
    assert store.prune_games(2, 0) == 3
    left = {r[0] for r in store.table_rows("games")}
    assert left == {"t-g00000", "p-3", "p-4"}
    assert store.prune_games(10, time.time() + 1) == 2  # all practice games are old now
    assert {r[0] for r in store.table_rows("games")} == {"t-g00000"}


def test_bots_and_secrets_last_across_reopening(target: str) -> None:
    s = open_store(target, exclusive=True)
    s.upsert_bot("b", "d1")
    s.upsert_bot("a", "d2")
    s.upsert_bot("b", "d3")
    secret = s.secret("practice")
    assert len(secret) == 32 and s.secret("practice") == secret != s.secret("other")
    s.close()
    s = open_store(target, exclusive=True)
    try:
        assert s.bots() == [("a", "d2"), ("b", "d3")]
        assert s.secret("practice") == secret
    finally:
        s.close()


def test_a_second_server_on_the_same_database_is_refused(target: str) -> None:
    first = open_store(target, exclusive=True)
    try:
        with pytest.raises(StoreError, match="in use by another referee"):
            open_store(target, exclusive=True)
        reader = open_store(target)  # reading (`tournament standings`) is allowed
        reader.close()
    finally:
        first.close()
    open_store(target, exclusive=True).close()


def test_a_killed_server_frees_its_database(target: str) -> None:
    """kill -9 of the holder: the database is free again (the kernel drops the file
    lock; PostgreSQL ends the holder's session, and its advisory lock with it)."""
    holder = subprocess.Popen(
        [sys.executable, "-c",
         "import sys, time\nfrom chinchon_referee.storage import open_store\n"
         "s = open_store(sys.argv[1], exclusive=True)\nprint('held', flush=True)\ntime.sleep(600)",
         target], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "held\n"
        with pytest.raises(StoreError, match=f"pid {holder.pid}"):
            open_store(target, exclusive=True)
    finally:
        holder.kill()
        holder.wait()

    def free() -> bool:
        try:
            open_store(target, exclusive=True).close()
        except StoreError:
            return False
        return True

    until_sync(free, "the database stayed held after its holder died", 30)


def test_a_database_of_another_schema_version_is_refused(target: str) -> None:
    open_store(target).close()
    run_sql(target, "UPDATE meta SET value = '99' WHERE key = 'schema_version'")
    with pytest.raises(StoreError, match=f"schema version 99, this referee reads versions "
                       f"up to {SCHEMA_VERSION}"):
        open_store(target)


def test_a_database_of_another_program_is_refused_untouched(target: str) -> None:
    run_sql(target, "CREATE TABLE invoices (n INTEGER)")
    with pytest.raises(StoreError, match=r"not a referee database .*invoices"):
        open_store(target, exclusive=True)


def test_an_unreachable_server_is_a_clear_error_without_the_password(tmp_path: Path) -> None:
    url = f"postgresql://u:s3cret@/db?host={tmp_path}&port=1"
    with pytest.raises(StoreError) as err:
        open_store(url)
    assert "cannot connect" in str(err.value)
    assert "s3cret" not in str(err.value) and "u:***@" in str(err.value)


V1_GAMES = """CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE bots (name TEXT PRIMARY KEY, token_digest TEXT NOT NULL, created {real} NOT NULL);
CREATE TABLE tournaments (id TEXT PRIMARY KEY, name TEXT NOT NULL, spec TEXT NOT NULL,
    status TEXT NOT NULL, created {real} NOT NULL, started {real}, finished {real});
CREATE TABLE games (id TEXT PRIMARY KEY, tournament_id TEXT, seq INTEGER NOT NULL,
    players TEXT NOT NULL, deal_id TEXT NOT NULL, status TEXT NOT NULL,
    voided INTEGER NOT NULL DEFAULT 0, result TEXT, record TEXT, stats TEXT,
    started {real}, finished {real});
INSERT INTO meta VALUES ('schema_version', '1');
INSERT INTO tournaments VALUES ('t1', 'old cup', '{{}}', 'finished', 1.0, 2.0, 3.0);
INSERT INTO games (id, tournament_id, seq, players, deal_id, status, result, record, stats)
    VALUES ('t1-g00000', 't1', 0, '["a", "b"]', 't1/deal0', 'finished', NULL, '{{}}', '[]')"""


def test_a_database_of_the_previous_schema_version_is_upgraded(target: str) -> None:
    """A version 1 database (no game owners or leases) opens: its columns are added, its
    rows kept, and it says the current version from then on."""
    pg = target.startswith("postgresql://")
    run_sql(target, V1_GAMES.format(real="DOUBLE PRECISION" if pg else "REAL"))
    store = open_store(target, exclusive=True)
    try:
        (t,) = store.tournaments()
        assert t.name == "old cup" and t.status is TournamentStatus.FINISHED
        (g,) = store.games("t1")
        assert g.status is GameStatus.FINISHED and g.players == ["a", "b"]
        assert dict((k, v) for k, v in store.table_rows("meta"))["schema_version"] == SCHEMA_VERSION
        assert store.claim_game("t1-g00000", "p", 5.0) is False  # finished stays finished
    finally:
        store.close()
    open_store(target).close()  # and opens again as it is


def test_each_game_is_claimed_by_exactly_one_of_several_processes(target: str) -> None:
    """Three stores (as three referee processes would hold) claim the same 200 games in
    different orders, at once: each game goes to exactly one."""
    import random
    import threading

    first = open_store(target)
    first.create_tournament(TournamentRow("t", "t", {}, TournamentStatus.RUNNING, time.time()),
                            games("t", 200))
    stores = [first, open_store(target), open_store(target)]
    won_by: dict[str, list[str]] = {}
    lock = threading.Lock()
    go = threading.Barrier(len(stores))

    def claim_all(i: int) -> None:
        ids = [g.id for g in games("t", 200)]
        random.Random(i).shuffle(ids)
        go.wait()
        for gid in ids:
            if stores[i].claim_game(gid, f"p{i}", 30.0):
                with lock:
                    won_by.setdefault(gid, []).append(f"p{i}")

    threads = [threading.Thread(target=claim_all, args=(i,)) for i in range(len(stores))]
    try:
        for t in threads:
            t.start()
        for t in threads:
            t.join(60)
        assert sorted(won_by) == sorted(g.id for g in games("t", 200))
        assert all(len(owners) == 1 for owners in won_by.values())
        assert all(g.status is GameStatus.RUNNING for g in first.games("t"))
        # None is scheduled still (what a process reads to prune its list of games).
        assert first.still_scheduled([g.id for g in games("t", 200)]) == set()
        assert first.still_scheduled([]) == set()
    finally:
        for s in stores:
            s.close()


def test_a_lease_that_runs_out_voids_its_game_for_another_process(target: str) -> None:
    a, b = open_store(target), open_store(target)
    try:
        a.create_tournament(TournamentRow("t", "t", {}, TournamentStatus.RUNNING, time.time()),
                            games("t", 3))
        assert a.claim_game("t-g00000", "a", 0.05) and a.claim_game("t-g00001", "a", 60.0)
        assert not b.claim_game("t-g00000", "b", 60.0)
        until_sync(lambda: b.void_expired() == 1, "the short lease did not run out", 10)
        by_id = {g.id: g for g in b.games("t")}
        assert by_id["t-g00000"].status is GameStatus.SCHEDULED and by_id["t-g00000"].voided == 1
        assert by_id["t-g00001"].status is GameStatus.RUNNING  # its lease is alive
        assert b.claim_game("t-g00000", "b", 60.0)  # played again, by the other process
        assert a.renew_leases("a", 60.0) == 1 and b.renew_leases("b", 60.0) == 1
        row = by_id["t-g00001"]
        row.result = won("a won")
        a.finish_game(row)
        assert a.renew_leases("a", 60.0) == 0  # nothing left to renew
    finally:
        a.close()
        b.close()


def test_records_are_stored_compressed_and_read_back_whole(store: SqlStore) -> None:
    """A record is stored deflated, at least 4x smaller than its JSON, and read back as
    the same document."""
    import json

    from chinchon.engine import GreedyBot, RandomBot, RuleSet, play_game

    store.create_tournament(TournamentRow("t", "t", {}, TournamentStatus.RUNNING, time.time()),
                            games("t", 3))
    docs = []
    for i, row in enumerate(store.games("t")):
        _, doc = play_game(RuleSet(), [GreedyBot(), RandomBot(i)], f"seed{i}", row.deal_id,
                           row.players)
        row.result, row.record, row.stats = won("x"), doc, []
        store.finish_game(row)
        docs.append(doc)
    assert [g.record for g in store.games("t")] == docs
    cols = list(TABLES["games"])
    for row, doc in zip(store.table_rows("games"), docs, strict=True):
        stored = row[cols.index("record_z")]
        assert row[cols.index("record")] is None
        assert 4 * len(stored) <= len(json.dumps(doc))


def test_a_snapshots_reads_all_see_one_moment_while_another_thread_writes(
        store: SqlStore) -> None:
    """A page read in several queries (the ladder's bot page) agrees with itself: the
    reads inside ``snapshot()`` see no write committed after its first read; outside
    it, the next read sees the write."""
    store.create_tournament(TournamentRow("t1", "cup", {}, TournamentStatus.SCHEDULED,
                                          time.time()), games("t1", 2))
    with store.snapshot():
        before = store.tournament("t1")
        writer = threading.Thread(
            target=store.set_tournament_status, args=("t1", TournamentStatus.RUNNING))
        writer.start()
        writer.join(timeout=30)
        assert not writer.is_alive(), "a snapshot never blocks a writer"
        with store.snapshot():  # nested: still the outer block's moment
            inside = store.tournament("t1")
    after = store.tournament("t1")
    assert before is not None and inside is not None and after is not None
    assert before.status is inside.status is TournamentStatus.SCHEDULED
    assert after.status is TournamentStatus.RUNNING


#: What a database before version 5 lacks: the ladder entrants' health.
HEALTH_DROPPED = ("ALTER TABLE ladder_entrants DROP COLUMN time_forfeits; "
                  "ALTER TABLE ladder_entrants DROP COLUMN last_time_forfeit; "
                  "ALTER TABLE ladder_entrants DROP COLUMN suspended; ")


def test_a_version_3_database_gains_the_ladder_games_lease(target: str) -> None:
    """A version 3 database (ladder games without a lease) opens: the column is added,
    a game that was running keeps running (a lease of its own comes with the process
    that plays it), and seats are refused around it as around any running game."""
    store = open_store(target, exclusive=True)
    try:
        store.create_ladder(LadderRow("l-1", "old ladder", {"name": "old ladder"},
                                      LadderStatus.OPEN, 1.0))
        for b in ("a", "b", "c"):
            store.enter_ladder("l-1", b, (25.0, 8.3))
        assert store.begin_ladder_game("l-1", "lg-1", ["a", "b"]) == set()
    finally:
        store.close()
    run_sql(target, "DROP INDEX ladder_games_running; "
                    "ALTER TABLE ladder_games DROP COLUMN lease_until; "
                    f"{HEALTH_DROPPED}"
                    "UPDATE meta SET value = '3' WHERE key = 'schema_version'")
    store = open_store(target, exclusive=True)
    try:
        assert dict((k, v) for k, v in store.table_rows("meta"))["schema_version"] == SCHEMA_VERSION
        assert store.busy_ladder_bots("l-1") == {"a": None, "b": None}
        assert store.begin_ladder_game("l-1", "lg-2", ["b", "c"]) == {"b"}
    finally:
        store.close()
    open_store(target).close()


def test_a_version_4_database_gains_the_ladder_entrants_health(target: str) -> None:
    """A version 4 database (ladder entrants without their forfeits on time in a row,
    nor a suspension) opens: the columns are added, every entrant healthy and seated."""
    store = open_store(target, exclusive=True)
    try:
        store.create_ladder(LadderRow("l-1", "old ladder", {"name": "old ladder"},
                                      LadderStatus.OPEN, 1.0))
        store.enter_ladder("l-1", "a", (25.0, 8.3))
    finally:
        store.close()
    run_sql(target, f"{HEALTH_DROPPED}UPDATE meta SET value = '4' WHERE key = 'schema_version'")
    store = open_store(target, exclusive=True)
    try:
        assert dict((k, v) for k, v in store.table_rows("meta"))["schema_version"] == SCHEMA_VERSION
        (a,) = store.entrants("l-1")
        assert (a.bot, a.time_forfeits, a.last_time_forfeit, a.suspended) == ("a", 0, None, None)
    finally:
        store.close()
