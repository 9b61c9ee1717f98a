"""The standing ladders in the web view: a leaderboard page and a page per
bot, each also as JSON, and every game of a ladder as one JSON export.

    /l, /api/l               every ladder (id, name, status, games)
    /l/{lid}                 the leaderboard (rank, rating with its interval, games, win
                             rate, last game, trend over its last 10 games)
    /l/{lid}/b/{bot}         a bot: its rating over time (an SVG chart), its recent games
                             with their replays and records, forfeits, timeouts, illegal
                             attempts, median answer time
    /api/l/{lid}             the leaderboard as JSON;  /api/l/{lid}/b/{bot}: the bot's
    /api/l/{lid}/games.json  every rated game (players, places, ratings after, result)
    /api/l/{lid}/snapshots.json?every=N  the leaderboard after every N games (100)
    /api/lg/{gid}/record.json  one ladder game's record

A finished ladder game opens in the replay viewer of every game, ``/r/{gid}`` (its data
routes, /api/g/{gid}/replay, step and record.json, find ladder games too: reader.py);
the leaderboard's and the bot pages' recent games link there.

The pages are written on the server (no script: the CSP allows only this server's
files, and they need none); everything is read from the database, read-only, in the
web view's worker threads.
"""

from __future__ import annotations

import datetime as dt
import html
import statistics
from collections.abc import Awaitable, Callable
from typing import Any
from urllib.parse import quote

from aiohttp import web

from ..ladder.history import standings
from ..ladder.leaderboard import RatedGame, leaderboard, snapshots
from ..ladder.ratings import Rating
from ..ladder.spec import declared
from ..storage import SqlStore
from ..storage.ladders import LadderGameRow
from .reply import json_bytes, send

#: Most games a bot's page shows (its chart: every game, a point each, up to this many).
RECENT = 50
#: The newest games the leaderboard page shows.
BOARD_RECENT = 10
CHART = 2000
#: The largest ``every`` of the snapshots' export.
MAX_EVERY = 100_000

Run = Callable[..., Awaitable[Any]]


def board_data(store: SqlStore, lid: str) -> dict[str, Any] | None:
    with store.snapshot():  # its reads agree while games are rated
        return _board_data(store, lid)


def _board_data(store: SqlStore, lid: str) -> dict[str, Any] | None:
    row = store.ladder(lid)
    if row is None:
        return None
    spec = declared(row.spec)
    rows = standings(store, lid, spec.k)
    return {"id": lid, "name": row.name, "status": row.status.value, "k": spec.k,
            "games": row.rated, "rows": [
                {"rank": p.rank, "bot": p.standing.bot, "score": p.score,
                 "mu": p.standing.rating.mu, "sigma": p.standing.rating.sigma, "low": p.low,
                 "high": p.high, "games": p.standing.games, "wins": p.standing.wins,
                 "win_rate": p.win_rate, "last_game": p.standing.last_game, "trend": p.trend,
                 "suspended": p.standing.suspended is not None,
                 "suspension": p.standing.suspension,
                 "time_forfeits": p.standing.time_forfeits,
                 "last_time_forfeit": p.standing.last_time_forfeit}
                for p in leaderboard(rows, spec.k)],
            "recent": [_game_json(g) for g in store.ladder_games(lid, limit=BOARD_RECENT,
                                                                 newest_first=True)]}


def ladders_data(store: SqlStore) -> list[dict[str, Any]]:
    return [{"id": r.id, "name": r.name, "status": r.status.value, "games": r.rated,
             "created": r.created} for r in store.ladders()]


def ladders_html(rows: list[dict[str, Any]]) -> bytes:
    items = "".join(f"<li><a href=\"/l/{html.escape(r['id'])}\">{html.escape(r['name'])}</a> "
                    f"({html.escape(r['status'])}, {r['games']} games)</li>" for r in rows)
    return _page("Ladders", f"<h1>Ladders</h1><ul>{items or '<li>none yet</li>'}</ul>")


def _game_json(g: LadderGameRow) -> dict[str, Any]:
    return {"id": g.id, "rated": g.rated, "players": g.players, "places": g.places,
            "ratings": g.ratings, "finished": g.finished, "stats": g.stats,
            "result": g.result.to_json() if g.result is not None else None}


def bot_data(store: SqlStore, lid: str, bot: str) -> dict[str, Any] | None:
    with store.snapshot():  # the bot's games and its history agree while games are rated
        return _bot_data(store, lid, bot)


def _bot_data(store: SqlStore, lid: str, bot: str) -> dict[str, Any] | None:
    board = _board_data(store, lid)
    if board is None:
        return None
    row = next((r for r in board["rows"] if r["bot"] == bot), None)
    if row is None:
        return None
    games = store.ladder_games(lid, bot=bot, limit=CHART, newest_first=True)
    seat = [g.players.index(bot) for g in games]
    stats = [(g.stats or [{}] * len(g.players))[s] for g, s in zip(games, seat, strict=True)]
    answer = [st["think_time"] / st["decisions"] for st in stats if st.get("decisions")]
    return {"ladder": {k: board[k] for k in ("id", "name", "status", "k", "games")},
            "bot": row,
            "history": [{"rated": g.rated, "mu": g.ratings[s][0], "sigma": g.ratings[s][1]}
                        for g, s in reversed(list(zip(games, seat, strict=True))) if g.ratings],
            "recent": [_game_json(g) for g in games[:RECENT]],
            "forfeits": sum(1 for g, s in zip(games, seat, strict=True)
                            if g.result is not None and g.result.forfeited == s),
            "timeouts": sum(int(st.get("timeouts", 0)) for st in stats),
            "illegal": sum(int(st.get("illegal", 0)) for st in stats),
            "median_answer": statistics.median(answer) if answer else None}


def snapshot_bytes(store: SqlStore, lid: str, every: int) -> bytes | None:
    """The leaderboard after every ``every`` games, as JSON (None: no such ladder)."""
    row = store.ladder(lid)
    if row is None:
        return None
    k = declared(row.spec).k
    start = {e.bot: Rating(e.start_mu, e.start_sigma) for e in store.entrants(lid)}
    games: list[RatedGame] = []
    after = 0
    while page := store.ladder_games(lid, after_rated=after, limit=1000):
        games += [RatedGame(g.players, g.places or [], [Rating(m, s) for m, s in g.ratings or []],
                            g.finished) for g in page if g.ratings and g.places]
        after = page[-1].rated or after
    return json_bytes({"ladder": lid, "k": k, "every": every, "snapshots": [
        {"games": s.games, "finished": s.finished, "rows": [
            {"rank": p.rank, "bot": p.standing.bot, "score": p.score, "mu": p.standing.rating.mu,
             "sigma": p.standing.rating.sigma, "games": p.standing.games, "wins": p.standing.wins}
            for p in s.places]} for s in snapshots(games, start, k, every)]})


# -- pages -------------------------------------------------------------------------------
def _page(title: str, body: str) -> bytes:
    return ("<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            f"<title>{html.escape(title)} · Chinchón</title><link rel=\"icon\" href=\"data:,\">"
            "<link rel=\"stylesheet\" href=\"/static/style.css\"></head><body>"
            "<header class=\"top\"><a href=\"/\" class=\"brand\">Chinchón referee</a></header>"
            f"<main>{body}</main></body></html>\n").encode()


def _num(x: float | None, fmt: str = ".2f") -> str:
    return "–" if x is None else format(x, fmt)


def board_html(d: dict[str, Any]) -> bytes:
    lid = html.escape(d["id"])
    rows = "".join(
        f"<tr><td>{r['rank']}</td><td><a href=\"/l/{lid}/b/{html.escape(r['bot'])}\">"
        f"{html.escape(r['bot'])}</a></td><td>{_num(r['score'])}</td><td>{_num(r['mu'])} "
        f"[{_num(r['low'], '.1f')}, {_num(r['high'], '.1f')}]</td><td>{r['games']}</td>"
        f"<td>{_num(None if r['win_rate'] is None else 100 * r['win_rate'], '.0f')}%</td>"
        f"<td class=\"time\" data-t=\"{r['last_game'] or ''}\">{_when(r['last_game'])}</td>"
        f"<td>{'+' if r['trend'] > 0 else ''}{_num(r['trend'])}</td>"
        f"<td class=\"health\">{html.escape(r['suspension'])}</td></tr>" for r in d["rows"])
    body = (f"<h1>{html.escape(d['name'])}</h1><p>{html.escape(d['status'])}, {d['games']} games "
            f"rated; ordered by μ − {d['k']:g}σ (<a href=\"/api/l/{lid}\">JSON</a>, "
            f"<a href=\"/api/l/{lid}/games.json\">every game</a>, "
            f"<a href=\"/api/l/{lid}/snapshots.json\">leaderboard snapshots</a>)</p>"
            "<table class=\"leaderboard\"><thead><tr><th>#</th><th>bot</th><th>μ − kσ</th>"
            "<th>rating [95%]</th><th>games</th><th>win rate</th><th>last game</th>"
            f"<th>trend</th><th>health</th></tr></thead><tbody>{rows}</tbody></table>"
            f"<h2>recent games</h2>{_games_table(d['recent'])}")
    return _page(d["name"], body)


def _games_table(recent: list[dict[str, Any]]) -> str:
    """The newest games, each linked to its replay (/r/GAME) and its record."""
    rows = "".join(
        f"<tr><td>{g['rated']}</td><td>{html.escape(' vs '.join(g['players']))}</td>"
        f"<td>{html.escape((g['result'] or {}).get('summary', ''))}</td>"
        f"<td><a class=\"replay\" href=\"/r/{html.escape(quote(g['id'], safe=''))}\">replay</a> "
        f"<a href=\"/api/lg/{html.escape(quote(g['id'], safe=''))}/record.json\">record</a></td></tr>"
        for g in recent)
    return ("<table class=\"games\"><thead><tr><th>#</th><th>players</th><th>result</th>"
            f"<th></th></tr></thead><tbody>{rows or '<tr><td colspan=4>none yet</td></tr>'}"
            "</tbody></table>")


def _when(t: float | None) -> str:
    return "–" if t is None else dt.datetime.fromtimestamp(t, dt.UTC).strftime("%Y-%m-%d %H:%M")


def _chart(history: list[dict[str, Any]], k: float) -> str:
    """mu (a line) and mu - k sigma (a second line) over the bot's games, as SVG."""
    if not history:
        return "<p>no game yet</p>"
    w, h, pad = 600, 200, 20
    lows = [p["mu"] - k * p["sigma"] for p in history]
    top, bottom = max(p["mu"] for p in history), min(lows)
    span = (top - bottom) or 1.0
    n = max(1, len(history) - 1)

    def line(values: list[float]) -> str:
        x = [pad + i * (w - 2 * pad) / n for i in range(len(values))]
        y = [h - pad - (v - bottom) * (h - 2 * pad) / span for v in values]
        return " ".join(f"{a:.1f},{b:.1f}" for a, b in zip(x, y, strict=True))

    return (f"<svg class=\"chart\" viewBox=\"0 0 {w} {h}\" width=\"{w}\" height=\"{h}\" role=\"img\" "
            f"aria-label=\"rating over time\"><polyline fill=\"none\" stroke=\"#36c\" "
            f"stroke-width=\"2\" points=\"{line([p['mu'] for p in history])}\"/>"
            f"<polyline fill=\"none\" stroke=\"#c63\" stroke-width=\"1.5\" points=\"{line(lows)}\"/>"
            f"<text x=\"{pad}\" y=\"12\" font-size=\"11\">μ (blue), μ − {k:g}σ (orange): "
            f"{bottom:.1f} to {top:.1f}</text></svg>")


def bot_html(d: dict[str, Any]) -> bytes:
    b, lad = d["bot"], d["ladder"]
    lid = html.escape(lad["id"])
    median = d["median_answer"]
    body = (f"<h1>{html.escape(b['bot'])}</h1><p><a href=\"/l/{lid}\">{html.escape(lad['name'])}"
            f"</a>: rank {b['rank']}, μ − {lad['k']:g}σ {_num(b['score'])}, μ {_num(b['mu'])} "
            f"± {_num(1.96 * b['sigma'])}, {b['games']} games, {b['wins']:g} won</p>"
            + (f"<p class=\"health\">{html.escape(b['suspension'])}: it is seated again when it "
               "opens a new stream, or when the organizer reinstates it</p>"
               if b["suspension"] else "") +
            f"<p>forfeits {d['forfeits']}, timeouts {d['timeouts']}, illegal attempts "
            f"{d['illegal']}, median answer {_num(None if median is None else 1000 * median, '.1f')}"
            f" ms (<a href=\"/api/l/{lid}/b/{html.escape(b['bot'])}\">JSON</a>)</p>"
            f"{_chart(d['history'], lad['k'])}<h2>recent games</h2>{_games_table(d['recent'])}")
    return _page(f"{b['bot']} · {lad['name']}", body)


# -- routes ------------------------------------------------------------------------------
def add_routes(app: web.Application, store: Callable[[], SqlStore | None], run: Run) -> None:
    """The ladder's routes; ``store``: the read-only store (None: no database), called in
    ``run``, the web view's worker threads."""
    async def read(fn: Callable[..., Any], *args: Any) -> Any:
        def call() -> Any:  # in a worker thread: the store opens there on first use
            s = store()
            return None if s is None else fn(s, *args)

        got = await run(call)
        if got is None:
            raise web.HTTPNotFound(text="no such ladder, or bot")
        return got

    async def index_page(request: web.Request) -> web.StreamResponse:
        return await send(request, ladders_html(await read(ladders_data)), "text/html")

    async def index_json(request: web.Request) -> web.StreamResponse:
        return await send(request, json_bytes(await read(ladders_data)))

    async def board_page(request: web.Request) -> web.StreamResponse:
        d = await read(board_data, request.match_info["lid"])
        return await send(request, board_html(d), "text/html")

    async def board_json(request: web.Request) -> web.StreamResponse:
        return await send(request, json_bytes(await read(board_data, request.match_info["lid"])))

    async def bot_page(request: web.Request) -> web.StreamResponse:
        d = await read(bot_data, request.match_info["lid"], request.match_info["bot"])
        return await send(request, bot_html(d), "text/html")

    async def bot_json(request: web.Request) -> web.StreamResponse:
        d = await read(bot_data, request.match_info["lid"], request.match_info["bot"])
        return await send(request, json_bytes(d))

    async def games_json(request: web.Request) -> web.StreamResponse:
        def every(s: SqlStore, lid: str) -> bytes | None:
            if s.ladder(lid) is None:
                return None
            out, after = [], 0
            while page := s.ladder_games(lid, after_rated=after, limit=1000):
                out += [_game_json(g) for g in page]
                after = page[-1].rated or after
            return json_bytes({"ladder": lid, "games": out})
        return await send(request, await read(every, request.match_info["lid"]))

    async def snapshots_json(request: web.Request) -> web.StreamResponse:
        try:
            every = int(request.query.get("every", "100"))
            if not 1 <= every <= MAX_EVERY:
                raise ValueError
        except ValueError:
            raise web.HTTPBadRequest(text=f"every: a whole number, 1 to {MAX_EVERY}") from None
        return await send(request, await read(snapshot_bytes, request.match_info["lid"], every))

    async def record_json(request: web.Request) -> web.StreamResponse:
        def one(s: SqlStore, gid: str) -> bytes | None:
            g = s.ladder_game(gid)
            return None if g is None or g.record is None else json_bytes(g.record, indent=1)
        return await send(request, await read(one, request.match_info["gid"]))

    app.router.add_get("/l", index_page)
    app.router.add_get("/api/l", index_json)
    app.router.add_get("/l/{lid}", board_page)
    app.router.add_get("/l/{lid}/b/{bot}", bot_page)
    app.router.add_get("/api/l/{lid}", board_json)
    app.router.add_get("/api/l/{lid}/b/{bot}", bot_json)
    app.router.add_get("/api/l/{lid}/games.json", games_json)
    app.router.add_get("/api/l/{lid}/snapshots.json", snapshots_json)
    app.router.add_get("/api/lg/{gid}/record.json", record_json)
