"""The environment's text rendering: the whole table as a spectator of the full view sees
it (every hand shown), for a person watching training, never for a policy's input."""

from __future__ import annotations

from collections.abc import Sequence

from chinchon.engine import GameState, describe_hand_result, format_cards


def render_text(state: GameState, names: Sequence[str]) -> str:
    """A few lines: the phase and whose turn, the stock and the pile, the table, each
    seat's score and cards; the last hand's result; the game's result once over."""
    lines = []
    if state.result is not None:
        winners = ", ".join(names[s] for s in state.result.winners) or "nobody"
        lines.append(f"game over after {state.result.hands_played} hands "
                     f"({state.result.end.name.lower()}): won by {winners}")
    else:
        who = names[state.to_act] if state.to_act >= 0 else "chance"
        lines.append(f"hand {state.hand_no}, turn {state.turn}: {state.phase.name.lower()}, "
                     f"{who} to act")
        lines.append(f"stock {state.stock_size} cards; discard pile (top last): "
                     f"{format_cards(state.pile[-8:]) or '-'}")
        for i, tm in enumerate(state.table):
            lines.append(f"table [{i}] {names[tm.owner]}: {format_cards(tm.meld.cards)}")
    for s, name in enumerate(names):
        out = "" if state.alive[s] else " (out)"
        cards = format_cards(state.hand(s)) if state.result is None else ""
        lines.append(f"{name:>10} {state.scores[s]:4d}{out}: {cards}".rstrip())
    if state.results:
        lines.append(describe_hand_result(state.results[-1], names))
    return "\n".join(lines) + "\n"


__all__ = ["render_text"]
