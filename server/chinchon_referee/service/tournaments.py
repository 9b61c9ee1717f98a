"""The organizer's gRPC service (``chinchon.v1.TournamentService``); admin token required."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import grpc
from chinchon.v1 import tournament_pb2 as tpb
from chinchon.v1 import tournament_pb2_grpc as tpb_grpc
from chinchon.wire import outcome_to_wire
from google.protobuf.timestamp_pb2 import Timestamp

from ..auth import TokenBook
from ..cluster.member import Cluster
from ..cluster.messages import Kind
from ..director.director import Director
from ..director.events import TournamentEvent
from ..ladder.ladders import Ladders
from ..referee import Referee
from ..storage import Store
from ..texts import bounded
from ..tournament.model import SpecError, StartMode
from ..tournament.wire import spec_from_proto
from .bots import BotsAdmin
from .ladder_relay import add_ladder_service
from .organizer_relay import add_tournament_service
from .organizer_spawn import OrganizerWorker
from .reads import ReadsAdmin

Context = grpc.aio.ServicerContext


class TournamentServicer(ReadsAdmin, BotsAdmin, tpb_grpc.TournamentServiceServicer):
    director: Director

    def __init__(self, director: Director) -> None:
        self.director = director

    async def CreateTournament(
        self, request: tpb.CreateTournamentRequest,
        context: Context[tpb.CreateTournamentRequest, tpb.CreateTournamentResponse],
    ) -> tpb.CreateTournamentResponse:
        try:
            spec = spec_from_proto(request.spec)
            # Off the event loop: a large schedule takes seconds to build and store.
            tid, parts = await self.director.create_async(spec)
        except (SpecError, ValueError) as e:
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT, bounded(str(e)))
        if spec.start is not StartMode.MANUAL:
            self.director.start(tid)
        return await self._created(tid, parts)

    async def StartTournament(
        self, request: tpb.StartTournamentRequest,
        context: Context[tpb.StartTournamentRequest, tpb.StartTournamentResponse],
    ) -> tpb.StartTournamentResponse:
        await self._known(request.tournament_id, context)
        try:
            await self.director.start_now(request.tournament_id)
        except ValueError as e:
            await context.abort(grpc.StatusCode.FAILED_PRECONDITION, bounded(str(e)))
        return tpb.StartTournamentResponse(tournament=await self._info(request.tournament_id))

    async def CancelTournament(
        self, request: tpb.CancelTournamentRequest,
        context: Context[tpb.CancelTournamentRequest, tpb.CancelTournamentResponse],
    ) -> tpb.CancelTournamentResponse:
        await self._known(request.tournament_id, context)
        await self.director.cancel(request.tournament_id)
        return tpb.CancelTournamentResponse(tournament=await self._info(request.tournament_id))

    async def GetServerStatus(
        self, request: tpb.GetServerStatusRequest,
        context: Context[tpb.GetServerStatusRequest, tpb.GetServerStatusResponse],
    ) -> tpb.GetServerStatusResponse:
        return server_status(self.director)

    async def WatchTournament(
        self, request: tpb.WatchTournamentRequest,
        context: Context[tpb.WatchTournamentRequest, tpb.WatchTournamentResponse],
    ) -> AsyncIterator[tpb.WatchTournamentResponse]:
        tid = request.tournament_id
        await self._known(tid, context)
        async for ev in self.director.watch(tid):
            yield _event(ev)


def server_status(director: Director) -> tpb.GetServerStatusResponse:
    """This process's state: its database's health, results waiting, its clock."""
    h = director.rows.health
    msg = tpb.GetServerStatusResponse(store=h.state.value,
                                      store_problem=h.problem or "",
                                      results_waiting=h.waiting)
    if h.since is not None:
        msg.store_problem_since.FromNanoseconds(int(h.since * 1e9))
    cluster = director.cluster
    if cluster is not None:
        msg.process = cluster.owner
        if cluster.clock_offset is not None:
            msg.clock_offset, msg.clock_measured = cluster.clock_offset, True
    return msg


def _event(ev: TournamentEvent) -> tpb.WatchTournamentResponse:
    ts = Timestamp()
    ts.FromNanoseconds(int(ev.time * 1e9))
    msg = tpb.WatchTournamentResponse(
        time=ts,
        tournament=tpb.TournamentInfo(id=ev.tournament_id, status=ev.status.to_proto() if ev.status
                                      else tpb.TOURNAMENT_STATUS_UNSPECIFIED,
                                      games_total=ev.games_total, games_done=ev.games_done),
        game_id=ev.game_id, message=ev.message,
    )
    if ev.result is not None:
        msg.result.CopyFrom(outcome_to_wire(ev.result))
    return msg


def add_admin_service(server: grpc.aio.Server, referee: Referee, tokens: TokenBook,
                      store: Store, cluster: Cluster | None = None,
                      organizer: OrganizerWorker | None = None) -> dict[str, Any]:
    """The organizer's services on ``server``; with ``organizer``, their heavy calls are
    answered by that worker process (organizer_relay.py, ladder_relay.py), not by this one."""
    director = Director(referee, store, tokens, cluster)
    servicer = TournamentServicer(director)
    add_tournament_service(server, servicer, director, servicer._info, organizer)
    director.resume_all()
    ladders = Ladders(referee, store, tokens, keep=director.remaining.declared,
                      release=lambda lid, bots: director.remaining.ended(lid, bots, cancelled=False),
                      owner=cluster.owner if cluster is not None else None,
                      health=director.rows.health,
                      lease=cluster.lease if cluster is not None else 0.0)
    add_ladder_service(server, ladders, organizer)
    ladders.resume_all()
    if cluster is not None:
        ladders.follow(cluster.on_beat, cluster.on_leases_lost,
                       lambda: cluster.publish(Kind.BOTS))
    return {"director": director, "ladders": ladders}
