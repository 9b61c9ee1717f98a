"""The ``format`` field of the one tournament model: both spellings (TOML and
``chinchon.v1.TournamentSpec.format``) read and write the same formats, refuse the same
mistakes with the same message naming the field, and a declaration without a format is
the round-robin it always was: same fingerprint, same games."""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

import pytest
from chinchon.v1 import tournament_pb2 as tpb
from chinchon_referee.tournament.formats.plan import Next, next_games
from chinchon_referee.tournament.formats.spec import (
    Format,
    Kind,
    MatchMode,
    MatchSpec,
    Seeding,
    Stage,
    default_rounds,
)
from chinchon_referee.tournament.model import MAX_GAMES, SpecError, TournamentSpec, schedule
from chinchon_referee.tournament.tiebreaks import Tiebreak
from chinchon_referee.tournament.wire import spec_from_proto, spec_to_proto
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from tests.support.formats import spec_of

NAMES = [f"b{i}" for i in range(12)]


@st.composite
def stages(draw: st.DrawFn, n: int, first: bool, last: bool) -> Stage:
    kinds = [Kind.ROUND_ROBIN, Kind.SWISS, Kind.KNOCKOUT, Kind.DOUBLE_ELIMINATION]
    kind = draw(st.sampled_from([*kinds, Kind.GAUNTLET] if first else kinds))
    given: dict[str, Any] = {"kind": kind, "name": draw(st.sampled_from(["", "Final"]))}
    if not last:
        given["advance"] = draw(st.integers(2, n))
    if first:
        given["seeding"] = draw(st.sampled_from([None, Seeding.ORDER, Seeding.RANDOM,
                                                 Seeding.RATINGS]))
    else:
        given["seeding"] = draw(st.sampled_from([None, Seeding.STANDINGS, Seeding.ORDER]))
    if kind is Kind.GAUNTLET:
        given["challengers"] = tuple(draw(st.lists(st.sampled_from(NAMES[:n]), min_size=1,
                                                   max_size=n - 1, unique=True)))
    if kind in (Kind.ROUND_ROBIN, Kind.SWISS, Kind.GAUNTLET):
        given["games_per_pairing"] = draw(st.sampled_from([None, 1, 2, 3]))
    if kind is Kind.ROUND_ROBIN:
        given["groups"] = draw(st.integers(1, n // 2))
    if kind is Kind.SWISS:
        given["rounds"] = draw(st.sampled_from([None, 1, 2]))
        given["bye_points"] = draw(st.sampled_from([None, 0.0, 0.5, 1.0]))
    if kind in (Kind.KNOCKOUT, Kind.DOUBLE_ELIMINATION):
        given["match"] = MatchSpec(draw(st.integers(1, 7)), draw(st.sampled_from(list(MatchMode))),
                                   draw(st.integers(0, 4)), draw(st.integers(0, 3)),
                                   draw(st.sampled_from([None, True, False])))
    if kind is Kind.KNOCKOUT:
        given["third_place"] = draw(st.booleans())
    if kind is Kind.DOUBLE_ELIMINATION:
        given["grand_final_reset"] = draw(st.sampled_from([None, True, False]))
    given["tiebreaks"] = tuple(draw(st.lists(st.sampled_from(list(Tiebreak)), unique=True,
                                             max_size=3)))
    return Stage(**given)


@st.composite
def formatted(draw: st.DrawFn) -> TournamentSpec:
    n = draw(st.integers(2, 12))
    count = draw(st.integers(1, 3))
    out, size = [], n
    for i in range(count):
        s = draw(stages(size, i == 0, i == count - 1))
        out.append(s)
        size = s.advance or size
    try:
        return TournamentSpec(name="cup", participants=spec_of(NAMES[:n]).participants,
                              seed="s", format=Format(tuple(out)),
                              duplicate_deals=draw(st.booleans()))
    except SpecError:
        assume(False)
        raise


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(spec=formatted())
def test_formats_round_trip_through_toml_and_protobuf(spec: TournamentSpec) -> None:
    assert TournamentSpec.from_dict(spec.to_dict()) == spec
    assert TournamentSpec.from_dict(tomllib.loads(spec.to_toml())) == spec
    wire = spec_to_proto(spec)
    assert spec_from_proto(tpb.TournamentSpec.FromString(wire.SerializeToString())) == spec


def test_a_declaration_without_a_format_is_the_round_robin_it_always_was() -> None:
    """Same stored declaration, same fingerprint, and ``next_games`` gives the very games
    ``schedule`` gave (seq, id, players, deal), so existing records and tests stand."""
    decl = {"name": "x", "participants": ["a", "b", "c"], "seed": "s", "games_per_pairing": 3}
    spec = TournamentSpec.from_dict(decl)
    assert "format" not in spec.to_dict() and "format" not in spec.to_toml()
    assert spec.format == Format() and spec.format.legacy
    # Any other option (groups, tie-breaks, seeding...) makes it a stage of the formats.
    assert not spec_of(4, {"kind": "round_robin", "tiebreaks": ["points"]}).format.legacy
    assert not spec_to_proto(spec).HasField("format")
    # The fingerprint of this declaration before formats existed.
    assert TournamentSpec.from_dict({**decl, "games_per_pairing": 2}).fingerprint() == \
        TournamentSpec.from_dict({"name": "x", "participants": ["a", "b", "c"], "seed": "s"}
                                 ).fingerprint()
    assert TournamentSpec.from_dict({"name": "x", "participants": ["a", "b"], "seed": "s"}
                                    ).fingerprint() == "8d03920340f91061"
    for d in (decl, {**decl, "table_size": 3, "duplicate_deals": True},
              {**decl, "format": {"kind": "round_robin", "name": "League"}}):
        spec = TournamentSpec.from_dict(d)
        step = next_games(spec, "t-1", [])
        assert isinstance(step, Next) and step.stage == 0
        got = [(g.seq, g.id, g.players, g.deal_id) for g in step.step.games]  # type: ignore[union-attr]
        want = [(p.seq, f"t-1-g{p.seq:05d}", p.players, p.deal_id) for p in schedule(spec, "t-1")]
        assert got == want


def test_the_spellings_of_a_format() -> None:
    one = spec_of(5, "swiss")
    assert one.format == Format((Stage(Kind.SWISS),))
    assert spec_of(5, {"kind": "swiss"}) == one
    assert spec_of(5, {"stages": [{"kind": "swiss"}]}) == one
    staged = spec_of(9, {"stages": [{"kind": "swiss", "rounds": 3, "advance": 4},
                                    {"kind": "knockout", "third_place": True,
                                     "match": {"games": 5, "mode": "first_to"}}]})
    ko = staged.format.stages[1]
    assert ko.match == MatchSpec(games=5, mode=MatchMode.FIRST_TO) and ko.third_place
    assert ko.seeding_for(1) is Seeding.STANDINGS
    assert staged.format.stages[0].seeding_for(0) is Seeding.ORDER
    # In the API: the same model.
    msg = tpb.TournamentSpec(name="cup", seed="formats",
                             participants=[tpb.Participant(name=f"b{i:02d}") for i in range(9)])
    msg.format.stages.add(kind=tpb.STAGE_KIND_SWISS, rounds=3, advance=4)
    msg.format.stages.add(kind=tpb.STAGE_KIND_KNOCKOUT, third_place=True,
                          match=tpb.MatchSpec(games=5, mode=tpb.MATCH_MODE_FIRST_TO))
    assert spec_from_proto(msg) == staged


def test_default_swiss_rounds() -> None:
    """log2(n) rounded up, + 2; never more than the bots allow without repeats."""
    assert [default_rounds(n, 2) for n in (2, 3, 4, 8, 9, 64, 65, 200)] == [
        1, 3, 3, 5, 6, 8, 9, 10]
    assert default_rounds(27, 3) == 5


def _msg(n: int = 4, **stage: Any) -> tpb.TournamentSpec:
    msg = tpb.TournamentSpec(name="cup", seed="formats",
                             participants=[tpb.Participant(name=f"b{i:02d}") for i in range(n)])
    msg.format.stages.add(**stage)
    return msg


# (TOML format, the same in the API or None, bots, table_size, the message's start)
BAD: list[tuple[Any, dict[str, Any] | None, int, int, str]] = [
    ("chess", None, 4, 2, "format: 'chess' is not one of round_robin, gauntlet, swiss"),
    ({"kind": "swiss", "laps": 3}, None, 4, 2, "format.laps: unknown field"),
    ({"rounds": 3}, {"rounds": 3}, 4, 2, "format.kind: every stage needs its kind"),
    ({"kind": "swiss", "rounds": 0}, {"kind": tpb.STAGE_KIND_SWISS, "rounds": 0}, 8, 2,
     "format.rounds: 1 to 7 for 8 bots (more would repeat pairings), got 0"),
    ({"kind": "swiss", "rounds": 8}, {"kind": tpb.STAGE_KIND_SWISS, "rounds": 8}, 8, 2,
     "format.rounds: 1 to 7 for 8 bots"),
    ({"kind": "swiss", "rounds": 101}, {"kind": tpb.STAGE_KIND_SWISS, "rounds": 101}, 9, 3,
     "format.rounds: 1 to 100 for 9 bots, got 101"),
    ({"kind": "swiss", "bye_points": 3.0}, {"kind": tpb.STAGE_KIND_SWISS, "bye_points": 3.0},
     5, 2, "format.bye_points: 0 to 2 (the games of a table), got 3.0"),
    ({"kind": "swiss", "rounds": 2.5}, None, 5, 2, "format.rounds: must be a whole number"),
    ({"kind": "knockout", "match": {"games": 0}},
     {"kind": tpb.STAGE_KIND_KNOCKOUT, "match": tpb.MatchSpec(games=0)}, 4, 2,
     "format.match.games: 1 to 99 for best_of, got 0"),
    ({"kind": "knockout", "match": {"games": 51, "mode": "first_to"}},
     {"kind": tpb.STAGE_KIND_KNOCKOUT,
      "match": tpb.MatchSpec(games=51, mode=tpb.MATCH_MODE_FIRST_TO)}, 4, 2,
     "format.match.games: 1 to 50 for first_to, got 51"),
    ({"kind": "knockout", "match": {"extra_games": 21}},
     {"kind": tpb.STAGE_KIND_KNOCKOUT, "match": tpb.MatchSpec(extra_games=21)}, 4, 2,
     "format.match.extra_games: 0 to 20, got 21"),
    ({"kind": "knockout", "match": {"sudden_death": 11}},
     {"kind": tpb.STAGE_KIND_KNOCKOUT, "match": tpb.MatchSpec(sudden_death=11)}, 4, 2,
     "format.match.sudden_death: 0 to 10, got 11"),
    ({"kind": "knockout"}, {"kind": tpb.STAGE_KIND_KNOCKOUT}, 4, 3,
     "format.kind: a knockout is played at tables of 2 (table_size is 3)"),
    ({"kind": "swiss", "third_place": True},
     {"kind": tpb.STAGE_KIND_SWISS, "third_place": True}, 4, 2,
     "format.third_place: only for knockout, not swiss"),
    ({"kind": "knockout", "rounds": 3}, {"kind": tpb.STAGE_KIND_KNOCKOUT, "rounds": 3}, 4, 2,
     "format.rounds: only for swiss, not knockout"),
    ({"kind": "gauntlet"}, {"kind": tpb.STAGE_KIND_GAUNTLET}, 4, 2,
     "format.challengers: a gauntlet needs at least one challenger"),
    ({"kind": "gauntlet", "challengers": ["b00", "b01"]},
     {"kind": tpb.STAGE_KIND_GAUNTLET, "challengers": ["b00", "b01"]}, 2, 2,
     "format.challengers: every participant is a challenger: a gauntlet needs a field"),
    ({"kind": "gauntlet", "challengers": ["zed"]},
     {"kind": tpb.STAGE_KIND_GAUNTLET, "challengers": ["zed"]}, 4, 2,
     "format.challengers: 'zed' is not a participant"),
    ({"kind": "round_robin", "groups": 3}, {"kind": tpb.STAGE_KIND_ROUND_ROBIN, "groups": 3},
     5, 2, "format.groups: 1 to 2 (each group needs 2 bots), got 3"),
    ({"kind": "knockout", "seeding": "ratings"},
     {"kind": tpb.STAGE_KIND_KNOCKOUT, "seeding": tpb.SEEDING_RATINGS}, 4, 2,
     "format.seeding: seeding by ratings needs every participant's rating"),
    ({"kind": "knockout", "seeding": "standings"},
     {"kind": tpb.STAGE_KIND_KNOCKOUT, "seeding": tpb.SEEDING_STANDINGS}, 4, 2,
     "format.seeding: the first stage has no previous standings"),
    ({"kind": "knockout", "seeds": ["b01", "b01"]},
     {"kind": tpb.STAGE_KIND_KNOCKOUT, "seeds": ["b01", "b01"]}, 4, 2,
     "format.seeds: b01 listed twice"),
    ({"kind": "swiss", "tiebreaks": ["points", "luck"]}, None, 4, 2,
     "format.tiebreaks: unknown tie-break 'luck'"),
    ({"kind": "swiss", "advance": 2}, {"kind": tpb.STAGE_KIND_SWISS, "advance": 2}, 4, 2,
     "format.advance: the last stage has no next stage"),
    ({"stages": [{"kind": "swiss"}, {"kind": "knockout"}]}, None, 4, 2,
     "format.stages[0].advance: how many bots go on to stage 2"),
    ({"stages": [{"kind": "swiss", "advance": 1}, {"kind": "knockout"}]}, None, 4, 2,
     "format.stages[0].advance: 2 to the stage's 4 bots, got 1 (the next stage needs 2 bots"),
    ({"stages": [{"kind": "swiss", "advance": 5}, {"kind": "knockout"}]}, None, 4, 2,
     "format.stages[0].advance: 2 to the stage's 4 bots, got 5"),
    ({"stages": [{"kind": "swiss", "advance": 2},
                 {"kind": "gauntlet", "challengers": ["b00"]}]}, None, 4, 2,
     "format.stages[1].kind: a gauntlet names its challengers, so it is the first stage"),
    ({"stages": [{"kind": "swiss", "advance": 2}, {"kind": "knockout", "seeds": ["b00"]}]},
     None, 4, 2, "format.stages[1].seeds: a seed list is for the first stage"),
    ({"stages": [{"kind": "swiss"}] * 9}, None, 4, 2, "format.stages: 1 to 8 stages, got 9"),
    ({"kind": "swiss", "games_per_pairing": 5000},
     {"kind": tpb.STAGE_KIND_SWISS, "games_per_pairing": 5000}, 200, 2,
     f"format: it could take 5,000,000 games (stage 1: 5,000,000); at most {MAX_GAMES:,}"),
]


@pytest.mark.parametrize("fmt,api,n,k,message", BAD, ids=[m[:40] for *_, m in BAD])
def test_a_bad_format_is_refused_naming_the_field(fmt: Any, api: dict[str, Any] | None, n: int,
                                                  k: int, message: str) -> None:
    with pytest.raises(SpecError) as toml:
        spec_of(n, fmt, table_size=k)
    assert str(toml.value).startswith(message), str(toml.value)
    if api is not None:
        msg = _msg(n, **api)
        msg.table_size = k
        with pytest.raises(SpecError) as wire:
            spec_from_proto(msg)
        assert str(wire.value) == str(toml.value)


def test_ratings_are_numbers_and_seed_by_ratings() -> None:
    parts = [{"name": "a", "rating": 1500}, {"name": "b", "rating": 1800.5}, {"name": "c",
                                                                              "rating": 1600}]
    spec = TournamentSpec.from_dict({"name": "x", "participants": parts,
                                     "format": {"kind": "knockout", "seeding": "ratings"}})
    assert [p.rating for p in spec.participants] == [1500.0, 1800.5, 1600.0]
    assert spec_from_proto(spec_to_proto(spec)) == spec
    with pytest.raises(SpecError, match=r"^participants\[0\]\.rating: must be a number"):
        TournamentSpec.from_dict({"name": "x", "participants": [{"name": "a", "rating": "hi"},
                                                                "b"]})
    with pytest.raises(SpecError, match=r"^participants.rating: a: a number from"):
        TournamentSpec.from_dict({"name": "x", "participants": [{"name": "a",
                                                                  "rating": float("inf")}, "b"]})


def test_a_format_is_declared_with_its_first_games_only(tmp_path: Path) -> None:
    """Declaring a format stores its first games (a Swiss's first round), not a
    round-robin in its place; the other rounds are created as they come due."""
    from chinchon_referee.auth import TokenBook
    from chinchon_referee.director.declare import declare
    from chinchon_referee.storage import SqliteStore

    store = SqliteStore(str(tmp_path / "t.sqlite3"))
    try:
        tid, _ = declare(store, TokenBook(), spec_of(6, {"kind": "swiss", "rounds": 3}))
        games = store.games(tid)
        assert len(games) == 3 * 2  # 3 tables of the first round, 2 games each
        assert sorted(b for g in games for b in g.players) == sorted(
            [f"b{i:02d}" for i in range(6)] * 2)
    finally:
        store.close()
