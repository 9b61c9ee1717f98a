"""The organizer's gRPC service of the standing ladders (``chinchon.v1.LadderService``);
admin token required (auth.ADMIN_PREFIX). What changes the running ladders (declare,
pause, resume, close, enter, remove) is answered here, its store calls in the
organizer's pool; the reads (ladder_reads.py) are relayed to the organizer's worker
process when there is one (ladder_relay.py), else answered here too."""

from __future__ import annotations

from typing import Any

import grpc
from chinchon.v1 import ladder_pb2 as lpb

from ..host.pools import for_organizer
from ..ladder.ladders import Ladders
from ..ladder.spec import EnteredAlready, LadderError, LadderSpec, NotEntrant, NotNow
from ..storage.ladders import LadderStatus
from ..texts import bounded
from .ladder_reads import STATUS, LadderReadsServicer, leaderboard_row

Context = grpc.aio.ServicerContext

_FROM_PROTO = {v: k for k, v in STATUS.items()}


def refusal(e: LadderError) -> grpc.StatusCode:
    """The status a refused change of a ladder answers with."""
    if isinstance(e, NotEntrant):
        return grpc.StatusCode.NOT_FOUND
    if isinstance(e, EnteredAlready):
        return grpc.StatusCode.ALREADY_EXISTS
    if isinstance(e, NotNow):
        return grpc.StatusCode.FAILED_PRECONDITION
    return grpc.StatusCode.INVALID_ARGUMENT


class LadderServicer(LadderReadsServicer):
    """Every call of the ladder service, on this referee's running ladders."""

    ladders: Ladders

    def __init__(self, ladders: Ladders) -> None:
        super().__init__(ladders)
        self.ladders = ladders

    async def CreateLadder(self, request: lpb.CreateLadderRequest,
                           context: Context[Any, Any]) -> lpb.CreateLadderResponse:
        try:
            spec = LadderSpec.from_toml_text(request.declaration)
            lid, entrants = await for_organizer(self.ladders.create, spec)
        except LadderError as e:
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT, bounded(str(e)))
        self.ladders.start(lid)
        return lpb.CreateLadderResponse(
            ladder=await self._info(lid, context),
            entrants=[lpb.LadderEntrant(name=e.name, token=e.token) for e in entrants])

    async def SetLadderStatus(self, request: lpb.SetLadderStatusRequest,
                              context: Context[Any, Any]) -> lpb.SetLadderStatusResponse:
        await self._info(request.ladder_id, context)
        status = _FROM_PROTO.get(request.status)
        if status is None:
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT,
                                "status: LADDER_STATUS_OPEN, _PAUSED or _CLOSED")
            raise AssertionError
        try:
            if status is LadderStatus.CLOSED:
                changed = await self.ladders.close(request.ladder_id)
            else:
                changed = await self.ladders.set_status(request.ladder_id, status)
        except LadderError as e:
            await context.abort(refusal(e), bounded(str(e)))
        return lpb.SetLadderStatusResponse(ladder=await self._info(request.ladder_id, context),
                                           changed=changed)

    async def EnterLadder(self, request: lpb.EnterLadderRequest,
                          context: Context[Any, Any]) -> lpb.EnterLadderResponse:
        await self._info(request.ladder_id, context)
        try:
            token = await for_organizer(self.ladders.enter, request.ladder_id, request.bot,
                                        request.token, request.inherits)
        except LadderError as e:
            await context.abort(refusal(e), bounded(str(e)))
        return lpb.EnterLadderResponse(entrant=lpb.LadderEntrant(name=request.bot, token=token))

    async def RemoveFromLadder(self, request: lpb.RemoveFromLadderRequest,
                               context: Context[Any, Any]) -> lpb.RemoveFromLadderResponse:
        await self._info(request.ladder_id, context)
        try:
            await for_organizer(self.ladders.remove, request.ladder_id, request.bot)
        except LadderError as e:
            await context.abort(refusal(e), bounded(str(e)))
        return lpb.RemoveFromLadderResponse(removed=True)

    async def ReinstateLadderBot(self, request: lpb.ReinstateLadderBotRequest,
                                 context: Context[Any, Any]) -> lpb.ReinstateLadderBotResponse:
        await self._info(request.ladder_id, context)
        try:
            await self.ladders.reinstate(request.ladder_id, request.bot)
        except LadderError as e:
            await context.abort(refusal(e), bounded(str(e)))
        board, place, _ = await for_organizer(self.ladders.bot_page, request.ladder_id,
                                              request.bot, 1)
        return lpb.ReinstateLadderBotResponse(
            row=leaderboard_row(place, board) if place is not None else None)

