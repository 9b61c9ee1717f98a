"""The floor under the referee's traffic: its messages, with no game.

``bench_server.py --only floor`` (or with the echo and the referee) runs this server in a
process of its own: a ``grpc.aio`` server with the referee's ``Play`` method that pairs the
bot streams in the order they say hello, as two seats of a game, and then, for each pair,
writes a canned action request (an observation of the echo's payload size, one legal
discard) on one stream, waits for the answer on that stream, and writes the next request
on the other stream, and so on. It reads the way the referee reads (one reader per stream,
``context.read()``, handing the answer to the pair's task through a future) and writes
the way it writes (``context.write`` of bytes, from the pair's task). The bots are the
benchmark's own fast bots (``harness.fastbots.fast_bots``), the same as the referee's.

What it measures is what the referee's messages cost the two processes with no rules,
record, clock or encoding at all: the floor for the referee's decisions, against which
the echo is the floor for plain round trips. Between windows the pairs wait (no request
is written), so the bots' process is idle while the echo or the referee is measured.
"""

from __future__ import annotations

import asyncio
import os
import time
from typing import Any

from chinchon.wire import delimited, varint
from chinchon_referee.host.fdlimit import raise_nofile

from .measure import cpu_seconds
from .procs import raw_server, server_loop


def _request(request_id: int, observation: bytes) -> bytes:
    """``PlayResponse{action_request{request_id, game_id, observation, legal_actions}}``
    with the fields in the referee's order (``observation`` as opaque bytes: the bots
    never read it)."""
    body = (b"\x08" + varint(request_id) + delimited(2, b"F100-1-2")
            + delimited(3, observation) + delimited(4, b"\x1a\x02\x08\x05"))  # discard 5
    return delimited(3, body)


def floor_server_proc(pipe: Any, payload: int) -> None:
    raise_nofile()
    server_loop()
    asyncio.run(_floor_server(pipe, payload))


async def _floor_server(pipe: Any, payload: int) -> None:
    import grpc
    from chinchon.v1 import referee_pb2 as pb

    loop = asyncio.get_running_loop()
    observation = os.urandom(max(1, payload - 30))  # the rest of the request: ~30 bytes
    welcome = pb.PlayResponse(welcome=pb.Welcome(bot_name="floor")).SerializeToString()
    go = asyncio.Event()  # set while a window is measured (and its warm-up)
    decisions = [0]
    lonely: list[Seat] = []
    pairs: list[asyncio.Task[None]] = []

    class Seat:
        def __init__(self, context: Any) -> None:
            self.context = context
            self.answer: asyncio.Future[bytes] | None = None
            self.request_id = 0

    async def pair(seats: tuple[Seat, Seat]) -> None:
        turn = 0
        while True:
            if not go.is_set():
                await go.wait()
            seat = seats[turn & 1]
            turn += 1
            seat.request_id += 1
            seat.answer = loop.create_future()
            await seat.context.write(_request(seat.request_id, observation))
            await seat.answer
            decisions[0] += 1

    open_calls = [0]  # Play calls not yet returned: the server stops once there are none
    none_open = asyncio.Event()

    async def play(requests: Any, context: Any) -> None:
        open_calls[0] += 1
        none_open.clear()
        try:
            seat = Seat(context)
            read = context.read
            eof = grpc.aio.EOF
            if await read() is eof:  # the hello
                return
            await context.write(welcome)
            if lonely:
                pairs.append(asyncio.ensure_future(pair((lonely.pop(), seat))))
            else:
                lonely.append(seat)
            while True:
                raw = await read()
                if raw is eof:
                    return
                fut = seat.answer
                if fut is not None and not fut.done():
                    fut.set_result(raw)
        except (Exception, asyncio.CancelledError):
            # The bots went away, or the server stops: the end of the benchmark, and
            # nothing for gRPC to report (a handler cancelled at the server's stop
            # printed a CancelledError traceback once, in a CI run).
            return
        finally:
            open_calls[0] -= 1
            if not open_calls[0]:
                none_open.set()

    server, port = await raw_server("chinchon.v1.RefereeService", "Play", play)
    pipe.send(("ready", port, os.getpid()))
    while True:
        cmd, arg = await loop.run_in_executor(None, pipe.recv)
        if cmd == "pairs":
            pipe.send(len(pairs))
        elif cmd == "measure":
            warmup, seconds, bot_pid = arg
            pipe.send(await _window(go, decisions, warmup, seconds, bot_pid))
        else:
            # The bots have gone (bench_server stops them first): once their calls have
            # returned, nothing is left for the server's stop to cancel.
            for t in pairs:
                t.cancel()
            if open_calls[0]:
                try:
                    await asyncio.wait_for(none_open.wait(), 10)
                except TimeoutError:
                    pass  # the server's stop cancels what is left
            await server.stop(0.5)
            pipe.send("stopped")
            return


async def _window(go: asyncio.Event, decisions: list[int], warmup: float, seconds: float,
                  bot_pid: int) -> dict[str, Any]:
    go.set()
    await asyncio.sleep(warmup)
    pids = (os.getpid(), bot_pid)
    d0, t0, c0 = decisions[0], time.monotonic(), [cpu_seconds(p) for p in pids]
    await asyncio.sleep(seconds)
    d1, t1, c1 = decisions[0], time.monotonic(), [cpu_seconds(p) for p in pids]
    go.clear()
    el = t1 - t0
    return {"decisions": d1 - d0, "seconds": el, "rate": (d1 - d0) / el,
            "server_cpu": (c1[0] - c0[0]) / el, "bot_cpu": (c1[1] - c0[1]) / el}
