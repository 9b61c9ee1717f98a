"""One tournament model, two codecs that agree: TOML (``TournamentSpec.from_dict`` /
``from_toml`` / ``to_dict`` / ``to_toml``) and protobuf (``chinchon_referee.tournament.wire``,
what ``CreateTournament`` reads). Same fields, same defaults, same validation."""

from __future__ import annotations

import datetime as dt
import tomllib
from pathlib import Path

import pytest
from chinchon.engine import RuleSet, RuleSetError
from chinchon.v1 import game_pb2 as g
from chinchon.v1 import tournament_pb2 as tpb
from chinchon.wire import duration
from chinchon_referee.config import MAX_SECONDS, Policies, TimeControl
from chinchon_referee.tournament.model import Participant, SpecError, StartMode, TournamentSpec
from chinchon_referee.tournament.wire import spec_from_proto, spec_to_proto
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

NAME_CHARS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_."
_seconds_ms = st.integers(0, int(MAX_SECONDS * 1000)).map(lambda ms: ms / 1000)


@st.composite
def specs(draw: st.DrawFn) -> TournamentSpec:
    first = st.sampled_from(NAME_CHARS[:-3])  # a name begins with a letter or a digit
    names = draw(st.lists(st.builds(str.__add__, first, st.text(NAME_CHARS, max_size=11)),
                          min_size=2, max_size=6, unique=True))
    parts = tuple(
        Participant(
            n,
            draw(st.sampled_from(["", f"token-of-{n}-0123456789"])),
            tuple(draw(st.lists(st.text(max_size=8), max_size=3))),
            draw(st.integers(0, 64)),
        )
        for n in names
    )
    table = draw(st.integers(2, min(4, len(names))))
    try:
        jokers = draw(st.integers(0, 2))
        rules = RuleSet(players=table, jokers=jokers,
                        score_limit=draw(st.integers(50, 200)),
                        open_discard=draw(st.booleans()),
                        # The house rules cross both codecs too (wild_cards a list).
                        wild_cards=draw(st.sampled_from([(), ("1O",), ("1O", "7B")]))[:2 - jokers],
                        jokers_per_meld=draw(st.sampled_from([1, 2])),
                        close_first_round=draw(st.booleans()))
    except RuleSetError:
        assume(False)
    start = draw(st.one_of(
        st.sampled_from(list(StartMode)),
        st.datetimes(dt.datetime(2000, 1, 1), dt.datetime.now() + dt.timedelta(days=300),
                     timezones=st.just(dt.UTC)),
    ))
    try:
        return TournamentSpec(
            name=draw(st.text(st.characters(exclude_categories=("Cc", "Cf", "Cs", "Co", "Cn")),
                              min_size=1, max_size=30).filter(str.strip)),
            participants=parts,
            rules=rules,
            time_control=TimeControl(draw(_seconds_ms.filter(lambda t: t >= 0.01)),
                                     draw(_seconds_ms)),
            policies=Policies(draw(st.integers(0, 5)), draw(st.integers(1, 5)),
                              draw(_seconds_ms), draw(_seconds_ms)),
            table_size=table,
            games_per_pairing=draw(st.integers(1, 40)),
            duplicate_deals=draw(st.booleans()),
            start=start,
            concurrency=draw(st.integers(1, 64)),
            seed=draw(st.text(max_size=20)),
        )
    except SpecError:
        assume(False)
        raise


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(spec=specs())
def test_the_model_round_trips_through_toml_and_through_protobuf(spec: TournamentSpec) -> None:
    assert TournamentSpec.from_dict(spec.to_dict()) == spec
    assert TournamentSpec.from_dict(tomllib.loads(spec.to_toml())) == spec
    wire = spec_to_proto(spec)
    assert spec_from_proto(wire) == spec
    assert spec_from_proto(tpb.TournamentSpec.FromString(wire.SerializeToString())) == spec


def test_an_empty_message_and_a_minimal_toml_make_the_same_model(tmp_path: Path) -> None:
    """Every default is the model's: the API no longer differs from TOML (it started
    manually, TOML when connected; durations and counts had their own defaults)."""
    toml = tmp_path / "t.toml"
    toml.write_text('name = "cup"\n[[participants]]\nname = "a"\n[[participants]]\nname = "b"\n',
                    encoding="utf-8")
    from_toml = TournamentSpec.from_toml(toml)
    from_api = spec_from_proto(tpb.TournamentSpec(
        name="cup", participants=[tpb.Participant(name="a"), tpb.Participant(name="b")]))
    assert from_api == from_toml
    assert from_toml.start is StartMode.MANUAL
    # Empty sub-messages are "all defaults" too.
    assert spec_from_proto(tpb.TournamentSpec(
        name="cup", participants=[tpb.Participant(name="a"), tpb.Participant(name="b")],
        rules={}, time_control={}, policies={})) == from_toml


def test_every_start_crosses_the_api_and_the_old_spelling_still_works() -> None:
    parts = [tpb.Participant(name="a"), tpb.Participant(name="b")]

    def start_of(**fields: object) -> object:
        return spec_from_proto(tpb.TournamentSpec(name="x", participants=parts, **fields)).start

    assert start_of() is StartMode.MANUAL
    assert start_of(start=tpb.TOURNAMENT_START_NOW) is StartMode.NOW
    assert start_of(start=tpb.TOURNAMENT_START_WHEN_CONNECTED) is StartMode.WHEN_CONNECTED
    assert start_of(start_when_connected=True) is StartMode.WHEN_CONNECTED  # deprecated
    when = dt.datetime(2024, 1, 1, 10, tzinfo=dt.UTC)
    msg = tpb.TournamentSpec(name="x", participants=parts)
    msg.start_time.FromDatetime(when)
    assert spec_from_proto(msg).start == when
    msg.start = tpb.TOURNAMENT_START_NOW
    with pytest.raises(SpecError, match=r"^start_time: give either start or start_time"):
        spec_from_proto(msg)
    assert TournamentSpec.from_dict({"name": "x", "participants": ["a", "b"],
                                     "start": "2024-01-01T11:00:00+01:00"}).start == when


def test_counts_set_to_zero_in_the_api_mean_zero() -> None:
    """``Policies.max_illegal_retries`` is ``optional`` now: 0 is 0 (it meant 2), as in
    TOML; ``max_strikes = 0`` is refused naming the field, as in TOML."""
    parts = [tpb.Participant(name="a"), tpb.Participant(name="b", instances=3)]
    msg = tpb.TournamentSpec(name="x", participants=parts,
                             policies=g.Policies(max_illegal_retries=0))
    spec = spec_from_proto(msg)
    assert spec.policies.max_illegal_retries == 0 and spec.policies.max_strikes == 3
    assert spec.participants[1].instances == 3
    msg.policies.CopyFrom(g.Policies(max_strikes=0))
    with pytest.raises(SpecError, match=r"^policies: max_strikes"):
        spec_from_proto(msg)
    with pytest.raises(SpecError, match=r"^policies: max_strikes"):
        TournamentSpec.from_dict({"name": "x", "participants": ["a", "b"],
                                  "policies": {"max_strikes": 0}})


def test_the_codecs_refuse_alike_naming_the_field() -> None:
    parts = [tpb.Participant(name="a"), tpb.Participant(name="b")]
    bad = [
        ({"table_size": 1}, {"table_size": 1}, "table_size"),
        ({"games_per_pairing": 0}, {"games_per_pairing": 0}, "games_per_pairing"),
        ({"concurrency": 65}, {"concurrency": 65}, "concurrency"),
        ({"time_control": {"per_move": 0}},
         {"time_control": {"per_move": duration(0)}}, "time_control.per_move"),
        ({"policies": {"reconnect_grace": MAX_SECONDS + 1}},
         {"policies": {"reconnect_grace": duration(MAX_SECONDS + 1)}}, "policies.reconnect_grace"),
    ]
    for toml_fields, proto_fields, field in bad:
        with pytest.raises(SpecError) as from_toml:
            TournamentSpec.from_dict({"name": "x", "participants": ["a", "b"], **toml_fields})
        with pytest.raises(SpecError) as from_api:
            spec_from_proto(tpb.TournamentSpec(name="x", participants=parts, **proto_fields))
        assert str(from_toml.value).startswith(field), str(from_toml.value)
        assert str(from_api.value) == str(from_toml.value)


def test_a_declaration_without_start_resumes_the_runs_it_made_before() -> None:
    """``tournament run`` resumes a run by the declaration's fingerprint: "manual" (the
    default now) hashes as "when_connected" (the TOML default before), which run treats
    alike, so the same file still finds its interrupted run."""
    decl = {"name": "x", "participants": ["a", "b"], "seed": "s"}
    old = TournamentSpec.from_dict({**decl, "start": "when_connected"})
    # 8d03920340f91061: this declaration's fingerprint before the change.
    assert TournamentSpec.from_dict(decl).fingerprint() == old.fingerprint() == "8d03920340f91061"
    assert TournamentSpec.from_dict({**decl, "start": "now"}).fingerprint() != old.fingerprint()


def test_the_house_rules_at_their_defaults_keep_a_declarations_fingerprint() -> None:
    """Rule-set options added later (wild_cards, jokers_per_meld, close_first_round) do
    not change the fingerprint of a declaration that leaves them at their defaults (it
    resumes the run it made before they existed); setting one does."""
    decl = {"name": "x", "participants": ["a", "b"], "seed": "s"}
    plain = TournamentSpec.from_dict(decl)
    assert plain.fingerprint() == "8d03920340f91061"  # (as before the house rules)
    spelled = TournamentSpec.from_dict({**decl, "rules": {
        "wild_cards": [], "jokers_per_meld": 2, "close_first_round": True}})
    assert spelled.fingerprint() == plain.fingerprint()
    wild = TournamentSpec.from_dict({**decl, "rules": {"wild_cards": ["1O"]}})
    assert wild.fingerprint() != plain.fingerprint()
    assert wild.rules.wild_cards == ("1O",)
    assert TournamentSpec.from_dict(tomllib.loads(wild.to_toml())) == wild


def test_duplicate_deals_need_as_many_relabellings_keeping_the_wild_cards_as_twins() -> None:
    """Twins are relabelled only by suit permutations that keep the wild cards wild: 6
    with 1O, 2 with 1O and 5C. A table of 3 has 3 twins per deal: with 1O and 5C two of
    them would be dealt the same cards, so the declaration is refused naming the field."""
    decl = {"name": "x", "participants": ["a", "b", "c"], "seed": "s", "table_size": 3,
            "duplicate_deals": True}
    ok = TournamentSpec.from_dict({**decl, "rules": {"wild_cards": ["1O"]}})
    assert ok.duplicate_deals and ok.rules.wild_cards == ("1O",)
    with pytest.raises(SpecError) as e:
        TournamentSpec.from_dict({**decl, "rules": {"wild_cards": ["1O", "5C"]}})
    assert str(e.value).startswith("duplicate_deals: the wild cards 1O 5C leave 2 suit")
    # Without duplicate deals, or at a table of 2, the same wild cards are fine.
    TournamentSpec.from_dict({**decl, "duplicate_deals": False, "rules": {"wild_cards": ["1O", "5C"]}})
    TournamentSpec.from_dict({**decl, "participants": ["a", "b"], "table_size": 2,
                              "rules": {"wild_cards": ["1O", "5C"]}})
