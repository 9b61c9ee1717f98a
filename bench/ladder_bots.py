"""The ladder benchmarks' bots of known strength that the engine does not have: a bot that
plays a random legal action with some probability, else its base bot's choice.
``bench_ladder.py`` plays them in-process; ``bench_ladder_served.py`` runs them as SDK
bot processes (``python -m chinchon.sdk --bot bench/ladder_bots.py:NoisyStrong``)."""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any

from chinchon.engine import GreedyBot
from chinchon.engine.actions import Action
from chinchon.engine.observation import Observation
from chinchon.strategies import StrongBot


class Noisy:
    """A bot that plays a random legal action with probability ``eps``."""

    def __init__(self, bot: Any, eps: float, seed: int | None = None) -> None:
        self.bot, self.eps, self.rng = bot, eps, random.Random(seed)
        self.name = f"noisy-{bot.name}"

    def choose(self, obs: Observation, legal: Sequence[Action]) -> Action:
        if self.rng.random() < self.eps:
            return self.rng.choice(list(legal))
        action: Action = self.bot.choose(obs, legal)
        return action


#: How often each noisy bot plays at random.
NOISY_STRONG, NOISY_GREEDY = 0.2, 0.5


def NoisyStrong() -> Noisy:
    """StrongBot playing at random a fifth of the time."""
    return Noisy(StrongBot(), NOISY_STRONG)


def NoisyGreedy() -> Noisy:
    """GreedyBot playing at random half the time."""
    return Noisy(GreedyBot(), NOISY_GREEDY)
