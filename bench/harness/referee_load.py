"""The real referee (``start_server`` + ``Referee``) in a process of its own, driven over a
pipe: wait for idle streams, collect garbage, keep games in flight and measure them
(decisions/s, CPU, the referee's time per decision), stop."""

from __future__ import annotations

import asyncio
import gc
import os
import time
from collections import Counter
from collections.abc import Sequence
from typing import Any

from chinchon_referee.host.fdlimit import raise_nofile

from .measure import cpu_seconds, start_profile
from .procs import server_loop


def referee_proc(pipe: Any, names: list[str]) -> None:
    raise_nofile()
    server_loop()
    asyncio.run(_referee_harness(pipe, names))


def lobby_size(referee: Any) -> int:
    return sum(referee.lobby.connected(b) for b in list(referee.lobby.idle))


async def _referee_harness(pipe: Any, names: list[str]) -> None:
    from chinchon_referee.auth import TokenBook
    from chinchon_referee.config import Limits, Policies, RefereeConfig, TimeControl
    from chinchon_referee.logs import configure
    from chinchon_referee.referee import WriteGate
    from chinchon_referee.service.server import start_server, tune_gc

    WriteGate.enabled = os.environ.get("BENCH_WRITE_GATE", "on") == "on"
    tune = os.environ.get("BENCH_GC", "1") == "1"
    configure("warning", "text")
    tokens = TokenBook()
    for n in names:
        tokens.add(n, f"tok-{n}")
    # A generous clock: a benchmark on 2 cores must never see a timeout.
    # No stream cap: the benchmark opens as many streams per bot as it measures.
    config = RefereeConfig(time_control=TimeControl(per_move=30.0, bank=60.0),
                           policies=Policies(reconnect_grace=30.0),
                           limits=Limits(max_streams_per_bot=1 << 30, max_streams=1 << 30))
    server = await start_server("127.0.0.1:0", config, tokens)
    if tune:
        tune_gc()  # as `chinchon serve` does
    referee = server.referee
    loop = asyncio.get_running_loop()
    pipe.send(("ready", server.port, os.getpid()))
    while True:
        cmd, arg = await loop.run_in_executor(None, pipe.recv)
        if cmd == "wait_idle":
            want, timeout = arg
            deadline = time.monotonic() + timeout
            while lobby_size(referee) < want and time.monotonic() < deadline:
                await asyncio.sleep(0.05)
            pipe.send(lobby_size(referee))
        elif cmd == "gc":
            gc.collect()
            pipe.send(lobby_size(referee))
        elif cmd == "load":
            pipe.send(await run_load(referee, **arg))
        elif cmd == "stop":
            await server.stop(0.5)
            pipe.send("stopped")
            return


class _Timing:
    """Wraps Connection.ask (in this process only) to time the referee between reading
    an answer and writing the next request of the same game."""

    def __init__(self) -> None:
        from chinchon_referee import referee as R

        self.R = R
        self.orig_ask = R.Connection.ask
        self.last_answer: dict[str, float] = {}
        self.samples: list[float] = []
        self.to_discard: list[float] = []  # the subset where the next request is a discard

    def install(self) -> None:
        orig_ask = self.orig_ask
        last, samples, to_discard = self.last_answer, self.samples, self.to_discard
        from chinchon.v1 import game_pb2 as g
        from chinchon.v1 import referee_pb2 as pb

        discard = g.PHASE_DISCARD
        parse = pb.PlayResponse.FromString

        async def ask(conn: Any, request: bytes, request_id: int, budget: float,
                      task: Any = None) -> Any:
            req = parse(request).action_request  # ~10 us, in the latency window only
            action, took = await orig_ask(conn, request, request_id, budget, task)
            written = conn.request_written  # when this request was written
            prev = last.pop(req.game_id, None)
            if prev is not None:
                samples.append(written - prev)
                if req.observation.phase == discard:
                    to_discard.append(written - prev)
            last[req.game_id] = written + took  # the answer's read time
            return action, took

        self.R.Connection.ask = ask

    def remove(self) -> None:
        self.R.Connection.ask = self.orig_ask


async def run_load(referee: Any, lanes: int, warmup: float, measure: float, latency: float,
                   players: Sequence[str] = ("p0", "p1"), bot_pids: Sequence[int] = (),
                   profile: str = "") -> dict[str, Any]:
    """Keep ``lanes`` games in flight; measure decisions/s over ``measure`` seconds after
    ``warmup``, then the referee's per-decision time over ``latency`` seconds."""
    from chinchon.engine import RuleSet
    from chinchon_referee.config import Policies, TimeControl
    from chinchon_referee.referee import GameSpec, WriteGate

    rules = RuleSet(players=len(players))
    tc = TimeControl(per_move=30.0, bank=60.0)
    pol = Policies(reconnect_grace=30.0)
    stop = False
    terms: Counter[str] = Counter()
    games = [0]

    async def lane(i: int) -> None:
        j = 0
        while not stop:
            seats = list(players) if (i + j) % 2 == 0 else list(reversed(players))
            spec = GameSpec(game_id=f"L{lanes}-{i}-{j}", rules=rules, players=seats,
                            seed="bench-seed", deal_id=f"{i}/{j}", time_control=tc, policies=pol)
            out = await referee.play(spec)
            terms[out.termination] += 1
            games[0] += 1
            j += 1

    tasks = [asyncio.ensure_future(lane(i)) for i in range(lanes)]
    await asyncio.sleep(warmup)
    prof = start_profile(profile)
    pids = [os.getpid(), *bot_pids]
    gc_time = [0.0, 0.0, 0]

    def gc_clock(phase: str, info: dict[str, Any]) -> None:
        if phase == "start":
            gc_time[1] = time.perf_counter()
        else:
            gc_time[0] += time.perf_counter() - gc_time[1]
            gc_time[2] += 1

    gc.callbacks.append(gc_clock)
    d0, g0, t0 = referee.decisions, games[0], time.monotonic()
    cpu0 = [cpu_seconds(p) for p in pids]
    await asyncio.sleep(measure)
    d1, g1, t1 = referee.decisions, games[0], time.monotonic()
    cpu1 = [cpu_seconds(p) for p in pids]
    gc.callbacks.remove(gc_clock)
    if prof is not None:
        prof.disable()
        prof.dump_stats(profile)
    timing = _Timing()
    timing.install()
    tl0 = time.monotonic()
    await asyncio.sleep(latency)
    tl1 = time.monotonic()
    timing.remove()
    stop = True
    _, pending = await asyncio.wait(tasks, timeout=120)
    for t in pending:
        t.cancel()
    el = t1 - t0
    cpu = [(b - a) / el for a, b in zip(cpu0, cpu1, strict=True)]
    return {
        "lanes": lanes, "decisions": d1 - d0, "seconds": el, "rate": (d1 - d0) / el,
        "games": g1 - g0, "window": (t0, t1), "latency_window": (tl0, tl1),
        "server_cpu": cpu[0], "bot_cpu": cpu[1:], "referee_ms": [x * 1000 for x in timing.samples],
        "referee_to_discard_ms": [x * 1000 for x in timing.to_discard],
        "terminations": dict(terms), "unfinished": len(pending),
        "gc_seconds": gc_time[0], "gc_collections": gc_time[2],
        "write_gate": WriteGate.enabled,
    }

