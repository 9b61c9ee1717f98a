"""One test per rule of /work/shared/RULES.md, so that a failure names the rule."""

from __future__ import annotations

import json

import pytest
from chinchon.engine import (
    CARDS,
    DRAW_DISCARD,
    DRAW_STOCK,
    Close,
    Deal,
    Discard,
    IllegalAction,
    InvalidMeld,
    LayDown,
    MalformedInput,
    MeldKind,
    RuleSet,
    RuleSetError,
    ShuffleSource,
    Violation,
    apply,
    best_arrangement,
    deck_cards,
    format_cards,
    legal_actions,
    make_meld,
    new_game,
    parse_action,
    parse_card,
    parse_cards,
    solver_for,
)
from chinchon.engine.game import HandEnd, Phase
from chinchon.engine.rules import OPTION_NAMES

from tests.support.engine import CS, C, position

R40 = RuleSet()
R48 = RuleSet(deck=48)
RJ2 = RuleSet(jokers=2)


def meld(text: str, rules: RuleSet = R40):
    return make_meld(CS(text), rules)


def refused(text: str, rules: RuleSet = R40) -> str:
    with pytest.raises(InvalidMeld) as e:
        make_meld(CS(text), rules)
    return e.value.reason


def illegal(state, action, code: Violation, seat=None) -> str:  # type: ignore[no-untyped-def]
    with pytest.raises(IllegalAction) as e:
        apply(state, action, seat=seat)
    assert e.value.code is code, (e.value.code, e.value.message)
    return e.value.message


# == cards ===================================================================================


def test_card_numbering_suit_times_12_plus_rank_minus_1() -> None:
    assert [int(parse_card(t)) for t in ("1O", "12O", "1C", "7E", "12B", "JK1", "JK2")] == [
        0, 11, 12, 30, 47, 48, 49,
    ]
    for card in CARDS[:48]:
        assert card == card.suit * 12 + card.rank - 1
    assert CARDS[48].is_joker and CARDS[49].is_joker and not CARDS[47].is_joker


def test_card_text_round_trip_every_card() -> None:
    texts = [f"{r}{s}" for s in "OCEB" for r in range(1, 13)] + ["JK1", "JK2"]
    assert [str(c) for c in CARDS] == texts
    for card in CARDS:
        assert parse_card(str(card)) == card
        assert parse_card(str(card)) is card  # the shared card objects
        assert repr(card) == f"Card('{card}')"
    assert parse_cards(" ".join(texts)) == list(CARDS)
    assert format_cards(CARDS) == " ".join(texts)


def test_card_parse_accepts_lowercase_and_surrounding_spaces() -> None:
    assert parse_card("7o") == parse_card(" 7O ") == parse_card("7O")
    assert parse_card("jk2") == CARDS[49]
    assert parse_card("12b") == CARDS[47]


@pytest.mark.parametrize(
    "text",
    ["", " ", "7", "O", "7X", "13O", "0O", "07O", "O7", "7OO", "JK", "JK0", "JK3", "J1",
     "1 O", "-1O", "1.0O", "10", "seven of oros", "7O 8O"],
)
def test_malformed_card_texts_are_refused(text: str) -> None:
    with pytest.raises(MalformedInput) as e:
        parse_card(text)
    assert "is not a card" in str(e.value)


@pytest.mark.parametrize("value", [None, 7, 7.0, b"7O", ["7O"]])
def test_card_must_be_text(value: object) -> None:
    with pytest.raises(MalformedInput):
        parse_card(value)  # type: ignore[arg-type]


def test_deck_40_has_ranks_1_to_7_and_10_to_12() -> None:
    deck = deck_cards(40, 0)
    assert len(deck) == 40
    assert {c.rank for c in deck} == {1, 2, 3, 4, 5, 6, 7, 10, 11, 12}
    assert all(sum(1 for c in deck if c.rank == r) == 4 for r in (1, 7, 10, 12))


def test_48_deck_has_ranks_1_to_12() -> None:
    deck = deck_cards(48, 0)
    assert len(deck) == 48 and {c.rank for c in deck} == set(range(1, 13))
    assert R48.deck_size == 48 and R48.ranks == tuple(range(1, 13))


def test_jokers_option_adds_jokers_to_the_deck() -> None:
    assert deck_cards(40, 1)[-1] == parse_card("JK1") and len(deck_cards(40, 1)) == 41
    assert deck_cards(48, 2)[-2:] == tuple(CS("JK1 JK2")) and len(deck_cards(48, 2)) == 50
    assert RuleSet(jokers=2).deck_size == 42
    assert RuleSet().jokers == 0


def test_8_and_9_are_not_in_the_40_deck_meld() -> None:
    assert "not in the 40-card deck" in refused("7O 8O 9O")
    assert meld("7O 8O 9O", R48).kind is MeldKind.RUN


def test_joker_not_in_deck_refused_in_meld() -> None:
    assert "not in this deck" in refused("1O 2O JK1", R40)
    assert "not in this deck" in refused("1O 2O JK2", RuleSet(jokers=1))


# == melds: runs ============================================================================


def test_run_40_deck_7_and_10_are_adjacent() -> None:
    m = meld("6O 7O 10O")
    assert m.kind is MeldKind.RUN and str(m) == "6O 7O 10O"
    assert str(meld("7C 10C 11C 12C")) == "7C 10C 11C 12C"
    assert str(meld("5E 6E 7E 10E 11E 12E")) == "5E 6E 7E 10E 11E 12E"


def test_run_48_deck_7_and_10_are_not_adjacent() -> None:
    assert "not consecutive" in refused("6O 7O 10O", R48)
    assert str(meld("7O 8O 9O 10O", R48)) == "7O 8O 9O 10O"


def test_run_does_not_wrap() -> None:
    assert "do not wrap" in refused("11O 12O 1O")
    assert "do not wrap" in refused("12O 1O 2O")
    assert "do not wrap" in refused("11O 12O 1O", R48)


def test_run_is_one_suit() -> None:
    assert "neither a set" in refused("1O 2O 3C")


def test_run_needs_consecutive_ranks() -> None:
    assert "not consecutive" in refused("1O 2O 4O")
    assert "not consecutive" in refused("1O 3O 5O 6O")


def test_meld_needs_at_least_three_cards() -> None:
    assert "at least 3 cards" in refused("1O 2O")
    assert "at least 3 cards" in refused("5O 5C")


def test_run_written_in_any_order_without_jokers_is_canonical_ascending() -> None:
    assert meld("3O 1O 2O") == meld("1O 2O 3O")
    m = meld("12O 10O 11O")
    assert str(m) == "10O 11O 12O" and m.low == 7 and m.high == 9 and m.suit == 0


def test_run_longest_from_hand_is_seven() -> None:
    assert len(meld("1O 2O 3O 4O 5O 6O 7O").cards) == 7
    assert "at most 7" in refused("1O 2O 3O 4O 5O 6O 7O 10O")
    # Lay-offs may lengthen it (no bound when max_run is None).
    assert len(make_meld(CS("1O 2O 3O 4O 5O 6O 7O 10O"), R40, max_run=None).cards) == 8


def test_run_joker_stands_where_written() -> None:
    m = meld("3O JK1 5O", RJ2)
    assert m.kind is MeldKind.RUN and m.low == 2 and str(m) == "3O JK1 5O"
    assert str(meld("JK1 4O 5O", RJ2)) == "JK1 4O 5O"  # the joker is the 3O
    assert str(meld("4O 5O JK2", RJ2)) == "4O 5O JK2"  # the joker is the 6O
    assert "is not a run" in refused("3O 5O JK1", RJ2)  # written out of place
    assert str(meld("6O JK1 10O", RJ2)) == "6O JK1 10O"  # the joker is the 7O (40 cards)


def test_joker_cannot_stand_below_1() -> None:
    reason = refused("JK1 1O 2O", RJ2)
    assert "cannot stand below 1" in reason
    assert "cannot stand below 1" in refused("JK1 JK2 1O 2O", RJ2)


def test_joker_cannot_stand_above_top_rank() -> None:
    assert "above 12" in refused("11O 12O JK1", RJ2)
    assert "above 12" in refused("11O 12O JK1", RuleSet(deck=48, jokers=1))


# == melds: sets and jokers ==================================================================


def test_set_of_three_or_four_of_one_rank() -> None:
    s3 = meld("5B 5O 5E")
    assert s3.kind is MeldKind.SET and str(s3) == "5O 5E 5B"
    assert len(meld("5O 5C 5E 5B").cards) == 4


def test_set_distinct_suits_max_four() -> None:
    assert "appears twice" in refused("5O 5O 5C")
    assert "at most 4" in refused("5O 5C 5E 5B JK1", RJ2)
    assert "at most 4" in refused("5O 5C 5E JK1 JK2", RJ2)
    assert len(meld("5O 5C JK1 JK2", RJ2).cards) == 4


def test_set_with_joker_jokers_last() -> None:
    m = meld("JK1 12E 12O", RJ2)
    assert m.kind is MeldKind.SET and str(m) == "12O 12E JK1"


def test_meld_needs_two_naturals() -> None:
    assert "at least 2 natural cards" in refused("5O JK1 JK2", RJ2)
    assert "at least 2 natural cards" in refused("JK1 5O JK2", RJ2)


def test_two_sets_of_one_rank_with_a_joker_each_meld_six_cards() -> None:
    # A joker stands for any card: 12O 12C JK1 and 12E 12B JK2 are both sets.
    arr = best_arrangement(CS("12O 12C 12E 12B JK1 JK2"), RJ2)
    assert arr.full and arr.points == 0 and len(arr.melds) == 2
    assert solver_for(RJ2).is_full(int(sum(1 << c for c in CS("12O 12C 12E 12B JK1 JK2"))))


def test_joker_may_stand_for_a_card_that_is_held() -> None:
    # 2C JK1 4C 5C (the joker is the 3C) and 3C 3E JK2: all seven melded.
    cards = CS("2C 3C 4C 5C 3E JK1 JK2")
    arr = best_arrangement(cards, RJ2)
    assert arr.full, str(arr)


# == points ===================================================================================


def test_natural_points_are_face_value() -> None:
    for r in range(1, 8):
        assert R40.card_points(parse_card(f"{r}C")) == r
    assert R48.card_points(parse_card("8O")) == 8 and R48.card_points(parse_card("9B")) == 9


def test_figure_points_options() -> None:
    figures = CS("10O 11C 12E")
    assert [R40.card_points(c) for c in figures] == [8, 9, 10]
    assert [R48.card_points(c) for c in figures] == [10, 11, 12]
    r = RuleSet(figure_points="10-10-10")
    assert [r.card_points(c) for c in figures] == [10, 10, 10]
    r = RuleSet(figure_points="10-11-12")
    assert [r.card_points(c) for c in figures] == [10, 11, 12]
    r = RuleSet(deck=48, figure_points="10-10-10")
    assert [r.card_points(c) for c in figures] == [10, 10, 10]


def test_figure_points_default_depends_on_deck() -> None:
    assert R40.figure_points == "8-9-10"
    assert R48.figure_points == "10-11-12"


def test_joker_points_option() -> None:
    assert RJ2.card_points(parse_card("JK1")) == 25
    assert RuleSet(jokers=1, joker_points=7).card_points(parse_card("JK1")) == 7
    assert RuleSet(jokers=2, joker_points=0).card_points(parse_card("JK2")) == 0
    arr = best_arrangement(CS("JK1 1C 5E"), RuleSet(jokers=1, joker_points=7))
    assert arr.points == 7 + 1 + 5


# == players =================================================================================


@pytest.mark.parametrize(
    ("deck", "jokers", "most"),
    [(40, 0, 5), (40, 1, 5), (40, 2, 5), (48, 0, 6), (48, 1, 6), (48, 2, 6)],
)
def test_max_players_by_deck(deck: int, jokers: int, most: int) -> None:
    # 7 x players + 2 <= deck size.
    assert 7 * most + 2 <= deck + jokers < 7 * (most + 1) + 2
    assert RuleSet(deck=deck, jokers=jokers, players=most).players == most
    with pytest.raises(RuleSetError) as e:
        RuleSet(deck=deck, jokers=jokers, players=most + 1)
    assert e.value.field == "players"
    assert f"{7 * (most + 1) + 2} cards" in e.value.message


def test_at_least_two_players() -> None:
    with pytest.raises(RuleSetError) as e:
        RuleSet(players=1)
    assert e.value.field == "players"


# == rule set validation =====================================================================


def test_rule_set_defaults() -> None:
    assert R40.to_dict() == {
        "players": 2, "deck": 40, "jokers": 0, "figure_points": "8-9-10", "joker_points": 25,
        "open_discard": True, "retake_discard": False, "close_max_unmatched": 1,
        "close_max_points": 5, "max_turns_per_hand": 200, "score_limit": 100,
        "wild_cards": [], "jokers_per_meld": 2, "close_first_round": True,
    }
    assert tuple(R40.to_dict()) == OPTION_NAMES
    # Records and the wire leave out the house rules at their defaults.
    assert tuple(R40.to_dict(compact=True)) == OPTION_NAMES[:11]


def test_rule_set_unknown_key_refused() -> None:
    with pytest.raises(RuleSetError) as e:
        RuleSet.from_dict({"players": 2, "jokerz": 1})
    assert e.value.field == "jokerz"
    assert "unknown option" in str(e.value)


@pytest.mark.parametrize(
    ("field", "value"),
    [("players", "2"), ("deck", 40.0), ("jokers", None), ("score_limit", 100.5),
     ("open_discard", "yes"), ("retake_discard", 0), ("figure_points", 8),
     ("joker_points", [25]), ("close_max_points", "5")],
)
def test_rule_set_wrong_type_refused(field: str, value: object) -> None:
    with pytest.raises(RuleSetError) as e:
        RuleSet.from_dict({field: value})
    assert e.value.field == field
    assert str(e.value).startswith(f"rule set: {field}: ")


@pytest.mark.parametrize("field", ["players", "deck", "jokers", "joker_points",
                                   "close_max_unmatched", "close_max_points",
                                   "max_turns_per_hand", "score_limit"])
def test_rule_set_bool_for_int_refused(field: str) -> None:
    with pytest.raises(RuleSetError) as e:
        RuleSet.from_dict({field: True})
    assert e.value.field == field
    assert "whole number" in e.value.message


def test_rule_set_int_for_bool_refused() -> None:
    with pytest.raises(RuleSetError) as e:
        RuleSet.from_dict({"open_discard": 1})
    assert e.value.field == "open_discard"
    assert "true or false" in e.value.message


@pytest.mark.parametrize(
    ("options", "field"),
    [({"deck": 52}, "deck"), ({"jokers": 3}, "jokers"), ({"jokers": -1}, "jokers"),
     ({"figure_points": "9-10-11"}, "figure_points"),
     ({"deck": 48, "figure_points": "8-9-10"}, "figure_points"),
     ({"players": 6}, "players"), ({"players": 0}, "players"),
     ({"joker_points": -1}, "joker_points"),
     ({"close_max_unmatched": 8}, "close_max_unmatched"),
     ({"close_max_unmatched": -1}, "close_max_unmatched"),
     ({"close_max_points": -1}, "close_max_points"),
     ({"players": 3, "max_turns_per_hand": 2}, "max_turns_per_hand"),
     ({"score_limit": 0}, "score_limit")],
)
def test_rule_set_impossible_or_contradictory_values_refused(options: dict, field: str) -> None:
    with pytest.raises(RuleSetError) as e:
        RuleSet.from_dict(options)
    assert e.value.field == field, e.value


def test_rule_set_contradiction_48_deck_with_8_9_10_names_figure_points() -> None:
    with pytest.raises(RuleSetError) as e:
        RuleSet(deck=48, figure_points="8-9-10")
    assert e.value.field == "figure_points" and "deck = 48" in e.value.message


def test_rule_set_from_toml_top_level_and_rules_table() -> None:
    a = RuleSet.from_toml(
        'players = 3\njokers = 2\nopen_discard = false\nfigure_points = "10-10-10"\n'
    )
    b = RuleSet.from_toml('[rules]\nplayers = 3\njokers = 2\nopen_discard = false\n'
                          'figure_points = "10-10-10"\n')
    assert a == b == RuleSet(players=3, jokers=2, open_discard=False, figure_points="10-10-10")


def test_rule_set_from_toml_errors_name_the_field() -> None:
    with pytest.raises(RuleSetError) as e:
        RuleSet.from_toml("players = 3.0\n")
    assert e.value.field == "players"
    with pytest.raises(RuleSetError) as e:
        RuleSet.from_toml("players = \n")
    assert e.value.field == "(file)" and "TOML" in e.value.message
    with pytest.raises(RuleSetError) as e:
        RuleSet.from_toml("[rules]\nplayers = 2\n[other]\nx = 1\n")
    assert e.value.field in ("other", "rules")


def test_rule_set_from_json() -> None:
    r = RuleSet.from_json('{"deck": 48, "jokers": 1, "retake_discard": true}')
    assert r == RuleSet(deck=48, jokers=1, retake_discard=True)
    assert r.figure_points == "10-11-12"
    with pytest.raises(RuleSetError) as e:
        RuleSet.from_json('{"deck": 48,}')
    assert e.value.field == "(file)" and "JSON" in e.value.message
    with pytest.raises(RuleSetError) as e:
        RuleSet.from_json("[1, 2]")
    assert e.value.field == "(rule set)"
    with pytest.raises(RuleSetError) as e:
        RuleSet.from_json('{"score_limit": "100"}')
    assert e.value.field == "score_limit"


def test_rule_set_from_file_by_extension(tmp_path) -> None:  # type: ignore[no-untyped-def]
    j = tmp_path / "r.json"
    j.write_text(json.dumps({"players": 4}))
    t = tmp_path / "r.toml"
    t.write_text("players = 4\n")
    assert RuleSet.from_file(str(j)) == RuleSet.from_file(str(t)) == RuleSet(players=4)


def test_rule_set_round_trip_and_replace() -> None:
    r = RuleSet(players=3, jokers=2, close_max_unmatched=2)
    assert RuleSet.from_dict(r.to_dict()) == r
    assert RuleSet.from_json(json.dumps(r.to_dict())) == r
    assert r.replace(players=2) == RuleSet(jokers=2, close_max_unmatched=2)
    with pytest.raises(RuleSetError):
        r.replace(players=9)
    assert hash(r) == hash(RuleSet.from_dict(r.to_dict()))


# == deal and turn ===========================================================================


def test_deal_one_card_at_a_time_from_the_starter() -> None:
    rules = RuleSet(players=3)
    deck = deck_cards(40, 0)
    st = apply(new_game(rules), Deal(deck, 1))
    assert st.hand_no == 1 and st.starter == 1 and st.to_act == 1 and st.phase is Phase.DRAW
    assert set(st.hand(1)) == {deck[i] for i in range(0, 21, 3)}
    assert set(st.hand(2)) == {deck[i] for i in range(1, 21, 3)}
    assert set(st.hand(0)) == {deck[i] for i in range(2, 21, 3)}
    assert st.discard_pile() == [deck[21]]
    assert st.stock_size == 40 - 22
    after = apply(st, DRAW_STOCK)
    assert deck[22] in after.hand(1)  # the stock's first card is its top


def test_bad_deal_refused() -> None:
    deck = list(deck_cards(40, 0))
    illegal(new_game(R40), Deal(tuple(deck[:-1]), 0), Violation.BAD_DEAL)
    illegal(new_game(R40), Deal((deck[0], *deck[:-1]), 0), Violation.BAD_DEAL)
    illegal(new_game(R40), Deal(tuple(deck_cards(40, 1)), 0), Violation.BAD_DEAL)
    illegal(new_game(R40), Deal(tuple(deck), 2), Violation.BAD_DEAL)
    illegal(new_game(R40), Deal(tuple(deck), -1), Violation.BAD_DEAL)
    # A starter out of the game (a position legal play never reaches: the next starter is
    # always still in) is refused, not dealt an endless turn order.
    from tests.support.engine import crafted

    out = crafted(new_game(RuleSet(players=3)), alive=(False, True, True))
    assert "seat 0 is out of the game" in illegal(out, Deal(tuple(deck), 0), Violation.BAD_DEAL)


def test_first_starter_comes_from_the_shuffle_source() -> None:
    starters = set()
    for i in range(40):
        d = ShuffleSource("seed", f"g{i}").chance(new_game(RuleSet(players=3)))
        starters.add(d.starter)
        assert sorted(d.deck) == list(deck_cards(40, 0))
    assert starters == {0, 1, 2}


def _simple() -> object:
    return position(R40, {0: "1O 2O 3O 5C 5E 5B 1B", 1: "4O 6E 7E 10B 11O 12E 2C"},
                    "6C", "12B 11B")


def test_turn_is_draw_then_discard() -> None:
    st = _simple()
    assert legal_actions(st) == [DRAW_STOCK, DRAW_DISCARD]
    illegal(st, Discard(C("1O")), Violation.WRONG_PHASE)
    st = apply(st, DRAW_STOCK)
    assert st.phase is Phase.DISCARD and len(st.hand(0)) == 8
    illegal(st, DRAW_STOCK, Violation.WRONG_PHASE)
    st = apply(st, Discard(C("12B")))
    assert st.phase is Phase.DRAW and st.to_act == 1 and st.discard_pile()[-1] == C("12B")
    assert st.turn == 1


def test_not_your_turn_refused() -> None:
    st = _simple()
    msg = illegal(st, DRAW_STOCK, Violation.NOT_YOUR_TURN, seat=1)
    assert "seat 0 is to act" in msg
    apply(st, DRAW_STOCK, seat=0)


def test_chance_actions_only_at_chance_nodes() -> None:
    illegal(new_game(R40), DRAW_STOCK, Violation.CHANCE_EXPECTED)
    illegal(new_game(R40), Deal(deck_cards(40, 0), 0), Violation.NOT_YOUR_TURN, seat=0)
    illegal(_simple(), Deal(deck_cards(40, 0), 0), Violation.WRONG_PHASE)


def test_discard_card_not_in_hand_refused() -> None:
    st = apply(_simple(), DRAW_STOCK)
    assert "4O is not in your hand" in illegal(st, Discard(C("4O")), Violation.CARD_NOT_IN_HAND)
    illegal(st, Discard(C("8O")), Violation.CARD_NOT_IN_HAND)  # not even in the 40-card deck


def test_draw_stock_is_private_draw_discard_is_public() -> None:
    st = apply(_simple(), DRAW_STOCK)
    ev = st.hand_events()[-1]
    assert (ev.kind, ev.seat, ev.card) == ("draw_stock", 0, None)
    st = apply(apply(st, Discard(C("12B"))), DRAW_DISCARD)
    ev = st.hand_events()[-1]
    assert (ev.kind, ev.seat, ev.card) == ("draw_discard", 1, C("12B"))
    assert C("12B") in st.hand(1)


def test_open_discard_off_refuses_draw_discard() -> None:
    rules = RuleSet(open_discard=False)
    st = position(rules, {0: "1O 2O 3O 5C 5E 5B 1B", 1: "4O 6E 7E 10B 11O 12E 2C"}, "6C")
    assert legal_actions(st) == [DRAW_STOCK]
    msg = illegal(st, DRAW_DISCARD, Violation.DISCARD_PILE_CLOSED)
    assert "open_discard" in msg


def test_retake_discard_refused_by_default() -> None:
    st = apply(_simple(), DRAW_DISCARD)
    assert st.taken == C("6C")
    assert Discard(C("6C")) not in legal_actions(st)
    msg = illegal(st, Discard(C("6C")), Violation.RETAKE_DISCARD)
    assert "just took it" in msg
    illegal(st, Close(C("6C")), Violation.RETAKE_DISCARD)
    # Any other card may go.
    assert apply(st, Discard(C("1B"))).discard_pile() == [C("1B")]


def test_retake_discard_allowed_by_option() -> None:
    rules = RuleSet(retake_discard=True)
    st = position(rules, {0: "1O 2O 3O 5C 5E 5B 1B", 1: "4O 6E 7E 10B 11O 12E 2C"}, "6C")
    st = apply(st, DRAW_DISCARD)
    assert Discard(C("6C")) in legal_actions(st)
    after = apply(st, Discard(C("6C")))
    assert after.discard_pile() == [C("6C")] and after.to_act == 1


def test_card_drawn_from_stock_may_be_discarded_at_once() -> None:
    st = apply(_simple(), DRAW_STOCK)
    assert Discard(C("12B")) in legal_actions(st)


# == closing =================================================================================


def _closing_position(hand: str, rules: RuleSet = R40, draw: str = "12B"):  # type: ignore[no-untyped-def]
    # Seat 1 holds nothing that melds or fits the closer's melds: the close ends the hand.
    st = position(rules, {0: hand, 1: "6E 10B 12E 2B 7C 11E 3E"}, "11B", draw)
    return apply(st, DRAW_STOCK)


def test_close_allowed_on_first_turn() -> None:
    st = _closing_position("1O 2O 3O 4C 4E 4B 5C")
    assert st.turn == 0
    assert Close(C("12B")) in legal_actions(st)
    after = apply(st, Close(C("12B")))
    hr = after.results[-1]
    assert hr.end is HandEnd.CLOSED and hr.closer == 0 and hr.close_discard == C("12B")
    assert hr.points[0] == 5 and hr.unmatched[0] == (C("5C"),)


def test_close_refused_two_unmatched() -> None:
    st = _closing_position("1O 2O 3O 4O 5O 1C 2C")
    msg = illegal(st, Close(C("12B")), Violation.CLOSE_TOO_MANY_UNMATCHED)
    assert msg.startswith("cannot close: 2 unmatched cards, at most 1")
    assert "1O 2O 3O 4O 5O | unmatched 1C 2C" in msg  # the best split is shown
    named = Close(C("12B"), (tuple(CS("1O 2O 3O 4O 5O")),))
    msg = illegal(st, named, Violation.CLOSE_TOO_MANY_UNMATCHED)
    assert msg == "cannot close: 2 unmatched cards, at most 1"
    assert not any(isinstance(a, Close) for a in legal_actions(st))


def test_close_max_unmatched_option_allows_two() -> None:
    st = _closing_position("1O 2O 3O 4O 5O 1C 2C", RuleSet(close_max_unmatched=2))
    after = apply(st, Close(C("12B")))
    assert after.results[-1].points[0] == 3


def test_close_refused_points() -> None:
    st = _closing_position("1O 2O 3O 5C 5E 5B 6C")
    msg = illegal(st, Close(C("12B")), Violation.CLOSE_TOO_MANY_POINTS)
    assert msg.startswith("cannot close: unmatched cards worth 6 points, at most 5")


def test_close_max_points_option() -> None:
    st = _closing_position("1O 2O 3O 5C 5E 5B 6C", RuleSet(close_max_points=6))
    assert apply(st, Close(C("12B"))).results[-1].points[0] == 6
    st = _closing_position("1O 2O 3O 5C 5E 5B 1C", RuleSet(close_max_points=0))
    illegal(st, Close(C("12B")), Violation.CLOSE_TOO_MANY_POINTS)


def test_close_refused_score_limit() -> None:
    # Score 0 + 5 unmatched points would reach a score limit of 5.
    st = _closing_position("1O 2O 3O 4C 4E 4B 5C", RuleSet(score_limit=5))
    msg = illegal(st, Close(C("12B")), Violation.CLOSE_OVER_SCORE_LIMIT)
    assert "would reach the score limit 5" in msg
    assert not any(isinstance(a, Close) for a in legal_actions(st))
    st = _closing_position("1O 2O 3O 4C 4E 4B 5C", RuleSet(score_limit=6))
    assert apply(st, Close(C("12B"))).results[-1].totals[0] == 5


def test_close_with_everything_melded_allowed_even_with_tiny_score_limit() -> None:
    st = _closing_position("1O 2O 3O 4C 4E 4B 4O", RuleSet(score_limit=1))
    # 4O melds in the run (1O-4O) or the set (4O 4C 4E 4B): everything is melded.
    assert apply(st, Close(C("12B"))).results[-1].bonus == "minus_10"


def test_close_best_prefers_bonus_over_equal_points() -> None:
    # With an unmatched joker worth 0, leaving it out costs nothing, but melding all
    # seven earns the -10: the referee's best melds it.
    rules = RuleSet(jokers=1, joker_points=0)
    st = _closing_position("1O 2O 3O 5C 5E 5B JK1", rules)
    after = apply(st, Close(C("12B")))
    hr = after.results[-1]
    assert hr.bonus == "minus_10" and hr.points[0] == -10 and hr.unmatched[0] == ()
    assert C("JK1") in {c for tm in hr.table if tm.owner == 0 for c in tm.meld.cards}


def test_close_best_prefers_fewest_points_over_fewest_cards() -> None:
    # 1O 2O 3O JK1 5O leaves 1C 2C (3 points); other splits leave 5O alone (5 points).
    rules = RuleSet(jokers=1, close_max_unmatched=2)
    st = _closing_position("1O 2O 3O 5O 1C 2C JK1", rules)
    hr = apply(st, Close(C("12B"))).results[-1]
    assert sorted(hr.unmatched[0]) == sorted(CS("1C 2C")) and hr.points[0] == 3
    # With at most one unmatched card, 5O is left.
    st = _closing_position("1O 2O 3O 5O 1C 2C JK1", RuleSet(jokers=1))
    hr = apply(st, Close(C("12B"))).results[-1]
    assert hr.unmatched[0] == (C("5O"),) and hr.points[0] == 5


def test_close_best_equal_points_prefers_fewest_cards() -> None:
    # Leaving 5O (5 points, 1 card) beats leaving 2C 3C (5 points, 2 cards).
    rules = RuleSet(jokers=1, close_max_unmatched=2)
    st = _closing_position("1O 2O 3O 5O 2C 3C JK1", rules)
    hr = apply(st, Close(C("12B"))).results[-1]
    assert hr.unmatched[0] == (C("5O"),) and hr.points[0] == 5


def test_close_named_split_must_be_valid() -> None:
    st = _closing_position("1O 2O 3O 4C 4E 4B 5C")
    msg = illegal(st, Close(C("12B"), (tuple(CS("1O 2O 4C")),)), Violation.INVALID_MELD)
    assert msg.startswith("cannot close: ")
    msg = illegal(st, Close(C("12B"), (tuple(CS("1O 2O 3O")), tuple(CS("3O 4C 4E")))),
                  Violation.INVALID_MELD)
    msg = illegal(st, Close(C("12B"), (tuple(CS("1O 2O 3O")), tuple(CS("1O 2O 3O")))),
                  Violation.CARD_USED_TWICE)
    msg = illegal(st, Close(C("5C"), (tuple(CS("10O 11O 12O")),)), Violation.CARD_NOT_IN_HAND)
    assert "10O is not among your cards" in msg
    # The face-down card cannot also be melded.
    illegal(st, Close(C("1O"), (tuple(CS("1O 2O 3O")),)), Violation.CARD_NOT_IN_HAND)


def test_close_named_split_used_as_named() -> None:
    st = _closing_position("1O 2O 3O 4C 4E 4B 5C")
    # Listed in canonical form; any order of the cards and melds is accepted.
    assert Close(C("12B"), (tuple(CS("1O 2O 3O")), tuple(CS("4C 4E 4B")))) in legal_actions(st)
    named = Close(C("12B"), (tuple(CS("4B 4C 4E")), tuple(CS("3O 2O 1O"))))
    hr = apply(st, named).results[-1]
    assert sorted(str(tm.meld) for tm in hr.table) == ["1O 2O 3O", "4C 4E 4B"]


def test_close_card_not_in_hand_refused() -> None:
    st = _closing_position("1O 2O 3O 4C 4E 4B 5C")
    illegal(st, Close(C("7O")), Violation.CARD_NOT_IN_HAND)


def test_close_only_after_drawing() -> None:
    st = position(R40, {0: "1O 2O 3O 4C 4E 4B 5C", 1: "4O 6E 7E 10B 11O 12E 2C"}, "6C")
    illegal(st, Close(C("5C")), Violation.WRONG_PHASE)


# == bonuses (judged on the closer's seven cards) ============================================


@pytest.mark.parametrize(
    ("rules", "seven", "bonus"),
    [
        (R40, "1O 2O 3O 5C 5E 5B 1B", "none"),
        (R40, "1O 2O 3O 5C 5E 5B 5O", "minus_10"),
        (R40, "1O 2O 3O 4O 5O 6O 7O", "chinchon"),
        (R40, "4O 5O 6O 7O 10O 11O 12O", "chinchon"),
        (R48, "6B 7B 8B 9B 10B 11B 12B", "chinchon"),
        (RJ2, "1O 2O JK1 4O 5O 6O 7O", "minus_50"),
        (RJ2, "JK1 2O 3O 4O 5O 6O 7O", "minus_50"),
        (RJ2, "1O JK1 3O JK2 5O 6O 7O", "minus_25"),
        (RJ2, "1O 2O 3O 4O 5O JK1 JK2", "minus_25"),
        (RJ2, "1O 2O 3O 5C 5E JK1 5B", "minus_10"),
        (RJ2, "1O 2O 3O 4O 12C 12E JK1", "minus_10"),
    ],
)
def test_bonus_class_of_seven_cards(rules: RuleSet, seven: str, bonus: str) -> None:
    from chinchon.engine.solver import BONUS_NAMES

    solver = solver_for(rules)
    mask = sum(1 << c for c in CS(seven))
    assert BONUS_NAMES[solver.bonus(mask)] == bonus


def test_chinchon_needs_one_suit_seven_run() -> None:
    solver = solver_for(R40)
    # Seven cards of one suit not all consecutive: no chinchón.
    mask = sum(1 << c for c in CS("1O 2O 3O 4O 5O 6O 10O"))
    assert solver.bonus(mask) == 0


# == parsing actions =========================================================================


@pytest.mark.parametrize(
    "text",
    ["draw stock", "draw discard", "discard 7O", "close 7O best",
     "close 7O 1O 2O 3O / 4C 4E 4B", "layoff 5O on 2", "layoff JK1 on 0 low",
     "layoff best", "pass", "laydown best", "laydown 1O 2O 3O / 5C 5E 5B", "laydown nothing"],
)
def test_action_text_round_trip(text: str) -> None:
    assert str(parse_action(text)) == text


@pytest.mark.parametrize("text", ["", "draw", "draw deck", "discard", "discard 7X",
                                  "layoff 5O on x", "layoff JK1 on 0 middle", "jump"])
def test_malformed_action_texts_refused(text: str) -> None:
    with pytest.raises(MalformedInput):
        parse_action(text)


def test_laydown_best_only_after_a_close() -> None:
    illegal(_simple(), LayDown(None), Violation.WRONG_PHASE)
