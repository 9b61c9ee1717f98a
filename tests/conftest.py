"""Fixtures of the referee tests: real servers on port 0, real bot processes, an in-process
director over a real SQLite file. Every fixture cleans up whatever the test does: bots are
killed before their server stops, servers stop before the test's event loop closes.

Async tests run under pytest-asyncio (``asyncio_mode = "auto"`` in pyproject.toml), each on
a fresh event loop, as ``asyncio.run`` gave them before.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from pathlib import Path
from typing import Any

import pytest
from chinchon_referee.auth import TokenBook
from chinchon_referee.config import RefereeConfig
from chinchon_referee.host.processes import spawn as spawn_process
from chinchon_referee.service.server import RunningServer, start_server
from chinchon_referee.service.tournaments import add_admin_service
from chinchon_referee.storage import SqliteStore

# The C++ sample bot, built once per run (tests/support/cpp.py), and PostgreSQL
# for the tests that need it (started once, on first use): fixtures.
from tests.support.bytecode import compile_project
from tests.support.cpp import cpp_bot, cpp_build_started  # noqa: F401
from tests.support.fixture_types import SpawnBot, SpawnChild, StartAdminServer, StartEnv, StartServer
from tests.support.helpers import Bot, BotProc, bot_token, spawn, start, stop
from tests.support.inproc import BotKind, RawBot, SdkBot
from tests.support.inproc import start as start_in_process
from tests.support.postgres import db_target, pg_cluster, pg_url  # noqa: F401
from tests.support.sandbox import confinement, place, sandboxed  # noqa: F401
from tests.support.schedule import slowest_first
from tests.support.tournament import InProcess


@pytest.fixture
async def servers() -> AsyncIterator[StartServer]:
    """A factory of referee servers on port 0 (or ``port=``, a server's again after it
    stopped); every one started is stopped afterwards (again if the test stopped it)."""
    started: list[RunningServer] = []

    async def _start(names: Sequence[str], config: RefereeConfig | None = None,
                     port: int = 0) -> RunningServer:
        server = await start(names, config, port)
        started.append(server)
        return server

    yield _start
    for server in reversed(started):
        await server.stop(0)


@pytest.fixture
async def server(request: pytest.FixtureRequest, servers: StartServer) -> RunningServer:
    """One running server; parametrize indirectly with the bot names, or with
    ``{"names": [...], "config": RefereeConfig(...)}``."""
    param: Any = request.param
    if isinstance(param, dict):
        return await servers(param["names"], param.get("config"))
    return await servers(param)


@pytest.fixture
async def bots(servers: StartServer) -> AsyncIterator[SpawnBot]:
    """A factory of bots: a bot process for a command (``helpers.spawn``), a bot task on
    this loop for ``inproc.raw(...)`` / ``inproc.sdk(...)`` (tests/support/inproc.py); every one
    is ended afterwards, before the servers stop (this fixture is set up after
    ``servers``, so torn down first)."""
    procs: list[Bot] = []

    async def _spawn(cmd: Sequence[str] | BotKind, server: RunningServer, name: str) -> Bot:
        if isinstance(cmd, RawBot | SdkBot):
            proc: Bot = await start_in_process(cmd, server.target, bot_token(name), name)
        else:
            proc = await spawn(cmd, server, name)
        procs.append(proc)
        return proc

    yield _spawn
    await stop(*procs)


@pytest.fixture
async def children(servers: StartServer) -> AsyncIterator[SpawnChild]:
    """A factory of child processes started as given (``processes.spawn``: any command,
    environment and pipes), their piped output drained as a bot's; every one is killed
    afterwards, before the servers stop."""
    procs: list[BotProc] = []

    async def _spawn(args: Sequence[str], **options: Any) -> BotProc:
        proc = BotProc(await spawn_process(args, **options))
        procs.append(proc)
        return proc

    yield _spawn
    await stop(*procs)


@pytest.fixture
async def env(tmp_path: Path) -> AsyncIterator[InProcess]:
    """A server on port 0 with an in-process Director over a temporary SQLite store."""
    env = await InProcess.start(tmp_path)
    try:
        yield env
    finally:
        await env.close()


@pytest.fixture
async def envs(tmp_path: Path) -> AsyncIterator[StartEnv]:
    """A factory of independent in-process referees (``await envs(name)``: each an
    ``env``, its SQLite store in its own folder ``tmp_path / name``); every one is closed
    afterwards (ask for it before ``bots`` and ``children``: their processes are killed
    first)."""
    started: list[InProcess] = []

    async def _start(name: str) -> InProcess:
        folder = tmp_path / name
        folder.mkdir()
        env = await InProcess.start(folder)
        started.append(env)
        return env

    yield _start
    for env in reversed(started):
        await env.close()


@pytest.fixture
async def admin_servers() -> AsyncIterator[StartAdminServer]:
    """A factory of referee servers on port 0 with the admin API (``TournamentService``)
    over a SQLite store at ``db``, knowing ``tokens``; every one is stopped afterwards,
    its director settled and its store closed."""
    started: list[tuple[RunningServer, SqliteStore]] = []

    async def _start(tokens: TokenBook, db: Path) -> tuple[RunningServer, SqliteStore]:
        store = SqliteStore(str(db))
        server = await start_server(
            "127.0.0.1:0", None, tokens,
            add_services=lambda srv, ref, book: add_admin_service(srv, ref, book, store))
        started.append((server, store))
        return server, store

    yield _start
    for server, store in reversed(started):
        await server.stop(0)
        director = server.extras.get("director")
        if director is not None:
            await director.settle(5.0)  # nothing is written to the store after it closes
        store.close()


@pytest.fixture
def results_dir(tmp_path: Path) -> Path:
    """A temporary folder for a tournament's results (not created: the CLI creates it)."""
    return tmp_path / "results"


def pytest_configure(config: pytest.Config) -> None:
    """In the run's first process (not in each xdist worker): the project's modules
    byte-compiled once, for the hundreds of processes the suite starts
    (tests/support/bytecode.py)."""
    if not hasattr(config, "workerinput"):
        compile_project(Path(config.rootpath))


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The slowest files first, for xdist's workers (tests/support/schedule.py)."""
    slowest_first(items)
