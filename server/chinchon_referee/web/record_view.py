"""``chinchon replay RECORD.json --view``: the replay viewer for a record file, served
on this machine until Ctrl-C (no referee, no database), with the bot's stderr files
kept beside the record (a practice's: local_logs.py)."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sys
import urllib.parse
import webbrowser
from pathlib import Path
from typing import Any

from .local_logs import LocalLogs, beside, stem_of
from .process import start_records_view
from .settings import parse_http


def _game_id(record: dict[str, Any], fallback: str) -> str:
    gid = record.get("gameId")
    return gid if isinstance(gid, str) and gid else fallback


async def _serve(record: dict[str, Any], gid: str, http: str, browse: bool,
                 logs: LocalLogs) -> int:
    try:
        host, port = parse_http(http)
        site = await start_records_view({gid: record}, host, port, logs)
    except (ValueError, OSError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    url = f"{site.url}r/{urllib.parse.quote(gid, safe='')}"
    print(json.dumps({"event": "web", "url": url, "port": site.port}), flush=True)
    print(f"replay viewer: {url}  (Ctrl-C to stop)", file=sys.stderr, flush=True)
    if browse and _graphical():
        try:
            webbrowser.open(url)  # a browser of the desktop; never fails the command
        except Exception:
            pass
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    await stop.wait()
    await site.stop()
    return 0


def _graphical() -> bool:
    """A desktop to open a browser on (never a text browser in this terminal)."""
    if sys.platform in ("darwin", "win32"):
        return True
    return bool(os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))


def view_record(record: dict[str, Any], path: Path, http: str, browse: bool) -> int:
    """Serve the viewer for ``record`` (already checked by the engine), read from the
    file ``path``, with the stderr files kept beside it (local_logs.py), until stopped."""
    gid = _game_id(record, stem_of(path))
    return asyncio.run(_serve(record, gid, http, browse, beside(path, record)))
