"""Does watching slow the referee? Decisions/s of the same tournament with N web-view
watchers (Server-Sent Events clients in another process) against none, interleaved.

The tournament is bench_tournament.py's (``harness.tournament.run_one``: an in-process referee, a SQLite
store in a temporary folder, fast raw bots) with, for the watched run, the web view
started as ``chinchon serve --http`` starts it (a process of its own, fed by the
referee: web/spawn.py). The watcher
process keeps N event streams open: a fifth on the tournament's events, the rest on
the live tables of the games running now (it asks ``/api/t/T`` which games run and
follows them as they change), reading every byte.
Each repetition runs the tournament without watchers, then with them (same seed, same
games), and the ratio of decisions/s is taken within the pair.

    .venv/bin/python bench/bench_web.py                      # 50 watchers, 3 pairs
    .venv/bin/python bench/bench_web.py --watchers 50 --pairs 5 --games-per-pairing 6
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from harness.tournament import run_one

# The bots are spawned while gRPC runs: its fork handlers would only print warnings.
os.environ.setdefault("GRPC_ENABLE_FORK_SUPPORT", "false")


async def watch(base: str, tid: str, n: int, seconds: float) -> None:
    """The watcher process: ``n`` event streams on ``base`` until ``seconds`` pass (or
    SIGTERM); says on stderr how many bytes it read."""
    import signal

    import aiohttp

    stop = asyncio.Event()
    asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, stop.set)

    received = [0]

    async def follow(session: aiohttp.ClientSession, path: str) -> None:
        try:
            async with session.get(base + path, timeout=aiohttp.ClientTimeout(total=None)) as r:
                async for chunk in r.content.iter_any():
                    received[0] += len(chunk)
        except (aiohttp.ClientError, asyncio.CancelledError):
            pass

    async with aiohttp.ClientSession() as session:
        tasks: list[asyncio.Task[None]] = []
        on_tournament = max(1, n // 5)
        tasks += [asyncio.ensure_future(follow(session, f"api/t/{tid}/events"))
                  for _ in range(on_tournament)]
        live: dict[int, asyncio.Task[None]] = {}  # watcher slot -> its stream
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline and not stop.is_set():
            async with session.get(base + f"api/t/{tid}") as r:
                running = [g["id"] for g in (await r.json()).get("running", [])]
            for slot in range(n - on_tournament):
                t = live.get(slot)
                if (t is None or t.done()) and running:
                    gid = running[slot % len(running)]
                    live[slot] = asyncio.ensure_future(follow(session, f"api/g/{gid}/live"))
            try:  # the watcher's own pace, not the referee's
                await asyncio.wait_for(stop.wait(), 0.5)
            except TimeoutError:
                pass
        for t in [*tasks, *live.values()]:
            t.cancel()
        await asyncio.gather(*tasks, *live.values(), return_exceptions=True)
    print(f"{received[0]} bytes read by the watchers", file=sys.stderr, flush=True)


def _cpu_per_decision_us(r: dict[str, Any]) -> float:
    return float(r["referee_cpu"] * r["wall"] / max(r["decisions"], 1) * 1e6)


def main() -> int:
    if len(sys.argv) > 1 and sys.argv[1] == "watch":
        _, _, base, tid, n, seconds = sys.argv
        asyncio.run(watch(base, tid, int(n), float(seconds)))
        return 0
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--watchers", type=int, default=50)
    ap.add_argument("--pairs", type=int, default=3, help="repetitions of (none, watched)")
    ap.add_argument("--games-per-pairing", type=int, default=4)
    ap.add_argument("--bots", type=int, default=6)
    args = ap.parse_args()
    from chinchon_referee.service.server import use_loop

    loop = use_loop("auto")
    print(f"{args.bots} bots, {args.games_per_pairing} games per pairing, {args.watchers} "
          f"watchers, {args.pairs} pairs; {loop} loop; {os.cpu_count()} cores; load average "
          f"{os.getloadavg()[0]:.2f}", flush=True)
    ratios, cpu_ratios = [], []
    for i in range(args.pairs):
        tid = f"bench-web-{i}"  # the same deals for both runs of a pair
        alone = asyncio.run(run_one(4, args.games_per_pairing, args.bots, 900, 3600, tid=tid))
        watched = asyncio.run(run_one(4, args.games_per_pairing, args.bots, 900, 3600, tid=tid,
                                      watchers=args.watchers))
        ratio = watched["decisions_per_s"] / alone["decisions_per_s"]
        ratios.append(ratio)
        cpu_alone, cpu_watched = _cpu_per_decision_us(alone), _cpu_per_decision_us(watched)
        cpu_ratios.append(cpu_watched / cpu_alone)
        print(f"  pair {i + 1}: none {alone['decisions_per_s']:,.0f} decisions/s "
              f"({cpu_alone:.0f} us CPU each), {args.watchers} watchers "
              f"{watched['decisions_per_s']:,.0f} decisions/s ({cpu_watched:.0f} us CPU each; "
              f"{watched['watch']}): ratio {ratio:.3f}", flush=True)
    print(f"watched / none, decisions/s: median {statistics.median(ratios):.3f} "
          f"(min {min(ratios):.3f}, max {max(ratios):.3f}); the referee's CPU per decision: "
          f"median {statistics.median(cpu_ratios):.3f} (min {min(cpu_ratios):.3f}, max "
          f"{max(cpu_ratios):.3f}); load average {os.getloadavg()[0]:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
