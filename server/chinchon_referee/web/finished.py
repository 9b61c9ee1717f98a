"""Finished games' records and replays, as the web view sends them.

A record (every card) is served only for a finished game, and in a tournament with
duplicate deals only once the tournament is over (a record tells its twins' deals).
Once served, a game's answer never changes: its record's JSON and each of its replay
views are built once, in a worker thread (the engine replays the record, the JSON is
encoded there too), and kept as bytes in a cache bounded by its size (cache.py).
Requests for a view being built wait for that build: a hundred spectators opening the
same replay cost one."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any
from urllib.parse import quote

from aiohttp import web
from chinchon.engine import RecordError

from ..storage.beside import stderr_file
from ..vocabulary import GameStatus
from .cache import ByteLRU, SingleFlight
from .local_logs import LocalLogs
from .reader import Reader
from .replay import ViewError, parse_view, steps
from .reply import json_bytes
from .step_view import parse_step, step_request

Run = Callable[..., Awaitable[Any]]


def _replay_bytes(record: dict[str, Any], view: int | None, folder: Path | None,
                  local: LocalLogs) -> bytes:
    data = steps(record, view)
    mine = local_links(local, record)
    data["stderr"] = mine or ([] if folder is None else stderr_links(folder, record))
    return json_bytes(data)


def local_links(local: LocalLogs, record: dict[str, Any]) -> list[dict[str, Any]]:
    """The links to the stderr files kept beside a record ``chinchon replay --view``
    serves (local_logs.py): each seat that has one."""
    gid = str(record.get("gameId", ""))
    out = []
    for seat, s in enumerate(record.get("seats", [])):
        if (gid, seat) in local.games:
            name = str(s.get("name", ""))
            link = {"seat": seat, "url": f"/api/g/{quote(gid, safe='')}/stderr/{seat}"}
            if name in local.bots:
                link["bot_url"] = f"/api/b/{quote(name, safe='')}/stderr"
            out.append(link)
    return out


def stderr_links(folder: Path, record: dict[str, Any]) -> list[dict[str, Any]]:
    """Where each seat's bot's stderr lines of the game would be (web/botlogs.py), and
    that bot's own log: every seat, where this database keeps launched bots' lines at
    all (whether any were kept is told only to those who may read them)."""
    gid = str(record.get("gameId", ""))
    if not folder.is_dir() or stderr_file(folder, gid, 0) is None:
        return []
    return [{"seat": seat, "url": f"/api/g/{quote(gid, safe='')}/stderr/{seat}",
             "bot_url": f"/api/b/{quote(str(s.get('name', '')), safe='')}/stderr"}
            for seat, s in enumerate(record.get("seats", []))]


def _step_bytes(record: dict[str, Any], step: int, seat: int | None) -> bytes:
    return json_bytes(step_request(record, step, seat), indent=1)


def _record_bytes(record: dict[str, Any]) -> bytes:
    return json_bytes(record, indent=1)


def view_key(text: str) -> int | None:
    """``view``'s value as a cache key: None (all cards) or a seat; 400 otherwise."""
    try:
        return parse_view(text, 1000)
    except ViewError as e:
        raise web.HTTPBadRequest(text=str(e)) from None


class Finished:
    def __init__(self, reader: Reader | None, records: dict[str, dict[str, Any]], run: Run,
                 cache_bytes: int, stderr: Path | None = None,
                 local: LocalLogs | None = None) -> None:
        self.reader = reader
        #: The stderr files beside the records of ``chinchon replay --view``.
        self.local = local or LocalLogs()
        #: Where the launched bots' stderr lines of each game are (storage/beside.py).
        self.stderr = stderr
        self.records = records
        self.run = run
        self.cache = ByteLRU(cache_bytes)
        self._flight: SingleFlight[bytes] = SingleFlight()

    async def record(self, gid: str) -> dict[str, Any]:
        """The record of finished game ``gid``; HTTP errors say why there is none."""
        rec = self.records.get(gid)
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
        record: dict[str, Any] = row.record
        return record

    async def _cached(self, key: tuple[Any, ...], make: Callable[[], Awaitable[bytes]]) -> bytes:
        hit = self.cache.get(key)
        if hit is not None:
            return hit

        async def build() -> bytes:
            data = await make()
            self.cache.put(key, data)
            return data

        try:
            return await self._flight.run(key, build)
        except web.HTTPException as e:
            # One error object per request: an aiohttp error is also the response sent.
            raise type(e)(text=e.text) from None

    async def record_json(self, gid: str) -> bytes:
        async def make() -> bytes:
            data: bytes = await self.run(_record_bytes, await self.record(gid))
            return data

        return await self._cached(("record", gid), make)

    async def replay_json(self, gid: str, view_text: str) -> bytes:
        view = view_key(view_text)

        async def make() -> bytes:
            rec = await self.record(gid)
            try:
                if view is not None:
                    parse_view(str(view), len(rec.get("seats", [])))
                data: bytes = await self.run(_replay_bytes, rec, view, self.stderr, self.local)
            except (ViewError, RecordError) as e:
                raise web.HTTPBadRequest(text=str(e)) from None
            return data

        return await self._cached(("replay", gid, view), make)

    async def step_json(self, gid: str, step_text: str, seat_text: str) -> bytes:
        """The observation and legal actions of step ``step_text`` as its bot received
        them (step_view.py): served where the record is, a finished game's."""
        try:
            step = parse_step(step_text)
        except ViewError as e:
            raise web.HTTPBadRequest(text=str(e)) from None
        seat = view_key(seat_text or "all")

        async def make() -> bytes:
            rec = await self.record(gid)
            try:
                data: bytes = await self.run(_step_bytes, rec, step, seat)
            except (ViewError, RecordError) as e:
                raise web.HTTPBadRequest(text=str(e)) from None
            return data

        return await self._cached(("step", gid, step, seat), make)
