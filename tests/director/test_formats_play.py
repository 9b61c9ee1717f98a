"""Every format played for real: declared through CreateTournament
over gRPC on a real server, played by in-process SDK bots over their own gRPC streams,
watched to its end, its standings read back with GetStandings (each stage's rows, the
Swiss rounds and byes, the gauntlet's challengers, the bracket's matches); bad format
declarations refused with their field named, nothing stored."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import grpc
import pytest
from chinchon.v1 import tournament_pb2 as tpb
from chinchon.v1 import tournament_pb2_grpc as tpb_grpc
from chinchon_referee.auth import TokenBook
from chinchon_referee.service.server import RunningServer
from chinchon_referee.storage import SqliteStore
from chinchon_referee.tournament.formats.proto import format_from_proto, format_to_proto
from chinchon_referee.tournament.formats.spec import from_toml
from chinchon_referee.tournament.model import TournamentSpec
from chinchon_referee.tournament.wire import spec_to_proto

from tests.support.fixture_types import SpawnBot, StartAdminServer
from tests.support.helpers import ADMIN
from tests.support.inproc import sdk
from tests.support.tournament import spec_dict

MD = (("authorization", f"Bearer {ADMIN}"),)
BOTS = ["a", "b", "c", "d", "e"]

#: One declaration per format, small enough for a busy machine.
FORMATS: dict[str, Any] = {
    "gauntlet": {"kind": "gauntlet", "challengers": ["a"]},
    "swiss": {"kind": "swiss", "rounds": 3, "bye_points": 2.0},
    "knockout": {"kind": "knockout", "match": {"games": 3}, "third_place": True},
    "double_elimination": {"kind": "double_elimination", "match": {"games": 1}},
    "stages": {"stages": [{"kind": "swiss", "rounds": 2, "advance": 4},
                          {"kind": "knockout", "match": {"games": 1}}]},
}


def declaration(name: str, fmt: Any, bots: list[str] = BOTS, **extra: Any) -> TournamentSpec:
    return TournamentSpec.from_dict(spec_dict(name, bots, format=fmt, concurrency=2, **extra))


async def play_out(server: RunningServer, bots: SpawnBot, spec: TournamentSpec,
                   said: list[str] | None = None) -> tpb.GetStandingsResponse:
    """Create ``spec``, connect its bots, start it, watch it to its end and return its
    standings (``said``: the events' messages)."""
    async with grpc.aio.insecure_channel(server.target) as ch:
        stub = tpb_grpc.TournamentServiceStub(ch)
        made = await stub.CreateTournament(tpb.CreateTournamentRequest(
            spec=spec_to_proto(spec)), metadata=MD, timeout=30)
        tid = made.tournament.id
        for b in spec.bots:
            await bots(sdk("greedy"), server, b)
        assert await server.referee.lobby.wait_all(list(spec.bots), 60)
        await stub.StartTournament(tpb.StartTournamentRequest(tournament_id=tid), metadata=MD,
                                   timeout=30)
        last = None
        async for ev in stub.WatchTournament(tpb.WatchTournamentRequest(tournament_id=tid),
                                             metadata=MD, timeout=600):
            last = ev
            if said is not None:
                said.append(ev.message)
        assert last is not None
        assert last.tournament.status == tpb.TOURNAMENT_STATUS_FINISHED, last.message
        return await stub.GetStandings(tpb.GetStandingsRequest(tournament_id=tid),
                                       metadata=MD, timeout=30)


def finished_games(store: SqliteStore) -> list[Any]:
    (row,) = store.tournaments()
    games = store.games(row.id)
    assert games and all(g.status == "finished" for g in games)
    # Played to their ends: no bot was dismissed while the format had games for it.
    assert [g.id for g in games if g.result is None or not g.result.termination.played] == []
    assert len({g.id for g in games}) == len(games)
    return games


@pytest.mark.parametrize("kind", list(FORMATS))
async def test_every_format_plays_to_its_end_over_grpc(
        kind: str, tmp_path: Path, admin_servers: StartAdminServer, bots: SpawnBot) -> None:
    server, store = await admin_servers(TokenBook(ADMIN), tmp_path / "admin.sqlite3")
    spec = declaration(kind, FORMATS[kind])
    said: list[str] = []
    st = await play_out(server, bots, spec, said)
    games = finished_games(store)
    shape = json.loads(st.structure_json)
    assert sorted(st.final_ranking) == sorted(BOTS)
    assert list(st.final_ranking) == shape["ranking"]
    assert [r.bot for r in st.rows] == list(st.final_ranking)
    assert all(s.state == tpb.STAGE_STATE_OVER for s in st.stages)
    assert len(st.stages) == len(spec.format.stages)
    assert format_from_proto(st.tournament.format) == spec.format  # the format, returned
    played = Counter(b for g in games for b in g.players)
    first = st.stages[0]
    if kind == "gauntlet":
        assert list(first.challengers) == ["a"]
        assert sorted(first.field) == ["b", "c", "d", "e"]
        assert all("a" in g.players for g in games)  # the field never plays itself
        assert first.rows[0].bot == "a" and played["a"] == 8
    if kind == "swiss":
        assert [r.round for r in first.rounds] == [1, 2, 3]
        # Watchers hear each round created as it comes due (the first, with the tournament).
        assert [m for m in said if m.startswith("games created")] == [
            f"games created: stage 1 (Swiss): round {r}, 4 new games" for r in (2, 3)]
        byes = [b for r in first.rounds for b in r.byes]
        assert len(byes) == 3 and len(set(byes)) == 3  # a bye each round, never twice
        assert {r.bot: r.byes for r in first.rows if r.byes} == dict.fromkeys(byes, 1)
        pairs = [frozenset(t.players) for r in first.rounds for t in r.tables]
        assert len(pairs) == len(set(pairs))  # no pairing twice
        for r in first.rows:  # points: won games, and 2 for each bye
            won = sum(1.0 / len(g.result.winners) for g in games
                      if r.bot in [g.players[w] for w in g.result.winners])
            assert r.match_points == pytest.approx(won + 2.0 * r.byes)
    if kind in ("knockout", "double_elimination"):
        decided = [m for m in first.matches if m.status == tpb.MATCH_STATUS_DECIDED]
        assert decided and all(m.winner in (m.a, m.b) for m in decided)
        assert first.bracket_size == 8
        assert all(len(m.game_ids) >= 1 for m in decided)
        champion = st.final_ranking[0]
        lost = Counter(m.loser for m in decided)
        if kind == "knockout":
            final = next(m for m in first.matches if m.section == tpb.BRACKET_SECTION_WINNERS
                         and m.round == 3)
            assert final.winner == champion
            assert lost[champion] == 0
            assert any(m.section == tpb.BRACKET_SECTION_THIRD_PLACE for m in decided)
            # Out after one match lost (the 3rd-place match is the semi-finals' losers').
            out = Counter(m.loser for m in decided if m.section == tpb.BRACKET_SECTION_WINNERS)
            assert all(n == 1 for n in out.values()) and len(out) == len(BOTS) - 1
        else:
            assert lost[champion] <= 1
            # Everyone else is out after exactly two match losses.
            assert all(lost[b] == 2 for b in BOTS if b != champion)
    if kind == "stages":
        assert [s.kind for s in st.stages] == [tpb.STAGE_KIND_SWISS, tpb.STAGE_KIND_KNOCKOUT]
        top4 = list(st.stages[0].ranking[:4])
        assert sorted(r.bot for r in st.stages[1].rows) == sorted(top4)
        assert set(st.final_ranking[:4]) == set(top4)
        assert st.final_ranking[4] == st.stages[0].ranking[4]


@pytest.mark.parametrize(("fmt", "message"), [
    ({"kind": "gauntlet"}, "format.challengers: "),
    ({"kind": "gauntlet", "challengers": ["zz"]}, "format.challengers: "),
    ({"kind": "swiss", "rounds": 9}, "format.rounds: "),
    ({"kind": "knockout", "match": {"games": 0}}, "format.match.games: "),
    ({"stages": [{"kind": "swiss", "advance": 9}, {"kind": "knockout"}]},
     "format.stages[0].advance: "),
])
async def test_a_bad_format_is_refused_by_create_tournament(
        fmt: Any, message: str, tmp_path: Path, admin_servers: StartAdminServer) -> None:
    server, store = await admin_servers(TokenBook(ADMIN), tmp_path / "admin.sqlite3")
    bad = spec_to_proto(TournamentSpec.from_dict(spec_dict("bad", BOTS)))
    bad.format.CopyFrom(format_to_proto(from_toml(fmt)))
    async with grpc.aio.insecure_channel(server.target) as ch:
        stub = tpb_grpc.TournamentServiceStub(ch)
        with pytest.raises(grpc.aio.AioRpcError) as refused:
            await stub.CreateTournament(tpb.CreateTournamentRequest(spec=bad), metadata=MD,
                                        timeout=10)
        assert refused.value.code() == grpc.StatusCode.INVALID_ARGUMENT
        assert message in (refused.value.details() or ""), refused.value.details()
    assert store.tournaments() == []
