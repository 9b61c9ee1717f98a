"""The greedy engine bot, taking a little time over each decision: its games last long
enough for a test to watch them in progress (``--bot tests/bots/paced_bot.py``)."""

from __future__ import annotations

import time
from collections.abc import Sequence

from chinchon.engine import Action, GreedyBot, Observation

PACE = 0.02  # seconds per decision


class Bot(GreedyBot):
    def choose(self, obs: Observation, legal: Sequence[Action]) -> Action:
        time.sleep(PACE)
        return super().choose(obs, legal)
