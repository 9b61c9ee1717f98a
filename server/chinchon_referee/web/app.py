"""The web view: an aiohttp application, served by a process of its own (process.py),
fed by its referee (mirror.py), or by ``chinchon replay --view`` (records only).

Read-only by construction: every route is a GET (anything else is 405), nothing here
writes the database (it is opened read-only, see reader.py) or calls the admin
service. Games in progress are shown only through ``LiveGames.public`` (no hidden
card); records (every card) only of finished games (finished.py).

Every request passes the guard first (guard.py: the Host header, rates and requests in
flight, per client and in all); answers are built in worker threads (snapshots, pages,
replays: JSON encoded there too) and written in pieces from the handler (reply.py).

Why aiohttp: asyncio-native, streams responses (Server-Sent Events, the records'
archive) with back-pressure, exposes its connections' protocol (serving.py bounds
them), and is a well-kept project with no other service to run."""

from __future__ import annotations

import asyncio
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
from chinchon.engine import GameState

from ..logs import get_logger
from ..storage import StoreError
from ..storage.beside import stderr_folder
from . import ladder_view
from .archive import stream_records
from .botlogs import BotLogs
from .botpage import MAX_BOT_NAME, bot_page
from .cache import Counted, SingleFlight
from .finished import Finished
from .guard import Guard, security_headers
from .live import LiveGames
from .local_logs import LocalLogs
from .mirror import Mirror
from .reader import Reader
from .replay import ViewError, parse_view
from .reply import json_bytes, send
from .serving import Tracker
from .settings import WebSettings
from .sse import Subscribers, Topic, stream
from .step_view import live_step_request, parse_step
from .views import GameFilter, games_page, standings_of, tournament_snapshot

log = get_logger("web")
T = TypeVar("T")

STATIC = Path(str(resources.files("chinchon_referee.web") / "static"))
#: How often the server looks at the database for changes made outside the games it
#: watches (a tournament's status, a game written): seconds. The browser never polls.
TICK = 1.0
#: Seconds between two looks at a delayed full view of a game that made no move.
FULL_VIEW_REFRESH = 1.0
#: Snapshots kept (tournament pages, finished games' lists), the least recent forgotten.
SNAPSHOTS = 256
#: Tournaments whose topic is kept (past it, the oldest ones are forgotten).
TOPICS = 10_000
#: An answer that depends on who asks: never kept by a cache.
_PRIVATE = {"Cache-Control": "no-store", "Vary": "Authorization"}


@dataclass
class AppConfig:
    """What the web view reads from, and its bounds."""

    #: The database: a SQLite file or a postgresql:// URL (None: no tournaments, e.g.
    #: ``chinchon replay --view``).
    db: str | None = None
    #: Records given by the command line (``chinchon replay FILE --view``), by game id.
    records: dict[str, dict[str, Any]] = field(default_factory=dict)
    #: The stderr files kept beside those records (a practice's): local_logs.py.
    local_logs: LocalLogs = field(default_factory=LocalLogs)
    settings: WebSettings = field(default_factory=WebSettings)
    #: The address it listens on (its name is one the Host header may give).
    bound_host: str = "127.0.0.1"


class WebApp:
    def __init__(self, config: AppConfig, mirror: Mirror | None = None) -> None:
        self.config = config
        s = config.settings
        self.reader = Reader(config.db) if config.db else None
        self.mirror = mirror
        self._no_games = LiveGames(None)
        self.boot = uuid.uuid4().hex[:12]
        self.closing = asyncio.Event()
        self.subs = Subscribers(s.max_streams, s.max_streams_per_client)
        self.guard = Guard(s, config.bound_host)
        self.tracker = Tracker(s)
        self.home_topic = Topic()
        self.t_topics: dict[str, Topic] = {}
        self._snaps: Counted[tuple[int, dict[str, Any] | None]] = Counted(SNAPSHOTS)
        #: Seconds the last snapshot of each key took to build.
        self._cost: Counted[float] = Counted(SNAPSHOTS)
        self._flight: SingleFlight[dict[str, Any] | None] = SingleFlight()
        self._seen: dict[str, tuple[Any, ...]] = {}
        self._tick: asyncio.Task[None] | None = None
        #: The web view's worker threads: at most two reads or builds run at once.
        self._pool = ThreadPoolExecutor(2, thread_name_prefix="web")
        self.finished = Finished(self.reader, config.records, self.run, s.cache_bytes,
                                 stderr_folder(config.db), config.local_logs)
        self.logs = BotLogs(self.reader, stderr_folder(config.db), self.finished, self.run,
                            lambda t: self.mirror is not None and self.mirror.is_admin(t),
                            config.local_logs)
        if mirror is not None:
            mirror.on_change(self._game_changed)
            mirror.on_lobby.append(self.home_topic.bump)
            mirror.on_store.append(self._store_changed)

    @property
    def live(self) -> LiveGames:
        return self.mirror.live if self.mirror is not None else self._no_games

    async def run(self, fn: Callable[..., T], *args: Any) -> T:
        """``fn(*args)`` in one of the web view's worker threads."""
        return await asyncio.get_running_loop().run_in_executor(self._pool, fn, *args)

    # -- topics -------------------------------------------------------------------------
    def _game_changed(self, tid: str) -> None:
        self.home_topic.bump()
        if tid:
            self.topic(tid).bump()

    def _store_changed(self) -> None:
        """The database stopped or started again taking writes: every page shows it."""
        self.home_topic.bump()
        for t in list(self.t_topics.values()):
            t.bump()

    def _store(self) -> dict[str, Any] | None:
        """The notice of a database that does not take writes, None while it does."""
        return self.mirror.store if self.mirror is not None else None

    def topic(self, tid: str) -> Topic:
        """The topic of a tournament this process knows of (the database's, or one of
        the referee's games)."""
        t = self.t_topics.get(tid)
        if t is None:
            while len(self.t_topics) >= TOPICS:
                self.t_topics.pop(next(iter(self.t_topics)))
            t = self.t_topics[tid] = Topic()
        return t

    def _version(self, tid: str) -> int:
        """The version of ``tid``'s topic; -1 for an id nobody told of (nothing kept)."""
        t = self.t_topics.get(tid)
        return -1 if t is None else t.version

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
                if changed:
                    self.home_topic.bump()
            try:
                await asyncio.wait_for(self.closing.wait(), TICK)
            except TimeoutError:
                pass

    async def _cached(self, key: str, version: int,
                      make: Callable[[], Awaitable[dict[str, Any] | None]]) -> dict[str, Any] | None:
        """One snapshot per key and version, however many pages ask for it."""
        hit = self._snaps.get(key)
        if hit is not None and hit[0] == version:
            return hit[1]

        async def build() -> dict[str, Any] | None:
            t0 = time.monotonic()
            snap = await make()
            self._cost.put(key, time.monotonic() - t0)
            self._snaps.put(key, (version, snap))
            return snap

        return await self._flight.run((key, version), build)

    # -- data ---------------------------------------------------------------------------
    def _bots(self) -> list[dict[str, Any]]:
        m = self.mirror
        if m is None:
            return []
        per: dict[str, dict[str, Any]] = {}
        for name, streams, seated, idle in m.bots:
            per[name] = {"name": name, "streams": streams, "seated": seated, "idle": idle}
        for name, (streams, seated, idle) in m.elsewhere.items():
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
        try:
            rows = await self.run(self.reader.tournaments) if self.reader else []
        except StoreError:  # no database yet (a web process run apart, first)
            rows = []
        boot = self.mirror.boot if self.mirror is not None and self.mirror.boot else self.boot
        return {"boot": boot, "time": time.time(),
                "tournaments": [t.public() for t in rows], "bots": self._bots(),
                "running": self.live.running(), "records": sorted(self.config.records),
                "store": self._store()}

    @property
    def _sharing(self) -> bool:
        return self.mirror is not None and self.mirror.sharing

    async def _running(self, tid: str) -> list[dict[str, Any]]:
        """The games of ``tid`` in progress: here (with their scores), and, sharing the
        database, those of the other processes (who plays; their page is theirs)."""
        running = self.live.running(tid)
        if self._sharing and self.reader is not None:
            here = {g["id"] for g in running}
            for gid, players in await self.run(self.reader.running_games, tid):
                if gid not in here:
                    running.append({"id": gid, "tournament": tid, "players": players,
                                    "scores": [], "hand_no": None, "practice": False,
                                    "elsewhere": True})
        return running

    async def _redirect_elsewhere(self, request: web.Request) -> None:
        """A game played by another process: its page and live views are that process's."""
        gid = request.match_info["gid"]
        if not self._sharing or self.reader is None or self.live.topic(gid) is not None:
            return
        assert self.mirror is not None
        owner = await self.run(self.reader.owner_of, gid)
        url = None if owner is None else self.mirror.web_of(owner)
        if url is not None:
            raise web.HTTPTemporaryRedirect(url.rstrip("/") + request.path_qs)

    async def tournament(self, tid: str) -> dict[str, Any] | None:
        if self.reader is None:
            return None
        reader = self.reader
        running = await self._running(tid)

        async def make() -> dict[str, Any] | None:
            return await self.run(tournament_snapshot, reader, tid, running)

        snap = await self._cached("t:" + tid, self._version(tid), make)
        if snap is not None:
            snap = {**snap, "boot": self.boot if self.mirror is None else self.mirror.boot,
                    "running": running, "store": self._store()}
        return snap

    # -- handlers -----------------------------------------------------------------------
    async def h_page(self, request: web.Request) -> web.FileResponse:
        name = request.match_info.route.name or "index"
        if name == "game":
            await self._redirect_elsewhere(request)
        return web.FileResponse(STATIC / f"{name}.html")

    async def h_home(self, request: web.Request) -> web.StreamResponse:
        return await send(request, json_bytes(await self.home()))

    async def h_home_events(self, request: web.Request) -> web.StreamResponse:
        return await stream(request, self.subs, self.home_topic, self.home, "home", self.closing,
                            shared=True, write_timeout=self.config.settings.stream_write_timeout)

    async def h_tournament(self, request: web.Request) -> web.StreamResponse:
        snap = await self.tournament(request.match_info["tid"])
        if snap is None:
            raise web.HTTPNotFound(text="no such tournament")
        return await send(request, await self.run(json_bytes, snap))

    async def h_tournament_events(self, request: web.Request) -> web.StreamResponse:
        tid = request.match_info["tid"]
        if self.reader is None or await self.run(self.reader.tournament, tid) is None:
            raise web.HTTPNotFound(text="no such tournament")
        # A large tournament's standings take a while to compute: they are computed
        # again at most every 5 times as long as they took (never more than twice a second).
        return await stream(request, self.subs, self.topic(tid), lambda: self.tournament(tid),
                            "tournament", self.closing,
                            min_interval=lambda: max(0.5, 5 * (self._cost.get("t:" + tid) or 0.0)),
                            shared=True, write_timeout=self.config.settings.stream_write_timeout)

    async def h_games(self, request: web.Request) -> web.StreamResponse:
        tid = request.match_info["tid"]
        try:
            f = GameFilter.parse(dict(request.query))
        except ValueError as e:
            raise web.HTTPBadRequest(text=str(e)) from None
        if self.reader is None:
            raise web.HTTPNotFound(text="no such tournament")
        reader = self.reader

        async def load() -> dict[str, Any] | None:
            if await self.run(reader.tournament, tid) is None:
                return None
            return {"games": await self.run(reader.finished_games, tid)}

        # One read of the finished games per change of the tournament, shared by pages.
        got = await self._cached("g:" + tid, self._version(tid), load)
        if got is None:
            raise web.HTTPNotFound(text="no such tournament")
        return await send(request, await self.run(lambda: json_bytes(games_page(got["games"], f))))

    async def _standings(self, tid: str) -> Any:
        if self.reader is None:
            raise web.HTTPNotFound(text="no such tournament")
        reader = self.reader
        t = await self.run(reader.tournament, tid)
        if t is None:
            raise web.HTTPNotFound(text="no such tournament")
        return await self.run(standings_of, reader, t)

    async def h_standings_json(self, request: web.Request) -> web.StreamResponse:
        tid = request.match_info["tid"]
        st = await self._standings(tid)
        body = await self.run(lambda: json_bytes(st.to_json(), indent=1))
        return await send(request, body, headers=_attachment(f"{tid}-standings.json"))

    async def h_standings_csv(self, request: web.Request) -> web.StreamResponse:
        tid = request.match_info["tid"]
        st = await self._standings(tid)
        body = await self.run(lambda: st.to_csv().encode())
        return await send(request, body, "text/csv", headers=_attachment(f"{tid}-standings.csv"))

    async def h_archive(self, request: web.Request) -> web.StreamResponse:
        tid = request.match_info["tid"]
        t = None if self.reader is None else await self.run(self.reader.tournament, tid)
        if self.reader is None or t is None:
            raise web.HTTPNotFound(text="no such tournament")
        if t.duplicate_deals and not t.status.over:
            raise web.HTTPForbidden(text="this tournament deals twin games (duplicate deals): "
                                         "its records are shown when it ends")
        return await stream_records(request, self.reader, tid, self.run)

    async def h_record(self, request: web.Request) -> web.StreamResponse:
        gid = request.match_info["gid"]
        body = await self.finished.record_json(gid)
        return await send(request, body, headers=_attachment(f"{gid}.json"))

    async def h_replay(self, request: web.Request) -> web.StreamResponse:
        gid = request.match_info["gid"]
        return await send(request, await self.finished.replay_json(gid, request.query.get("view", "all")))

    async def h_bot(self, request: web.Request) -> web.StreamResponse:
        """One bot's games and figures (botpage.py), rebuilt when the database changed."""
        name = request.match_info["name"]
        if self.reader is None or len(name) > MAX_BOT_NAME:
            raise web.HTTPNotFound(text=f"no bot {name[:MAX_BOT_NAME]}")
        reader = self.reader

        async def load() -> dict[str, Any] | None:
            data: dict[str, Any] | None = await self.run(bot_page, reader, name)
            return data

        got = await self._cached("b:" + name, self.home_topic.version, load)
        if got is None:
            raise web.HTTPNotFound(text=f"no bot {name} in any tournament")
        return await send(request, await self.run(json_bytes, got))

    async def h_stderr(self, request: web.Request) -> web.StreamResponse:
        """A seat's bot's stderr lines of a finished game: its token or the admin
        token (botlogs.py)."""
        gid, seat = request.match_info["gid"], request.match_info["seat"]
        body = await self.logs.game_share(request, gid, seat)
        return await send(request, body, "text/plain", headers=_PRIVATE)

    async def h_bot_stderr(self, request: web.Request) -> web.StreamResponse:
        """A bot's stderr lines no one game owns, of finished games: its token or the
        admin token (botlogs.py)."""
        name = request.match_info["name"]
        if len(name) > MAX_BOT_NAME:
            raise web.HTTPNotFound(text=f"no bot {name[:MAX_BOT_NAME]}")
        body = await self.logs.bot_log(request, name)
        return await send(request, body, "text/plain", headers=_PRIVATE)

    async def h_step(self, request: web.Request) -> web.StreamResponse:
        """A decision as its bot received it: of a finished game (anyone, like its
        record), or with ``view=all`` of a game in progress (the admin token, as far as
        the full view shows it)."""
        gid, step = request.match_info["gid"], request.match_info["step"]
        seat = request.query.get("seat", "")
        if request.query.get("view", "") == "all":
            delay = self._full_view_delay(request)
            shown = self.live.delayed_steps(gid, delay)
            if shown is not None:
                return await self._live_step(request, gid, step, seat, *shown)
        body = await self.finished.step_json(gid, step, seat)
        return await send(request, body)

    async def _live_step(self, request: web.Request, gid: str, step_text: str, seat_text: str,
                         actions: list[dict[str, Any]], state: GameState) -> web.StreamResponse:
        try:
            step = parse_step(step_text)
            seat = parse_view(seat_text or "all", len(state.scores))
            names = list(self.live.tables[gid].info.names)
            data = await self.run(live_step_request, gid, actions, state.rules, names, step, seat)
        except (ViewError, KeyError) as e:
            raise web.HTTPBadRequest(text=str(e)) from None
        return await send(request, json_bytes(data),
                          headers={"Cache-Control": "no-store", "Vary": "Authorization"})

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
        delay = self._full_view_delay(request)
        return (lambda: self.live.delayed(gid, delay)), True

    def _full_view_delay(self, request: web.Request) -> float:
        """The full view's delay, for a request that carries the admin token; 403 where
        the full view is off, 401 without the token."""
        m = self.mirror
        if m is None or not m.full_view:
            raise web.HTTPForbidden(text="the full view is off here (chinchon serve --http "
                                         "offers it to the admin token)")
        scheme, _, token = request.headers.get("Authorization", "").partition(" ")
        if scheme.lower() != "bearer" or not m.is_admin(token.strip() or None):
            raise web.HTTPUnauthorized(text="view=all needs the admin token: send "
                                            "'Authorization: Bearer <token>'",
                                       headers={"WWW-Authenticate": 'Bearer realm="chinchon"'})
        return m.delay

    async def h_table(self, request: web.Request) -> web.StreamResponse:
        await self._redirect_elsewhere(request)
        snap = self._table_view(request)[0]()
        if snap is None:
            raise web.HTTPNotFound(text="this game is not in progress here")
        return await send(request, json_bytes(snap),
                          headers={"Cache-Control": "no-store", "Vary": "Authorization"})

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
                            refresh=FULL_VIEW_REFRESH if full else None, shared=not full,
                            write_timeout=self.config.settings.stream_write_timeout)

    # -- the application ----------------------------------------------------------------
    def app(self) -> web.Application:
        app = web.Application(middlewares=[self.guard.middleware(self.tracker.busy), _store_errors],
                              client_max_size=1024)
        app.on_response_prepare.append(security_headers)
        pages = [("/", "index"), ("/t/{tid}", "tournament"), ("/g/{gid}", "game"),
                 ("/r/{gid}", "replay"), ("/b/{name}", "bot")]
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
        app.router.add_get("/api/g/{gid}/step/{step}", self.h_step)
        app.router.add_get("/api/b/{name}", self.h_bot)
        app.router.add_get("/api/g/{gid}/stderr/{seat}", self.h_stderr)
        app.router.add_get("/api/b/{name}/stderr", self.h_bot_stderr)
        app.router.add_get("/api/g/{gid}/live", self.h_live)
        app.router.add_get("/api/g/{gid}/table", self.h_table)
        ladder_view.add_routes(app, lambda: self.reader.store if self.reader else None, self.run)
        app.router.add_static("/static/", STATIC, follow_symlinks=False)
        return app

    def start_watching(self) -> None:
        if self._tick is None:
            self._tick = asyncio.ensure_future(self._watch_db())

    async def close(self) -> None:
        self.closing.set()
        if self._tick is not None:
            self._tick.cancel()
            await asyncio.gather(self._tick, return_exceptions=True)
        self._pool.shutdown(wait=True, cancel_futures=True)  # no read in flight now
        if self.reader is not None:
            self.reader.close()


@web.middleware
async def _store_errors(request: web.Request, handler: Callable[[web.Request], Awaitable[web.StreamResponse]]
                        ) -> web.StreamResponse:
    """A database out of reach (or not there yet) is 503, said plainly."""
    try:
        return await handler(request)
    except StoreError as e:
        log.warning("web_db_unreadable", error=str(e)[:200])
        raise web.HTTPServiceUnavailable(text="the database cannot be read now: try again soon",
                                         headers={"Retry-After": "5"}) from None


def _attachment(name: str) -> dict[str, str]:
    safe = re.sub(r"[^A-Za-z0-9._-]", "_", name)
    return {"Content-Disposition": f'attachment; filename="{safe}"'}
