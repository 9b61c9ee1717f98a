"""The stderr files beside a record file that ``chinchon replay FILE --view`` serves.

A practice (``chinchon practice``, ``chinchon bots check``) leaves in its folder each
game's record (``practice-N.json``), that game's share of the bot's stderr
(``practice-N.stderr.log``) and the bot's whole stderr (``bot-stderr.log``). They are
the files of whoever runs the command: the local viewer shows them without a token
(a tournament's logs are served only to their bot's token or the admin's: botlogs.py).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

#: The bot's whole stderr in a practice's folder (cli/practice.py writes it).
WHOLE_STDERR = "bot-stderr.log"
#: A game's share of it: ``<record's stem>.stderr.log``.
GAME_STDERR = ".stderr.log"
#: The seats of house bots (no process, no stderr) are named so.
HOUSE = "house:"


@dataclass(frozen=True)
class LocalLogs:
    """Stderr files kept beside the records a local viewer serves."""

    #: A game's share of a seat's bot's lines: (game id, seat) -> file.
    games: dict[tuple[str, int], Path] = field(default_factory=dict)
    #: A bot's whole stderr of the run: its name -> file.
    bots: dict[str, Path] = field(default_factory=dict)


def stem_of(path: Path) -> str:
    """``practice-1`` of ``practice-1.json`` or ``practice-1.json.gz``."""
    name = path.name
    for end in (".json.gz", ".json"):
        if name.endswith(end):
            return name[: -len(end)]
    return path.stem


def beside(path: Path, record: dict[str, Any]) -> LocalLogs:
    """The stderr files kept beside the record file ``path``: its game's share
    (``<stem>.stderr.log``), which is the launched bot's (every seat not a house bot's),
    and that bot's whole stderr (``bot-stderr.log``), where they exist."""
    game = path.with_name(stem_of(path) + GAME_STDERR)
    whole = path.with_name(WHOLE_STDERR)
    gid = str(record.get("gameId", ""))
    names = [str(s.get("name", "")) for s in record.get("seats", []) if isinstance(s, dict)]
    launched = [(seat, n) for seat, n in enumerate(names) if not n.startswith(HOUSE)]
    games = {(gid, seat): game for seat, _ in launched} if game.is_file() else {}
    bots = {n: whole for _, n in launched} if whole.is_file() else {}
    return LocalLogs(games, bots)
