"""Play a whole game between engine bots, producing the final state and its record."""

from __future__ import annotations

from collections.abc import Sequence

from .bots import Bot
from .game import GameState, apply, legal_actions, new_game
from .observation import observation
from .record import RecordBuilder
from .rules import RuleSet
from .shuffle import ShuffleSource


def play_game(
    rules: RuleSet,
    bots: Sequence[Bot],
    seed: bytes | str,
    deal_id: str = "game",
    names: Sequence[str] | None = None,
    game_id: str | None = None,
    relabel: int | None = None,
) -> tuple[GameState, dict[str, object]]:
    """Play to the end; ``bots[s]`` plays seat ``s``. Deterministic in ``seed``/``deal_id``
    (and ``relabel``: the suit relabelling of :class:`ShuffleSource`)."""
    if len(bots) != rules.players:
        raise ValueError(f"{len(bots)} bots for a {rules.players}-player rule set")
    names = list(names or [f"{b.name}-{i}" for i, b in enumerate(bots)])
    source = ShuffleSource(seed, deal_id, relabel)
    rec = RecordBuilder(game_id or deal_id, rules, names)
    state = new_game(rules)
    while not state.is_over:
        if state.is_chance:
            chance = source.chance(state)
            rec.chance(chance)
            state = apply(state, chance)
            continue
        seat = state.to_act
        legal = legal_actions(state)
        action = bots[seat].choose(observation(state, seat, names), legal)
        state = apply(state, action, seat=seat)
        rec.move(seat, action)
    return state, rec.to_json(state)
