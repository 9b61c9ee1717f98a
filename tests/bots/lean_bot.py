"""A test bot on the Python SDK that shows what it was given.

    python lean_bot.py --target HOST:PORT --token T [--full]

Plays like the engine's GreedyBot, with lean requests unless ``--full``. Prints one JSON
line per message read: ``{"request": id, "delta": bool, "bytes": n}`` for an action
request (its size as read), ``{"obs": HEX}`` for each observation the SDK gave the bot
(the encoding of ``observation_to_wire`` of it), ``{"ended": game_id}`` at each game's
end.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os

from chinchon.engine import Action, GreedyBot, Observation
from chinchon.sdk import BotClient
from chinchon.v1 import referee_pb2 as pb
from chinchon.wire import observation_to_wire

_greedy = GreedyBot()


def choose(obs: Observation, legal: list[Action]) -> Action:
    print(json.dumps({"obs": observation_to_wire(obs).SerializeToString().hex()}), flush=True)
    return _greedy.choose(obs, legal)


def seen(msg: pb.PlayResponse) -> None:
    kind = msg.WhichOneof("kind")
    if kind == "action_request":
        req = msg.action_request
        print(json.dumps({"request": req.request_id, "delta": req.HasField("delta"),
                          "bytes": req.ByteSize()}), flush=True)
    elif kind == "game_ended":
        print(json.dumps({"ended": msg.game_ended.game_id}), flush=True)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--target", required=True)
    ap.add_argument("--token", default=os.environ.get("CHINCHON_TOKEN"))
    ap.add_argument("--full", action="store_true")
    args = ap.parse_args()
    client = BotClient(choose, args.target, args.token, on_message=seen, game_lines=False,
                       lean=not args.full)
    asyncio.run(client.run())


if __name__ == "__main__":
    main()
