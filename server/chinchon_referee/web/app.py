"""The web view: an aiohttp application served from the referee's own event loop.

Read-only by construction: every route is a GET (anything else is 405), nothing here
writes the database (it is opened read-only, see reader.py) or calls the admin
service. Games in progress are shown only through ``LiveGames.public`` (no hidden
card); records (every card) only of finished games, and, in a tournament with
duplicate deals, only once the tournament is over (a record tells its twins' deals).

Why aiohttp: asyncio-native (it runs on the loop grpc.aio runs on, uvloop included),
streams responses (Server-Sent Events, the records' archive) with back-pressure, and
is a well-kept project with no other service to run; Starlette would need uvicorn
besides, whose own server loop wants to own the process."""

from __future__ import annotations

import asyncio
import json
import re
import time
import uuid
from collections.abc import Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any, TypeVar

from aiohttp import web
from chinchon.engine import RecordError

from ..logs import get_logger
from ..referee import Referee
from ..vocabulary import GameStatus
from .archive import stream_records
from .live import LiveGames
from .reader import Reader
from .replay import ViewError, parse_view, steps
from .sse import Subscribers, Topic, stream
from .views import GameFilter, games_page, standings_of, tournament_snapshot

log = get_logger("web")
T = TypeVar("T")

STATIC = Path(str(resources.files("chinchon_referee.web") / "static"))
#: How often the server looks at the database for changes made outside the games it
#: watches (a tournament's status, a game written): seconds. The browser never polls.
TICK = 1.0
#: Seconds between two looks at a delayed full view of a game that made no move.
FULL_VIEW_REFRESH = 1.0
#: Content-Security-Policy of every page: nothing from anywhere but this server.
CSP = ("default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; "
       "connect-src 'self'; base-uri 'none'; form-action 'none'")


@dataclass
class WebContext:
    """What the web view reads from."""

    #: The referee whose games in progress it shows (None: records only).
    referee: Referee | None = None
    #: The database: a SQLite file or a postgresql:// URL (None: no tournaments, e.g.
    #: ``chinchon replay --view``).
    db: str | None = None
    #: Records given by the command line (``chinchon replay FILE --view``), by game id.
    records: dict[str, dict[str, Any]] = field(default_factory=dict)
    #: Live streams open at once, in all and from one address.
    max_subscribers: int = 200
    max_per_peer: int = 20
    #: Checks the admin token (constant time: ``TokenBook.is_admin``); None: the
    #: organizer's full view of games in progress is off.
    is_admin: Callable[[str | None], bool] | None = None
    #: The full view shows a table as it was this many seconds ago at least (0: as it
    #: is now, which lets whoever sees the screen feed a bot: unsafe).
    full_view_delay: float = 60.0
    #: Sharing the database with other referee processes: the web view's URL of a
    #: process (by its name), None if it has none or is not known. A game played
    #: by another process is shown in the running lists, and its pages send the
    #: browser to that process's web view.
    web_of: Callable[[str], str | None] | None = None
    #: Sharing the database: each bot's streams on the other processes, as (streams,
    #: seated, idle), counted on the home page with this process's.
    streams_elsewhere: Callable[[], dict[str, tuple[int, int, int]]] | None = None


class WebApp:
    def __init__(self, ctx: WebContext) -> None:
        self.ctx = ctx
        self.reader = Reader(ctx.db) if ctx.db else None
        if ctx.full_view_delay < 0 or ctx.full_view_delay != ctx.full_view_delay:
            raise ValueError("the full view's delay is a number of seconds, 0 or more")
        self.live = LiveGames(ctx.full_view_delay if ctx.is_admin is not None else None)
        self.boot = uuid.uuid4().hex[:12]
        self.closing = asyncio.Event()
        self.subs = Subscribers(ctx.max_subscribers, ctx.max_per_peer)
        self.home_topic = Topic()
        self.t_topics: dict[str, Topic] = {}
        self._cache: dict[str, tuple[int, dict[str, Any] | None]] = {}
        self._locks: dict[str, asyncio.Lock] = {}
        self._seen: dict[str, tuple[Any, ...]] = {}
        #: Seconds the last snapshot of each key took to build.
        self._cost: dict[str, float] = {}
        self._tick: asyncio.Task[None] | None = None
        #: The web view's own worker threads: its reads never wait behind (nor hold up)
        #: the referee's own thread work (practice records), and at most two run at once.
        self._pool = ThreadPoolExecutor(2, thread_name_prefix="web")
        self._unlisten: Callable[[], None] | None = None
        ref = ctx.referee
        if ref is not None:
            ref.services.observer = self.live.observe
            self._unlisten = ref.lobby.listen(self.home_topic.bump)
        self.live.on_change.append(self._game_changed)

    async def run(self, fn: Callable[..., T], *args: Any) -> T:
        """``fn(*args)`` in one of the web view's worker threads."""
        return await asyncio.get_running_loop().run_in_executor(self._pool, fn, *args)

    # -- topics -------------------------------------------------------------------------
    def _game_changed(self, tid: str) -> None:
        self.home_topic.bump()
        if tid:
            self.topic(tid).bump()

    def topic(self, tid: str) -> Topic:
        t = self.t_topics.get(tid)
        if t is None:
            if len(self.t_topics) > 10_000:
                self.t_topics.clear()
            t = self.t_topics[tid] = Topic()
        return t

    async def _watch_db(self) -> None:
        """Move the topics on when the database changed (a game finished, a status)."""
        while not self.closing.is_set():
            if self.reader is not None:
                try:
                    rows = await self.run(self.reader.tournaments)
                except Exception as e:  # a database being created: next time
                    log.debug("web_db_read_failed", error=str(e))
                    rows = []
                changed = False
                for t in rows:
                    sig = (t.status, t.done, t.running, t.total)
                    if self._seen.get(t.id) != sig:
                        self._seen[t.id] = sig
                        self.topic(t.id).bump()
                        changed = True
                bots = self._bots()
                sig_b = tuple((b["name"], b["streams"], b["seated"]) for b in bots)
                if changed or self._seen.get("") != sig_b:
                    self._seen[""] = sig_b
                    self.home_topic.bump()
            try:
                await asyncio.wait_for(self.closing.wait(), TICK)
            except TimeoutError:
                pass

    async def _cached(self, key: str, version: int,
                      make: Callable[[], Awaitable[dict[str, Any] | None]]) -> dict[str, Any] | None:
        """One snapshot per key and version, however many pages ask for it."""
        lock = self._locks.setdefault(key, asyncio.Lock())
        async with lock:
            hit = self._cache.get(key)
            if hit is not None and hit[0] == version:
                return hit[1]
            t0 = time.monotonic()
            snap = await make()
            self._cost[key] = time.monotonic() - t0
            if len(self._cache) > 1000:
                self._cost.clear()
                self._cache.clear()
            self._cache[key] = (version, snap)
            return snap

    # -- data ---------------------------------------------------------------------------
    def _bots(self) -> list[dict[str, Any]]:
        ref = self.ctx.referee
        if ref is None:
            return []
        per: dict[str, dict[str, Any]] = {}
        for conn in list(ref.connections):
            b = per.setdefault(conn.bot, {"name": conn.bot, "streams": 0, "seated": 0, "idle": 0})
            b["streams"] += 1
            if conn.busy:
                b["seated"] += 1
            else:
                b["idle"] += 1
        if self.ctx.streams_elsewhere is not None:
            for name, (streams, seated, idle) in self.ctx.streams_elsewhere().items():
                b = per.setdefault(name, {"name": name, "streams": 0, "seated": 0, "idle": 0})
                b["streams"] += streams
                b["seated"] += seated
                b["idle"] += idle
        out = sorted(per.values(), key=lambda b: b["name"])
        for b in out:
            lat = self.live.recent_latency(b["name"])
            b["latency_ms"] = None if lat is None else round(lat * 1000, 1)
        return out

    async def home(self) -> dict[str, Any]:
        rows = await self.run(self.reader.tournaments) if self.reader else []
        return {"boot": self.boot, "time": time.time(),
                "tournaments": [t.public() for t in rows], "bots": self._bots(),
                "running": self.live.running(), "records": sorted(self.ctx.records)}

    async def _running(self, tid: str) -> list[dict[str, Any]]:
        """The games of ``tid`` in progress: here (with their scores), and, sharing the
        database, those of the other processes (who plays; their page is theirs)."""
        running = self.live.running(tid)
        if self.ctx.web_of is not None and self.reader is not None:
            here = {g["id"] for g in running}
            for gid, players in await self.run(self.reader.running_games, tid):
                if gid not in here:
                    running.append({"id": gid, "tournament": tid, "players": players,
                                    "scores": [], "hand_no": None, "practice": False,
                                    "elsewhere": True})
        return running

    async def _elsewhere(self, gid: str) -> str | None:
        """Sharing the database: the web view of the process that plays ``gid``, when
        it is not played here (None otherwise)."""
        web_of = self.ctx.web_of
        if web_of is None or self.reader is None or self.live.topic(gid) is not None:
            return None
        owner = await self.run(self.reader.owner_of, gid)
        return None if owner is None else web_of(owner)

    async def _redirect_elsewhere(self, request: web.Request) -> None:
        """A game played by another process: its page and live views are that process's."""
        url = await self._elsewhere(request.match_info["gid"])
        if url is not None:
            raise web.HTTPTemporaryRedirect(url.rstrip("/") + request.path_qs)

    async def tournament(self, tid: str) -> dict[str, Any] | None:
        if self.reader is None:
            return None
        reader = self.reader
        running = await self._running(tid)

        async def make() -> dict[str, Any] | None:
            return await self.run(tournament_snapshot, reader, tid, running)

        snap = await self._cached("t:" + tid, self.topic(tid).version, make)
        if snap is not None:
            snap = {**snap, "boot": self.boot, "running": running}
        return snap

    async def record(self, gid: str) -> dict[str, Any]:
        """The record of finished game ``gid``; HTTP errors say why there is none."""
        rec = self.ctx.records.get(gid)
        if rec is not None:
            return rec
        if self.reader is None:
            raise web.HTTPNotFound(text=f"no game {gid}")
        row = await self.run(self.reader.record, gid)
        if row is None:
            raise web.HTTPNotFound(text=f"no game {gid}")
        if row.status is not GameStatus.FINISHED or row.record is None:
            raise web.HTTPNotFound(text=f"game {gid} is not finished: its record is shown "
                                        "when it ends (watch it live meanwhile)")
        if row.tournament_id:
            t = await self.run(self.reader.tournament, row.tournament_id)
            if t is not None and t.duplicate_deals and not t.status.over:
                raise web.HTTPForbidden(text="this tournament deals twin games (duplicate "
                                             "deals): its records are shown when it ends")
        return row.record

    # -- handlers -----------------------------------------------------------------------
    async def h_page(self, request: web.Request) -> web.FileResponse:
        name = request.match_info.route.name or "index"
        if name == "game":
            await self._redirect_elsewhere(request)
        return web.FileResponse(STATIC / f"{name}.html")

    async def h_home(self, request: web.Request) -> web.Response:
        return web.json_response(await self.home())

    async def h_home_events(self, request: web.Request) -> web.StreamResponse:
        return await stream(request, self.subs, self.home_topic, self.home, "home", self.closing,
                            shared=True)

    async def h_tournament(self, request: web.Request) -> web.Response:
        snap = await self.tournament(request.match_info["tid"])
        if snap is None:
            raise web.HTTPNotFound(text="no such tournament")
        return web.json_response(snap)

    async def h_tournament_events(self, request: web.Request) -> web.StreamResponse:
        tid = request.match_info["tid"]
        if self.reader is None or await self.run(self.reader.tournament, tid) is None:
            raise web.HTTPNotFound(text="no such tournament")
        # A large tournament's standings take a while to compute: they are computed
        # again at most every 5 times as long as they took (never more than twice a second).
        return await stream(request, self.subs, self.topic(tid), lambda: self.tournament(tid),
                            "tournament", self.closing,
                            min_interval=lambda: max(0.5, 5 * self._cost.get("t:" + tid, 0.0)),
                            shared=True)

    async def h_games(self, request: web.Request) -> web.Response:
        tid = request.match_info["tid"]
        try:
            f = GameFilter.parse(dict(request.query))
        except ValueError as e:
            raise web.HTTPBadRequest(text=str(e)) from None
        if self.reader is None:
            raise web.HTTPNotFound(text="no such tournament")
        reader = self.reader

        async def load() -> dict[str, Any] | None:
            return {"games": await self.run(reader.finished_games, tid)}

        # One read of the finished games per change of the tournament, shared by pages.
        got = await self._cached("g:" + tid, self.topic(tid).version, load)
        assert got is not None
        return web.json_response(games_page(got["games"], f))

    async def _standings(self, tid: str) -> Any:
        if self.reader is None:
            raise web.HTTPNotFound(text="no such tournament")
        reader = self.reader
        t = await self.run(reader.tournament, tid)
        if t is None:
            raise web.HTTPNotFound(text="no such tournament")
        return await self.run(standings_of, reader, t)

    async def h_standings_json(self, request: web.Request) -> web.Response:
        tid = request.match_info["tid"]
        st = await self._standings(tid)
        return web.Response(text=json.dumps(st.to_json(), indent=1), content_type="application/json",
                            headers=_attachment(f"{tid}-standings.json"))

    async def h_standings_csv(self, request: web.Request) -> web.Response:
        tid = request.match_info["tid"]
        st = await self._standings(tid)
        return web.Response(text=st.to_csv(), content_type="text/csv",
                            headers=_attachment(f"{tid}-standings.csv"))

    async def h_archive(self, request: web.Request) -> web.StreamResponse:
        tid = request.match_info["tid"]
        t = None if self.reader is None else await self.run(self.reader.tournament, tid)
        if self.reader is None or t is None:
            raise web.HTTPNotFound(text="no such tournament")
        if t.duplicate_deals and not t.status.over:
            raise web.HTTPForbidden(text="this tournament deals twin games (duplicate deals): "
                                         "its records are shown when it ends")
        return await stream_records(request, self.reader, tid, self.run)

    async def h_record(self, request: web.Request) -> web.Response:
        gid = request.match_info["gid"]
        rec = await self.record(gid)
        return web.Response(text=json.dumps(rec, indent=1, ensure_ascii=False),
                            content_type="application/json", headers=_attachment(f"{gid}.json"))

    async def h_replay(self, request: web.Request) -> web.Response:
        gid = request.match_info["gid"]
        rec = await self.record(gid)
        seats = len(rec.get("seats", []))
        try:
            view = parse_view(request.query.get("view", "all"), seats)
            data = await self.run(steps, rec, view)
        except (ViewError, RecordError) as e:
            raise web.HTTPBadRequest(text=str(e)) from None
        return web.json_response(data)

    def _table_view(self, request: web.Request) -> tuple[Callable[[], dict[str, Any] | None], bool]:
        """What ``view`` asks of a game in progress: ``public`` (anyone: no hidden card)
        or ``all`` (the admin token only, in ``Authorization: Bearer``: every hand, as
        the table was ``full_view_delay`` seconds ago). 400, 401 or 403 otherwise."""
        gid = request.match_info["gid"]
        view = request.query.get("view", "public")
        if view == "public":
            return (lambda: self.live.public(gid)), False
        if view != "all":
            raise web.HTTPBadRequest(text="view: public (the default) or all")
        check = self.ctx.is_admin
        if check is None:
            raise web.HTTPForbidden(text="the full view is off here (chinchon serve --http "
                                         "offers it to the admin token)")
        scheme, _, token = request.headers.get("Authorization", "").partition(" ")
        if scheme.lower() != "bearer" or not check(token.strip() or None):
            raise web.HTTPUnauthorized(text="view=all needs the admin token: send "
                                            "'Authorization: Bearer <token>'",
                                       headers={"WWW-Authenticate": 'Bearer realm="chinchon"'})
        delay = self.ctx.full_view_delay
        return (lambda: self.live.delayed(gid, delay)), True

    async def h_table(self, request: web.Request) -> web.Response:
        await self._redirect_elsewhere(request)
        snap = self._table_view(request)[0]()
        if snap is None:
            raise web.HTTPNotFound(text="this game is not in progress here")
        return web.json_response(snap, headers={"Cache-Control": "no-store"})

    async def h_live(self, request: web.Request) -> web.StreamResponse:
        gid = request.match_info["gid"]
        await self._redirect_elsewhere(request)
        view, full = self._table_view(request)
        topic = self.live.topic(gid)
        if topic is None:
            topic = Topic()  # not in progress here: one "gone" event, and the stream ends

        async def snap() -> dict[str, Any] | None:
            return view()

        # The full view moves on with time too (the table of D seconds ago): looked at
        # again each second without a move. Only the public view is shared by streams.
        return await stream(request, self.subs, topic, snap, "table", self.closing, min_interval=0.1,
                            refresh=FULL_VIEW_REFRESH if full else None, shared=not full)

    # -- the application ----------------------------------------------------------------
    def app(self) -> web.Application:
        app = web.Application(middlewares=[_headers], client_max_size=1024)
        pages = [("/", "index"), ("/t/{tid}", "tournament"), ("/g/{gid}", "game"),
                 ("/r/{gid}", "replay")]
        for path, name in pages:
            app.router.add_get(path, self.h_page, name=name)
        app.router.add_get("/api/home", self.h_home)
        app.router.add_get("/api/home/events", self.h_home_events)
        app.router.add_get("/api/t/{tid}", self.h_tournament)
        app.router.add_get("/api/t/{tid}/events", self.h_tournament_events)
        app.router.add_get("/api/t/{tid}/games", self.h_games)
        app.router.add_get("/api/t/{tid}/standings.json", self.h_standings_json)
        app.router.add_get("/api/t/{tid}/standings.csv", self.h_standings_csv)
        app.router.add_get("/api/t/{tid}/records.zip", self.h_archive)
        app.router.add_get("/api/g/{gid}/record.json", self.h_record)
        app.router.add_get("/api/g/{gid}/replay", self.h_replay)
        app.router.add_get("/api/g/{gid}/live", self.h_live)
        app.router.add_get("/api/g/{gid}/table", self.h_table)
        app.router.add_static("/static/", STATIC, follow_symlinks=False)
        return app

    def start_watching(self) -> None:
        if self._tick is None:
            self._tick = asyncio.ensure_future(self._watch_db())

    async def close(self) -> None:
        self.closing.set()
        if self._unlisten is not None:
            self._unlisten()
        ref = self.ctx.referee
        if ref is not None and ref.services.observer == self.live.observe:
            ref.services.observer = None
        if self._tick is not None:
            self._tick.cancel()
            await asyncio.gather(self._tick, return_exceptions=True)
        self._pool.shutdown(wait=True, cancel_futures=True)  # no read in flight now
        if self.reader is not None:
            self.reader.close()


def _attachment(name: str) -> dict[str, str]:
    safe = re.sub(r"[^A-Za-z0-9._-]", "_", name)
    return {"Content-Disposition": f'attachment; filename="{safe}"'}


@web.middleware
async def _headers(request: web.Request,
                   handler: Callable[[web.Request], Awaitable[web.StreamResponse]]) -> web.StreamResponse:
    resp = await handler(request)
    if not resp.prepared:
        resp.headers.setdefault("Content-Security-Policy", CSP)
        resp.headers.setdefault("X-Content-Type-Options", "nosniff")
        resp.headers.setdefault("Referrer-Policy", "no-referrer")
    return resp
