"""The organizer's worker process: the admin service's heavy calls, never on the
referee's interpreter.

``chinchon serve`` starts it (organizer_spawn.py): ``python -m
chinchon_referee.service.organizer_process --socket PATH``. It lowers its own priority
(``nice`` +10: its CPU yields to the referee and the bots), reads its settings (the
database, the admin token's digest, the log's level and format) from the first line of
its standard input, opens the referee's database (not exclusively: the referee holds
it) and serves ``chinchon.v1.TournamentService``'s reads and declarations on a Unix
socket in a folder only its user may enter: the exports, the standings, the listings,
and the planning and storing of a declaration; and ``chinchon.v1.LadderService``'s
reads (the ladders' list, leaderboards, a bot's page, the exports: ladder_reads.py).
The referee relays those calls to it as bytes (organizer_relay.py, ladder_relay.py).
It says ``{"event": "organizer_ready", "pid": N}`` on its standard output once it
serves, and ends when its standard input ends (the referee
stopped, or died) or on SIGTERM."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import signal
import sys
import threading
from collections.abc import Sequence
from typing import Any

import grpc
from chinchon.v1 import ladder_pb2_grpc as lpb_grpc
from chinchon.v1 import tournament_pb2 as tpb
from chinchon.v1 import tournament_pb2_grpc as tpb_grpc

from ..auth import TokenBook
from ..config import RefereeConfig
from ..director.declare import declare
from ..director.reads import TournamentReads
from ..host.fdlimit import raise_nofile
from ..host.pools import for_organizer
from ..ladder.reads import LadderReads
from ..logs import configure, get_logger
from ..storage import SqliteStore, Store, open_store
from ..texts import bounded
from ..tournament.model import Participant, SpecError, TournamentSpec
from ..tournament.wire import spec_from_proto
from .ladder_reads import LadderReadsServicer
from .reads import ReadsAdmin
from .server import server_options, use_loop
from .unavailable import StoreErrorInterceptor

log = get_logger("organizer")
#: How much lower the worker's priority is than the referee's.
NICE = 10

Context = grpc.aio.ServicerContext


class WorkerServicer(ReadsAdmin, tpb_grpc.TournamentServiceServicer):
    """The calls the referee relays here: ListTournaments, GetStandings, ListGames,
    GetGameRecord, ExportRecords, ExportResults (as the referee answered them itself),
    and CreateTournament's declaration (the referee then registers its new tokens and
    starts it: organizer_relay.py)."""

    def __init__(self, store: Store, admin_digest: str | None) -> None:
        self.director = TournamentReads(store)
        self.admin_digest = admin_digest

    def _declare(self, spec: TournamentSpec) -> tuple[str, list[Participant]]:
        """Store the tournament and its schedule; its tokens checked against every
        registered bot's, as the store has them now, and the admin token's."""
        store = self.director.store
        return declare(store, TokenBook.of_digests(self.admin_digest, store.bots()), spec)

    async def CreateTournament(
        self, request: tpb.CreateTournamentRequest,
        context: Context[tpb.CreateTournamentRequest, tpb.CreateTournamentResponse],
    ) -> tpb.CreateTournamentResponse:
        try:
            spec = spec_from_proto(request.spec)
            tid, parts = await for_organizer(self._declare, spec)
        except (SpecError, ValueError) as e:
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT, bounded(str(e)))
        return await self._created(tid, parts)


async def serve(socket_path: str, hello: dict[str, Any]) -> int:
    """Serve on ``socket_path`` until standard input ends or SIGTERM."""
    store = open_store(hello["db"])
    # Its schedules are written beside the referee's games: SQLite's one write lock is
    # left free between chunks, so that a game's start and end wait milliseconds, not
    # seconds (PostgreSQL's new rows lock nothing another writer needs).
    store.yield_writes = isinstance(store, SqliteStore)
    server = grpc.aio.server(interceptors=[StoreErrorInterceptor()],
                             options=server_options(RefereeConfig()))
    # The generated gRPC module has no annotations (grpc_tools writes none for it).
    tpb_grpc.add_TournamentServiceServicer_to_server(  # type: ignore[no-untyped-call]
        WorkerServicer(store, hello.get("admin_digest")), server)
    lpb_grpc.add_LadderServiceServicer_to_server(  # type: ignore[no-untyped-call]
        LadderReadsServicer(LadderReads(store)), server)
    with contextlib.suppress(FileNotFoundError):
        os.unlink(socket_path)  # left by a worker that died
    if server.add_insecure_port(f"unix:{socket_path}") == 0:
        raise OSError(f"cannot listen on the Unix socket {socket_path}")
    await server.start()
    loop = asyncio.get_running_loop()
    stop = asyncio.Event()
    loop.add_signal_handler(signal.SIGTERM, stop.set)

    def until_eof() -> None:
        with contextlib.suppress(OSError, ValueError):
            sys.stdin.read()
        loop.call_soon_threadsafe(stop.set)

    threading.Thread(target=until_eof, name="stdin", daemon=True).start()
    print(json.dumps({"event": "organizer_ready", "pid": os.getpid()}), flush=True)
    await stop.wait()
    await server.stop(1.0)
    store.close()
    return 0


def lower_priority(by: int) -> None:
    """Yield the CPU to the referee and the bots (``nice``); never fails the process."""
    with contextlib.suppress(OSError, AttributeError):
        os.nice(by)


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m chinchon_referee.service.organizer_process",
                                 description="the organizer's worker of a referee (started by it)")
    ap.add_argument("--socket", required=True)
    ap.add_argument("--nice", type=int, default=NICE)
    args = ap.parse_args(argv)
    lower_priority(args.nice)
    # Ctrl-C at a terminal reaches the whole process group: the referee ends this
    # process itself (its standard input ends).
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    hello = json.loads(sys.stdin.readline() or "{}")
    logging_of = hello.get("log", {})
    configure(logging_of.get("level", "info"), logging_of.get("format", "json"))
    raise_nofile()
    use_loop("auto")
    return asyncio.run(serve(args.socket, hello))


if __name__ == "__main__":
    sys.exit(main())
