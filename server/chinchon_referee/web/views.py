"""What the tournament page shows, built from the database: standings (the numbers of
``GetStandings``: the same functions over the same games), progress and the estimated
finish, the finished games (filtered, paged) and the event log.

Everything here runs in a worker thread (it reads the database)."""

from __future__ import annotations

import enum
import time
from dataclasses import dataclass
from typing import Any

from chinchon.engine import Termination

from ..tournament.formats.chain import plan_of
from ..tournament.model import SpecError, declared
from ..tournament.standings import Standings, compute, summarize_game
from .reader import FinishedGame, Reader, TournamentSummary

#: Finished games per page, at most.
MAX_PAGE = 200
#: Entries of the event log sent with a snapshot (the newest).
EVENT_LOG = 200


class ResultFilter(enum.StrEnum):
    """The result filter of the finished games' list (for the bot filtered on)."""

    ANY = "any"
    WIN = "win"
    LOSS = "loss"
    DRAW = "draw"
    FORFEIT = "forfeit"


@dataclass(frozen=True)
class GameFilter:
    bot: str = ""
    result: ResultFilter = ResultFilter.ANY
    offset: int = 0
    limit: int = 50
    #: With ``bot``: only the games between the two (a head-to-head cell).
    opponent: str = ""

    @classmethod
    def parse(cls, query: dict[str, str]) -> GameFilter:
        """From a page's query string; ValueError (said plainly) for a bad value."""
        try:
            result = ResultFilter(query.get("result", "any") or "any")
        except ValueError:
            raise ValueError("result: one of " + ", ".join(r.value for r in ResultFilter)) from None
        try:
            offset = int(query.get("offset", "0") or 0)
            limit = int(query.get("limit", "50") or 50)
        except ValueError:
            raise ValueError("offset and limit are whole numbers") from None
        if offset < 0 or not 1 <= limit <= MAX_PAGE:
            raise ValueError(f"offset ≥ 0 and 1 ≤ limit ≤ {MAX_PAGE}")
        bot = query.get("bot", "")[:100]
        opponent = query.get("opponent", "")[:100]
        if opponent and not bot:
            raise ValueError("opponent: only with bot (the games between the two)")
        return cls(bot, result, offset, limit, opponent)


def standings_of(reader: Reader, t: TournamentSummary,
                 games: list[FinishedGame] | None = None) -> Standings:
    """The standings of ``t``, as the director computes them for GetStandings."""
    games = reader.finished_games(t.id) if games is None else games
    bots = [p["name"] for p in t.spec.get("participants", [])]
    summaries = [summarize_game(g.players, g.result, g.hands, g.stats, g.deal_id) for g in games]
    return compute(bots, summaries, int(t.spec.get("table_size", 2)))


def progress(t: TournamentSummary, now: float | None = None) -> dict[str, Any]:
    """Games done, running and to play, and the estimated finish (from the pace so far)."""
    now = time.time() if now is None else now
    eta = None
    if t.started and t.done and not t.status.over and t.done < t.total:
        elapsed = max(0.0, now - t.started)
        eta = now + elapsed / t.done * (t.total - t.done)
    return {"total": t.total, "done": t.done, "running": t.running,
            "percent": round(100.0 * t.done / t.total, 1) if t.total else 100.0,
            "eta": eta}


def outcome_for(game: FinishedGame, bot: str) -> ResultFilter:
    """How ``game`` went for ``bot`` (a seat of it): a forfeit is a loss by forfeit."""
    seat = game.players.index(bot)
    winners = game.result.winners
    if seat in winners:
        return ResultFilter.WIN if len(winners) == 1 else ResultFilter.DRAW
    return ResultFilter.FORFEIT if _forfeits(game) else ResultFilter.LOSS


def _forfeits(game: FinishedGame) -> bool:
    return game.result.termination.forfeit


def game_row(g: FinishedGame) -> dict[str, Any]:
    res = g.result
    return {"id": g.id, "seq": g.seq, "players": g.players, "winners": list(res.winners),
            "totals": list(res.totals), "termination": res.termination.value,
            "summary": res.summary, "hands": res.hands_played, "finished": g.finished}


def games_page(games: list[FinishedGame], f: GameFilter) -> dict[str, Any]:
    """One page of the finished games that pass ``f`` (the newest first), and how many
    pass it."""
    chosen = games[::-1]
    if f.bot:
        chosen = [g for g in chosen if f.bot in g.players
                  and (not f.opponent or f.opponent in g.players)]
        if f.result is not ResultFilter.ANY:
            chosen = [g for g in chosen if outcome_for(g, f.bot) is f.result]
    elif f.result is ResultFilter.FORFEIT:
        chosen = [g for g in chosen if _forfeits(g)]
    elif f.result is ResultFilter.DRAW:
        chosen = [g for g in chosen if len(g.result.winners) > 1]
    return {"total": len(chosen), "offset": f.offset, "limit": f.limit,
            "games": [game_row(g) for g in chosen[f.offset:f.offset + f.limit]]}


def event_log(games: list[FinishedGame], limit: int = EVENT_LOG) -> list[dict[str, Any]]:
    """Forfeits, aborts, timeouts and illegal actions of the finished games, newest first."""
    out: list[dict[str, Any]] = []
    for g in reversed(games):
        term = g.result.termination
        if not term.played:
            seat = g.result.forfeited
            bot = g.players[seat] if isinstance(seat, int) and 0 <= seat < len(g.players) else ""
            out.append({"game": g.id, "time": g.finished,
                        "kind": "aborted" if term is Termination.ABORTED else "forfeit",
                        "bot": bot,
                        "termination": term.value, "text": g.result.summary})
        for seat, st in enumerate(g.stats):
            name = g.players[seat] if seat < len(g.players) else ""
            for kind, key in (("timeout", "timeouts"), ("illegal", "illegal")):
                n = int(st.get(key, 0) or 0)
                if n:
                    out.append({"game": g.id, "time": g.finished, "kind": kind, "bot": name,
                                "count": n, "text": f"{name}: {n} {kind.replace('illegal', 'illegal action')}"
                                                    f"{'s' if n > 1 else ''}"})
        if len(out) >= limit:
            break
    return out[:limit]


def standings_json(st: Standings) -> dict[str, Any]:
    return st.to_json()


def tournament_snapshot(reader: Reader, tid: str, running: list[dict[str, Any]]) -> dict[str, Any] | None:
    """Everything the tournament page shows but the game list: None if ``tid`` is unknown."""
    t = reader.tournament(tid)
    if t is None:
        return None
    games = reader.finished_games(tid)
    shape, stages, st = format_of(reader, t)
    st = st or standings_of(reader, t, games)
    return {"tournament": t.public(), "progress": progress(t), "standings": standings_json(st),
            "format": shape, "stages": stages,
            "running": running, "events": event_log(games),
            "recent": [game_row(g) for g in games[-10:][::-1]],
            "damaged": sorted(reader.store.damaged_games(tid))}


def format_of(reader: Reader, t: TournamentSummary
              ) -> tuple[dict[str, Any] | None, list[dict[str, Any]], Standings | None]:
    """A format's structure (formats/structure.py's JSON: stages, Swiss rounds, bracket),
    each stage's standings and the tournament's (as GetStandings has them); a round-robin
    declared without a format: (None, [], None)."""
    try:
        spec = declared(t.spec)
    except SpecError:
        return None, [], None
    shape, stages, st = plan_of(spec).shown(reader.store, t.id)
    per = [{"index": s.index, "name": s.name, "over": s.over,
            "standings": standings_json(s.standings)} for s in stages]
    return shape, per, st
