"""The ladder benchmarks' bots of known strength, and the true order they make.

The bots the engine does not have: a bot that plays a random legal action with some
probability, else its base bot's choice. ``bench_ladder.py`` plays them in-process;
``bench_ladder_served.py`` runs them as SDK bot processes (``python -m chinchon.sdk
--bot bench/harness/ladder_bots.py:NoisyStrong``), so this module imports nothing but
the SDK. Both take the true order from :func:`reference` (a duplicate round-robin)."""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from typing import Any

from chinchon.engine import DEFAULT_RULES, GreedyBot, RandomBot, play_game
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


MAKERS: dict[str, Callable[[int], Any]] = {
    "strong": lambda s: StrongBot(seed=s),
    "noisy-strong": lambda s: Noisy(StrongBot(seed=s), NOISY_STRONG, s),
    "greedy": lambda s: GreedyBot(),
    "noisy-greedy": lambda s: Noisy(GreedyBot(), NOISY_GREEDY, s),
    "random": lambda s: RandomBot(s),
}


def kind(name: str) -> str:
    return name.removesuffix("-late")


def play(players: Sequence[str], seed: str, deal: str, n: int) -> list[int]:
    """One game's places by seat (0 best)."""
    bots = [MAKERS[kind(p)](n * 7 + i) for i, p in enumerate(players)]
    state, _ = play_game(DEFAULT_RULES, bots, seed, deal)
    res = state.result
    assert res is not None
    return [0 if s in res.winners else 1 for s in range(len(players))]


def reference(names: list[str], games: int) -> list[str]:
    """The true order: a duplicate round-robin's points, best first."""
    points = dict.fromkeys(names, 0.0)
    for i, a in enumerate(names):
        for b in names[i + 1:]:
            for g in range(games // 2):
                for pair in ((a, b), (b, a)):
                    places = play(pair, "reference", f"{a}-{b}-{g}", g)
                    winners = [p for p, pl in zip(pair, places, strict=True) if pl == 0]
                    for w in winners:
                        points[w] += 1.0 / len(winners)
    return sorted(names, key=lambda n: -points[n])


def settled_at(orders: list[list[str]], want: Callable[[list[str]], bool]) -> int | None:
    """The first game count after which ``want`` holds to the end (None: never)."""
    first = None
    for i, o in enumerate(orders, 1):
        if want(o):
            first = first or i
        else:
            first = None
    return first
