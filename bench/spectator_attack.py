"""A hostile spectator of the web view, for bench_spectator.py and the tests of
docs/security.md#a-spectator. It speaks HTTP/1.1 by hand over raw sockets, so that it
can do what no well-behaved client does (never read, send a header a byte at a time),
and costs itself little.

    python bench/spectator_attack.py MODE BASE_URL --seconds S [options]

Modes:

* ``replays``: replays of finished games (random game, random view), ``--in-flight``
  requests at once (default 8);
* ``pages``: the finished games' list (random bot, offset) and the standings, at once;
* ``idle``: ``--connections`` connections that send nothing, opened again when closed;
* ``slowloris``: as many that send a request's head a few bytes every 2 s;
* ``streams``: ``--connections`` event streams (home, tournament and live tables) that
  never read a byte, opened again when the server ends them;
* ``unknown``: ``--requests`` requests for tournaments and games that do not exist.

``--spread`` gives each request (or connection) an ``X-Forwarded-For`` of its own: from
behind a ``--trusted-proxy``, every one is another viewer, so that no per-viewer bound
holds the attack back (only the global ones do). ``--nice N`` lowers the attacker's
priority first (it stands for another machine: on a 2-core box its own CPU would
otherwise be what is measured). At the end it prints one JSON line: the answers by
status, connections opened and those the server closed."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import random
import socket
import sys
import time
import urllib.parse
from collections import Counter
from collections.abc import Callable
from typing import Any

#: Set by SIGTERM: every loop ends, and the counts are printed.
_halt: list[bool] = [False]


def _going(stop: float) -> bool:
    return not _halt[0] and time.monotonic() < stop


class Target:
    def __init__(self, base: str, spread: bool, tid: str, rng: random.Random) -> None:
        u = urllib.parse.urlsplit(base)
        self.host, self.port = u.hostname or "127.0.0.1", u.port or 80
        self.spread, self.tid, self.rng = spread, tid, rng
        self.status: Counter[str] = Counter()
        self.opened = self.closed_by_server = 0
        self.games: list[tuple[str, int]] = []  # finished (id, seats)
        self.live: list[str] = []  # live tables' stream paths
        #: ``--until-ok N``: past ``--seconds`` and past a SIGTERM, go on until N answers
        #: were 200 (a machine too busy to answer that many in the time), for at most ten
        #: minutes more.
        self.until_ok = 0
        self.hard_stop = 0.0

    def short_of_ok(self) -> bool:
        return self.status["200"] < self.until_ok and time.monotonic() < self.hard_stop

    def xff(self) -> str:
        if not self.spread:
            return ""
        r = self.rng.getrandbits(24)
        return f"X-Forwarded-For: 10.{r >> 16}.{(r >> 8) & 255}.{r & 255}\r\n"

    def head(self, path: str, extra: str = "") -> bytes:
        return (f"GET {path} HTTP/1.1\r\nHost: {self.host}:{self.port}\r\n{self.xff()}{extra}"
                "Connection: keep-alive\r\n\r\n").encode()

    async def connect(self) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
        r, w = await asyncio.open_connection(self.host, self.port, limit=1 << 22)
        self.opened += 1
        return r, w


async def _response(r: asyncio.StreamReader) -> tuple[int, bytes]:
    """One response's status and body (its Content-Length, or chunked)."""
    head = await r.readuntil(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    status = int(lines[0].split()[1])
    headers = {k.lower(): v.strip() for k, _, v in (x.partition(":") for x in lines[1:] if x)}
    if "content-length" in headers:
        return status, await r.readexactly(int(headers["content-length"]))
    if headers.get("transfer-encoding") == "chunked":
        body = b""
        while True:
            size = int((await r.readuntil(b"\r\n")).strip(), 16)
            body += await r.readexactly(size + 2)
            if size == 0:
                return status, body
    return status, await r.read()


async def _requester(t: Target, paths: Any, stop: float) -> None:
    """One connection's worth of requests, back to back, reconnecting when closed."""
    conn: tuple[asyncio.StreamReader, asyncio.StreamWriter] | None = None
    while _going(stop) or t.short_of_ok():
        try:
            if conn is None:
                conn = await t.connect()
            r, w = conn
            w.write(t.head(paths()))
            status, _ = await _response(r)
            t.status[str(status)] += 1
            if status == 429:
                await asyncio.sleep(0.05)  # a token comes back soon; a client waits a little
        except (OSError, asyncio.IncompleteReadError, ValueError, IndexError):
            t.status["closed"] += 1
            if conn is not None:
                conn[1].close()
            conn = None
            await asyncio.sleep(0.01)
    if conn is not None:
        conn[1].close()


async def _finished(t: Target) -> None:
    """The latest finished games of the tournament (one page, as a spectator reads it)."""
    r, w = await t.connect()
    try:
        for offset in (0,):
            for _ in range(100):
                w.write(t.head(f"/api/t/{t.tid}/games?limit=200&offset={offset}"))
                status, body = await _response(r)
                if status != 429:
                    break
                await asyncio.sleep(0.5)  # another attacker of this client took the tokens
            if status != 200:
                break
            page = json.loads(body)
            t.games += [(g["id"], len(g["players"])) for g in page["games"]]
            if len(page["games"]) < 200:
                break
    finally:
        w.close()


#: TCP states (linux/tcp_states.h) of a connection its peer ended: CLOSE_WAIT, CLOSE.
_ENDED = (8, 7)


def _ended_by_server(sock: socket.socket) -> bool:
    """The server ended the connection (FIN or RST), seen without reading a byte."""
    try:
        info = sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_INFO, 8)
    except OSError:
        return True
    return info[0] in _ENDED


async def _holder(t: Target, stop: float, first: Callable[[], bytes | None], trickle: bool) -> None:
    """A connection held open and never read: idle (nothing sent), a request's head
    sent a line every 2 s (slowloris), or a request whose answer is never read; opened
    again when the server ends it."""
    loop = asyncio.get_running_loop()
    while _going(stop):
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setblocking(False)
        try:
            await loop.sock_connect(sock, (t.host, t.port))
            t.opened += 1
            data = first()
            if data:
                await loop.sock_sendall(sock, data)
            while _going(stop):
                await asyncio.sleep(2.0)
                if _ended_by_server(sock):
                    t.closed_by_server += 1
                    break
                if trickle:
                    await loop.sock_sendall(sock, b"X-a: b\r\n")
        except OSError:
            t.closed_by_server += 1
            await asyncio.sleep(0.2)
        finally:
            sock.close()


async def run(args: argparse.Namespace) -> dict[str, Any]:
    import signal

    asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, lambda: _halt.__setitem__(0, True))
    # From here a SIGTERM ends the attack with its counts: say so (a first line; the
    # counts are the last). Killed before this, a process would print nothing.
    print(json.dumps({"ready": args.mode}), flush=True)
    rng = random.Random(args.seed)
    t = Target(args.base, args.spread, args.tid, rng)
    stop = time.monotonic() + args.seconds
    t.until_ok, t.hard_stop = args.until_ok, stop + 600
    tasks: list[asyncio.Future[Any]] = []
    if args.mode == "replays":
        await _finished(t)
        if not t.games:
            raise SystemExit("no finished game to replay")

        def replay() -> str:
            gid, seats = rng.choice(t.games)
            view = rng.choice(["all", *map(str, range(seats))])
            return f"/api/g/{gid}/replay?view={view}"

        tasks = [asyncio.ensure_future(_requester(t, replay, stop)) for _ in range(args.in_flight)]
    elif args.mode == "pages":
        def page() -> str:
            if rng.random() < 0.5:
                return f"/api/t/{t.tid}/standings.json"
            bot = f"&bot=bot{rng.randrange(6)}" if rng.random() < 0.5 else ""
            return f"/api/t/{t.tid}/games?limit=200&offset={rng.randrange(0, 400)}{bot}"

        tasks = [asyncio.ensure_future(_requester(t, page, stop)) for _ in range(args.in_flight)]
    elif args.mode in ("idle", "slowloris", "streams"):
        def first() -> bytes | None:
            if args.mode == "idle":
                return None
            if args.mode == "slowloris":
                return f"GET / HTTP/1.1\r\nHost: {t.host}\r\n{t.xff()}".encode()
            path = rng.choice(["/api/home/events", f"/api/t/{t.tid}/events", *t.live])
            return t.head(path)

        if args.mode == "streams" and args.tid:
            with contextlib.suppress(Exception):
                r, w = await t.connect()
                w.write(t.head(f"/api/t/{args.tid}"))
                _, body = await _response(r)
                w.close()
                t.live = [f"/api/g/{g['id']}/live" for g in json.loads(body)["running"]]
        tasks = []
        for i in range(args.connections):
            tasks.append(asyncio.ensure_future(_holder(t, stop, first, args.mode == "slowloris")))
            if i % 50 == 49:
                await asyncio.sleep(0.01)
    elif args.mode == "unknown":
        n = [0]

        def unknown() -> str:
            n[0] += 1
            x = f"{rng.getrandbits(64):016x}"
            return rng.choice([f"/api/t/t-{x}", f"/api/t/t-{x}/games", f"/api/t/t-{x}/standings.json",
                               f"/api/g/g-{x}/replay", f"/api/g/g-{x}/record.json",
                               f"/api/g/g-{x}/table", f"/api/t/t-{x}/events"])

        async def until_done() -> None:
            conn = None
            while n[0] < args.requests and _going(stop):
                try:
                    if conn is None:
                        conn = await t.connect()
                    r, w = conn
                    w.write(t.head(unknown()))
                    status, _ = await _response(r)
                    t.status[str(status)] += 1
                    if status == 429:
                        await asyncio.sleep(0.05)
                except (OSError, asyncio.IncompleteReadError, ValueError):
                    t.status["closed"] += 1
                    conn = None
            if conn is not None:
                conn[1].close()

        tasks = [asyncio.ensure_future(until_done()) for _ in range(args.in_flight)]
    else:
        raise SystemExit(f"unknown mode {args.mode}")
    await asyncio.gather(*tasks, return_exceptions=True)
    return {"mode": args.mode, "status": dict(t.status), "opened": t.opened,
            "closed_by_server": t.closed_by_server, "games": len(t.games),
            "cpu": time.process_time()}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("mode")
    ap.add_argument("base")
    ap.add_argument("--tid", default="")
    ap.add_argument("--seconds", type=float, default=10.0)
    ap.add_argument("--in-flight", type=int, default=8)
    ap.add_argument("--connections", type=int, default=1000)
    ap.add_argument("--requests", type=int, default=60_000)
    ap.add_argument("--until-ok", type=int, default=0, metavar="N",
                    help="replays/pages: past --seconds (and a SIGTERM), go on until N answers were 200")
    ap.add_argument("--spread", action="store_true")
    ap.add_argument("--nice", type=int, default=0)
    ap.add_argument("--seed", default="attack")
    args = ap.parse_args(argv)
    if args.nice:
        os.nice(args.nice)
    import resource

    _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    out = asyncio.run(run(args))
    print(json.dumps(out), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
