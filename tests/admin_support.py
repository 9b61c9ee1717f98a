"""A real referee server on port 0 with the admin service over a real SQLite store, and
the calls the admin tests make with it (no tests here)."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import asdict, dataclass
from pathlib import Path

import grpc
from chinchon.engine import Outcome, play_game
from chinchon.strategies import BUILTIN_BOTS
from chinchon.v1 import referee_pb2 as pb
from chinchon.v1 import tournament_pb2_grpc as tpb_grpc
from chinchon_referee.admin import add_admin_service
from chinchon_referee.auth import TokenBook
from chinchon_referee.director import Director
from chinchon_referee.referee.seats import SeatStats
from chinchon_referee.server import RunningServer, start_server
from chinchon_referee.storage import GameRow, SqliteStore

from tests.helpers import ADMIN
from tests.referee_support import play_call

ADMIN_MD = (("authorization", f"Bearer {ADMIN}"),)


@dataclass
class AdminEnv:
    server: RunningServer
    store: SqliteStore
    director: Director
    stub: tpb_grpc.TournamentServiceStub


@asynccontextmanager
async def admin_env(db: Path) -> AsyncIterator[AdminEnv]:
    """A server as ``chinchon serve`` makes it: the bots registered in ``db`` can log in."""
    store = SqliteStore(str(db))
    tokens = TokenBook(ADMIN)
    for name, dig in store.bots():
        tokens.add_digest(name, dig)
    server = await start_server(
        "127.0.0.1:0", None, tokens,
        add_services=lambda srv, ref, book: add_admin_service(srv, ref, book, store))
    try:
        async with grpc.aio.insecure_channel(server.target) as ch:
            yield AdminEnv(server, store, server.extras["director"],
                           tpb_grpc.TournamentServiceStub(ch))
    finally:
        await server.stop(0)
        await server.extras["director"].settle(5.0)
        store.close()


async def hello(target: str, token: str) -> grpc.aio.StreamStreamCall:  # type: ignore[type-arg]
    """A Play stream that said hello and was welcomed (AioRpcError if it was refused)."""
    call = await play_call(target, token)
    await call.write(pb.PlayRequest(hello=pb.Hello(client="admin-test")))
    msg = await call.read()
    assert msg.HasField("welcome"), msg
    return call


def finish_with_engine_games(env: AdminEnv, tid: str, count: int) -> list[GameRow]:
    """Play the first ``count`` scheduled games of ``tid`` with engine bots under the
    tournament's rules (real records) and store them as finished, as the director would."""
    store = env.store
    rules = env.director.spec_of(tid).rules
    rows = store.games(tid)[:count]
    kinds = ["random", "greedy"]
    for i, row in enumerate(rows):
        bots = [BUILTIN_BOTS[kinds[(i + s) % 2]](s) for s in range(len(row.players))]
        _, rec = play_game(rules, bots, f"seed-{tid}", row.deal_id,
                           row.players, game_id=row.id)
        row.record = json.loads(json.dumps(rec))
        row.result = Outcome.from_json(row.record["result"])
        row.stats = [asdict(SeatStats()) for _ in row.players]
        store.finish_game(row)
    return rows
