"""Serving the web view's application on a listening socket, with its connections
bounded (docs/security.md#a-spectator):

* at most ``max_connections`` at once (and never more than the open-file limit allows,
  less a reserve): past it, the connection idle the longest is closed to make room for
  the new one, or, if every one is answering, the new one gets ``503`` and is closed;
* a connection that began a request must send its whole head within
  ``header_timeout`` seconds (slowloris); one idle between requests is closed after
  ``keepalive_timeout``; one whose client stopped reading a response is closed after
  ``stream_write_timeout``.

Each accepted connection's protocol is aiohttp's own request handler behind a thin
:class:`_Conn` that notes when bytes arrive; the application's middleware tells the
:class:`Tracker` when a request is being answered (guard.py)."""

from __future__ import annotations

import asyncio
import socket
import time
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

from aiohttp import web

from ..host.fdlimit import raise_nofile
from ..logs import get_logger
from .settings import WebSettings

log = get_logger("web")

#: File descriptors kept for everything but connections (database files, the feed,
#: pipes, the connections closed but not yet released by the loop).
FD_RESERVE = 384
#: Connections the loop may accept at once (and not yet release): within FD_RESERVE.
ACCEPT_BATCH = 256
#: Seconds between two looks at the idle connections.
SWEEP = 0.5
#: Seconds the streams have, at a stop, to end after their last whole event before
#: aiohttp cancels them (and cuts a chunked body): they end at once when the view
#: closes, but a niced process on a busy machine may not run for a second or more.
SHUTDOWN_GRACE = 15.0
_REFUSED = (b"HTTP/1.1 503 Service Unavailable\r\nContent-Type: text/plain\r\n"
            b"Retry-After: 5\r\nConnection: close\r\nContent-Length: 32\r\n\r\n"
            b"too many connections: try again\n")


def bind(host: str, port: int) -> socket.socket:
    """A listening TCP socket on ``host:port``; OSError if it cannot be had."""
    infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    family, _, _, _, addr = infos[0]
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        if family == socket.AF_INET6:
            sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
        sock.bind(addr)
        sock.listen(512)
    except BaseException:
        sock.close()
        raise
    sock.setblocking(False)
    return sock


def url_of(host: str, port: int) -> str:
    shown = "127.0.0.1" if host in ("0.0.0.0", "::", "") else host
    if ":" in shown:
        shown = f"[{shown}]"
    return f"http://{shown}:{port}/"


class _Conn(asyncio.Protocol):
    """One accepted connection: aiohttp's handler ``inner``, watched."""

    def __init__(self, tracker: Tracker, inner: Any) -> None:
        self.tracker, self.inner = tracker, inner
        self.transport: asyncio.Transport | None = None
        self.since = time.monotonic()  # idle since, or began its request's head at
        self.busy = 0  # requests being answered
        self.partial = False  # bytes of a request's head arrived while idle
        self.closed = False

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]
        self.tracker.made(self)
        self.inner.connection_made(transport)

    def data_received(self, data: bytes) -> None:
        if not self.busy and not self.partial:
            self.partial, self.since = True, time.monotonic()
        self.inner.data_received(data)

    def eof_received(self) -> bool | None:
        return self.inner.eof_received()  # type: ignore[no-any-return]

    def pause_writing(self) -> None:
        self.inner.pause_writing()

    def resume_writing(self) -> None:
        self.inner.resume_writing()

    def connection_lost(self, exc: Exception | None) -> None:
        self.tracker.forget(self)
        self.inner.connection_lost(exc)

    def close(self) -> None:
        self.tracker.forget(self)
        if self.transport is not None:
            self.transport.abort()


class _Refuse(asyncio.Protocol):
    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        t: asyncio.Transport = transport  # type: ignore[assignment]
        t.write(_REFUSED)
        t.close()


class Tracker:
    """The open connections: counted, idle ones in the order they became idle."""

    def __init__(self, settings: WebSettings) -> None:
        self.settings = settings
        soft, _ = raise_nofile()
        self.cap = max(16, min(settings.max_connections, soft - FD_RESERVE))
        if self.cap < settings.max_connections:
            log.warning("web_connections_capped", cap=self.cap, limit=soft,
                        note="the open-file limit leaves room for no more")
        self.conns: dict[_Conn, None] = {}
        self.idle: OrderedDict[_Conn, None] = OrderedDict()
        self._by_handler: dict[Any, _Conn] = {}
        self.server: Callable[[], Any] | None = None
        #: Connections closed to make room (idle the longest), refused (503), timed out.
        self.evicted = self.refused = self.timed_out = 0

    def factory(self) -> asyncio.Protocol:
        assert self.server is not None
        if len(self.conns) >= self.cap:
            victim = next(iter(self.idle), None)
            if victim is None:
                self.refused += 1
                return _Refuse()
            self.evicted += 1
            victim.close()
        return _Conn(self, self.server())

    def made(self, c: _Conn) -> None:
        self.conns[c] = None
        self.idle[c] = None
        self._by_handler[c.inner] = c

    def forget(self, c: _Conn) -> None:
        if not c.closed:
            c.closed = True
            self.conns.pop(c, None)
            self.idle.pop(c, None)
            self._by_handler.pop(c.inner, None)

    def busy(self, request: web.Request, on: bool) -> None:
        """The middleware's mark: ``request``'s connection answers it (on) or is idle."""
        c = self._by_handler.get(request.protocol)
        if c is None or c.closed:
            return
        if on:
            c.busy += 1
            c.partial = False
            self.idle.pop(c, None)
        else:
            c.busy -= 1
            if c.busy == 0:
                c.since = time.monotonic()
                self.idle[c] = None

    def sweep(self) -> None:
        """Close the idle connections past their time: a head begun and not finished,
        an idle keep-alive, a response its client stopped reading."""
        now = time.monotonic()
        s = self.settings
        for c in list(self.idle):
            t = c.transport
            if t is None:
                continue
            limit = s.header_timeout if c.partial else s.keepalive_timeout
            if t.get_write_buffer_size() > 0:
                limit += s.stream_write_timeout
            if now - c.since > limit:
                self.timed_out += 1
                c.close()


class Site:
    """The application served on ``sock`` (listening) until :meth:`stop`."""

    def __init__(self, app: web.Application, tracker: Tracker, sock: socket.socket) -> None:
        self.app, self.tracker, self.sock = app, tracker, sock
        self.runner = web.AppRunner(app, handle_signals=False, access_log=None,
                                    shutdown_timeout=SHUTDOWN_GRACE,
                                    keepalive_timeout=tracker.settings.keepalive_timeout)
        self._server: asyncio.base_events.Server | None = None
        self._sweeper: asyncio.Task[None] | None = None

    @property
    def port(self) -> int:
        return int(self.sock.getsockname()[1])

    async def start(self) -> None:
        await self.runner.setup()
        self.tracker.server = self.runner.server
        loop = asyncio.get_running_loop()
        self._server = await loop.create_server(self.tracker.factory, sock=self.sock,
                                                backlog=ACCEPT_BATCH)
        self._sweeper = asyncio.ensure_future(self._sweeping())

    async def _sweeping(self) -> None:
        while True:
            await asyncio.sleep(SWEEP)
            self.tracker.sweep()

    async def stop(self) -> None:
        if self._sweeper is not None:
            self._sweeper.cancel()
        if self._server is not None:
            self._server.close()
        for c in list(self.tracker.conns):
            if not c.busy:
                c.close()
        await self.runner.cleanup()


class RunningWeb:
    """A web view being served: where, by which process, and how to stop it."""

    def __init__(self, host: str, port: int, pid: int) -> None:
        self.host, self.port, self.pid = host, port, pid

    @property
    def url(self) -> str:
        return url_of(self.host, self.port)

    async def stop(self) -> None:
        raise NotImplementedError
