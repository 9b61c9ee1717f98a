"""``chinchon web``: the web view run apart from its referee (another user's session, a
container, after a restart of its own), fed by ``chinchon serve --web-feed PATH``.

    chinchon serve --db referee.sqlite3 --web-feed /run/chinchon/web.sock
    chinchon web --db referee.sqlite3 --feed /run/chinchon/web.sock --http 0.0.0.0:8080

``chinchon serve --http`` runs the same process itself; this command is for running it
where and as its organizer chooses. Without its referee (not started yet, restarting)
it shows what the database holds, and the games in progress again when it is back."""

from __future__ import annotations

import argparse
import asyncio
import sys
from typing import Any

from ..host.fdlimit import raise_nofile
from ..logs import LogFormat, configure
from ..web.app import AppConfig
from ..web.process import lower_priority, run_apart, use_uvloop
from ..web.serving import bind
from ..web.settings import NICE, add_http_options, parse_http, settings_from_args
from ..web.weblog import route_foreign_logs


def register(sub: Any) -> None:
    p = sub.add_parser("web", help="the web view, run apart from its referee (docs/web.md)")
    p.add_argument("--feed", required=True, metavar="PATH",
                   help="the referee's feed socket (chinchon serve --web-feed PATH)")
    p.add_argument("--db", required=True,
                   help="the referee's database (SQLite file or postgresql:// URL), read only")
    p.add_argument("--http", default="127.0.0.1:8080", metavar="HOST:PORT",
                   help="where to serve (default 127.0.0.1:8080; PORT alone binds 127.0.0.1)")
    p.add_argument("--http-url", metavar="URL", help="the URL at which browsers reach it")
    add_http_options(p)
    p.add_argument("--nice", type=int, default=NICE,
                   help=f"lower this process's priority by N (default {NICE}: its CPU yields "
                   "to a referee on the same machine)")
    p.add_argument("--log-level", default="info", choices=["debug", "info", "warning", "error"])
    p.add_argument("--log-format", default=LogFormat.AUTO.value,
                   choices=[f.value for f in LogFormat])
    p.set_defaults(func=cmd_web)


def cmd_web(args: argparse.Namespace) -> int:
    try:
        host, port = parse_http(args.http)
        settings = settings_from_args(args, args.http_url or "")
    except ValueError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    configure(args.log_level, args.log_format)
    route_foreign_logs(args.log_level)
    lower_priority(args.nice)
    raise_nofile()
    try:
        sock = bind(host, port)
    except OSError as e:
        print(f"error: --http {args.http}: {e}", file=sys.stderr)
        return 2
    use_uvloop()
    config = AppConfig(db=args.db, settings=settings, bound_host=host)
    return asyncio.run(run_apart(args.feed, config, sock))
