"""A test bot speaking the protocol directly (no SDK), with scripted misbehaviour.

    python raw_bot.py --target HOST:PORT --token T --mode MODE

Modes: ``first`` answers every request with its first legal action; ``stall`` never
answers; ``illegal`` always answers with an action the rules refuse; ``slow`` sleeps
``--delay`` seconds before answering legally; ``stale`` answers like ``first`` but,
before answering each of requests 2 to ``--count`` + 1 of each game, sends its
previous answer again (a reply to a request no longer outstanding). Every message received is printed
to stdout as one JSON line, so tests can check what the referee sent.

The hello is for the queue unless ``--practice OPPONENT`` is given: then it asks for
practice games (``--games``, ``--rules`` a JSON object of RuleSet fields,
``--per-move`` / ``--bank`` seconds, ``--seed``).

More modes (:class:`ExtraModes`): ``varied`` plays seeded random legal actions
(``--varied-seed``) that reach every part of a hand: it closes whenever it may (any of
the listed closes), takes the discard about a third of the time, lays off and down at
random, discards mostly its highest unmatched card, and on one first attempt in ten
tries an illegal action made of its own cards (the retry then answers legally);
``greedy`` plays the engine's GreedyBot; ``delayed`` answers its first
``--delayed-count`` requests after ``--delay`` seconds with the last legal action, and
the later ones at once with the first.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import sys
from collections.abc import Callable

import grpc
from chinchon.engine import GreedyBot, cards_of, deck_cards, mask_of, parse_card, solver_for
from chinchon.v1 import game_pb2 as g
from chinchon.v1 import referee_pb2 as pb
from chinchon.v1 import referee_pb2_grpc as pb_grpc
from chinchon.wire import action_from_wire, action_to_wire, observation_from_wire, rules_from_wire
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


def hello(args: argparse.Namespace) -> pb.Hello:
    client = f"raw_bot/{args.mode}"
    if args.practice is None:
        return pb.Hello(client=client)
    req = pb.PracticeRequest(opponent=args.practice, games=args.games, seed=args.seed)
    if args.rules is not None:
        json_format.Parse(args.rules, req.rules)
    if args.per_move or args.bank is not None:
        req.time_control.per_move.FromNanoseconds(int(args.per_move * 1e9))
        if args.bank is not None:
            req.time_control.bank.FromNanoseconds(int(args.bank * 1e9))
    return pb.Hello(client=client, practice=req)


class ExtraModes:
    """The modes ``varied``, ``greedy`` and ``delayed`` (see the module docstring)."""

    NAMES = ("varied", "greedy", "delayed")

    def __init__(self, args: argparse.Namespace) -> None:
        self.mode = args.mode
        self.rng = random.Random(args.varied_seed)
        self.delay = args.delay
        self.delayed_left = args.delayed_count
        self.greedy = GreedyBot()

    async def choose(self, req: pb.ActionRequest) -> g.Action:
        if self.mode == "greedy":
            obs = observation_from_wire(req.observation)
            legal = [action_from_wire(a) for a in req.legal_actions]
            return action_to_wire(self.greedy.choose(obs, legal))
        if self.mode == "delayed":
            if self.delayed_left > 0:
                self.delayed_left -= 1
                await asyncio.sleep(self.delay)
                return req.legal_actions[-1]
            return req.legal_actions[0]
        return self.varied(req)

    def varied(self, req: pb.ActionRequest) -> g.Action:
        rng = self.rng
        obs = req.observation
        legal = list(req.legal_actions)
        if req.attempt == 0 and rng.random() < 0.1:
            wrong = self.own_illegal(req)
            if wrong is not None:
                return wrong
        kinds = [a.WhichOneof("kind") for a in legal]
        if obs.phase == g.PHASE_DRAW:
            if "draw_discard" in kinds and rng.random() < 0.35:
                return legal[kinds.index("draw_discard")]
            return legal[kinds.index("draw_stock")]
        if obs.phase == g.PHASE_DISCARD:
            closes = [a for a, k in zip(legal, kinds, strict=True) if k == "close"]
            if closes:
                return rng.choice(closes)
            discards = [a for a, k in zip(legal, kinds, strict=True) if k == "discard"]
            if rng.random() < 0.25:
                return rng.choice(discards)
            # Mostly the highest unmatched card, so that hands come close to closing.
            rules = rules_from_wire(obs.rules)
            best = solver_for(rules).best_arrangement(mask_of(parse_card(c) for c in obs.hand))
            loose = {str(c) for c in best.unmatched}
            pool = [a for a in discards if a.discard.card in loose] or discards
            return max(pool, key=lambda a: rules.card_points(parse_card(a.discard.card)))
        return rng.choice(legal)  # lay-off and lay-down turns: anything listed

    def own_illegal(self, req: pb.ActionRequest) -> g.Action | None:
        """An action the rules refuse, naming only cards of the bot's own hand."""
        obs = req.observation
        rng = self.rng
        card = rng.choice(list(obs.hand)) if obs.hand else ""
        if not card:
            return None
        if obs.phase == g.PHASE_DRAW:
            return g.Action(discard=g.Discard(card=card))  # before drawing
        if obs.phase == g.PHASE_DISCARD:
            if any(a.WhichOneof("kind") == "close" for a in req.legal_actions):
                return None  # it would close anyway: no refusal to provoke
            return g.Action(close=g.Close(card=card, best=True))  # cannot close
        if obs.phase == g.PHASE_LAY_OFF:
            meld = rng.randrange(len(obs.table) + 1)  # the last index is off the table
            legal = {(a.lay_off.card, a.lay_off.meld) for a in req.legal_actions
                     if a.WhichOneof("kind") == "lay_off"}
            if (card, meld) in legal:
                meld = len(obs.table)
            return g.Action(lay_off=g.LayOff(card=card, meld=meld))
        if obs.phase == g.PHASE_LAY_DOWN:  # one card is no meld
            return g.Action(lay_down=g.LayDown(melds=g.MeldList(melds=[g.CardGroup(cards=[card])])))
        return None


def parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser()
    ap.add_argument("--target", required=True)
    ap.add_argument("--token", default=os.environ.get("CHINCHON_TOKEN"),
                    help="the bot's token (default: $CHINCHON_TOKEN)")
    ap.add_argument("--mode", default="first")
    ap.add_argument("--delay", type=float, default=0.0)
    ap.add_argument("--count", type=int, default=3, help="stale answers to send (mode stale)")
    ap.add_argument("--practice", metavar="OPPONENT", help="ask for practice games")
    ap.add_argument("--games", type=int, default=0)
    ap.add_argument("--rules", help="practice rule set: a JSON object of RuleSet fields")
    ap.add_argument("--per-move", type=float, default=0.0)
    ap.add_argument("--bank", type=float)
    ap.add_argument("--seed", default="")
    ap.add_argument("--varied-seed", default="0", help="mode varied: seed of its choices")
    ap.add_argument("--delayed-count", type=int, default=1,
                    help="mode delayed: how many requests are answered after --delay")
    return ap


async def play(args: argparse.Namespace, emit: Callable[[str], None]) -> int:
    """Play as ``args`` say until the referee ends the stream; each message received
    goes to ``emit`` as one JSON line (the process prints it; an in-process bot of the
    tests keeps it)."""
    extra = ExtraModes(args) if args.mode in ExtraModes.NAMES else None
    async with grpc.aio.insecure_channel(args.target) as channel:
        call = pb_grpc.RefereeServiceStub(channel).Play(
            metadata=(("authorization", f"Bearer {args.token}"),)
        )
        await call.write(pb.PlayRequest(hello=hello(args)))
        previous: pb.ActionReply | None = None  # the last answer sent (mode stale)
        stale_left = args.count
        while True:
            msg = await call.read()
            if msg is grpc.aio.EOF:
                break
            emit(json_format.MessageToJson(msg, indent=None))
            if msg.WhichOneof("kind") == "game_started":
                previous, stale_left = None, args.count
            if msg.WhichOneof("kind") != "action_request":
                continue
            req = msg.action_request
            if extra is not None:
                await call.write(pb.PlayRequest(action=pb.ActionReply(
                    request_id=req.request_id, action=await extra.choose(req))))
                continue
            if args.mode == "stall":
                continue
            if args.mode == "illegal":
                action = illegal_action(req)
            else:
                if args.mode == "slow":
                    await asyncio.sleep(args.delay)
                action = req.legal_actions[0]
            if args.mode == "stale" and previous is not None and stale_left > 0:
                stale_left -= 1
                await call.write(pb.PlayRequest(action=previous))
            previous = pb.ActionReply(request_id=req.request_id, action=action)
            await call.write(pb.PlayRequest(action=previous))
    return 0


async def main() -> int:
    return await play(parser().parse_args(), lambda line: print(line, flush=True))


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
