"""The admin API (create, watch, standings, export, list, cancel) needs the admin token."""

from __future__ import annotations

from pathlib import Path

import grpc
from chinchon.v1 import tournament_pb2 as tpb
from chinchon.v1 import tournament_pb2_grpc as tpb_grpc
from chinchon_referee.auth import TokenBook

from tests.support.fixture_types import StartAdminServer
from tests.support.helpers import ADMIN, bot_token

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


async def test_a_missing_a_malformed_and_a_wrong_admin_token_are_told_apart(
    tmp_path: Path, admin_servers: StartAdminServer,
) -> None:
    """Whoever typed the command learns what to fix: no token at all, metadata
    that is not ``Bearer <token>``, a bot's token, or a token the server does not know.
    The texts never name a token."""
    tokens = TokenBook(ADMIN)
    tokens.add("bot", bot_token("bot"))
    server, _ = await admin_servers(tokens, tmp_path / "admin.sqlite3")
    wrong = "tok_not-the-admin-token-at-all"
    cases = {
        "missing": None,
        "malformed": (("authorization", ADMIN),),
        "bot": (("authorization", f"Bearer {bot_token('bot')}"),),
        "wrong": (("authorization", f"Bearer {wrong}"),),
    }
    texts = {}
    async with grpc.aio.insecure_channel(server.target) as ch:
        stub = tpb_grpc.TournamentServiceStub(ch)
        for case, md in cases.items():
            try:
                await stub.ListTournaments(tpb.ListTournamentsRequest(), metadata=md, timeout=10)
                raise AssertionError(f"{case}: the call worked")
            except grpc.aio.AioRpcError as e:
                assert e.code() == grpc.StatusCode.UNAUTHENTICATED, (case, e)
                texts[case] = e.details() or ""
    assert len(set(texts.values())) == 4, texts
    assert texts["missing"].startswith("missing admin token") and "--admin-token-file" in texts["missing"]
    assert texts["malformed"].startswith("malformed authorization metadata")
    assert texts["bot"].startswith("wrong admin token: this is a bot's token")
    assert texts["wrong"].startswith("wrong admin token")
    for text in texts.values():
        assert ADMIN not in text and wrong not in text and bot_token("bot") not in text


async def test_an_empty_tournament_id_is_an_invalid_argument(
    tmp_path: Path, admin_servers: StartAdminServer,
) -> None:
    """``GetStandings {}`` is a client's mistake (INVALID_ARGUMENT naming the field), not a
    tournament that was looked for and not found (NOT_FOUND ``no tournament ''``)."""
    server, _ = await admin_servers(TokenBook(ADMIN), tmp_path / "admin.sqlite3")
    md = (("authorization", f"Bearer {ADMIN}"),)
    async with grpc.aio.insecure_channel(server.target) as ch:
        stub = tpb_grpc.TournamentServiceStub(ch)
        for call in (lambda: stub.GetStandings(tpb.GetStandingsRequest(), metadata=md, timeout=10),
                     lambda: stub.StartTournament(tpb.StartTournamentRequest(), metadata=md,
                                                  timeout=10),
                     lambda: stub.ListGames(tpb.ListGamesRequest(), metadata=md, timeout=10),
                     lambda: stub.GetGameRecord(tpb.GetGameRecordRequest(), metadata=md,
                                                timeout=10)):
            try:
                await call()
                raise AssertionError("an empty request worked")
            except grpc.aio.AioRpcError as e:
                assert e.code() == grpc.StatusCode.INVALID_ARGUMENT, e
                assert "required" in (e.details() or "")
        try:  # an id that names nothing is still NOT_FOUND
            await stub.GetStandings(tpb.GetStandingsRequest(tournament_id="t-x"), metadata=md,
                                    timeout=10)
            raise AssertionError("unknown tournament found")
        except grpc.aio.AioRpcError as e:
            assert e.code() == grpc.StatusCode.NOT_FOUND
