"""Hand-written positions with their expected outcomes.

Every position is reached honestly: a Deal with a chosen deck order, then actions.
"""

from __future__ import annotations

import pytest
from chinchon.engine import (
    DRAW_DISCARD,
    DRAW_STOCK,
    LAYDOWN_BEST,
    LAYOFF_BEST,
    PASS,
    Close,
    Deal,
    Discard,
    GameState,
    IllegalAction,
    LayDown,
    LayOff,
    MalformedInput,
    Reshuffle,
    RuleSet,
    ShuffleSource,
    Violation,
    apply,
    best_arrangement,
    cards_of,
    legal_actions,
    new_game,
    observation,
)
from chinchon.engine.game import GameEnd, HandEnd, Phase
from chinchon.engine.melds import End

from tests.support.engine import CS, C, crafted, deal_order, position, snapshot


def illegal(state: GameState, action, code: Violation, seat=None) -> str:  # type: ignore[no-untyped-def]
    before = snapshot(state)
    with pytest.raises(IllegalAction) as e:
        apply(state, action, seat=seat)
    assert e.value.code is code, (e.value.code, e.value.message)
    assert snapshot(state) == before
    return e.value.message


def table_text(state: GameState) -> list[tuple[int, str]]:
    return [(tm.owner, str(tm.meld)) for tm in state.table]


def steps(state: GameState) -> tuple[Phase, int]:
    return state.phase, state.to_act


NOBODY = "6E 10B 12E 2B 7C 11E 3E"  # no meld, fits nothing below


# == closing ==================================================================================


def test_close_with_the_card_just_taken_in_a_meld() -> None:
    rules = RuleSet()
    st = position(rules, {0: "1O 2O 3O 4C 4E 1B 12C", 1: NOBODY}, "4B")
    st = apply(st, DRAW_DISCARD)
    # The taken 4B may not be the face-down card, but it may be melded.
    illegal(st, Close(C("4B")), Violation.RETAKE_DISCARD)
    after = apply(st, Close(C("12C")))
    hr = after.results[-1]
    assert hr.end is HandEnd.CLOSED and hr.points[0] == 1
    assert (0, "4C 4E 4B") in [(tm.owner, str(tm.meld)) for tm in hr.table]


# == lay-offs ==================================================================================


def _closed_2p(rules: RuleSet, other: str) -> GameState:
    """Seat 0 closes with 2O 3O 4O | 5C 5E 5B, 1B unmatched; seat 1 holds ``other``."""
    st = position(rules, {0: "2O 3O 4O 5C 5E 5B 1B", 1: other}, "11B", "12B")
    st = apply(apply(st, DRAW_STOCK), Close(C("12B")))
    assert table_text(st) == [(0, "2O 3O 4O"), (0, "5C 5E 5B")]
    return st


def test_layoff_onto_a_set_makes_it_four() -> None:
    st = _closed_2p(RuleSet(), "5O 12C 11E 7B 6E 10C 3B")
    assert steps(st) == (Phase.LAYOFF, 1)
    assert legal_actions(st) == [PASS, LAYOFF_BEST, LayOff(C("5O"), 0), LayOff(C("5O"), 1)]
    st = apply(st, LayOff(C("5O"), 1))
    hr = st.results[-1]  # nothing more to lay off: the hand is counted
    assert [(tm.owner, str(tm.meld)) for tm in hr.table] == [(0, "2O 3O 4O"), (0, "5O 5C 5E 5B")]
    assert C("5O") not in hr.unmatched[1]


def test_layoff_onto_both_ends_of_a_run() -> None:
    st = _closed_2p(RuleSet(), "1O 5O 6O 11E 7B 6E 10C")
    st = apply(st, LayOff(C("1O"), 0))
    assert table_text(st)[0] == (0, "1O 2O 3O 4O")
    st = apply(st, LayOff(C("5O"), 0, End.HIGH))  # a natural card may name its end
    assert table_text(st)[0] == (0, "1O 2O 3O 4O 5O")
    st = apply(st, LayOff(C("6O"), 0))
    hr = st.results[-1]
    assert str(hr.table[0].meld) == "1O 2O 3O 4O 5O 6O"
    assert hr.points[1] == best_arrangement(CS("11E 7B 6E 10C"), RuleSet()).points


def test_layoff_natural_card_naming_the_wrong_end_refused() -> None:
    st = _closed_2p(RuleSet(), "1O 5O 6O 11E 7B 6E 10C")
    msg = illegal(st, LayOff(C("1O"), 0, End.HIGH), Violation.LAYOFF_DOES_NOT_FIT)
    assert "the high end was named" in msg


def test_layoff_card_that_does_not_fit_refused() -> None:
    st = _closed_2p(RuleSet(), "5O 12C 11E 7B 6E 10C 3B")
    assert "wrong suit" in illegal(st, LayOff(C("10C"), 0), Violation.LAYOFF_DOES_NOT_FIT)
    assert "the set is of 5s" in illegal(st, LayOff(C("10C"), 1), Violation.LAYOFF_DOES_NOT_FIT)
    assert "wrong suit" in illegal(st, LayOff(C("7B"), 0), Violation.LAYOFF_DOES_NOT_FIT)
    illegal(st, LayOff(C("4C"), 1), Violation.CARD_NOT_IN_HAND)
    assert "no meld 5" in illegal(st, LayOff(C("5O"), 5), Violation.NO_SUCH_MELD)
    illegal(st, LayOff(C("5O"), -1), Violation.NO_SUCH_MELD)
    illegal(st, LayOff(C("5O"), 1, End.LOW), Violation.LAYOFF_DOES_NOT_FIT)  # a set has no ends
    illegal(st, Discard(C("5O")), Violation.WRONG_PHASE)


def test_joker_laid_off_at_the_low_or_high_end() -> None:
    rules = RuleSet(jokers=2)
    st = _closed_2p(rules, "JK1 JK2 12C 11E 7B 6E 10C")
    msg = illegal(st, LayOff(C("JK1"), 0), Violation.LAYOFF_DOES_NOT_FIT)
    assert "say which end" in msg  # both ends of 2O 3O 4O are open
    assert LayOff(C("JK1"), 0, End.LOW) in legal_actions(st)
    assert LayOff(C("JK1"), 0, End.HIGH) in legal_actions(st)
    st = apply(st, LayOff(C("JK1"), 0, End.LOW))
    assert table_text(st)[0] == (0, "JK1 2O 3O 4O")  # the joker is the 1O
    # Below the 1O nothing can stand; the only end left is taken without naming it.
    msg = illegal(st, LayOff(C("JK2"), 0, End.LOW), Violation.LAYOFF_DOES_NOT_FIT)
    assert "cannot stand below 1" in msg
    st = apply(st, LayOff(C("JK2"), 0))
    hr = st.results[-1]  # nothing else fits: the hand is counted
    assert str(hr.table[0].meld) == "JK1 2O 3O 4O JK2"
    assert hr.table[0].meld.low == 0 and hr.table[0].meld.high == 4
    assert sorted(hr.unmatched[1]) == sorted(CS("12C 11E 7B 6E 10C"))


def test_joker_on_a_set_and_a_set_holds_at_most_four() -> None:
    rules = RuleSet(jokers=2)
    st = _closed_2p(rules, "JK1 5O 12C 11E 7B 6E 10C")
    illegal(st, LayOff(C("JK1"), 1, End.HIGH), Violation.LAYOFF_DOES_NOT_FIT)
    st = apply(st, LayOff(C("JK1"), 1))
    assert table_text(st)[1] == (0, "5C 5E 5B JK1")
    msg = illegal(st, LayOff(C("5O"), 1), Violation.LAYOFF_DOES_NOT_FIT)
    assert "at most 4" in msg
    # 5O still fits the run's high end.
    st = apply(st, LayOff(C("5O"), 0))
    assert str(st.results[-1].table[0].meld) == "2O 3O 4O 5O"


def test_joker_never_taken_back_out_of_a_meld() -> None:
    rules = RuleSet(jokers=1)
    st = _closed_2p(rules, "JK1 1O 5O 11E 7B 6E 10C")
    st = apply(st, LayOff(C("JK1"), 0, End.LOW))
    # The 1O would stand where the joker is: it does not replace it, nor go below it.
    assert "next to either end" in illegal(st, LayOff(C("1O"), 0), Violation.LAYOFF_DOES_NOT_FIT)
    assert LayOff(C("1O"), 0) not in legal_actions(st)


def test_pass_ends_the_layoff_turn() -> None:
    st = _closed_2p(RuleSet(), "5O 12C 11E 7B 6E 10C 3B")
    after = apply(st, PASS)
    hr = after.results[-1]
    assert C("5O") in hr.unmatched[1] and after.phase is Phase.DEAL


def test_layoff_best_lays_off_the_most_points() -> None:
    st = _closed_2p(RuleSet(), "1O 5O 6O 7O 12C 11E 7B")
    st2 = apply(st, LAYOFF_BEST)
    hr = st2.results[-1]
    # 5O must go on the run (so 6O 7O follow it) and 1O at the low end: 19 points off.
    assert sorted(hr.unmatched[1]) == sorted(CS("12C 11E 7B"))
    assert str(hr.table[0].meld) == "1O 2O 3O 4O 5O 6O 7O"


def test_layoff_best_lays_off_seven_cards_that_fit_four_runs() -> None:
    # Seven cards that all fit four runs: every order of the same lay-offs reaches the
    # same position. How long the search takes is measured by bench/bench_layoff_best.py
    # (a timed test fails on a busy machine); this checks what it finds.
    rules = RuleSet(players=3, jokers=2, deck=48)
    st = position(
        rules,
        {0: "4O 5O 6O 4C 5C 6C 1B", 1: "8E 9E 10E 8B 9B 10B 12O", 2: "3O 7O 3C 7C 7E 11B JK1"},
        "11C",
        "12B",
    )
    st = apply(apply(st, DRAW_STOCK), Close(C("12B")))
    st = apply(st, PASS)  # seat 2 waits: first seat 1 lays down its runs
    assert steps(st) == (Phase.LAYDOWN, 1)
    st = apply(st, LAYDOWN_BEST)
    assert steps(st) == (Phase.LAYOFF, 2) and len(st.table) == 4
    after = apply(st, LAYOFF_BEST)
    hr = after.results[-1]
    assert hr.unmatched[2] == () and hr.points[2] == 0  # all seven laid off


def test_closer_melds_locked_and_own_meld_refused_3_players() -> None:
    rules = RuleSet(players=3)
    st = position(
        rules,
        {0: "1O 2O 3O 5C 5E 5B 5O", 1: "10C 10E 10B 4C 11B 6B 3B", 2: "1C 2C 3C 4O 10O 12O 7E"},
        "6C",
        "12B",
    )
    st = apply(apply(st, DRAW_STOCK), Close(C("12B")))
    assert st.closer_locked and st.results == ()
    assert table_text(st) == [(0, "1O 2O 3O"), (0, "5O 5C 5E 5B")]
    # Nobody lays off on the closer's melds: the first round of lay-offs is skipped.
    assert steps(st) == (Phase.LAYDOWN, 1)
    illegal(st, LayOff(C("11B"), 0), Violation.WRONG_PHASE)
    st = apply(st, LayDown((tuple(CS("10C 10E 10B")),)))
    assert steps(st) == (Phase.LAYOFF, 2)
    assert legal_actions(st) == [PASS, LAYOFF_BEST, LayOff(C("10O"), 2)]
    msg = illegal(st, LayOff(C("4O"), 0), Violation.CLOSER_MELDS_LOCKED)
    assert "melded all seven" in msg
    st = apply(st, LayOff(C("10O"), 2))
    assert steps(st) == (Phase.LAYDOWN, 2)
    st = apply(st, LAYDOWN_BEST)
    assert steps(st) == (Phase.LAYOFF, 1)
    assert legal_actions(st) == [PASS, LAYOFF_BEST, LayOff(C("4C"), 3)]
    msg = illegal(st, LayOff(C("6B"), 2), Violation.OWN_MELD)
    assert "your own meld" in msg
    illegal(st, LayOff(C("6B"), 0), Violation.CLOSER_MELDS_LOCKED)
    st = apply(st, LayOff(C("4C"), 3))
    hr = st.results[-1]
    assert hr.bonus == "minus_10" and hr.points == (-10, 9 + 6 + 3, 4 + 10 + 7)
    assert [(t.owner, str(t.meld)) for t in hr.table] == [
        (0, "1O 2O 3O"), (0, "5O 5C 5E 5B"), (1, "10O 10C 10E 10B"), (2, "1C 2C 3C 4C"),
    ]


def test_a_card_that_fits_only_your_own_meld_gives_no_layoff_turn() -> None:
    # Seat 1 lays down 1E 2E 3E and keeps 4E: its last lay-off turn would have only
    # "4E on its own meld", which is no lay-off, so the turn is skipped and 4E counts.
    rules = RuleSet(players=3)
    st = position(
        rules,
        {0: "1O 2O 3O 5C 5E 5B 1B", 1: "1E 2E 3E 4E 11C 10B 7O", 2: "6O 10O 12O 2B 7E 11E 3C"},
        "6C",
        "12B",
    )
    st = apply(apply(st, DRAW_STOCK), Close(C("12B")))
    assert steps(st) == (Phase.LAYDOWN, 1)
    st = apply(st, LayDown((tuple(CS("1E 2E 3E")),)))
    assert st.phase is Phase.DEAL, "no lay-off turn is left to anyone"
    hr = st.results[-1]
    assert C("4E") in hr.unmatched[1]
    assert [str(t.meld) for t in hr.table if t.owner == 1] == ["1E 2E 3E"]


def test_layoff_and_laydown_order_after_a_close_3_players() -> None:
    # Seat 0 closes (1B unmatched). Then: lay-offs by 1 and 2 on the closer's melds;
    # 1 lays down, 2 may lay off; 2 lays down, 1 may lay off.
    rules = RuleSet(players=3)
    st = position(
        rules,
        {0: "1O 2O 3O 5C 5E 5B 1B", 1: "4O 2E 3E 4E 7E 10B 11O", 2: "5O 7O 7C 7B 1E 10C 11C"},
        "6C",
        "12B",
    )
    st = apply(apply(st, DRAW_STOCK), Close(C("12B")))
    seen = [steps(st)]
    st = apply(st, LayOff(C("4O"), 0))
    seen.append(steps(st))
    st = apply(st, LayOff(C("5O"), 1))
    seen.append(steps(st))
    st = apply(st, LayDown((tuple(CS("2E 3E 4E")),)))
    seen.append(steps(st))
    st = apply(st, LayOff(C("1E"), 2))
    seen.append(steps(st))
    assert LayDown((tuple(CS("7O 7C 7B")),)) in legal_actions(st)
    assert LayDown((tuple(CS("7C 10C 11C")),)) in legal_actions(st)  # 7 and 10 are neighbours
    st = apply(st, LayDown((tuple(CS("7O 7C 7B")),)))
    seen.append(steps(st))
    st = apply(st, LayOff(C("7E"), 3))
    assert seen == [
        (Phase.LAYOFF, 1),
        (Phase.LAYOFF, 2),
        (Phase.LAYDOWN, 1),
        (Phase.LAYOFF, 2),
        (Phase.LAYDOWN, 2),
        (Phase.LAYOFF, 1),
    ]
    hr = st.results[-1]
    assert hr.end is HandEnd.CLOSED and hr.closer == 0
    assert hr.points == (1, 8 + 9, 8 + 9)
    assert [(t.owner, str(t.meld)) for t in hr.table] == [
        (0, "1O 2O 3O 4O"), (0, "5O 5C 5E 5B"), (1, "1E 2E 3E 4E"), (2, "7O 7C 7E 7B"),
    ]
    assert st.phase is Phase.DEAL and st.next_starter == 1


def test_turns_with_nothing_to_do_are_skipped() -> None:
    # Seat 1 can neither lay off nor meld: the close ends the hand at once.
    st = position(RuleSet(), {0: "1O 2O 3O 5C 5E 5B 1B", 1: NOBODY}, "11B", "12B")
    after = apply(apply(st, DRAW_STOCK), Close(C("12B")))
    assert after.phase is Phase.DEAL and len(after.results) == 1
    hr = after.results[0]
    assert hr.unmatched[1] == tuple(sorted(CS(NOBODY), key=lambda c: (c // 12, c % 12)))
    assert hr.points[1] == 6 + 8 + 10 + 2 + 7 + 9 + 3


def test_laydown_of_a_named_split_and_of_nothing() -> None:
    st = _closed_2p(RuleSet(), "10C 11C 12C 10E 10B 7E 6E")
    # Nothing fits 2O 3O 4O or the 5s: the lay-off turn is skipped.
    assert steps(st) == (Phase.LAYDOWN, 1)
    illegal(st, LayDown((tuple(CS("10C 11C")),)), Violation.INVALID_MELD)
    illegal(st, LayDown((tuple(CS("10C 11C 12C")), tuple(CS("10C 10E 10B")))),
            Violation.CARD_USED_TWICE)
    illegal(st, LayDown((tuple(CS("10O 10E 10B")),)), Violation.CARD_NOT_IN_HAND)
    after = apply(st, LayDown(()))
    assert after.results[-1].points[1] == 8 + 9 + 10 + 8 + 8 + 7 + 6
    after = apply(st, LAYDOWN_BEST)
    # 10C 11C 12C | 6E 7E 10E (7 and 10 are neighbours): only 10B is left.
    assert after.results[-1].points[1] == 8
    assert (1, "6E 7E 10E") in [(t.owner, str(t.meld)) for t in after.results[-1].table]


def test_laydown_best_leaves_the_fewest_cards_among_equal_points() -> None:
    # 4E 5E 7E 11E JK1 leaves 9 points as 7E JK1 11E (4E 5E unmatched) or as
    # 4E 5E JK1 7E (11E unmatched): best lays down the second, so 11E stays in the hand
    # alone and the record's unmatched list has one card of the four, not two.
    rules = RuleSet(jokers=1)
    st = position(rules, {0: "1O 2O 3O 6C 6E 6B 1B", 1: "4E 5E 7E 11E JK1 12C 10B"}, "11B", "12B")
    st = apply(apply(st, DRAW_STOCK), Close(C("12B")))
    assert table_text(st) == [(0, "1O 2O 3O"), (0, "6C 6E 6B")]
    st = apply(st, PASS)  # (the joker could go on either meld: seat 1 keeps it)
    assert steps(st) == (Phase.LAYDOWN, 1)
    hr = apply(st, LAYDOWN_BEST).results[-1]
    assert (1, "4E 5E JK1 7E") in [(t.owner, str(t.meld)) for t in hr.table]
    assert hr.unmatched[1] == tuple(CS("12C 11E 10B"))
    assert hr.points[1] == 9 + 10 + 8


# == bonuses ==================================================================================


def _close_seven(rules: RuleSet, seven: str, players: int = 2, melds=None) -> GameState:  # type: ignore[no-untyped-def]
    others = [NOBODY, "1C 4B 4E 6C 1E 11B 3C", "2C 10C 6B 12O 11C 2E 7E"][: players - 1]
    hands = {0: seven} | {i + 1: h for i, h in enumerate(others)}
    st = position(rules.replace(players=players), hands, "12C", "12B")
    return apply(apply(st, DRAW_STOCK), Close(C("12B"), melds))


def test_bonus_minus_10_all_seven_melded() -> None:
    st = _close_seven(RuleSet(), "1O 2O 3O 5C 5E 5B 5O")
    hr = st.results[-1]
    assert hr.bonus == "minus_10" and hr.points[0] == -10 and hr.totals[0] == -10
    assert st.phase is Phase.DEAL and st.result is None


def test_bonus_minus_50_seven_run_with_one_joker() -> None:
    st = _close_seven(RuleSet(jokers=1), "1O 2O JK1 4O 5O 6O 7O")
    hr = st.results[-1]
    assert hr.bonus == "minus_50" and hr.points[0] == -50
    assert [str(t.meld) for t in hr.table if t.owner == 0] == ["1O 2O JK1 4O 5O 6O 7O"]
    assert st.result is None  # not chinchón: the game goes on


def test_bonus_minus_25_seven_run_with_two_jokers() -> None:
    st = _close_seven(RuleSet(jokers=2), "JK1 2O 3O JK2 5O 6O 7O")
    hr = st.results[-1]
    assert hr.bonus == "minus_25" and hr.points[0] == -25 and hr.totals[0] == -25


def test_seven_run_with_a_joker_named_as_two_melds_still_counts_as_the_run() -> None:
    melds = (tuple(CS("1O 2O JK1")), tuple(CS("4O 5O 6O 7O")))
    st = _close_seven(RuleSet(jokers=1), "1O 2O JK1 4O 5O 6O 7O", melds=melds)
    assert st.results[-1].bonus == "minus_50" and st.results[-1].points[0] == -50


def test_chinchon_ends_the_game_at_once_closer_wins() -> None:
    st = _close_seven(RuleSet(), "4O 5O 6O 7O 10O 11O 12O", players=3)
    assert st.phase is Phase.GAME_OVER
    hr = st.results[-1]
    assert hr.end is HandEnd.CHINCHON and hr.bonus == "chinchon" and hr.closer == 0
    assert st.result is not None
    assert st.result.end is GameEnd.CHINCHON and st.result.winners == (0,)
    assert st.result.hands_played == 1
    # The others' hands are still counted (on their best arrangement).
    assert hr.points[1] == best_arrangement(CS(NOBODY), st.rules).points
    assert legal_actions(st) == []
    illegal(st, DRAW_STOCK, Violation.GAME_OVER)


def test_chinchon_named_as_two_melds_is_still_chinchon() -> None:
    melds = (tuple(CS("1O 2O 3O")), tuple(CS("4O 5O 6O 7O")))
    st = _close_seven(RuleSet(), "1O 2O 3O 4O 5O 6O 7O", melds=melds)
    assert st.results[-1].end is HandEnd.CHINCHON
    assert st.result is not None and st.result.end is GameEnd.CHINCHON


def test_chinchon_wins_even_with_a_higher_total() -> None:
    # Seat 1 closes a chinchón in hand 1 while seat 0... both start at 0; the closer
    # wins regardless of anyone's score.
    rules = RuleSet()
    st = position(rules, {0: NOBODY, 1: "1O 2O 3O 4O 5O 6O 7O"}, "12C", "11C 12B")
    st = apply(apply(st, DRAW_STOCK), Discard(C("11C")))
    st = apply(apply(st, DRAW_STOCK), Close(C("12B")))
    assert st.result is not None and st.result.winners == (1,)
    assert st.result.end is GameEnd.CHINCHON


def test_named_split_with_unmatched_card_still_gets_minus_10() -> None:
    # The seven cards all meld; naming a split that leaves 4O out still earns -10.
    melds = (tuple(CS("1O 2O 3O")), tuple(CS("5C 5E 5B")))
    st = _close_seven(RuleSet(), "1O 2O 3O 4O 5C 5E 5B", melds=melds)
    hr = st.results[-1]
    assert hr.bonus == "minus_10" and hr.points[0] == -10 and hr.unmatched[0] == ()
    melded = {c for t in hr.table if t.owner == 0 for c in t.meld.cards}
    assert C("4O") in melded


def test_bonus_belongs_to_the_closer_alone() -> None:
    # Seat 1 melds everything it holds after seat 0's -10: it scores 0, not a bonus.
    st2 = position(RuleSet(), {0: "1O 2O 3O 5C 5E 5B 5O", 1: "10C 11C 12C 10E 10B 10O 7E"},
                   "12O", "12B")
    st2 = apply(apply(st2, DRAW_STOCK), Close(C("12B")))
    assert steps(st2) == (Phase.LAYDOWN, 1)
    st2 = apply(st2, LAYDOWN_BEST)
    hr = st2.results[-1]
    assert hr.points == (-10, 7) and hr.bonus == "minus_10"


# == stock running out ========================================================================


def _play_out(st: GameState, turns: int) -> GameState:
    """Each player draws the stock's top and discards it, ``turns`` times."""
    for _ in range(turns):
        seat = st.to_act
        before = set(cards_of(st.hands[seat]))
        st = apply(st, DRAW_STOCK)
        (drawn,) = set(cards_of(st.hands[seat])) - before
        st = apply(st, Discard(drawn))
    return st


HANDS_2P = {0: "1O 2O 3O 5C 5E 12B 12C", 1: "4C 4E 4B 10O 11E 7B 6E"}


def test_first_exhaustion_reshuffles_the_pile_but_its_top_card() -> None:
    st = position(RuleSet(), HANDS_2P, "1C")
    assert st.stock_size == 25
    st = _play_out(st, 25)
    assert st.phase is Phase.RESHUFFLE and st.to_act == -1 and st.is_chance
    assert legal_actions(st) == []
    pile = st.discard_pile()
    assert len(pile) == 26 and pile[0] == C("1C")
    last_discarder = st.hand_events()[-1].seat
    assert last_discarder == 0  # turns 0..24 alternate from seat 0
    illegal(st, Reshuffle(tuple(pile)), Violation.BAD_RESHUFFLE)  # the top card stays
    illegal(st, Reshuffle(tuple(pile[:-2])), Violation.BAD_RESHUFFLE)
    illegal(st, DRAW_STOCK, Violation.CHANCE_EXPECTED)
    order = tuple(reversed(pile[:-1]))
    after = apply(st, Reshuffle(order))
    assert after.phase is Phase.DRAW
    assert after.discard_pile() == [pile[-1]]
    assert after.stock_size == 25 and after.stock[after.stock_top] == order[0]
    # The turn passes on from the player whose discard emptied the stock.
    assert after.to_act == 1
    ev = after.hand_events()[-1]
    assert (ev.kind, ev.seat, ev.card, ev.detail) == ("reshuffle", -1, None, "25")
    # The shuffle source gives a reshuffle of exactly those cards.
    src = ShuffleSource("s", "d").chance(st)
    assert isinstance(src, Reshuffle) and sorted(src.order) == sorted(pile[:-1])


def test_reshuffle_turn_order_when_the_second_seat_emptied_the_stock() -> None:
    st = position(RuleSet(), HANDS_2P, "1C", starter=1)
    st = _play_out(st, 25)
    assert st.hand_events()[-1].seat == 1
    after = apply(st, ShuffleSource("s", "d").chance(st))
    assert after.to_act == 0


def test_second_exhaustion_ends_the_hand_with_no_closer() -> None:
    rules = RuleSet()
    st = _play_out(position(rules, HANDS_2P, "1C"), 25)
    st = apply(st, ShuffleSource("s", "d").chance(st))
    st = _play_out(st, 24)
    assert st.phase is Phase.DRAW and st.stock_size == 1
    st = _play_out(st, 1)
    assert st.phase is Phase.DEAL
    hr = st.results[-1]
    assert hr.end is HandEnd.STOCK_EXHAUSTED and hr.closer == -1 and hr.bonus == "none"
    assert hr.close_discard is None
    # Every hand scored on its best arrangement: 1O 2O 3O | 5C 5E 12B 12C = 30;
    # 4C 4E 4B | 10O 11E 7B 6E = 8 + 9 + 7 + 6 = 30.
    assert hr.points == (30, 30) and hr.totals == (30, 30)
    assert sorted((t.owner, str(t.meld)) for t in hr.table) == [(0, "1O 2O 3O"), (1, "4C 4E 4B")]
    assert [sorted(h) for h in hr.hands] == [sorted(CS(HANDS_2P[0])), sorted(CS(HANDS_2P[1]))]


def test_close_on_the_turn_that_emptied_the_stock() -> None:
    rules = RuleSet()
    st = position(rules, {0: "1O 2O 3O 4C 4E 4B 5C", 1: NOBODY}, "1C")
    st = _play_out(st, 24)
    assert st.stock_size == 1 and st.to_act == 0
    st = apply(st, DRAW_STOCK)
    assert st.stock_size == 0
    (drawn,) = set(st.hand(0)) - set(CS("1O 2O 3O 4C 4E 4B 5C"))
    after = apply(st, Close(drawn))
    hr = after.results[-1]
    assert hr.end is HandEnd.CLOSED and hr.closer == 0 and hr.points[0] == 5


def test_reshuffle_leaving_the_stock_empty_counts_as_the_second_time() -> None:
    """By legal play the discard pile holds the up card plus one card per stock draw when
    the stock first runs out, so a first reshuffle always has cards. The rule's branch is
    checked on a state whose pile was emptied by hand: one card in the pile when the stock
    runs out ends the hand instead of reshuffling."""
    rules = RuleSet()
    st = _play_out(position(rules, HANDS_2P, "1C"), 24)
    st = apply(st, DRAW_STOCK)  # the last stock card
    assert st.stock_size == 0 and st.exhausted == 0
    seat = st.to_act
    no_pile = crafted(st, pile=(), pile_len=0)
    end = apply(no_pile, Discard(st.hand(seat)[0]))
    assert end.phase is Phase.DEAL
    assert end.results[-1].end is HandEnd.STOCK_EXHAUSTED
    # The same position with a real pile reshuffles.
    assert apply(st, Discard(st.hand(seat)[0])).phase is Phase.RESHUFFLE


def test_max_turns_per_hand_ends_the_hand() -> None:
    rules = RuleSet(max_turns_per_hand=4)
    st = _play_out(position(rules, HANDS_2P, "1C"), 3)
    assert st.phase is Phase.DRAW and st.turn == 3
    st = _play_out(st, 1)
    hr = st.results[-1]
    assert hr.end is HandEnd.TURN_LIMIT and hr.closer == -1
    assert hr.points == (30, 30)


def test_unmatched_joker_scores_its_points_at_the_count() -> None:
    rules = RuleSet(jokers=1, joker_points=7, max_turns_per_hand=2)
    # The joker fits nothing here: 1O 12O do not wrap, 3E 7E are too far apart.
    st = position(rules, {0: "1O 5C 7E 10B 12O 3E JK1", 1: HANDS_2P[1]}, "1C")
    st = _play_out(st, 2)
    assert st.results[-1].unmatched[0][-1] == C("JK1")
    assert st.results[-1].points[0] == 1 + 5 + 7 + 8 + 10 + 3 + 7
    # A joker that melds is not counted: 5C 5E JK1 | 1O 2O 3O leaves 12B.
    st = position(rules, {0: "1O 2O 3O 5C 5E 12B JK1", 1: HANDS_2P[1]}, "1C")
    st = _play_out(st, 2)
    assert st.results[-1].points[0] == 10


# == elimination and the end of the game =====================================================


def test_elimination_at_the_score_limit_last_player_wins() -> None:
    rules = RuleSet(score_limit=40)
    st = position(rules, {0: "1O 2O 3O 4C 4E 4B 5C", 1: NOBODY}, "1C", "12B")
    st = apply(apply(st, DRAW_STOCK), Close(C("12B")))
    hr = st.results[-1]
    assert hr.points == (5, 45) and hr.eliminated == (1,)
    assert st.phase is Phase.GAME_OVER and st.alive == (True, False)
    assert st.result is not None
    assert st.result.end is GameEnd.LAST_PLAYER and st.result.winners == (0,)
    assert st.result.totals == (5, 45)


def test_score_exactly_at_the_limit_is_out() -> None:
    rules = RuleSet(score_limit=45)
    st = position(rules, {0: "1O 2O 3O 4C 4E 4B 5C", 1: NOBODY}, "1C", "12B")
    st = apply(apply(st, DRAW_STOCK), Close(C("12B")))
    assert st.results[-1].eliminated == (1,)
    rules = RuleSet(score_limit=46)
    st = position(rules, {0: "1O 2O 3O 4C 4E 4B 5C", 1: NOBODY}, "1C", "12B")
    st = apply(apply(st, DRAW_STOCK), Close(C("12B")))
    assert st.results[-1].eliminated == () and st.phase is Phase.DEAL


def test_simultaneous_elimination_lowest_total_wins() -> None:
    rules = RuleSet(max_turns_per_hand=2, score_limit=10)
    st = position(rules, {0: "1O 2O 3O 5C 5E 12B 11C", 1: "4C 4E 4B 10O 11E 7B 6E"}, "1C")
    st = _play_out(st, 2)
    hr = st.results[-1]
    assert hr.points == (29, 30) and hr.eliminated == (0, 1)
    assert st.result is not None
    assert st.result.end is GameEnd.LOWEST_TOTAL and st.result.winners == (0,)


def test_simultaneous_elimination_equal_lowest_totals_share_a_draw() -> None:
    rules = RuleSet(players=3, max_turns_per_hand=3, score_limit=10)
    st = position(
        rules,
        {0: "1O 2O 3O 5C 5E 12B 12C", 1: "4C 4E 4B 10O 11E 7B 6E", 2: "1B 2B 10E 11O 12O 6O 7O"},
        "1C",
    )
    st = _play_out(st, 3)
    hr = st.results[-1]
    assert hr.points[:2] == (30, 30) and hr.points[2] > 30
    assert hr.eliminated == (0, 1, 2)
    assert st.result is not None
    assert st.result.end is GameEnd.DRAW and st.result.winners == (0, 1)
    assert st.phase is Phase.GAME_OVER


def test_next_hand_starter_is_the_next_player() -> None:
    rules = RuleSet(players=3)
    hands = {0: "1O 2O 3O 4C 4E 4B 5C", 1: NOBODY, 2: "1C 5B 6B 6C 10O 11B 3C"}
    st = position(rules, hands, "1E", "12B", starter=0)
    st = apply(apply(st, DRAW_STOCK), Close(C("12B")))
    while st.phase is not Phase.DEAL:
        st = apply(st, PASS if st.phase is Phase.LAYOFF else LAYDOWN_BEST)
    assert st.next_starter == 1
    assert ShuffleSource("x", "y").chance(st).starter == 1


def test_next_hand_starter_skips_eliminated_players() -> None:
    rules = RuleSet(players=3, score_limit=40)
    hands = {0: "1O 2O 3O 4C 4E 4B 5C", 1: NOBODY, 2: "1C 5B 6B 6C 10O 11B 3C"}
    st = position(rules, hands, "1E", "12B", starter=0)
    st = apply(apply(st, DRAW_STOCK), Close(C("12B")))
    while st.phase is not Phase.DEAL:
        st = apply(st, PASS if st.phase is Phase.LAYOFF else LAYDOWN_BEST)
    hr = st.results[-1]
    assert hr.eliminated == (1,) and st.alive == (True, False, True)
    assert st.result is None  # two players are still in
    assert st.next_starter == 2
    deck = deal_order(rules, {2: NOBODY, 0: "1O 2O 3O 4C 4E 4B 5C"}, "1E", starter=2,
                      alive=st.alive).deck
    msg = illegal(st, Deal(deck, 1), Violation.BAD_DEAL)
    assert "started by seat 2" in msg
    src = ShuffleSource("x", "y").chance(st)
    assert src.starter == 2
    st2 = apply(st, Deal(deck, 2))
    assert st2.to_act == 2 and st2.hands[1] == 0
    assert sorted(st2.hand(2)) == sorted(CS(NOBODY))
    assert st2.stock_size == 40 - 15
    # The player who is out never gets a turn: after seat 2 comes seat 0.
    st2 = apply(apply(st2, DRAW_STOCK), Discard(C("3E")))
    assert st2.to_act == 0
    obs = observation(st2, 1)
    assert obs.hand == () and not obs.players[1].in_game


# == illegal actions leave the state unchanged =================================================


def _states_for_illegal_checks() -> list[GameState]:
    rules = RuleSet(players=3, jokers=1)
    hands = {0: "1O 2O 3O 5C 5E 5B 1B", 1: "4O 2E 3E 4E 7E 10B 11O",
             2: "5O 7O 7C 7B 1E 10C JK1"}
    st = position(rules, hands, "6C", "12B")
    out = [st]
    st = apply(st, DRAW_STOCK)
    out.append(st)
    st = apply(st, Close(C("12B")))
    out.append(st)  # lay-off
    st = apply(st, PASS)
    out.append(st)  # seat 2 lay-off
    st = apply(st, PASS)
    out.append(st)  # seat 1 lay-down
    out.append(new_game(rules))  # waiting for the first deal
    out.append(_play_out(position(RuleSet(), HANDS_2P, "1C"), 25))  # waiting for a reshuffle
    out.append(_close_seven(RuleSet(), "1O 2O 3O 4O 5O 6O 7O"))  # game over (chinchón)
    assert [s.phase for s in out[-3:]] == [Phase.DEAL, Phase.RESHUFFLE, Phase.GAME_OVER]
    return out


@pytest.mark.parametrize("index", range(8))
def test_apply_illegal_action_leaves_the_state_unchanged(index: int) -> None:
    st = _states_for_illegal_checks()[index]
    before = snapshot(st)
    views = [observation(st, s) for s in range(st.n)]
    legal = legal_actions(st)
    tried = 0
    for action in [
        DRAW_STOCK, DRAW_DISCARD, Discard(C("12O")), Discard(C("JK1")), Close(C("11E")),
        Close(C("1O"), (tuple(CS("1O 2O")),)), LayOff(C("12O"), 0), LayOff(C("1B"), 9),
        LayDown((tuple(CS("2E 3E")),)), LayDown((tuple(CS("10O 11O 12O")),)),
        Deal(tuple(CS("1O 2O")), 0), Reshuffle(()), PASS, LAYOFF_BEST,
    ]:
        if action in legal:
            continue
        with pytest.raises((IllegalAction, MalformedInput)):
            apply(st, action)
        tried += 1
        if st.to_act >= 0:
            with pytest.raises(IllegalAction):
                apply(st, legal[0] if legal else DRAW_STOCK, seat=(st.to_act + 1) % st.n)
    assert tried >= 8
    assert snapshot(st) == before
    assert [observation(st, s) for s in range(st.n)] == views
    assert legal_actions(st) == legal


def test_state_is_immutable_across_apply() -> None:
    st = position(RuleSet(), HANDS_2P, "1C")
    before = snapshot(st)
    after = apply(st, DRAW_STOCK)
    assert snapshot(st) == before and after is not st
    obs = observation(after, 0)
    with pytest.raises(AttributeError):
        obs.hand = ()  # type: ignore[misc]
    with pytest.raises(AttributeError):
        obs.players[0].score = -1  # type: ignore[misc]
    assert isinstance(obs.hand, tuple) and isinstance(obs.events, tuple)
