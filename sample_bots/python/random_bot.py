"""Sample bot: plays a uniformly random legal action.

Run it against a referee:

    CHINCHON_TOKEN=$(cat random.token) python -m chinchon.sdk --target HOST:PORT \\
        --bot sample_bots/python/random_bot.py:RandomBot

or on its own: ``CHINCHON_TOKEN=$(cat random.token) python sample_bots/python/random_bot.py
--target HOST:PORT`` (the token in the environment, never on the command line, where
``ps`` shows it).
"""

from __future__ import annotations

import random
import sys
from collections.abc import Sequence

from chinchon.engine import Action, Observation


class RandomBot:
    name = "random"

    def __init__(self, seed: int | None = None) -> None:
        self.rng = random.Random(seed)

    def choose(self, obs: Observation, legal: Sequence[Action]) -> Action:
        # The referee sends every legal action with each request: any of them is fine.
        return self.rng.choice(list(legal))


if __name__ == "__main__":
    from chinchon.sdk.__main__ import main

    sys.exit(main(["--bot", f"{__file__}:RandomBot", *sys.argv[1:]]))
