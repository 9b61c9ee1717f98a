"""A child process the referee keeps running: started again when it dies, after a delay
that doubles while it keeps dying, and ended with the referee.

The web view's process (web/spawn.py) and the metrics process (service/metrics_http.py)
are both one: each says how it starts its child (:meth:`Supervised._spawn`) and what
goes when it ends (:meth:`Supervised._child_ended`); this module restarts it and ends
it. Its events are the owner's (``ENDED``, ``FAILED``, on its logger)."""

from __future__ import annotations

import asyncio
import socket
import subprocess
import sys
import time
from collections.abc import Callable

from ..logs import EventLogger
from .processes import Child, spawn


class Supervised:
    """A supervised child: subclasses set the class attributes and write ``_spawn``
    (sets :attr:`child` once it serves, OSError if it does not start) and call
    :meth:`_init_supervision` in their ``__init__``."""

    #: The owner's logger and the names of its events: the child ended, a restart failed.
    LOG: EventLogger
    ENDED: str
    FAILED: str
    #: Restart delays of a child that keeps dying (seconds), and the uptime after which
    #: a death counts as a first one again.
    RESTART_FIRST: float
    RESTART_MAX: float
    RESTART_RESET: float

    child: Child | None
    restarts: int
    _stopping: bool
    _supervisor: asyncio.Task[None] | None

    def _init_supervision(self) -> None:
        self.child = None
        self.restarts = 0
        self._stopping = False
        self._supervisor = None

    async def _spawn(self) -> None:
        raise NotImplementedError

    def _child_ended(self) -> None:
        """What goes with a child that ended (its link), before it is started again."""

    async def _start_supervised(self) -> None:
        """Start the child (OSError if it does not), then watch it."""
        await self._spawn()
        self._supervisor = asyncio.ensure_future(self._supervise())

    async def _supervise(self) -> None:
        delay = self.RESTART_FIRST
        while not self._stopping:
            assert self.child is not None
            began = time.monotonic()
            code = await self.child.wait()
            if self._stopping:
                return
            self._child_ended()
            if time.monotonic() - began > self.RESTART_RESET:
                delay = self.RESTART_FIRST
            self.LOG.warning(self.ENDED, pid=self.child.pid, exit_code=code, restart_in=delay)
            await asyncio.sleep(delay)
            delay = min(self.RESTART_MAX, delay * 2)
            while not self._stopping:
                try:
                    await self._spawn()
                    self.restarts += 1
                    break
                except OSError as e:
                    self.LOG.warning(self.FAILED, error=str(e), restart_in=delay)
                    await asyncio.sleep(delay)
                    delay = min(self.RESTART_MAX, delay * 2)

    async def _stop_supervising(self) -> None:
        """No more restarts: the watch ended (the child itself is the caller's to end)."""
        self._stopping = True
        if self._supervisor is not None:
            self._supervisor.cancel()
            await asyncio.gather(self._supervisor, return_exceptions=True)


async def spawn_linked(argv: Callable[[int], list[str]],
                       listening: socket.socket) -> tuple[Child, socket.socket]:
    """Start ``argv(fd)``, ``fd`` the child's end of a new socket pair (its link), with
    ``listening`` open in it too; the child and this end of the link (non-blocking)."""
    mine, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        child = await spawn(
            argv(theirs.fileno()),
            # Its log lines go to the referee's own stderr (``sys.stderr``: the real one
            # when file descriptor 2 is routed through the log, logs.route_native_stderr).
            stdout=subprocess.DEVNULL, stderr=sys.stderr.fileno(),
            pass_fds=(theirs.fileno(), listening.fileno()))
    except BaseException:
        mine.close()
        raise
    finally:
        theirs.close()
    mine.setblocking(False)
    return child, mine


async def await_end(child: Child, timeout: float) -> None:
    """Wait ``timeout`` s for ``child`` to end by itself, then kill it."""
    try:
        await asyncio.wait_for(child.wait(), timeout)
    except TimeoutError:
        child.kill()
        await child.wait()
