"""The web view of a ``chinchon tournament run``: served while it runs (its URL printed),
kept serving its results with ``--keep-serving``, and the command that serves them later."""

from __future__ import annotations

import asyncio
import shlex
import signal
from typing import TYPE_CHECKING

from ..referee import Referee
from ..web.settings import parse_http
from .standings_table import console

if TYPE_CHECKING:  # the web view (aiohttp) is loaded only when a run serves it
    from ..web import RunningWeb


def serve_command(db: str, http: str) -> str:
    """The command that serves a finished run's results in the web view, later: on the
    run's own ``--http`` address if one was given, else on port 8080 of this machine."""
    try:
        host, port = parse_http(http)
    except ValueError:
        host, port = "127.0.0.1", 0
    where = f"{host}:{port or 8080}"
    return f"chinchon serve --db {shlex.quote(db)} --http {where}"


async def start_run_web(referee: Referee, db: str, http: str) -> RunningWeb | None:
    """The web view of the run (docs/web.md), its URL printed; None if 'off' or the
    address cannot be had (the tournament runs anyway)."""
    if http == "off":
        return None
    from ..web import WebContext, start_web

    try:
        site = await start_web(WebContext(referee=referee, db=db), *parse_http(http))
    except (ValueError, OSError) as e:
        console.print(f"[yellow]no web view:[/] {e}")
        return None
    console.print(f"web view: {site.url}", soft_wrap=True)
    return site


async def keep_serving(site: RunningWeb | None, db: str, http: str) -> None:
    """``--keep-serving``: the run's web view goes on serving its results until Ctrl-C
    (or SIGTERM); then, either way, the command that serves them later."""
    if site is not None:
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, stop.set)
        console.print(f"serving the results at {site.url} until Ctrl-C (--keep-serving)",
                      soft_wrap=True)
        try:
            await stop.wait()
        finally:
            for sig in (signal.SIGINT, signal.SIGTERM):
                loop.remove_signal_handler(sig)
            await site.stop()
    console.print(f"to serve these results in the web view: {serve_command(db, http)}",
                  soft_wrap=True)
