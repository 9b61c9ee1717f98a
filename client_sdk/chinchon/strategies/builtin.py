"""The built-in bots by name: the one registry the referee's house bots, ``chinchon
demo`` and ``python -m chinchon.sdk --bot NAME`` all read.

A factory takes a seed (an int: the seat, a game's index...) and returns a fresh bot;
the same name and seed always make a bot that takes the same decisions.
"""

from __future__ import annotations

from collections.abc import Callable

from chinchon.engine import Bot, GreedyBot, RandomBot

from .strong import StrongBot

BotFactory = Callable[[int], Bot]


def _random(seed: int) -> Bot:
    return RandomBot(seed)


def _greedy(seed: int) -> Bot:
    return GreedyBot()  # no randomness: the seed changes nothing


def _strong(seed: int) -> Bot:
    return StrongBot(seed)


#: name -> factory(seed), in the order they are listed to users.
BUILTIN_BOTS: dict[str, BotFactory] = {
    "random": _random,
    "greedy": _greedy,
    "strong": _strong,
}


def make_bot(name: str, seed: int = 0) -> Bot:
    """The built-in bot ``name`` built from ``seed``; ValueError naming the choices for
    an unknown name."""
    try:
        factory = BUILTIN_BOTS[name]
    except KeyError:
        raise ValueError(f"unknown built-in bot '{name}': choose {', '.join(BUILTIN_BOTS)}") from None
    return factory(seed)
