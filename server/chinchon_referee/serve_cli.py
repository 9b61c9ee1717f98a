"""``chinchon serve``: run the referee server."""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import sys
import tomllib
from dataclasses import asdict
from pathlib import Path
from typing import Any

from .auth import TokenBook, digest, new_token
from .config import Limits, Policies, RefereeConfig, TimeControl
from .logs import configure, get_logger
from .referee import GameOutcome, Referee
from .server import LOOPS, start_server, tune_gc, use_loop
from .storage import GameRow, SqliteStore, Store, StoreError

log = get_logger("serve")


def register(sub: Any) -> None:
    p = sub.add_parser("serve", help="run the referee server (gRPC)")
    p.add_argument("--address", default="127.0.0.1:50051",
                   help="HOST:PORT to listen on (port 0: any free port; default 127.0.0.1:50051)")
    p.add_argument("--db", default="chinchon.sqlite3", help="SQLite database file")
    p.add_argument("--tls-cert", help="PEM certificate chain (with --tls-key: serve TLS)")
    p.add_argument("--tls-key", help="PEM private key")
    p.add_argument("--log-level", default="info", choices=["debug", "info", "warning", "error"])
    p.add_argument("--log-format", default="json", choices=["json", "text"])
    p.add_argument("--loop", default="auto", choices=LOOPS,
                   help="event loop: uvloop (faster; the default where installed) or asyncio")
    p.add_argument("--admin-token", default=os.environ.get("CHINCHON_ADMIN_TOKEN"),
                   help="token for the admin (tournament) service; default: "
                   "$CHINCHON_ADMIN_TOKEN, else generated and printed once")
    p.add_argument("--bot", action="append", default=[], metavar="NAME=TOKEN",
                   help="register a bot (repeatable); stored in the database")
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
    p.set_defaults(func=cmd_serve)


def load_bots_file(path: str) -> dict[str, str]:
    data = tomllib.loads(Path(path).read_text(encoding="utf-8"))
    bots = data.get("bots", data)
    if not isinstance(bots, dict) or not all(isinstance(v, str) for v in bots.values()):
        raise ValueError(f"{path}: expected a [bots] table of name = \"token\"")
    return dict(bots)


def config_from_args(args: argparse.Namespace) -> RefereeConfig:
    return RefereeConfig(
        time_control=TimeControl(args.per_move, args.bank),
        policies=Policies(args.max_retries, args.max_strikes, args.grace),
        limits=Limits(),
    )


def persist_outcomes(store: Store) -> Any:
    """A referee listener that stores every finished game not owned by a tournament."""

    async def listener(outcome: GameOutcome) -> None:
        if outcome.spec.tournament_id:
            return
        store.finish_game(GameRow(
            id=outcome.spec.game_id, tournament_id=None, seq=0, players=outcome.spec.players,
            deal_id=outcome.spec.deal_id, result=outcome.record["result"],
            record=outcome.record, stats=[asdict(s) for s in outcome.stats],
        ))

    return listener


async def serve(args: argparse.Namespace) -> int:
    configure(args.log_level, args.log_format)
    try:
        config = config_from_args(args)
    except ValueError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    admin = args.admin_token
    if not admin:
        admin = new_token()
        print(json.dumps({"event": "admin_token", "token": admin,
                          "note": "shown once; pass --admin-token to choose it"}), flush=True)
    tokens = TokenBook(admin)
    try:
        store = SqliteStore(args.db, exclusive=True)
    except StoreError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    try:
        bots: dict[str, str] = {}
        if args.bots_file:
            bots.update(load_bots_file(args.bots_file))
        for item in args.bot:
            name, sep, tok = item.partition("=")
            if not sep or not name or not tok:
                print(f"error: --bot expects NAME=TOKEN, got '{item}'", file=sys.stderr)
                return 2
            bots[name] = tok
    except (OSError, ValueError, tomllib.TOMLDecodeError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
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
    referee = Referee(config)
    referee.listeners.append(persist_outcomes(store))

    def add_services(server: Any, ref: Referee, book: TokenBook) -> dict[str, Any]:
        try:
            from .admin import add_admin_service
        except ModuleNotFoundError:
            return {}
        return add_admin_service(server, ref, book, store)

    try:
        running = await start_server(args.address, config, tokens, tls, referee, add_services)
        tune_gc()
    except OSError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    print(json.dumps({"event": "listening", "port": running.port, "address": args.address,
                      "loop": args.loop_used}), flush=True)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    await stop.wait()
    log.info("shutting_down", games_running=referee.games_running)
    await running.stop(grace=5.0)
    director = running.extras.get("director")
    if director is not None:
        await director.settle(5.0)  # tournaments record nothing more before the store closes
    store.close()
    return 0


def cmd_serve(args: argparse.Namespace) -> int:
    try:
        args.loop_used = use_loop(args.loop)
    except ValueError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    return asyncio.run(serve(args))
