"""The organizer's view of a tournament's games: paged listing, one record, and the
streamed export of every record (bounded memory whatever the tournament's size)."""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import AsyncIterator
from typing import Any

import grpc
from chinchon.v1 import game_pb2 as g
from chinchon.v1 import tournament_pb2 as tpb
from chinchon.wire import outcome_to_wire

from ..director.reads import TournamentReads
from ..host.pools import for_organizer
from ..storage import GameFilter, GameRow, Store
from ..texts import bounded, clip
from ..tournament.report import TournamentReport, rating_svg
from ..vocabulary import GameStatus

#: ListGames' page size when the request gives none, and the most it may ask.
DEFAULT_PAGE, MAX_PAGE = 100, 1000
#: Records read from the store at once by ExportRecords (a few MB at most).
EXPORT_PAGE = 50
#: ExportResults refuses a tournament whose records are larger than this: its one
#: message would pass a client's default limit (4 MiB), or the server's.
EXPORT_RESULTS_MAX_BYTES = 3 * 1024 * 1024

Context = grpc.aio.ServicerContext


def summary(game: GameRow) -> tpb.GameSummary:
    msg = tpb.GameSummary(game_id=game.id, seq=game.seq, players=game.players,
                          status=game.status.to_proto(), voided=game.voided)
    if game.result:
        msg.result.CopyFrom(outcome_to_wire(game.result))
    return msg


def damaged(store: Store, tid: str) -> list[str]:
    """The games of ``tid`` left out of what was read because their row is damaged, as
    "game id: why"."""
    return [f"{g}: {why}" for g, why in sorted(store.damaged_games(tid).items())]


def _page_token(seq: int) -> str:
    return base64.urlsafe_b64encode(f"after:{seq}".encode()).decode()


def _after(token: str) -> int:
    """The seq a page token continues after; ValueError if it is not one of ours."""
    if not token:
        return -1
    try:
        text = base64.urlsafe_b64decode(token.encode()).decode()
    except (binascii.Error, UnicodeDecodeError, ValueError):
        raise ValueError("page_token: not a token of a previous page") from None
    word, _, seq = text.partition(":")
    if word != "after" or not seq.isdigit() or len(seq) > 9:
        raise ValueError("page_token: not a token of a previous page")
    return int(seq)


def game_filter(req: tpb.ListGamesRequest) -> GameFilter:
    """The filter a request asks for; ValueError naming a field it cannot be."""
    status = None
    if req.status != tpb.GAME_STATUS_UNSPECIFIED:
        try:
            status = GameStatus.from_proto(req.status)
        except ValueError:
            raise ValueError(f"status: unknown value {req.status}") from None
    termination = None
    if req.termination != g.TERMINATION_UNSPECIFIED:
        if req.termination not in g.Termination.values():
            raise ValueError(f"termination: unknown value {req.termination}")
        termination = g.Termination.Name(req.termination)
    return GameFilter(status=status, bot=req.bot or None, termination=termination,
                      winner=req.winner or None)


class GamesAdmin:
    """ListGames, GetGameRecord, ExportRecords, ExportResults (a mixin of the servicer)."""

    director: TournamentReads

    async def _known(self, tid: str, context: Context[Any, Any]) -> None:
        """NOT_FOUND for an id no tournament has; INVALID_ARGUMENT when none is given (an
        empty request is a client's mistake, not a search that found nothing)."""
        if not tid:
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT,
                                "tournament_id: required (chinchon admin list shows the ids)")
        if await for_organizer(self.director.store.tournament, tid) is None:
            await context.abort(grpc.StatusCode.NOT_FOUND, f"no tournament {clip(tid)}")

    async def ListGames(
        self, request: tpb.ListGamesRequest,
        context: Context[tpb.ListGamesRequest, tpb.ListGamesResponse],
    ) -> tpb.ListGamesResponse:
        tid = request.tournament_id
        await self._known(tid, context)
        size = request.page_size or DEFAULT_PAGE
        try:
            if not 0 < size <= MAX_PAGE:
                raise ValueError(f"page_size: 1 to {MAX_PAGE}, got {size}")
            after, where = _after(request.page_token), game_filter(request)
        except ValueError as e:
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT, bounded(str(e)))
        # One more than asked: whether there is a next page, without another query.
        rows = await for_organizer(self.director.store.games_page, tid, after, size + 1,
                                       where)
        more = len(rows) > size
        rows = rows[:size]
        return tpb.ListGamesResponse(
            games=[summary(r) for r in rows],
            next_page_token=_page_token(rows[-1].seq) if more else "")

    async def GetGameRecord(
        self, request: tpb.GetGameRecordRequest,
        context: Context[tpb.GetGameRecordRequest, tpb.GetGameRecordResponse],
    ) -> tpb.GetGameRecordResponse:
        if not request.game_id:
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT,
                                "game_id: required (chinchon admin games ID lists the games)")
        row = await for_organizer(self.director.store.game, request.game_id)
        if row is None:
            await context.abort(grpc.StatusCode.NOT_FOUND, f"no game {clip(request.game_id)}")
        assert row is not None
        if row.status is not GameStatus.FINISHED or not row.record:
            await context.abort(grpc.StatusCode.FAILED_PRECONDITION,
                                f"game {row.id} is {row.status}: it has no record yet")
        return tpb.GetGameRecordResponse(game=summary(row), record_json=json.dumps(row.record))

    async def ExportRecords(
        self, request: tpb.ExportRecordsRequest,
        context: Context[tpb.ExportRecordsRequest, tpb.ExportRecordsResponse],
    ) -> AsyncIterator[tpb.ExportRecordsResponse]:
        """Records are read from the store a page at a time, in a worker thread; each is
        sent when the client can take it (flow control), so memory stays bounded."""
        tid = request.tournament_id
        await self._known(tid, context)
        store, after, sent = self.director.store, -1, 0
        while page := await for_organizer(store.record_texts, tid, after, EXPORT_PAGE):
            for game_id, seq, text in page:
                yield tpb.ExportRecordsResponse(record=tpb.ExportedRecord(
                    game_id=game_id, seq=seq, record_json=text))
                sent += 1
            after = page[-1][1]
        std = await for_organizer(self._standings_texts, tid)
        yield tpb.ExportRecordsResponse(standings=tpb.ExportedStandings(
            standings_json=std[0], standings_csv=std[1], report_markdown=std[2], records=sent,
            ratings_svg=std[3], damaged_games=damaged(store, tid), structure_json=std[4]))

    def _standings_texts(self, tid: str) -> tuple[str, str, str, str, str]:
        """Standings as JSON and CSV, the report and its chart, ratings.svg, a format's
        structure as JSON (in a worker thread): the report ``chinchon tournament run``
        writes."""
        st, shape = self.director.report_parts(tid)
        row = self.director.store.tournament(tid)
        assert row is not None
        report = TournamentReport.of(tid, self.director.spec_of(tid), st, row, structure=shape)
        return (json.dumps(st.to_json()), st.to_csv(), report.markdown(st), rating_svg(st),
                json.dumps(shape) if shape is not None else "")

    async def ExportResults(
        self, request: tpb.ExportResultsRequest,
        context: Context[tpb.ExportResultsRequest, tpb.ExportResultsResponse],
    ) -> tpb.ExportResultsResponse:
        tid = request.tournament_id
        await self._known(tid, context)
        size = await for_organizer(self.director.store.record_bytes, tid)
        if size > EXPORT_RESULTS_MAX_BYTES:
            await context.abort(
                grpc.StatusCode.FAILED_PRECONDITION,
                f"the records of {tid} take {size / 2**20:.1f} MiB: ExportResults sends one "
                f"message and is for small tournaments (at most "
                f"{EXPORT_RESULTS_MAX_BYTES // 2**20} MiB); stream them with ExportRecords "
                f"(chinchon admin export {tid} DIR)")
        std = await for_organizer(self._standings_texts, tid)
        records = await for_organizer(self.director.store.games_page, tid, -1, 1 << 30,
                                          GameFilter(status=GameStatus.FINISHED), True)
        return tpb.ExportResultsResponse(
            standings_json=std[0], standings_csv=std[1],
            records_json=[json.dumps(r.record) for r in records if r.record],
            report_markdown=std[2], ratings_svg=std[3], structure_json=std[4])
