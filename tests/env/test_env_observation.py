"""The observation array: built from the seat's engine observation alone (states that
differ only in what the seat cannot see give the same array), laid out as documented;
and the core SDK that never needs numpy."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
from chinchon.engine import (
    CARDS,
    EventKind,
    GameState,
    Phase,
    RuleSet,
    legal_actions,
    mask_of,
    observation,
)
from chinchon.env import Layout, encode, observe, raw_env
from hypothesis import given, settings
from hypothesis import strategies as st

RULES = st.sampled_from([RuleSet(), RuleSet(players=3, deck=48, jokers=2),
                         RuleSet(players=4, deck=48, wild_cards=("1O",))])


def _position(rules: RuleSet, seed: int, steps: int) -> GameState:
    """The state after ``steps`` random masked actions of a seeded game (or its end)."""
    e = raw_env(rules=rules)
    e.reset(seed=seed)
    rng = np.random.default_rng(seed)
    for _ in range(steps):
        if e.state_now.is_over:
            break
        mask = e.observe(e.agent_selection)["action_mask"]
        e.step(int(rng.choice(np.flatnonzero(mask))))
    state: GameState = e.state_now
    return state


def _hidden_swap(state: GameState, seat: int) -> GameState | None:
    """``state`` with one card of another seat's hand swapped with one of the stock: a
    card ``seat`` has not seen that seat take from the pile. None if there is none."""
    known = {e.card for e in state.events if e.kind is EventKind.DRAW_DISCARD}
    stock = list(state.stock[state.stock_top:])
    for other in range(state.n):
        if other == seat or not stock:
            continue
        hidden = [c for c in state.hand(other) if c not in known]
        if hidden:
            x, y = hidden[0], stock[0]
            hands = list(state.hands)
            hands[other] = hands[other] & ~(1 << x) | 1 << y
            new_stock = (*state.stock[:state.stock_top], CARDS[x], *stock[1:])
            return state._evolve(hands=tuple(hands), stock=new_stock)
    return None


@settings(max_examples=25, deadline=None)
@given(rules=RULES, seed=st.integers(0, 2**32), steps=st.integers(0, 120))
def test_a_seats_array_depends_only_on_what_it_may_see(rules: RuleSet, seed: int, steps: int) -> None:
    state = _position(rules, seed, steps)
    if state.phase not in (Phase.DRAW, Phase.DISCARD):
        return
    for seat in range(state.n):
        twin = _hidden_swap(state, seat)
        if twin is None:
            continue
        assert twin.hands != state.hands and twin.stock != state.stock
        mine = encode(observation(state, seat))
        assert np.array_equal(mine, encode(observation(twin, seat)))
        # ... while the seat whose hand changed sees it.
        changed = next(s for s in range(state.n) if twin.hands[s] != state.hands[s])
        assert not np.array_equal(encode(observation(state, changed)),
                                  encode(observation(twin, changed)))


def test_the_environment_observes_through_observation_only() -> None:
    """What an agent gets is ``encode(observation(state, seat))`` and the mask of the legal
    actions: the same dict :func:`observe` makes from a bot's ``(obs, legal)``."""
    e = raw_env(rules=RuleSet(players=3))
    e.reset(seed=4)
    rng = np.random.default_rng(4)
    for _ in range(60):
        agent = e.agent_selection
        got = e.observe(agent)
        state = e.state_now
        seat = e.names.index(agent)
        want = observe(observation(state, seat, e.names), legal_actions(state))
        assert np.array_equal(got["observation"], want["observation"])
        assert np.array_equal(got["action_mask"], want["action_mask"])
        assert got["observation"].dtype == np.float32
        e.step(int(rng.choice(np.flatnonzero(got["action_mask"]))))


def test_the_layout_names_each_part() -> None:
    rules = RuleSet(players=3, deck=48, jokers=1)
    state = _position(rules, 9, 40)
    seat = state.to_act
    obs = observation(state, seat)
    x = encode(obs)
    layout = Layout(3)
    assert x.shape == (layout.size,) and layout.size == 50 * 12 + 4 + 1 + 5 * 3 + 2
    assert set(np.flatnonzero(x[layout.plane("hand")])) == set(obs.hand)
    assert set(np.flatnonzero(x[layout.plane("deck")])) == set(range(48)) | {48}
    assert set(np.flatnonzero(x[layout.plane("pile")])) == set(obs.discard_pile)
    assert set(np.flatnonzero(x[layout.plane("wild")])) == {48}
    assert x[layout.plane("points")][CARDS.index(CARDS[11])] == 12 / 100  # 12O: 12 points
    assert x[layout.scalar(f"phase_{obs.phase.name.lower()}")] == 1
    assert x[layout.scalar("hand_size_0")] == len(obs.hand) / 8
    assert x[layout.scalar("stock")] == obs.stock_size / 49
    assert np.all(x >= -1) and np.all(x <= 1)
    # held_1: what the next seat took from the pile and still holds, from the events.
    nxt = (seat + 1) % 3
    taken = mask_of(e.card for e in obs.events if e.kind is EventKind.DRAW_DISCARD
                    and e.seat == nxt and e.card is not None)
    held = set(np.flatnonzero(x[layout.plane("held_1")]))
    assert held <= {c for c in range(50) if taken >> c & 1}
    assert held == held & set(state.hand(nxt))


def test_the_core_sdk_imports_without_numpy_and_the_env_names_its_extra() -> None:
    code = (
        "import sys\n"
        "sys.modules['numpy'] = None\n"  # as if numpy were not installed
        "import chinchon.engine, chinchon.sdk, chinchon.strategies, chinchon.wire\n"
        "import chinchon.sdk.__main__\n"
        "try:\n"
        "    import chinchon.env\n"
        "except ImportError as e:\n"
        "    print(e)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert "chinchon.env needs the SDK's 'env' extra" in out.stdout
    assert "pip install 'chinchon-sdk[env]'" in out.stdout


