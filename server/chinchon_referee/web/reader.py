"""Read-only queries of the referee's database for the web view.

The web view never writes: it opens the database file read-only (SQLite ``mode=ro``,
a fresh connection per call, in a worker thread), so a page load never takes the
store's lock that the games' writes take, and never holds up the event loop. WAL
journaling lets these readers run beside the referee's writer.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..vocabulary import GameStatus, TournamentStatus

#: Records read per query when streaming a tournament's archive.
BATCH = 200


@dataclass(frozen=True)
class TournamentSummary:
    id: str
    name: str
    status: TournamentStatus
    created: float
    started: float | None
    finished: float | None
    total: int
    done: int
    running: int
    spec: dict[str, Any]

    @property
    def duplicate_deals(self) -> bool:
        return bool(self.spec.get("duplicate_deals"))

    def public(self) -> dict[str, Any]:
        bots = [p.get("name", "") for p in self.spec.get("participants", [])]
        return {"id": self.id, "name": self.name, "status": self.status.value,
                "created": self.created, "started": self.started, "finished": self.finished,
                "total": self.total, "done": self.done, "running": self.running,
                "bots": bots, "table_size": self.spec.get("table_size", 2),
                "start": self.spec.get("start", ""),
                "duplicate_deals": self.duplicate_deals}


@dataclass(frozen=True)
class FinishedGame:
    id: str
    seq: int
    players: list[str]
    deal_id: str
    result: dict[str, Any]
    stats: list[dict[str, Any]]
    finished: float | None


@dataclass(frozen=True)
class StoredRecord:
    game_id: str
    tournament_id: str | None
    status: GameStatus
    record: dict[str, Any] | None


class Reader:
    """Read-only queries of one database file."""

    def __init__(self, path: str) -> None:
        self.path = path
        self._uri = Path(path).resolve().as_uri() + "?mode=ro"

    def _connect(self) -> sqlite3.Connection:
        con = sqlite3.connect(self._uri, uri=True, timeout=10.0)
        con.execute("PRAGMA query_only = 1")
        return con

    def tournaments(self, tid: str | None = None) -> list[TournamentSummary]:
        where, args = ("WHERE t.id = ?", (tid,)) if tid is not None else ("", ())
        sql = (
            "SELECT t.id, t.name, t.spec, t.status, t.created, t.started, t.finished, "
            "(SELECT COUNT(*) FROM games g WHERE g.tournament_id = t.id), "
            "(SELECT COUNT(*) FROM games g WHERE g.tournament_id = t.id AND g.status = 'finished'), "
            "(SELECT COUNT(*) FROM games g WHERE g.tournament_id = t.id AND g.status = 'running') "
            f"FROM tournaments t {where} ORDER BY t.created DESC"
        )
        with closing(self._connect()) as con:
            rows = con.execute(sql, args).fetchall()
        return [
            TournamentSummary(r[0], r[1], TournamentStatus(r[3]), r[4], r[5], r[6], int(r[7]),
                              int(r[8]), int(r[9]), _public_spec(json.loads(r[2])))
            for r in rows
        ]

    def tournament(self, tid: str) -> TournamentSummary | None:
        found = self.tournaments(tid)
        return found[0] if found else None

    def finished_games(self, tid: str) -> list[FinishedGame]:
        """Every finished game of ``tid`` (results and stats, not records), in schedule order."""
        with closing(self._connect()) as con:
            rows = con.execute(
                "SELECT id, seq, players, deal_id, result, stats, finished FROM games "
                "WHERE tournament_id = ? AND status = 'finished' ORDER BY seq", (tid,)).fetchall()
        return [
            FinishedGame(r[0], r[1], json.loads(r[2]), r[3], json.loads(r[4]) if r[4] else {},
                         json.loads(r[5]) if r[5] else [], r[6])
            for r in rows
        ]

    def hand_scores(self, tid: str) -> Iterator[tuple[str, list[dict[str, Any]]]]:
        """(game id, the record's hand results) of each finished game of ``tid``: what
        the standings need besides results and stats."""
        with closing(self._connect()) as con:
            cur = con.execute(
                "SELECT id, json_extract(record, '$.hands') FROM games "
                "WHERE tournament_id = ? AND status = 'finished' ORDER BY seq", (tid,))
            for gid, hands in cur:
                yield gid, json.loads(hands) if hands else []

    def record(self, game_id: str) -> StoredRecord | None:
        with closing(self._connect()) as con:
            rows = con.execute(
                "SELECT id, tournament_id, status, record FROM games WHERE id = ?",
                (game_id,)).fetchall()
        if not rows:
            return None
        r = rows[0]
        return StoredRecord(r[0], r[1], GameStatus(r[2]), json.loads(r[3]) if r[3] else None)

    def record_batches(self, tid: str) -> Iterator[list[tuple[str, str]]]:
        """(game id, record JSON text) of the finished games of ``tid``, ``BATCH`` at a
        time, in schedule order: one short query per batch (never all records at once)."""
        after = -1
        while True:
            with closing(self._connect()) as con:
                rows = con.execute(
                    "SELECT id, seq, record FROM games WHERE tournament_id = ? AND "
                    "status = 'finished' AND seq > ? ORDER BY seq LIMIT ?",
                    (tid, after, BATCH)).fetchall()
            if not rows:
                return
            after = rows[-1][1]
            yield [(r[0], r[2] or "{}") for r in rows]


def _public_spec(spec: dict[str, Any]) -> dict[str, Any]:
    """A stored tournament spec without anything secret (the seed of its deals, tokens,
    the commands that launch its bots)."""
    out = {k: v for k, v in spec.items() if not k.startswith("_") and k != "seed"}
    out["participants"] = [{"name": p.get("name", "")} for p in spec.get("participants", [])]
    return out
