"""``chinchon serve``: run the referee server."""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..auth import TokenBook, digest
from ..cluster.member import LEASE, Cluster
from ..cluster.workers import supervise
from ..config import Limits, Policies, RefereeConfig, TimeControl
from ..host.fdlimit import check_reserve, raise_nofile
from ..host.pools import for_games
from ..logs import LogFormat, configure, get_logger, route_native_stderr
from ..referee import GameOutcome, Referee
from ..service.metrics_process import Bounds
from ..service.organizer_spawn import OrganizerWorker
from ..service.server import LOOPS, RunningServer, start_server, tune_gc, use_loop
from ..service.tournaments import add_admin_service
from ..storage import GameRow, Store, StoreError, is_url, open_store
from ..tournament.model import SpecError, declared
from ..web.settings import WebSettings, add_http_options, parse_http, settings_from_args
from .secrets import AdminToken, admin_token, bot_tokens, check_registrations, shared_with_others

if TYPE_CHECKING:  # the web view (aiohttp) is loaded only when this process feeds one
    from ..service.metrics_http import MetricsSite  # prometheus_client: only with --metrics
    from ..web import RunningWeb
    from ..web.feed import Feed
    from ..web.spawn import FeedListener

log = get_logger("serve")
#: The most worker processes ``--workers`` starts (one per core is the rule).
MAX_WORKERS = 256


def register(sub: Any) -> None:
    p = sub.add_parser("serve", help="run the referee server (gRPC)")
    p.add_argument("--address", default="127.0.0.1:50051",
                   help="HOST:PORT to listen on (port 0: any free port; default 127.0.0.1:50051)")
    p.add_argument("--unix", metavar="PATH",
                   help="also listen on a Unix domain socket made at PATH (plaintext; bots "
                   "dial unix:PATH; a sandboxed bot has no other way: docs/security.md)")
    p.add_argument("--db", default="chinchon.sqlite3",
                   help="SQLite database file, or a postgresql:// URL (needs the postgres extra)")
    p.add_argument("--shared", action="store_true",
                   help="share the database (a postgresql:// URL) with other `chinchon serve "
                   "--shared` processes, on this host or others: they play its tournaments "
                   "together (docs/deployment.md)")
    p.add_argument("--workers", type=int, default=1, metavar="N",
                   help="with --shared: run N referee processes here, supervised, on the "
                   "port of --address and the N-1 after it (the web view likewise); a "
                   "worker that dies is started again")
    p.add_argument("--lease", type=float, default=LEASE, metavar="SECONDS",
                   help="with --shared: a game whose process stops renewing its lease this "
                   f"long (killed, cut off) is played again by another (default {LEASE:g})")
    p.add_argument("--http", metavar="HOST:PORT",
                   help="also serve the web view (tournaments, live games, replays; read-only) "
                   "on HOST:PORT; PORT alone binds 127.0.0.1 (docs/web.md)")
    p.add_argument("--metrics", metavar="HOST:PORT",
                   help="serve Prometheus metrics at http://HOST:PORT/metrics (games, "
                   "decisions, latency, timeouts, illegal answers, forfeits, streams, store "
                   "writes), from a process of its own; PORT alone binds 127.0.0.1; off by "
                   "default (docs/metrics.md)")
    p.add_argument("--metrics-max-connections", type=int, default=Bounds.max_connections,
                   metavar="N", help="metrics connections open at once; past it 503 "
                   f"(default {Bounds.max_connections})")
    p.add_argument("--metrics-client-rate", type=float, default=Bounds.client_rate,
                   metavar="R", help="scrapes per second from one address, bursts of 4 s "
                   f"worth (default {Bounds.client_rate:g}); past it 429")
    p.add_argument("--http-url", metavar="URL",
                   help="with --shared and --http: the URL at which browsers reach this "
                   "process's web view (the others send a game's watchers there; default: "
                   "the --http address)")
    p.add_argument("--web-feed", metavar="PATH",
                   help="also feed web views run apart (chinchon web --feed PATH) over a "
                   "Unix socket made at PATH, readable by this user only (docs/web.md)")
    add_http_options(p)
    p.add_argument("--web-full-view-delay", type=float, default=60.0, metavar="SECONDS",
                   help="the web view's full view of a game in progress (every hand; the "
                   "admin token only) shows the table as it was SECONDS ago (default 60; "
                   "0 shows it live, which lets a screen feed a bot: unsafe)")
    p.add_argument("--tls-cert", help="PEM certificate chain (with --tls-key: serve TLS)")
    p.add_argument("--tls-key", help="PEM private key")
    p.add_argument("--log-level", default="info", choices=["debug", "info", "warning", "error"])
    p.add_argument("--log-format", default=LogFormat.AUTO.value,
                   choices=[f.value for f in LogFormat],
                   help="auto (default): text on a terminal, JSON lines otherwise")
    p.add_argument("--loop", default="auto", choices=LOOPS,
                   help="event loop: uvloop (faster; the default where installed) or asyncio")
    p.add_argument("--admin-token",
                   help="token for the admin (tournament) service (visible in ps: prefer "
                   "$CHINCHON_ADMIN_TOKEN or --admin-token-file)")
    p.add_argument("--admin-token-file", metavar="FILE",
                   help="read the admin token from FILE; created (mode 0600) with a "
                   "generated token if missing. Default: DB.admin-token beside the database")
    p.add_argument("--bot", action="append", default=[], metavar="NAME=@FILE",
                   help="register a bot (repeatable) with the token in FILE; NAME=TOKEN "
                   "also works but shows the token in ps; stored in the database")
    p.add_argument("--bots-file", help="TOML file with a [bots] table of name = token")
    p.add_argument("--per-move", type=float, default=TimeControl.per_move,
                   help=f"seconds per decision (default {TimeControl.per_move})")
    p.add_argument("--bank", type=float, default=TimeControl.bank,
                   help=f"time bank per game in seconds (default {TimeControl.bank})")
    p.add_argument("--max-retries", type=int, default=Policies.max_illegal_retries,
                   help="illegal actions refused per request before a default action")
    p.add_argument("--max-strikes", type=int, default=Policies.max_strikes,
                   help="strikes per game before forfeit")
    p.add_argument("--grace", type=float, default=Policies.reconnect_grace,
                   help="seconds a disconnected bot may take to come back")
    p.add_argument("--max-streams-per-bot", type=int, default=Limits.max_streams_per_bot,
                   help="open Play streams per bot token "
                   f"(default {Limits.max_streams_per_bot})")
    p.add_argument("--max-streams", type=int, default=Limits.max_streams,
                   help=f"open Play streams in all (default {Limits.max_streams})")
    p.add_argument("--max-practice-per-bot", type=int, default=Limits.max_practice_per_bot,
                   help="practice sessions at once per bot token "
                   f"(default {Limits.max_practice_per_bot})")
    p.add_argument("--max-practice", type=int, default=Limits.max_practice,
                   help=f"practice sessions at once in all (default {Limits.max_practice})")
    p.add_argument("--practice-records", type=int, default=Limits.practice_records,
                   help="records of practice games kept, the newest "
                   f"(default {Limits.practice_records})")
    p.add_argument("--practice-record-days", type=float, default=Limits.practice_record_days,
                   help="days a practice game's record is kept "
                   f"(default {Limits.practice_record_days:g})")
    p.set_defaults(func=cmd_serve)


def config_from_args(args: argparse.Namespace) -> RefereeConfig:
    return RefereeConfig(
        time_control=TimeControl(args.per_move, args.bank),
        policies=Policies(args.max_retries, args.max_strikes, args.grace),
        limits=Limits(
            max_streams_per_bot=args.max_streams_per_bot, max_streams=args.max_streams,
            max_practice_per_bot=args.max_practice_per_bot, max_practice=args.max_practice,
            practice_records=args.practice_records,
            practice_record_days=args.practice_record_days,
        ),
    )


def _warn_about_secrets(args: argparse.Namespace, admin: AdminToken) -> None:
    """Say where the admin token is (never the token), and warn of tokens in ps."""
    if admin.generated:
        print(json.dumps({"event": "admin_token", "file": admin.source, "generated": True,
                          "note": "a new admin token was written to this file (mode 0600)"}),
              flush=True)
    elif Path(admin.source).is_file() and shared_with_others(admin.source):
        log.warning("admin_token_file_shared", file=admin.source,
                    note="other users may read it: chmod 600")
    if args.admin_token:
        log.warning("token_on_command_line", option="--admin-token",
                    note="visible to every local user: use $CHINCHON_ADMIN_TOKEN or "
                    "--admin-token-file")
    inline = [b.partition("=")[0] for b in args.bot if not b.partition("=")[2].startswith("@")]
    if inline:
        log.warning("token_on_command_line", option="--bot", bots=inline,
                    note="visible to every local user: use --bot NAME=@FILE or --bots-file")


def damaged_declaration(store: Store) -> None:
    """StoreError, in one line naming it, for the first stored tournament whose row or
    declaration cannot be read (the referee would resume or report it)."""
    for t in store.tournaments():  # a damaged row raises StoreError here
        try:
            declared(t.spec)
        except SpecError as e:
            raise StoreError(f"{store.where}: tournament {t.id}: its stored declaration is "
                             f"damaged ({e}); repair or delete it") from None


def persist_outcomes(store: Store, limits: Limits | None = None) -> Any:
    """A referee listener that stores every finished game not owned by a tournament
    (practice games), keeping those of the last ``limits.practice_record_days`` days and
    at most ``limits.practice_records`` of them.

    The write (a JSON dump and an fsync) runs in a worker thread: a flood of practice
    games must not stall the event loop that runs every other game."""
    lim = limits or Limits()

    def write(row: GameRow) -> None:
        store.finish_game(row)
        store.prune_games(lim.practice_records, time.time() - lim.practice_record_days * 86400)

    async def listener(outcome: GameOutcome) -> None:
        if outcome.spec.tournament_id:
            return
        try:
            await for_games(write, GameRow(
                id=outcome.spec.game_id, tournament_id=None, seq=0, players=outcome.spec.players,
                deal_id=outcome.spec.deal_id, result=outcome.result,
                record=outcome.record, stats=[asdict(s) for s in outcome.stats],
            ))
        except StoreError as e:
            # The bot has its record (sent with game_ended); the session goes on.
            log.warning("practice_record_not_stored", game_id=outcome.spec.game_id,
                        error=str(e))

    return listener


class _Refused(Exception):
    """A bad option or a resource the server cannot use: ``error: …`` and exit 2."""


@dataclass
class _Options:
    """The options checked before anything is opened."""

    config: RefereeConfig
    http: tuple[str, int] | None
    web_settings: WebSettings
    metrics: tuple[str, int] | None
    metrics_bounds: Bounds
    tls: tuple[bytes, bytes] | None


def _options(args: argparse.Namespace) -> _Options:
    try:
        config = config_from_args(args)
        http = parse_http(args.http) if args.http else None
        web_settings = settings_from_args(args, args.http_url or "")
        if not 0 <= args.web_full_view_delay < float("inf"):
            raise ValueError(f"--web-full-view-delay {args.web_full_view_delay}: "
                             "give seconds, 0 or more")
        if not 0 < args.lease < float("inf"):
            raise ValueError(f"--lease {args.lease}: give seconds, more than 0")
        metrics = None
        if args.metrics:
            from ..service.metrics_http import parse_address
            metrics = parse_address(args.metrics)
        metrics_bounds = Bounds(args.metrics_max_connections, args.metrics_client_rate)
        if args.shared and not is_url(args.db):
            raise ValueError(f"--shared: processes share a PostgreSQL database (--db "
                             f"postgresql://...), not the SQLite file {args.db}")
    except ValueError as e:
        raise _Refused(str(e)) from None
    return _Options(config, http, web_settings, metrics, metrics_bounds, None)


def _tls(args: argparse.Namespace) -> tuple[bytes, bytes] | None:
    if not (args.tls_cert or args.tls_key):
        return None
    if not (args.tls_cert and args.tls_key):
        raise _Refused("--tls-cert and --tls-key go together")
    return Path(args.tls_cert).read_bytes(), Path(args.tls_key).read_bytes()


def _open(args: argparse.Namespace, limits: Limits) -> tuple[Store, AdminToken, TokenBook]:
    """The registered bots and the admin token checked, the store opened and pruned, the
    bots' digests stored and loaded."""
    try:
        bots = bot_tokens(args.bot, args.bots_file)
        check_registrations(bots, None)  # names, shared tokens: before any file is made
        admin = admin_token(args.admin_token, args.admin_token_file, args.db)
        check_registrations(bots, admin.token)
    except ValueError as e:
        raise _Refused(str(e)) from None
    _warn_about_secrets(args, admin)
    try:
        store = open_store(args.db, exclusive=not args.shared, shared=args.shared)
    except StoreError as e:
        raise _Refused(str(e)) from None
    if not is_url(args.db) and Path(args.db).is_file() and shared_with_others(args.db):
        log.warning("database_shared", file=args.db,
                    note="other users may read it, and with it the seeds of every deal: "
                    "chmod 600")
    try:
        check_registrations(bots, admin.token, store.bots())
        damaged_declaration(store)
    except (ValueError, StoreError) as e:
        store.close()
        raise _Refused(str(e)) from None
    # Practice records past their time go now, not at the next game.
    store.prune_games(limits.practice_records, time.time() - limits.practice_record_days * 86400)
    for name, tok in bots.items():
        store.upsert_bot(name, digest(tok))
    tokens = TokenBook(admin.token)
    for name, dig in store.bots():
        tokens.add_digest(name, dig)
    return store, admin, tokens


@dataclass
class _Served:
    """What ``serve`` started, stopped in the reverse order."""

    store: Store
    running: RunningServer | None = None
    cluster: Cluster | None = None
    feed: Feed | None = None
    feed_listener: FeedListener | None = None
    site: RunningWeb | None = None
    scrape: MetricsSite | None = None
    organizer: OrganizerWorker | None = None

    async def stop(self, grace: float) -> None:
        for part in (self.site, self.scrape, self.feed_listener):
            if part is not None:
                await part.stop()
        if self.feed is not None:
            await self.feed.close()
        if self.running is not None:
            await self.running.stop(grace=grace)
            director = self.running.extras.get("director")
            if director is not None and grace:
                await director.settle(5.0)  # tournaments record nothing more before the store closes
        if self.organizer is not None:
            await self.organizer.stop()
        if self.cluster is not None and grace:
            await self.cluster.stop()
        self.store.close()


async def _start_organizer(args: argparse.Namespace, opts: _Options, served: _Served,
                           admin: AdminToken) -> OrganizerWorker:
    """The organizer's worker process: the admin service's exports, standings, listings
    and declarations are answered there, never on this process's interpreter (it
    starts while the rest does; the calls wait for it)."""
    worker = OrganizerWorker(args.db, digest(admin.token) if admin.token else None,
                             config=opts.config)
    await worker.start()
    served.organizer = worker
    return worker


async def _start_grpc(args: argparse.Namespace, opts: _Options, served: _Served,
                      tokens: TokenBook, soft: int, organizer: OrganizerWorker) -> Referee:
    store = served.store
    # Practice deals are keyed by a secret of this database: the same seed gives the
    # same deals after a restart, and no bot can compute them.
    referee = Referee(opts.config, practice_secret=store.secret("practice_secret"))
    check_reserve(soft, opts.config.limits.max_streams + 64, "bot streams and admin calls")
    referee.listeners.append(persist_outcomes(store, opts.config.limits))
    cluster = Cluster(store, referee, tokens, lease=args.lease) if args.shared else None

    def add_services(server: Any, ref: Referee, book: TokenBook) -> dict[str, Any]:
        return add_admin_service(server, ref, book, store, cluster, organizer)

    try:
        served.running = await start_server(args.address, opts.config, tokens, opts.tls,
                                            referee, add_services,
                                            Path(args.unix) if args.unix else None)
    except OSError as e:
        raise _Refused(str(e)) from None
    except RuntimeError:  # gRPC's way to say the port could not be bound
        raise _Refused(f"--address {args.address}: cannot listen there (the port is in use, "
                       "or the address is not this machine's)") from None
    served.cluster = cluster
    return referee


async def _start_web(args: argparse.Namespace, opts: _Options, served: _Served,
                     referee: Referee, admin: AdminToken) -> None:
    """The web view in a process of its own, fed by this one (docs/web.md)."""
    from ..web import WebContext, listen_feed, start_web
    from ..web.spawn import open_feed

    assert served.running is not None
    cluster = served.cluster
    web_ctx = WebContext(
        referee=referee, db=args.db, admin_digest=digest(admin.token) if admin.token else None,
        full_view_delay=args.web_full_view_delay, settings=opts.web_settings,
        web_urls=cluster.web_urls if cluster is not None else None,
        streams_elsewhere=cluster.web_streams if cluster is not None else None,
        store_health=served.running.extras["director"].rows.health)
    served.feed = open_feed(web_ctx)
    option = f"--web-feed {args.web_feed}"
    try:
        if args.web_feed:
            served.feed_listener = await listen_feed(served.feed, args.web_feed)
        option = f"--http {args.http}"
        if opts.http is not None:
            served.site = await start_web(web_ctx, *opts.http, feed=served.feed)
    except OSError as e:
        raise _Refused(f"{option}: {e}") from None
    if served.site is not None:
        print(json.dumps({"event": "web", "url": served.site.url, "port": served.site.port,
                          "pid": served.site.pid}), flush=True)


async def _start_metrics(args: argparse.Namespace, opts: _Options, served: _Served,
                         referee: Referee) -> None:
    from ..service.metrics_http import start_metrics, watch_referee

    assert opts.metrics is not None
    cluster = served.cluster
    watch_referee(referee, {"process": cluster.owner} if cluster is not None else {})
    try:
        served.scrape = await start_metrics(*opts.metrics, opts.metrics_bounds)
    except OSError as e:
        raise _Refused(f"--metrics {args.metrics}: {e}") from None
    print(json.dumps({"event": "metrics", "url": served.scrape.url, "port": served.scrape.port,
                      "pid": served.scrape.pid}), flush=True)


async def serve(args: argparse.Namespace) -> int:
    configure(args.log_level, args.log_format)
    if LogFormat(args.log_format).resolve(sys.stderr) is LogFormat.JSON:
        route_native_stderr()  # gRPC's own lines (a failed TLS handshake) as JSON too
    soft, _ = raise_nofile()  # bots' streams, admin calls: web connections are elsewhere
    served = None
    try:
        opts = _options(args)
        store, admin, tokens = _open(args, opts.config.limits)
        served = _Served(store)
        opts.tls = _tls(args)
        organizer = await _start_organizer(args, opts, served, admin)
        referee = await _start_grpc(args, opts, served, tokens, soft, organizer)
        if opts.http is not None or args.web_feed:
            await _start_web(args, opts, served, referee, admin)
        if served.cluster is not None:
            site = served.site
            assert served.running is not None
            await served.cluster.start(f"{args.address.rpartition(':')[0]}:{served.running.port}",
                                       (args.http_url or site.url) if site is not None else "")
        if opts.metrics is not None:
            await _start_metrics(args, opts, served, referee)
    except _Refused as e:
        if served is not None:
            await served.stop(grace=0.0)
        print(f"error: {e}", file=sys.stderr)
        return 2
    await _until_stopped(args, served, referee)
    log.info("shutting_down", games_running=referee.games_running)
    await served.stop(grace=5.0)
    return 0


async def _until_stopped(args: argparse.Namespace, served: _Served, referee: Referee) -> None:
    """Say "listening" and wait for SIGINT or SIGTERM."""
    assert served.running is not None
    tune_gc()
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):  # before "listening": a SIGTERM right
        loop.add_signal_handler(sig, stop.set)  # after it stops the server gracefully
    cluster = served.cluster
    print(json.dumps({"event": "listening", "port": served.running.port, "address": args.address,
                      **({"unix": args.unix} if args.unix else {}),
                      "loop": args.loop_used, "pid": os.getpid(),
                      **({"process": cluster.owner} if cluster is not None else {})}),
          flush=True)
    await stop.wait()


def cmd_serve(args: argparse.Namespace) -> int:
    if args.workers != 1:
        if not args.shared or args.workers < 1 or args.workers > MAX_WORKERS:
            print(f"error: --workers {args.workers}: 1 to {MAX_WORKERS}, with --shared (the "
                  "workers share a PostgreSQL database)", file=sys.stderr)
            return 2
        argv = sys.argv[sys.argv.index("serve") + 1:]
        return supervise(argv, args.workers, args.address, args.http, args.http_url,
                         args.metrics)
    try:
        args.loop_used = use_loop(args.loop)
    except ValueError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    return asyncio.run(serve(args))
