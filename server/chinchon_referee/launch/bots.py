"""Bot processes: start a bot's command, keep its output flowing, stop it.

One process of a bot (:mod:`.launcher` starts a declared bot's instances with it, for
``chinchon tournament run``, ``practice`` and ``bots check``; the tests use it alone).
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

A sandboxed bot (``sandbox=Sandboxed(confinement, spec)``) runs inside bubblewrap
(:mod:`.sandbox`) with its limits (:mod:`.limits`) and, where there are cgroups, in a
cgroup of its own (:mod:`.cgroups`): its target is the referee's Unix socket as bound
inside (``unix:/run/chinchon/referee.sock``), its environment its address and token
only. Its end, however it comes (exit, stop, kill), kills whatever is left of its tree
and removes its cgroup.
"""

from __future__ import annotations

import asyncio
import enum
import os
import subprocess
from collections import deque
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from ..host.processes import LINE_LIMIT, Child, spawn
from ..logs import get_logger
from .cgroups import BotCgroup
from .confine import Confinement
from .sandbox import TARGET_INSIDE, SandboxSpec, environment

_CHUNK = 64 * 1024
log = get_logger("launch")


class Keep(enum.Enum):
    """Where an output stream goes when it does not go to a file."""

    DISCARD = enum.auto()
    MEMORY = enum.auto()


#: Where one output stream goes: nowhere, into memory, into this file (truncated), or
#: into this open file descriptor (a pipe's end: the caller's, which it closes).
Sink = Keep | Path | int


class BotProcess:
    """A running bot process; its piped outputs are drained into ``out``/``err`` from
    the moment it is wrapped (``tail``: keep only the last lines of each)."""

    def __init__(self, proc: Child, tail: int | None = None,
                 cgroup: BotCgroup | None = None) -> None:
        self.proc = proc
        #: Its cgroup (a sandboxed bot where there are cgroups): emptied and removed
        #: when it ends.
        self.cgroup = cgroup
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
        # Anything it left behind (none: its PID namespace ended), and its cgroup: at
        # once, or in the background while its killed processes leave it.
        if self.cgroup is not None and not self.cgroup.remove():
            _clean_later(self.cgroup)
        await asyncio.gather(*self._drains)
        return rc

    def oom_killed(self) -> bool:
        """Whether the kernel killed any of its processes for memory (its cgroup's count:
        read before it ends)."""
        return self.cgroup is not None and self.cgroup.oom_kills() > 0

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


#: Cgroups being removed in the background (kept from the garbage collector).
_cleaning: set[asyncio.Future[bool]] = set()


def _clean_later(group: BotCgroup) -> None:
    """Remove ``group`` once its processes have left it (for up to 10 minutes; then it
    is logged, and the confinement's close tries once more)."""
    task = asyncio.ensure_future(group.removed(within=600.0))
    _cleaning.add(task)

    def done(t: asyncio.Future[bool]) -> None:
        _cleaning.discard(t)
        if not t.cancelled() and not t.result():
            log.warning("cgroup_left", folders=[str(f) for f in group.folders],
                        pids=sorted(group.pids()))

    task.add_done_callback(done)


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
    if isinstance(sink, int):
        return sink
    if isinstance(sink, Path):
        return open(sink, "wb")
    return subprocess.PIPE if sink is Keep.MEMORY else subprocess.DEVNULL


@dataclass(frozen=True)
class Sandboxed:
    """How to confine one bot: this machine's sandboxing and the bot's sandbox."""

    confinement: Confinement
    spec: SandboxSpec
    #: The bot's name (its cgroup's).
    name: str = "bot"


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
    sandbox: Sandboxed | None = None,
) -> BotProcess:
    """Start ``command --target TARGET`` with the token in CHINCHON_TOKEN only (``env``:
    more variables). Sandboxed: ``target`` is ignored for the socket bound inside, and
    ``cwd`` for the bot's folder. OSError if it cannot be started (no such program, a
    cgroup refused...)."""
    if sandbox is not None:
        return await start_confined(
            [*command, "--target", TARGET_INSIDE], sandbox, stdout=stdout, stderr=stderr,
            tail=tail, env=dict(env or {}, CHINCHON_TARGET=TARGET_INSIDE, CHINCHON_TOKEN=token))
    return await _start([*command, "--target", target], bot_environment(target, token, env),
                        cwd, stdout, stderr, tail, None)


async def start_confined(argv: Sequence[str], sandbox: Sandboxed, *, stdout: Sink = Keep.MEMORY,
                         stderr: Sink = Keep.MEMORY, tail: int | None = None,
                         env: Mapping[str, str] | None = None) -> BotProcess:
    """Start ``argv`` as it is in ``sandbox`` (a bot's build, or ``launch``'s bot), its
    environment the sandbox's and ``env``. OSError if it cannot be started."""
    args, group, fd = sandbox.confinement.prepare(sandbox.name, sandbox.spec, argv)
    try:
        return await _start(args, environment(env or {}), sandbox.spec.folder, stdout, stderr,
                            tail, group, () if fd is None else (fd,))
    finally:
        if fd is not None:
            os.close(fd)


async def _start(args: list[str], environ: dict[str, str], cwd: Path | None, stdout: Sink,
                 stderr: Sink, tail: int | None, group: BotCgroup | None,
                 pass_fds: Sequence[int] = ()) -> BotProcess:
    out, err = _open(stdout), _open(stderr)
    try:
        child = await spawn(args, cwd=cwd, env=environ, stdout=out, stderr=err,
                            pass_fds=pass_fds)
    except OSError:
        if group is not None:
            group.remove()
        raise
    finally:
        for f in (out, err):
            if not isinstance(f, int):
                f.close()
    return BotProcess(child, tail, group)
