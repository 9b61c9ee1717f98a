"""House bots: engine bots that play inside the referee (practice opponents, fill-ins)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from chinchon.engine import Action, Bot, Observation
from chinchon.strategies import BUILTIN_BOTS, make_bot

#: The house bots are the built-in bots (one registry: :mod:`chinchon.strategies.builtin`).
HOUSE_BOTS = BUILTIN_BOTS

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
    if kind not in BUILTIN_BOTS:
        raise ValueError(f"unknown house bot '{kind}': choose {', '.join(BUILTIN_BOTS)}")
    return HouseBot(kind, seed, make_bot(kind, seed))
