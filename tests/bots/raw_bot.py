"""A test bot speaking the protocol directly (no SDK), with scripted misbehaviour.

    python raw_bot.py --target HOST:PORT --token T --mode MODE

Modes: ``first`` answers every request with its first legal action; ``stall`` never
answers; ``illegal`` always answers with an action the rules refuse; ``slow`` sleeps
``--delay`` seconds before answering legally. Every message received is printed to
stdout as one JSON line, so tests can check what the referee sent.
"""

from __future__ import annotations

import argparse
import asyncio
import sys

import grpc
from chinchon.engine import cards_of, deck_cards
from chinchon.v1 import game_pb2 as g
from chinchon.v1 import referee_pb2 as pb
from chinchon.v1 import referee_pb2_grpc as pb_grpc
from google.protobuf import json_format


def illegal_action(req: pb.ActionRequest) -> g.Action:
    obs = req.observation
    if obs.phase == g.PHASE_DRAW:
        # Discarding before drawing breaks the turn order.
        return g.Action(discard=g.Discard(card=obs.hand[0]))
    # A card that is not in the hand.
    hand = set(obs.hand)
    for c in cards_of(sum(1 << c for c in deck_cards(40, 0))):
        if str(c) not in hand:
            return g.Action(discard=g.Discard(card=str(c)))
    raise AssertionError("unreachable")


async def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--target", required=True)
    ap.add_argument("--token", required=True)
    ap.add_argument("--mode", default="first")
    ap.add_argument("--delay", type=float, default=0.0)
    args = ap.parse_args()
    async with grpc.aio.insecure_channel(args.target) as channel:
        call = pb_grpc.RefereeServiceStub(channel).Play(
            metadata=(("authorization", f"Bearer {args.token}"),)
        )
        await call.write(pb.PlayRequest(hello=pb.Hello(client=f"raw_bot/{args.mode}")))
        while True:
            msg = await call.read()
            if msg is grpc.aio.EOF:
                break
            print(json_format.MessageToJson(msg, indent=None), flush=True)
            if msg.WhichOneof("kind") != "action_request":
                continue
            req = msg.action_request
            if args.mode == "stall":
                continue
            if args.mode == "illegal":
                action = illegal_action(req)
            else:
                if args.mode == "slow":
                    await asyncio.sleep(args.delay)
                action = req.legal_actions[0]
            await call.write(pb.PlayRequest(action=pb.ActionReply(
                request_id=req.request_id, action=action)))
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
