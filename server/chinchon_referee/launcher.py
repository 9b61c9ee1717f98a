"""Bot processes: start a bot's command, keep its output flowing, stop it.

The one launcher of ``chinchon tournament run``, ``chinchon practice`` and the tests.
A bot is started as ``COMMAND... --target HOST:PORT`` with the address also in
CHINCHON_TARGET and its token only in CHINCHON_TOKEN: a command line is visible to
every local user (``ps``), an environment is not. Its stdout and stderr each go to a
file (written by the child itself), to memory (read continuously by this process, so a
chatty bot never blocks on a full pipe; lines of any length up to :data:`LINE_LIMIT`),
or nowhere. :meth:`BotProcess.stop` asks it to stop (SIGTERM) and kills it if it has
not within a grace period; :meth:`BotProcess.finish` first lets a bot that was told it
is done (dismissed) exit by itself.

Processes are started by :func:`.processes.spawn` (not the event loop's own spawn: see
there why).
"""

from __future__ import annotations

import asyncio
import enum
import os
import subprocess
from collections import deque
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import IO

from .processes import LINE_LIMIT, Child, spawn

_CHUNK = 64 * 1024


class Keep(enum.Enum):
    """Where an output stream goes when it does not go to a file."""

    DISCARD = enum.auto()
    MEMORY = enum.auto()


#: Where one output stream goes: nowhere, into memory, or into this file (truncated).
Sink = Keep | Path


class BotProcess:
    """A running bot process; its piped outputs are drained into ``out``/``err`` from
    the moment it is wrapped (``tail``: keep only the last lines of each)."""

    def __init__(self, proc: Child, tail: int | None = None) -> None:
        self.proc = proc
        self.out: deque[str] | list[str] = deque(maxlen=tail) if tail else []
        self.err: deque[str] | list[str] = deque(maxlen=tail) if tail else []
        self._output = asyncio.Event()  # set (then cleared) whenever lines arrive
        self._drains = [
            asyncio.ensure_future(_drain(proc.stdout, self.out, self._output)),
            asyncio.ensure_future(_drain(proc.stderr, self.err, self._output)),
        ]

    @property
    def pid(self) -> int:
        return self.proc.pid

    @property
    def returncode(self) -> int | None:
        return self.proc.returncode

    async def printed(self, text: str) -> str:
        """The first line of its stdout containing ``text``, once it is printed
        (EOFError if the process ends its output without printing it)."""
        while True:
            output = self._output
            for line in self.out:
                if text in line:
                    return line
            if all(d.done() for d in self._drains):
                raise EOFError(f"the process ended its output without printing {text!r}")
            await output.wait()

    async def wait(self, timeout: float | None = None) -> int:
        """Its exit code, once it has exited and its output has been read to the end."""
        rc = await asyncio.wait_for(self.proc.wait(), timeout)
        await asyncio.gather(*self._drains)
        return rc

    async def stop(self, grace: float = 5.0) -> int:
        """SIGTERM, then SIGKILL if it has not exited within ``grace`` seconds."""
        if self.proc.returncode is None:
            self.proc.terminate()
            try:
                await asyncio.wait_for(self.proc.wait(), grace)
            except TimeoutError:
                self.proc.kill()
        return await self.wait()

    async def finish(self, wait: float, grace: float = 5.0) -> tuple[int, bool]:
        """For a bot that was told it is done (``PlayResponse.dismissed``): let it exit by
        itself for up to ``wait`` seconds, then :meth:`stop` it. Its exit code, and
        whether it exited by itself."""
        if self.proc.returncode is None:
            try:
                await asyncio.wait_for(self.proc.wait(), wait)
            except TimeoutError:
                return await self.stop(grace), False
        return await self.wait(), True

    async def kill(self) -> int:
        """SIGKILL at once (a test's crash, or an impatient stop)."""
        if self.proc.returncode is None:
            self.proc.kill()
        return await self.wait()


async def _drain(stream: asyncio.StreamReader | None, into: deque[str] | list[str],
                 output: asyncio.Event) -> None:
    """Read ``stream`` to its end, appending each line (decoded, with its newline);
    ``output`` is set after each read."""
    try:
        if stream is not None:
            await _read_lines(stream, into, output)
    finally:
        output.set()
        output.clear()


async def _read_lines(stream: asyncio.StreamReader, into: deque[str] | list[str],
                      output: asyncio.Event) -> None:
    pending = bytearray()
    while chunk := await stream.read(_CHUNK):
        pending += chunk
        start = 0
        while (end := pending.find(b"\n", start)) >= 0:
            into.append(pending[start:end + 1].decode(errors="replace"))
            start = end + 1
        del pending[:start]
        while len(pending) >= LINE_LIMIT:
            into.append(pending[:LINE_LIMIT].decode(errors="replace"))
            del pending[:LINE_LIMIT]
        output.set()
        output.clear()
    if pending:
        into.append(pending.decode(errors="replace"))


def bot_environment(target: str, token: str, extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """This process's environment plus the bot's address and token (and unbuffered
    Python output, so logs are current)."""
    return dict(os.environ, **(extra or {}), CHINCHON_TARGET=target, CHINCHON_TOKEN=token,
                PYTHONUNBUFFERED="1")


def _open(sink: Sink) -> int | IO[bytes]:
    if isinstance(sink, Path):
        return open(sink, "wb")
    return subprocess.PIPE if sink is Keep.MEMORY else subprocess.DEVNULL


async def launch(
    command: Sequence[str],
    target: str,
    token: str,
    *,
    cwd: Path | None = None,
    stdout: Sink = Keep.MEMORY,
    stderr: Sink = Keep.MEMORY,
    tail: int | None = None,
    env: Mapping[str, str] | None = None,
) -> BotProcess:
    """Start ``command --target TARGET`` with the token in CHINCHON_TOKEN only (``env``:
    more variables). OSError if it cannot be started (no such program...)."""
    out, err = _open(stdout), _open(stderr)
    try:
        child = await spawn([*command, "--target", target], cwd=cwd,
                            env=bot_environment(target, token, env), stdout=out, stderr=err)
    finally:
        for f in (out, err):
            if not isinstance(f, int):
                f.close()
    return BotProcess(child, tail)
