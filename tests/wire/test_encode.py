"""The referee's pre-encoded ActionRequests parse to exactly the messages protobuf builds.

``chinchon.wire.fast`` writes the protobuf encoding of every ActionRequest by hand
(from cached pieces) for speed; ``chinchon.wire.convert`` builds the same message with
the protobuf classes. Over whole games under random rule variants, bots, names, clocks
and request ids, both must parse to equal messages.
"""

from __future__ import annotations

import random

import pytest
from chinchon.engine import (
    GreedyBot,
    MalformedInput,
    RuleSet,
    ShuffleSource,
    apply,
    legal_actions,
    new_game,
    observation,
)
from chinchon.v1 import game_pb2 as g
from chinchon.v1 import referee_pb2 as pb
from chinchon.wire import (
    MAX_REMEMBERED,
    MAX_REMEMBERED_BYTES,
    RequestEncoder,
    action_bytes,
    action_from_wire,
    action_to_wire,
    answer_fields,
    decode_action,
    delimited,
    duration,
    duration_bytes,
    observation_to_wire,
    remembered_answers,
    remembered_bytes,
    varint,
)
from google.protobuf.duration_pb2 import Duration
from google.protobuf.internal.encoder import _VarintBytes
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.support.engine import rule_sets

NAMES = st.lists(
    st.text(alphabet=st.characters(codec="utf-8", exclude_categories=["Cs"]), min_size=1,
            max_size=12),
    min_size=6, max_size=6,
)


def expected(rid: int, game_id: str, obs: g.Observation, legal: list, move: float,
             bank: float, attempt: int) -> pb.PlayResponse:
    return pb.PlayResponse(action_request=pb.ActionRequest(
        request_id=rid, game_id=game_id, observation=obs,
        legal_actions=[action_to_wire(a) for a in legal],
        move_time=duration(move), bank_time=duration(bank), attempt=attempt))


@settings(max_examples=40, deadline=None)
@given(rules=rule_sets(), seed=st.text(max_size=6), names=NAMES,
       game_id=st.text(max_size=20), greedy=st.floats(0, 1), data=st.data())
def test_encoded_requests_parse_to_the_protobuf_built_messages(
    rules: RuleSet, seed: str, names: list[str], game_id: str, greedy: float,
    data: st.DataObject,
) -> None:
    names = names[: rules.players]
    rng = random.Random(seed)
    bot = GreedyBot()
    enc = RequestEncoder(game_id, rules)
    state = new_game(rules)
    source = ShuffleSource(seed, "encode")
    ack = b""
    ack_expected: pb.ActionAccepted | None = None
    checked = 0
    while not state.is_over and checked < 400:
        if state.is_chance:
            state = apply(state, source.chance(state))
            continue
        seat = state.to_act
        legal = legal_actions(state)
        obs = observation(state, seat, names)
        rid = rng.choice([0, 1, 127, 128, 16383, 16384, 2**21, 2**40, rng.randrange(2**64)])
        move = rng.choice([0.0, 1.0, 0.25, 1e-9, 30.0, 12.3456789, 3600.5, -1.0])
        bank = rng.choice([0.0, 30.0, 29.123456, 5e-4])
        attempt = rng.choice([0, 0, 1, 2])
        got = pb.PlayResponse.FromString(
            enc.request(rid, enc.observation(obs), enc.legal(legal), move, bank, attempt, ack))
        want = expected(rid, game_id, observation_to_wire(obs), legal, move, bank, attempt)
        if ack_expected is not None:
            want.accepted.CopyFrom(ack_expected)
        assert got == want
        checked += 1
        if rng.random() < greedy:
            action = bot.choose(obs, legal)
        else:
            action = rng.choice(legal)
        took = rng.choice([0.0, 0.0000163, 0.000321, 0.00209, 0.05, 0.2684, 0.5, 1.75, 31.0])
        ack = enc.accepted(rid, action, took)
        ack_expected = pb.ActionAccepted(request_id=rid, action=action_to_wire(action),
                                         time_taken=duration(took))
        state = apply(state, action, seat=seat)
    assert checked > 0


def test_varints_match_protobuf() -> None:
    for n in [*range(0, 20_000), 2**21 - 1, 2**21, 2**28 - 1, 2**28, 2**35, 2**63, 2**64 - 1]:
        assert varint(n) == _VarintBytes(n), n
    for n in (-1, -2, -128, -(2**31)):
        assert varint(n) == _VarintBytes(n + 2**64), n
    # An int32 field set to -1 parses back as -1.
    assert g.Observation.FromString(b"\x70" + varint(-1)).closer == -1


def test_durations_and_length_delimited_fields_match_protobuf() -> None:
    for s in [0.0, 1e-9, 0.000321, 0.5, 1.0, 30.0, 59.999999999, 3600.25, -2.0]:
        want = Duration()
        want.FromNanoseconds(max(0, int(s * 1e9)))
        assert Duration.FromString(duration_bytes(s)) == want, s
        assert duration_bytes(s) == want.SerializeToString(), s
    long_id = "é" * 9000  # a length over two varint bytes, counted in UTF-8 bytes
    msg = pb.ActionRequest.FromString(delimited(2, long_id.encode()))
    assert msg.game_id == long_id


@settings(max_examples=300, deadline=None)
@given(rid=st.integers(0, 2**64 - 1), card=st.sampled_from(["1O", "12B", "JK1", "7C", ""]),
       kind=st.sampled_from(["discard", "draw_stock", "close_best", "close_melds", "lay_off"]),
       cut=st.integers(0, 200), junk=st.binary(max_size=40))
def test_answers_are_read_without_protobuf_exactly_as_protobuf_reads_them(
    rid: int, card: str, kind: str, cut: int, junk: bytes,
) -> None:
    action = {
        "discard": g.Action(discard=g.Discard(card=card)),
        "draw_stock": g.Action(draw_stock=g.DrawStock()),
        "close_best": g.Action(close=g.Close(card=card, best=True)),
        "close_melds": g.Action(close=g.Close(card=card, melds=g.MeldList(melds=[
            g.CardGroup(cards=["1O", "2O", "3O"]), g.CardGroup(cards=["5C", "5E", "5B"] * 20)]))),
        "lay_off": g.Action(lay_off=g.LayOff(card=card, meld=300, end=g.RUN_END_HIGH)),
    }[kind]
    raw = pb.PlayRequest(action=pb.ActionReply(request_id=rid, action=action)).SerializeToString()
    got = answer_fields(raw)
    if rid == 0:
        assert got is None  # no request_id field at all: protobuf parses it
    else:
        assert got == (rid, action.SerializeToString())
        if card or kind == "draw_stock":  # a card-less discard or close is malformed
            assert decode_action(got[1]) == action_from_wire(action)
    # Anything else is left to protobuf, never misread and never an exception.
    for other in (raw[:cut], raw + junk, junk, b"", pb.PlayRequest(hello=pb.Hello()).SerializeToString()):
        fields = answer_fields(other)
        if fields is not None:
            msg = pb.PlayRequest.FromString(other)
            assert msg.WhichOneof("kind") == "action"
            assert (msg.action.request_id, msg.action.action.SerializeToString()) == fields


def test_unreadable_action_bytes_are_a_malformed_action() -> None:
    with pytest.raises(MalformedInput, match="could not be read"):
        decode_action(b"\x0a\xff")
    with pytest.raises(MalformedInput, match="empty"):
        decode_action(b"")


def test_named_closes_and_lay_downs_are_encoded_as_protobuf_does() -> None:
    from chinchon.engine import Close, LayDown, parse_card

    def cs(text: str) -> tuple:
        return tuple(parse_card(c) for c in text.split())

    for a in [
        Close(parse_card("7O"), (cs("1O 2O 3O"), cs("5C 5E 5B JK1"))),
        Close(parse_card("12B"), ()),
        Close(parse_card("12B"), None),
        LayDown((cs("10O 11O 12O"),)),
        LayDown(()),
        LayDown(None),
    ]:
        assert action_bytes(a) == action_to_wire(a).SerializeToString(), a


def test_shared_actions_and_equal_copies_encode_alike() -> None:
    """The encoder finds the engine's shared action objects by identity and any other
    action by value: both give the same bytes, and decoding gives the shared object."""
    from chinchon.engine import Close, Discard, RuleSet, parse_card
    from chinchon.engine.game import SHARED_ACTIONS

    enc = RequestEncoder("g", RuleSet())
    shared = [a for a in SHARED_ACTIONS if isinstance(a, (Discard, Close))][:12]
    copies = [type(a)(a.card) for a in shared]
    assert copies == shared and all(c is not a for c, a in zip(copies, shared, strict=True))
    assert enc.legal(copies) == enc.legal(shared)
    for a, c in zip(shared, copies, strict=True):
        assert enc.accepted(7, c, 0.01) == enc.accepted(7, a, 0.01)
        raw = enc.legal([a])[2:]  # one legal_actions element: tag, length, the Action
        assert decode_action(raw) is a
    named = Close(parse_card("5O"), ((parse_card("1O"), parse_card("2O"), parse_card("3O")),))
    assert decode_action(enc.legal([named])[2:]) == named


@settings(max_examples=30, deadline=None)
@given(rules=rule_sets(), seed=st.text(max_size=6))
def test_every_listed_action_is_short_enough_to_be_remembered(rules: RuleSet, seed: str) -> None:
    """The decoding cache keeps only short encodings (so padded answers cannot fill it);
    every action the referee lists is short enough, so the common answer stays cached."""

    rng = random.Random(seed)
    state = new_game(rules)
    source = ShuffleSource(seed, "sizes")
    longest = 0
    while not state.is_over:
        if state.is_chance:
            state = apply(state, source.chance(state))
            continue
        legal = legal_actions(state)
        longest = max(longest, *(len(action_bytes(a)) for a in legal))
        state = apply(state, rng.choice(legal), seat=state.to_act)
    assert 0 < longest <= MAX_REMEMBERED_BYTES


def test_padded_answers_are_decoded_but_not_remembered() -> None:
    """An answer padded with a unique unknown field decodes like the bare answer, and
    the cache holds no more bytes for it: a bot cannot grow it with what it sends."""
    from chinchon.engine import DRAW_STOCK

    bare = g.Action(draw_stock=g.DrawStock()).SerializeToString()
    assert decode_action(bare) is DRAW_STOCK
    before = remembered_bytes()
    for i in range(2000):
        padded = bare + delimited(1000, i.to_bytes(4, "big") * 50)  # unknown field 1000
        assert decode_action(padded) is DRAW_STOCK
    assert remembered_bytes() == before
    assert remembered_answers() <= MAX_REMEMBERED


def test_house_rules_cross_the_wire_and_wild_cards_place_runs() -> None:
    """RuleSet fields 12-14 (wild_cards, jokers_per_meld, close_first_round) go to the
    wire set and come back; an empty wild_cards is none (a repeated field has no
    presence). A table run whose first card is a wild card (1O standing for 4C) is read
    with the place of its first natural card."""
    from chinchon.engine import make_meld, parse_cards
    from chinchon.engine.game import TableMeld
    from chinchon.wire import rules_from_wire, rules_to_wire
    from chinchon.wire.convert import table_from_wire

    house = RuleSet(wild_cards=("1O", "5E"), jokers_per_meld=1, close_first_round=False)
    msg = g.RuleSet.FromString(rules_to_wire(house).SerializeToString())
    assert list(msg.wild_cards) == ["1O", "5E"] and msg.jokers_per_meld == 1
    assert msg.HasField("close_first_round") and not msg.close_first_round
    assert rules_from_wire(msg) == house
    plain = rules_to_wire(RuleSet())
    assert list(plain.wild_cards) == [] and plain.jokers_per_meld == 2 and plain.close_first_round
    assert rules_from_wire(g.RuleSet(wild_cards=["1o"])) == RuleSet(wild_cards=("1O",))
    assert rules_from_wire(g.RuleSet()) == RuleSet()
    rules = RuleSet(wild_cards=("1O",))
    run = make_meld(parse_cards("1O 5C 6C"), rules)
    wire = g.Meld(owner=1, kind=g.MELD_KIND_RUN, cards=["1O", "5C", "6C"])
    assert table_from_wire([wire], rules) == (TableMeld(1, run),)
    assert run.low == 3 and run.suit == 1
