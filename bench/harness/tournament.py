"""A tournament played to measure: an in-process referee and ``Director`` on a fresh store
(SQLite, or a new PostgreSQL database), its bots as processes (the fast raw bot of
``bench_server.py bot``, or any bot program), optionally watched through the web view.
bench_tournament.py, bench_lean.py and bench_web.py measure it."""

from __future__ import annotations

import asyncio
import json
import os
import resource
import signal
import sys
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any

from .measure import cpu_seconds

BENCH = Path(__file__).resolve().parents[1]
#: The fast raw bot's program (run, not imported).
BOT = BENCH / "bench_server.py"


#: Store methods not timed: closing, and the tracing hook.
NOT_TIMED = {"close", "trace"}


def time_store_calls(store: Any) -> list[float]:
    """Wrap every public method of ``store`` so that each call made on this (the loop's)
    thread adds its duration in seconds to the returned list."""
    loop_thread = threading.get_ident()
    spent: list[float] = []
    for name in dir(store):
        method = getattr(store, name, None)
        if name.startswith("_") or name in NOT_TIMED or not callable(method):
            continue

        def timed(*a: Any, _m: Any = method, **k: Any) -> Any:
            if threading.get_ident() != loop_thread:
                return _m(*a, **k)
            t = time.perf_counter()
            try:
                return _m(*a, **k)
            finally:
                spent.append(time.perf_counter() - t)

        setattr(store, name, timed)
    return spent


async def run_one(concurrency: int, gpp: int, bots: int, timeout: float,
                  progress: float = 60.0,
                  command: list[str] | None = None, tid: str | None = None,
                  postgres: str | None = None, watchers: int = 0) -> dict[str, Any]:
    """One tournament. ``command``: a bot program to run instead of the fast raw bot,
    started as ``command --target T --token K``, one process per stream (bench_lean.py
    runs SDK bots so). ``tid``: the tournament's id (the deals depend on it and the
    seed; None: a new random one). ``postgres``: a PostgreSQL URL whose user may create
    databases: the tournament is stored in a new database there instead of SQLite.
    ``watchers``: serve the web view (its own process, fed by this referee, as
    ``chinchon serve --http`` does) and keep that many event streams on it from another
    process (bench_web.py's watcher) while the games run."""
    from chinchon_referee.auth import TokenBook
    from chinchon_referee.config import RefereeConfig
    from chinchon_referee.director.director import Director
    from chinchon_referee.logs import configure
    from chinchon_referee.referee import Referee
    from chinchon_referee.service.server import start_server, tune_gc
    from chinchon_referee.storage import SqliteStore, open_store
    from chinchon_referee.tournament.model import Participant, TournamentSpec

    configure("warning", "text")
    with tempfile.TemporaryDirectory(prefix="bench-tournament-") as tmp:
        pg_db = None
        if postgres:
            from tests.support.postgres import create_database

            pg_db = create_database(postgres)
        store = open_store(pg_db) if pg_db else SqliteStore(str(Path(tmp) / "tournament.sqlite3"))
        tokens = TokenBook()
        spec = TournamentSpec(
            name=f"bench c={concurrency}",
            participants=tuple(Participant(f"bot{i}") for i in range(bots)),
            games_per_pairing=gpp, concurrency=concurrency, start="now", seed="bench-seed",
        )
        config = RefereeConfig(time_control=spec.time_control, policies=spec.policies)
        on_loop = time_store_calls(store)
        tune_gc()
        referee = Referee(config)
        director = Director(referee, store, tokens)
        tid, parts = director.create(spec, tid)
        ends: list[float] = []

        async def on_game(outcome: Any) -> None:
            ends.append(time.perf_counter())

        referee.listeners.append(on_game)
        server = await start_server("127.0.0.1:0", config, tokens, referee=referee)
        site = None
        if watchers:
            from chinchon_referee.web.spawn import WebContext, start_web

            site = await start_web(WebContext(referee=referee, db=store.target,
                                              max_subscribers=watchers + 10,
                                              max_per_peer=watchers + 10), "127.0.0.1", 0)
        watcher = None
        watch_cpu, watch_report = 0.0, ""
        children0 = _children_cpu()
        procs = []
        errs = open(Path(tmp) / "bots.log", "wb")  # noqa: SIM115 - closed below
        try:
            for p in parts:
                if command is not None:
                    for _ in range(concurrency):
                        procs.append(await asyncio.create_subprocess_exec(
                            *command, "--target", server.target, "--token", p.token,
                            stdout=asyncio.subprocess.DEVNULL, stderr=errs,
                        ))
                    continue
                procs.append(await asyncio.create_subprocess_exec(
                    sys.executable, str(BOT), "bot", "--target", server.target,
                    "--token", p.token, "--streams", str(concurrency),
                    "--max-seconds", str(timeout + 120),
                    stdout=asyncio.subprocess.DEVNULL, stderr=errs,
                ))
            deadline = time.monotonic() + 120
            while not all(referee.lobby.connected(b) >= concurrency for b in spec.bots):
                if time.monotonic() > deadline:
                    errs.flush()
                    raise RuntimeError(
                        "the bots did not connect within 120 s: "
                        f"{[(b, referee.lobby.connected(b)) for b in spec.bots]}, exit codes "
                        f"{[p.returncode for p in procs]}, stderr: "
                        f"{(Path(tmp) / 'bots.log').read_text()[-2000:]}")
                await asyncio.sleep(0.05)
            if site is not None:
                watcher = await asyncio.create_subprocess_exec(
                    sys.executable, str(BENCH / "bench_web.py"), "watch", site.url, tid,
                    str(watchers), str(timeout + 120), stderr=asyncio.subprocess.PIPE)
                await asyncio.sleep(1.0)  # the streams open before the games begin
            total = director.counts(tid)[0]
            on_loop.clear()  # from here: what playing the games costs the loop
            pids = [p.pid for p in procs]
            b0 = sum(cpu_seconds(pid) for pid in pids)
            c0 = time.process_time()
            t0 = time.perf_counter()

            async def report() -> None:
                while True:
                    await asyncio.sleep(progress)
                    el = time.perf_counter() - t0
                    print(f"    {len(ends)}/{total} games after {el:.0f} s "
                          f"({len(ends) / el:.2f} games/s), load {os.getloadavg()[0]:.1f}",
                          file=sys.stderr, flush=True)

            reporter = asyncio.ensure_future(report())
            try:
                await asyncio.wait_for(director.run(tid, force_start=True), timeout)
            finally:
                reporter.cancel()
            wall = time.perf_counter() - t0
            cpu = time.process_time() - c0
            loop_store = list(on_loop)
            tc = time.perf_counter()
            director.counts(tid)  # what every progress event costs once all games are stored
            counts_ms = (time.perf_counter() - tc) * 1000
        finally:
            if watcher is not None:
                watch_cpu = cpu_seconds(watcher.pid)
                watcher.terminate()
                _, err = await watcher.communicate()
                watch_report = err.decode(errors="replace").strip()
            if site is not None:
                await site.stop()
            await server.stop(1.0)
            for p in procs:
                try:
                    await asyncio.wait_for(p.wait(), 10)
                except TimeoutError:
                    p.send_signal(signal.SIGKILL)
                    await p.wait()
            errs.close()
        # The bots exit by themselves once dismissed at the end; their CPU is counted
        # when they are reaped, less what they used before the games began.
        bcpu = _children_cpu() - children0 - b0 - watch_cpu
        games = store.games(tid)
        terms: Counter[str] = Counter()
        timeouts = illegal = 0
        for g in games:
            terms[g.result.termination.value if g.result else g.status] += 1
            for s in g.stats or []:
                timeouts += s.get("timeouts", 0)
                illegal += s.get("illegal", 0)
        finished = sum(1 for g in games if g.status == "finished")
        record_json = sum(len(json.dumps(g.record, separators=(",", ":"))) for g in games
                          if g.record)
        store.close()
        db_bytes = (_pg_size(pg_db) if pg_db else
                    sum(f.stat().st_size for f in Path(tmp).glob("tournament.sqlite3*")))
    return {
        "concurrency": concurrency, "games_per_pairing": gpp, "games": finished,
        "scheduled": total, "wall": wall, "games_per_s": finished / wall,
        "decisions": referee.decisions, "decisions_per_s": referee.decisions / wall,
        "referee_cpu": cpu / wall, "bots_cpu": bcpu / wall,
        "terminations": dict(terms), "timeouts": timeouts, "illegal": illegal,
        "first_tenth_games_per_s": _rate(ends, t0, 0.0, 0.1),
        "last_tenth_games_per_s": _rate(ends, t0, 0.9, 1.0), "counts_ms_at_end": counts_ms,
        "db_bytes_per_game": db_bytes / max(finished, 1),
        "record_json_bytes_per_game": record_json / max(finished, 1),
        "store_on_loop_calls": len(loop_store), "watchers": watchers, "watch": watch_report,
        "store_on_loop_ms_max": max(loop_store, default=0.0) * 1000,
        "store_on_loop_ms_per_game": sum(loop_store) * 1000 / max(finished, 1),
    }


def _pg_size(url: str) -> int:
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        row = conn.execute("SELECT pg_total_relation_size('games') + "
                           "pg_total_relation_size('tournaments')").fetchone()
    return int(row[0]) if row else 0


def _children_cpu() -> float:
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ru.ru_utime + ru.ru_stime


def _rate(ends: list[float], t0: float, lo: float, hi: float) -> float:
    """Games/s over the games ranked lo..hi (fractions) by finishing time."""
    if len(ends) < 10:
        return float("nan")
    ends = sorted(ends)
    a, b = int(lo * len(ends)), int(hi * len(ends)) - 1
    start = t0 if a == 0 else ends[a - 1]
    return (b - a + 1) / max(1e-9, ends[b] - start)

