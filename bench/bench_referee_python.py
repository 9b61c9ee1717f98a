"""The referee's own Python per decision, with no gRPC: what it costs above the floor.

The real ``Referee`` and real ``Connection`` objects play ``--lanes`` games at once
(first-legal-action bots, the games of ``bench_server.py``), each stream over an
in-memory stand-in for gRPC's ``ServicerContext``: a write of an action request is
answered at once, on the next pass of the event loop, with its first legal action,
read back by the connection's own reader. What the process spends per decision is then
the referee's Python (its engine, encoding, clock, record, write gate, coroutines)
plus the stand-in's few microseconds, and none of gRPC's or the kernel's.

    python bench/bench_referee_python.py                  # CPU time per decision, 5 s
    python bench/bench_referee_python.py --profile /tmp/referee.prof
    python bench/bench_referee_python.py --callgrind      # instructions per decision

``--callgrind`` runs the same thing twice under valgrind (2,000 then 12,000 decisions
after the warm-up) and prints the difference of the two instruction counts per
decision: a count that does not move with the machine's load, for comparing two
versions of the referee where the CPU time of one run is too noisy to tell.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from typing import Any


class StandInContext:
    """A ``Play`` stream in memory: an action request written is answered with its
    first legal action, delivered on the next pass of the loop."""

    def __init__(self, loop: asyncio.AbstractEventLoop, read_request: Any, reply: Any) -> None:
        self.loop = loop
        self.read_request = read_request
        self.reply = reply
        self.inbox: list[bytes] = []
        self.waiter: asyncio.Future[bytes] | None = None

    def _deliver(self, data: bytes) -> None:
        waiter, self.waiter = self.waiter, None
        if waiter is not None and not waiter.done():
            waiter.set_result(data)
        else:
            self.inbox.append(data)

    async def read(self) -> bytes:
        if self.inbox:
            return self.inbox.pop(0)
        self.waiter = self.loop.create_future()
        return await self.waiter

    async def write(self, message: bytes) -> None:
        got = self.read_request(message)
        if got is not None:
            self.loop.call_soon(self._deliver, self.reply(*got))


async def measure(lanes: int, seconds: float, decisions: int, warmup: float,
                  profile: str) -> tuple[int, float]:
    """(decisions, process CPU seconds) of the measured window."""
    from chinchon.engine import RuleSet
    from chinchon.v1 import referee_pb2 as pb
    from chinchon_referee.config import Limits, Policies, RefereeConfig, TimeControl
    from chinchon_referee.logs import configure
    from chinchon_referee.referee import Connection, GameSpec, Referee
    from harness.fastbots import action_reply_writer, action_request_reader
    from harness.measure import start_profile

    configure("warning", "text")
    loop = asyncio.get_running_loop()
    config = RefereeConfig(time_control=TimeControl(per_move=30.0, bank=60.0),
                           policies=Policies(reconnect_grace=30.0),
                           limits=Limits(max_streams_per_bot=1 << 30, max_streams=1 << 30))
    referee = Referee(config)
    players = ["p0", "p1"]
    reader, reply = action_request_reader(), action_reply_writer()
    readers = []
    for name in players:
        for _ in range(lanes):
            conn = Connection(name, StandInContext(loop, reader, reply), config.limits)
            readers.append(asyncio.ensure_future(conn.read_loop()))
            conn.hello.set_result(pb.Hello())
            conn.queue = True
            await referee.lobby.add(conn)
    rules, stop = RuleSet(players=2), False

    async def lane(i: int) -> None:
        j = 0
        while not stop:
            seats = players if (i + j) % 2 == 0 else players[::-1]
            await referee.play(GameSpec(
                game_id=f"L{lanes}-{i}-{j}", rules=rules, players=list(seats),
                seed="bench-seed", deal_id=f"{i}/{j}", time_control=config.time_control,
                policies=config.policies))
            j += 1

    tasks = [asyncio.ensure_future(lane(i)) for i in range(lanes)]
    await asyncio.sleep(warmup)
    prof = start_profile(profile)
    d0, c0 = referee.decisions, time.process_time()
    if decisions:
        while referee.decisions - d0 < decisions:
            await asyncio.sleep(0.01)
    else:
        await asyncio.sleep(seconds)
    d1, c1 = referee.decisions, time.process_time()
    if prof is not None:
        prof.disable()
        prof.dump_stats(profile)
    stop = True
    for t in [*tasks, *readers]:
        t.cancel()
    await asyncio.gather(*tasks, *readers, return_exceptions=True)
    return d1 - d0, c1 - c0


def callgrind(args: argparse.Namespace) -> int:
    """Instructions per decision: two runs under valgrind, their difference."""
    counts = []
    for n in (2000, 12000):
        with tempfile.TemporaryDirectory() as d:
            proc = subprocess.run(
                ["valgrind", "--tool=callgrind", f"--callgrind-out-file={d}/out",
                 sys.executable, __file__, "--lanes", str(args.lanes), "--decisions", str(n),
                 "--warmup", "0.2"],
                capture_output=True, text=True, check=True)
        text = proc.stdout + proc.stderr
        found = re.search(r"Collected : ([\d,]+)", text)
        done = re.search(r"\((\d+) decisions", text)
        if found is None or done is None:
            print(text[-2000:])
            return 1
        counts.append((int(found.group(1).replace(",", "")), int(done.group(1))))
    (ir0, n0), (ir1, n1) = counts
    print(f"{(ir1 - ir0) / (n1 - n0):,.0f} instructions per decision "
          f"({args.lanes} games at once; {n1 - n0:,} decisions between the two runs)")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--lanes", type=int, default=100, help="games at once (default 100)")
    ap.add_argument("--seconds", type=float, default=5.0, help="measured time (default 5)")
    ap.add_argument("--decisions", type=int, default=0,
                    help="measure this many decisions instead of --seconds")
    ap.add_argument("--warmup", type=float, default=1.0)
    ap.add_argument("--profile", default="", help="cProfile the measured window here")
    ap.add_argument("--callgrind", action="store_true",
                    help="instructions per decision under valgrind (two runs)")
    args = ap.parse_args(argv)
    if args.callgrind:
        return callgrind(args)
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from harness.procs import server_loop

    server_loop()  # the loop `chinchon serve` runs on
    n, cpu = asyncio.run(measure(args.lanes, args.seconds, args.decisions, args.warmup,
                                 args.profile))
    print(f"{cpu / max(1, n) * 1e6:.1f} us of CPU per decision ({n} decisions, "
          f"{args.lanes} games at once)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
