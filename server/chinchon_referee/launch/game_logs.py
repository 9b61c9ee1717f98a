"""Each game's share of the launched bots' stderr, and the bot's lines no one game owns.

A bot's stderr files (one per launched instance) are cut at every moment one of its
games starts or ends: the referee calls :class:`GameLogs` then, synchronously, before
it sends the game's first message and after its last. The bytes each file grew by
since the bot's previous cut were written while the games then in progress were:

- exactly one game (one seat) in progress: they are that seat's share of that game,
  kept in ``stderr/GAME.SEAT.log`` beside the database (``storage.beside``) when the
  game ends;
- several at once (``concurrency`` > 1, or a bot holding two seats): no line can be
  told to be one game's, since a process may hold several streams and nothing here
  tells which launched process plays which stream. They are the bot's, tagged with
  every game they may belong to, and written to the bot's log
  (``stderr/bots/<digest of the name>.jsonl``) only once every one of those games has
  ended;
- none: the lines between games (a late line of the games just ended), the bot's,
  tagged with those games (already over).

All the instances of a bot count as one process: a line of any of them, written while
two games of that bot were in progress, is not either game's. Sound whatever the bot
prints (a hand without the game's id), buffers aside (a line a bot holds back and
writes later is cut where it lands: never before the game it tells of started).

Each line is bounded (:data:`MAX_LINE` bytes), a share too (its last :data:`MAX_BYTES`
bytes, where a crash is told), both cut on UTF-8 character boundaries; the bots' tokens
are blanked out wherever they were printed. Who may read these files (the bot's token,
the admin token; the public once the tournament is over where it says so) is the web
view's business (web/botlogs.py)."""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from ..logs import get_logger

#: The most of a game's stderr kept per seat (its end, where a crash is told): bytes.
MAX_BYTES = 256 * 1024
#: The most bytes of one line kept.
MAX_LINE = 2000
#: The most bytes of a bot's lines held back while their games are in progress (the
#: oldest are dropped past it).
MAX_HELD = 4 * 1024 * 1024
#: The largest a bot's log of lines no one game owns grows to (past it, no more).
MAX_BOT_LOG = 16 * 1024 * 1024

log = get_logger("launch.game_logs")

#: A seat of a game: (game id, seat).
Unit = tuple[str, int]


@dataclass
class _Held:
    """Lines of a bot written while several of its games were in progress."""

    games: frozenset[str]
    data: bytes


@dataclass
class _Bot:
    files: list[Path]
    marks: list[int]
    #: The seats this bot holds in games in progress.
    units: list[Unit] = field(default_factory=list)
    #: The games of its latest cut with any game in progress (what late lines tell of).
    last: frozenset[str] = frozenset()
    held: list[_Held] = field(default_factory=list)


class GameLogs:
    """``__call__(game, players, started)`` at each game's start and end
    (``GameServices.on_game``); ``logs``: each launched bot's stderr files; ``target``:
    the file of a game's seat (``storage.beside.stderr_file``; None: none kept);
    ``secrets``: the bots' tokens, blanked out; ``bot_target``: the file of a bot's
    lines no one game owns (None: not kept)."""

    def __init__(self, logs: Mapping[str, Sequence[Path]],
                 target: Callable[[str, int], Path | None], secrets: Sequence[str] = (),
                 bot_target: Callable[[str], Path | None] | None = None) -> None:
        self.target = target
        self.bot_target = bot_target
        self.secrets = sorted({s.encode() for s in secrets if s}, key=len, reverse=True)
        # From each file's start: the lines before a bot's first game are its own.
        self._bots = {name: _Bot(list(files), [0] * len(files)) for name, files in logs.items()}
        #: Each seat's share so far, of the games in progress.
        self._shares: dict[Unit, bytearray] = {}
        #: The games in progress.
        self._running: set[str] = set()

    def __call__(self, game_id: str, players: Sequence[str], started: bool) -> None:
        try:
            self._event(game_id, list(players), started)
        except OSError as e:  # a full disk loses these lines, never the game
            log.warning("game_stderr_failed", game_id=game_id, error=str(e))

    def finish(self) -> None:
        """The run is over: every bot's lines since its last cut, to its log."""
        try:
            for name in self._bots:
                self._cut(name)
                self._release(name)
        except OSError as e:
            log.warning("bot_stderr_failed", error=str(e))

    def _event(self, game_id: str, players: list[str], started: bool) -> None:
        names = [n for n in dict.fromkeys(players) if n in self._bots]
        for name in names:
            self._cut(name)
        mine = [(game_id, seat) for seat in range(len(players))]
        if started:
            self._running.add(game_id)
            for name in names:
                self._bots[name].units += [u for u in mine if players[u[1]] == name]
            return
        self._running.discard(game_id)
        for name in names:
            bot = self._bots[name]
            bot.units = [u for u in bot.units if u[0] != game_id]
        for unit in mine:
            share = self._shares.pop(unit, None)
            target = self.target(*unit)
            if share and target is not None:
                _write_private(target, bytes(_tail(bytes(share), MAX_BYTES)))
        for name in self._bots:
            self._release(name)

    def _cut(self, name: str) -> None:
        """What ``name``'s files grew by since its last cut, given to whom it belongs."""
        bot = self._bots[name]
        data = bytearray()
        for k, path in enumerate(bot.files):
            got, bot.marks[k] = _grown(path, bot.marks[k])
            if got:
                data += self._clean(got, f"[{k}] " if len(bot.files) > 1 else "")
        games = frozenset(g for g, _ in bot.units)
        if games:
            bot.last = games
        if not data:
            return
        if len(bot.units) == 1:
            share = self._shares.setdefault(bot.units[0], bytearray())
            share += data
            if len(share) > 2 * MAX_BYTES:
                self._shares[bot.units[0]] = bytearray(_tail(bytes(share), MAX_BYTES))
            return
        bot.held.append(_Held(games or bot.last, bytes(data)))
        while sum(len(h.data) for h in bot.held) > MAX_HELD and len(bot.held) > 1:
            bot.held.pop(0)

    def _release(self, name: str) -> None:
        """Write ``name``'s held lines whose games are all over to its log."""
        bot = self._bots[name]
        keep: list[_Held] = []
        done: list[_Held] = []
        for h in bot.held:
            (keep if h.games & self._running else done).append(h)
        bot.held = keep
        target = None if self.bot_target is None or not done else self.bot_target(name)
        if target is None:
            return
        lines = [json.dumps({"games": sorted(h.games),
                             "text": _tail(h.data, MAX_BYTES).decode("utf-8", "replace")},
                            ensure_ascii=False) + "\n" for h in done]
        _append_private(target, "".join(lines).encode(), MAX_BOT_LOG)

    def _clean(self, data: bytes, tag: str) -> bytes:
        """``data``'s lines, each tagged and bounded, the tokens blanked out."""
        for s in self.secrets:
            data = data.replace(s, b"[token]")
        out = bytearray()
        prefix = tag.encode()
        for line in data.split(b"\n"):
            if not line:
                continue
            if len(line) > MAX_LINE:
                line = _head(line, MAX_LINE) + "…".encode()
            out += prefix + line + b"\n"
        return bytes(out)


def _grown(path: Path, mark: int) -> tuple[bytes, int]:
    """The bytes of ``path`` past ``mark`` (at most its last MAX_BYTES), and its size.
    A file cut shorter (its bot truncated it) gives nothing and its new size."""
    end = _size(path)
    if end <= mark:
        return b"", end
    start = max(mark, end - MAX_BYTES)
    try:
        with open(path, "rb") as f:
            f.seek(start)
            data = f.read(end - start)
    except FileNotFoundError:
        return b"", 0
    if start > mark:  # its end only: from a line's start
        data = _tail(data, len(data) - 1) if len(data) > 1 else data
    return data, end


def _head(data: bytes, n: int) -> bytes:
    """The first ``n`` bytes of ``data`` or fewer: never half a UTF-8 character."""
    if len(data) <= n:
        return data
    i = n
    while i > 0 and data[i] & 0xC0 == 0x80:
        i -= 1
    return data[:i]


def _tail(data: bytes, n: int) -> bytes:
    """The last ``n`` bytes of ``data`` or fewer, from a line's start where there is one
    in them (else from a character's start)."""
    if len(data) <= n:
        return data
    i = len(data) - n
    nl = data.find(b"\n", i - 1, len(data) - 1)
    if nl >= 0:
        return data[nl + 1:]
    while i < len(data) and data[i] & 0xC0 == 0x80:
        i += 1
    return data[i:]


def _write_private(path: Path, data: bytes) -> None:
    """``data`` in ``path`` (mode 0600, its folder 0700 if made now), whole or not at all."""
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "wb") as f:
        f.write(data)
    os.replace(tmp, path)


def _append_private(path: Path, data: bytes, cap: int) -> None:
    """``data`` at the end of ``path`` (mode 0600) unless it would pass ``cap`` bytes."""
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    if _size(path) + len(data) > cap:
        log.warning("bot_stderr_full", file=str(path), cap=cap)
        return
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    with os.fdopen(fd, "ab") as f:
        f.write(data)


def _size(path: Path) -> int:
    try:
        return os.stat(path).st_size
    except FileNotFoundError:
        return 0
