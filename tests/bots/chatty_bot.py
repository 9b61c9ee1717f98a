"""The greedy engine bot, writing one line to stderr per decision (its hand, turn and
phase) and, once, its own token (which the referee must blank out of what it keeps):
``--bot tests/bots/chatty_bot.py``."""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence

from chinchon.engine import Action, GreedyBot, Observation


class Bot(GreedyBot):
    told = False

    def choose(self, obs: Observation, legal: Sequence[Action]) -> Action:
        if not self.told:
            self.told = True
            print(f"debug: my token is {os.environ.get('CHINCHON_TOKEN', '')}", file=sys.stderr, flush=True)
        print(f"decision hand={obs.hand_no} turn={obs.turn} phase={obs.phase.name.lower()}",
              file=sys.stderr, flush=True)
        return super().choose(obs, legal)
