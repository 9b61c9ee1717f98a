"""The admin API (create, watch, standings, export, list, cancel) needs the admin token."""

from __future__ import annotations

from pathlib import Path

import grpc
from chinchon.v1 import tournament_pb2 as tpb
from chinchon.v1 import tournament_pb2_grpc as tpb_grpc
from chinchon_referee.auth import TokenBook

from tests.fixture_types import StartAdminServer
from tests.helpers import ADMIN, bot_token

# -- e: the admin API needs the admin token ------------------------------------------------


async def test_admin_calls_need_the_admin_token(
    tmp_path: Path, admin_servers: StartAdminServer,
) -> None:
    tokens = TokenBook(ADMIN)
    tokens.add("bot", bot_token("bot"))
    server, store = await admin_servers(tokens, tmp_path / "admin.sqlite3")
    async with grpc.aio.insecure_channel(server.target) as ch:
        stub = tpb_grpc.TournamentServiceStub(ch)
        spec = tpb.TournamentSpec(
            name="auth cup", participants=[tpb.Participant(name="p1"),
                                           tpb.Participant(name="p2")])
        calls = {
            "CreateTournament": lambda md: stub.CreateTournament(
                tpb.CreateTournamentRequest(spec=spec), metadata=md, timeout=10),
            "ListTournaments": lambda md: stub.ListTournaments(
                tpb.ListTournamentsRequest(), metadata=md, timeout=10),
            "StartTournament": lambda md: stub.StartTournament(
                tpb.StartTournamentRequest(tournament_id="t-x"), metadata=md, timeout=10),
            "CancelTournament": lambda md: stub.CancelTournament(
                tpb.CancelTournamentRequest(tournament_id="t-x"), metadata=md, timeout=10),
            "GetStandings": lambda md: stub.GetStandings(
                tpb.GetStandingsRequest(tournament_id="t-x"), metadata=md, timeout=10),
            "ExportResults": lambda md: stub.ExportResults(
                tpb.ExportResultsRequest(tournament_id="t-x"), metadata=md, timeout=10),
        }
        bad = [None, (("authorization", f"Bearer {bot_token('bot')}"),),
               (("authorization", "Bearer wrong"),), (("authorization", ADMIN),)]
        for md in bad:
            for name, call in calls.items():
                try:
                    await call(md)
                    raise AssertionError(f"{name} worked with {md}")
                except grpc.aio.AioRpcError as e:
                    assert e.code() == grpc.StatusCode.UNAUTHENTICATED, (name, md, e)
            stream = stub.WatchTournament(tpb.WatchTournamentRequest(tournament_id="t-x"),
                                          metadata=md, timeout=10)
            try:
                await stream.read()
                raise AssertionError(f"WatchTournament worked with {md}")
            except grpc.aio.AioRpcError as e:
                assert e.code() == grpc.StatusCode.UNAUTHENTICATED
        assert store.tournaments() == []  # nothing was created
        # With the admin token they all work.
        md = (("authorization", f"Bearer {ADMIN}"),)
        made = await calls["CreateTournament"](md)
        tid = made.tournament.id
        assert made.tournament.status == tpb.TOURNAMENT_STATUS_SCHEDULED
        assert made.tournament.games_total == 2
        listed = await calls["ListTournaments"](md)
        assert [t.id for t in listed.tournaments] == [tid]
        st = await stub.GetStandings(tpb.GetStandingsRequest(tournament_id=tid),
                                     metadata=md, timeout=10)
        assert sorted(r.bot for r in st.rows) == ["p1", "p2"]
        assert all(r.games == 0 for r in st.rows)
        ex = await stub.ExportResults(tpb.ExportResultsRequest(tournament_id=tid),
                                      metadata=md, timeout=10)
        assert list(ex.records_json) == [] and "auth cup" in ex.report_markdown
        watch = stub.WatchTournament(tpb.WatchTournamentRequest(tournament_id=tid),
                                     metadata=md, timeout=10)
        ev = await watch.read()
        assert ev.tournament.id == tid
        assert ev.tournament.status == tpb.TOURNAMENT_STATUS_SCHEDULED
        c = await stub.CancelTournament(tpb.CancelTournamentRequest(tournament_id=tid),
                                        metadata=md, timeout=10)
        assert c.tournament.status == tpb.TOURNAMENT_STATUS_CANCELLED
        rest = []
        while (m := await watch.read()) is not grpc.aio.EOF:
            rest.append(m)
        assert rest and rest[-1].message == "tournament cancelled"
        assert rest[-1].tournament.status == tpb.TOURNAMENT_STATUS_CANCELLED
        # Unknown ids are NOT_FOUND; bad declarations INVALID_ARGUMENT.
        try:
            await calls["GetStandings"](md)
            raise AssertionError("unknown tournament found")
        except grpc.aio.AioRpcError as e:
            assert e.code() == grpc.StatusCode.NOT_FOUND
        try:
            await stub.CreateTournament(tpb.CreateTournamentRequest(spec=tpb.TournamentSpec(
                name="bad", participants=[tpb.Participant(name="p1"),
                                          tpb.Participant(name="p1")])),
                metadata=md, timeout=10)
            raise AssertionError("duplicate names accepted")
        except grpc.aio.AioRpcError as e:
            assert e.code() == grpc.StatusCode.INVALID_ARGUMENT
            assert "participants" in (e.details() or "")
        # The admin token is not a bot token.
        assert tokens.bot_for(ADMIN) is None
