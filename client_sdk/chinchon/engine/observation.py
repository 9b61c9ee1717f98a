"""What one seat may see: the only door through which state reaches a bot.

:func:`observation` copies out of the state exactly what the rules let a seat see:
its own hand, the discard pile, the stock's size, each player's hand size, score and
whether still in, the melds on the table, the hand's public events and the results of
finished hands (where every hand is shown). Never another seat's cards, the stock's
order or the face-down closing discard of a hand still being played.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from .cards import Card
from .game import Event, GameState, HandResult, Phase, TableMeld
from .rules import RuleSet


@dataclass(frozen=True, slots=True)
class PlayerView:
    seat: int
    name: str
    hand_size: int
    score: int
    in_game: bool


@dataclass(frozen=True, slots=True)
class Observation:
    seat: int
    rules: RuleSet
    hand_no: int
    phase: Phase
    to_act: int
    starter: int
    turn: int
    hand: tuple[Card, ...]
    discard_pile: tuple[Card, ...]
    stock_size: int
    players: tuple[PlayerView, ...]
    table: tuple[TableMeld, ...]
    events: tuple[Event, ...]
    #: The card this seat took from the discard pile this turn, if any.
    taken_from_discard: Card | None
    closer: int
    past_hands: tuple[HandResult, ...]

    @property
    def my_turn(self) -> bool:
        return self.to_act == self.seat


def observation(state: GameState, seat: int, names: Sequence[str] | None = None) -> Observation:
    if not 0 <= seat < state.n:
        raise ValueError(f"seat {seat} is not at this table of {state.n}")
    names = names or [f"seat {s}" for s in range(state.n)]
    playing = state.phase not in (Phase.DEAL, Phase.GAME_OVER)
    return Observation(
        seat=seat,
        rules=state.rules,
        hand_no=state.hand_no,
        phase=state.phase,
        to_act=state.to_act,
        starter=state.starter,
        turn=state.turn,
        hand=tuple(state.hand(seat)) if playing else (),
        discard_pile=tuple(state.discard_pile()) if playing else (),
        stock_size=state.stock_size if playing else 0,
        players=tuple(
            PlayerView(
                s,
                names[s],
                state.hands[s].bit_count() if playing else 0,
                state.scores[s],
                state.alive[s],
            )
            for s in range(state.n)
        ),
        table=state.table if playing else (),
        events=tuple(state.hand_events()) if playing else (),
        taken_from_discard=state.taken if state.to_act == seat else None,
        closer=state.closer if playing else -1,
        past_hands=state.results,
    )
