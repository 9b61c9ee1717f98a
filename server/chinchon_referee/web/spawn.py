"""The referee's side of its web view: the web process started, fed, supervised and
ended (process.py is the other side).

The referee binds the listening socket itself (a bad address fails ``serve`` at once)
and hands it to the child with one end of a socket pair, the feed (feed.py). The child
is started again if it dies (after 1 s, up to 30 s if it keeps dying), on the same
socket: spectators reconnect, no game notices. It ends when the referee ends: the feed
closes, and the child, which reads it, stops. ``--web-feed PATH`` (:func:`listen_feed`)
also offers the feed on a Unix socket file, 0600, for a web process run apart
(``chinchon web``)."""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import os
import socket
import struct
import sys
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from ..host.supervised import Supervised, await_end, spawn_linked
from ..logs import configured, get_logger
from ..referee import Referee
from ..storage.health import StoreHealth
from .feed import HIGH_WATER, Feed, Link
from .process import start_records_view
from .serving import RunningWeb, bind
from .settings import NICE, WebSettings

log = get_logger("web")
#: Seconds the child may take to say it serves.
READY_TIMEOUT = 30.0
#: Seconds the child may take to end once its feed ended, before it is killed.
STOP_TIMEOUT = 20.0
#: Restart delays of a web process that keeps dying (seconds), and the uptime after
#: which a death counts as a first one again.
RESTART_FIRST, RESTART_MAX, RESTART_RESET = 1.0, 30.0, 60.0
#: Web processes run apart that may be fed at once.
MAX_APART = 8


@dataclass
class WebContext:
    """What the web view shows, and how it is bounded."""

    #: The referee whose games in progress it shows (None: records only, in-process).
    referee: Referee | None = None
    #: The database: a SQLite file or a postgresql:// URL (None: no tournaments).
    db: str | None = None
    #: Records given by the command line (``chinchon replay FILE --view``), by game id.
    records: dict[str, dict[str, Any]] = field(default_factory=dict)
    #: Live streams open at once, in all and per client (None: the settings' own).
    max_subscribers: int | None = None
    max_per_peer: int | None = None
    #: The admin token's SHA-256 digest (``auth.digest``): the organizer's full view of
    #: games in progress is on for that token. None: it is off.
    admin_digest: str | None = None
    #: The full view shows a table as it was this many seconds ago at least (0: as it
    #: is now, which lets whoever sees the screen feed a bot: unsafe).
    full_view_delay: float = 60.0
    #: Sharing the database with other referee processes: their web views' URLs by
    #: process name, and each bot's (streams, seated, idle) on them.
    web_urls: Callable[[], dict[str, str]] | None = None
    streams_elsewhere: Callable[[], dict[str, tuple[int, int, int]]] | None = None
    #: Whether the referee's database takes its writes (None: not known): while it does
    #: not, every page says so.
    store_health: StoreHealth | None = None
    settings: WebSettings = field(default_factory=WebSettings)
    #: How much lower the web process's priority is than the referee's.
    nice: int = NICE
    #: Bytes the feed buffers for a web process that reads slowly before it stops
    #: writing to it (and only remembers what changed).
    feed_buffer: int = HIGH_WATER

    def web_settings(self) -> WebSettings:
        s = self.settings
        if self.max_subscribers is not None:
            s = replace(s, max_streams=self.max_subscribers)
        if self.max_per_peer is not None:
            s = replace(s, max_streams_per_client=self.max_per_peer)
        return s


def open_feed(ctx: WebContext) -> Feed:
    """The referee's feed of ``ctx``, following its games from now on."""
    assert ctx.referee is not None
    if ctx.full_view_delay < 0 or ctx.full_view_delay != ctx.full_view_delay:
        raise ValueError("the full view's delay is a number of seconds, 0 or more")
    feed = Feed(ctx.referee, {"boot": uuid.uuid4().hex[:12], "admin": ctx.admin_digest,
                              "delay": ctx.full_view_delay, "sharing": ctx.web_urls is not None},
                ctx.web_urls, ctx.streams_elsewhere, ctx.feed_buffer, ctx.store_health)
    feed.install()
    return feed


class ChildWeb(Supervised, RunningWeb):
    """The web view served by a child process, fed by ``feed``."""

    LOG, ENDED, FAILED = log, "web_process_ended", "web_process_failed"
    RESTART_FIRST, RESTART_MAX, RESTART_RESET = RESTART_FIRST, RESTART_MAX, RESTART_RESET

    def __init__(self, ctx: WebContext, sock: socket.socket, host: str, feed: Feed,
                 owns_feed: bool) -> None:
        super().__init__(host, int(sock.getsockname()[1]), 0)
        self.ctx, self.sock, self.feed, self._owns_feed = ctx, sock, feed, owns_feed
        self.link: Link | None = None
        self._init_supervision()
        level, fmt = configured()
        self._extra = {"web": ctx.web_settings().to_json(), "db": ctx.db, "host": host,
                       "log": {"level": level, "format": fmt}}

    async def _spawn(self) -> None:
        child, mine = await spawn_linked(
            lambda fd: [sys.executable, "-m", "chinchon_referee.web.process",
                        "--feed-fd", str(fd), "--listen-fd", str(self.sock.fileno()),
                        "--nice", str(self.ctx.nice)], self.sock)
        self.child = child
        loop = asyncio.get_running_loop()
        _, link = await loop.connect_accepted_socket(lambda: self.feed.link(self._extra), sock=mine)
        self.link = link
        ended = asyncio.ensure_future(child.wait())
        try:
            await asyncio.wait((link.ready, ended), timeout=READY_TIMEOUT,
                               return_when=asyncio.FIRST_COMPLETED)
        finally:
            ended.cancel()
        if not link.ready.done() or link.ready.exception() is not None:
            link.close()
            child.kill()
            await child.wait()
            raise OSError(f"the web process did not start (exit code {child.returncode})")
        self.pid = child.pid
        log.info("web_process_started", pid=child.pid, port=self.port)

    async def start(self) -> None:
        await self._start_supervised()

    def _child_ended(self) -> None:
        if self.link is not None:
            self.link.close()

    async def stop(self) -> None:
        await self._stop_supervising()
        if self.link is not None:
            self.link.close()  # its end: the child stops by itself
        child = self.child
        if child is not None:
            # Its last answers end whole (streams after an event) before it is killed:
            # on a busy machine the niced child gets the CPU for it where it may.
            with contextlib.suppress(OSError):
                os.setpriority(os.PRIO_PROCESS, child.pid, 0)
            await await_end(child, STOP_TIMEOUT)
        if self._owns_feed:
            await self.feed.close()
        self.sock.close()


async def start_web(ctx: WebContext, host: str = "127.0.0.1", port: int = 0,
                    feed: Feed | None = None) -> RunningWeb:
    """Serve the web view on ``host:port``: with a referee, by a child process fed by it
    (``feed``, or a feed of its own); records only, here. OSError if the address cannot
    be bound or the web process does not start; ValueError for a bad setting."""
    if ctx.referee is None:
        return await start_records_view(ctx.records, host, port)
    sock = bind(host, port)
    owns = feed is None
    try:
        feed = feed if feed is not None else open_feed(ctx)
    except BaseException:
        sock.close()
        raise
    web = ChildWeb(ctx, sock, host, feed, owns)
    try:
        await web.start()
    except BaseException:
        await web.stop()
        raise
    return web


class FeedTaken(OSError):
    """A live referee already offers its feed at the path: it is never taken over."""


class FeedListener:
    """The feed offered on a Unix socket file (readable and writable by its owner only)
    to web processes run apart (``chinchon web --feed PATH``).

    A socket at the path that answers is another referee's live feed: this one refuses
    to start, naming that referee's pid (its credentials, read off a probe connection);
    one that does not answer was left by a referee that died and is replaced. The
    probe and the bind are made under a lock of the folder, so two referees starting at
    once cannot both find the path free. At its stop the listener removes the socket
    file only if it is still the one it made."""

    def __init__(self, feed: Feed, path: Path) -> None:
        self.feed, self.path = feed, path
        self._server: asyncio.base_events.Server | None = None
        #: (device, inode) of the socket file this listener made.
        self._made: tuple[int, int] | None = None

    async def start(self) -> None:
        sock = await asyncio.to_thread(self._claim)
        sock.setblocking(False)
        try:
            self._server = await asyncio.get_running_loop().create_unix_server(
                self._link, sock=sock)
        except BaseException:
            sock.close()
            await asyncio.to_thread(self._unlink_if_mine)
            raise
        log.info("web_feed_listening", path=str(self.path))

    def _claim(self) -> socket.socket:
        """A socket listening at the path (FeedTaken if a live feed is there)."""
        with _folder_lock(self.path):
            with contextlib.suppress(FileNotFoundError):
                if self.path.is_socket():
                    holder = live_owner(self.path)
                    if holder is not None:
                        raise FeedTaken(
                            f"another referee (pid {holder or 'unknown'}) feeds its web view "
                            "there; stop it first or give another path")
                    self.path.unlink()  # left by a referee that died
            sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            try:
                sock.bind(str(self.path))
                os.chmod(self.path, 0o600)  # before listen(): nobody could connect yet
                sock.listen(MAX_APART)
                st = os.stat(self.path)
            except BaseException:
                sock.close()
                raise
            self._made = (st.st_dev, st.st_ino)
            return sock

    def _link(self) -> Any:
        if len(self.feed.links) > MAX_APART:
            return _Refused()
        return self.feed.link()

    def _unlink_if_mine(self) -> None:
        """Remove the socket file if it is the one this listener made (another referee
        may have replaced it since, after this one's had gone)."""
        if self._made is None:
            return
        with contextlib.suppress(OSError), _folder_lock(self.path):
            st = os.stat(self.path)
            if (st.st_dev, st.st_ino) == self._made:
                self.path.unlink()
        self._made = None

    async def stop(self) -> None:
        if self._server is not None:
            self._server.close()
        await asyncio.to_thread(self._unlink_if_mine)


#: Seconds a probe of a socket file may take to be answered.
PROBE_TIMEOUT = 5.0


def live_owner(path: Path) -> int | None:
    """The pid of the process listening on the Unix socket at ``path``: None if nothing
    answers there (a socket file left by a process that died), 0 if something does but
    its pid cannot be told (its backlog full: the probe timed out)."""
    probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    probe.settimeout(PROBE_TIMEOUT)
    try:
        probe.connect(str(path))
    except (ConnectionRefusedError, FileNotFoundError):
        return None
    except TimeoutError:
        return 0
    else:
        creds = probe.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
        pid: int = struct.unpack("3i", creds)[0]
        return pid
    finally:
        probe.close()


@contextlib.contextmanager
def _folder_lock(path: Path) -> Iterator[None]:
    """An exclusive lock of the folder holding ``path`` while the block runs (flock on
    the folder itself: no lock file is left behind); no lock if the folder cannot be
    opened for it."""
    try:
        fd = os.open(path.parent, os.O_RDONLY | os.O_DIRECTORY)
    except OSError:
        yield
        return
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # and the lock with it


class _Refused(asyncio.Protocol):
    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        transport.close()


async def listen_feed(feed: Feed, path: str) -> FeedListener:
    """Offer ``feed`` at ``path``; OSError if the socket cannot be made there."""
    listener = FeedListener(feed, Path(path))
    await listener.start()
    return listener
