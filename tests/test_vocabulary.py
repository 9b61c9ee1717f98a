"""Typed vocabularies: terminations, tournament and game statuses and incident
kinds are enums mapped to the protocol's names in one place; forfeit winners and hand
winners are decided once, by the engine."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from chinchon.engine import RandomBot, RuleSet, Termination, new_game, play_game, replay
from chinchon.engine.game import GameState
from chinchon.engine.outcome import HandScore, forfeit_winners
from chinchon.engine.record import RecordBuilder, hand_result_to_json
from chinchon.v1 import game_pb2 as g
from chinchon.v1 import tournament_pb2 as tpb
from chinchon_referee.config import Policies, TimeControl
from chinchon_referee.referee import GameSpec, IncidentKind, Referee
from chinchon_referee.storage import GameRow, SqliteStore, TournamentRow
from chinchon_referee.vocabulary import GameStatus, TournamentStatus
from hypothesis import given, settings
from hypothesis import strategies as st


def test_terminations_are_the_protocols() -> None:
    proto = {n for n, _ in g.Termination.items() if n != "TERMINATION_UNSPECIFIED"}
    assert {t.value for t in Termination} == proto
    assert {t for t in Termination if t.played} == {Termination.NORMAL, Termination.CHINCHON,
                                                    Termination.LENGTH_LIMIT}
    assert {t for t in Termination if t.forfeit} == {
        Termination(n) for n in proto if n.startswith("TERMINATION_FORFEIT_")}
    assert Termination.parse("TERMINATION_SOMETHING") is None and Termination.parse(3) is None


def test_tournament_statuses_are_the_protocols() -> None:
    proto = {v for n, v in tpb.TournamentStatus.items() if n != "TOURNAMENT_STATUS_UNSPECIFIED"}
    assert {s.to_proto() for s in TournamentStatus} == proto
    for s in TournamentStatus:
        assert tpb.TournamentStatus.Name(s.to_proto()) == "TOURNAMENT_STATUS_" + s.value.upper()
    assert {s for s in TournamentStatus if s.over} == {TournamentStatus.FINISHED,
                                                       TournamentStatus.CANCELLED}


def test_the_store_reads_statuses_as_enums_and_refuses_an_unknown_one(tmp_path: Path) -> None:
    store = SqliteStore(str(tmp_path / "s.sqlite3"))
    try:
        store.create_tournament(TournamentRow("t", "t", {}, TournamentStatus.SCHEDULED, time.time()),
                                [GameRow("t-1", "t", 1, ["a", "b"], "d")])
        row = store.tournament("t")
        assert row is not None and row.status is TournamentStatus.SCHEDULED
        assert store.games("t")[0].status is GameStatus.SCHEDULED
        with pytest.raises(ValueError, match="'paused' is not a valid TournamentStatus"):
            store.set_tournament_status("t", "paused")  # type: ignore[arg-type]
        row = store.tournament("t")
        assert row is not None and row.status is TournamentStatus.SCHEDULED  # unchanged
        store.set_tournament_status("t", TournamentStatus.RUNNING)
        row = store.tournament("t")
        assert row is not None and row.status is TournamentStatus.RUNNING and row.started
    finally:
        store.close()


def test_a_no_show_of_several_seats_is_won_by_those_present_alone() -> None:
    """Three players, two absent: only the one present wins, in the outcome and in the
    record (the engine's forfeit rule once counted the second absent seat a winner, and
    the referee overwrote the record's winners with its own rule)."""
    rules = RuleSet(players=3)
    rec = RecordBuilder("g", rules, ["a", "b", "c"])
    record = rec.to_json(new_game(rules), Termination.FORFEIT_NO_SHOW, forfeits=[0, 2])
    assert record["result"]["winners"] == [1]
    assert record["result"]["forfeitedSeat"] == 0
    spec = GameSpec(game_id="g", rules=rules, players=["a", "b", "c"], seed="s", deal_id="d",
                    time_control=TimeControl(), policies=Policies())
    out = Referee().no_show(spec, [0, 2])
    assert out.termination is Termination.FORFEIT_NO_SHOW
    assert out.winners == out.record["result"]["winners"] == [1]
    assert out.record["result"]["termination"] == "TERMINATION_FORFEIT_NO_SHOW"


def _states(players: int, seed: int) -> list[GameState]:
    rules = RuleSet(players=players, score_limit=60)
    _, record = play_game(rules, [RandomBot(seed + i) for i in range(players)], f"s{seed}")
    states: list[GameState] = []
    replay(record, lambda state, i: states.append(state))
    return states


@settings(max_examples=30, deadline=None)
@given(players=st.integers(2, 4), seed=st.integers(0, 10_000), pick=st.floats(0, 1),
       forfeits=st.sets(st.integers(0, 3), min_size=1, max_size=3))
def test_forfeit_winners_are_the_others_still_in_with_the_lowest_total(
    players: int, seed: int, pick: float, forfeits: set[int],
) -> None:
    states = _states(players, seed)
    state = states[int(pick * (len(states) - 1))]
    gone = sorted(s for s in forfeits if s < players) or [0]
    winners = forfeit_winners(state, gone)
    others = [s for s in range(players) if s not in gone]
    assert set(winners) <= set(others) and bool(winners) == bool(others)
    alive = [s for s in others if state.alive[s]]
    pool = alive or others
    assert set(winners) <= set(pool)
    if pool:
        low = min(state.scores[s] for s in pool)
        assert winners == [s for s in pool if state.scores[s] == low]


@settings(max_examples=20, deadline=None)
@given(players=st.integers(2, 4), seed=st.integers(0, 10_000))
def test_a_hands_winner_reads_the_same_from_the_engine_and_from_its_record(
    players: int, seed: int,
) -> None:
    state = _states(players, seed)[-1]
    assert state.results
    for hr in state.results:
        score = HandScore.from_json(hand_result_to_json(hr))
        assert score.winner == hr.winner
        if hr.closer >= 0:
            assert hr.winner == hr.closer
            assert score.chinchon == (hr.bonus == "chinchon")
        elif hr.winner is not None:
            assert hr.hands[hr.winner]
            assert all(hr.points[hr.winner] < hr.points[s]
                       for s in range(players) if s != hr.winner and hr.hands[s])


def test_incident_kinds_read_as_their_words() -> None:
    referee = Referee()
    referee.incident(IncidentKind.TIMEOUT, game_id="g", bot="a", waited=1.5)
    (i,) = referee.incidents
    assert i["kind"] is IncidentKind.TIMEOUT and i["kind"] == "timeout"
    assert i == {"kind": "timeout", "game_id": "g", "bot": "a", "waited": 1.5}
