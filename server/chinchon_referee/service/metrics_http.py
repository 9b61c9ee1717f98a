"""``chinchon serve --metrics HOST:PORT``: the referee's Prometheus endpoint,
``GET /metrics`` in the text format (:mod:`..metrics`), served by the referee process
itself on an asyncio server of its own (off by default, and apart from the web view,
so that it can listen on an address only the monitoring reaches).

The request is read with bounds (8 KiB of headers, 5 s): a scraper is trusted no more
than any client. Anything but ``GET /metrics`` is 404 (405 for another method).
"""

from __future__ import annotations

import asyncio
import contextlib
from dataclasses import dataclass

from ..metrics import METRICS, Samples
from ..referee import Referee
from ..referee.streams import stream_counts

#: Headers a scrape may send, and how long it has to send them.
MAX_REQUEST, REQUEST_TIMEOUT = 8192, 5.0
CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"


def parse_address(text: str) -> tuple[str, int]:
    """``HOST:PORT`` (or ``PORT``: 127.0.0.1); ValueError saying what is wrong."""
    host, sep, port = text.rpartition(":")
    if not sep:
        host, port = "127.0.0.1", text
    if not port.isdigit() or not 0 <= int(port) < 65536:
        raise ValueError(f"--metrics {text}: give HOST:PORT (or PORT, on 127.0.0.1)")
    return host.strip("[]") or "127.0.0.1", int(port)


def watch_referee(referee: Referee, labels: dict[str, str]) -> None:
    """The gauges of ``referee`` (games running, streams per state), read at each
    scrape, and the process's labels on every series."""
    METRICS.labels = dict(labels)

    def games() -> Samples:
        return [({}, referee.games_running)]

    def streams() -> Samples:
        total = [0, 0, 0]
        for s in stream_counts(referee).values():
            total[0] += s.seated
            total[1] += s.idle
            total[2] += s.other
        return [({"state": k}, v) for k, v in zip(("seated", "idle", "other"), total, strict=True)]

    METRICS.gauges["chinchon_games_running"] = ("games being played now", games)
    METRICS.gauges["chinchon_streams"] = (
        "bots' open Play streams: seated in a game, idle in the lobby, other (practice, "
        "saying hello)", streams)


@dataclass
class MetricsSite:
    server: asyncio.Server
    port: int

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/metrics"

    async def stop(self) -> None:
        self.server.close()
        await self.server.wait_closed()


async def _handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), REQUEST_TIMEOUT)
    except (TimeoutError, asyncio.IncompleteReadError, asyncio.LimitOverrunError, ConnectionError):
        writer.close()
        return
    method, _, rest = head.split(b"\r\n", 1)[0].decode("latin-1").partition(" ")
    path = rest.split(" ", 1)[0].split("?", 1)[0]
    if method != "GET":
        status, body, kind = "405 Method Not Allowed", b"GET /metrics only\n", "text/plain"
    elif path != "/metrics":
        status, body, kind = "404 Not Found", b"the metrics are at /metrics\n", "text/plain"
    else:
        status, body, kind = "200 OK", METRICS.render().encode(), CONTENT_TYPE
    writer.write(f"HTTP/1.1 {status}\r\nContent-Type: {kind}\r\nContent-Length: {len(body)}\r\n"
                 "Connection: close\r\n\r\n".encode() + body)
    with contextlib.suppress(ConnectionError):
        await writer.drain()
    writer.close()


async def start_metrics(host: str, port: int) -> MetricsSite:
    """Listen on ``host:port`` (0: a free port); OSError if it cannot."""
    server = await asyncio.start_server(_handle, host, port, limit=MAX_REQUEST)
    bound = server.sockets[0].getsockname()[1]
    return MetricsSite(server, int(bound))
