"""Results of a served tournament of any size: games listed a page at a
time with filters, one record, and every record streamed to a client with the default
4 MiB message limit."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import grpc
import pytest
from chinchon.engine import HandScore
from chinchon.v1 import game_pb2 as g
from chinchon.v1 import tournament_pb2 as tpb
from chinchon.v1 import tournament_pb2_grpc as tpb_grpc
from chinchon_referee.storage import GameFilter, GameRow
from chinchon_referee.tournament.standings import compute, summarize_game
from chinchon_referee.vocabulary import GameStatus

from tests.support.admin import ADMIN_MD, AdminEnv, admin_env, finish_with_engine_games
from tests.support.tournament import strict_record

BOTS = ["ann", "ben", "cid", "dot"]


async def _tournament(env: AdminEnv, games_per_pairing: int, score_limit: int = 100) -> str:
    made = await env.stub.CreateTournament(tpb.CreateTournamentRequest(spec=tpb.TournamentSpec(
        name="big", participants=[tpb.Participant(name=b) for b in BOTS],
        rules=g.RuleSet(score_limit=score_limit),
        games_per_pairing=games_per_pairing, seed="big-seed")), metadata=ADMIN_MD)
    return made.tournament.id


def _wins(row: GameRow, bot: str) -> bool:
    assert row.result is not None
    return any(row.players[w] == bot for w in row.result.winners)


async def test_games_are_listed_a_page_at_a_time_with_filters(tmp_path: Path) -> None:
    async with admin_env(tmp_path / "pages.sqlite3") as env:
        tid = await _tournament(env, 4)  # 6 pairings x 4 = 24 games
        finished = finish_with_engine_games(env, tid, 15)
        all_rows = env.store.games(tid)
        assert len(all_rows) == 24

        async def every(**kw: object) -> list[tpb.GameSummary]:
            out: list[tpb.GameSummary] = []
            token = ""
            while True:
                page = await env.stub.ListGames(tpb.ListGamesRequest(
                    tournament_id=tid, page_size=7, page_token=token, **kw), metadata=ADMIN_MD)
                assert len(page.games) <= 7
                out += page.games
                token = page.next_page_token
                if not token:
                    return out

        listed = await every()
        assert [x.game_id for x in listed] == [r.id for r in all_rows]
        assert [x.seq for x in listed] == sorted(x.seq for x in listed)
        assert listed[0].result.summary == finished[0].result.summary  # type: ignore[union-attr]
        done = await every(status=tpb.GAME_STATUS_FINISHED)
        assert [x.game_id for x in done] == [r.id for r in finished]
        todo = await every(status=tpb.GAME_STATUS_SCHEDULED)
        assert len(todo) == 9 and not any(x.HasField("result") for x in todo)
        assert [x.game_id for x in await every(bot="cid")] == [
            r.id for r in all_rows if "cid" in r.players]
        assert [x.game_id for x in await every(winner="ann")] == [
            r.id for r in finished if _wins(r, "ann")]
        normal = [r.id for r in finished if r.result and
                  r.result.termination == "TERMINATION_NORMAL"]
        assert normal
        assert [x.game_id for x in await every(termination=g.TERMINATION_NORMAL)] == normal
        assert [x.game_id for x in await every(bot="ben", status=tpb.GAME_STATUS_FINISHED)] == [
            r.id for r in finished if "ben" in r.players]
        assert await every(bot="nobody") == []
        # One page of everything by default; bad requests change nothing and say why.
        first = await env.stub.ListGames(tpb.ListGamesRequest(tournament_id=tid),
                                          metadata=ADMIN_MD)
        assert len(first.games) == 24 and first.next_page_token == ""
        for req, words in [
            (tpb.ListGamesRequest(tournament_id=tid, page_size=5000), "page_size"),
            (tpb.ListGamesRequest(tournament_id=tid, page_size=-1), "page_size"),
            (tpb.ListGamesRequest(tournament_id=tid, page_token="garbage!"), "page_token"),
            (tpb.ListGamesRequest(tournament_id=tid, status=99), "status"),
        ]:
            with pytest.raises(grpc.aio.AioRpcError) as err:
                await env.stub.ListGames(req, metadata=ADMIN_MD)
            assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT, req
            assert words in err.value.details()
        with pytest.raises(grpc.aio.AioRpcError) as err:
            await env.stub.ListGames(tpb.ListGamesRequest(tournament_id="t-none"),
                                     metadata=ADMIN_MD)
        assert err.value.code() == grpc.StatusCode.NOT_FOUND


async def test_one_game_record(tmp_path: Path) -> None:
    async with admin_env(tmp_path / "one.sqlite3") as env:
        tid = await _tournament(env, 1)
        finished = finish_with_engine_games(env, tid, 2)
        got = await env.stub.GetGameRecord(tpb.GetGameRecordRequest(game_id=finished[1].id),
                                           metadata=ADMIN_MD)
        assert json.loads(got.record_json) == finished[1].record
        strict_record(json.loads(got.record_json))
        assert got.game.game_id == finished[1].id and got.game.status == tpb.GAME_STATUS_FINISHED
        waiting = env.store.games(tid)[3]
        for game_id, code in [(waiting.id, grpc.StatusCode.FAILED_PRECONDITION),
                              ("t-none-g00000", grpc.StatusCode.NOT_FOUND)]:
            with pytest.raises(grpc.aio.AioRpcError) as err:
                await env.stub.GetGameRecord(tpb.GetGameRecordRequest(game_id=game_id),
                                             metadata=ADMIN_MD)
            assert err.value.code() == code


async def test_export_streams_more_than_4_mib_to_a_default_client(tmp_path: Path) -> None:
    """120 records of about 55 kB (games to 500 points): 6.5 MB, more than a client
    accepts in one message by default (ExportResults could not send them); the stream
    sends them one by one."""
    async with admin_env(tmp_path / "big.sqlite3") as env:
        tid = await _tournament(env, 20, score_limit=500)  # 120 games
        finished = finish_with_engine_games(env, tid, 120)
        total = env.store.record_bytes(tid)
        assert total > 4 * 2**20
        # A client with gRPC's default limits (4 MiB received per message).
        async with grpc.aio.insecure_channel(env.server.target) as ch:
            stub = tpb_grpc.TournamentServiceStub(ch)
            got: list[dict[str, object]] = []
            last = None
            async for msg in stub.ExportRecords(tpb.ExportRecordsRequest(tournament_id=tid),
                                                metadata=ADMIN_MD):
                assert last is None, "the standings come last"
                if msg.HasField("record"):
                    rec = json.loads(msg.record.record_json)
                    strict_record(rec)
                    assert rec["gameId"] == msg.record.game_id
                    got.append(rec)
                else:
                    last = msg.standings
            assert [r["gameId"] for r in got] == [r.id for r in finished]
            assert got == [r.record for r in finished]
            assert last is not None and last.records == 120
            st = json.loads(last.standings_json)
            assert sum(row["games"] for row in st["rows"]) == 240
            # The same as from the whole records (the store reads only their scores).
            whole = compute(BOTS, [
                summarize_game(r.players, r.result, [HandScore.from_json(h) for h in r.record["hands"]],
                               r.stats, r.deal_id)
                for r in finished if r.result is not None and r.record is not None], 2)
            assert st == json.loads(json.dumps(whole.to_json()))
            assert last.standings_csv.startswith("rank,") and "big" in last.report_markdown
            # The one-message export refuses, clearly, and names the stream.
            with pytest.raises(grpc.aio.AioRpcError) as err:
                await stub.ExportResults(tpb.ExportResultsRequest(tournament_id=tid),
                                         metadata=ADMIN_MD)
            assert err.value.code() == grpc.StatusCode.FAILED_PRECONDITION
            assert "ExportRecords" in err.value.details()


async def test_a_page_is_read_by_index_however_far_in(tmp_path: Path) -> None:
    """Keyset pages: each page's query searches the (tournament, seq) index from the
    last seq, never sorts or skips rows (OFFSET), whatever the filters."""
    async with admin_env(tmp_path / "plan.sqlite3") as env:
        tid = await _tournament(env, 2)
        seen: list[str] = []
        env.store.trace(seen.append)
        try:
            for where in (GameFilter(), GameFilter(status=GameStatus.FINISHED),
                          GameFilter(bot="ann", termination="TERMINATION_NORMAL", winner="ann")):
                env.store.games_page(tid, 5, 10, where, records=True)
            env.store.record_texts(tid, 5, 10)  # the export's pages
        finally:
            env.store.trace(None)
        selects = [q for q in seen if q.startswith("SELECT")]
        assert len(selects) == 4
        explain = sqlite3.connect(tmp_path / "plan.sqlite3")  # the same file, read by sqlite3
        for q in selects:
            assert "OFFSET" not in q.upper()
            plan = " | ".join(r[3] for r in explain.execute("EXPLAIN QUERY PLAN " + q))
            assert "SEARCH games USING INDEX games_by_tournament (tournament_id=? AND seq>?)" \
                in plan, plan
            assert "TEMP B-TREE" not in plan, plan
