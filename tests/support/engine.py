"""Shared helpers for the engine tests (no tests here).

Hand-written positions are built the honest way: a ``Deal`` whose deck order puts the
chosen cards in the chosen hands (one card at a time to each player still in, from the
starter), then the face-up card, then the stock (first card on top); the cards not
named follow at the bottom of the stock in numbering order.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from typing import Any

from chinchon.engine import (
    Card,
    Deal,
    GameState,
    RuleSet,
    apply,
    deck_cards,
    new_game,
    parse_card,
    parse_cards,
)
from chinchon.engine.game import Phase
from hypothesis import strategies as st


def crafted(state: GameState, **fields: Any) -> GameState:
    """A copy of ``state`` with ``fields`` set by hand: a position legal play cannot
    reach, for a rule's branch that only such a position takes (``state`` is unchanged)."""
    new = copy.copy(state)
    for name, value in fields.items():
        assert hasattr(state, name), f"GameState has no field {name!r}"
        setattr(new, name, value)
    return new


def C(text: str) -> Card:
    return parse_card(text)


def CS(text: str) -> list[Card]:
    return parse_cards(text)


def deal_order(
    rules: RuleSet,
    hands: Mapping[int, str | Sequence[Card]],
    up: str,
    stock: str = "",
    starter: int = 0,
    alive: Sequence[bool] | None = None,
) -> Deal:
    """A Deal giving ``hands[seat]`` (7 cards) to each seat still in, ``up`` face up and
    ``stock`` on top of the stock."""
    alive = list(alive) if alive is not None else [True] * rules.players
    order = []
    s = starter
    for _ in range(rules.players):
        if alive[s]:
            order.append(s)
        s = (s + 1) % rules.players
    assert order[0] == starter
    cards = {seat: CS(h) if isinstance(h, str) else list(h) for seat, h in hands.items()}
    assert sorted(cards) == sorted(order), "give a hand for exactly the seats still in"
    for seat, h in cards.items():
        assert len(h) == 7, f"seat {seat}: {len(h)} cards"
    deck: list[Card] = []
    for i in range(7):
        for seat in order:
            deck.append(cards[seat][i])
    deck.append(C(up))
    deck += CS(stock)
    named = set(deck)
    assert len(named) == len(deck), "a card is named twice"
    full = deck_cards(rules.deck, rules.jokers)
    assert named <= set(full), "a card is not in this deck"
    deck += [c for c in full if c not in named]
    return Deal(tuple(deck), starter)


def position(
    rules: RuleSet,
    hands: Mapping[int, str | Sequence[Card]],
    up: str,
    stock: str = "",
    starter: int = 0,
) -> GameState:
    """A fresh game dealt with these hands; the starter is to draw."""
    st = apply(new_game(rules), deal_order(rules, hands, up, stock, starter))
    assert st.phase is Phase.DRAW and st.to_act == starter
    return st


def hand_text(state: GameState, seat: int) -> set[str]:
    return {str(c) for c in state.hand(seat)}


def snapshot(state: GameState) -> dict[str, object]:
    """Every field of a state (for 'unchanged' checks)."""
    return dict(state.__dict__)


@st.composite
def rule_sets(draw: st.DrawFn, short: bool = True, house: bool = True) -> RuleSet:
    deck = draw(st.sampled_from([40, 48]))
    jokers = draw(st.integers(0, 2))
    players = draw(st.integers(2, (deck + jokers - 2) // 7))
    figures = ["8-9-10", "10-11-12", "10-10-10"] if deck == 40 else ["10-11-12", "10-10-10"]
    extra = draw(house_rules(jokers)) if house else {}
    return RuleSet(
        players=players,
        deck=deck,
        jokers=jokers,
        figure_points=draw(st.sampled_from(figures)),
        joker_points=draw(st.sampled_from([25, 0, 5])),
        open_discard=draw(st.booleans()),
        retake_discard=draw(st.booleans()),
        close_max_unmatched=draw(st.integers(0, 3)),
        close_max_points=draw(st.sampled_from([0, 3, 5, 10])),
        # Long enough to run the stock out (and reshuffle) now and then, short enough
        # to keep a game cheap.
        max_turns_per_hand=draw(st.integers(max(players, 8), 90 if short else 200)),
        score_limit=draw(st.integers(8, 45 if short else 100)),
        **extra,  # type: ignore[arg-type]
    )


@st.composite
def house_rules(draw: st.DrawFn, jokers: int, fixed: dict[str, object] | None = None
                ) -> dict[str, object]:
    """House-rule options for a deck with ``jokers`` jokers: those of ``fixed``, or drawn
    (at most 2 wild cards with the jokers)."""
    if fixed:
        return dict(fixed)
    wild = draw(st.sampled_from([(), (), ("1O",), ("1O", "1C"), ("12B",)]))
    return {
        "wild_cards": wild[: 2 - jokers],
        "jokers_per_meld": draw(st.sampled_from([1, 2, 2])),
        "close_first_round": draw(st.booleans()),
    }
