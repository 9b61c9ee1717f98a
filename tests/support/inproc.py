"""Bots played in the test's own process: real gRPC to a real referee, no bot process.

Where the process boundary is not what a test is about, a bot need not be a process:
each process costs a Python interpreter and its imports (about half a second of CPU on
this machine class), and the suite starts hundreds. ``raw(MODE, ...)`` runs
tests/bots/raw_bot.py's own protocol loop and ``sdk(BOT)`` the SDK's own ``BotClient``,
each as a task on the test's event loop. Both open a gRPC channel of their own to the
server, so the referee sees what it sees of a bot process: a stream, a token in its
metadata, the same messages; ``kill()`` cancels the task and closes the channel, as a
crash closes the socket. The ``bots`` fixture (tests/conftest.py) takes either a command
(a process: ``helpers.raw_bot``, ``helpers.sdk_bot``, the Node bot...) or one of these.

Tests of the process boundary itself keep processes: the launcher, the SDK's command
line and exit codes, the Node and C++ bots, a bot killed with the referee, the
``chinchon`` commands.
"""

from __future__ import annotations

import asyncio
import contextlib
from dataclasses import dataclass, field

from chinchon.sdk import BotClient
from chinchon.strategies import make_bot

from tests.bots import raw_bot


@dataclass(frozen=True)
class RawBot:
    """tests/bots/raw_bot.py's options (without ``--target`` and ``--token``)."""

    argv: tuple[str, ...]


@dataclass(frozen=True)
class SdkBot:
    """A built-in bot played by the SDK's client (``python -m chinchon.sdk --bot NAME``)."""

    bot: str = "greedy"
    lean: bool = True


def raw(mode: str, *extra: str) -> RawBot:
    """The in-process twin of ``helpers.raw_bot(mode, *extra)``."""
    return RawBot(("--mode", mode, *extra))


def sdk(bot: str = "greedy", lean: bool = True) -> SdkBot:
    """The in-process twin of ``helpers.sdk_bot(bot)``."""
    return SdkBot(bot, lean)


BotKind = RawBot | SdkBot


@dataclass
class InProcessBot:
    """A bot task, with what tests read of a bot process: its printed lines (``out``:
    raw_bot's one JSON line per message received; ``err``: what its end raised), its
    ``returncode`` once it has ended (0, or 1 if it raised), ``printed``, ``wait``,
    ``kill`` and ``stop``."""

    name: str
    out: list[str] = field(default_factory=list)
    #: What the bot's end raised, if anything (a process's stderr, in short).
    err: list[str] = field(default_factory=list)
    task: asyncio.Task[int] | None = None
    _output: asyncio.Event = field(default_factory=asyncio.Event)

    def emit(self, line: str) -> None:
        self.out.append(line + "\n")
        self._output.set()

    @property
    def returncode(self) -> int | None:
        t = self.task
        if t is None or not t.done():
            return None
        if t.cancelled():
            return -9
        e = t.exception()
        if e is not None:
            if not self.err:
                self.err.append(f"{type(e).__name__}: {e}\n")
            return 1
        return t.result()

    async def printed(self, text: str) -> str:
        """The first line holding ``text``, once the bot has received it; EOFError if the
        bot ends first."""
        seen = 0
        while True:
            for line in self.out[seen:]:
                if text in line:
                    return line
            seen = len(self.out)
            if self.returncode is not None:
                raise EOFError(f"bot {self.name} ended without printing {text!r}")
            self._output.clear()
            assert self.task is not None
            waiter = asyncio.ensure_future(self._output.wait())
            await asyncio.wait({waiter, self.task}, return_when=asyncio.FIRST_COMPLETED)
            waiter.cancel()

    async def wait(self, timeout: float | None = None) -> int:
        assert self.task is not None
        await asyncio.wait_for(asyncio.shield(self.task), timeout)
        code = self.returncode
        assert code is not None
        return code

    async def kill(self) -> int:
        """End the bot at once: its stream is cancelled and its channel closed."""
        assert self.task is not None
        if not self.task.done():
            self.task.cancel()
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await self.task
        code = self.returncode
        assert code is not None
        return code

    async def stop(self, grace: float = 5.0) -> int:
        """Let the bot end by itself within ``grace`` seconds (a dismissed bot does), else
        end it."""
        assert self.task is not None
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(asyncio.shield(self.task), grace)
        return await self.kill()


async def start(kind: BotKind, target: str, token: str, name: str) -> InProcessBot:
    """Start ``kind`` as a bot task playing for ``name`` at ``target``."""
    bot = InProcessBot(name)
    if isinstance(kind, RawBot):
        args = raw_bot.parser().parse_args(["--target", target, "--token", token, *kind.argv])
        bot.task = asyncio.ensure_future(raw_bot.play(args, bot.emit))
        return bot
    client = BotClient(make_bot(kind.bot), target, token, lean=kind.lean,
                       client_name=f"in-process/{kind.bot}")

    async def run() -> int:
        await client.run()
        return 0

    bot.task = asyncio.ensure_future(run())
    return bot
