"""A hand-written bot's usual debug line, hostile to a shared log: at each decision it
prints its current hand to stderr WITHOUT the game's id (``hand <mark> <cards>``). Before
each line it notes, in ``truth/<pid>.jsonl`` under its working folder, which game the
line's mark was written in (the test's ground truth; not on stderr):
``--bot tests/bots/hand_printer_bot.py``."""

from __future__ import annotations

import hashlib
import json
import os
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from chinchon.engine import Action, GreedyBot, Observation
from chinchon.sdk import RequestContext

TRUTH = Path.cwd() / "truth"
TRUTH.mkdir(exist_ok=True)
_notes = open(TRUTH / f"{os.getpid()}.jsonl", "a", encoding="utf-8")  # noqa: SIM115
_count = 0
#: Which bot this is, for the test (a digest of its token, never the token).
WHO = hashlib.sha256(os.environ.get("CHINCHON_TOKEN", "").encode()).hexdigest()[:8]


class Bot(GreedyBot):
    def choose(self, obs: Observation, legal: Sequence[Action], request: RequestContext) -> Action:
        global _count
        _count += 1
        mark = f"{WHO}-{os.getpid()}-{_count}"
        _notes.write(json.dumps({"mark": mark, "game": request.game_id}) + "\n")
        _notes.flush()
        cards = " ".join(str(c) for c in obs.hand)
        print(f"hand {mark} {cards}", file=sys.stderr, flush=True)
        time.sleep(0.01)  # a slow thinker: its games last while the test reads the logs
        return super().choose(obs, legal)
