"""The live page's last moves name the cards each move showed everyone (web/live.py's
``shown_by_move``), as a property over whole games between engine bots: a discard its
card, a take from the pile the pile's top, a lay-down, lay-off or close the cards it
put on the table, never a close's face-down discard; and every card named is public at that
moment (the pile, the table, this hand's public events)."""

from __future__ import annotations

from typing import Any

from chinchon.engine import (
    Close,
    Discard,
    DrawDiscard,
    DrawStock,
    GameState,
    GreedyBot,
    LayDown,
    LayOff,
    Pass,
    RandomBot,
    RuleSet,
    action_from_json,
    new_game,
    play_game,
)
from chinchon_referee.web.live import apply_step, shown_by_move
from hypothesis import example, given, settings
from hypothesis import strategies as st


def public_now(state: GameState) -> set[str]:
    out = {str(c) for c in state.pile[:state.pile_len]}
    out |= {str(c) for t in state.table for c in t.meld.cards}
    return out | {str(e.card) for e in state.events if e.card is not None}


@settings(max_examples=12, deadline=None)
@given(seed=st.text(min_size=1, max_size=8), jokers=st.sampled_from([0, 2]),
       random_first=st.booleans())
@example(seed="\u00d9", jokers=0, random_first=True)  # a lay-down of no melds
def test_a_move_names_only_the_cards_it_showed_everyone(seed: str, jokers: int,
                                                         random_first: bool) -> None:
    rules = RuleSet(score_limit=50, jokers=jokers)
    bots: list[Any] = [RandomBot(seed), GreedyBot()] if random_first else [GreedyBot(), GreedyBot()]
    _, record = play_game(rules, bots, seed)
    state = new_game(rules)
    named = 0
    for step in record["actions"]:  # type: ignore[attr-defined]
        before, state = state, apply_step(state, step)
        if "move" not in step:
            continue
        shown = shown_by_move(before, state)
        action = action_from_json(step["move"]["action"])
        assert set(shown) <= public_now(state), (action, shown)
        if state.hand_no != before.hand_no:
            assert shown == ()  # the hand ended: its result shows it
        elif isinstance(action, Discard):
            assert shown == (str(action.card),)
        elif isinstance(action, DrawDiscard):
            assert shown == (str(before.pile[before.pile_len - 1]),)
        elif isinstance(action, Close):
            # Its melds go on the table, face up; its discard is face down.
            assert str(action.card) not in shown
            assert set(shown) <= {str(c) for t in state.table for c in t.meld.cards}
        elif isinstance(action, (DrawStock, Pass)):
            assert shown == (), action
        elif isinstance(action, (LayDown, LayOff)):
            # Exactly the cards it put on the table (none for a lay-down of no melds,
            # which a player may choose: CI saw RandomBot do so).
            laid = ({str(c) for t in state.table for c in t.meld.cards}
                    - {str(c) for t in before.table for c in t.meld.cards})
            assert set(shown) == laid and len(shown) == len(laid), (action, shown)
        named += len(shown)
    assert named > 0
