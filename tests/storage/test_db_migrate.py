"""PostgreSQL end to end, with real bot processes and a real server: `chinchon tournament
run --db postgresql://…` plays a tournament on it, and `chinchon db migrate` copies a
SQLite database of a real tournament into PostgreSQL with nothing lost."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import grpc
from chinchon.v1 import tournament_pb2 as tpb
from chinchon.v1 import tournament_pb2_grpc as tpb_grpc
from chinchon_referee.cli.record_files import load_record
from chinchon_referee.storage import open_store
from chinchon_referee.storage.sql import TABLES
from chinchon_referee.vocabulary import GameStatus

from tests.support.helpers import ADMIN
from tests.support.serve import Serve, admin_spec, free_port, launch_sdk_bots
from tests.support.tournament import CLI, sdk_cup
from tests.support.waits import until_sync
from tests.support.web import ServeWeb, get_json

ADMIN_MD = (("authorization", f"Bearer {ADMIN}"),)




def _run_cup(tmp_path: Path, db: str, out: str) -> None:
    toml = sdk_cup(tmp_path / "cup.toml", "Postgres cup", "pg-cup", games_per_pairing=2,
                   score_limit=40, concurrency=3,
                   bots=(("greedy-py", "greedy"), ("random-py", "random"), ("greedy-2", "greedy")))
    proc = subprocess.run(
        [*CLI, "tournament", "run", str(toml), "--results", str(tmp_path / out), "--db", db,
         "--quiet"], capture_output=True, text=True, timeout=240, cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]


def _standings(db: str) -> str:
    proc = subprocess.run([*CLI, "tournament", "standings", db],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc.stdout


def test_a_tournament_runs_on_postgres(tmp_path: Path, pg_url: str) -> None:
    _run_cup(tmp_path, pg_url, "results")
    store = open_store(pg_url)
    try:
        (t,) = store.tournaments()
        games = store.games(t.id)
        assert len(games) == 6 and all(g.status is GameStatus.FINISHED for g in games)
        assert all(g.result is not None and g.result.termination.played for g in games)
    finally:
        store.close()
    st = json.loads((tmp_path / "results" / "standings.json").read_text(encoding="utf-8"))
    assert st["games"] == 6 and sum(r["games"] for r in st["rows"]) == 12
    assert "greedy-py" in _standings(pg_url)
    # The records, from the PostgreSQL database to files.
    proc = subprocess.run([*CLI, "tournament", "records", pg_url, "--out", str(tmp_path / "r")],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    files = sorted((tmp_path / "r").iterdir())
    assert [f.name for f in files] == sorted(f"{g.id}.json.gz" for g in games)
    assert [load_record(f) for f in files] == [g.record for g in sorted(games, key=lambda g: g.id)]


def test_a_sqlite_database_migrates_to_postgres_with_nothing_lost(
    tmp_path: Path, pg_url: str,
) -> None:
    db = str(tmp_path / "cup.sqlite3")
    _run_cup(tmp_path, db, "results")
    src = open_store(db)
    src.secret("practice")  # a secret, as a served referee keeps one
    src.close()

    proc = subprocess.run([*CLI, "db", "migrate", "--from", db, "--to", pg_url],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "6 games" in proc.stdout and "every row checked" in proc.stdout

    src, dst = open_store(db), open_store(pg_url)
    try:
        for table in TABLES:
            want = sorted(r for r in src.table_rows(table) if r[0] != "schema_version")
            got = sorted(r for r in dst.table_rows(table) if r[0] != "schema_version")
            assert got == want, table
        (t,) = src.tournaments()
        assert dst.tournaments() == src.tournaments()
        assert dst.games(t.id) == src.games(t.id)
        assert dst.secret("practice") == src.secret("practice")
    finally:
        src.close()
        dst.close()
    assert _standings(pg_url) == _standings(db)

    # A second copy into the same database would merge two histories: refused.
    again = subprocess.run([*CLI, "db", "migrate", "--from", db, "--to", pg_url],
                           capture_output=True, text=True, timeout=120)
    assert again.returncode == 2 and "already holds" in again.stderr, again.stderr


def test_migrate_names_a_missing_source(tmp_path: Path) -> None:
    proc = subprocess.run([*CLI, "db", "migrate", "--from", str(tmp_path / "none.sqlite3"),
                           "--to", str(tmp_path / "x.sqlite3")],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2 and "no database at" in proc.stderr


def test_serve_on_postgres_takes_its_admin_token_from_a_file_and_holds_the_database(
    tmp_path: Path, pg_url: str,
) -> None:
    no_token = subprocess.run([*CLI, "serve", "--address", "127.0.0.1:0", "--db", pg_url],
                              capture_output=True, text=True, timeout=60,
                              env={k: v for k, v in os.environ.items()
                                   if k != "CHINCHON_ADMIN_TOKEN"})
    assert no_token.returncode == 2
    assert "with a PostgreSQL database, give the admin token" in no_token.stderr
    first = Serve(tmp_path, free_port(), pg_url, 1)  # type: ignore[arg-type]
    try:
        second = subprocess.run(
            [*CLI, "serve", "--address", f"127.0.0.1:{free_port()}", "--db", pg_url,
             "--admin-token", ADMIN], capture_output=True, text=True, timeout=60)
        assert second.returncode == 2 and "in use by another referee" in second.stderr
        assert "chinchon-referee pid" in second.stderr
    finally:
        first.stop()


def test_a_served_tournament_on_postgres_answers_alike_over_grpc_and_the_web_view(
    tmp_path: Path, pg_url: str,
) -> None:
    """`chinchon serve --db postgresql://… --http`: a tournament created with the admin
    API and played by SDK bots; GetStandings, ListGames and the web view's standings
    agree, read from PostgreSQL."""
    port, http_port = free_port(), free_port()
    web = ServeWeb(tmp_path, port, http_port, pg_url, 1)  # type: ignore[arg-type]
    procs: list[subprocess.Popen[bytes]] = []
    try:
        with grpc.insecure_channel(f"127.0.0.1:{port}") as ch:
            stub = tpb_grpc.TournamentServiceStub(ch)
            spec = admin_spec("pg served", ["pa", "pb"], score_limit=40, reconnect_grace=10.0,
                              games_per_pairing=4, concurrency=2, seed="pg-served")
            tid = stub.CreateTournament(tpb.CreateTournamentRequest(spec=spec),
                                        metadata=ADMIN_MD, timeout=10).tournament.id
            procs += launch_sdk_bots(tmp_path, port, {"pa": "greedy", "pb": "random"})
            for ev in stub.WatchTournament(tpb.WatchTournamentRequest(tournament_id=tid),
                                           metadata=ADMIN_MD, timeout=180):
                if ev.tournament.games_done == 4:
                    break
            until_sync(lambda: get_json(f"{web.url}api/t/{tid}")["tournament"]["status"]
                       == "finished", "the tournament did not finish", 60)
            st = stub.GetStandings(tpb.GetStandingsRequest(tournament_id=tid),
                                   metadata=ADMIN_MD, timeout=10)
            games = stub.ListGames(tpb.ListGamesRequest(tournament_id=tid), metadata=ADMIN_MD,
                                   timeout=10).games
        assert len(games) == 4 and all(g.status == tpb.GAME_STATUS_FINISHED for g in games)
        web_rows = get_json(f"{web.url}api/t/{tid}/standings.json")["rows"]
        assert [(r["bot"], r["match_points"], r["games"]) for r in web_rows] == [
            (r.bot, r.match_points, r.games) for r in st.rows]
        record = get_json(f"{web.url}api/g/{games[0].game_id}/record.json")
        assert record["gameId"] == games[0].game_id and record["actions"]
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
            p.wait()
        web.stop()
