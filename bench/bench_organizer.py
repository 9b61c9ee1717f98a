"""Do the organizer's calls slow the games? An honest game's decisions/s while the
organizer's clients load the referee, against a control in the same run.

One ``chinchon serve --metrics`` (SQLite in a temporary folder) plays a round-robin of
6 fast raw bots (bench_spectator.py's honest bots: 2 processes, 4 streams per bot,
concurrency 4) that never ends while the bench runs. Its database also holds a
finished tournament of 10,000 games (real records, made once and cached under
``--cache``). The loads, each from one client process at nice 19 (it stands for other
machines, as in bench_spectator.py):

* ``a``: three clients loop on ExportRecords (the whole stream, read as bytes),
  GetStandings and ListGames (page after page) of the 10,000-game tournament;
* ``b``: one client loops on an 80,360-game CreateTournament (41 bots, manual start);
* ``c``: eight clients scrape the referee's ``--metrics`` address at full speed;
* ``all``: the three at once.

Each load runs twice per round: aimed at the referee, and aimed at the CONTROL, a
plain server in a process of its own (nice 10, as the referee's organizer worker)
answering the same calls with bytes the referee gave (canned: the same sizes), so that
the ratio counts only the referee's share of the cost; the honest games run on the
referee all along. The windows of a round alternate which goes first. Printed: each
load's ratio (decisions/s under the load / under its control), the median over the
rounds, and the quiet rate.

    python bench/bench_organizer.py --rounds 3            # ~10 minutes
    python bench/bench_organizer.py --rounds 1 --window 3 --settle 1 --games 600   # a check
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from harness.measure import cpu_seconds, finish, machine  # noqa: E402
from harness.spectated import BOTS, honest_bots, measured, stop_served, token  # noqa: E402

ADMIN = "bench-organizer-admin-token"
SERVICE = "/chinchon.v1.TournamentService/"
MD = (("authorization", f"Bearer {ADMIN}"),)
#: The big tournament: 5 bots, 10 pairings (``--games`` / 10 games each).
BIG_BOTS = [f"p{i}" for i in range(5)]
#: The declaration of load b: 41 bots, 820 pairings of 98 games.
CREATE_BOTS, CREATE_GAMES = 41, 98
#: Records of the export the control sends (cycled to the tournament's count).
CANNED_RECORDS = 200
LOADS = ("a", "b", "c", "all")
GRPC_OPTIONS = [("grpc.max_receive_message_length", 64 << 20),
                ("grpc.max_send_message_length", 64 << 20)]


# -- the 10,000-game tournament ----------------------------------------------------------


def prepared(cache: Path, games: int) -> Path:
    """A database holding a finished round-robin of ``games`` games (real records of
    40 engine games, repeated), made once in ``cache``."""
    path = cache / f"organizer-{games}.sqlite3"
    if path.exists():
        return path
    from dataclasses import asdict

    from chinchon.engine import Outcome, play_game
    from chinchon.strategies import BUILTIN_BOTS
    from chinchon_referee.auth import TokenBook
    from chinchon_referee.director.declare import declare
    from chinchon_referee.referee.seats import SeatStats
    from chinchon_referee.storage import SqliteStore
    from chinchon_referee.tournament.model import TournamentSpec
    from chinchon_referee.vocabulary import TournamentStatus

    cache.mkdir(parents=True, exist_ok=True)
    part = path.with_suffix(".part")
    part.unlink(missing_ok=True)
    store = SqliteStore(str(part))
    store._db.execute("PRAGMA synchronous=OFF")  # a bench's fixture: no fsync per row
    spec = TournamentSpec.from_dict({
        "name": "bench organizer", "table_size": 2, "games_per_pairing": games // 10,
        "start": "manual", "seed": "bench-organizer",
        "participants": [{"name": b} for b in BIG_BOTS]})
    tid, _ = declare(store, TokenBook(ADMIN), spec)
    rules = spec.rules
    templates: list[dict[str, Any]] = []
    for i, row in enumerate(store.games(tid)):
        if len(templates) < 40:
            bots = [BUILTIN_BOTS[("random", "greedy")[(i + s) % 2]](s) for s in range(2)]
            _, rec = play_game(rules, bots, "bench-organizer", row.deal_id, row.players,
                               game_id=row.id)
            templates.append(json.loads(json.dumps(rec)))
        record = dict(templates[i % len(templates)], game_id=row.id)
        row.record = record
        row.result = Outcome.from_json(record["result"])
        row.stats = [asdict(SeatStats()) for _ in row.players]
        store.finish_game(row)
    store.set_tournament_status(tid, TournamentStatus.FINISHED)
    store.close()
    part.rename(path)
    return path


def big_tid(db: Path) -> str:
    import sqlite3

    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        return str(con.execute("SELECT id FROM tournaments WHERE name = 'bench organizer'")
                   .fetchone()[0])
    finally:
        con.close()


def create_request() -> bytes:
    from chinchon.v1 import tournament_pb2 as tpb

    return tpb.CreateTournamentRequest(spec=tpb.TournamentSpec(
        name="bench organizer declaration", table_size=2, games_per_pairing=CREATE_GAMES,
        participants=[tpb.Participant(name=f"c{i}") for i in range(CREATE_BOTS)],
        start=tpb.TOURNAMENT_START_MANUAL)).SerializeToString()


# -- the load clients (a process of their own) ---------------------------------------------


async def load(target: str, metrics: str, kinds: list[str], tid: str) -> dict[str, Any]:
    """The organizer's clients of ``kinds`` against ``target`` (gRPC) and ``metrics``
    (HTTP), until SIGTERM; their counts."""
    import aiohttp
    import grpc
    from chinchon.v1 import tournament_pb2 as tpb

    stop = asyncio.Event()
    asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, stop.set)
    counts: Counter[str] = Counter()
    ch = grpc.aio.insecure_channel(target, options=GRPC_OPTIONS)
    by_tid = tpb.GetStandingsRequest(tournament_id=tid).SerializeToString()
    export = tpb.ExportRecordsRequest(tournament_id=tid).SerializeToString()
    create = create_request()

    async def looped(name: str, once: Any) -> None:
        while not stop.is_set():
            try:
                await once()
                counts[name] += 1
            except grpc.aio.AioRpcError as e:
                counts[f"{name}:{e.code().name}"] += 1
                await asyncio.sleep(0.05)
            except aiohttp.ClientError as e:
                counts[f"{name}:{type(e).__name__}"] += 1
                await asyncio.sleep(0.05)

    async def exports() -> None:
        async for _ in ch.unary_stream(SERVICE + "ExportRecords")(export, metadata=MD):
            counts["export_messages"] += 1

    async def standings() -> None:
        await ch.unary_unary(SERVICE + "GetStandings")(by_tid, metadata=MD)

    page = [""]

    async def games() -> None:
        req = tpb.ListGamesRequest(tournament_id=tid, page_size=100, page_token=page[0])
        got = tpb.ListGamesResponse.FromString(
            await ch.unary_unary(SERVICE + "ListGames")(req.SerializeToString(), metadata=MD))
        page[0] = got.next_page_token

    async def creates() -> None:
        await ch.unary_unary(SERVICE + "CreateTournament")(create, metadata=MD, timeout=600)

    session = aiohttp.ClientSession()

    async def scrape() -> None:
        async with session.get(metrics) as r:
            await r.read()
            counts["metrics_bytes"] += r.content_length or 0

    tasks = []
    if "a" in kinds:
        tasks += [looped("exports", exports), looped("standings", standings),
                  looped("list_pages", games)]
    if "b" in kinds:
        tasks.append(looped("creates", creates))
    if "c" in kinds:
        tasks += [looped("scrapes", scrape) for _ in range(8)]
    running = [asyncio.ensure_future(t) for t in tasks]
    print(json.dumps({"ready": True}), flush=True)
    await stop.wait()
    for t in running:
        t.cancel()
    await asyncio.gather(*running, return_exceptions=True)
    await session.close()
    await ch.close(grace=None)
    return dict(counts)


def load_main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(prog="bench_organizer.py load")
    ap.add_argument("--target", required=True)
    ap.add_argument("--metrics", required=True)
    ap.add_argument("--kinds", required=True)
    ap.add_argument("--tid", required=True)
    ap.add_argument("--nice", type=int, default=19)
    a = ap.parse_args(argv)
    os.nice(a.nice)
    print(json.dumps(asyncio.run(load(a.target, a.metrics, a.kinds.split(","), a.tid))),
          flush=True)
    return 0


# -- the control: a plain server answering with canned bytes -------------------------------


async def plain(canned: Path) -> None:
    """TournamentService's four calls and /metrics, answered from ``canned``."""
    import grpc
    from aiohttp import web

    got = json.loads((canned / "sizes.json").read_text())
    blobs = {k: (canned / k).read_bytes() for k in ("GetStandings", "ListGames",
                                                     "CreateTournament", "metrics")}
    raw = (canned / "export").read_bytes()
    records, at = [], 0
    for n in got["export"]:
        records.append(raw[at:at + n])
        at += n
    last, records = records[-1], records[:-1]
    total = int(got["records"])

    async def unary(name: str) -> Any:
        async def answer(request: bytes, context: Any) -> bytes:
            return blobs[name]
        return grpc.unary_unary_rpc_method_handler(answer)

    async def export(request: bytes, context: Any) -> Any:
        for i in range(total):
            yield records[i % len(records)]
        yield last

    handlers = {n: await unary(n) for n in ("GetStandings", "ListGames", "CreateTournament")}
    handlers["ExportRecords"] = grpc.unary_stream_rpc_method_handler(export)
    server = grpc.aio.server(options=GRPC_OPTIONS)
    server.add_generic_rpc_handlers(
        (grpc.method_handlers_generic_handler("chinchon.v1.TournamentService", handlers),))
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()

    async def metrics(request: web.Request) -> web.Response:
        return web.Response(body=blobs["metrics"], content_type="text/plain")

    app = web.Application()
    app.router.add_get("/metrics", metrics)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    http_port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    print(json.dumps({"grpc": port, "http": http_port}), flush=True)
    stop = asyncio.Event()
    asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, stop.set)
    await stop.wait()
    await runner.cleanup()
    await server.stop(None)


def plain_main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(prog="bench_organizer.py plain")
    ap.add_argument("--canned", required=True)
    ap.add_argument("--nice", type=int, default=10)
    a = ap.parse_args(argv)
    os.nice(a.nice)
    asyncio.run(plain(Path(a.canned)))
    return 0


# -- the referee, its games, the canned answers ----------------------------------------------


class Referee:
    """``chinchon serve --metrics`` on a copy of the prepared database, its honest
    tournament and bots."""

    def __init__(self, tmp: Path, db: Path, extra: list[str]) -> None:
        self.tmp, self.db = tmp, db
        bots_file = tmp / "bots.toml"
        bots_file.write_text("[bots]\n" + "".join(f'{b} = "{token(b)}"\n' for b in BOTS))
        (tmp / "admin.token").write_text(ADMIN)
        os.chmod(tmp / "admin.token", 0o600)
        self.err = open(tmp / "serve.err", "wb")  # noqa: SIM115 - closed in stop()
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "chinchon_referee.cli", "serve", "--address", "127.0.0.1:0",
             "--db", str(db), "--bots-file", str(bots_file), "--metrics", "127.0.0.1:0",
             "--admin-token-file", str(tmp / "admin.token"), "--log-level", "warning", *extra],
            stdout=subprocess.PIPE, stderr=self.err, text=True,
            env={**os.environ, "PYTHONUNBUFFERED": "1"})
        assert self.proc.stdout is not None
        self.metrics = ""
        self.organizer_pid = 0
        while True:
            line = self.proc.stdout.readline()
            if not line:
                raise RuntimeError(f"serve ended: {(tmp / 'serve.err').read_text()[-2000:]}")
            ev = json.loads(line) if line.startswith("{") else {}
            if ev.get("event") == "metrics":
                self.metrics = ev["url"]
            if ev.get("event") == "organizer":
                self.organizer_pid = int(ev["pid"])
            if ev.get("event") == "listening":
                self.port, self.pid = int(ev["port"]), int(ev["pid"])
                break
        self.target = f"127.0.0.1:{self.port}"
        self._create_honest()
        self.bots = honest_bots(self.target, tmp)

    def _create_honest(self) -> None:
        import grpc
        from chinchon.v1 import tournament_pb2 as tpb
        from chinchon.v1 import tournament_pb2_grpc as tpb_grpc

        spec = tpb.TournamentSpec(
            name="bench honest", participants=[tpb.Participant(name=b, token=token(b)) for b in BOTS],
            table_size=2, games_per_pairing=6000, concurrency=4,
            start=tpb.TOURNAMENT_START_WHEN_CONNECTED, seed="bench-organizer-honest")
        with grpc.insecure_channel(self.target) as ch:
            tpb_grpc.TournamentServiceStub(ch).CreateTournament(
                tpb.CreateTournamentRequest(spec=spec), metadata=MD, timeout=120)

    def organizer_cpu(self) -> float:
        """The CPU seconds of the organizer's worker (its pid read from /proc)."""
        try:
            kids = Path(f"/proc/{self.pid}/task/{self.pid}/children").read_text().split()
        except OSError:
            return 0.0
        total = 0.0
        for k in kids:
            try:
                cmd = Path(f"/proc/{k}/cmdline").read_bytes()
            except OSError:
                continue
            if b"organizer_process" in cmd:
                total += cpu_seconds(int(k))
        return total

    def wait_idle(self, limit: float = 180.0) -> None:
        """Until the organizer's worker is idle (under 1% of a core for 1 s, and no
        schedule half written), at most ``limit`` s: a call its client left (a
        declaration) is not counted in the next window."""
        import sqlite3

        end = time.monotonic() + limit
        before = self.organizer_cpu()
        while time.monotonic() < end:
            time.sleep(1.0)
            now = self.organizer_cpu()
            if now - before < 0.01:
                con = sqlite3.connect(f"file:{self.db}?mode=ro", uri=True, timeout=30)
                try:
                    (orphans,), = con.execute(
                        "SELECT COUNT(*) FROM games WHERE tournament_id IS NOT NULL AND "
                        "tournament_id NOT IN (SELECT id FROM tournaments)").fetchall()
                finally:
                    con.close()
                if not orphans:
                    return
            before = now

    def stop(self) -> list[dict[str, Any]]:
        return stop_served(self.proc, self.err, self.bots, self.tmp, 60)


def can(ref: Referee, tid: str, folder: Path) -> None:
    """The referee's answers to the loads' calls, as bytes, for the control."""
    import urllib.request

    import grpc
    from chinchon.v1 import tournament_pb2 as tpb

    folder.mkdir()
    with grpc.insecure_channel(ref.target, options=GRPC_OPTIONS) as ch:
        by_tid = tpb.GetStandingsRequest(tournament_id=tid).SerializeToString()
        for name, req in (("GetStandings", by_tid),
                          ("ListGames", tpb.ListGamesRequest(tournament_id=tid, page_size=100)
                           .SerializeToString()),
                          ("CreateTournament", create_request())):
            (folder / name).write_bytes(
                ch.unary_unary(SERVICE + name)(req, metadata=MD, timeout=600))
        kept, last, n = [], b"", 0
        for msg in ch.unary_stream(SERVICE + "ExportRecords")(
                tpb.ExportRecordsRequest(tournament_id=tid).SerializeToString(), metadata=MD,
                timeout=600):
            if len(kept) < CANNED_RECORDS:
                kept.append(msg)
            last, n = msg, n + 1
    kept.append(last)
    (folder / "export").write_bytes(b"".join(kept))
    with urllib.request.urlopen(ref.metrics, timeout=60) as r:
        (folder / "metrics").write_bytes(r.read())
    (folder / "sizes.json").write_text(json.dumps({"export": [len(m) for m in kept],
                                                   "records": n - 1}))


class Plain:
    def __init__(self, canned: Path) -> None:
        self.proc = subprocess.Popen([sys.executable, __file__, "plain", "--canned", str(canned)],
                                     stdout=subprocess.PIPE, text=True)
        assert self.proc.stdout is not None
        ports = json.loads(self.proc.stdout.readline())
        self.target = f"127.0.0.1:{ports['grpc']}"
        self.metrics = f"http://127.0.0.1:{ports['http']}/metrics"

    def stop(self) -> None:
        self.proc.send_signal(signal.SIGTERM)
        self.proc.wait(30)


# -- the windows ------------------------------------------------------------------------------


def window(ref: Referee, target: str, metrics: str, kind: str, tid: str,
           args: argparse.Namespace) -> dict[str, Any]:
    """One load of ``kind`` against ``target`` (or quiet), measured for ``args.window`` s."""
    proc = None
    if kind != "quiet":
        kinds = "a,b,c" if kind == "all" else kind
        proc = subprocess.Popen([sys.executable, __file__, "load", "--target", target,
                                 "--metrics", metrics, "--kinds", kinds, "--tid", tid],
                                stdout=subprocess.PIPE, text=True)
        assert proc.stdout is not None
        if not proc.stdout.readline().startswith('{"ready"'):
            raise RuntimeError(f"the load {kind} did not start")
        time.sleep(args.settle)
    t0, cpu0, org0 = time.monotonic(), cpu_seconds(ref.pid), ref.organizer_cpu()
    time.sleep(args.window)
    t1, cpu1, org1 = time.monotonic(), cpu_seconds(ref.pid), ref.organizer_cpu()
    counts: dict[str, Any] = {}
    if proc is not None:
        proc.send_signal(signal.SIGTERM)
        out, _ = proc.communicate(timeout=120)
        lines = out.strip().splitlines()
        counts = json.loads(lines[-1]) if lines else {}
        ref.wait_idle()  # a declaration its client left goes on in the worker: it ends
        time.sleep(args.settle)
    return {"kind": kind, "a": t0, "b": t1, "calls": counts,
            "referee_cpu": (cpu1 - cpu0) / (t1 - t0), "organizer_cpu": (org1 - org0) / (t1 - t0)}


def run(args: argparse.Namespace) -> dict[str, Any]:
    tmp = Path(tempfile.mkdtemp(prefix="bench-organizer-"))
    try:
        db = tmp / "db.sqlite3"
        shutil.copy(prepared(Path(args.cache), args.games), db)
        tid = big_tid(db)
        ref = Referee(tmp, db, [])
        plain_srv = None
        windows: list[dict[str, Any]] = []
        try:
            can(ref, tid, tmp / "canned")
            plain_srv = Plain(tmp / "canned")
            time.sleep(args.settle)
            for rnd in range(args.rounds):
                windows.append({**window(ref, "", "", "quiet", tid, args), "round": rnd})
                for kind in args.loads.split(","):
                    pair = [("control", plain_srv.target, plain_srv.metrics),
                            ("referee", ref.target, ref.metrics)]
                    for side, target, metrics in (pair if rnd % 2 == 0 else pair[::-1]):
                        w = window(ref, target, metrics, kind, tid, args)
                        windows.append({**w, "round": rnd, "side": side})
                        print(f"  round {rnd + 1}: {kind} on the {side} done", flush=True)
        finally:
            if plain_srv is not None:
                plain_srv.stop()
            bots = ref.stop()
        for w in windows:
            w.update(measured(bots, w["a"], w["b"]))
        return {"windows": windows, "summary": summary(windows), "machine": machine(),
                "games": args.games, "load_average": os.getloadavg()}
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def summary(windows: list[dict[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {"quiet": statistics.median(
        w["decisions_per_s"] for w in windows if w["kind"] == "quiet")}
    for kind in LOADS:
        ratios = []
        for rnd in sorted({w["round"] for w in windows}):
            got = {w["side"]: w for w in windows if w["kind"] == kind and w["round"] == rnd}
            if len(got) == 2 and got["control"]["decisions_per_s"]:
                ratios.append(got["referee"]["decisions_per_s"] / got["control"]["decisions_per_s"])
        if ratios:
            out[kind] = {"ratios": ratios, "median": statistics.median(ratios)}
    return out


NAMES = {"a": "(a) ExportRecords + GetStandings + ListGames loops",
         "b": "(b) an 80,360-game CreateTournament, again and again",
         "c": "(c) 8 clients scraping --metrics", "all": "(a)+(b)+(c) together"}


def report(out: dict[str, Any]) -> None:
    s = out["summary"]
    print(f"machine: {out['machine']}; load average at the end (1, 5, 15 min): "
          f"{', '.join(f'{x:.1f}' for x in out['load_average'])}")
    print(f"quiet: {s['quiet']:.0f} decisions/s (median)")
    for kind in LOADS:
        if kind in s:
            per = " ".join(f"{r:.2f}" for r in s[kind]["ratios"])
            print(f"ratio {kind}: {s[kind]['median']:.2f}x of control  "
                  f"[{NAMES[kind]}; rounds: {per}]")
    for w in out["windows"]:
        if w["kind"] != "quiet":
            print(f"  r{w['round'] + 1} {w['kind']:>4} {w['side']:>8}: "
                  f"{w['decisions_per_s']:7.0f} dec/s  referee {w['referee_cpu']:.2f} CPU  "
                  f"worker {w['organizer_cpu']:.2f} CPU  calls {w['calls']}")


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["load"]:
        return load_main(argv[1:])
    if argv[:1] == ["plain"]:
        return plain_main(argv[1:])
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--window", type=float, default=15.0, help="seconds measured per window")
    ap.add_argument("--settle", type=float, default=2.0,
                    help="seconds between a load's start and its window, and after it")
    ap.add_argument("--loads", default=",".join(LOADS))
    ap.add_argument("--games", type=int, default=10000,
                    help="games of the finished tournament of load a (a multiple of 10)")
    ap.add_argument("--cache", default=str(Path.home() / ".cache" / "chinchon-bench"),
                    help="where the prepared database is kept between runs")
    ap.add_argument("--json", help="write every window's figures here")
    args = ap.parse_args(argv)
    out = run(args)
    return finish(out, args.json, report)


if __name__ == "__main__":
    sys.exit(main())
