"""``chinchon serve``: run the referee server."""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import sys
import time
from dataclasses import asdict
from pathlib import Path
from typing import Any

from .admin import add_admin_service
from .auth import TokenBook, digest
from .cluster import LEASE, Cluster
from .config import Limits, Policies, RefereeConfig, TimeControl
from .logs import LogFormat, configure, get_logger
from .referee import GameOutcome, Referee
from .server import LOOPS, start_server, tune_gc, use_loop
from .storage import GameRow, Store, StoreError, is_url, open_store
from .token_sources import (
    AdminToken,
    admin_token,
    bot_tokens,
    check_registrations,
    shared_with_others,
)
from .web import WebContext, parse_http, start_web
from .workers import supervise

log = get_logger("serve")
#: The most worker processes ``--workers`` starts (one per core is the rule).
MAX_WORKERS = 256


def register(sub: Any) -> None:
    p = sub.add_parser("serve", help="run the referee server (gRPC)")
    p.add_argument("--address", default="127.0.0.1:50051",
                   help="HOST:PORT to listen on (port 0: any free port; default 127.0.0.1:50051)")
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
    p.add_argument("--http-url", metavar="URL",
                   help="with --shared and --http: the URL at which browsers reach this "
                   "process's web view (the others send a game's watchers there; default: "
                   "the --http address)")
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
        await asyncio.to_thread(write, GameRow(
            id=outcome.spec.game_id, tournament_id=None, seq=0, players=outcome.spec.players,
            deal_id=outcome.spec.deal_id, result=outcome.result,
            record=outcome.record, stats=[asdict(s) for s in outcome.stats],
        ))

    return listener


async def serve(args: argparse.Namespace) -> int:
    configure(args.log_level, args.log_format)
    try:
        config = config_from_args(args)
        http = parse_http(args.http) if args.http else None
        if not 0 <= args.web_full_view_delay < float("inf"):
            raise ValueError(f"--web-full-view-delay {args.web_full_view_delay}: "
                             "give seconds, 0 or more")
        if not 0 < args.lease < float("inf"):
            raise ValueError(f"--lease {args.lease}: give seconds, more than 0")
        if args.shared and not is_url(args.db):
            raise ValueError(f"--shared: processes share a PostgreSQL database (--db "
                             f"postgresql://...), not the SQLite file {args.db}")
    except ValueError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    try:
        bots = bot_tokens(args.bot, args.bots_file)
        check_registrations(bots, None)  # names, shared tokens: before any file is made
        admin = admin_token(args.admin_token, args.admin_token_file, args.db)
        check_registrations(bots, admin.token)
    except ValueError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    _warn_about_secrets(args, admin)
    tokens = TokenBook(admin.token)
    try:
        store = open_store(args.db, exclusive=not args.shared, shared=args.shared)
    except StoreError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    if not is_url(args.db) and Path(args.db).is_file() and shared_with_others(args.db):
        log.warning("database_shared", file=args.db,
                    note="other users may read it, and with it the seeds of every deal: "
                    "chmod 600")
    try:
        check_registrations(bots, admin.token, store.bots())
    except ValueError as e:
        store.close()
        print(f"error: {e}", file=sys.stderr)
        return 2
    lim = config.limits  # practice records past their time go now, not at the next game
    store.prune_games(lim.practice_records, time.time() - lim.practice_record_days * 86400)
    for name, tok in bots.items():
        store.upsert_bot(name, digest(tok))
    for name, dig in store.bots():
        tokens.add_digest(name, dig)
    tls = None
    if args.tls_cert or args.tls_key:
        if not (args.tls_cert and args.tls_key):
            print("error: --tls-cert and --tls-key go together", file=sys.stderr)
            return 2
        tls = (Path(args.tls_cert).read_bytes(), Path(args.tls_key).read_bytes())
    # Practice deals are keyed by a secret of this database: the same seed gives the
    # same deals after a restart, and no bot can compute them.
    referee = Referee(config, practice_secret=store.secret("practice_secret"))
    referee.listeners.append(persist_outcomes(store, config.limits))

    cluster = Cluster(store, referee, tokens, lease=args.lease) if args.shared else None

    def add_services(server: Any, ref: Referee, book: TokenBook) -> dict[str, Any]:
        return add_admin_service(server, ref, book, store, cluster)

    try:
        running = await start_server(args.address, config, tokens, tls, referee, add_services)
    except OSError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    except RuntimeError:  # gRPC's way to say the port could not be bound
        print(f"error: --address {args.address}: cannot listen there (the port is in use, "
              "or the address is not this machine's)", file=sys.stderr)
        store.close()
        return 2
    site = None
    if http is not None:
        try:
            site = await start_web(WebContext(
                referee=referee, db=args.db, is_admin=tokens.is_admin,
                full_view_delay=args.web_full_view_delay,
                web_of=cluster.web_of if cluster is not None else None,
                streams_elsewhere=cluster.web_streams if cluster is not None else None), *http)
        except OSError as e:
            await running.stop(grace=0.0)
            print(f"error: --http {args.http}: {e}", file=sys.stderr)
            return 2
        print(json.dumps({"event": "web", "url": site.url, "port": site.port}), flush=True)
    if cluster is not None:
        await cluster.start(f"{args.address.rpartition(':')[0]}:{running.port}",
                            (args.http_url or site.url) if site is not None else "")
    tune_gc()
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):  # before "listening": a SIGTERM right
        loop.add_signal_handler(sig, stop.set)  # after it stops the server gracefully
    print(json.dumps({"event": "listening", "port": running.port, "address": args.address,
                      "loop": args.loop_used, "pid": os.getpid(),
                      **({"process": cluster.owner} if cluster is not None else {})}),
          flush=True)
    await stop.wait()
    log.info("shutting_down", games_running=referee.games_running)
    if site is not None:
        await site.stop()
    await running.stop(grace=5.0)
    director = running.extras.get("director")
    if director is not None:
        await director.settle(5.0)  # tournaments record nothing more before the store closes
    if cluster is not None:
        await cluster.stop()
    store.close()
    return 0


def cmd_serve(args: argparse.Namespace) -> int:
    if args.workers != 1:
        if not args.shared or args.workers < 1 or args.workers > MAX_WORKERS:
            print(f"error: --workers {args.workers}: 1 to {MAX_WORKERS}, with --shared (the "
                  "workers share a PostgreSQL database)", file=sys.stderr)
            return 2
        argv = sys.argv[sys.argv.index("serve") + 1:]
        return supervise(argv, args.workers, args.address, args.http, args.http_url)
    try:
        args.loop_used = use_loop(args.loop)
    except ValueError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    return asyncio.run(serve(args))
