"""The default policy: what the referee plays for a bot that timed out or used up its
retries on illegal actions.

Documented for bot authors (docs/protocol.md): draw from the stock; discard the
highest-point unmatched card (never closing); lay off the best; lay down the best.
It reads the full state (the referee's view), yet decides only from the acting seat's
hand and the phase: what that seat itself could see.
"""

from __future__ import annotations

from collections.abc import Sequence

from .actions import DRAW_STOCK, LAYDOWN_BEST, LAYOFF_BEST, Action, Discard
from .game import GameState, Phase
from .solver import solver_for


def default_action(state: GameState, legal: Sequence[Action]) -> Action:
    """The action played for the seat to act when it gives none (see the module doc)."""
    if state.phase is Phase.DRAW:
        return DRAW_STOCK
    if state.phase is Phase.DISCARD:
        rules = state.rules
        hand = state.hands[state.to_act]
        allowed = {a.card for a in legal if isinstance(a, Discard)}
        arr = solver_for(rules).best_arrangement(hand)
        loose = [c for c in arr.unmatched if c in allowed] or sorted(allowed)
        return Discard(max(loose, key=lambda c: (rules.card_points(c), c)))
    if state.phase is Phase.LAYOFF:
        return LAYOFF_BEST
    if state.phase is Phase.LAYDOWN:
        return LAYDOWN_BEST
    raise ValueError(f"no default action in phase {state.phase.name}")
