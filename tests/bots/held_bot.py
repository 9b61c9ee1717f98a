"""The paced greedy bot that never closes a hand while the file named by
``CHINCHON_TEST_HOLD`` exists: its game goes on (hand after hand, each to its turn limit)
until the test removes the file, whatever the machine's speed; then it plays as the
paced bot does (``--bot tests/bots/held_bot.py``)."""

from __future__ import annotations

import os
import time
from collections.abc import Sequence

from chinchon.engine import Action, Close, GreedyBot, Observation

HOLD = "CHINCHON_TEST_HOLD"
PACE = 0.02  # seconds per decision, as the paced bot's


class Bot(GreedyBot):
    def choose(self, obs: Observation, legal: Sequence[Action]) -> Action:
        time.sleep(PACE)
        hold = os.environ.get(HOLD)
        if hold and os.path.exists(hold):
            legal = [a for a in legal if not isinstance(a, Close)] or legal
        return super().choose(obs, legal)
