"""What one caller holds never costs the others everything: a damaged
row is left out and named, not the end of a tournament's standings, pages and exports; a
damaged declaration stops ``chinchon serve`` in one line; the organizer's calls have
worker threads of their own, so a pile of them stuck behind a lock neither stalls a game
nor waits forever (a statement timeout)."""

from __future__ import annotations

import asyncio
import os
import sqlite3
import subprocess
from pathlib import Path

import grpc
import psycopg
import pytest
from chinchon.v1 import game_pb2 as g
from chinchon.v1 import referee_pb2 as pb
from chinchon.v1 import tournament_pb2 as tpb
from chinchon.v1 import tournament_pb2_grpc as tpb_grpc
from chinchon_referee.storage import SqliteStore
from chinchon_referee.web.reader import Reader
from chinchon_referee.web.views import tournament_snapshot

from tests.support.admin import ADMIN_MD, admin_env, finish_with_engine_games
from tests.support.helpers import ADMIN, bot_token
from tests.support.referee import play_call
from tests.support.serve import Serve, free_port
from tests.support.tournament import CLI
from tests.support.waits import until_async

BOTS = ["ann", "ben", "cid"]


async def test_one_damaged_row_is_left_out_and_named_everywhere(tmp_path: Path) -> None:
    """A result that is not JSON, a bogus status and a record that does not inflate:
    standings, ListGames, ExportRecords and the web view's tournament page leave each
    out, name it, and give everything else (before: each of them failed whole)."""
    db = tmp_path / "damaged.sqlite3"
    async with admin_env(db) as env:
        made = await env.stub.CreateTournament(tpb.CreateTournamentRequest(spec=tpb.TournamentSpec(
            name="damaged", participants=[tpb.Participant(name=b) for b in BOTS],
            rules=g.RuleSet(score_limit=40), games_per_pairing=2, seed="d")),
            metadata=ADMIN_MD)
        tid = made.tournament.id
        rows = finish_with_engine_games(env, tid, 6)
        bad_result, bad_status, bad_record = rows[0].id, rows[1].id, rows[2].id
        with sqlite3.connect(db) as raw:
            raw.execute("UPDATE games SET result = 'not json {' WHERE id = ?", (bad_result,))
            raw.execute("UPDATE games SET status = 'bogus' WHERE id = ?", (bad_status,))
            raw.execute("UPDATE games SET record_z = x'00ff00ff' WHERE id = ?", (bad_record,))
        raw.close()

        st = await env.stub.GetStandings(tpb.GetStandingsRequest(tournament_id=tid),
                                         metadata=ADMIN_MD)
        # Four finished games are read (standings need no record): two seats each.
        assert sum(r.games for r in st.rows) == 2 * 4
        # Named: the rows it read (every game's row, for a format's stages: the bogus
        # status too), not the record it never reads.
        named = {d.split(":")[0]: d for d in st.damaged_games}
        assert sorted(named) == sorted([bad_result, bad_status])
        assert "JSONDecodeError" in named[bad_result]

        listed = await env.stub.ListGames(tpb.ListGamesRequest(tournament_id=tid, page_size=100),
                                          metadata=ADMIN_MD)
        ids = [x.game_id for x in listed.games]
        assert bad_result not in ids and bad_status not in ids and len(ids) == 6 - 2

        got: list[tpb.ExportRecordsResponse] = []
        async for m in env.stub.ExportRecords(tpb.ExportRecordsRequest(tournament_id=tid),
                                              metadata=ADMIN_MD):
            got.append(m)
        exported = {m.record.game_id for m in got if m.HasField("record")}
        # The record of the game whose result is damaged is whole: it is exported.
        assert exported == {r.id for r in rows[3:]} | {bad_result}
        last = got[-1].standings
        assert last.records == 4
        # Each damaged row named once it was read (the bogus status by ListGames).
        assert sorted(d.split(":")[0] for d in last.damaged_games) == sorted(
            [bad_result, bad_status, bad_record])

    reader = Reader(str(db))
    try:
        snap = await asyncio.to_thread(tournament_snapshot, reader, tid, [])
    finally:
        reader.close()
    assert snap is not None and snap["damaged"] == [bad_result]
    assert snap["progress"]["done"] == 5  # finished, as counted (the bogus one is not)


@pytest.mark.parametrize(("spec", "why"), [("{not json", "its stored row is damaged"),
                                           ('{"name": 5}', "its stored declaration is damaged")])
def test_a_damaged_declaration_makes_serve_exit_2_in_one_line(
    tmp_path: Path, spec: str, why: str,
) -> None:
    db = tmp_path / "spec.sqlite3"
    store = SqliteStore(str(db))
    store.close()
    with sqlite3.connect(db) as raw:
        raw.execute("INSERT INTO tournaments (id, name, spec, status, created) "
                    "VALUES ('t-broken', 'broken', ?, 'running', 0)", (spec,))
    raw.close()
    done = subprocess.run([*CLI, "serve", "--address", "127.0.0.1:0", "--db", str(db)],
                          capture_output=True, text=True, timeout=60,
                          env=dict(os.environ, CHINCHON_ADMIN_TOKEN=ADMIN))
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), done.stderr
    assert "tournament t-broken" in lines[0] and why in lines[0]


async def _practice(target: str, games: int) -> int:
    """A practice session against the greedy house bot, answering at once: the games
    that ended."""
    call = await play_call(target, bot_token("alice"))
    await call.write(pb.PlayRequest(hello=pb.Hello(client="t", practice=pb.PracticeRequest(
        opponent="greedy", games=games, seed="s"))))
    ended = 0
    while (msg := await call.read()) is not grpc.aio.EOF:
        kind = msg.WhichOneof("kind")
        if kind == "action_request":
            req = msg.action_request
            await call.write(pb.PlayRequest(action=pb.ActionReply(
                request_id=req.request_id, action=req.legal_actions[0])))
        elif kind == "game_ended":
            ended += 1
    return ended


async def test_organizer_calls_stuck_behind_a_lock_neither_stall_a_game_nor_wait_forever(
    tmp_path: Path, pg_url: str,
) -> None:
    """Twelve ListTournaments calls wait behind a table lock that another client holds:
    a practice session goes on meanwhile, game after game, its records stored (before:
    the calls held every thread of the loop's one pool, and the practice stopped with
    them); each call gives up after the lock timeout with UNAVAILABLE saying so (before:
    it waited as long as the lock was held)."""
    port = free_port()
    serve = Serve(tmp_path, port, pg_url, 0, ["--bot", f"alice={bot_token('alice')}"])
    lock = await psycopg.AsyncConnection.connect(pg_url)
    try:
        await lock.execute("LOCK TABLE tournaments IN ACCESS EXCLUSIVE MODE")  # held: no commit

        async def waiting() -> bool:
            async with await psycopg.AsyncConnection.connect(pg_url, autocommit=True) as c:
                cur = await c.execute("SELECT count(*) FROM pg_stat_activity "
                                      "WHERE wait_event_type = 'Lock'")
                row = await cur.fetchone()
                return row is not None and row[0] >= 4

        async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as ch:
            stub = tpb_grpc.TournamentServiceStub(ch)
            calls = [asyncio.ensure_future(stub.ListTournaments(
                tpb.ListTournamentsRequest(), metadata=ADMIN_MD, timeout=120))
                for _ in range(12)]
            await until_async(waiting, "organizer calls waiting on the lock", 30)
            assert await asyncio.wait_for(_practice(f"127.0.0.1:{port}", 3), 90) == 3
            assert not all(c.done() for c in calls)  # the practice did not wait for them
            results = await asyncio.gather(*calls, return_exceptions=True)
        for r in results:
            assert isinstance(r, grpc.aio.AioRpcError), r
            assert r.code() == grpc.StatusCode.UNAVAILABLE
            assert "lock" in (r.details() or ""), r.details()
        await lock.rollback()
        async with await psycopg.AsyncConnection.connect(pg_url) as c:
            cur = await c.execute("SELECT count(*) FROM games WHERE tournament_id IS NULL")
            assert (await cur.fetchone()) == (3,)  # the practice records were stored
    finally:
        await lock.close()
        serve.stop()
