"""``layoff best`` is best for the player: the fewest points left after the lay-down; ties
to the most points laid off, then to the first in legal_actions' order (docs/rules.md,
section 8).

The bug these tests pin down: laying off the cards worth the most points, even a card of
the player's own meld (6E onto 3E 4E 5E broke 6O 6C 6E and cost 12 points). They live among
tests/engine/test_engine_*.py so that the mutation check runs them, not only the goldens.
"""

from __future__ import annotations

from chinchon.engine import (
    DRAW_STOCK,
    LAYDOWN_BEST,
    LAYOFF_BEST,
    Close,
    GameState,
    GreedyBot,
    LayDown,
    LayOff,
    RuleSet,
    ShuffleSource,
    all_arrangements,
    apply,
    cards_of,
    legal_actions,
    new_game,
    observation,
)
from chinchon.engine.game import Phase
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from tests.support.engine import CS, C, position


def _pts(cards: str) -> int:
    return sum(RuleSet().card_points(c) for c in CS(cards))


def _closed(other: str, rules: RuleSet | None = None) -> GameState:
    """Seat 0 closes with 3E 4E 5E | 1C 2C 3C, 1B unmatched; seat 1 holds ``other``."""
    st0 = position(rules or RuleSet(), {0: "3E 4E 5E 1C 2C 3C 1B", 1: other}, "11B", "12B")
    return apply(apply(st0, DRAW_STOCK), Close(C("12B")))


def test_layoff_best_keeps_the_players_own_set_whole() -> None:
    st = _closed("6O 6C 6E 12O 11O 10B 7B")
    assert (st.phase, st.to_act) == (Phase.LAYOFF, 1)
    run = [str(tm.meld) for tm in st.table].index("3E 4E 5E")
    assert LayOff(C("6E"), run) in legal_actions(st)
    after = apply(st, LAYOFF_BEST)
    assert not [e for e in after.events if e.kind == "layoff"]
    if after.phase is Phase.LAYDOWN:
        after = apply(after, LAYDOWN_BEST)
    hr = after.results[-1]
    assert sorted(hr.unmatched[1]) == sorted(CS("12O 11O 10B 7B"))
    assert hr.points[1] == _pts("12O 11O 10B 7B")  # not 12 more for a broken 6O 6C
    assert [str(tm.meld) for tm in hr.table if tm.owner == 1] == ["6O 6C 6E"]


def test_layoff_best_still_lays_off_what_helps() -> None:
    # 6E breaks the set, 2E does not: 2E goes on the run, the set stays whole.
    st = _closed("6O 6C 6E 2E 11O 10B 7B")
    after = apply(st, LAYOFF_BEST)
    laid = [e.card for e in after.events if e.kind == "layoff"]
    assert laid == [C("2E")]
    if after.phase is Phase.LAYDOWN:
        after = apply(after, LAYDOWN_BEST)
    assert after.results[-1].points[1] == _pts("11O 10B 7B")


def test_layoff_best_after_the_own_lay_down_counts_the_cards() -> None:
    # 3 players, seat 1 closes: lay-down 2, lay-down 0, then seat 2's lay-off turn (the
    # others have nothing to lay off). Seat 2 laid down nothing and keeps 6O 6C 6B: no
    # lay-down follows now, so the set counts in full and 6B goes onto seat 0's run.
    rules = RuleSet(players=3)
    st = position(
        rules,
        {1: "3E 4E 5E 1C 2C 3C 1B", 2: "6O 6C 6B 11C 10B 12C 11O", 0: "3B 4B 5B 12B 11B 10E 7E"},
        "11E", "12O", starter=1,
    )
    st = apply(apply(st, DRAW_STOCK), Close(C("12O")))
    assert (st.phase, st.to_act) == (Phase.LAYDOWN, 2)
    st = apply(st, LayDown(()))
    assert (st.phase, st.to_act) == (Phase.LAYDOWN, 0)
    st = apply(st, LAYDOWN_BEST)
    assert (st.phase, st.to_act) == (Phase.LAYOFF, 2)
    after = apply(st, LAYOFF_BEST)
    assert [e.card for e in after.events if e.kind == "layoff"] == [C("6B")]
    assert after.results[-1].points[2] == _pts("6O 6C 11C 10B 12C 11O")


def test_layoff_best_ties_go_to_the_most_points_laid_off() -> None:
    # 6E fits 3E 4E 5E, and 6O 6C 6B stay a set without it: laying it off or not leaves
    # the same 27 points after the lay-down. The tie goes to laying it off (6 points).
    st = _closed("6O 6C 6E 6B 12O 11O 10B")
    run = [str(tm.meld) for tm in st.table].index("3E 4E 5E")
    after = apply(st, LAYOFF_BEST)
    assert [(e.card, e.detail) for e in after.events if e.kind == "layoff"] == [(C("6E"), str(run))]
    if after.phase is Phase.LAYDOWN:
        after = apply(after, LAYDOWN_BEST)
    hr = after.results[-1]
    assert hr.points[1] == _pts("12O 11O 10B")
    assert [str(tm.meld) for tm in hr.table if tm.owner == 1] == ["6O 6C 6B"]


def test_layoff_best_equal_lay_offs_go_to_the_first_listed() -> None:
    # A joker fits three places, each saving its 25 points: the first single lay-off in
    # legal_actions' order (table meld, then card, then end) wins: meld 0's high end.
    rules = RuleSet(jokers=1)
    st = _closed("JK1 12O 11E 7B 10C 6O 2B", rules)
    listed = [a for a in legal_actions(st) if isinstance(a, LayOff)]
    assert [(a.meld, a.at.value if a.at else None) for a in listed] == [
        (0, "high"), (1, "low"), (1, "high")]
    after = apply(st, LAYOFF_BEST)
    assert [e.card for e in after.events if e.kind == "layoff"] == [C("JK1")]
    assert str(after.table[0].meld) == "1C 2C 3C JK1"
    assert str(after.table[1].meld) == "3E 4E 5E"


# -- a brute force over every lay-off sequence ------------------------------------------------


def _left(state: GameState, seat: int, laydown_next: bool) -> int:
    rules = state.rules
    hand = state.hands[seat]
    if not laydown_next:
        return sum(rules.card_points(c) for c in cards_of(hand))
    return min(sum(rules.card_points(c) for c in a.unmatched)
               for a in all_arrangements(hand, rules))


def _brute(state: GameState) -> int:
    """Least points left over every sequence of single lay-offs, ended any time."""
    p = state.to_act
    laydown_next = (Phase.LAYDOWN, p) in state.schedule[1:]
    best = _left(state, p, laydown_next)
    for a in legal_actions(state):
        if isinstance(a, LayOff):
            nxt = apply(state, a)
            if nxt.phase is Phase.LAYOFF and nxt.to_act == p and len(nxt.schedule) == len(
                state.schedule
            ):
                best = min(best, _brute(nxt))
            else:
                best = min(best, _left(nxt, p, laydown_next))
    return best


def _first_layoff_turn(rules: RuleSet, seed: str, skip: int) -> GameState | None:
    """Greedy bots play; the ``skip``-th lay-off turn with a lay-off to choose, if any."""
    source = ShuffleSource(seed, "layoff")
    bots = [GreedyBot() for _ in range(rules.players)]
    state = new_game(rules)
    seen = 0
    for _ in range(3000):
        if state.is_over:
            return None
        if state.is_chance:
            state = apply(state, source.chance(state))
            continue
        legal = legal_actions(state)
        if state.phase is Phase.LAYOFF and len(legal) > 3:
            if seen == skip:
                return state
            seen += 1
        seat = state.to_act
        state = apply(state, bots[seat].choose(observation(state, seat), legal), seat=seat)
    return None


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    players=st.integers(2, 4),
    jokers=st.integers(0, 2),
    seed=st.text("abcdef0123456789", min_size=1, max_size=8),
    skip=st.integers(0, 3),
)
def test_layoff_best_leaves_the_fewest_points(players: int, jokers: int, seed: str,
                                              skip: int) -> None:
    rules = RuleSet(players=players, jokers=jokers)
    state = _first_layoff_turn(rules, seed, skip)
    assume(state is not None)
    assert state is not None
    p = state.to_act
    laydown_next = (Phase.LAYDOWN, p) in state.schedule[1:]
    after = apply(state, LAYOFF_BEST)
    assert _left(after, p, laydown_next) == _brute(state)
