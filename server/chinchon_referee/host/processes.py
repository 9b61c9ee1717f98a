"""Child processes seen from the event loop, started without the loop's own spawn.

:func:`spawn` starts a process with :class:`subprocess.Popen` (a fork and exec in C, no
Python code in the child) and hands back a :class:`Child` whose pipes are asyncio
streams and whose end is awaitable. The event loop's own ``subprocess_exec`` is not
used: uvloop's (the referee's loop) runs the interpreter's after-fork hooks in the
child, and in a parent with threads (gRPC's, the store's worker threads) a child was
seen to die there with SIGSEGV before it could exec its program.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import subprocess
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import IO

#: Longest line a reader of a child's output keeps whole (raw test bots print whole
#: messages, and a practice game's game_ended carries its record: a long 48-card game
#: passes 64 KiB).
LINE_LIMIT = 16 * 1024 * 1024

#: Where a child's standard stream goes: subprocess.PIPE, subprocess.DEVNULL, an open file.
Stream = int | IO[bytes] | None


async def spawn(
    args: Sequence[str], *, cwd: Path | None = None, env: Mapping[str, str] | None = None,
    stdin: Stream = subprocess.DEVNULL, stdout: Stream = None, stderr: Stream = None,
    pass_fds: Sequence[int] = (),
) -> Child:
    """Start ``args`` (with the file descriptors ``pass_fds`` open in it, as they are
    numbered here); OSError if it cannot be started (no such program...)."""
    popen = subprocess.Popen(list(args), cwd=cwd, env=env, stdin=stdin, stdout=stdout,
                             stderr=stderr, pass_fds=tuple(pass_fds))
    child = Child(popen)
    await child.connect()
    return child


class Child:
    """A child process started by :class:`subprocess.Popen`, seen from the event loop:
    its piped outputs as stream readers, its end as an awaitable (a pidfd watched by the
    loop where the kernel has them, else a thread that waits)."""

    def __init__(self, popen: subprocess.Popen[bytes]) -> None:
        self.popen = popen
        self.stdin: asyncio.StreamWriter | None = None
        self.stdout: asyncio.StreamReader | None = None
        self.stderr: asyncio.StreamReader | None = None
        loop = asyncio.get_running_loop()
        self._ended: asyncio.Future[int] = loop.create_future()
        try:
            fd = os.pidfd_open(popen.pid)
        except (AttributeError, OSError):
            waiter = loop.run_in_executor(None, popen.wait)
            waiter.add_done_callback(lambda f: self._end())
        else:
            def readable() -> None:
                loop.remove_reader(fd)
                os.close(fd)
                self._end()

            loop.add_reader(fd, readable)

    async def connect(self) -> None:
        """Its pipes as asyncio streams."""
        loop = asyncio.get_running_loop()
        if self.popen.stdin is not None:
            transport, protocol = await loop.connect_write_pipe(
                asyncio.streams.FlowControlMixin, self.popen.stdin)
            self.stdin = asyncio.StreamWriter(transport, protocol, None, loop)
        for name in ("stdout", "stderr"):
            pipe = getattr(self.popen, name)
            if pipe is not None:
                reader = asyncio.StreamReader(limit=LINE_LIMIT, loop=loop)
                await loop.connect_read_pipe(_protocol_of(reader), pipe)
                setattr(self, name, reader)

    def _end(self) -> None:
        if not self._ended.done():
            self._ended.set_result(self.popen.wait())

    @property
    def pid(self) -> int:
        return self.popen.pid

    @property
    def returncode(self) -> int | None:
        return self.popen.returncode if self._ended.done() else None

    async def wait(self) -> int:
        return await asyncio.shield(self._ended)

    def send_signal(self, sig: int) -> None:
        if not self._ended.done():
            with contextlib.suppress(ProcessLookupError):
                self.popen.send_signal(sig)

    def terminate(self) -> None:
        self.send_signal(signal.SIGTERM)

    def kill(self) -> None:
        self.send_signal(signal.SIGKILL)


def _protocol_of(reader: asyncio.StreamReader) -> Callable[[], asyncio.StreamReaderProtocol]:
    return lambda: asyncio.StreamReaderProtocol(reader)
