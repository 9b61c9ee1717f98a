"""The web process's copy of what its referee tells it over the feed (feedwire.py):
the games in progress (live.py rebuilds their states), the bots' streams, the other
processes of a shared database, and whether the organizer's full view is on (the
admin token's digest: the token itself never leaves the referee)."""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import json
from collections.abc import Callable
from typing import Any

from ..logs import get_logger
from .live import LiveGames

log = get_logger("web")

#: Lines read before the loop is let run (a resend of many games is long).
YIELD_EVERY = 32


class Mirror:
    def __init__(self) -> None:
        self._on_change: list[Callable[[str], None]] = []
        self.live = LiveGames(None)
        self.live.on_change = self._on_change
        #: The referee's boot id ("" before its hello), its full view, sharing or not.
        self.boot = ""
        self.admin: str | None = None
        self.delay = 60.0
        self.sharing = False
        self.connected = False
        #: [name, streams, seated, idle] of the bots connected to the referee.
        self.bots: list[list[Any]] = []
        #: Sharing the database: the others' web views by process, their bots' streams.
        self.urls: dict[str, str] = {}
        self.elsewhere: dict[str, tuple[int, int, int]] = {}
        #: The referee's notice of a database that does not take writes (None: it does).
        self.store: dict[str, Any] | None = None
        #: Called when that notice changed.
        self.on_store: list[Callable[[], None]] = []
        #: Called after the bots' streams or the referee's presence changed.
        self.on_lobby: list[Callable[[], None]] = []
        #: The first hello's extras (a child's settings, database, log), once.
        self.first: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()

    def on_change(self, callback: Callable[[str], None]) -> None:
        """Call ``callback(tournament_id)`` when a game starts or ends."""
        self._on_change.append(callback)

    # -- what pages ask ------------------------------------------------------------------
    @property
    def full_view(self) -> bool:
        return self.admin is not None

    def is_admin(self, token: str | None) -> bool:
        """``token`` is the admin token (compared in constant time, as digests)."""
        if not token or self.admin is None:
            return False
        return hmac.compare_digest(hashlib.sha256(token.encode()).hexdigest(), self.admin)

    def web_of(self, owner: str) -> str | None:
        return self.urls.get(owner) or None

    # -- the feed ------------------------------------------------------------------------
    def apply(self, msg: dict[str, Any]) -> None:
        kind = msg.get("k")
        if kind == "s":
            try:
                self.live.stepped(msg)
            except (ValueError, KeyError, TypeError, IndexError) as e:
                log.warning("live_table_dropped", game_id=msg.get("g"), error=str(e))
                self.live.ended(str(msg.get("g")))
        elif kind == "g":
            self.live.started(msg)
        elif kind == "e":
            self.live.ended(str(msg["g"]))
        elif kind == "l":
            self.bots = [list(b) for b in msg["bots"]]
            self._lobby()
        elif kind == "c":
            self.urls = {str(k): str(v) for k, v in msg.get("urls", {}).items()}
            self.elsewhere = {str(k): (int(v[0]), int(v[1]), int(v[2]))
                              for k, v in msg.get("elsewhere", {}).items()}
            self._lobby()
        elif kind == "h":
            store = msg.get("store")
            if store != self.store:
                self.store = store if isinstance(store, dict) else None
                for f in list(self.on_store):
                    f()
        elif kind == "hello":
            self._hello(msg)

    def _hello(self, msg: dict[str, Any]) -> None:
        self.live.clear()
        self.admin = msg.get("admin")
        self.delay = float(msg.get("delay", 60.0))
        self.sharing = bool(msg.get("sharing"))
        self.boot = str(msg.get("boot", ""))
        self.live = LiveGames(self.delay if self.admin is not None else None)
        self.live.on_change = self._on_change
        self.connected = True
        if not self.first.done():
            self.first.set_result(msg)
        self._lobby()

    def _lobby(self) -> None:
        for f in list(self.on_lobby):
            f()

    async def follow(self, reader: asyncio.StreamReader) -> None:
        """Apply the feed's messages until it ends (the referee stopped or went away)."""
        n = 0
        try:
            while True:
                raw = await reader.readline()
                if not raw.endswith(b"\n"):
                    break  # its end (or a last line cut short)
                try:
                    msg = json.loads(raw)
                    self.apply(msg)
                except (ValueError, KeyError, TypeError, IndexError) as e:
                    log.warning("feed_message_refused", error=str(e)[:200])
                n += 1
                if n % YIELD_EVERY == 0:
                    await asyncio.sleep(0)
        except (ConnectionError, asyncio.LimitOverrunError, ValueError) as e:
            log.warning("feed_lost", error=str(e)[:200])
        finally:
            self.connected = False
            self.bots = []
            self.live.clear()
            self._lobby()

