"""The default action the referee plays for a bot that timed out or used up its retries.

Documented for bot authors (docs/protocol.md): draw from the stock; discard the
highest-point unmatched card (never closing); lay off the best; lay down the best.
"""

from __future__ import annotations

from chinchon.engine import (
    DRAW_STOCK,
    LAYDOWN_BEST,
    LAYOFF_BEST,
    Action,
    Discard,
    GameState,
    Phase,
    solver_for,
)


def default_action(state: GameState, legal: list[Action]) -> Action:
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
