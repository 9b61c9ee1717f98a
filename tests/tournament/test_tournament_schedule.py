"""The round-robin scheduler and tournament declarations: properties over many shapes."""

from __future__ import annotations

import itertools
import math
from collections import Counter, defaultdict

import pytest
from chinchon_referee.tournament.model import SpecError, TournamentSpec
from chinchon_referee.tournament.round_robin import MAX_TABLES, Pairing, RoundRobin
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

# Derandomized: the same examples every run (the properties must hold for all of them).
SETTINGS = settings(max_examples=120, deadline=None, derandomize=True,
                    suppress_health_check=[HealthCheck.too_slow])

NAMES = [f"bot{i:02d}" for i in range(20)]
seeds = st.text(min_size=1, max_size=12)


@st.composite
def schedule_args(draw: st.DrawFn, balanced: bool | None = None) -> dict[str, object]:
    """RoundRobin arguments of any shape; ``balanced`` forces (True) or forbids (False)
    the balanced-subset mode, None lets either happen."""
    if balanced:
        n = draw(st.integers(6, 14))
        k = draw(st.integers(3, 4))
        max_tables = draw(st.integers(1, math.comb(n, k) - 1))
    else:
        n = draw(st.integers(2, 8))
        k = draw(st.integers(2, min(n, 4)))
        max_tables = MAX_TABLES if balanced is False else draw(st.sampled_from([MAX_TABLES, 3]))
    bots = draw(st.permutations(NAMES).map(lambda p: p[:n]))
    return {
        "bots": bots, "table_size": k, "games_per_table": draw(st.integers(1, 7)),
        "seed": draw(seeds), "duplicate": draw(st.booleans()),
        "tag": draw(st.sampled_from(["t", "t-abc"])), "max_tables": max_tables,
    }


def schedules(balanced: bool | None = None) -> st.SearchStrategy[RoundRobin]:
    return schedule_args(balanced).map(lambda kw: RoundRobin(**kw))  # type: ignore[arg-type]


def by_table(games: list[Pairing]) -> dict[int, list[Pairing]]:
    out: dict[int, list[Pairing]] = defaultdict(list)
    for p in games:
        out[p.table].append(p)
    return out


def is_rotation(a: tuple[str, ...], b: tuple[str, ...]) -> bool:
    return any(tuple(b[(i + r) % len(b)] for i in range(len(b))) == a for r in range(len(b)))


# -- balance -------------------------------------------------------------------------------


@SETTINGS
@given(schedules(balanced=False))
def test_all_k_subsets_each_play_the_same_number_of_games(rr: RoundRobin) -> None:
    games = list(rr)
    n, k = len(rr.bots), rr.k
    assert math.comb(n, k) <= MAX_TABLES
    # Every k-subset is a table, once.
    tables = Counter(frozenset(p.players) for p in games)
    assert set(tables) == {frozenset(c) for c in itertools.combinations(rr.bots, k)}
    assert set(tables.values()) == {rr.games_per_table}
    # So every pair meets the same number of times, and every bot plays as often.
    pairs = Counter(frozenset(pr) for p in games for pr in itertools.combinations(p.players, 2))
    assert len(pairs) == math.comb(n, 2)
    assert set(pairs.values()) == {rr.games_per_table * math.comb(n - 2, k - 2)}
    plays = Counter(b for p in games for b in p.players)
    assert set(plays.values()) == {rr.games_per_table * math.comb(n - 1, k - 1)}
    assert len(games) == len(rr) == math.comb(n, k) * rr.games_per_table


@SETTINGS
@given(schedules(balanced=True))
def test_balanced_subset_mode_makes_every_pair_meet(rr: RoundRobin) -> None:
    games = list(rr)
    n, k = len(rr.bots), rr.k
    # Fewer tables than k-subsets, but enough to cover every pair.
    assert math.ceil(math.comb(n, 2) / math.comb(k, 2)) <= len(rr.tables)
    pairs = Counter(frozenset(pr) for p in games for pr in itertools.combinations(p.players, 2))
    assert set(pairs) == {frozenset(pr) for pr in itertools.combinations(rr.bots, 2)}, \
        "some pair of bots never meets"
    # Tables are proper k-subsets of the participants and all play the same number of games.
    for t in rr.tables:
        assert len(t) == len(set(t)) == k and set(t) <= set(rr.bots)
    per_table = Counter(p.table for p in games)
    assert set(per_table) == set(range(len(rr.tables)))
    assert set(per_table.values()) == {rr.games_per_table}
    assert {b for p in games for b in p.players} == set(rr.bots)


@pytest.mark.parametrize("n,k", [(12, 3), (14, 4), (20, 3), (10, 4)])
def test_balanced_subset_mode_with_the_default_limit_and_a_small_one(n: int, k: int) -> None:
    for max_tables in (MAX_TABLES, 4):
        rr = RoundRobin(NAMES[:n], k, 2, "s", max_tables=max_tables)
        if math.comb(n, k) > max_tables:
            pairs = Counter(frozenset(pr) for t in rr.tables for pr in itertools.combinations(t, 2))
            assert len(pairs) == math.comb(n, 2)
        else:
            assert len(rr.tables) == math.comb(n, k)


# -- seats ---------------------------------------------------------------------------------


@SETTINGS
@given(schedules())
def test_every_bot_sits_in_every_seat_of_its_table_equally_often(rr: RoundRobin) -> None:
    for t, games in by_table(list(rr)).items():
        assert set(games[0].players) == set(rr.tables[t])
        seats: Counter[tuple[str, int]] = Counter()
        for p in games:
            assert set(p.players) == set(rr.tables[t]) and len(p.players) == rr.k
            for s, b in enumerate(p.players):
                seats[(b, s)] += 1
        assert len(seats) == rr.k * rr.k
        assert set(seats.values()) == {rr.games_per_table // rr.k}


# -- duplicate deals -----------------------------------------------------------------------


@SETTINGS
@given(schedules())
def test_games_sharing_a_deal_are_exactly_one_rotation_of_one_table(rr: RoundRobin) -> None:
    games = list(rr)
    deals: dict[str, list[Pairing]] = defaultdict(list)
    for p in games:
        deals[p.deal_id].append(p)
    if not rr.duplicate:
        assert len(deals) == len(games), "a deal id is reused without duplicate deals"
        return
    assert len(deals) == len(rr.tables) * rr.blocks
    for deal, group in deals.items():
        assert deal.startswith(f"{rr.tag}/")
        assert len(group) == rr.k
        assert len({p.table for p in group}) == 1
        assert len({frozenset(p.players) for p in group}) == 1
        assert sorted(p.rotation for p in group) == list(range(rr.k))
        # The seatings are the k distinct rotations of one order.
        first = group[0].players
        assert len({p.players for p in group}) == rr.k
        assert all(is_rotation(p.players, first) for p in group)
        # Each bot gets each seat (so every hand of the deal) exactly once.
        for s in range(rr.k):
            assert {p.players[s] for p in group} == set(first)


# -- determinism and resume ----------------------------------------------------------------


@SETTINGS
@given(st.one_of(schedule_args(), schedule_args(balanced=True)))
def test_the_same_seed_gives_the_same_schedule(kw: dict[str, object]) -> None:
    rr = RoundRobin(**kw)  # type: ignore[arg-type]
    again = RoundRobin(**kw)  # type: ignore[arg-type]
    assert again.tables == rr.tables and again.base == rr.base
    assert list(again) == list(rr)
    assert list(rr) == list(rr)  # iterating twice gives the same games


@SETTINGS
@given(st.integers(8, 10), st.integers(2, 3), seeds, seeds)
def test_different_seeds_give_different_seat_orders(n: int, k: int, s1: str, s2: str) -> None:
    if s1 == s2:
        s2 = s1 + "x"
    a = RoundRobin(NAMES[:n], k, k, s1)
    b = RoundRobin(NAMES[:n], k, k, s2)
    # At least 28 tables, each with an independently shuffled base order.
    assert a.tables == b.tables
    assert a.base != b.base
    assert [p.players for p in a] != [p.players for p in b]


@SETTINGS
@given(st.integers(2, 6), st.integers(2, 4), st.integers(1, 13))
def test_games_per_table_rounds_up_to_whole_rotations(n: int, k: int, g: int) -> None:
    k = min(k, n)
    rr = RoundRobin(NAMES[:n], k, g, "seed")
    assert rr.games_per_table == math.ceil(g / k) * k
    assert rr.games_per_table >= g and rr.games_per_table - g < k
    assert rr.games_per_table % k == 0
    assert len(rr) == len(rr.tables) * rr.games_per_table == len(list(rr))


def test_games_interleave_by_step() -> None:
    rr = RoundRobin(NAMES[:4], 2, 6, "x")
    games = list(rr)
    # Each step has every table in every rotation before any table plays again.
    step = len(rr.tables) * rr.k
    for i in range(0, len(games), step):
        assert sorted((p.table, p.rotation) for p in games[i:i + step]) == sorted(
            (t, r) for t in range(len(rr.tables)) for r in range(rr.k))


@SETTINGS
@given(schedules())
def test_twins_of_a_deal_are_steps_apart(rr: RoundRobin) -> None:
    """The rotations of one deal are at least ``blocks // k`` steps apart (a step: every
    table in every rotation once), so concurrent games are rarely twins."""
    if not rr.duplicate:
        return
    step = len(rr.tables) * rr.k
    deals: dict[str, list[int]] = defaultdict(list)
    for p in rr:
        deals[p.deal_id].append(p.seq // step)
    for steps in deals.values():
        if rr.blocks >= rr.k:
            assert min(abs(a - b) for a, b in itertools.combinations(steps, 2)) >= rr.blocks // rr.k
    if rr.blocks >= 2 * rr.k:
        assert rr.twin_gap >= 2


def test_bad_schedules_are_refused() -> None:
    with pytest.raises(ValueError):
        RoundRobin(["a", "a", "b"], 2, 2, "s")
    with pytest.raises(ValueError):
        RoundRobin(["a", "b"], 3, 2, "s")
    with pytest.raises(ValueError):
        RoundRobin(["a", "b"], 1, 2, "s")


# -- declarations --------------------------------------------------------------------------


def base_decl(**changes: object) -> dict[str, object]:
    d: dict[str, object] = {
        "name": "league",
        "participants": [{"name": "a"}, {"name": "b"}, {"name": "c"}],
        "games_per_pairing": 2,
    }
    d.update(changes)
    return d


def test_a_good_declaration_round_trips() -> None:
    spec = TournamentSpec.from_dict(base_decl(
        table_size=3, rules={"jokers": 1}, time_control={"per_move": 0.5, "bank": 3},
        policies={"reconnect_grace": 2, "max_strikes": 2, "absence_limit": 90},
        start="2024-01-01T10:00:00",
        seed="abc", duplicate_deals=False, concurrency=3,
    ))
    assert spec.bots == ["a", "b", "c"]
    assert spec.rules.players == 3 and spec.rules.jokers == 1
    assert spec.time_control.per_move == 0.5 and spec.policies.reconnect_grace == 2.0
    assert spec.policies.absence_limit == 90.0
    again = TournamentSpec.from_dict(spec.to_dict())
    assert again == spec
    assert again.fingerprint() == spec.fingerprint()
    assert TournamentSpec.from_dict({**spec.to_dict(), "seed": "other"}).fingerprint() \
        != spec.fingerprint()


def test_duplicate_deals_are_off_unless_the_organizer_asks() -> None:
    """docs/duplicate-deals.md: a bot that remembers one twin wins more of the other, so
    the default is off, in TOML, in the admin API and in the demo; asking turns it on."""
    from chinchon.v1 import tournament_pb2 as tpb
    from chinchon_referee.service.tournaments import spec_from_proto

    from tests.support.helpers import ROOT

    assert TournamentSpec.from_dict(base_decl()).duplicate_deals is False
    assert TournamentSpec.from_dict(base_decl(duplicate_deals=True)).duplicate_deals is True
    parts = [tpb.Participant(name=n) for n in "abc"]
    assert spec_from_proto(tpb.TournamentSpec(name="x", participants=parts)).duplicate_deals is False
    asked = tpb.TournamentSpec(name="x", participants=parts, duplicate_deals=True)
    assert spec_from_proto(asked).duplicate_deals is True
    demo = TournamentSpec.from_toml(ROOT / "sample_bots" / "demo_tournament.toml")
    assert demo.duplicate_deals is False


def test_the_demo_declaration_is_valid() -> None:
    from tests.support.helpers import ROOT

    spec = TournamentSpec.from_toml(ROOT / "sample_bots" / "demo_tournament.toml")
    assert len(spec.participants) == 4 and spec.table_size == 2


@pytest.mark.parametrize(
    "decl,field",
    [
        (base_decl(colour="red"), "colour"),
        (base_decl(participants=[{"name": "a"}, {"name": "b"}, {"name": "a"}]), "participants"),
        (base_decl(participants=[{"name": "a", "cmd": ["x"]}, {"name": "b"}]),
         "participants[0].cmd"),
        (base_decl(participants=[{"name": "a"}]), "participants"),
        (base_decl(participants=[{"name": "a b"}, {"name": "c"}]), "participants"),
        (base_decl(table_size=4), "table_size"),
        (base_decl(table_size=1), "table_size"),
        (base_decl(participants=[f"b{i}" for i in range(8)], table_size=6), "table_size"),
        (base_decl(table_size=3, rules={"players": 2}), "rules.players"),
        (base_decl(rules={"players": 3}), "rules.players"),
        (base_decl(start="next tuesday"), "start"),
        (base_decl(start="2030-13-45T99:00"), "start"),
        (base_decl(games_per_pairing=0), "games_per_pairing"),
        (base_decl(games_per_pairing="3"), "games_per_pairing"),
        (base_decl(concurrency=0), "concurrency"),
        (base_decl(name="  "), "name"),
        (base_decl(rules={"jokers": 99}), "rules.jokers"),
        (base_decl(policies={"absence_limit": -1}), "policies.absence_limit"),
        (base_decl(participants=[{"name": "a"}, {"name": "b", "token": "short-tok"}]),
         "participants[1].token (bot 'b'): a token needs at least 16 characters"),
    ],
)
def test_bad_declarations_are_refused_naming_the_field(decl: dict[str, object], field: str) -> None:
    with pytest.raises(SpecError) as e:
        TournamentSpec.from_dict(decl)
    assert str(e.value).startswith(field), str(e.value)


def test_bad_toml_is_refused(tmp_path) -> None:
    p = tmp_path / "t.toml"
    p.write_text('name = "x"\n[[participants]\n', encoding="utf-8")
    with pytest.raises(SpecError, match="not valid TOML"):
        TournamentSpec.from_toml(p)
    with pytest.raises(SpecError, match="cannot read"):
        TournamentSpec.from_toml(tmp_path / "missing.toml")


def test_the_absence_limit_defaults_keeps_old_fingerprints_and_crosses_the_admin_api() -> None:
    """``policies.absence_limit``: 300 s by default (a declaration without it keeps the
    fingerprint it had before the field existed); CreateTournament sets it through the
    additive ``Policies.absence_limit`` Duration, and 0 there means 0, not the default."""
    from chinchon.v1 import game_pb2 as g
    from chinchon.v1 import tournament_pb2 as tpb
    from chinchon.wire import duration
    from chinchon_referee.service.tournaments import spec_from_proto

    spec = TournamentSpec.from_dict(base_decl())
    assert spec.policies.absence_limit == 300.0
    assert "absence_limit" in spec.to_dict()["policies"]
    assert TournamentSpec.from_dict(base_decl(policies={"absence_limit": 300})).fingerprint() \
        == spec.fingerprint()
    assert TournamentSpec.from_dict(base_decl(policies={"absence_limit": 30})).fingerprint() \
        != spec.fingerprint()
    msg = tpb.TournamentSpec(name="x", participants=[tpb.Participant(name=n) for n in "ab"])
    assert spec_from_proto(msg).policies.absence_limit == 300.0
    msg.policies.CopyFrom(g.Policies(absence_limit=duration(0.0)))
    assert spec_from_proto(msg).policies.absence_limit == 0.0
    msg.policies.CopyFrom(g.Policies(absence_limit=duration(45.5)))
    assert spec_from_proto(msg).policies.absence_limit == 45.5
    msg.policies.absence_limit.seconds = -1
    with pytest.raises(SpecError, match="absence_limit"):
        spec_from_proto(msg)


def test_create_tournament_refuses_a_short_token() -> None:
    from chinchon.v1 import tournament_pb2 as tpb
    from chinchon_referee.service.tournaments import spec_from_proto

    msg = tpb.TournamentSpec(name="x", participants=[
        tpb.Participant(name="a", token="a" * 16), tpb.Participant(name="b", token="b" * 15)])
    with pytest.raises(SpecError, match=r"participants\[1\]\.token .*16 characters") as e:
        spec_from_proto(msg)
    assert "b" * 15 not in str(e.value)
