"""What one seat may see: the only door through which state reaches a bot.

:func:`observation` copies out of the state exactly what the rules let a seat see:
its own hand, the discard pile, the stock's size, each player's hand size, score and
whether still in, the melds on the table, the hand's public events and the results of
finished hands (where every hand is shown). Never another seat's cards, the stock's
order or the face-down closing discard of a hand still being played.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

from .cards import Card, cards_of
from .game import Event, GameState, HandResult, Phase, TableMeld
from .rules import RuleSet


# Named tuples rather than frozen dataclasses: as immutable, and built several times
# faster (a frozen dataclass sets each field through object.__setattr__), which matters
# because the referee builds an observation for every decision of every game.
class PlayerView(NamedTuple):
    seat: int
    name: str
    hand_size: int
    score: int
    in_game: bool


class Observation(NamedTuple):
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


_NOT_PLAYING = frozenset((Phase.DEAL, Phase.GAME_OVER))
_new = tuple.__new__


def observation(state: GameState, seat: int, names: Sequence[str] | None = None) -> Observation:
    n = state.n
    if not 0 <= seat < n:
        raise ValueError(f"seat {seat} is not at this table of {n}")
    if not names:
        names = [f"seat {s}" for s in range(n)]
    hands, scores, alive = state.hands, state.scores, state.alive
    if state.phase in _NOT_PLAYING:
        return Observation(
            seat=seat, rules=state.rules, hand_no=state.hand_no, phase=state.phase,
            to_act=state.to_act, starter=state.starter, turn=state.turn, hand=(),
            discard_pile=(), stock_size=0,
            players=tuple(PlayerView(s, names[s], 0, scores[s], alive[s]) for s in range(n)),
            table=(), events=(), taken_from_discard=None, closer=-1, past_hands=state.results,
        )
    # Built positionally (field order above): this runs for every decision of every game.
    players = tuple([
        _new(PlayerView, (s, names[s], hands[s].bit_count(), scores[s], alive[s]))
        for s in range(n)
    ])
    return _new(Observation, (
        seat,
        state.rules,
        state.hand_no,
        state.phase,
        state.to_act,
        state.starter,
        state.turn,
        tuple(cards_of(hands[seat])),
        state.pile,
        len(state.stock) - state.stock_top,
        players,
        state.table,
        state.events,
        state.taken if state.to_act == seat else None,
        state.closer,
        state.results,
    ))
