"""The ladder service's reads relayed to the organizer's worker process, as bytes.

``chinchon.v1.LadderService`` is registered as the generated code would, except that
ListLadders, GetLeaderboard, GetLadderBot and ExportLadder are answered by the worker
(organizer_process.py, ladder_reads.py): their store reads, ratings history and
snapshots are computed there, never on this interpreter. The worker has no bots
connected to it, so a leaderboard row's ``connected`` and ``idle_streams`` are set here
from this referee's lobby: the only message parsed is a leaderboard's (one row per
entrant) and, of an export, its snapshots alone (told by their first byte); the games of
an export pass unread, one message at a time under gRPC's flow control. Everything that
changes a running ladder (declare, pause, resume, close, enter, remove) is answered here
(ladders.py). A worker that fails a call fails it as for the tournament calls
(organizer_relay.py)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterable
from typing import Any

import grpc
from chinchon.v1 import ladder_pb2 as lpb
from chinchon.v1 import ladder_pb2_grpc as lpb_grpc

from ..ladder.ladders import Ladders
from .ladders import LadderServicer
from .organizer_relay import Relay, generated_handlers, register
from .organizer_spawn import OrganizerWorker

SERVICE = "chinchon.v1.LadderService"
#: Unary calls answered by the worker alone, and relayed unread.
RELAYED = ("ListLadders",)
#: The tag of ExportLadderResponse's ``snapshot`` (field 2, length-delimited): an export
#: message that begins so is a snapshot, whose rows are marked here.
SNAPSHOT_TAG = b"\x12"

Context = grpc.aio.ServicerContext


def mark(rows: Iterable[lpb.LeaderboardRow], connected: dict[str, int]) -> None:
    """Set each row's ``connected`` and ``idle_streams`` from ``connected`` (bot -> idle
    streams of the bots with a stream on this referee)."""
    for row in rows:
        idle = connected.get(row.bot)
        row.connected, row.idle_streams = idle is not None, idle or 0


class LadderRelay(Relay):
    """The ladder reads relayed to ``worker``; their rows marked from ``ladders``."""

    def __init__(self, worker: OrganizerWorker, ladders: Ladders) -> None:
        super().__init__(worker)
        self.ladders = ladders

    def _connected(self, rows: Iterable[lpb.LeaderboardRow]) -> dict[str, int]:
        return self.ladders.connected(r.bot for r in rows)

    async def leaderboard(self, request: bytes, context: Context[Any, Any]) -> bytes:
        got = lpb.GetLeaderboardResponse.FromString(
            await self.unary("GetLeaderboard", SERVICE)(request, context))
        mark(got.rows, self._connected(got.rows))
        return got.SerializeToString()

    async def bot(self, request: bytes, context: Context[Any, Any]) -> bytes:
        got = lpb.GetLadderBotResponse.FromString(
            await self.unary("GetLadderBot", SERVICE)(request, context))
        mark([got.row], self._connected([got.row]))
        return got.SerializeToString()

    async def export(self, request: bytes, context: Context[Any, Any]) -> AsyncIterator[bytes]:
        async for message in self.stream("ExportLadder", SERVICE)(request, context):
            if message[:1] == SNAPSHOT_TAG:
                got = lpb.ExportLadderResponse.FromString(message)
                mark(got.snapshot.rows, self._connected(got.snapshot.rows))
                message = got.SerializeToString()
            yield message


def add_ladder_service(server: grpc.aio.Server, ladders: Ladders,
                       worker: OrganizerWorker | None = None) -> None:
    """``chinchon.v1.LadderService`` on ``server``, on ``ladders``: its reads relayed to
    ``worker`` (None: every call answered here, in the organizer's pool)."""
    servicer = LadderServicer(ladders)
    if worker is None:
        # The generated gRPC module has no annotations (grpc_tools writes none for it).
        lpb_grpc.add_LadderServiceServicer_to_server(  # type: ignore[no-untyped-call]
            servicer, server)
        return
    handlers = generated_handlers(lpb_grpc.add_LadderServiceServicer_to_server, servicer)
    relay = LadderRelay(worker, ladders)
    for method in RELAYED:  # bytes in, bytes out: no (de)serializer
        handlers[method] = grpc.unary_unary_rpc_method_handler(relay.unary(method, SERVICE))
    handlers["GetLeaderboard"] = grpc.unary_unary_rpc_method_handler(relay.leaderboard)
    handlers["GetLadderBot"] = grpc.unary_unary_rpc_method_handler(relay.bot)
    handlers["ExportLadder"] = grpc.unary_stream_rpc_method_handler(relay.export)
    register(server, SERVICE, handlers)
