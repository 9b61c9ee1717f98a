"""Tie-breaks: the documented, configurable order standings rank by (tiebreaks.py),
round-robins included; written in the standings JSON, report.md and GetStandings."""

from __future__ import annotations

import json
from pathlib import Path

import grpc
import pytest
from chinchon.engine import Termination
from chinchon.engine.outcome import HandScore
from chinchon.v1 import tournament_pb2 as tpb
from chinchon.v1 import tournament_pb2_grpc as tpb_grpc
from chinchon_referee.auth import TokenBook
from chinchon_referee.tournament.formats.proto import tiebreak_to_proto
from chinchon_referee.tournament.report import markdown
from chinchon_referee.tournament.standings import GameSummary, compute, ranking
from chinchon_referee.tournament.tiebreaks import (
    ROUND_ROBIN,
    SWISS,
    Encounter,
    Facts,
    Tiebreak,
    opponents,
    order,
    parse,
    sentence,
)

from tests.support.fixture_types import StartAdminServer
from tests.support.helpers import ADMIN

T = Tiebreak


def game(a: str, b: str, winner: int, a_points: int = 5, b_points: int = 5) -> GameSummary:
    """A game of a (seat 0) against b, one hand with these penalty points."""
    return GameSummary([a, b], [winner], Termination.NORMAL, None,
                       [HandScore.of(winner, False, [a_points, b_points], [0, 1])], [0, 0],
                       [{}, {}])


def series(a: str, b: str, wins_a: int, wins_b: int, a_points: int = 5, b_points: int = 5
           ) -> list[GameSummary]:
    """``wins_a`` + ``wins_b`` games of a pair, seats alternating."""
    out = []
    for i in range(wins_a + wins_b):
        won_by_a = i < wins_a
        if i % 2 == 0:
            out.append(game(a, b, 0 if won_by_a else 1, a_points, b_points))
        else:
            out.append(game(b, a, 1 if won_by_a else 0, b_points, a_points))
    return out


def league() -> list[GameSummary]:
    """A and B on 16 points each, A having beaten B 6-4; B with fewer penalty points per
    hand; C and D on 14 each, 5-5 between them."""
    return (series("A", "B", 6, 4, a_points=9, b_points=2) + series("A", "C", 5, 5)
            + series("A", "D", 5, 5) + series("B", "C", 6, 4) + series("B", "D", 6, 4)
            + series("C", "D", 5, 5, a_points=3, b_points=6))


def test_equal_points_are_ordered_head_to_head_before_rating_in_a_round_robin() -> None:
    """Before: equal points fell to the rating (equal in a balanced round-robin: the
    rating follows the points) and then the points per hand, so B (2 per hand against
    A) ranked above A, who beat it 6-4."""
    st = compute(list("ABCD"), league())
    assert [r.bot for r in st.rows] == ["A", "B", "C", "D"]
    assert st.rows[0].match_points == st.rows[1].match_points == 16
    assert st.head_to_head[("A", "B")] == (6.0, 10)
    # The old order, spelled as a tie-break order: B first.
    old = compute(list("ABCD"), league(), tiebreaks=(T.POINTS, T.RATING, T.POINTS_PER_HAND))
    assert [r.bot for r in old.rows][:2] == ["B", "A"]
    # C and D met 5-5: head-to-head leaves them level; rating too; points per hand decide.
    assert st.rows[2].avg_points_per_hand < st.rows[3].avg_points_per_hand
    assert st.tiebreaks == ROUND_ROBIN
    assert st.to_json()["tiebreaks"] == ["points", "head_to_head", "rating", "points_per_hand"]


def test_the_order_is_written_in_the_report() -> None:
    st = compute(list("ABCD"), league())
    text = markdown("League", st, {})
    assert ("Ranked by points, then head-to-head among the level bots, then rating, then "
            "penalty points per hand (fewer first), then seed, then name.") in text
    assert json.loads(json.dumps(st.to_json()))["tiebreaks"][1] == "head_to_head"


def test_head_to_head_applies_only_when_every_level_bot_met() -> None:
    h2h = {("a", "b"): (2.0, 2), ("b", "a"): (0.0, 2)}
    facts = Facts(points={"a": 1, "b": 1, "c": 1}, head_to_head=h2h, points_per_hand={},
                  rating=lambda: {"a": 1.0, "b": 2.0, "c": 3.0}, seeds={"a": 3, "b": 2, "c": 1})
    # a, b, c level; c met neither: head-to-head cannot say; the rating does.
    assert order(["a", "b", "c"], (T.POINTS, T.HEAD_TO_HEAD, T.RATING), facts) == ["c", "b", "a"]
    facts.points = {"a": 1, "b": 1, "c": 0}
    assert order(["a", "b", "c"], (T.POINTS, T.HEAD_TO_HEAD, T.RATING), facts) == ["a", "b", "c"]
    # Nothing left to say: the seed, then the name.
    assert order(["a", "b", "c"], (T.POINTS_PER_HAND,), facts) == ["c", "b", "a"]


def test_the_rating_is_fitted_only_when_needed() -> None:
    def no() -> dict[str, float]:
        raise AssertionError("the rating was fitted though the points decided")

    facts = Facts(points={"a": 2, "b": 1}, head_to_head={}, points_per_hand={}, rating=no)
    assert order(["b", "a"], ROUND_ROBIN, facts) == ["a", "b"]
    games = series("x", "y", 3, 1)
    assert ranking(["x", "y"], games) == ["x", "y"]


def test_buchholz_and_sonneborn_berger() -> None:
    """Four bots, by hand: a beat b, c beat d; a beat c, b beat d; a and d 1-1 in two
    games, b beat c. Points: a 3, b 2, c 1, d 1."""
    games = [game("a", "b", 0), game("c", "d", 0), game("a", "c", 0), game("b", "d", 0),
             game("a", "d", 0), game("d", "a", 0), game("b", "c", 0)]
    st = compute(list("abcd"), games, tiebreaks=SWISS)
    rows = {r.bot: r for r in st.rows}
    assert {b: r.match_points for b, r in rows.items()} == {"a": 3, "b": 2, "c": 1, "d": 1}
    # Buchholz: a met b (2), c (1), d (1) = 4; b met a (3), d (1), c (1) = 5.
    assert rows["a"].buchholz == 4 and rows["b"].buchholz == 5
    assert rows["c"].buchholz == 3 + 1 + 2 and rows["d"].buchholz == 1 + 2 + 3
    # Sonneborn-Berger: a took all of b's and c's games, half of d's: 2 + 1 + 0.5.
    assert rows["a"].sonneborn_berger == 3.5
    assert rows["d"].sonneborn_berger == 0.5 * 3
    # c and d on 1 point: they met, and c won.
    assert [r.bot for r in st.rows] == ["a", "b", "c", "d"]


def test_a_bye_counts_its_points_and_a_dummy_opponent() -> None:
    """A bye adds the stage's bye points, and counts in Buchholz as an opponent with the
    bot's own points (Sonneborn-Berger: a draw against it)."""
    games = [game("a", "b", 0)]
    st = compute(list("abc"), games, tiebreaks=SWISS, byes={"c": 1}, bye_points=0.5)
    rows = {r.bot: r for r in st.rows}
    assert rows["c"].match_points == 0.5 and rows["c"].byes == 1
    assert rows["c"].buchholz == 0.5 and rows["c"].sonneborn_berger == 0.25
    bh, sb = opponents(["a", "b"], {"a": 1.0, "b": 0.0}, [Encounter({"a": 1.0, "b": 0.0})], {})
    assert bh == {"a": 0.0, "b": 1.0} and sb == {"a": 0.0, "b": 0.0}


def test_an_order_is_checked_and_said() -> None:
    assert parse(["points", "seed"], "format.tiebreaks") == (T.POINTS, T.SEED)
    for bad, msg in (([], "a non-empty list"), (["points", "points"], "points is listed twice"),
                     (["luck"], "unknown tie-break 'luck'")):
        with pytest.raises(ValueError, match=msg):
            parse(bad, "format.tiebreaks")
    assert sentence((T.POINTS, T.SEED)) == "Ranked by points, then seed, then name."


async def test_get_standings_says_the_order(tmp_path: Path, admin_servers: StartAdminServer
                                            ) -> None:
    """A real server: GetStandings names the order (``tiebreaks``) beside the rows; a
    Swiss of more rounds than its field allows is refused by CreateTournament, nothing
    stored."""
    server, store = await admin_servers(TokenBook(ADMIN), tmp_path / "admin.sqlite3")
    md = (("authorization", f"Bearer {ADMIN}"),)
    async with grpc.aio.insecure_channel(server.target) as ch:
        stub = tpb_grpc.TournamentServiceStub(ch)
        spec = tpb.TournamentSpec(name="cup", participants=[tpb.Participant(name="p1"),
                                                            tpb.Participant(name="p2")])
        made = await stub.CreateTournament(tpb.CreateTournamentRequest(spec=spec), metadata=md,
                                           timeout=10)
        st = await stub.GetStandings(tpb.GetStandingsRequest(tournament_id=made.tournament.id),
                                     metadata=md, timeout=10)
        assert list(st.tiebreaks) == [tpb.TIEBREAK_POINTS, tpb.TIEBREAK_HEAD_TO_HEAD,
                                      tpb.TIEBREAK_RATING, tpb.TIEBREAK_POINTS_PER_HAND]
        assert json.loads(st.standings_json)["tiebreaks"][1] == "head_to_head"
        assert not st.rows[0].HasField("buchholz")
        # A round-robin declared without a format: its one stage, its games stored.
        assert [(s.kind, s.state) for s in st.stages] == [
            (tpb.STAGE_KIND_ROUND_ROBIN, tpb.STAGE_STATE_PLAYING)]
        assert json.loads(st.structure_json)["stages"][0]["kind"] == "round_robin"
        assert list(st.final_ranking) == []
        spec.format.stages.add(kind=tpb.STAGE_KIND_SWISS, rounds=9)
        with pytest.raises(grpc.aio.AioRpcError) as refused:
            await stub.CreateTournament(tpb.CreateTournamentRequest(spec=spec), metadata=md,
                                        timeout=10)
        assert refused.value.code() == grpc.StatusCode.INVALID_ARGUMENT
        assert "format.rounds: " in (refused.value.details() or "")
    assert len(store.tournaments()) == 1


def test_every_tiebreak_has_its_protocol_name() -> None:
    assert [tiebreak_to_proto(t) for t in Tiebreak] == [
        tpb.Tiebreak.Value(f"TIEBREAK_{t.name}") for t in Tiebreak]
