"""The default policy (chinchon.engine.policies): what the referee plays for a silent bot."""

from __future__ import annotations

import random

from chinchon.engine import (
    DRAW_STOCK,
    Close,
    Discard,
    RuleSet,
    ShuffleSource,
    apply,
    default_action,
    legal_actions,
    new_game,
)
from chinchon.engine.game import Phase
from chinchon.engine.policies import default_action as from_policies
from hypothesis import given, settings
from hypothesis import strategies as st


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**32), players=st.integers(2, 4), jokers=st.integers(0, 2),
       steps=st.integers(0, 400))
def test_the_default_action_is_always_legal_and_never_closes(
    seed: int, players: int, jokers: int, steps: int,
) -> None:
    """Along random games, the default is legal in every decision state, draws from the
    stock in the draw phase, and discards (never closes) in the discard phase."""
    rng = random.Random(seed)
    rules = RuleSet(players=players, jokers=jokers)
    source = ShuffleSource(seed.to_bytes(8, "big"), "policy")
    state = new_game(rules)
    for _ in range(steps):
        if state.result is not None:
            break
        if state.to_act < 0:
            state = apply(state, source.chance(state))
            continue
        legal = legal_actions(state)
        chosen = default_action(state, legal)
        assert chosen in legal
        if state.phase is Phase.DRAW:
            assert chosen == DRAW_STOCK
        if state.phase is Phase.DISCARD:
            assert isinstance(chosen, Discard) and not isinstance(chosen, Close)
        state = apply(state, rng.choice(legal))


def test_the_engine_exports_the_policy_it_defines() -> None:
    assert default_action is from_policies
