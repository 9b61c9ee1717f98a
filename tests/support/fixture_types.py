"""The types of the conftest fixtures, for the tests' signatures."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path

from chinchon_referee.auth import TokenBook
from chinchon_referee.service.server import RunningServer
from chinchon_referee.storage import SqliteStore

from tests.support.helpers import Bot, BotProc
from tests.support.inproc import BotKind
from tests.support.tournament import InProcess

#: The ``servers`` fixture: ``await servers(names, config=None, port=0)`` starts a referee
#: server knowing ``names`` on ``port`` (0: a free one); every server started is stopped
#: after the test.
StartServer = Callable[..., Awaitable[RunningServer]]
#: The ``bots`` fixture: ``await bots(cmd, server, name)`` starts a bot process for
#: ``name``; every one is killed after the test, before the servers stop.
SpawnBot = Callable[[Sequence[str] | BotKind, RunningServer, str], Awaitable[Bot]]
#: The ``children`` fixture: ``await children(args, stdout=..., env=...)`` starts any child
#: process (``processes.spawn``'s options); every one is killed after the test, before
#: the servers stop.
SpawnChild = Callable[..., Awaitable[BotProc]]
#: The ``admin_servers`` fixture: ``await admin_servers(tokens, db)`` starts a referee
#: server with the admin API over a SQLite store at ``db``: the server and the store.
StartAdminServer = Callable[[TokenBook, Path], Awaitable[tuple[RunningServer, SqliteStore]]]
#: The ``envs`` fixture: ``await envs(name)`` starts an independent in-process referee
#: (an ``env``: server, director, SQLite store in ``tmp_path / name``); every one is
#: closed after the test.
StartEnv = Callable[[str], Awaitable[InProcess]]
