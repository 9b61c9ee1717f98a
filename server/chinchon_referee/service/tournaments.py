"""The organizer's gRPC service (``chinchon.v1.TournamentService``); admin token required."""

from __future__ import annotations

import json
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
from ..host.pools import for_organizer
from ..ladder.ladders import Ladders
from ..referee import Referee
from ..storage import Store
from ..texts import bounded
from ..tournament.formats.proto import format_to_proto, tiebreak_to_proto
from ..tournament.formats.standings_proto import rows_to_proto, stages_to_proto
from ..tournament.model import SpecError, StartMode, declared
from ..tournament.wire import spec_from_proto
from .bots import BotsAdmin
from .games import GamesAdmin, damaged
from .ladders import add_ladder_service

Context = grpc.aio.ServicerContext


class TournamentServicer(GamesAdmin, BotsAdmin, tpb_grpc.TournamentServiceServicer):
    def __init__(self, director: Director) -> None:
        self.director = director

    def _read_info(self, tid: str) -> tpb.TournamentInfo:
        row = self.director.store.tournament(tid)
        assert row is not None
        total, done = self.director.counts(tid)
        info = tpb.TournamentInfo(id=tid, name=row.name, status=row.status.to_proto(),
                                  games_total=total, games_done=done)
        try:
            fmt = declared(row.spec).format
        except SpecError:
            return info  # a damaged declaration: its format is not told
        if not fmt.legacy:
            info.format.CopyFrom(format_to_proto(fmt))
        return info

    async def _info(self, tid: str) -> tpb.TournamentInfo:
        """A tournament's status and progress, read in a worker thread (the store is
        never read on the event loop that plays the games)."""
        return await for_organizer(self._read_info, tid)

    def _read_infos(self) -> list[tpb.TournamentInfo]:
        return [self._read_info(t.id) for t in self.director.store.tournaments()]

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
        return tpb.CreateTournamentResponse(
            tournament=await self._info(tid),
            participants=[tpb.Participant(name=p.name, token=p.token, command=list(p.command))
                          for p in parts],
        )

    async def ListTournaments(
        self, request: tpb.ListTournamentsRequest,
        context: Context[tpb.ListTournamentsRequest, tpb.ListTournamentsResponse],
    ) -> tpb.ListTournamentsResponse:
        return tpb.ListTournamentsResponse(
            tournaments=await for_organizer(self._read_infos)
        )

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

    async def GetStandings(
        self, request: tpb.GetStandingsRequest,
        context: Context[tpb.GetStandingsRequest, tpb.GetStandingsResponse],
    ) -> tpb.GetStandingsResponse:
        tid = request.tournament_id
        await self._known(tid, context)
        st, per, shape = await for_organizer(self.director.stages, tid)
        h2h = [tpb.HeadToHead(bot=a, opponent=b, score=s, games=n)
               for (a, b), (s, n) in sorted(st.head_to_head.items())]
        return tpb.GetStandingsResponse(
            tournament=await self._info(tid), rows=rows_to_proto(st), head_to_head=h2h,
            duplicate_variance_reduction=st.duplicate_variance_reduction or 0.0,
            standings_json=json.dumps(st.to_json()),
            damaged_games=damaged(self.director.store, tid),
            tiebreaks=[tiebreak_to_proto(t) for t in st.tiebreaks],
            stages=stages_to_proto(per, shape), structure_json=json.dumps(shape),
            final_ranking=shape.get("ranking") or [],
        )

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
                      store: Store, cluster: Cluster | None = None) -> dict[str, Any]:
    director = Director(referee, store, tokens, cluster)
    # The generated gRPC module has no annotations (grpc_tools writes none for it).
    tpb_grpc.add_TournamentServiceServicer_to_server(  # type: ignore[no-untyped-call]
        TournamentServicer(director), server)
    director.resume_all()
    ladders = Ladders(referee, store, tokens, keep=director.remaining.declared,
                      release=lambda lid, bots: director.remaining.ended(lid, bots, cancelled=False),
                      owner=cluster.owner if cluster is not None else None,
                      health=director.rows.health,
                      lease=cluster.lease if cluster is not None else 0.0)
    add_ladder_service(server, ladders)
    ladders.resume_all()
    if cluster is not None:
        ladders.follow(cluster.on_beat, cluster.on_leases_lost,
                       lambda: cluster.publish(Kind.BOTS))
    return {"director": director, "ladders": ladders}
