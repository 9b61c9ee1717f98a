"""The rules engine as a PettingZoo AEC environment (Farama's multi-agent API)::

    from chinchon.env import env
    from chinchon.engine import RuleSet

    e = env(rules=RuleSet(players=2), render_mode="ansi")
    e.reset(seed=42)
    for agent in e.agent_iter():
        obs, reward, terminated, truncated, info = e.last()
        action = None if terminated or truncated else int(
            e.action_space(agent).sample(obs["action_mask"]))
        e.step(action)

One episode is one whole game (hands until the score limit). Agents are ``player_0`` …
(one per seat), or only the seats that ``opponents`` leaves to learners: the seats it
maps are played inside :meth:`step` by engine bots (``choose(obs, legal)``, exactly as
the referee runs a bot). Chance (deals, reshuffles) comes from a
:class:`~chinchon.engine.ShuffleSource` seeded by ``reset(seed=...)``.

Observations are ``{"observation": float32 array, "action_mask": int8 array}``: the array
is :func:`chinchon.env.encode.encode` of the seat's engine observation, the mask marks the
legal actions of the fixed space of :mod:`chinchon.env.actions` (all zeros for an agent
that is not to act). Rewards come at the game's end: +1 to a sole winner, -1 to every
seat that did not win, 0 to each of the seats sharing a draw. Nothing is truncated: the
engine ends every game in bounded time.

:func:`raw_env` is the environment itself (an illegal action raises ValueError and
changes nothing); :func:`env` wraps it as PettingZoo's classic environments are wrapped
(an illegal action ends the game with -1 for its agent; actions out of the space and
calls out of order are refused).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
from gymnasium import logger, spaces
from gymnasium.utils import seeding
from pettingzoo import AECEnv
from pettingzoo.utils import wrappers

from chinchon.engine import (
    DEFAULT_RULES,
    Action,
    Bot,
    GameState,
    RuleSet,
    ShuffleSource,
    apply,
    legal_actions,
    new_game,
    observation,
)

from .actions import N_ACTIONS, action_of, legal_indices
from .encode import Layout, encode
from .render import render_text

RENDER_MODES = ("ansi", "human")


class ChinchonEnv(AECEnv):  # type: ignore[misc]  # pettingzoo ships no type information
    """Chinchón for 2 to 6 seats under any :class:`RuleSet` (see the module's docstring)."""

    metadata: dict[str, Any] = {  # noqa: RUF012  (PettingZoo reads it from the class)
        "render_modes": list(RENDER_MODES),
        "name": "chinchon_v0",
        "is_parallelizable": False,
    }

    def __init__(self, rules: RuleSet | None = None, render_mode: str | None = None,
                 opponents: Mapping[int, Bot] | None = None) -> None:
        super().__init__()
        self.rules = rules if rules is not None else DEFAULT_RULES
        if not isinstance(self.rules, RuleSet):
            raise TypeError(f"rules must be a RuleSet, got {type(self.rules).__name__}")
        if render_mode is not None and render_mode not in RENDER_MODES:
            raise ValueError(f"render_mode is one of {', '.join(RENDER_MODES)} or None, "
                             f"got {str(render_mode)[:20]!r}")
        self.render_mode = render_mode
        n = self.rules.players
        self.opponents: dict[int, Bot] = dict(opponents or {})
        bad = [s for s in self.opponents if not (isinstance(s, int) and 0 <= s < n)]
        if bad:
            raise ValueError(f"opponents are keyed by seat 0..{n - 1}, got {str(bad[0])[:20]!r}")
        self.names = [f"player_{s}" for s in range(n)]
        self.possible_agents = [a for s, a in enumerate(self.names) if s not in self.opponents]
        if not self.possible_agents:
            raise ValueError("every seat is an opponent: leave at least one to an agent")
        self._seat = {a: self.names.index(a) for a in self.possible_agents}
        self.layout = Layout(n)
        self.observation_spaces = {a: spaces.Dict({
            "observation": spaces.Box(-1.0, 1.0, (self.layout.size,), np.float32),
            "action_mask": spaces.Box(0, 1, (N_ACTIONS,), np.int8),
        }) for a in self.possible_agents}
        self.action_spaces = {a: spaces.Discrete(N_ACTIONS) for a in self.possible_agents}
        self.agents: list[str] = []
        self._rng: np.random.Generator | None = None
        self._state = new_game(self.rules)
        self._source = ShuffleSource(b"unset", "env")
        self._legal: list[int] = []

    # -- spaces ----------------------------------------------------------------------
    def observation_space(self, agent: str) -> spaces.Space[Any]:
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Space[Any]:
        return self.action_spaces[agent]

    @property
    def state_now(self) -> GameState:
        """The engine's whole state (every hand): for tests, rendering and debugging,
        never a policy's input."""
        return self._state

    @property
    def legal_now(self) -> list[int]:
        """The indices the agent to act may play, ascending (the mask's ones)."""
        return list(self._legal)

    # -- the game ----------------------------------------------------------------------
    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        """A new game. ``seed``: the deals of this game and of the games after it until
        the next seed; without one, the generator goes on (fresh entropy at first)."""
        if seed is not None or self._rng is None:
            self._rng, self.np_random_seed = seeding.np_random(seed)
        game_seed = int(self._rng.integers(0, 2**63))
        self._source = ShuffleSource(game_seed.to_bytes(8, "big"), "env")
        self._state = new_game(self.rules)
        self.agents = self.possible_agents[:]
        self.rewards = dict.fromkeys(self.agents, 0.0)
        self._cumulative_rewards = dict.fromkeys(self.agents, 0.0)
        self.terminations = dict.fromkeys(self.agents, False)
        self.truncations = dict.fromkeys(self.agents, False)
        self.infos: dict[str, dict[str, Any]] = {a: {} for a in self.agents}
        self.agent_selection = self.agents[0]
        self._advance()
        if self.render_mode == "human":
            self.render()

    def step(self, action: int | None) -> None:
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        if action is None or int(action) not in self._legal:
            raise ValueError(f"action {str(action)[:20]} is not legal for {agent} now "
                             f"(legal: {self._legal[:8]}{'…' if len(self._legal) > 8 else ''})")
        self._cumulative_rewards[agent] = 0.0
        self._clear_rewards()
        self._state = apply(self._state, action_of(int(action)), seat=self._seat[agent])
        self._advance()
        self._accumulate_rewards()
        if self.render_mode == "human":
            self.render()

    def _advance(self) -> None:
        """Play chance and the opponents' seats until an agent is to act or the game is
        over; then select that agent, or end the episode."""
        state = self._state
        while not state.is_over:
            if state.is_chance:
                state = apply(state, self._source.chance(state))
            elif state.to_act in self.opponents:
                seat = state.to_act
                legal = legal_actions(state)
                chosen: Action = self.opponents[seat].choose(
                    observation(state, seat, self.names), legal)
                state = apply(state, chosen, seat=seat)
            else:
                break
        self._state = state
        if state.is_over:
            self._legal = []
            self._finish(state)
        else:
            self._legal = legal_indices(legal_actions(state))
            self.agent_selection = self.names[state.to_act]

    def _finish(self, state: GameState) -> None:
        """Rewards at the game's end; every agent terminated."""
        assert state.result is not None
        winners = state.result.winners
        for agent, seat in self._seat.items():
            self.rewards[agent] = (-1.0 if seat not in winners
                                   else 1.0 if len(winners) == 1 else 0.0)
            self.terminations[agent] = True

    # -- what an agent sees -----------------------------------------------------------------
    def observe(self, agent: str) -> dict[str, Any]:
        mask = np.zeros(N_ACTIONS, dtype=np.int8)
        if agent == self.agent_selection and not self._state.is_over:
            mask[self._legal] = 1
        obs = observation(self._state, self._seat[agent], self.names)
        return {"observation": encode(obs), "action_mask": mask}

    def render(self) -> str | None:
        if self.render_mode is None:
            logger.warn("render() without a render_mode: give render_mode='ansi' or 'human'")
            return None
        text = render_text(self._state, self.names)
        if self.render_mode == "human":
            print(text, end="")
            return None
        return text

    def close(self) -> None:
        pass


def raw_env(rules: RuleSet | None = None, render_mode: str | None = None,
            opponents: Mapping[int, Bot] | None = None) -> ChinchonEnv:
    """The environment, unwrapped (see the module's docstring)."""
    return ChinchonEnv(rules=rules, render_mode=render_mode, opponents=opponents)


def env(rules: RuleSet | None = None, render_mode: str | None = None,
        opponents: Mapping[int, Bot] | None = None) -> Any:
    """The environment as PettingZoo's classic environments come: an illegal action ends
    the game (-1 for its agent), an action out of the space or a call out of order is
    refused with an error."""
    wrapped = wrappers.TerminateIllegalWrapper(
        raw_env(rules=rules, render_mode=render_mode, opponents=opponents), illegal_reward=-1)
    wrapped = wrappers.AssertOutOfBoundsWrapper(wrapped)
    return wrappers.OrderEnforcingWrapper(wrapped)


__all__ = ["ChinchonEnv", "env", "raw_env"]
