"""The ladder tests' fixture: an in-process referee with the ladder service."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from chinchon_referee.auth import TokenBook
from chinchon_referee.director.director import Director
from chinchon_referee.ladder.ladders import Ladders
from chinchon_referee.service.server import start_server
from chinchon_referee.storage import SqliteStore

from tests.support.helpers import ADMIN
from tests.support.ladder_run import LadderEnv


@pytest.fixture
async def ladder_env(tmp_path: Path) -> AsyncIterator[LadderEnv]:
    tokens = TokenBook(ADMIN)
    server = await start_server("127.0.0.1:0", None, tokens)
    store = SqliteStore(str(tmp_path / "ladder.sqlite3"))
    director = Director(server.referee, store, tokens)
    ladders = Ladders(server.referee, store, tokens, keep=director.remaining.declared,
                      release=lambda tid, bots: director.remaining.ended(tid, bots,
                                                                         cancelled=False))
    env = LadderEnv(server, store, director, ladders)
    ladders.listeners.append(env.heard)
    try:
        yield env
    finally:
        await server.stop(0)
        await ladders.settle(5.0)
        store.close()
