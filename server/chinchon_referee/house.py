"""House bots: engine bots that play inside the referee (practice opponents, fill-ins)."""

from __future__ import annotations

from collections.abc import Callable

from chinchon.engine import Bot, GreedyBot, RandomBot
from chinchon.strategies import StrongBot

HOUSE_BOTS: dict[str, Callable[[int], Bot]] = {
    "random": lambda i: RandomBot(i),
    "greedy": lambda i: GreedyBot(),
    "strong": lambda i: StrongBot(i),
}


def make_house_bot(kind: str, seed: int) -> Bot:
    try:
        return HOUSE_BOTS[kind](seed)
    except KeyError:
        raise ValueError(f"unknown house bot '{kind}': choose {', '.join(HOUSE_BOTS)}") from None
