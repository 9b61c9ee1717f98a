"""``chinchon serve --metrics HOST:PORT``: the referee's Prometheus endpoint, served by a
process of its own (:mod:`.metrics_process`), never by the referee's event loop: a
scraper, however fast, takes no time from the games but the CPU a niced process gets.

The referee binds the listening socket (a bad address fails ``serve`` at once), makes
a private directory (0700, new for each run; those of runs whose process is gone are
removed first), publishes its counts there once a second (:mod:`.metrics_files`) and
hands the socket and the directory to the child, with one end of a socket pair: the
link. The child is started again if it dies (after 1 s, up to 30 s if it keeps dying),
on the same socket: scrapers reconnect, no game notices. It ends when the referee ends
(the link closes), and the directory goes with it.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import socket
import sys
import tempfile
from pathlib import Path

from ..host.supervised import Supervised, await_end, spawn_linked
from ..logs import get_logger
from ..metrics import METRICS, Samples
from ..referee import Referee
from ..referee.streams import stream_counts
from .metrics_files import Publisher
from .metrics_process import NICE, Bounds

log = get_logger("metrics")
#: Seconds the child may take to say it serves, and to end once its link ended.
READY_TIMEOUT, STOP_TIMEOUT = 30.0, 10.0
#: Restart delays of a metrics process that keeps dying (seconds), and the uptime after
#: which a death counts as a first one again.
RESTART_FIRST, RESTART_MAX, RESTART_RESET = 1.0, 30.0, 60.0
#: The directories' names: ``chinchon-metrics-<referee pid>-<random>``.
PREFIX = "chinchon-metrics-"


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
    publication, and the process's labels on every series."""
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


def _bind(host: str, port: int) -> socket.socket:
    family, _, _, _, addr = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM,
                                               flags=socket.AI_PASSIVE)[0]
    sock = socket.create_server(addr[:2], family=family, backlog=128)
    sock.setblocking(False)
    return sock


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def private_directory() -> Path:
    """A new directory (0700) for this run's files; those of this user's runs whose
    referee is gone (killed before it could remove its own) are removed first."""
    base = Path(tempfile.gettempdir())
    uid = os.getuid()
    for old in base.glob(PREFIX + "*"):
        pid = old.name[len(PREFIX):].split("-", 1)[0]
        with contextlib.suppress(OSError):
            if old.is_dir() and old.stat().st_uid == uid and pid.isdigit() \
                    and not _alive(int(pid)):
                shutil.rmtree(old, ignore_errors=True)
    return Path(tempfile.mkdtemp(prefix=f"{PREFIX}{os.getpid()}-"))


class MetricsSite(Supervised):
    """The endpoint: its socket, directory, publisher and child process."""

    LOG, ENDED, FAILED = log, "metrics_process_ended", "metrics_process_failed"
    RESTART_FIRST, RESTART_MAX, RESTART_RESET = RESTART_FIRST, RESTART_MAX, RESTART_RESET

    def __init__(self, host: str, sock: socket.socket, directory: Path, bounds: Bounds) -> None:
        self.host, self.sock, self.directory, self.bounds = host, sock, directory, bounds
        self.port = int(sock.getsockname()[1])
        self.publisher = Publisher(directory)
        self.link: socket.socket | None = None
        self._init_supervision()

    @property
    def url(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}/metrics"

    @property
    def pid(self) -> int:
        return self.child.pid if self.child is not None else 0

    async def _spawn(self) -> None:
        child, mine = await spawn_linked(
            lambda fd: [sys.executable, "-m", "chinchon_referee.service.metrics_process",
                        "--link-fd", str(fd), "--listen-fd", str(self.sock.fileno()),
                        "--dir", str(self.directory), "--nice", str(NICE),
                        "--max-connections", str(self.bounds.max_connections),
                        "--client-rate", repr(self.bounds.client_rate)], self.sock)
        self.child, self.link = child, mine
        loop = asyncio.get_running_loop()
        ready = asyncio.ensure_future(loop.sock_recv(mine, 64))
        ended = asyncio.ensure_future(child.wait())
        try:
            await asyncio.wait((ready, ended), timeout=READY_TIMEOUT,
                               return_when=asyncio.FIRST_COMPLETED)
        finally:
            ended.cancel()
            ready.cancel()
        said = ready.result() if ready.done() and not ready.cancelled() \
            and ready.exception() is None else b""
        if not said.startswith(b"ready"):
            mine.close()
            self.link = None
            child.kill()
            await child.wait()
            raise OSError(f"the metrics process did not start (exit code {child.returncode})")
        log.info("metrics_process_started", pid=child.pid, port=self.port)

    async def start(self) -> None:
        self.publisher.start()
        await self._start_supervised()

    def _child_ended(self) -> None:
        if self.link is not None:
            self.link.close()
            self.link = None

    async def stop(self) -> None:
        await self._stop_supervising()
        await self.publisher.stop()
        if self.link is not None:
            self.link.close()  # its end: the child stops by itself
        child = self.child
        if child is not None:
            await await_end(child, STOP_TIMEOUT)
        self.sock.close()
        shutil.rmtree(self.directory, ignore_errors=True)


async def start_metrics(host: str, port: int, bounds: Bounds | None = None) -> MetricsSite:
    """Serve ``METRICS`` on ``host:port`` (0: a free port) from a process of its own;
    OSError if the address cannot be bound or the process does not start."""
    sock = _bind(host, port)
    try:
        directory = private_directory()
    except BaseException:
        sock.close()
        raise
    site = MetricsSite(host, sock, directory, bounds or Bounds())
    try:
        await site.start()
    except BaseException:
        await site.stop()
        raise
    return site
