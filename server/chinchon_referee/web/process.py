"""The web view's own process: the pages, fed by the referee, never on its loop.

``chinchon serve --http`` (and ``chinchon tournament run``) start it as a child
(spawn.py): ``python -m chinchon_referee.web.process --feed-fd N --listen-fd M``. It
lowers its own priority (``nice`` +10: its CPU yields to the referee and the bots),
raises its open-file limit, reads its settings from the feed's first message, serves
on the listening socket it inherited (bound by the referee, so a restart keeps the
port) and ends when its feed ends (the referee stopped, or died). Its connections are
in its own file-descriptor table: no spectator can take one the referee needs.

``chinchon web`` (command.py) runs the same process apart, connecting to a referee's
feed socket (``chinchon serve --web-feed PATH``) and again whenever the referee comes
back. ``chinchon replay --view`` serves records in its own process the same way
(:func:`serve_local`), with no feed."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import signal
import socket
import sys
from collections.abc import Sequence
from typing import Any

from ..host.fdlimit import raise_nofile
from ..logs import configure, get_logger
from .app import AppConfig, WebApp
from .feedwire import LINE_LIMIT, line
from .local_logs import LocalLogs
from .mirror import Mirror
from .serving import RunningWeb, Site, bind
from .settings import NICE, WebSettings
from .weblog import route_foreign_logs

log = get_logger("web")
#: Seconds a child waits for its feed's first message.
HELLO_TIMEOUT = 30.0
#: Seconds between two tries to reach a referee's feed socket (``chinchon web``).
RETRY = 1.0


class LocalWeb(RunningWeb):
    """The web view served by this process."""

    def __init__(self, app: WebApp, site: Site, host: str) -> None:
        super().__init__(host, site.port, os.getpid())
        self.app, self.site = app, site

    async def stop(self) -> None:
        await self.app.close()
        await self.site.stop()


async def serve_local(config: AppConfig, mirror: Mirror | None, sock: socket.socket) -> LocalWeb:
    """Serve the web view on the listening ``sock`` from the running event loop."""
    app = WebApp(config, mirror)
    site = Site(app.app(), app.tracker, sock)
    await site.start()
    app.start_watching()
    log.info("web_listening", host=config.bound_host, port=site.port,
             max_connections=app.tracker.cap)
    return LocalWeb(app, site, config.bound_host)


async def start_records_view(records: dict[str, dict[str, Any]], host: str, port: int,
                             logs: LocalLogs | None = None) -> LocalWeb:
    """``chinchon replay --view``: records only, here, with the stderr files kept beside
    them (``logs``). OSError if the address is taken."""
    config = AppConfig(records=records, local_logs=logs or LocalLogs(), bound_host=host)
    return await serve_local(config, None, bind(host, port))


def lower_priority(by: int = NICE) -> None:
    """Yield the CPU to the referee and the bots (``nice``); never fails the process."""
    with contextlib.suppress(OSError, AttributeError):
        os.nice(by)


def use_uvloop() -> None:
    try:
        import uvloop
    except ImportError:
        return
    asyncio.set_event_loop_policy(uvloop.EventLoopPolicy())


async def _child(feed_fd: int, listen_fd: int) -> int:
    feed = socket.socket(fileno=feed_fd)
    listen = socket.socket(fileno=listen_fd)
    listen.setblocking(False)
    reader, writer = await asyncio.open_connection(sock=feed, limit=LINE_LIMIT)
    mirror = Mirror()
    following = asyncio.ensure_future(mirror.follow(reader))
    await asyncio.wait((following, mirror.first), timeout=HELLO_TIMEOUT,
                       return_when=asyncio.FIRST_COMPLETED)
    if not mirror.first.done():
        print("web view: no settings from the referee", file=sys.stderr, flush=True)
        following.cancel()
        return 2
    hello = mirror.first.result()
    logging_of = hello.get("log", {})
    configure(logging_of.get("level", "info"), logging_of.get("format", "json"))
    route_foreign_logs(logging_of.get("level", "info"))
    settings = WebSettings.from_json(hello.get("web", {}))
    config = AppConfig(db=hello.get("db"), settings=settings, bound_host=hello.get("host", "127.0.0.1"))
    web = await serve_local(config, mirror, listen)
    writer.write(line({"k": "ready", "pid": os.getpid()}))
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    loop.add_signal_handler(signal.SIGTERM, stop.set)
    stopping = asyncio.ensure_future(stop.wait())
    await asyncio.wait((following, stopping), return_when=asyncio.FIRST_COMPLETED)
    stopping.cancel()
    following.cancel()
    await web.stop()
    writer.close()
    return 0


async def run_apart(feed_path: str, config: AppConfig, sock: socket.socket) -> int:
    """``chinchon web``: serve on ``sock``, fed by the referee at ``feed_path`` whenever
    it is there, until SIGINT or SIGTERM."""
    mirror = Mirror()
    web = await serve_local(config, mirror, sock)
    print(json.dumps({"event": "web", "url": web.url, "port": web.port, "pid": web.pid}), flush=True)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    away_said = False
    while not stop.is_set():
        try:
            reader, writer = await asyncio.open_unix_connection(feed_path, limit=LINE_LIMIT)
        except OSError as e:
            if not away_said:
                log.warning("referee_away", feed=feed_path, error=str(e),
                            note="showing the database only; trying again every second")
                away_said = True
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), RETRY)
            continue
        away_said = False
        log.info("referee_feed_connected", feed=feed_path)
        writer.write(line({"k": "ready", "pid": os.getpid()}))
        following = asyncio.ensure_future(mirror.follow(reader))
        stopping = asyncio.ensure_future(stop.wait())
        await asyncio.wait((following, stopping), return_when=asyncio.FIRST_COMPLETED)
        stopping.cancel()
        following.cancel()
        writer.close()
    await web.stop()
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m chinchon_referee.web.process",
                                 description="the web view of a referee (started by it)")
    ap.add_argument("--feed-fd", type=int, required=True)
    ap.add_argument("--listen-fd", type=int, required=True)
    ap.add_argument("--nice", type=int, default=NICE)
    args = ap.parse_args(argv)
    lower_priority(args.nice)
    # Ctrl-C at a terminal reaches the whole process group: the referee stops its games
    # first, then ends the feed, and this process ends with it.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    raise_nofile()
    use_uvloop()
    return asyncio.run(_child(args.feed_fd, args.listen_fd))


if __name__ == "__main__":
    sys.exit(main())
