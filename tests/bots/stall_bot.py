"""A Python SDK bot that stalls once: its first decision blocks the whole process for
``--stall`` seconds (a busy machine, a long pause), then it plays greedily. It plays one
practice game against a house bot with a short clock and prints its SessionReport as
one JSON line on stdout.

    python stall_bot.py --target HOST:PORT --stall 2.5 --per-move 1.0
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import time
from collections.abc import Sequence

from chinchon.engine import Action, GreedyBot, Observation
from chinchon.sdk import BotClient, PracticeOptions
from chinchon.v1 import referee_pb2 as pb


class StallOnce:
    def __init__(self, stall: float) -> None:
        self.stall = stall
        self.greedy = GreedyBot()

    def choose(self, obs: Observation, legal: Sequence[Action]) -> Action:
        if self.stall:
            time.sleep(self.stall)  # blocks the event loop too: nothing is read meanwhile
            self.stall = 0.0
        return self.greedy.choose(obs, legal)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--target", required=True)
    ap.add_argument("--stall", type=float, required=True)
    ap.add_argument("--per-move", type=float, required=True)
    args = ap.parse_args()
    client = BotClient(StallOnce(args.stall), args.target, os.environ["CHINCHON_TOKEN"],
                       practice=PracticeOptions(opponent="greedy", games=1,
                                                per_move=args.per_move, bank=0.0))
    report = asyncio.run(client.run())
    print(json.dumps({
        "games": report.games,
        "superseded": report.superseded,
        "defaults": [d.request_id for d in report.defaults],
        "errors": [pb.ErrorCode.Name(e.code) for e in report.errors],
        "decisions": report.decisions,
    }), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
