"""The organizer's reads of the standing ladders (``chinchon.v1.LadderService``'s
ListLadders, GetLeaderboard, GetLadderBot, ExportLadder): a servicer served by the
organizer's worker process beside the referee (organizer_process.py), which relays them
as bytes (organizer_relay.py), or, without one, in the referee's organizer pool. Every
store read runs in the organizer's pool, never on an event loop that plays games."""

from __future__ import annotations

import json
import statistics
from collections.abc import AsyncIterator
from typing import Any

import grpc
from chinchon.v1 import ladder_pb2 as lpb
from chinchon.v1 import ladder_pb2_grpc as lpb_grpc
from chinchon.wire import outcome_to_wire
from google.protobuf.timestamp_pb2 import Timestamp

from ..host.pools import for_organizer
from ..ladder.leaderboard import Place, RatedGame, snapshots
from ..ladder.ratings import Rating
from ..ladder.reads import Board, LadderReads
from ..ladder.spec import declared
from ..storage.ladders import LadderGameRow, LadderRow, LadderStatus
from ..texts import clip

Context = grpc.aio.ServicerContext

#: The status names of the protocol, in one place.
STATUS = {LadderStatus.OPEN: lpb.LADDER_STATUS_OPEN, LadderStatus.PAUSED: lpb.LADDER_STATUS_PAUSED,
           LadderStatus.CLOSED: lpb.LADDER_STATUS_CLOSED}
#: Most games GetLadderBot returns.
MAX_GAMES = 1000
#: Games read at once by ExportLadder.
EXPORT_PAGE = 500


def _time(t: float | None) -> Timestamp | None:
    if t is None:
        return None
    ts = Timestamp()
    ts.FromNanoseconds(int(t * 1e9))
    return ts


def ladder_info(row: LadderRow, entrants: int) -> lpb.LadderInfo:
    spec = declared(row.spec)
    return lpb.LadderInfo(id=row.id, name=row.name, status=STATUS[row.status],
                          games_rated=row.rated, entrants=entrants, k=spec.k,
                          declaration=spec.to_toml(with_secrets=False))


def leaderboard_row(p: Place, board: Board) -> lpb.LeaderboardRow:
    s = p.standing
    return lpb.LeaderboardRow(
        rank=p.rank, bot=s.bot, mu=s.rating.mu, sigma=s.rating.sigma, score=p.score,
        low=p.low, high=p.high, games=s.games, wins=s.wins, last_game=_time(s.last_game),
        connected=s.bot in board.connected, idle_streams=board.connected.get(s.bot, 0),
        trend=p.trend, suspended=s.suspended is not None, suspension=s.suspension,
        time_forfeits_in_a_row=s.time_forfeits, last_time_forfeit=_time(s.last_time_forfeit),
        suspended_since=_time(s.suspended))


def _median_answer(games: list[LadderGameRow], bot: str) -> float:
    """The median over ``games`` of ``bot``'s mean answer time (0.0 if none)."""
    means = []
    for g in games:
        st = (g.stats or [])[g.players.index(bot)] if g.stats else {}
        if st.get("decisions"):
            means.append(float(st["think_time"]) / int(st["decisions"]))
    return statistics.median(means) if means else 0.0


def _game(g: LadderGameRow, bot: str) -> lpb.LadderGame:
    seat = g.players.index(bot)
    stats = (g.stats or [])[seat] if g.stats and seat < len(g.stats) else {}
    mu, sigma = g.ratings[seat] if g.ratings else (0.0, 0.0)
    msg = lpb.LadderGame(game_id=g.id, players=g.players, rated=g.rated or 0,
                         finished=_time(g.finished), place=(g.places or [0] * 8)[seat],
                         mu=mu, sigma=sigma, timeouts=int(stats.get("timeouts", 0)),
                         illegal=int(stats.get("illegal", 0)))
    if g.result is not None:
        msg.result.CopyFrom(outcome_to_wire(g.result))
    return msg


class LadderReadsServicer(lpb_grpc.LadderServiceServicer):
    """ListLadders, GetLeaderboard, GetLadderBot, ExportLadder, read from ``ladders``."""

    def __init__(self, ladders: LadderReads) -> None:
        self.ladders = ladders

    def _read_info(self, lid: str) -> lpb.LadderInfo:
        row = self.ladders.store.ladder(lid)
        if row is None:
            raise KeyError(lid)
        return ladder_info(row, sum(not e.removed for e in self.ladders.store.entrants(lid)))

    async def _info(self, lid: str, context: Context[Any, Any]) -> lpb.LadderInfo:
        """The ladder's info; NOT_FOUND (INVALID_ARGUMENT when no id is given)."""
        if not lid:
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT,
                                "ladder_id: required (chinchon admin ladder list shows the ids)")
        try:
            return await for_organizer(self._read_info, lid)
        except KeyError:
            await context.abort(grpc.StatusCode.NOT_FOUND, f"no ladder {clip(lid)}")
            raise

    async def ListLadders(self, request: lpb.ListLaddersRequest,
                          context: Context[Any, Any]) -> lpb.ListLaddersResponse:
        rows = await for_organizer(self.ladders.store.ladders)
        return lpb.ListLaddersResponse(
            ladders=[await for_organizer(self._read_info, r.id) for r in rows])

    async def GetLeaderboard(self, request: lpb.GetLeaderboardRequest,
                             context: Context[Any, Any]) -> lpb.GetLeaderboardResponse:
        info = await self._info(request.ladder_id, context)
        board = await for_organizer(self.ladders.board, request.ladder_id)
        return lpb.GetLeaderboardResponse(
            ladder=info, rows=[leaderboard_row(p, board) for p in board.places])

    async def GetLadderBot(self, request: lpb.GetLadderBotRequest,
                           context: Context[Any, Any]) -> lpb.GetLadderBotResponse:
        await self._info(request.ladder_id, context)
        limit = request.limit or 100
        if not 0 < limit <= MAX_GAMES:
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT,
                                f"limit: 1 to {MAX_GAMES}, got {limit}")
        board, place, games = await for_organizer(self.ladders.bot_page, request.ladder_id,
                                                  request.bot, limit)
        if place is None:
            await context.abort(grpc.StatusCode.NOT_FOUND,
                                f"no entrant {clip(request.bot)} in ladder {clip(request.ladder_id)}")
            raise AssertionError
        forfeits = sum(1 for g in games if g.result is not None and g.result.forfeited is not None
                       and g.players[g.result.forfeited] == request.bot)
        return lpb.GetLadderBotResponse(row=leaderboard_row(place, board),
                                        games=[_game(g, request.bot) for g in games],
                                        forfeits=forfeits,
                                        median_answer_seconds=_median_answer(games, request.bot))

    async def ExportLadder(self, request: lpb.ExportLadderRequest,
                           context: Context[Any, Any]) -> AsyncIterator[lpb.ExportLadderResponse]:
        lid = request.ladder_id
        await self._info(lid, context)
        every = request.snapshot_every or 100
        if every < 1:
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT,
                                f"snapshot_every: at least 1, got {every}")
        store, after = self.ladders.store, 0
        rated: list[RatedGame] = []
        while page := await for_organizer(store.ladder_games, lid, after, EXPORT_PAGE):
            for g in page:
                record = None
                if request.records:
                    full = await for_organizer(store.ladder_game, g.id)
                    record = full.record if full is not None else None
                yield lpb.ExportLadderResponse(game=_export(g, record))
                if g.ratings and g.places:
                    rated.append(RatedGame(g.players, g.places,
                                           [Rating(m, sg) for m, sg in g.ratings], g.finished))
            after = page[-1].rated or after
        board = await for_organizer(self.ladders.board, lid)
        entrants = await for_organizer(store.entrants, lid)
        start = {e.bot: Rating(e.start_mu, e.start_sigma) for e in entrants}
        for snap in snapshots(rated, start, board.spec.k, every):
            yield lpb.ExportLadderResponse(snapshot=lpb.LadderSnapshot(
                games=snap.games, finished=_time(snap.finished),
                rows=[leaderboard_row(p, board) for p in snap.places]))


def _export(g: LadderGameRow, record: dict[str, Any] | None) -> lpb.LadderGameExport:
    msg = lpb.LadderGameExport(
        game_id=g.id, players=g.players, rated=g.rated or 0, finished=_time(g.finished),
        places=g.places or [], mu=[m for m, _ in g.ratings or []],
        sigma=[s for _, s in g.ratings or []],
        record_json=json.dumps(record, separators=(",", ":")) if record is not None else "")
    if g.result is not None:
        msg.result.CopyFrom(outcome_to_wire(g.result))
    return msg
