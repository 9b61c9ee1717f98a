"""The referee's side of its organizer's worker process (organizer_process.py): started,
supervised, started again if it dies, ended with the referee; the gRPC channel to it.

The worker serves on a Unix socket in a folder made for it (mode 0700: no other user
reaches it; it takes no token). It is told its settings on its standard input, which
stays open: when the referee ends, even by ``kill -9``, the worker reads its end and
stops. A worker that dies is started again after 0.5 s (up to 30 s if it keeps dying);
calls made meanwhile wait for it (up to :data:`WAIT_READY` s, or their deadline)."""

from __future__ import annotations

import asyncio
import contextlib
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import grpc

from ..config import RefereeConfig
from ..host.processes import Child, spawn
from ..host.supervised import await_end
from ..logs import configured, get_logger
from .organizer_process import NICE

log = get_logger("organizer")
#: Seconds the worker may take to say it serves.
READY_TIMEOUT = 60.0
#: Seconds the worker may take to end once told, before it is killed.
STOP_TIMEOUT = 10.0
#: Restart delays of a worker that keeps dying (seconds), and the uptime after which a
#: death counts as a first one again.
RESTART_FIRST, RESTART_MAX, RESTART_RESET = 0.5, 30.0, 60.0
#: Seconds a call waits for a worker that is starting (or starting again).
WAIT_READY = 30.0
#: Seconds the calls on a dead worker's channel have to fail by themselves.
CLOSE_GRACE = 10.0


class WorkerAway(Exception):
    """The worker is not serving now (it is starting again, or failed to start)."""


class OrganizerWorker:
    """The organizer's worker process of a referee whose database is ``db``."""

    def __init__(self, db: str, admin_digest: str | None, nice: int = NICE,
                 config: RefereeConfig | None = None) -> None:
        self.db, self.admin_digest, self.nice = db, admin_digest, nice
        self.config = config or RefereeConfig()
        self.folder: Path | None = None
        self.child: Child | None = None
        self.channel: grpc.aio.Channel | None = None
        self.restarts = 0
        self._ready: asyncio.Event | None = None
        self._stopping = False
        self._supervisor: asyncio.Task[None] | None = None
        self._closing: set[asyncio.Future[None]] = set()

    @property
    def pid(self) -> int | None:
        return self.child.pid if self.child is not None and self.child.returncode is None else None

    async def start(self) -> None:
        """Start the worker and its supervision; returns at once (calls wait for it)."""
        self.folder = Path(tempfile.mkdtemp(prefix="chinchon-organizer-"))  # mode 0700
        self._ready = asyncio.Event()
        self._supervisor = asyncio.ensure_future(self._supervise())

    @property
    def socket(self) -> Path:
        assert self.folder is not None, "start() first"
        return self.folder / "organizer.sock"

    async def _spawn(self) -> None:
        child = await spawn(
            [sys.executable, "-m", "chinchon_referee.service.organizer_process",
             "--socket", str(self.socket), "--nice", str(self.nice)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=sys.stderr.fileno())
        self.child = child
        level, fmt = configured()
        assert child.stdin is not None and child.stdout is not None
        child.stdin.write(json.dumps({"db": self.db, "admin_digest": self.admin_digest,
                                      "log": {"level": level, "format": fmt}}).encode() + b"\n")
        try:
            line = await asyncio.wait_for(child.stdout.readline(), READY_TIMEOUT)
        except TimeoutError:
            line = b""
        if not line.startswith(b'{"event": "organizer_ready"'):
            child.kill()
            await child.wait()
            raise OSError(f"the organizer's worker did not start (exit code {child.returncode})")
        lim = self.config.limits
        self.channel = grpc.aio.insecure_channel(f"unix:{self.socket}", options=[
            ("grpc.max_receive_message_length", lim.max_send_bytes),
            ("grpc.max_send_message_length",
             max(lim.max_message_bytes, lim.max_admin_message_bytes)),
        ])
        log.info("organizer_worker_started", pid=child.pid)
        assert self._ready is not None
        self._ready.set()

    async def _supervise(self) -> None:
        delay = RESTART_FIRST
        while not self._stopping:
            try:
                await self._spawn()
            except OSError as e:
                log.warning("organizer_worker_failed", error=str(e), restart_in=delay)
                await asyncio.sleep(delay)
                delay = min(RESTART_MAX, delay * 2)
                continue
            assert self.child is not None and self._ready is not None
            began = time.monotonic()
            code = await self.child.wait()
            self._ready.clear()
            # Not closed at once: closing cancels the calls still on it, which would end
            # with no status; they fail by themselves (UNAVAILABLE), the worker gone.
            channel, self.channel = self.channel, None
            if channel is not None:
                self._closing.add(asyncio.ensure_future(channel.close(grace=CLOSE_GRACE)))
                self._closing = {t for t in self._closing if not t.done()}
            if self._stopping:
                return
            if time.monotonic() - began > RESTART_RESET:
                delay = RESTART_FIRST
            log.warning("organizer_worker_ended", pid=self.child.pid, exit_code=code,
                        restart_in=delay)
            await asyncio.sleep(delay)
            delay = min(RESTART_MAX, delay * 2)
            self.restarts += 1

    async def channel_now(self, timeout: float | None) -> grpc.aio.Channel:
        """The channel to the worker, once it serves (WorkerAway after ``timeout`` s, at
        most :data:`WAIT_READY`)."""
        assert self._ready is not None, "start() first"
        wait = WAIT_READY if timeout is None else min(timeout, WAIT_READY)
        if not self._ready.is_set():
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._ready.wait(), wait)
        if not self._ready.is_set() or self.channel is None:
            raise WorkerAway("the organizer's worker process is starting again")
        return self.channel

    async def _close_channel(self) -> None:
        channel, self.channel = self.channel, None
        if channel is not None:
            await channel.close(grace=None)

    async def stop(self) -> None:
        """End the worker (its standard input closed; killed if it lingers)."""
        self._stopping = True
        if self._supervisor is not None:
            self._supervisor.cancel()
            await asyncio.gather(self._supervisor, return_exceptions=True)
        await self._close_channel()
        for closing in self._closing:
            closing.cancel()
        child = self.child
        if child is not None:
            if child.stdin is not None:
                child.stdin.close()
            child.terminate()
            await await_end(child, STOP_TIMEOUT)
        if self.folder is not None:
            shutil.rmtree(self.folder, ignore_errors=True)
