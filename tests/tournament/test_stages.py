"""Stages and the next-games contract (formats/plan.py): stages pass exactly the declared
bots on, seeded as declared; the next games are a deterministic function of the stored
results, so whoever asks from whatever snapshot, after whatever interruption, gets the
same games, and each is created once; gauntlets and groups as documented; the structure
as JSON, in report.md and in ``chinchon tournament check``."""

from __future__ import annotations

import copy
import json
import random
from pathlib import Path
from typing import Any

import pytest
from chinchon_referee.cli.main import main
from chinchon_referee.storage import GameRow
from chinchon_referee.tournament.formats.games import Create, Wait
from chinchon_referee.tournament.formats.plan import Next, Over, next_games
from chinchon_referee.tournament.formats.stage_standings import stage_standings
from chinchon_referee.tournament.formats.structure import structure
from chinchon_referee.tournament.model import schedule
from chinchon_referee.tournament.report import markdown
from chinchon_referee.tournament.standings import compute, summarize_game
from chinchon_referee.vocabulary import GameStatus
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.support.formats import Played, coin, elo, finish, row_of, spec_of

KINDS = ["round_robin", "swiss", "knockout", "double_elimination"]


def stage_bots(p: Played, stage: int) -> set[str]:
    return {b for r in p.stage_games(stage) for b in r.players}


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(n=st.integers(4, 14), first=st.sampled_from(KINDS), second=st.sampled_from(KINDS),
       data=st.data())
def test_stages_pass_exactly_the_declared_bots_on(n: int, first: str, second: str,
                                                  data: st.DataObject) -> None:
    advance = data.draw(st.integers(2, n))
    third = data.draw(st.sampled_from(KINDS))
    fmt = {"stages": [{"kind": first, "advance": advance, "rounds": 2} if first == "swiss"
                      else {"kind": first, "advance": advance},
                      {"kind": second, "advance": 2}, {"kind": third}]}
    p = Played(spec_of(n, fmt))
    seed = data.draw(st.integers(0, 10**6))
    over = p.run(coin(str(seed)), random.Random(seed))
    st_json = structure(p.spec, p.tid, p.rows.values())
    stages = st_json["stages"]
    assert [s["status"] for s in stages] == ["over"] * 3
    # Stage 2 holds the top `advance` of stage 1's ranking, seeded in that order.
    assert stages[1]["bots"] == stages[0]["ranking"][:advance]
    assert stages[2]["bots"] == stages[1]["ranking"][:2]
    for i in range(3):
        played = stage_bots(p, i)
        assert played <= set(stages[i]["bots"])
        if stages[i]["kind"] != "knockout" or len(stages[i]["bots"]) > 1:
            assert played, i
    # The final ranking: the last stage's, then those each stage did not pass on.
    assert list(over.ranking[:2]) == stages[2]["ranking"]
    assert list(over.ranking[2:advance]) == stages[1]["ranking"][2:]
    assert list(over.ranking[advance:]) == stages[0]["ranking"][advance:]
    assert st_json["ranking"] == list(over.ranking)


def test_groups_pass_their_winners_on() -> None:
    """8 bots in 2 groups (seeds snaked: 1 4 5 8 | 2 3 6 7), ``advance = 2``: the group
    winners, the better on points per game first."""
    strength = {f"b{i:02d}": 2000 - 100 * i for i in range(8)}
    fmt = {"stages": [{"kind": "round_robin", "groups": 2, "advance": 2},
                      {"kind": "knockout", "match": {"games": 1}}]}
    p = Played(spec_of(8, fmt, games_per_pairing=20))
    p.run(elo(strength, random.Random(3)))
    s = structure(p.spec, p.tid, p.rows.values())["stages"]
    assert s[0]["groups"] == [["b00", "b03", "b04", "b07"], ["b01", "b02", "b05", "b06"]]
    winners = s[1]["bots"]
    # One from each group: each group's first (the strongest of each, here).
    assert [w in s[0]["groups"][0] for w in winners] in ([True, False], [False, True])
    assert set(winners) == {"b00", "b01"}
    assert winners == [s[0]["ranking"][0], s[0]["ranking"][1]]
    for r in p.stage_games(0):  # no game across groups
        assert len({0 if b in s[0]["groups"][0] else 1 for b in r.players}) == 1


def test_a_gauntlet_measures_its_challengers_against_the_field() -> None:
    fmt = {"kind": "gauntlet", "challengers": ["b05", "b02"]}
    p = Played(spec_of(6, fmt, games_per_pairing=4))
    over = p.run(coin())
    pairs = [frozenset(r.players) for r in p.rows.values()]
    assert len(pairs) == 2 * 4 * 4
    for pair in set(pairs):
        assert len(pair & {"b05", "b02"}) == 1  # a challenger and a field bot
        assert pairs.count(pair) == 4
    assert set(over.ranking[:2]) == {"b05", "b02"}
    s = structure(p.spec, p.tid, p.rows.values())["stages"][0]
    assert s["challengers"] == ["b05", "b02"] and s["field"] == ["b00", "b01", "b03", "b04"]


FORMATS = [
    {"stages": [{"kind": "swiss", "rounds": 3, "advance": 4},
                {"kind": "double_elimination", "match": {"games": 3}}]},
    {"kind": "knockout", "third_place": True, "match": {"games": 5, "duplicate_deals": True}},
    {"kind": "swiss"},
    {"stages": [{"kind": "round_robin", "groups": 3, "advance": 3}, {"kind": "swiss"}]},
]


@pytest.mark.parametrize("fmt", FORMATS)
def test_every_game_is_created_once_whoever_asks_from_whatever_snapshot(fmt: Any) -> None:
    """Two referee processes sharing a store, one reading a stale snapshot (it has not
    seen the latest games finish, or be created), both storing what they are told with
    "insert unless the id is there": every id is always asked for with the same players
    and deal, and the tournament ends with exactly the games and ranking of an
    undisturbed run (results here depend only on the game: its deal and seats). The
    planner keeps nothing between calls, so a restart (kill -9 between two rounds or in
    the middle of one) is this too: the next call reads the store and asks for the same
    round."""
    oracle = coin("same")
    calm = Played(spec_of(9, fmt))
    calm.run(oracle, random.Random(7))
    spec, tid = calm.spec, calm.tid
    rows: dict[int, GameRow] = {}
    asked: dict[str, tuple[Any, ...]] = {}
    stale: list[GameRow] = []
    rng = random.Random(11)
    for _ in range(20_000):
        lagging = rng.random() < 0.4
        step = next_games(spec, tid, stale if lagging else list(rows.values()))
        if isinstance(step, Over) and not lagging:
            break
        if isinstance(step, Next) and isinstance(step.step, Create):
            for g in step.step.games:
                key = (g.seq, g.players, g.deal_id)
                assert asked.setdefault(g.id, key) == key  # the same game, whoever asks
                rows.setdefault(g.seq, row_of(g, tid))   # stored once
        elif not lagging:
            pending = [r for r in rows.values() if r.status is not GameStatus.FINISHED]
            r = pending[rng.randrange(len(pending))]
            finish(r, oracle(r))
        if rng.random() < 0.2:
            stale = [copy.copy(r) for r in rows.values()]  # what the other process read
    else:
        raise AssertionError("not over")
    assert step == calm.over
    assert {r.id: (r.players, r.deal_id, r.result) for r in rows.values()} == {
        r.id: (r.players, r.deal_id, r.result) for r in calm.rows.values()}


def test_a_creation_cut_short_is_completed_by_the_next_call() -> None:
    p = Played(spec_of(10, {"stages": [{"kind": "swiss", "rounds": 2, "advance": 4},
                                       {"kind": "knockout"}]}))
    first = p.step()
    assert isinstance(first, Next) and isinstance(first.step, Create)
    games = first.step.games
    p.store(games[:3])  # the process died while storing the round
    again = p.step()
    assert isinstance(again, Next) and isinstance(again.step, Create)
    assert again.step.games == games[3:]
    p.store(again.step.games)
    assert isinstance(p.step().step, Wait)  # type: ignore[union-attr]
    assert next_games(p.spec, p.tid, list(reversed(p.rows.values()))) == p.step()


def test_a_round_robin_without_format_asks_its_schedule_then_waits_then_is_over() -> None:
    p = Played(spec_of(4))
    step = p.step()
    assert isinstance(step, Next) and isinstance(step.step, Create)
    assert [g.id for g in step.step.games] == [
        f"t-g{g.seq:05d}" for g in schedule(p.spec, "t")]
    p.store(step.step.games)
    waiting = p.step()
    assert isinstance(waiting, Next) and isinstance(waiting.step, Wait)
    assert len(waiting.step.on) == len(p.rows) and waiting.step.alive == tuple(p.spec.bots)
    over = p.run(coin())
    games = [summarize_game(r.players, r.result, r.hands or [], r.stats, r.deal_id)
             for r in p.rows.values() if r.result is not None]
    assert list(over.ranking) == [r.bot for r in compute(p.spec.bots, games).rows]


def test_the_structure_in_report_md() -> None:
    fmt = {"stages": [{"kind": "swiss", "rounds": 2, "advance": 4},
                      {"kind": "knockout", "third_place": True}]}
    p = Played(spec_of(7, fmt))
    p.run(coin())
    shape = structure(p.spec, p.tid, p.rows.values())
    json.dumps(shape)  # JSON all the way down
    sw, ko = shape["stages"]
    assert [len(r["tables"]) for r in sw["rounds"]] == [3, 3]
    assert all(len(r["byes"]) == 1 for r in sw["rounds"])
    assert ko["bracket"]["size"] == 4
    assert {m["section"] for m in ko["bracket"]["matches"]} == {"winners", "third_place"}
    games = [summarize_game(r.players, r.result, r.hands or [], r.stats, r.deal_id)
             for r in p.rows.values() if r.result is not None]
    text = markdown("Cup", compute(p.spec.bots, games), {}, structure=shape)
    assert "### Stage 1: Swiss (over)" in text and "### Stage 2: Knockout (over)" in text
    assert "| 1 | bye |" in text and "third place 1.1" in text
    assert "### Final ranking" in text and f"1. {shape['ranking'][0]}" in text


def test_check_shows_the_structure_and_the_most_games(tmp_path: Path,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    f = tmp_path / "cup.toml"
    parts = "".join(f'[[participants]]\nname = "b{i}"\n' for i in range(20))
    f.write_text('name = "Open"\n[[format.stages]]\nkind = "swiss"\nadvance = 8\n'
                 '[[format.stages]]\nkind = "double_elimination"\n'
                 '[format.stages.match]\ngames = 3\n' + parts, encoding="utf-8")
    assert main(["tournament", "check", str(f)]) == 0
    out = capsys.readouterr().out
    assert "Open: valid. 20 bots, 2 stages, at most 260 games" in out
    assert "stage 1, Swiss: 20 bots, 7 rounds (automatic" in out
    assert "10 tables of 2, 2 games per table; at most 140 games; the top 8 go on" in out
    assert "stage 2, Double elimination: 8 bots, bracket of 8 (0 byes)" in out
    assert "at most 120 games" in out
    f.write_text('name = "Open"\n[format]\nkind = "knockout"\nrounds = 3\n' + parts,
                 encoding="utf-8")
    assert main(["tournament", "check", str(f)]) == 1
    assert "format.rounds: only for swiss, not knockout" in capsys.readouterr().out


def test_each_stage_has_its_standings() -> None:
    fmt = {"stages": [{"kind": "swiss", "rounds": 3, "advance": 4},
                      {"kind": "double_elimination"}]}
    p = Played(spec_of(7, fmt))
    p.run(coin())
    shape = structure(p.spec, p.tid, p.rows.values())
    got = stage_standings(p.spec, p.tid, p.rows.values())
    assert [(s.index, s.name, s.over) for s in got] == [(0, "Swiss", True),
                                                        (1, "Double elimination", True)]
    for s, stage in zip(got, shape["stages"], strict=True):
        assert [r.bot for r in s.standings.rows] == stage["ranking"]
        assert [r.rank for r in s.standings.rows] == list(range(1, len(stage["bots"]) + 1))
    swiss = got[0].standings
    assert sum(r.byes for r in swiss.rows) == 3  # 7 bots: a bye a round
    assert all(r.buchholz is not None for r in swiss.rows)
    assert swiss.to_json()["tiebreaks"][2] == "buchholz"
    assert sum(r.games for r in got[1].standings.rows) == 2 * len(p.stage_games(1))
