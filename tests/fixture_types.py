"""The types of the conftest fixtures, for the tests' signatures."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence

from chinchon_referee.server import RunningServer

from tests.helpers import BotProc

#: The ``servers`` fixture: ``await servers(names, config=None, port=0)`` starts a referee
#: server knowing ``names`` on ``port`` (0: a free one); every server started is stopped
#: after the test.
StartServer = Callable[..., Awaitable[RunningServer]]
#: The ``bots`` fixture: ``await bots(cmd, server, name)`` starts a bot process for
#: ``name``; every one is killed after the test, before the servers stop.
SpawnBot = Callable[[Sequence[str], RunningServer, str], Awaitable[BotProc]]
#: The ``children`` fixture: ``await children(args, stdout=..., env=...)`` starts any child
#: process (``processes.spawn``'s options); every one is killed after the test, before
#: the servers stop.
SpawnChild = Callable[..., Awaitable[BotProc]]
