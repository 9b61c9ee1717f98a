"""Read-only queries of the referee's database for the web view.

The web view never writes: it opens the database for reading only (SQLite ``mode=ro``;
PostgreSQL with read-only transactions), with connections of its own, and calls it in a
worker thread, so a page load never takes the lock that the games' writes take, and never
holds up the event loop. It reads through the same ``Store`` as the referee (both
backends alike).
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from chinchon.engine import OPTIONS, HandScore, Outcome, RuleSet, RuleSetError

from ..storage import GameFilter, SqlStore, open_store
from ..storage.ladders import LadderGameStatus
from ..vocabulary import GameStatus, TournamentStatus

#: Records read per query when streaming a tournament's archive.
BATCH = 200
#: Finished games read per query.
PAGE = 500
#: A ladder game's status as the replay's rules read it (a voided one: not played out).
_LADDER_STATUS = {LadderGameStatus.RUNNING: GameStatus.RUNNING,
                  LadderGameStatus.FINISHED: GameStatus.FINISHED,
                  LadderGameStatus.VOID: GameStatus.SCHEDULED}


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
                "duplicate_deals": self.duplicate_deals,
                "rules": rule_rows(self.spec.get("rules") or {})}


@dataclass(frozen=True)
class FinishedGame:
    id: str
    seq: int
    players: list[str]
    deal_id: str
    result: Outcome
    hands: list[HandScore]
    stats: list[dict[str, Any]]
    finished: float | None


@dataclass(frozen=True)
class StoredRecord:
    game_id: str
    tournament_id: str | None
    status: GameStatus
    record: dict[str, Any] | None


class Reader:
    """Read-only queries of one database (a SQLite file or a PostgreSQL URL)."""

    def __init__(self, target: str) -> None:
        self.target = target
        self._store: SqlStore | None = None
        self._opening = threading.Lock()

    @property
    def store(self) -> SqlStore:
        """The store, opened for reading on first use (in the caller's worker thread)."""
        with self._opening:
            if self._store is None:
                self._store = open_store(self.target, read_only=True)
            return self._store

    def close(self) -> None:
        with self._opening:
            if self._store is not None:
                self._store.close()
                self._store = None

    def tournaments(self, tid: str | None = None) -> list[TournamentSummary]:
        store = self.store
        if tid is None:
            rows = store.tournaments()
        else:
            one = store.tournament(tid)
            rows = [] if one is None else [one]
        out = []
        for t in rows:
            counts = store.status_counts(t.id)
            out.append(TournamentSummary(
                t.id, t.name, t.status, t.created, t.started, t.finished,
                sum(counts.values()), counts[GameStatus.FINISHED], counts[GameStatus.RUNNING],
                _public_spec(t.spec)))
        return out

    def tournament(self, tid: str) -> TournamentSummary | None:
        found = self.tournaments(tid)
        return found[0] if found else None

    def finished_games(self, tid: str) -> list[FinishedGame]:
        """Every finished game of ``tid`` (results, hand scores and stats, not records),
        in schedule order, read a page at a time."""
        out: list[FinishedGame] = []
        after = -1
        while page := self.store.finished_scores(tid, after, PAGE):
            out += [FinishedGame(g.id, g.seq, g.players, g.deal_id, g.result, g.hands or [],
                                 g.stats or [], g.finished)
                    for g in page if g.result is not None]
            after = page[-1].seq
        return out

    def record(self, game_id: str) -> StoredRecord | None:
        """A tournament's (or practice) game's record, else a ladder game's (its deal is
        its own, never dealt again: shown once it is finished, like any game's)."""
        row = self.store.game(game_id, practice=True)
        if row is not None:
            return StoredRecord(row.id, row.tournament_id, row.status, row.record)
        lg = self.store.ladder_game(game_id)
        if lg is None:
            return None
        status = _LADDER_STATUS[lg.status]
        return StoredRecord(lg.id, None, status,
                            lg.record if status is GameStatus.FINISHED else None)

    def owner_of(self, game_id: str) -> str | None:
        """The referee process playing ``game_id`` (a shared database), None if none."""
        return self.store.game_owner(game_id)

    def running_games(self, tid: str) -> list[tuple[str, list[str]]]:
        """(id, players) of the games of ``tid`` running now, on any process (at most a
        page: a tournament runs at most its concurrency per process)."""
        rows = self.store.games_page(tid, -1, PAGE, GameFilter(status=GameStatus.RUNNING))
        return [(g.id, g.players) for g in rows]

    def record_batches(self, tid: str) -> Iterator[list[tuple[str, str]]]:
        """(game id, record JSON text) of the finished games of ``tid``, ``BATCH`` at a
        time, in schedule order: one short query per batch (never all records at once)."""
        after = -1
        while page := self.store.record_texts(tid, after, BATCH):
            after = page[-1][1]
            yield [(gid, text) for gid, _, text in page]


def rule_rows(stored: dict[str, Any]) -> list[dict[str, Any]]:
    """The rule table of the tournament page: every option (those a spec stored before
    an option existed take its default), its value and default as text, its meaning."""
    try:
        values = RuleSet.from_dict(dict(stored)).to_dict()
    except (RuleSetError, TypeError):  # a spec stored by another version: as stored
        values = dict(stored)

    def text(v: Any) -> str:
        if isinstance(v, bool):
            return "true" if v else "false"
        if isinstance(v, (list, tuple)):
            return " ".join(map(str, v)) or "none"
        return str(v)

    return [{"option": o.name, "value": text(values.get(o.name, o.default)),
             "default": text(o.default), "meaning": o.help} for o in OPTIONS]


def _public_spec(spec: dict[str, Any]) -> dict[str, Any]:
    """A stored tournament spec without anything secret (the seed of its deals, tokens,
    the commands that launch its bots)."""
    out = {k: v for k, v in spec.items() if not k.startswith("_") and k != "seed"}
    out["participants"] = [{"name": p.get("name", "")} for p in spec.get("participants", [])]
    return out
