"""Files kept beside a SQLite database: the stderr lines of the bots a tournament run
launched, one file per game and seat (``<folder of the database>/stderr/GAME.SEAT.log``)
and, for the lines no one game owns, one per bot (``stderr/bots/<digest>.jsonl``),
written by ``chinchon tournament run`` and served by the web view wherever that database
is served from (``chinchon serve --db … --http`` afterwards too), to the bot's token or
the admin token (web/botlogs.py). A PostgreSQL database has no folder: none are kept."""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

from . import is_url

#: What a game id may be to name a file (the referee's ids are of these characters).
_SAFE_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,199}")


def stderr_folder(db: str | None) -> Path | None:
    """The folder of the bots' stderr files of the database ``db`` (None: none)."""
    if not db or is_url(db):
        return None
    return Path(db).resolve().parent / "stderr"


def stderr_file(folder: Path, game_id: str, seat: int) -> Path | None:
    """The file of ``seat``'s stderr lines of ``game_id`` in ``folder`` (None for an id
    that cannot name a file)."""
    if not _SAFE_ID.fullmatch(game_id) or not 0 <= seat < 100:
        return None
    return folder / f"{game_id}.{seat}.log"


def bot_stderr_file(folder: Path, bot: str) -> Path:
    """The file of ``bot``'s stderr lines that no one game owns (written while it played
    several games at once, or between games: launch/game_logs.py), in ``folder``: named
    by a digest of the bot's name, whatever characters that name has."""
    return folder / "bots" / f"{hashlib.sha256(bot.encode()).hexdigest()[:32]}.jsonl"
