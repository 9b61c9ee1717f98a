"""Who reads a launched bot's stderr lines in the web view.

A bot's log is its author's and the organizer's: the lines ``chinchon tournament run``
kept beside the database (launch/game_logs.py) are served only to a request carrying,
in ``Authorization: Bearer``, that bot's token (its author: compared as SHA-256
digests, in constant time, with the one the database holds) or the admin token (the
organizer; only where the referee feeding this web view has one). A tournament that
declares ``public_logs = true`` shows them to anyone too, once it is over. A request
without a token (or another bot's) is refused before anything is looked up: the answer
never tells whether lines exist.

Whoever asks, nothing is served of a game in progress: a game's share is served once
its record is (the game finished; with duplicate deals, the tournament over), and a
line of the bot's own log (written while it played several games) once every game it
may belong to is finished.

``chinchon replay FILE --view`` is another case: it serves, on this machine, the files
beside the record its author gave it (a practice's ``practice-N.stderr.log`` and
``bot-stderr.log``): :class:`.local_logs.LocalLogs`, the author's own, shown without a token."""

from __future__ import annotations

import hashlib
import hmac
import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NoReturn

from aiohttp import web

from ..storage.beside import bot_stderr_file, stderr_file
from ..vocabulary import GameStatus
from .finished import Finished
from .local_logs import LocalLogs
from .reader import Reader, TournamentSummary

Run = Callable[..., Awaitable[Any]]

#: The largest bot log read (game_logs.MAX_BOT_LOG, and a margin).
MAX_READ = 17 * 1024 * 1024
_CHALLENGE = {"WWW-Authenticate": 'Bearer realm="chinchon"'}
_NEEDS = ("a bot's stderr lines are its author's and the organizer's: send "
          "'Authorization: Bearer <token>' with that bot's token or the admin token")


def refuse(kind: type[web.HTTPException], message: str) -> NoReturn:
    """An HTTP error whose body is ``{"error": message}``."""
    headers = _CHALLENGE if kind is web.HTTPUnauthorized else None
    raise kind(text=json.dumps({"error": message}), content_type="application/json",
               headers=headers)


@dataclass(frozen=True)
class Asker:
    """Who asks: the organizer (admin token), a bot's author (its name), or anyone."""

    admin: bool = False
    bot: str | None = None

    @property
    def anonymous(self) -> bool:
        return not self.admin and self.bot is None


class BotLogs:
    def __init__(self, reader: Reader | None, folder: Path | None, finished: Finished,
                 run: Run, is_admin: Callable[[str | None], bool],
                 local: LocalLogs | None = None) -> None:
        self.local = local or LocalLogs()
        self.reader = reader
        self.folder = folder
        self.finished = finished
        self.run = run
        self.is_admin = is_admin

    # -- who asks -----------------------------------------------------------------------
    async def who(self, request: web.Request) -> Asker:
        header = request.headers.get("Authorization")
        if header is None:
            return Asker()
        scheme, _, token = header.partition(" ")
        token = token.strip()
        if scheme.lower() != "bearer" or not token:
            refuse(web.HTTPUnauthorized, "malformed Authorization header: expected "
                                         "'Bearer <token>'")
        if self.is_admin(token):
            return Asker(admin=True)
        bot = None if self.reader is None else await self.run(_bot_of, self.reader, token)
        if bot is None:
            refuse(web.HTTPUnauthorized, "unknown token: neither a bot's registered here "
                                         "nor the admin token")
        return Asker(bot=bot)

    # -- a game's share -------------------------------------------------------------------
    async def game_share(self, request: web.Request, gid: str, seat_text: str) -> bytes:
        """Seat ``seat_text``'s bot's lines of game ``gid``."""
        if not (seat_text.isascii() and seat_text.isdigit() and len(seat_text) <= 2):
            refuse(web.HTTPBadRequest, "seat: a seat number")
        seat = int(seat_text)
        mine = self.local.games.get((gid, seat))
        if mine is not None:
            return await self._local(mine)
        who = await self.who(request)
        if who.anonymous and not await self._public_game(gid):
            refuse(web.HTTPUnauthorized, _NEEDS)
        record = await self.finished.record(gid)  # finished (and its twins' tournament over)
        if who.bot is not None:
            names = [str(s.get("name", "")) for s in record.get("seats", [])]
            if seat >= len(names) or not hmac.compare_digest(names[seat].encode(),
                                                             who.bot.encode()):
                refuse(web.HTTPForbidden, "this token is another bot's: a bot's token "
                                          "reads that bot's lines only")
        f = None if self.folder is None else stderr_file(self.folder, gid, seat)
        data: bytes | None = None if f is None else await self.run(_read, f, MAX_READ)
        if data is None:
            refuse(web.HTTPNotFound, "no stderr lines kept for this seat")
        return data

    async def _local(self, path: Path) -> bytes:
        data: bytes | None = await self.run(_read, path, MAX_READ)
        if data is None:
            refuse(web.HTTPNotFound, f"{path.name} cannot be read any more")
        return data

    async def _public_game(self, gid: str) -> bool:
        """``gid`` is a finished game of a tournament over that shows its logs."""
        if self.reader is None:
            return False
        reader = self.reader
        got = (await self.run(lambda: reader.store.game_states([gid]))).get(gid)
        if got is None or got[0] is not GameStatus.FINISHED or got[1] is None:
            return False
        t = await self.run(reader.tournament, got[1])
        return _public(t)

    # -- a bot's own log ------------------------------------------------------------------
    async def bot_log(self, request: web.Request, name: str) -> bytes:
        """``name``'s lines no one game owns, those whose games are all finished."""
        mine = self.local.bots.get(name)
        if mine is not None:
            return await self._local(mine)
        who = await self.who(request)
        if who.bot is not None and not hmac.compare_digest(who.bot.encode(), name.encode()):
            refuse(web.HTTPForbidden, "this token is another bot's: a bot's token reads "
                                      "that bot's lines only")
        reader = self.reader
        if who.anonymous:
            shown = [] if reader is None else [
                t for t in await self.run(reader.tournaments) if _public(t)
                and name in {p.get("name") for p in t.spec.get("participants", [])}]
            if not shown:
                refuse(web.HTTPUnauthorized, _NEEDS)
        data = None if self.folder is None or reader is None else await self.run(
            _read, bot_stderr_file(self.folder, name), MAX_READ)
        if data is None or reader is None:
            refuse(web.HTTPNotFound, f"no stderr lines of {name[:100]} kept here")
        return bytes(await self.run(_shown, reader, data, who.anonymous))


def _public(t: TournamentSummary | None) -> bool:
    return t is not None and t.status.over and bool(t.spec.get("public_logs"))


def _bot_of(reader: Reader, token: str) -> str | None:
    """The bot whose token is ``token``: every registered digest compared, in constant
    time, whatever matches first."""
    d = hashlib.sha256(token.encode()).hexdigest().encode()
    found = None
    for name, digest in reader.store.bots():
        if hmac.compare_digest(digest.encode(), d) and found is None:
            found = name
    return found


def _read(path: Path, cap: int) -> bytes | None:
    try:
        with open(path, "rb") as f:
            return f.read(cap)
    except OSError:
        return None


def _shown(reader: Reader, data: bytes, anonymous: bool) -> bytes:
    """The entries of a bot's log whose games are all finished (their records shown:
    with duplicate deals, the tournament over; ``anonymous``: public ones only), as
    text, each under a line naming its games."""
    entries = []
    for raw in data.splitlines():
        try:
            e = json.loads(raw)
            entries.append(([str(g) for g in e["games"]], str(e["text"])))
        except (ValueError, KeyError, TypeError):
            continue  # a line cut short by a full disk
    states = reader.store.game_states(sorted({g for games, _ in entries for g in games}))
    tours: dict[str, TournamentSummary | None] = {}
    for _, tid in states.values():
        if tid is not None and tid not in tours:
            tours[tid] = reader.tournament(tid)

    def ok(gid: str) -> bool:
        status, tid = states.get(gid, (None, None))
        if status is not GameStatus.FINISHED:
            return False
        t = None if tid is None else tours.get(tid)
        if anonymous:
            return _public(t)
        return t is None or not t.duplicate_deals or t.status.over

    out = []
    for games, text in entries:
        if not games and anonymous:
            continue
        if all(ok(g) for g in games):
            head = (f"# while it played {', '.join(games)} (not one game's alone)"
                    if games else "# before its first game")
            out.append(head + "\n" + text)
    return "".join(out).encode()
