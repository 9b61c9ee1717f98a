"""The house rules, one test per rule: wild cards, one joker per meld, no close
in the first round. Each asserts the rule itself (docs/rules.md, sections 2, 3, 6, 9)."""

from __future__ import annotations

import pytest
from chinchon.engine import (
    DRAW_STOCK,
    LAYDOWN_BEST,
    LAYOFF_BEST,
    PASS,
    Close,
    Discard,
    End,
    IllegalAction,
    InvalidMeld,
    LayOff,
    RuleSet,
    RuleSetError,
    Violation,
    apply,
    deck_cards,
    extend_meld,
    legal_actions,
    make_meld,
    mask_of,
    solver_for,
)
from chinchon.engine.game import HandEnd, Phase
from chinchon.engine.solver import BONUS_NAMES

from tests.support.engine import CS, C, deal_order, position

W1O = RuleSet(wild_cards=("1O",))
ONE = RuleSet(jokers=2, jokers_per_meld=1)
LATE = RuleSet(close_first_round=False)


def illegal(state, action, code: Violation) -> str:  # type: ignore[no-untyped-def]
    before = dict(state.__dict__)
    with pytest.raises(IllegalAction) as e:
        apply(state, action)
    assert e.value.code is code, (e.value.code, e.value.message)
    assert state.__dict__ == before, "a refused action changes nothing"
    return e.value.message


def bonus(rules: RuleSet, seven: str) -> str:
    return BONUS_NAMES[solver_for(rules).bonus(mask_of(CS(seven)))]


# == the options: values, bounds, messages ===================================================


def test_wild_cards_are_a_list_of_natural_cards_kept_in_card_order() -> None:
    r = RuleSet.from_dict({"wild_cards": ["1c", " 1O "]})
    assert r.wild_cards == ("1O", "1C")
    assert r.to_dict()["wild_cards"] == ["1O", "1C"]
    assert r == RuleSet(wild_cards=("1O", "1C")) and hash(r) == hash(RuleSet(wild_cards=["1O", "1C"]))
    assert RuleSet.from_toml('[rules]\nwild_cards = ["1O"]\njokers_per_meld = 1\n') == RuleSet(
        wild_cards=("1O",), jokers_per_meld=1)
    assert RuleSet.from_json('{"close_first_round": false}') == LATE


@pytest.mark.parametrize(
    ("options", "field", "words"),
    [
        ({"wild_cards": "1O"}, "wild_cards", 'a list of cards, like ["1O"]'),
        ({"wild_cards": ["1X"]}, "wild_cards", "'1X' is not a card"),
        ({"wild_cards": [1]}, "wild_cards", "must be text"),
        ({"wild_cards": ["JK1"]}, "wild_cards", "JK1 is a joker already"),
        ({"wild_cards": ["8O"]}, "wild_cards", "8O is not in the 40-card deck"),
        ({"wild_cards": ["1O", "1o"]}, "wild_cards", "1O is named twice"),
        ({"wild_cards": ["1O", "1C", "1E"]}, "wild_cards", "at most 2 wild cards in all"),
        ({"jokers": 2, "wild_cards": ["1O"]}, "wild_cards", "jokers = 2 and 1 wild card(s) make 3"),
        ({"jokers_per_meld": 0}, "jokers_per_meld", "must be 1 or 2"),
        ({"jokers_per_meld": 3}, "jokers_per_meld", "must be 1 or 2"),
        ({"jokers_per_meld": True}, "jokers_per_meld", "whole number"),
        ({"close_first_round": 0}, "close_first_round", "true or false"),
    ],
)
def test_house_rule_values_refused_naming_the_field(options: dict, field: str, words: str) -> None:
    with pytest.raises(RuleSetError) as e:
        RuleSet.from_dict(options)
    assert e.value.field == field, e.value
    assert words in e.value.message, e.value.message


def test_wild_cards_keep_the_deck_its_size() -> None:
    # The wild cards are among the deck's own cards: 40 cards, 5 players at most.
    r = RuleSet(players=5, wild_cards=("1O", "1C"))
    assert r.deck_size == 40 and len(deck_cards(r.deck, r.jokers)) == 40
    with pytest.raises(RuleSetError) as e:
        RuleSet(players=6, wild_cards=("1O",))
    assert e.value.field == "players"
    # 48 cards: the 8s and 9s may be wild.
    assert RuleSet(deck=48, wild_cards=("8E",), jokers=1).wild_cards == ("8E",)


def test_records_leave_out_house_rules_at_their_defaults() -> None:
    from chinchon.engine.record import rules_from_json, rules_to_json

    assert "wildCards" not in rules_to_json(RuleSet())
    r = RuleSet(wild_cards=("1O",), jokers_per_meld=1, close_first_round=False)
    assert rules_to_json(r)["wildCards"] == ["1O"]
    assert rules_to_json(r)["jokersPerMeld"] == 1 and rules_to_json(r)["closeFirstRound"] is False
    assert rules_from_json(rules_to_json(r)) == r


# == wild cards ==============================================================================


def test_a_wild_card_stands_for_any_card_in_a_run_or_a_set() -> None:
    run = make_meld(CS("3C 1O 5C"), W1O)
    assert run.suit == 1 and run.low == 2  # 1O stands for 4C
    assert str(make_meld(CS("5O 1O 5C"), W1O)) == "5O 5C 1O"  # naturals, then the jokers
    assert str(make_meld(CS("1C 2C 1O"), W1O)) == "1C 2C 1O"  # 1O stands for 3C
    with pytest.raises(InvalidMeld):
        make_meld(CS("3C 1O 5C"), RuleSet())  # not wild: three suits, no meld


def test_a_wild_card_in_its_own_place_is_still_a_joker() -> None:
    # 1O 2O 3O: two natural cards and a joker standing for the 1O.
    assert make_meld(CS("1O 2O 3O"), W1O).suit == 0
    with pytest.raises(InvalidMeld, match="at least 2 natural cards"):
        make_meld(CS("1O 2O JK1"), RuleSet(jokers=1, wild_cards=("1O",)))
    # And so seven oros in a row with the wild 1O are a run with one joker: -50, no chinchón.
    assert bonus(W1O, "1O 2O 3O 4O 5O 6O 7O") == "minus_50"
    assert bonus(RuleSet(), "1O 2O 3O 4O 5O 6O 7O") == "chinchon"
    assert bonus(W1O, "2O 3O 4O 5O 6O 7O 10O") == "chinchon"


def test_two_wild_cards_in_a_run_of_seven_score_minus_25() -> None:
    rules = RuleSet(wild_cards=("1O", "5E"))
    assert bonus(rules, "3C 4C 1O 6C 5E 10C 11C") == "minus_25"
    assert bonus(RuleSet(jokers=1, wild_cards=("1O",)), "3C 4C 1O 6C JK1 10C 11C") == "minus_25"


def test_an_unmatched_wild_card_is_worth_joker_points() -> None:
    assert W1O.card_points(C("1O")) == 25 and RuleSet().card_points(C("1O")) == 1
    assert RuleSet(wild_cards=("1O",), joker_points=10).card_points(C("1O")) == 10
    arr = solver_for(W1O).best_arrangement(CS("1O 4C 7E 12B"))
    assert arr.points == 25 + 4 + 7 + 10 and C("1O") in arr.unmatched
    # Melded, it costs nothing: 3C 1O 5C.
    assert solver_for(W1O).deadwood(mask_of(CS("3C 1O 5C 7E"))) == 7


def test_a_hand_closed_with_the_wild_card_in_a_seven_run_scores_minus_50() -> None:
    st = position(W1O, {0: "2O 3O 4O 5O 6O 7O 12B", 1: "6E 10B 12E 2B 7C 11E 3E"}, "11B", "1O")
    st = apply(apply(st, DRAW_STOCK), Close(C("12B")))
    hr = st.results[-1]
    assert hr.end is HandEnd.CLOSED and hr.bonus == "minus_50" and hr.points[0] == -50
    assert not st.is_over  # not a chinchón: the game goes on
    assert [str(t.meld) for t in hr.table if t.owner == 0] == ["2O 3O 4O 5O 6O 7O 1O"]


def test_a_closer_cannot_leave_a_wild_card_unmatched_within_five_points() -> None:
    st = position(W1O, {0: "2O 3O 4O 5C 5E 5B 1O", 1: "6E 10B 12E 2B 7C 11E 3E"}, "11B", "12B")
    st = apply(st, DRAW_STOCK)
    # 1O melds (2O 3O 4O 1O or 5C 5E 5B 1O): the close is full, and locked.
    after = apply(st, Close(C("12B")))
    assert after.results[-1].bonus == "minus_10"
    st2 = position(W1O, {0: "2O 3O 4O 5C 5E 5B 1O", 1: "6E 10B 12E 2B 7C 11E 3E"}, "11B", "12C")
    named = Close(C("12C"), (tuple(CS("2O 3O 4O")), tuple(CS("5C 5E 5B"))))
    # Named as unmatched, 1O is worth 25 points: more than 5.
    msg = illegal(apply(st2, DRAW_STOCK), named, Violation.CLOSE_TOO_MANY_POINTS)
    assert "worth 25 points" in msg


def test_a_wild_card_is_laid_off_as_a_joker_at_either_end() -> None:
    rules = W1O
    st = position(rules, {0: "3E 4E 5E 1C 2C 3C 1B", 1: "1O 6O 10B 12E 7C 11E 2B"}, "11B", "12B")
    st = apply(apply(st, DRAW_STOCK), Close(C("12B")))
    assert (st.phase, st.to_act) == (Phase.LAYOFF, 1)
    run = [str(t.meld) for t in st.table].index("3E 4E 5E")
    offs = [a for a in legal_actions(st) if isinstance(a, LayOff) and a.card == C("1O")]
    assert LayOff(C("1O"), run, End.LOW) in offs and LayOff(C("1O"), run, End.HIGH) in offs
    with pytest.raises(IllegalAction):
        apply(st, LayOff(C("1O"), run))  # both ends open: the end must be named
    after = apply(st, LayOff(C("1O"), run, End.LOW))
    assert str(after.table[run].meld) == "1O 3E 4E 5E"


# == one joker per meld ======================================================================


def test_one_joker_per_meld_refuses_a_second_joker() -> None:
    assert str(make_meld(CS("5O 5C JK1 JK2"), RuleSet(jokers=2))) == "5O 5C JK1 JK2"
    for text in ("5O 5C JK1 JK2", "3O JK1 5O JK2", "1O 2O 3O JK1 JK2"):
        with pytest.raises(InvalidMeld, match="jokers_per_meld = 1"):
            make_meld(CS(text), ONE)
    assert str(make_meld(CS("5O 5C JK1"), ONE)) == "5O 5C JK1"
    # Two sets of one rank, a joker each: still fine.
    assert solver_for(ONE).is_full(mask_of(CS("12O 12C JK1 12E 12B JK2")))
    # A wild card counts as a joker.
    with pytest.raises(InvalidMeld, match="at most 1 joker"):
        make_meld(CS("5O 5C 1O JK1"), RuleSet(jokers=1, wild_cards=("1O",), jokers_per_meld=1))


def test_one_joker_per_meld_refuses_a_joker_laid_off_on_a_meld_holding_one() -> None:
    m = make_meld(CS("3O JK1 5O"), ONE)
    with pytest.raises(InvalidMeld, match="at most 1 joker"):
        extend_meld(m, C("JK2"), End.HIGH, ONE)
    assert str(extend_meld(m, C("JK2"), End.HIGH, RuleSet(jokers=2))) == "3O JK1 5O JK2"
    assert str(extend_meld(m, C("6O"), None, ONE)) == "3O JK1 5O 6O"


def test_one_joker_per_meld_runs_of_one_suit_may_overlap() -> None:
    # 1O 2O JK1 (JK1 is the 3O) | 3O 4O 5O JK2: every card melded, one joker each.
    solver = solver_for(ONE)
    mask = mask_of(CS("1O 2O 3O 4O 5O JK1 JK2"))
    assert solver.deadwood(mask) == 0 and solver.is_full(mask)
    arr = solver.best_arrangement(mask)
    assert arr.full and all(sum(c >= 48 for c in m.cards) == 1 for m in arr.melds)
    for m in arr.melds:
        assert make_meld(list(m.cards), ONE) == m


def test_minus_25_only_where_a_run_can_hold_two_jokers() -> None:
    seven = "3C 4C JK1 6C JK2 10C 11C"
    assert bonus(RuleSet(jokers=2), seven) == "minus_25"
    # One joker per meld: the seven meld as 3C 4C JK1 | 6C JK2 10C 11C, -10.
    assert bonus(ONE, seven) == "minus_10"
    assert bonus(ONE, "1O 2O JK1 4O 5O 6O 7O") == "minus_50"


# == no close in the first round =============================================================


def _first_round(rules: RuleSet, players: int = 2):  # type: ignore[no-untyped-def]
    hands = {0: "1O 2O 3O 4C 4E 4B 5C", 1: "6E 10B 12E 2B 7C 11E 3E", 2: "6O 10O 12O 2E 7E 11C 3B"}
    return position(rules.replace(players=players), {s: hands[s] for s in range(players)},
                    "11B", "12B 12C 2C 10E 10C")


def test_no_close_on_a_first_turn_with_close_first_round_off() -> None:
    st = apply(_first_round(LATE), DRAW_STOCK)
    assert st.turn == 0
    assert not [a for a in legal_actions(st) if isinstance(a, Close)]
    msg = illegal(st, Close(C("12B")), Violation.CLOSE_FIRST_ROUND)
    assert "first round" in msg and "close_first_round" in msg
    # By default the same close is legal.
    assert Close(C("12B")) in legal_actions(apply(_first_round(RuleSet()), DRAW_STOCK))


@pytest.mark.parametrize("players", [2, 3])
def test_closing_opens_once_every_player_had_a_turn(players: int) -> None:
    st = _first_round(LATE, players)
    for _ in range(players):  # the first round: everyone draws and discards
        st = apply(st, DRAW_STOCK)
        assert not [a for a in legal_actions(st) if isinstance(a, Close)]
        st = apply(st, Discard(st.hand(st.to_act)[-1] if st.to_act else C("12B")))
    assert st.to_act == 0 and st.turn == players
    st = apply(st, DRAW_STOCK)
    closes = [a for a in legal_actions(st) if isinstance(a, Close)]
    assert closes, "the second round may close"
    assert apply(st, closes[0]).results[-1].end is HandEnd.CLOSED


def test_the_first_round_counts_the_players_still_in() -> None:
    from tests.support.engine import crafted

    st = _first_round(LATE, 3)
    st = apply(apply(st, DRAW_STOCK), Discard(C("12B")))
    st = crafted(st, alive=(True, True, False))  # seat 2 is out: a round is two turns
    st = apply(apply(st, DRAW_STOCK), Discard(C("12C")))
    st = apply(st, DRAW_STOCK)
    assert st.to_act == 0 and st.turn == 2
    assert any(isinstance(a, Close) for a in legal_actions(st))


def test_layoff_best_on_wild_cards_treats_them_as_jokers() -> None:
    # The wild 1O fits the run at either end; laying it off saves its 25 points.
    # Seat 1's 1O makes no meld of its own (it would with 11E 12E: then it stays).
    st = position(W1O, {0: "3E 4E 5E 1C 2C 3C 1B", 1: "1O 6O 7C 12C 2B 11B 10E"}, "12E", "12O")
    st = apply(apply(st, DRAW_STOCK), Close(C("12O")))
    after = apply(st, LAYOFF_BEST)
    assert C("1O") in [e.card for e in after.events if e.kind == "layoff"]
    assert C("1O") not in after.results[-1].unmatched[1]


# -- the first round is every player's first turn, in every hand -----------------------------

# Seat 0 (the starter) can close on its first turn: 1O 2O 3O | 4C 4E 4B, the 5C left. The
# last seat of the round can close whatever it draws: 5O 6O 7O | 10C 11C 12C, the 1E left.
_STARTER, _MIDDLE, _LAST = "1O 2O 3O 4C 4E 4B 5C", "6E 10B 12E 2B 7C 11E 3E", "5O 6O 7O 10C 11C 12C 1E"


def _closes(st) -> list[Close]:  # type: ignore[no-untyped-def]
    return [a for a in legal_actions(st) if isinstance(a, Close)]


def _to_last_first_turn(rules: RuleSet, players: int):  # type: ignore[no-untyped-def]
    """A fresh hand played until the last player of the first round has drawn."""
    hands = {0: _STARTER, players - 1: _LAST} | ({1: _MIDDLE} if players == 3 else {})
    st = position(rules.replace(players=players), hands, "11B", "12B 2C 3C 10E")
    for _ in range(players - 1):
        st = apply(st, DRAW_STOCK)
        st = apply(st, Discard(st.hand(st.to_act)[-1]))
    st = apply(st, DRAW_STOCK)
    assert (st.to_act, st.turn) == (players - 1, players - 1)
    return st


@pytest.mark.parametrize("players", [2, 3])
def test_the_last_player_of_the_first_round_may_not_close_either(players: int) -> None:
    # docs/rules.md, section 6: nobody closes in the first round, "the first as many turns
    # as there are players still in the game": the last of those turns too.
    assert _closes(_to_last_first_turn(RuleSet(), players)), "by default this turn may close"
    st = _to_last_first_turn(LATE, players)
    assert not _closes(st)
    msg = illegal(st, Close(C("1E")), Violation.CLOSE_FIRST_ROUND)
    assert "first round" in msg


def _second_hand_first_turn(rules: RuleSet):  # type: ignore[no-untyped-def]
    """A two-player game whose first hand seat 0 closes in its second round; the second
    hand dealt (seat 1 starts it, with the starter's closing hand) and its first draw."""
    st = position(rules, {0: _STARTER, 1: _MIDDLE}, "11B", "12B 12C 2C")
    st = apply(apply(st, DRAW_STOCK), Discard(C("12B")))
    st = apply(apply(st, DRAW_STOCK), Discard(C("12C")))
    st = apply(apply(st, DRAW_STOCK), Close(C("2C")))
    while st.phase in (Phase.LAYOFF, Phase.LAYDOWN):
        st = apply(st, PASS if st.phase is Phase.LAYOFF else LAYDOWN_BEST)
    assert st.phase is Phase.DEAL and st.results[-1].end is HandEnd.CLOSED and not st.is_over
    st = apply(st, deal_order(rules, {1: _STARTER, 0: _MIDDLE}, "11B", "12B 12C 2C", starter=1))
    assert (st.hand_no, st.to_act) == (2, 1)
    return apply(st, DRAW_STOCK)


def test_no_close_in_the_first_round_of_every_hand_not_only_the_first() -> None:
    # docs/rules.md, section 6: "nobody closes in the first round of a hand".
    assert _closes(_second_hand_first_turn(RuleSet())), "by default this turn may close"
    st = _second_hand_first_turn(LATE)
    assert not _closes(st)
    illegal(st, Close(C("12B")), Violation.CLOSE_FIRST_ROUND)
    # Its second player's first turn is in the first round too; the starter's second is not.
    st = apply(apply(st, Discard(C("12B"))), DRAW_STOCK)
    assert st.to_act == 0 and not _closes(st)
    st = apply(apply(st, Discard(C("12C"))), DRAW_STOCK)
    assert st.to_act == 1 and _closes(st)


# -- layoff best with a wild card: both ends of a run, and the record's spelling-out ---------


def _wild_layoff(rules: RuleSet, wild: str):  # type: ignore[no-untyped-def]
    """Seat 0 closes with 3E 4E 5E and 1C 2C 3C on the table; seat 1, to lay off, holds the
    wild card and the 7E, and nothing else that melds or fits."""
    st = position(rules, {0: "3E 4E 5E 1C 2C 3C 1B", 1: f"{wild} 7E 6O 12C 2B 11B 3O"}, "12E", "12O")
    st = apply(apply(st, DRAW_STOCK), Close(C("12O")))
    assert (st.phase, st.to_act) == (Phase.LAYOFF, 1)
    assert not solver_for(rules).best_arrangement(mask_of(st.hand(1))).melds
    return st, [str(t.meld) for t in st.table].index("3E 4E 5E")


@pytest.mark.parametrize(("rules", "wild"), [(W1O, "1O"), (RuleSet(jokers=1), "JK1")],
                         ids=["wild-card", "joker"])
def test_layoff_best_tries_a_wild_card_at_the_high_end_of_a_run_too(rules: RuleSet, wild: str) -> None:
    # docs/rules.md, section 8: every lay-off is tried, "(a joker on a run) at either end".
    # The wild card as 6E opens the run to the 7E: both go, 32 points; as 2E only 25.
    st, run = _wild_layoff(rules, wild)
    after = apply(st, LAYOFF_BEST)
    assert str(after.table[run].meld) == f"3E 4E 5E {wild} 7E"
    assert sorted(map(str, after.results[-1].unmatched[1])) == sorted(["6O", "12C", "2B", "11B", "3O"])


@pytest.mark.parametrize(("rules", "wild"), [(W1O, "1O"), (RuleSet(jokers=1), "JK1")],
                         ids=["wild-card", "joker"])
def test_the_record_spells_out_layoff_best_with_the_end_each_wild_card_took(
        rules: RuleSet, wild: str) -> None:
    # docs/protocol.md, `resolved`: "the lay-offs in order, with the end a joker took"; a
    # wild card is a joker in every respect (docs/rules.md, section 3). Played one by one,
    # the actions named do what the macro did.
    from chinchon.engine.macros import resolve

    st, run = _wild_layoff(rules, wild)
    after = apply(st, LAYOFF_BEST)
    done = resolve(st, after, 1, LAYOFF_BEST)
    assert done == (LayOff(C(wild), run, End.HIGH), LayOff(C("7E"), run))
    again = st
    for a in done:
        again = apply(again, a)
    assert [t.meld for t in again.table] == [t.meld for t in after.table]
    assert again.hands == after.hands
