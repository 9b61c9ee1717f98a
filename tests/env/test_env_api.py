"""The training environment against PettingZoo's own API and seed tests, its action
space against the engine's legal actions at every step of random games, and its seeds."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest
from chinchon.engine import (
    LAYDOWN_BEST,
    LAYOFF_BEST,
    Close,
    GameState,
    LayDown,
    LayOff,
    RandomBot,
    RuleSet,
    legal_actions,
)
from chinchon.env import N_ACTIONS, action_of, env, index_of, legal_indices, raw_env
from chinchon.env.actions import ACTIONS, CLOSE_BASE, DISCARD_BASE, LAYDOWN_BEST_INDEX
from hypothesis import given, settings
from hypothesis import strategies as st
from pettingzoo.test import api_test, seed_test

RULE_SETS = [
    RuleSet(),
    RuleSet(players=3, deck=48, jokers=2),
    RuleSet(players=4, deck=48, jokers=1, wild_cards=("1O",), jokers_per_meld=1),
    RuleSet(open_discard=False, retake_discard=True, close_first_round=False),
    RuleSet(jokers=2, close_max_unmatched=2, close_max_points=9, score_limit=50),
    RuleSet(players=6, deck=48, jokers=2, score_limit=60),
]


def _random_game(e: Any, seed: int, on_step: Any = None) -> int:
    """Play one game of ``e`` with uniformly random masked actions; the steps taken."""
    rng = np.random.default_rng(seed)
    e.reset(seed=seed)
    steps = 0
    for agent in e.agent_iter():
        obs, _reward, terminated, truncated, _info = e.last()
        if terminated or truncated:
            e.step(None)
            continue
        if on_step is not None:
            on_step(e, agent, obs)
        e.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))
        steps += 1
    return steps


@pytest.mark.parametrize("rules", RULE_SETS[:3], ids=["default", "3p-jokers", "4p-wild"])
def test_pettingzoos_api_test_passes(rules: RuleSet) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # its advice to use a Box observation, not ours to take
        api_test(env(rules=rules), num_cycles=400)
        api_test(raw_env(rules=rules), num_cycles=400)


def test_pettingzoos_seed_test_passes() -> None:
    seed_test(lambda: env(), num_cycles=300)
    seed_test(lambda: env(rules=RULE_SETS[1]), num_cycles=300)


def test_a_seed_fixes_the_game_and_the_next_games_and_another_seed_changes_them() -> None:
    def deals(seed: int | None, games: int) -> list[tuple[int, ...]]:
        e = raw_env()
        out = []
        for g in range(games):
            e.reset(seed=seed if g == 0 else None)
            out.append(tuple(e.state_now.hands))
        return out

    assert deals(7, 3) == deals(7, 3)
    assert deals(7, 3) != deals(8, 3)
    assert len(set(deals(7, 3))) == 3  # later resets go on with the seeded generator
    assert deals(None, 1) != deals(None, 1)  # no seed: fresh entropy


def test_the_action_codec_round_trips() -> None:
    assert len(ACTIONS) == N_ACTIONS == 105
    for i in range(N_ACTIONS):
        assert index_of(action_of(i)) == i
        assert index_of(action_of(np.int64(i))) == i  # type: ignore[arg-type]
    for bad in (-1, N_ACTIONS, True):
        with pytest.raises(ValueError, match=r"an action index is 0\.\.104"):
            action_of(bad)
    assert index_of(Close(ACTIONS[DISCARD_BASE + 3].card, ((),))) is None  # type: ignore[attr-defined]
    assert index_of(LayDown(((),))) is None
    assert index_of(LayOff(ACTIONS[DISCARD_BASE].card, 0)) is None  # type: ignore[attr-defined]


def _covered(legal: list[Any]) -> None:
    """Every legal action outside the space has its macro in the space, legal too."""
    for a in legal:
        if index_of(a) is not None:
            continue
        if isinstance(a, Close):
            assert Close(a.card, None) in legal, a
        elif isinstance(a, LayOff):
            assert LAYOFF_BEST in legal, a
        else:
            assert isinstance(a, LayDown) and LAYDOWN_BEST in legal, a


@settings(max_examples=12, deadline=None)
@given(seed=st.integers(0, 2**32), rules=st.sampled_from(RULE_SETS))
def test_the_mask_is_the_engines_legal_actions_at_every_step(seed: int, rules: RuleSet) -> None:
    seen: set[int] = set()

    def check(e: Any, agent: str, obs: dict[str, Any]) -> None:
        state: GameState = e.state_now
        assert e.names[state.to_act] == agent
        legal = legal_actions(state)
        mask = obs["action_mask"]
        assert mask.dtype == np.int8 and mask.shape == (N_ACTIONS,)
        assert list(np.flatnonzero(mask)) == legal_indices(legal)
        assert mask.any()
        for i in np.flatnonzero(mask):
            assert action_of(int(i)) in legal
        _covered(legal)
        seen.update(int(i) for i in np.flatnonzero(mask))
        for other in e.agents:  # only the agent to act has a mask
            if other != agent:
                assert not e.observe(other)["action_mask"].any()

    e = raw_env(rules=rules)
    assert _random_game(e, seed, check) > 0
    assert e.state_now.is_over
    assert 0 in seen and seen & set(range(DISCARD_BASE, CLOSE_BASE))  # draws, discards


def test_a_game_covers_closes_and_lay_downs() -> None:
    """Over random games every kind of index is offered: draws, discards, closes, pass,
    layoff best, laydown best (a random hand seldom holds melds to lay down: a few
    games)."""
    kinds: set[str] = set()

    def note(e: Any, agent: str, obs: dict[str, Any]) -> None:
        for i in np.flatnonzero(obs["action_mask"]):
            kinds.add(type(action_of(int(i))).__name__)

    want = {"DrawStock", "DrawDiscard", "Discard", "Close", "Pass", "LayOffBest", "LayDown"}
    for seed in range(40):
        _random_game(raw_env(), seed, note)
        if kinds == want:
            break
    assert kinds == {"DrawStock", "DrawDiscard", "Discard", "Close", "Pass", "LayOffBest", "LayDown"}
    assert action_of(LAYDOWN_BEST_INDEX) == LAYDOWN_BEST and action_of(CLOSE_BASE).melds is None  # type: ignore[union-attr]


def test_the_rewards_are_the_games_result() -> None:
    for rules in (RULE_SETS[0], RULE_SETS[1]):
        e = raw_env(rules=rules)
        totals: dict[str, float] = {}
        rng = np.random.default_rng(3)
        e.reset(seed=3)
        for agent in e.agent_iter():
            obs, reward, terminated, truncated, _ = e.last()
            totals[agent] = totals.get(agent, 0.0) + reward
            e.step(None if terminated or truncated else
                   int(rng.choice(np.flatnonzero(obs["action_mask"]))))
        result = e.state_now.result
        assert result is not None and not e.agents
        for s, name in enumerate(e.names):
            want = -1.0 if s not in result.winners else 1.0 if len(result.winners) == 1 else 0.0
            assert totals[name] == want, (name, result)


def test_opponents_play_their_seats_inside_the_environment() -> None:
    e = raw_env(opponents={1: RandomBot(5)})
    assert e.possible_agents == ["player_0"]
    steps = _random_game(e, 11)
    result = e.state_now.result
    assert result is not None and steps > 0
    assert e.rewards == {} and not e.agents
    with pytest.raises(ValueError, match="every seat is an opponent"):
        raw_env(opponents={0: RandomBot(), 1: RandomBot()})
    with pytest.raises(ValueError, match=r"keyed by seat 0\.\.1"):
        raw_env(opponents={2: RandomBot()})


def test_an_illegal_action_is_refused_and_changes_nothing() -> None:
    e = raw_env()
    e.reset(seed=1)
    before = e.state_now
    agent = e.agent_selection
    illegal = int(np.flatnonzero(e.observe(agent)["action_mask"] == 0)[0])
    with pytest.raises(ValueError, match="not legal"):
        e.step(illegal)
    assert e.state_now is before and e.agent_selection == agent
    # Wrapped as PettingZoo's classic games are: the game ends, -1 for that agent.
    w = env()
    w.reset(seed=1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        w.step(illegal)
    assert all(w.terminations.values())
    assert w.rewards[agent] == -1


def test_rendering_is_text() -> None:
    e = raw_env(render_mode="ansi")
    e.reset(seed=2)
    text = e.render()
    assert isinstance(text, str)
    assert "player_0" in text and "player_1" in text and "to act" in text
    for seat in range(2):
        assert " ".join(str(c) for c in e.state_now.hand(seat)) in text
    _random_game(e, 2)
    over = e.render()
    assert over is not None and over.startswith("game over")
    with pytest.raises(ValueError, match="render_mode"):
        raw_env(render_mode="rgb_array")


def test_rendering_for_a_person_prints(capsys: pytest.CaptureFixture[str]) -> None:
    e = raw_env(render_mode="human")
    e.reset(seed=2)
    assert e.render() is None
    assert "to act" in capsys.readouterr().out
