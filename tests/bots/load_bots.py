"""Bots for the load tests: an honest bot that times the referee, and hostile bots.

    python load_bots.py honest --target HOST:PORT --token T
    python load_bots.py hostile --target HOST:PORT --token T1 --token T2 ... [--opponent strong]

``honest`` waits in the queue and answers every request at once with its first legal
action; for each request that follows one of its answers in a game it prints
``rtt SECONDS``: the time from writing the answer to reading the next request, on its
own clock (the referee's work in between, and any delay other games cause it).

``hostile`` opens one practice stream per token against ``--opponent`` (``--games``
games each, a clock of an hour per move so that pausing costs nothing) and, while on,
answers every request at once. It reads commands on stdin: ``on`` / ``off`` (answer /
hold the requests) and ``count``; it prints ``answered N`` (answers so far) after each
``off`` and ``count``, and
``ended TOKEN CODE DETAILS`` when a stream ends. It runs at a lower CPU priority
(``os.nice``): it stands for bots on other machines, whose own CPU is not the
referee's.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import time

import grpc
from chinchon.v1 import referee_pb2 as pb
from chinchon.v1 import referee_pb2_grpc as pb_grpc


def _md(token: str) -> tuple[tuple[str, str], ...]:
    return (("authorization", f"Bearer {token}"),)


async def honest(target: str, token: str) -> None:
    async with grpc.aio.insecure_channel(target) as channel:
        call = pb_grpc.RefereeServiceStub(channel).Play(metadata=_md(token))
        await call.write(pb.PlayRequest(hello=pb.Hello(client="rtt", queue=pb.QueueMode())))
        answered: float | None = None
        out = sys.stdout
        while True:
            msg = await call.read()
            if msg is grpc.aio.EOF:
                return
            kind = msg.WhichOneof("kind")
            if kind == "game_ended":
                answered = None
                print("game_ended", flush=True)
            if kind != "action_request":
                continue
            now = time.perf_counter()
            if answered is not None:
                out.write(f"rtt {now - answered:.6f}\n")
                out.flush()
            req = msg.action_request
            await call.write(pb.PlayRequest(action=pb.ActionReply(
                request_id=req.request_id, action=req.legal_actions[0])))
            answered = time.perf_counter()


class Hostile:
    def __init__(self) -> None:
        self.on = asyncio.Event()
        self.answered = 0

    async def stream(self, target: str, token: str, opponent: str, games: int) -> None:
        async with grpc.aio.insecure_channel(target) as channel:
            call = pb_grpc.RefereeServiceStub(channel).Play(metadata=_md(token))
            req = pb.PracticeRequest(opponent=opponent, games=games)
            req.time_control.per_move.FromSeconds(3600)
            await call.write(pb.PlayRequest(hello=pb.Hello(client="hostile", practice=req)))
            try:
                while True:
                    msg = await call.read()
                    if msg is grpc.aio.EOF:
                        print(f"ended {token} OK", flush=True)
                        return
                    kind = msg.WhichOneof("kind")
                    if kind == "error":
                        print(f"error {token} {msg.error.message}", flush=True)
                    if kind != "action_request":
                        continue
                    await self.on.wait()
                    r = msg.action_request
                    await call.write(pb.PlayRequest(action=pb.ActionReply(
                        request_id=r.request_id, action=r.legal_actions[0])))
                    self.answered += 1
            except grpc.aio.AioRpcError as e:
                print(f"ended {token} {e.code().name} {e.details()}", flush=True)

    async def commands(self) -> None:
        loop = asyncio.get_running_loop()
        while True:
            line = await loop.run_in_executor(None, sys.stdin.readline)
            if not line:
                os._exit(0)
            cmd = line.strip()
            if cmd == "on":
                self.on.set()
            elif cmd == "off":
                self.on.clear()
                print(f"answered {self.answered}", flush=True)
            elif cmd == "count":
                print(f"answered {self.answered}", flush=True)


async def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("role", choices=["honest", "hostile"])
    ap.add_argument("--target", required=True)
    ap.add_argument("--token", action="append", required=True)
    ap.add_argument("--opponent", default="strong")
    ap.add_argument("--games", type=int, default=100)
    args = ap.parse_args()
    if args.role == "honest":
        await honest(args.target, args.token[0])
        return 0
    os.nice(10)
    h = Hostile()
    cmds = asyncio.ensure_future(h.commands())
    await asyncio.gather(*(h.stream(args.target, t, args.opponent, args.games)
                           for t in args.token))
    cmds.cancel()
    print("all_ended", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
