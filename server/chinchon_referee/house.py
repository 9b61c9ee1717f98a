"""House bots: engine bots that play inside the referee (practice opponents, fill-ins)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from chinchon.engine import Action, Bot, GreedyBot, Observation, RandomBot
from chinchon.strategies import StrongBot

HOUSE_BOTS: dict[str, Callable[[int], Bot]] = {
    "random": lambda i: RandomBot(i),
    "greedy": lambda i: GreedyBot(),
    "strong": lambda i: StrongBot(i),
}

#: House bots whose decisions cost enough CPU (StrongBot: half a millisecond on
#: average, several at worst) to be taken off the referee's event loop: they play in a
#: worker process (``house_worker.py``). The others cost microseconds: they play inline.
OFF_LOOP = frozenset({"strong"})


@dataclass
class HouseBot:
    """A house bot of ``kind`` built from ``seed``: the same kind and seed always make
    the same decisions, here or in a worker process (which builds its own copy)."""

    kind: str
    seed: int
    bot: Bot = field(repr=False)

    @property
    def name(self) -> str:
        return self.bot.name

    @property
    def off_loop(self) -> bool:
        """Whether the referee asks a worker process for this bot's decisions."""
        return self.kind in OFF_LOOP

    def choose(self, obs: Observation, legal: Sequence[Action]) -> Action:
        return self.bot.choose(obs, legal)


def make_house_bot(kind: str, seed: int) -> HouseBot:
    try:
        make = HOUSE_BOTS[kind]
    except KeyError:
        raise ValueError(f"unknown house bot '{kind}': choose {', '.join(HOUSE_BOTS)}") from None
    return HouseBot(kind, seed, make(seed))
