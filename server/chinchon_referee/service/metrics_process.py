"""The metrics' own process: ``GET /metrics``, never on the referee's loop.

``chinchon serve --metrics`` starts it (:mod:`.metrics_http`) as ``python -m
chinchon_referee.service.metrics_process --link-fd N --listen-fd M --dir D``. It lowers
its own priority (``nice`` +10: its CPU yields to the referee and the bots), serves on
the listening socket it inherited (bound by the referee, so that a restart keeps the
port) and reads the referee's counts from the multiprocess files in ``D``
(:mod:`.metrics_files`) with prometheus_client's ``MultiProcessCollector``; the page is
prometheus_client's text format (0.0.4). It says ``ready`` on the link once it serves,
and ends when the link ends (the referee stopped, or died), removing ``D``.

What a scraper may make it do is bounded (a scraper is trusted no more than any client):
``max_connections`` open at once (past it: ``503`` and closed), a request's head in 8 KiB
and 5 s, and per client (the peer's address) a token bucket of ``client_rate`` requests
a second, bursts of 4 s worth (past it: ``429`` with ``Retry-After``), the table of
clients bounded (the least recently seen forgotten first). The page is made at most
once per :data:`FRESH` seconds (the referee writes its counts once a second), whoever
asks. Anything but ``GET /metrics`` is 404 (405 for another method).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import math
import os
import shutil
import signal
import socket
import sys
import time
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass

from ..host.buckets import Bucket

#: Headers a scrape may send, and how long it has to send them.
MAX_REQUEST, REQUEST_TIMEOUT = 8192, 5.0
#: Seconds a page made is served again to whoever asks.
FRESH = 0.5
#: Clients whose buckets are kept.
MAX_CLIENTS = 4096
#: How much lower the process's priority is than the referee's.
NICE = 10
#: The page's type: Prometheus' text format 0.0.4 (prometheus_client's
#: ``CONTENT_TYPE_PLAIN_0_0_4``, the format ``generate_latest`` writes).
CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"


@dataclass(frozen=True)
class Bounds:
    """What a scraper may make the metrics process do (``--metrics-max-connections``,
    ``--metrics-client-rate``)."""

    max_connections: int = 16
    client_rate: float = 1.0

    def __post_init__(self) -> None:
        if isinstance(self.max_connections, bool) or not 1 <= self.max_connections <= 65_536:
            raise ValueError(f"--metrics-max-connections {self.max_connections}: "
                             "a whole number, 1 to 65536")
        if not (math.isfinite(self.client_rate) and 0 < self.client_rate <= 100_000):
            raise ValueError(f"--metrics-client-rate {self.client_rate}: "
                             "requests per second, above 0")


def _reply(status: str, body: bytes, kind: str = "text/plain; charset=utf-8",
           extra: str = "") -> bytes:
    return (f"HTTP/1.1 {status}\r\nContent-Type: {kind}\r\nContent-Length: {len(body)}\r\n"
            f"{extra}Connection: close\r\n\r\n").encode() + body


_FULL = _reply("503 Service Unavailable", b"too many connections: try again\n",
               extra="Retry-After: 5\r\n")


class Endpoint:
    """The page, its bounds and its counters of refusals."""

    def __init__(self, directory: str, bounds: Bounds) -> None:
        # Here, not at the top: ``chinchon serve`` imports this module for Bounds, and
        # prometheus_client (its exposition imports an HTTP server) only where it serves.
        from prometheus_client import CollectorRegistry, generate_latest
        from prometheus_client.multiprocess import MultiProcessCollector

        self.registry = CollectorRegistry(auto_describe=False)
        # (the collector has no type annotations)
        MultiProcessCollector(self.registry, path=directory)  # type: ignore[no-untyped-call]
        self._generate = generate_latest
        self.bounds = bounds
        self.clients: OrderedDict[str, Bucket] = OrderedDict()
        self.open = 0
        self._page, self._made = b"", -math.inf

    def admit(self, client: str, now: float) -> float:
        """0 if ``client`` may be answered now, else the seconds it must wait."""
        b = self.clients.get(client)
        if b is None:
            if len(self.clients) >= MAX_CLIENTS:
                self.clients.popitem(last=False)
            burst = max(1.0, self.bounds.client_rate * 4)
            b = self.clients[client] = Bucket(self.bounds.client_rate, burst, burst, now)
        else:
            self.clients.move_to_end(client)
        return b.take(now)

    def page(self, now: float) -> bytes:
        if now - self._made >= FRESH:
            self._page, self._made = self._generate(self.registry), now
        return self._page

    def answer(self, head: bytes, client: str) -> bytes:
        method, _, rest = head.split(b"\r\n", 1)[0].decode("latin-1").partition(" ")
        path = rest.split(" ", 1)[0].split("?", 1)[0]
        if method != "GET":
            return _reply("405 Method Not Allowed", b"GET /metrics only\n", extra="Allow: GET\r\n")
        if path != "/metrics":
            return _reply("404 Not Found", b"the metrics are at /metrics\n")
        now = time.monotonic()
        wait = self.admit(client, now)
        if wait > 0:
            return _reply("429 Too Many Requests", b"too many requests: slow down\n",
                          extra=f"Retry-After: {max(1, math.ceil(wait))}\r\n")
        return _reply("200 OK", self.page(now), CONTENT_TYPE)

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        if self.open >= self.bounds.max_connections:
            writer.write(_FULL)
            writer.close()
            return
        self.open += 1
        try:
            try:
                head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), REQUEST_TIMEOUT)
            except (TimeoutError, asyncio.IncompleteReadError, asyncio.LimitOverrunError,
                    ConnectionError):
                return
            peer = writer.get_extra_info("peername")
            writer.write(self.answer(head, str(peer[0]) if peer else ""))
            with contextlib.suppress(ConnectionError):
                await asyncio.wait_for(writer.drain(), REQUEST_TIMEOUT)
        except TimeoutError:
            pass  # a client that does not read its answer
        finally:
            self.open -= 1
            writer.close()


async def serve(link_fd: int, listen_fd: int, directory: str, bounds: Bounds) -> int:
    link = socket.socket(fileno=link_fd)
    listen = socket.socket(fileno=listen_fd)
    listen.setblocking(False)
    endpoint = Endpoint(directory, bounds)
    server = await asyncio.start_server(endpoint.handle, sock=listen, limit=MAX_REQUEST)
    reader, writer = await asyncio.open_connection(sock=link)
    writer.write(f"ready {os.getpid()}\n".encode())
    stop = asyncio.Event()
    asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, stop.set)
    ended = asyncio.ensure_future(reader.read())  # the referee writes nothing more: EOF
    stopping = asyncio.ensure_future(stop.wait())
    await asyncio.wait((ended, stopping), return_when=asyncio.FIRST_COMPLETED)
    server.close()
    if ended.done():  # the referee is gone: nobody writes the files any more
        shutil.rmtree(directory, ignore_errors=True)
    ended.cancel()
    stopping.cancel()
    writer.close()
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m chinchon_referee.service.metrics_process",
                                 description="the metrics endpoint of a referee (started by it)")
    ap.add_argument("--link-fd", type=int, required=True)
    ap.add_argument("--listen-fd", type=int, required=True)
    ap.add_argument("--dir", required=True)
    ap.add_argument("--nice", type=int, default=NICE)
    ap.add_argument("--max-connections", type=int, default=Bounds.max_connections)
    ap.add_argument("--client-rate", type=float, default=Bounds.client_rate)
    args = ap.parse_args(argv)
    with contextlib.suppress(OSError):
        os.nice(args.nice)
    # Ctrl-C at a terminal reaches the whole process group: the referee ends the link.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    bounds = Bounds(args.max_connections, args.client_rate)
    return asyncio.run(serve(args.link_fd, args.listen_fd, args.dir, bounds))


if __name__ == "__main__":
    sys.exit(main())
