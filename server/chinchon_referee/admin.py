"""The organizer's gRPC service (``chinchon.v1.TournamentService``); admin token required."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from typing import Any

import grpc
from chinchon.v1 import tournament_pb2 as tpb
from chinchon.v1 import tournament_pb2_grpc as tpb_grpc
from chinchon.wire import outcome_to_wire
from google.protobuf.timestamp_pb2 import Timestamp

from .admin_bots import BotsAdmin
from .admin_records import GamesAdmin
from .auth import TokenBook
from .cluster import Cluster
from .director import Director
from .events import TournamentEvent
from .referee import Referee
from .spec_proto import spec_from_proto
from .storage import Store
from .tournament import SpecError, StartMode


class TournamentServicer(GamesAdmin, BotsAdmin, tpb_grpc.TournamentServiceServicer):
    def __init__(self, director: Director) -> None:
        self.director = director

    def _read_info(self, tid: str) -> tpb.TournamentInfo:
        row = self.director.store.tournament(tid)
        assert row is not None
        total, done = self.director.counts(tid)
        return tpb.TournamentInfo(id=tid, name=row.name, status=row.status.to_proto(),
                                  games_total=total, games_done=done)

    async def _info(self, tid: str) -> tpb.TournamentInfo:
        """A tournament's status and progress, read in a worker thread (the store is
        never read on the event loop that plays the games)."""
        return await asyncio.to_thread(self._read_info, tid)

    def _read_infos(self) -> list[tpb.TournamentInfo]:
        return [self._read_info(t.id) for t in self.director.store.tournaments()]

    async def CreateTournament(
        self, request: tpb.CreateTournamentRequest, context: Any
    ) -> tpb.CreateTournamentResponse:
        try:
            spec = spec_from_proto(request.spec)
            # Off the event loop: a large schedule takes seconds to build and store.
            tid, parts = await self.director.create_async(spec)
        except (SpecError, ValueError) as e:
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT, str(e))
        if spec.start is not StartMode.MANUAL:
            self.director.start(tid)
        return tpb.CreateTournamentResponse(
            tournament=await self._info(tid),
            participants=[tpb.Participant(name=p.name, token=p.token, command=list(p.command))
                          for p in parts],
        )

    async def ListTournaments(
        self, request: tpb.ListTournamentsRequest, context: Any
    ) -> tpb.ListTournamentsResponse:
        return tpb.ListTournamentsResponse(
            tournaments=await asyncio.to_thread(self._read_infos)
        )

    async def StartTournament(
        self, request: tpb.StartTournamentRequest, context: Any
    ) -> tpb.StartTournamentResponse:
        await self._known(request.tournament_id, context)
        try:
            await self.director.start_now(request.tournament_id)
        except ValueError as e:
            await context.abort(grpc.StatusCode.FAILED_PRECONDITION, str(e))
        return tpb.StartTournamentResponse(tournament=await self._info(request.tournament_id))

    async def CancelTournament(
        self, request: tpb.CancelTournamentRequest, context: Any
    ) -> tpb.CancelTournamentResponse:
        await self._known(request.tournament_id, context)
        await self.director.cancel(request.tournament_id)
        return tpb.CancelTournamentResponse(tournament=await self._info(request.tournament_id))

    async def GetStandings(
        self, request: tpb.GetStandingsRequest, context: Any
    ) -> tpb.GetStandingsResponse:
        tid = request.tournament_id
        await self._known(tid, context)
        st = await asyncio.to_thread(self.director.standings, tid)
        rows = [
            tpb.StandingRow(
                rank=r.rank, bot=r.bot, match_points=r.match_points, games=r.games, wins=r.wins,
                draws=r.draws, losses=r.losses, hands_won=r.hands_won, chinchones=r.chinchones,
                avg_points_per_hand=r.avg_points_per_hand, forfeits=r.forfeits,
                timeouts=r.timeouts, illegal_actions=r.illegal_actions, rating=r.rating,
                rating_low=r.rating_low, rating_high=r.rating_high,
                p_better_than_next=r.p_better_than_next or 0.0,
            )
            for r in st.rows
        ]
        h2h = [tpb.HeadToHead(bot=a, opponent=b, score=s, games=n)
               for (a, b), (s, n) in sorted(st.head_to_head.items())]
        return tpb.GetStandingsResponse(
            tournament=await self._info(tid), rows=rows, head_to_head=h2h,
            duplicate_variance_reduction=st.duplicate_variance_reduction or 0.0,
            standings_json=json.dumps(st.to_json()),
        )

    async def WatchTournament(
        self, request: tpb.WatchTournamentRequest, context: Any
    ) -> AsyncIterator[tpb.WatchTournamentResponse]:
        tid = request.tournament_id
        await self._known(tid, context)
        async for ev in self.director.watch(tid):
            yield _event(ev)


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
    return {"director": director}
