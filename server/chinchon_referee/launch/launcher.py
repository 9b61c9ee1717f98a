"""Declared bots made running, watched processes: the one launcher of ``tournament run``,
``practice`` and ``bots check`` (and of whatever else launches bots for a referee).

A declared bot (:class:`DeclaredBot`) is a name, a command, a token, a number of
instances and, if it runs sandboxed, its sandbox around the referee's Unix socket
(:data:`Confine`, which :func:`sandboxed` assembles from a folder and limits: a
participant's ``sandbox``/``folder``, or a ``submission`` whose command its manifest
gave, :mod:`.declaration`). A :class:`Launcher` lives as long as the referee it
launches bots for, in this order::

    launcher = Launcher(Output(logs), base=..., events=..., dismissed=...)
    launcher.prepare(plans)           # before the referee: sandboxes, SandboxUnavailable
    server = await start_server(..., unix=launcher.socket)
    await launcher.start(server.target, [launcher.declared(name, command, token, plan, n)])
    ...                               # launcher.alive(), .procs, .files, .all_ended()
    exits = await launcher.stop(dismissed=True)   # 5 s to exit by itself, then SIGTERM
    launcher.close()                  # the socket's folder; a confinement it found

- :meth:`Launcher.prepare` takes each launched bot's plan (sandboxed or not, folder,
  limits); when any is sandboxed it finds this machine's confinement (unless the
  caller gave one) and makes the referee's socket in a private folder.
- :meth:`Launcher.start` starts each bot's instances (its stderr to
  ``Output.folder/<bot>.<instance>.log``, a sandboxed bot's stdout to
  ``<bot>.<instance>.out.log``, or as :class:`Output` says) and watches them: a bot
  whose process ends before it is dismissed or stopped is told of
  (:meth:`LaunchEvents.ended`), its games going on without it.
- :meth:`Launcher.stop` ends them all at once: a dismissed bot (told by the referee that
  it has no game left) has 5 s to exit by itself, then SIGTERM, SIGKILL 5 s later.

A caller with one bot of its own (``practice``, ``bots check``: their confinement found
before, to refuse early) declares it directly::

    launcher = Launcher(Output(out, stderr="bot-stderr.log", stdout=None), events=Quiet())
    socket = launcher.open_socket()   # only for a sandboxed bot
    confine = sandboxed(confinement, folder, limits, name)
    await launcher.start(target, [DeclaredBot(name, python_command(argv), token,
                                              sandbox=confine)])

What happens is told through :class:`LaunchEvents`: its methods log what is logged
(``bot_ended``, ``bot_exited``, ``bot_stopped``); a front end subclasses it to show
them too (``cli/launching.py``), or uses :class:`Quiet` to keep them to itself. Nothing
here prints.
"""

from __future__ import annotations

import asyncio
import math
import shutil
import signal
import sys
import tempfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from ..logs import get_logger
from .bots import BotProcess, Keep, Sandboxed, Sink, launch
from .confine import Confinement
from .declaration import BotPlan
from .limits import Limits
from .sandbox import SandboxSpec, SandboxUnavailable, python_runtime

log = get_logger("launch")

#: How long a dismissed bot has to exit by itself before it is stopped (seconds).
DISMISSED_GRACE = 5.0

#: A bot's sandbox around the referee's Unix socket (made by the launcher).
Confine = Callable[[Path], Sandboxed]


def sandboxed(confinement: Confinement, folder: Path, limits: Limits, name: str,
              runtime: tuple[Path, ...] = ()) -> Confine:
    """The sandbox of bot ``name``: its ``folder`` (read-only, its working directory),
    its ``limits``, the Python running the referee and ``runtime`` readable."""
    def confine(socket: Path) -> Sandboxed:
        return Sandboxed(confinement, SandboxSpec(folder, socket, limits,
                                                  python_runtime() + runtime), name)
    return confine


def python_command(command: Sequence[str]) -> tuple[str, ...]:
    """A declared command (a participant's, a manifest's ``run``) with ``{python}``
    standing for the Python running the referee."""
    return tuple(part.replace("{python}", sys.executable) for part in command)


def instances(declared: int, *, concurrency: int, bots: int, table_size: int) -> int:
    """Copies of a bot's command to launch: as ``declared``, or enough streams for its
    share of the games at once; never more than the ``concurrency`` (a bot is in at most
    that many games at once)."""
    if declared:
        return min(declared, concurrency)
    return max(1, min(concurrency, math.ceil(concurrency * table_size / bots)))


@dataclass(frozen=True)
class DeclaredBot:
    """One bot to launch: ``command --target TARGET``, its token in CHINCHON_TOKEN."""

    name: str
    command: tuple[str, ...]
    token: str
    instances: int = 1
    #: Its sandbox (None: it runs as this user, unconfined, in the launcher's ``base``).
    sandbox: Confine | None = None


@dataclass(frozen=True)
class Output:
    """Where launched bots' output goes. ``folder`` None: each stderr kept in memory
    (its last ``tail`` lines: ``BotProcess.err``), stdout discarded. Otherwise the files
    ``stderr`` and ``stdout`` name (``{bot}`` and ``{instance}`` filled in) in
    ``folder``: stdout is kept for a sandboxed bot only (bounded by its
    ``file_size_mb``; ``stdout`` None: never). ``private``: the folder is made (0700,
    the organizer's only: a bot's stderr may hold what it must not show)."""

    folder: Path | None = None
    stderr: str = "{bot}.{instance}.log"
    stdout: str | None = "{bot}.{instance}.out.log"
    tail: int | None = None
    private: bool = True

    def file(self, template: str, bot: str, instance: int) -> Path:
        assert self.folder is not None
        return self.folder / template.format(bot=bot, instance=instance)


@dataclass(frozen=True)
class Launched:
    """One running instance of a declared bot, and its stderr file (None: in memory)."""

    name: str
    instance: int
    proc: BotProcess
    log: Path | None


@dataclass(frozen=True)
class Ended:
    """A bot's process that ended before it was dismissed or stopped."""

    name: str
    instance: int
    code: int
    #: The kernel killed some process of it for memory (its cgroup's count).
    oom: bool
    log: Path | None

    @property
    def how(self) -> str:
        """``exit code 1``, ``killed by SIGKILL``...; a sandbox's 128+N as a shell's."""
        code = self.code
        how = f"killed by {signal.Signals(-code).name}" if code < 0 else f"exit code {code}"
        if code > 128 and code - 128 in signal.valid_signals():
            how += f" (killed by {signal.Signals(code - 128).name})"
        if self.oom:
            how += " (out of memory: its sandbox's memory_mb)"
        return how


@dataclass(frozen=True)
class Exit:
    """How a bot's process ended when the launcher stopped them."""

    name: str
    pid: int
    code: int
    #: It exited by itself (within the grace a dismissed bot has), not stopped.
    by_itself: bool
    dismissed: bool


class LaunchEvents:
    """What a launcher tells as it goes. This class logs what is logged; a front end
    subclasses it to show them too (calling these), or to keep them to itself."""

    def unsandboxed(self, bots: Sequence[str]) -> None:
        """Bots to be launched unsandboxed, as this user (sorted); not called for none."""

    def unconfined(self, warning: str) -> None:
        """The sandboxed bots run without cgroups: what to tell the organizer."""

    def cannot_start(self, bot: str, error: OSError) -> None:
        """``bot``'s command could not be started (its later instances are not tried)."""

    def ended(self, end: Ended) -> None:
        log.warning("bot_ended", bot=end.name, instance=end.instance, code=end.code,
                    oom=end.oom)

    def exited(self, done: Exit) -> None:
        log.info("bot_exited", bot=done.name, pid=done.pid, code=done.code,
                 by_itself=done.by_itself)
        if done.dismissed and not done.by_itself:
            log.warning("bot_stopped", bot=done.name, pid=done.pid,
                        why=f"it did not exit within {DISMISSED_GRACE:g} s of being "
                            "dismissed at the end of the tournament")


class Quiet(LaunchEvents):
    """Nothing logged or shown (a caller that reports its bot in its own words); the
    first command that could not be started kept, to raise."""

    def __init__(self) -> None:
        self.failed: OSError | None = None

    def cannot_start(self, bot: str, error: OSError) -> None:
        self.failed = self.failed or error

    def ended(self, end: Ended) -> None:
        pass

    def exited(self, done: Exit) -> None:
        pass


def _never(_bot: str) -> bool:
    return False


class Launcher:
    """The bots launched for one referee: see the module's docstring for the order of
    calls. ``base``: an unsandboxed bot's working directory (None: this process's);
    ``runtime``: more folders every sandbox may read; ``confinement``: this machine's,
    when the caller found it (it closes it); ``dismissed(bot)``: whether the referee
    has told the bot it has no game left (its exit, 0, is then no news)."""

    def __init__(self, output: Output = Output(), *, base: Path | None = None,
                 runtime: tuple[Path, ...] = (), confinement: Confinement | None = None,
                 events: LaunchEvents | None = None,
                 dismissed: Callable[[str], bool] = _never) -> None:
        self.output = output
        self.base = base
        self.runtime = runtime
        self.confinement = confinement
        self._owns_confinement = False
        self.events = events or LaunchEvents()
        self.dismissed = dismissed
        #: The referee's Unix socket, for sandboxed bots (in a private folder).
        self.socket: Path | None = None
        self.procs: list[Launched] = []
        #: Each launched bot's stderr files, one per instance.
        self.files: dict[str, list[Path]] = {}
        self._watches: list[asyncio.Future[None]] = []
        self._stopping = False

    # -- before the referee starts ------------------------------------------------------

    def prepare(self, plans: Mapping[str, BotPlan]) -> None:
        """The sandboxes of the bots to launch (``plans``: each one's, by name): the
        unsandboxed ones told of; where any is sandboxed, this machine's confinement
        (SandboxUnavailable naming those bots when none can be made here; a warning
        told when it has no cgroups) and the referee's socket."""
        boxed = sorted(n for n, p in plans.items() if p.sandboxed)
        loose = sorted(n for n, p in plans.items() if not p.sandboxed)
        if loose:
            self.events.unsandboxed(loose)
        if not boxed:
            return
        if self.confinement is None:
            try:
                self.confinement = Confinement.find()
            except SandboxUnavailable as e:
                raise SandboxUnavailable(
                    f"{', '.join(boxed)} {'is' if len(boxed) == 1 else 'are'} to run "
                    f"sandboxed, and no sandbox can be made here: {e}") from None
            self._owns_confinement = True
            if self.confinement.warning:
                self.events.unconfined(self.confinement.warning)
        self.open_socket()

    def open_socket(self) -> Path:
        """The referee's socket for sandboxed bots, in a folder of its own (0700: this
        user's only), made once."""
        if self.socket is None:
            self.socket = Path(tempfile.mkdtemp(prefix="chinchon-")) / "referee.sock"
        return self.socket

    def declared(self, name: str, command: Sequence[str], token: str, plan: BotPlan,
                 instances: int = 1) -> DeclaredBot:
        """A declaration's bot (``{python}`` in its command standing for this Python),
        sandboxed as ``plan`` says (once prepared)."""
        box = None
        if plan.sandboxed and plan.folder is not None and self.confinement is not None:
            box = sandboxed(self.confinement, plan.folder, plan.limits, name, self.runtime)
        return DeclaredBot(name, python_command(command), token, instances, box)

    # -- launching ------------------------------------------------------------------------

    async def start(self, target: str, bots: Sequence[DeclaredBot]) -> None:
        """Start every instance of ``bots``, dialling ``target`` (a sandboxed bot: the
        socket), each watched. A command that cannot be started is told of
        (:meth:`LaunchEvents.cannot_start`): the others are started all the same."""
        out = self.output
        if out.folder is not None and out.private:
            out.folder.mkdir(mode=0o700, parents=True, exist_ok=True)
            out.folder.chmod(0o700)
        for bot in bots:
            box = bot.sandbox(self.open_socket()) if bot.sandbox is not None else None
            for i in range(bot.instances):
                err = out.file(out.stderr, bot.name, i) if out.folder is not None else None
                keep: Sink = Keep.DISCARD
                if box is not None and out.folder is not None and out.stdout is not None:
                    keep = out.file(out.stdout, bot.name, i)
                try:
                    proc = await launch(bot.command, target, bot.token, cwd=self.base,
                                        stdout=keep, stderr=err or Keep.MEMORY,
                                        tail=out.tail, sandbox=box)
                except OSError as e:
                    self.events.cannot_start(bot.name, e)
                    break
                self.procs.append(Launched(bot.name, i, proc, err))
                self._watches.append(asyncio.ensure_future(self._watch(self.procs[-1])))
                if err is not None:
                    self.files.setdefault(bot.name, []).append(err)

    def alive(self) -> list[str]:
        """The bots with an instance still running, sorted."""
        return sorted({p.name for p in self.procs if p.proc.returncode is None})

    async def _watch(self, one: Launched) -> None:
        """Tell of a process that ends before the launcher dismisses or stops it (a
        crash, or its sandbox's limits); a bot that exits 0 once dismissed does what it
        was asked (its exit is told when it is stopped)."""
        proc = one.proc
        await proc.proc.wait()
        oom = proc.oom_killed()
        code = proc.proc.returncode
        if self._stopping or code is None or (code == 0 and self.dismissed(one.name)):
            return
        self.events.ended(Ended(one.name, one.instance, code, oom, one.log))

    async def all_ended(self) -> None:
        """Until every launched process has ended by itself and each early end has been
        told (a caller that lets its bots leave, rather than stopping them)."""
        await asyncio.gather(*self._watches)

    async def stop(self, dismissed: bool = False) -> list[Exit]:
        """Stop them all at once. ``dismissed``: the referee told the bots they have no
        game left (``PlayResponse.dismissed``): each has 5 s to exit by itself first.
        Then SIGTERM, and SIGKILL 5 s later. Each exit told, and returned."""

        async def one(launched: Launched) -> Exit:
            proc = launched.proc
            code, by_itself = await proc.finish(DISMISSED_GRACE if dismissed else 0.0)
            done = Exit(launched.name, proc.pid, code, by_itself, dismissed)
            self.events.exited(done)
            return done

        self._stopping = True
        exits = await asyncio.gather(*(one(p) for p in self.procs))
        for watch in self._watches:
            watch.cancel()
        return list(exits)

    def close(self) -> None:
        """The socket's folder removed; the confinement closed if this launcher found it."""
        if self._owns_confinement and self.confinement is not None:
            self.confinement.close()
        if self.socket is not None:
            shutil.rmtree(self.socket.parent, ignore_errors=True)
