"""A table as JSON for the pages: what one seat saw (built from the engine's own
``observation``, the only door to what a seat may see), what a spectator of a game in
progress sees (the same, with no hand at all), or every card (finished games only)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from chinchon.engine import GameState, Observation, TableMeld, observation
from chinchon.engine.game import Event


def _melds(table: Sequence[TableMeld]) -> list[dict[str, Any]]:
    return [{"owner": t.owner, "kind": t.meld.kind.value, "cards": [str(c) for c in t.meld.cards]}
            for t in table]


def _events(events: Sequence[Event]) -> list[dict[str, Any]]:
    return [{"kind": e.kind, "seat": e.seat, "card": str(e.card) if e.card is not None else "",
             "detail": e.detail} for e in events]


def _common(obs: Observation) -> dict[str, Any]:
    return {
        "hand_no": obs.hand_no,
        "phase": obs.phase.name.lower(),
        "to_act": obs.to_act,
        "turn": obs.turn,
        "discard_pile": [str(c) for c in obs.discard_pile],
        "stock_size": obs.stock_size,
        "table": _melds(obs.table),
        "events": _events(obs.events),
        "score_limit": obs.rules.score_limit,
        "hands_played": len(obs.past_hands),
    }


def seat_view(state: GameState, seat: int, names: Sequence[str]) -> dict[str, Any]:
    """What ``seat`` saw at ``state``: its own hand, nobody else's."""
    obs = observation(state, seat, names)
    out = _common(obs)
    out["view"] = seat
    out["seats"] = [
        {"seat": p.seat, "name": p.name, "hand_size": p.hand_size, "score": p.score,
         "in_game": p.in_game, "hand": [str(c) for c in obs.hand] if p.seat == seat else None}
        for p in obs.players
    ]
    out["taken_from_discard"] = str(obs.taken_from_discard) if obs.taken_from_discard is not None else ""
    return out


def spectator_view(state: GameState, names: Sequence[str]) -> dict[str, Any]:
    """What anyone may see of a game in progress: no hand, no stock order, nothing a
    seat alone knows (built from seat 0's observation with its hand left out)."""
    obs = observation(state, 0, names)
    out = _common(obs)
    out["view"] = "spectator"
    out["seats"] = [
        {"seat": p.seat, "name": p.name, "hand_size": p.hand_size, "score": p.score,
         "in_game": p.in_game, "hand": None}
        for p in obs.players
    ]
    return out


def full_view(state: GameState, names: Sequence[str]) -> dict[str, Any]:
    """Every card (a finished game's replay): all hands and the stock, in order."""
    out = seat_view(state, 0, names)
    out["view"] = "all"
    for s in out["seats"]:
        s["hand"] = [str(c) for c in state.hand(s["seat"])] if state.phase.name not in (
            "DEAL", "GAME_OVER") else []
    out["stock"] = [str(c) for c in state.stock[state.stock_top:]]
    out["taken_from_discard"] = str(state.taken) if state.taken is not None else ""
    out["close_discard"] = str(state.close_discard) if state.close_discard is not None else ""
    return out
