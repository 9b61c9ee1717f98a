"""The organizer's reads of tournaments (ListTournaments, GetStandings): a mixin of the
servicer, served by the organizer's worker process beside the referee (organizer_process.py)
or, without one, in the referee's organizer pool."""

from __future__ import annotations

import json

import grpc
from chinchon.v1 import tournament_pb2 as tpb

from ..director.reads import TournamentReads
from ..host.pools import for_organizer
from ..tournament.formats.chain import plan_of
from ..tournament.formats.proto import format_to_proto, tiebreak_to_proto
from ..tournament.formats.standings_proto import rows_to_proto, stages_to_proto
from ..tournament.model import Participant, SpecError, declared
from .games import GamesAdmin, damaged

Context = grpc.aio.ServicerContext


def read_info(reads: TournamentReads, tid: str) -> tpb.TournamentInfo:
    """A tournament's status, progress and format, as the organizer sees them."""
    row = reads.store.tournament(tid)
    assert row is not None
    total, done = reads.counts(tid)
    info = tpb.TournamentInfo(id=tid, name=row.name, status=row.status.to_proto(),
                              games_total=total, games_done=done)
    try:
        fmt = plan_of(declared(row.spec)).shown_format()
    except SpecError:
        return info  # a damaged declaration: its format is not told
    if fmt is not None:
        info.format.CopyFrom(format_to_proto(fmt))
    return info


class ReadsAdmin(GamesAdmin):
    """ListTournaments, GetStandings, and the games' calls of :class:`GamesAdmin`."""

    async def _info(self, tid: str) -> tpb.TournamentInfo:
        """A tournament's status and progress, read in a worker thread (the store is
        never read on the event loop that plays the games)."""
        return await for_organizer(read_info, self.director, tid)

    async def _created(self, tid: str, parts: list[Participant]) -> tpb.CreateTournamentResponse:
        """CreateTournament's answer: the new tournament's info and its participants,
        tokens included."""
        return tpb.CreateTournamentResponse(
            tournament=await self._info(tid),
            participants=[tpb.Participant(name=p.name, token=p.token, command=list(p.command))
                          for p in parts],
        )

    def _read_infos(self) -> list[tpb.TournamentInfo]:
        return [read_info(self.director, t.id) for t in self.director.store.tournaments()]

    async def ListTournaments(
        self, request: tpb.ListTournamentsRequest,
        context: Context[tpb.ListTournamentsRequest, tpb.ListTournamentsResponse],
    ) -> tpb.ListTournamentsResponse:
        return tpb.ListTournamentsResponse(
            tournaments=await for_organizer(self._read_infos)
        )

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
