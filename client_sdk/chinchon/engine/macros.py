"""The concrete actions behind a macro: what ``close … best``, ``laydown best`` and
``layoff best`` did, read from the state before and after it was applied.

The referee writes them into the record (``PlayerMove.resolved``) and the replay
viewer shows them, so that a reader sees which cards went where without running the
solver again. Pure: two states in, actions out.
"""

from __future__ import annotations

from .actions import Action, Close, LayDown, LayOff, LayOffBest
from .cards import Card
from .errors import InvalidMeld
from .game import EventKind, GameState
from .melds import End, Meld, MeldKind, extend_meld


def is_macro(action: Action) -> bool:
    """Whether ``action`` leaves its cards to the engine (a ``best`` of some kind)."""
    return (isinstance(action, LayOffBest)
            or (isinstance(action, (Close, LayDown)) and action.melds is None))


def resolve(before: GameState, after: GameState, seat: int, action: Action) -> tuple[Action, ...] | None:
    """The concrete actions ``action`` of ``seat`` stood for, going from ``before`` to
    ``after`` (``after = apply(before, action, seat)``); None for an action that is not a
    macro."""
    if isinstance(action, Close) and action.melds is None:
        melds = tuple(t.meld.cards for t in after.table if t.owner == seat)
        return (Close(action.card, melds),)
    if isinstance(action, LayDown) and action.melds is None:
        return (LayDown(tuple(t.meld.cards for t in after.table[len(before.table):])),)
    if isinstance(action, LayOffBest):
        return tuple(_layoffs(before, after, seat))
    return None


def _layoffs(before: GameState, after: GameState, seat: int) -> list[LayOff]:
    """The lay-offs of ``seat`` between the two states, in order, each with the end a
    wild card took on a run (found by laying them off again onto ``before``'s table)."""
    moves = [(e.card, int(e.detail)) for e in after.events[len(before.events):]
             if e.kind is EventKind.LAYOFF and e.seat == seat and e.card is not None]
    table = [t.meld for t in before.table]
    want = [t.meld.cards for t in after.table]
    found = _place(moves, table, want, before)
    if found is None:  # not reachable for states apply made; named without ends then
        return [LayOff(c, m) for c, m in moves]
    return found


def _place(moves: list[tuple[Card, int]], table: list[Meld], want: list[tuple[Card, ...]],
           state: GameState) -> list[LayOff] | None:
    if not moves:
        return [] if [m.cards for m in table] == want else None
    (card, i), rest = moves[0], moves[1:]
    meld = table[i]
    ends: tuple[End | None, ...] = (None,)
    if state.rules.is_wild(card) and meld.kind is MeldKind.RUN:
        ends = (End.LOW, End.HIGH)
    for at in ends:
        try:
            grown = extend_meld(meld, card, at, state.rules)
        except InvalidMeld:
            continue
        tail = _place(rest, [*table[:i], grown, *table[i + 1:]], want, state)
        if tail is not None:
            return [LayOff(card, i, at if len(ends) > 1 else None), *tail]
    return None


__all__ = ["is_macro", "resolve"]
