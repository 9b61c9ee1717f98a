"""Each game's share of the launched bots' stderr: when a game starts, where each of its
bots' log files ends; when it ends, the lines written since, into one file per seat
(``storage.beside``: ``stderr/GAME.SEAT.log`` beside the database) for the replay to link.

A bot process may play several games at once (``instances`` and ``concurrency``): the
lines of a game are then those its processes wrote while it ran, but a line naming
another game's id and not this one's is left out (the Python SDK names the game in its
lines; its line on a game's end comes after the referee's end, so it is left out of the
next game's lines and not in its own). Each line is bounded, the file too (its last
:data:`MAX_BYTES`), and the bot's own token is blanked out wherever it was printed."""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from ..logs import get_logger

#: The most of a game's stderr kept per seat (its end, where a crash is told).
MAX_BYTES = 256 * 1024
#: The most characters of one line kept.
MAX_LINE = 2000

log = get_logger("launch.game_logs")


class GameLogs:
    """``started``/``ended`` are called by the referee at each game's start and end
    (``GameServices.on_game``); ``logs``: each launched bot's stderr files; ``target``:
    the file of a game's seat (``storage.beside.stderr_file``; None: none kept);
    ``secrets``: the bots' tokens, blanked out."""

    def __init__(self, logs: Mapping[str, Sequence[Path]],
                 target: Callable[[str, int], Path | None], secrets: Sequence[str] = ()) -> None:
        self.logs = {k: list(v) for k, v in logs.items()}
        self.target = target
        self.secrets = [s for s in secrets if s]
        self._marks: dict[str, list[list[tuple[Path, int]]]] = {}
        #: The latest games seen: a line naming one of them belongs to it.
        self._seen: dict[str, None] = {}

    def __call__(self, game_id: str, players: Sequence[str], started: bool) -> None:
        try:
            if started:
                self._seen[game_id] = None
                while len(self._seen) > 64:
                    self._seen.pop(next(iter(self._seen)))
                self._marks[game_id] = [[(p, _size(p)) for p in self.logs.get(n, [])] for n in players]
            else:
                self._write(game_id, self._marks.pop(game_id, []))
        except OSError as e:  # a full disk loses these lines, never the game
            log.warning("game_stderr_failed", game_id=game_id, error=str(e))

    def _write(self, game_id: str, marks: list[list[tuple[Path, int]]]) -> None:
        for seat, files in enumerate(marks):
            lines: list[str] = []
            for k, (path, start) in enumerate(files):
                tag = f"[{k}] " if len(files) > 1 else ""
                lines += [tag + ln for ln in self._lines(path, start)
                          if not self._elsewhere(ln, game_id)]
            target = self.target(game_id, seat)
            if lines and target is not None:
                target.parent.mkdir(parents=True, exist_ok=True)
                text = "\n".join(lines) + "\n"
                target.write_text(text[-MAX_BYTES:], encoding="utf-8")

    def _elsewhere(self, line: str, game_id: str) -> bool:
        """Whether ``line`` names another game and not ``game_id``."""
        if game_id in line:
            return False
        return any(g in line for g in self._seen if g != game_id)

    def _lines(self, path: Path, start: int) -> list[str]:
        end = _size(path)
        if end <= start:
            return []
        with open(path, "rb") as f:
            f.seek(max(start, end - MAX_BYTES))
            data = f.read(end - max(start, end - MAX_BYTES))
        text = data.decode(errors="replace")
        for s in self.secrets:
            text = text.replace(s, "[token]")
        return [ln[:MAX_LINE] + ("…" if len(ln) > MAX_LINE else "") for ln in text.splitlines()]


def _size(path: Path) -> int:
    try:
        return os.stat(path).st_size
    except FileNotFoundError:
        return 0
