"""The database: one server per file, finished games never overwritten, and a file that
cannot be used refused with a clear error (exit 2), never a traceback or a silent start.
Real ``chinchon serve`` / ``chinchon tournament`` processes on real SQLite files.
"""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import grpc
import pytest
from chinchon.engine import GameEnd, Outcome, Termination
from chinchon.v1 import tournament_pb2 as tpb
from chinchon.v1 import tournament_pb2_grpc as tpb_grpc
from chinchon_referee.storage import GameRow, SqliteStore, StoreError, TournamentRow
from chinchon_referee.storage.rows import SCHEMA_VERSION

from tests.support.helpers import ADMIN
from tests.support.serve import Serve, free_port

CLI = [sys.executable, "-m", "chinchon_referee.cli"]
PAGE = 4096


def cli(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*CLI, *args], capture_output=True, text=True, timeout=60, cwd=cwd)


def serve_once(db: Path) -> subprocess.CompletedProcess[str]:
    return cli("serve", "--address", "127.0.0.1:0", "--db", str(db), "--admin-token", ADMIN)


def real_db(path: Path, games: int = 3000) -> None:
    """A database of this program with one tournament of ``games`` games (many pages)."""
    store = SqliteStore(str(path))
    store.create_tournament(
        TournamentRow("t1", "cup", {"name": "cup"}, "scheduled", time.time()),
        (GameRow(f"t1-g{i:05d}", "t1", i, ["a", "b"], f"t1/deal{i}") for i in range(games)),
    )
    store.close()


def damage(path: Path) -> None:
    """Overwrite pages 10 to 14 with garbage, as a failing disk or a bad copy would."""
    assert path.stat().st_size > 20 * PAGE and not Path(f"{path}-wal").exists()
    with open(path, "r+b") as f:
        f.seek(10 * PAGE)
        f.write(bytes(range(256)) * (5 * PAGE // 256))


def damaged(path: Path) -> None:
    real_db(path)
    damage(path)


def not_a_db(path: Path) -> None:
    path.write_text("these are my notes, not a database\n" * 200, encoding="utf-8")


def newer(path: Path) -> None:
    real_db(path, games=2)
    con = sqlite3.connect(path)
    con.execute("UPDATE meta SET value = '99' WHERE key = 'schema_version'")
    con.commit()
    con.close()


def foreign(path: Path) -> None:
    con = sqlite3.connect(path)
    con.execute("CREATE TABLE invoices (id INTEGER PRIMARY KEY, total REAL)")
    con.execute("INSERT INTO invoices (total) VALUES (12.5)")
    con.commit()
    con.close()


def folder(path: Path) -> None:
    path.mkdir()


# name -> (how to make the bad file, what the error says)
BAD_FILES: dict[str, tuple[Callable[[Path], None], str]] = {
    "damaged-pages": (damaged, "the database is damaged"),
    "not-a-database": (not_a_db, "not a usable SQLite database (file is not a database)"),
    "newer-schema": (newer, "database schema version 99, this referee reads versions up to "
                     f"{SCHEMA_VERSION}"),
    "foreign-database": (foreign, "not a referee database (it has tables invoices"),
    "a-folder": (folder, "cannot open the database"),
}


@pytest.mark.parametrize("case", sorted(BAD_FILES))
def test_a_bad_database_is_refused_with_exit_2_by_every_command(case: str,
                                                                tmp_path: Path) -> None:
    make, message = BAD_FILES[case]
    db = tmp_path / "bad.sqlite3"
    make(db)
    before = b"" if db.is_dir() else db.read_bytes()
    toml = tmp_path / "cup.toml"
    toml.write_text('name = "cup"\n[[participants]]\nname = "a"\n[[participants]]\n'
                    'name = "b"\n', encoding="utf-8")
    runs = {
        "serve": serve_once(db),
        "tournament run": cli("tournament", "run", str(toml), "--db", str(db), "--quiet",
                              "--results", str(tmp_path / "results"), cwd=tmp_path),
        "tournament standings": cli("tournament", "standings", str(db)),
    }
    for what, res in runs.items():
        out = " ".join((res.stdout + res.stderr).split())
        assert res.returncode == 2, (what, out[-2000:])
        assert "Traceback" not in out, (what, out[-2000:])
        assert "error:" in out and str(db) in out and message in out, (what, out[-2000:])
        assert "listening" not in out
    # Nothing was written to it.
    assert (b"" if db.is_dir() else db.read_bytes()) == before
    assert not Path(f"{db}-wal").exists() or Path(f"{db}-wal").stat().st_size == 0


def test_the_store_itself_raises_store_error(tmp_path: Path) -> None:
    for case, (make, message) in BAD_FILES.items():
        db = tmp_path / f"{case}.sqlite3"
        make(db)
        with pytest.raises(StoreError) as err:
            SqliteStore(str(db))
        assert message in str(err.value), case


def won(summary: str) -> Outcome:
    return Outcome(Termination.NORMAL, GameEnd.LAST_PLAYER, (0,), (10, 100), 3, summary)


def test_a_finished_game_is_never_overwritten(tmp_path: Path) -> None:
    """mark_running (as a second server did when it adopted a tournament), finish_game
    and the void paths leave a finished game as it was."""
    db = tmp_path / "t.sqlite3"
    real_db(db, games=3)
    store = SqliteStore(str(db))
    try:
        done = GameRow("t1-g00000", "t1", 0, ["a", "b"], "t1/deal0",
                       result=won("a won"), record={"gameId": "t1-g00000"},
                       stats=[{"seat": 0}])
        store.mark_running(done.id)
        store.finish_game(done)

        def row() -> tuple[object, ...]:
            con = sqlite3.connect(db)
            try:
                return con.execute("SELECT status, voided, result, record, stats, started, "
                                   "finished FROM games WHERE id = ?", (done.id,)).fetchone()
            finally:
                con.close()

        first = row()
        assert first[0] == "finished" and Outcome.from_json(json.loads(first[2])) == won("a won")
        store.mark_running(done.id)
        assert row() == first
        store.finish_game(GameRow(done.id, "t1", 0, ["a", "b"], "t1/deal0",
                                  result=won("b won"), record={}, stats=[]))
        assert row() == first
        store.mark_running("t1-g00001")
        assert store.void_running("t1") == 1  # only the running one
        store.void_game(done.id)
        assert row() == first
    finally:
        store.close()


def test_a_second_server_on_the_same_database_is_refused(tmp_path: Path) -> None:
    """The second ``chinchon serve`` (or ``tournament run``) exits 2 naming the database
    and the first one's pid, and changes nothing; after the first is killed with
    ``kill -9`` the lock is gone and a new server starts on the same file."""
    db = tmp_path / "ref.sqlite3"
    port = free_port()
    first = Serve(tmp_path, port, db, 1)
    try:
        md = (("authorization", f"Bearer {ADMIN}"),)
        with grpc.insecure_channel(f"127.0.0.1:{port}") as ch:
            stub = tpb_grpc.TournamentServiceStub(ch)
            made = stub.CreateTournament(tpb.CreateTournamentRequest(spec=tpb.TournamentSpec(
                name="held", participants=[tpb.Participant(name="a"), tpb.Participant(name="b")],
                seed="s")), metadata=md, timeout=30)
            con = sqlite3.connect(db)
            rows_before = con.execute("SELECT * FROM games ORDER BY id").fetchall()
            con.close()
            second = serve_once(db)
            assert second.returncode == 2, second.stderr[-2000:]
            err = " ".join(second.stderr.split())
            assert f"error: {db} is in use by another referee (pid {first.proc.pid})" in err
            assert "listening" not in second.stdout
            toml = tmp_path / "cup.toml"
            toml.write_text('name = "cup"\n[[participants]]\nname = "a"\n[[participants]]\n'
                            'name = "b"\n', encoding="utf-8")
            run = cli("tournament", "run", str(toml), "--db", str(db), "--quiet",
                      "--results", str(tmp_path / "results"), cwd=tmp_path)
            assert run.returncode == 2
            assert f"(pid {first.proc.pid})" in " ".join(run.stdout.split())
            # A reader may look while the server runs.
            standings = cli("tournament", "standings", str(db))
            assert standings.returncode == 0 and "held" in standings.stdout
            # The first server is untouched and still serves.
            listed = stub.ListTournaments(tpb.ListTournamentsRequest(), metadata=md, timeout=30)
            assert [t.id for t in listed.tournaments] == [made.tournament.id]
            con = sqlite3.connect(db)
            assert con.execute("SELECT * FROM games ORDER BY id").fetchall() == rows_before
            con.close()
        first.kill9()
        again = Serve(tmp_path, free_port(), db, 2)
        again.stop()
        assert again.proc.returncode == 0
    finally:
        first.stop()



def test_an_interrupted_creation_leaves_no_games_behind(tmp_path: Path) -> None:
    """A tournament is written in chunks, its own row last: a creation that fails part
    way removes its games, and games left by a server killed part way (no tournament
    row) are removed when the next server opens the database."""
    db = tmp_path / "t.sqlite3"
    store = SqliteStore(str(db), exclusive=True)

    def games_then_failure() -> Iterator[GameRow]:
        for i in range(5000):  # more than one chunk is written before the failure
            yield GameRow(f"t9-g{i:05d}", "t9", i, ["a", "b"], f"t9/deal{i}")
        raise OSError("disk full")

    try:
        with pytest.raises(OSError, match="disk full"):
            store.create_tournament(
                TournamentRow("t9", "cup", {}, "scheduled", time.time()), games_then_failure())
        assert store.tournament("t9") is None and store.game_counts("t9") == (0, 0)
    finally:
        store.close()
    # As if a server died while writing chunks: games with no tournament row.
    con = sqlite3.connect(db)
    con.executemany("INSERT INTO games (id, tournament_id, seq, players, deal_id, status) "
                    "VALUES (?, 't8', ?, '[\"a\", \"b\"]', 'd', 'scheduled')",
                    [(f"t8-g{i}", i) for i in range(10)])
    con.commit()
    con.close()
    SqliteStore(str(db)).close()  # a reader removes nothing
    con = sqlite3.connect(db)
    assert con.execute("SELECT COUNT(*) FROM games").fetchone() == (10,)
    con.close()
    store = SqliteStore(str(db), exclusive=True)
    try:
        assert store.game_counts("t8") == (0, 0)
    finally:
        store.close()
