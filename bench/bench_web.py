"""Does watching slow the referee? Decisions/s of the same tournament with N web-view
watchers (Server-Sent Events clients in another process) against none, interleaved.

One in-process referee (``Referee`` + ``start_server`` + ``Director`` on a SQLite store in
a temporary folder) with the web view started on the same event loop, as ``chinchon
serve --http`` runs it; a round-robin of fast raw bots (``bench_server.py bot``: first
legal action). The watcher process keeps N event streams open: a fifth on the
tournament's events, the rest on the live tables of the games running now (it asks
``/api/t/T`` which games run and follows them as they change), reading every byte.
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
import tempfile
import time
from pathlib import Path
from typing import Any

# The bots are spawned while gRPC runs: its fork handlers would only print warnings.
os.environ.setdefault("GRPC_ENABLE_FORK_SUPPORT", "false")
HERE = Path(__file__).resolve().parent
BOT = HERE / "bench_server.py"


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


async def run_one(watchers: int, gpp: int, bots: int, seed: str) -> dict[str, Any]:
    from chinchon_referee.auth import TokenBook
    from chinchon_referee.config import RefereeConfig
    from chinchon_referee.director import Director
    from chinchon_referee.logs import configure
    from chinchon_referee.referee import Referee
    from chinchon_referee.server import start_server, tune_gc
    from chinchon_referee.storage import SqliteStore
    from chinchon_referee.tournament import Participant, TournamentSpec
    from chinchon_referee.web.app import WebContext
    from chinchon_referee.web.serving import start_web

    configure("warning", "text")
    with tempfile.TemporaryDirectory(prefix="bench-web-") as tmp:
        db = str(Path(tmp) / "tournament.sqlite3")
        store = SqliteStore(db)
        tokens = TokenBook()
        concurrency = 4
        spec = TournamentSpec(
            name="bench web", participants=tuple(Participant(f"bot{i}") for i in range(bots)),
            games_per_pairing=gpp, concurrency=concurrency, start="now", seed=seed)
        config = RefereeConfig(time_control=spec.time_control, policies=spec.policies)
        referee = Referee(config)
        director = Director(referee, store, tokens)
        tid, parts = director.create(spec)
        tune_gc()
        server = await start_server("127.0.0.1:0", config, tokens, referee=referee)
        site = await start_web(WebContext(referee=referee, db=db, max_subscribers=watchers + 10,
                                          max_per_peer=watchers + 10), "127.0.0.1", 0)
        procs = []
        watcher = None
        try:
            for p in parts:
                procs.append(await asyncio.create_subprocess_exec(
                    sys.executable, str(BOT), "bot", "--target", server.target,
                    "--token", p.token, "--streams", str(concurrency), "--max-seconds", "900",
                    stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.DEVNULL))
            deadline = time.monotonic() + 120
            while not all(referee.lobby.connected(b) >= concurrency for b in spec.bots):
                if time.monotonic() > deadline:
                    raise RuntimeError("the bots did not connect within 120 s")
                await asyncio.sleep(0.05)
            if watchers:
                watcher = await asyncio.create_subprocess_exec(
                    sys.executable, __file__, "watch", site.url, tid, str(watchers), "900",
                    stderr=asyncio.subprocess.PIPE)
                await asyncio.sleep(1.0)  # the streams open before the games begin
            d0, c0, t0 = referee.decisions, time.process_time(), time.perf_counter()
            await asyncio.wait_for(director.run(tid, force_start=True), 900)
            wall = time.perf_counter() - t0
            decisions, cpu = referee.decisions - d0, time.process_time() - c0
        finally:
            received = ""
            if watcher is not None:
                watcher.terminate()
                _, err = await watcher.communicate()
                received = err.decode(errors="replace").strip()
            await site.stop()
            await server.stop(1.0)
            for p in procs:
                try:
                    await asyncio.wait_for(p.wait(), 10)
                except TimeoutError:
                    p.kill()
                    await p.wait()
            store.close()
    return {"watchers": watchers, "wall": wall, "decisions": decisions, "received": received,
            "decisions_per_s": decisions / wall, "referee_cpu_per_decision_us":
            cpu / max(decisions, 1) * 1e6}


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
    from chinchon_referee.server import use_loop

    loop = use_loop("auto")
    print(f"{args.bots} bots, {args.games_per_pairing} games per pairing, {args.watchers} "
          f"watchers, {args.pairs} pairs; {loop} loop; {os.cpu_count()} cores; load average "
          f"{os.getloadavg()[0]:.2f}", flush=True)
    ratios, cpu_ratios = [], []
    for i in range(args.pairs):
        seed = f"bench-web-{i}"
        alone = asyncio.run(run_one(0, args.games_per_pairing, args.bots, seed))
        watched = asyncio.run(run_one(args.watchers, args.games_per_pairing, args.bots, seed))
        ratio = watched["decisions_per_s"] / alone["decisions_per_s"]
        ratios.append(ratio)
        cpu_ratios.append(watched["referee_cpu_per_decision_us"]
                          / alone["referee_cpu_per_decision_us"])
        print(f"  pair {i + 1}: none {alone['decisions_per_s']:,.0f} decisions/s "
              f"({alone['referee_cpu_per_decision_us']:.0f} us CPU each), "
              f"{args.watchers} watchers {watched['decisions_per_s']:,.0f} decisions/s "
              f"({watched['referee_cpu_per_decision_us']:.0f} us CPU each; "
              f"{watched['received']}): ratio {ratio:.3f}",
              flush=True)
    print(f"watched / none, decisions/s: median {statistics.median(ratios):.3f} "
          f"(min {min(ratios):.3f}, max {max(ratios):.3f}); the referee's CPU per decision: "
          f"median {statistics.median(cpu_ratios):.3f} (min {min(cpu_ratios):.3f}, max "
          f"{max(cpu_ratios):.3f}); load average {os.getloadavg()[0]:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
