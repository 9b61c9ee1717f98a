"""Persistence: everything is written as it happens, so a killed referee loses nothing.

:class:`Store` is the interface the referee and the scheduler use; :class:`SqliteStore`
implements it on one SQLite file (WAL journal, synchronous=FULL: a committed game
survives ``kill -9``). It is the only backend.

Game rows move ``scheduled -> running -> finished``; on start-up ``running`` rows of a
tournament are games that were in flight when the referee died: they are voided
(set back to ``scheduled``, counted in ``voided``) and replayed from the same deal.
A finished game is never written again.

A file that is not a database of this program, or is damaged, is refused with a
:class:`StoreError` before anything is written. A server opens its database with
``exclusive=True``: an OS lock on ``<db>.lock`` (released by the kernel when the
process dies, even by ``kill -9``) keeps a second server off the same database.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import os
import secrets
import sqlite3
import threading
import time
from abc import ABC, abstractmethod
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from .db_files import StoreError, hold, open_checked
from .vocabulary import GameStatus, TournamentStatus

SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS bots (
    name TEXT PRIMARY KEY,
    token_digest TEXT NOT NULL,
    created REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS tournaments (
    id TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    spec TEXT NOT NULL,
    status TEXT NOT NULL,
    created REAL NOT NULL,
    started REAL,
    finished REAL
);
CREATE TABLE IF NOT EXISTS games (
    id TEXT PRIMARY KEY,
    tournament_id TEXT,
    seq INTEGER NOT NULL,
    players TEXT NOT NULL,
    deal_id TEXT NOT NULL,
    status TEXT NOT NULL,
    voided INTEGER NOT NULL DEFAULT 0,
    result TEXT,
    record TEXT,
    stats TEXT,
    started REAL,
    finished REAL
);
CREATE INDEX IF NOT EXISTS games_by_tournament ON games (tournament_id, seq);
CREATE INDEX IF NOT EXISTS games_by_finish ON games (finished) WHERE tournament_id IS NULL;
"""
SCHEMA_VERSION = "1"
#: Game rows written per transaction when a tournament is created: the store's lock
#: (which every call of the event loop takes) is never held for long.
CREATE_CHUNK = 2000


@dataclass
class GameRow:
    id: str
    tournament_id: str | None
    seq: int
    players: list[str]
    deal_id: str
    status: GameStatus = GameStatus.SCHEDULED
    voided: int = 0
    result: dict[str, Any] | None = None
    record: dict[str, Any] | None = None
    stats: list[dict[str, Any]] | None = None


@dataclass(frozen=True)
class GameFilter:
    """Which games of a tournament a page holds (None: any)."""
    status: GameStatus | None = None
    bot: str | None = None
    #: A ``chinchon.v1.Termination`` name, as results store it ("TERMINATION_NORMAL").
    termination: str | None = None
    #: A bot that won the game (alone or in a draw).
    winner: str | None = None


@dataclass
class TournamentRow:
    id: str
    name: str
    spec: dict[str, Any]
    status: TournamentStatus
    created: float
    started: float | None = None
    finished: float | None = None


class Store(ABC):
    """What the referee and the scheduler need from storage."""

    @abstractmethod
    def upsert_bot(self, name: str, token_digest: str) -> None: ...

    @abstractmethod
    def bots(self) -> list[tuple[str, str]]: ...

    @abstractmethod
    def bot_created(self) -> dict[str, float]:
        """Registered bot name -> when it was registered (a ``time.time()``)."""

    @abstractmethod
    def add_bot(self, name: str, token_digest: str) -> bool:
        """Register a new bot; False (nothing written) if the name is registered."""

    @abstractmethod
    def set_bot_token(self, name: str, token_digest: str) -> bool:
        """Give a registered bot a new token digest; False if it is not registered."""

    @abstractmethod
    def remove_bot(self, name: str) -> bool:
        """Unregister a bot; False if it was not registered."""

    @abstractmethod
    def create_tournament(self, row: TournamentRow, games: Iterable[GameRow]) -> None:
        """Store a tournament and its games. The tournament row is written last, so it
        is never seen without all its games."""

    @abstractmethod
    def tournament(self, tid: str) -> TournamentRow | None: ...

    @abstractmethod
    def tournaments(self) -> list[TournamentRow]: ...

    @abstractmethod
    def set_tournament_status(self, tid: str, status: TournamentStatus) -> None: ...

    @abstractmethod
    def games(self, tid: str) -> list[GameRow]: ...

    @abstractmethod
    def games_page(self, tid: str, after_seq: int, limit: int, where: GameFilter = GameFilter(),
                   records: bool = False) -> list[GameRow]:
        """Up to ``limit`` games of ``tid`` with ``seq > after_seq`` matching ``where``, in
        schedule order (keyset pagination: each page costs the same, however far in);
        their records only if ``records`` (else None)."""

    @abstractmethod
    def finished_scores(self, tid: str, after_seq: int, limit: int) -> list[GameRow]:
        """Up to ``limit`` finished games of ``tid`` with ``seq > after_seq``, in schedule
        order, each with only the ``hands`` and ``result`` of its record (what standings
        need): the action log, most of a record, is never read."""

    @abstractmethod
    def game(self, game_id: str) -> GameRow | None:
        """One game of a tournament, with its record."""

    @abstractmethod
    def record_texts(self, tid: str, after_seq: int, limit: int) -> list[tuple[str, int, str]]:
        """(game id, seq, record JSON as stored) of up to ``limit`` finished games of
        ``tid`` with ``seq > after_seq``, in schedule order: an export sends the text as
        it is, never parsed."""

    @abstractmethod
    def record_bytes(self, tid: str) -> int:
        """The total size of the records of ``tid``'s finished games (none read)."""

    @abstractmethod
    def game_counts(self, tid: str) -> tuple[int, int]:
        """(games scheduled in all, games finished): cheap, called on every event."""

    @abstractmethod
    def mark_running(self, game_id: str) -> None: ...

    @abstractmethod
    def finish_game(self, row: GameRow) -> None: ...

    @abstractmethod
    def prune_games(self, keep: int, older_than: float) -> int:
        """Delete the records of games outside tournaments (practice) finished before
        ``older_than`` (a ``time.time()``) and all but the ``keep`` newest; return how
        many were deleted. Tournament games are never deleted."""

    @abstractmethod
    def void_running(self, tid: str) -> int: ...

    @abstractmethod
    def void_game(self, game_id: str) -> None:
        """Set one running game back to ``scheduled`` (counted in ``voided``), to be
        played again."""

    @abstractmethod
    def close(self) -> None: ...


__all__ = ["GameFilter", "GameRow", "SqliteStore", "Store", "StoreError", "TournamentRow"]


class SqliteStore(Store):
    def __init__(self, path: str, exclusive: bool = False) -> None:
        """Open (or create) the database at ``path``; StoreError if it cannot be used.
        ``exclusive``: hold it for this process's life (a server): StoreError naming the
        holder's pid if another process holds it."""
        self.path = path
        self._lock = threading.Lock()
        self._lockfile: int | None = None
        if exclusive:
            self._lockfile = hold(path)
        try:
            self._db = open_checked(path, SCHEMA, SCHEMA_VERSION)
        except BaseException:
            self._release()
            raise
        if exclusive:
            # Games of a tournament whose creation was interrupted (its row is written
            # last): nobody can see them; remove them.
            with self._tx() as c:
                c.execute("DELETE FROM games WHERE tournament_id IS NOT NULL AND "
                          "tournament_id NOT IN (SELECT id FROM tournaments)")

    def _release(self) -> None:
        if self._lockfile is not None:
            os.close(self._lockfile)  # closing the descriptor releases the lock
            self._lockfile = None

    @contextmanager
    def _tx(self) -> Iterator[sqlite3.Connection]:
        with self._lock:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                yield self._db
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
            self._db.execute("COMMIT")

    def _query(self, sql: str, args: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        with self._lock:
            return list(self._db.execute(sql, args))

    def secret(self, key: str) -> bytes:
        """A random secret kept in the meta table under ``key``: made on first use, the
        same ever after (across restarts)."""
        with self._tx() as c:
            c.execute("INSERT OR IGNORE INTO meta (key, value) VALUES (?, ?)",
                      (key, secrets.token_hex(32)))
            (value,), = c.execute("SELECT value FROM meta WHERE key = ?", (key,))
        return bytes.fromhex(value)

    # bots ----------------------------------------------------------------------------
    def upsert_bot(self, name: str, token_digest: str) -> None:
        with self._tx() as c:
            c.execute(
                "INSERT INTO bots (name, token_digest, created) VALUES (?, ?, ?) "
                "ON CONFLICT(name) DO UPDATE SET token_digest = excluded.token_digest",
                (name, token_digest, time.time()),
            )

    def bots(self) -> list[tuple[str, str]]:
        return [(n, d) for n, d in self._query("SELECT name, token_digest FROM bots ORDER BY name")]

    def bot_created(self) -> dict[str, float]:
        return {n: c for n, c in self._query("SELECT name, created FROM bots ORDER BY name")}

    def add_bot(self, name: str, token_digest: str) -> bool:
        with self._tx() as c:
            return c.execute("INSERT OR IGNORE INTO bots (name, token_digest, created) "
                             "VALUES (?, ?, ?)", (name, token_digest, time.time())).rowcount > 0

    def set_bot_token(self, name: str, token_digest: str) -> bool:
        with self._tx() as c:
            return c.execute("UPDATE bots SET token_digest = ? WHERE name = ?",
                             (token_digest, name)).rowcount > 0

    def remove_bot(self, name: str) -> bool:
        with self._tx() as c:
            return c.execute("DELETE FROM bots WHERE name = ?", (name,)).rowcount > 0

    # tournaments -----------------------------------------------------------------------
    def create_tournament(self, row: TournamentRow, games: Iterable[GameRow]) -> None:
        it = iter(games)
        try:
            while chunk := list(itertools.islice(it, CREATE_CHUNK)):
                with self._tx() as c:
                    c.executemany(
                        "INSERT INTO games (id, tournament_id, seq, players, deal_id, status) "
                        "VALUES (?, ?, ?, ?, ?, 'scheduled')",
                        [(gm.id, row.id, gm.seq, json.dumps(gm.players), gm.deal_id)
                         for gm in chunk],
                    )
            with self._tx() as c:
                c.execute(
                    "INSERT INTO tournaments (id, name, spec, status, created) "
                    "VALUES (?, ?, ?, ?, ?)",
                    (row.id, row.name, json.dumps(row.spec), TournamentStatus(row.status).value,
                     row.created),
                )
        except BaseException:
            with contextlib.suppress(sqlite3.Error), self._tx() as c:
                c.execute("DELETE FROM games WHERE tournament_id = ? AND tournament_id NOT IN "
                          "(SELECT id FROM tournaments)", (row.id,))
            raise

    def _tournament(self, r: tuple[Any, ...]) -> TournamentRow:
        return TournamentRow(r[0], r[1], json.loads(r[2]), TournamentStatus(r[3]), r[4], r[5],
                             r[6])

    def tournament(self, tid: str) -> TournamentRow | None:
        rows = self._query(
            "SELECT id, name, spec, status, created, started, finished FROM tournaments "
            "WHERE id = ?", (tid,),
        )
        return self._tournament(rows[0]) if rows else None

    def tournaments(self) -> list[TournamentRow]:
        rows = self._query(
            "SELECT id, name, spec, status, created, started, finished FROM tournaments "
            "ORDER BY created DESC"
        )
        return [self._tournament(r) for r in rows]

    def set_tournament_status(self, tid: str, status: TournamentStatus) -> None:
        status = TournamentStatus(status)  # a word not in the vocabulary fails here
        now = time.time()
        with self._tx() as c:
            c.execute("UPDATE tournaments SET status = ? WHERE id = ?", (status.value, tid))
            if status is TournamentStatus.RUNNING:
                c.execute(
                    "UPDATE tournaments SET started = COALESCE(started, ?) WHERE id = ?", (now, tid)
                )
            if status.over:
                c.execute("UPDATE tournaments SET finished = ? WHERE id = ?", (now, tid))

    # games ---------------------------------------------------------------------------
    def games(self, tid: str) -> list[GameRow]:
        return self._games("WHERE tournament_id = ? ORDER BY seq", (tid,))

    def _games(self, where: str, args: Sequence[Any], record: str = "record") -> list[GameRow]:
        rows = self._query(
            "SELECT id, tournament_id, seq, players, deal_id, status, voided, result, "
            f"{record}, stats FROM games {where}", args)
        return [
            GameRow(
                r[0], r[1], r[2], json.loads(r[3]), r[4], GameStatus(r[5]), r[6],
                json.loads(r[7]) if r[7] else None,
                json.loads(r[8]) if r[8] else None,
                json.loads(r[9]) if r[9] else None,
            )
            for r in rows
        ]

    def games_page(self, tid: str, after_seq: int, limit: int, where: GameFilter = GameFilter(),
                   records: bool = False) -> list[GameRow]:
        sql = "WHERE tournament_id = ? AND seq > ?"
        args: list[Any] = [tid, after_seq]
        if where.status is not None:
            sql += " AND status = ?"
            args.append(GameStatus(where.status).value)
        if where.bot is not None:
            sql += " AND EXISTS (SELECT 1 FROM json_each(players) WHERE value = ?)"
            args.append(where.bot)
        if where.termination is not None:
            sql += " AND json_extract(result, '$.termination') = ?"
            args.append(where.termination)
        if where.winner is not None:
            sql += (" AND EXISTS (SELECT 1 FROM json_each(result, '$.winners') w "
                    "WHERE json_extract(players, '$[' || w.value || ']') = ?)")
            args.append(where.winner)
        return self._games(sql + " ORDER BY seq LIMIT ?", [*args, limit],
                           "record" if records else "NULL")

    def finished_scores(self, tid: str, after_seq: int, limit: int) -> list[GameRow]:
        return self._games(
            "WHERE tournament_id = ? AND seq > ? AND status = 'finished' ORDER BY seq LIMIT ?",
            (tid, after_seq, limit),
            "json_object('hands', json(json_extract(record, '$.hands')), 'result', json(result))")

    def game(self, game_id: str) -> GameRow | None:
        rows = self._games("WHERE id = ? AND tournament_id IS NOT NULL", (game_id,))
        return rows[0] if rows else None

    def record_texts(self, tid: str, after_seq: int, limit: int) -> list[tuple[str, int, str]]:
        return [(i, q, r) for i, q, r in self._query(
            "SELECT id, seq, record FROM games WHERE tournament_id = ? AND seq > ? AND "
            "status = 'finished' AND record IS NOT NULL ORDER BY seq LIMIT ?",
            (tid, after_seq, limit))]

    def record_bytes(self, tid: str) -> int:
        (n,), = self._query("SELECT COALESCE(SUM(LENGTH(record)), 0) FROM games "
                            "WHERE tournament_id = ? AND status = 'finished'", (tid,))
        return int(n)

    def game_counts(self, tid: str) -> tuple[int, int]:
        # Two counts over the (tournament_id, status) index, without reading a row.
        with self._lock:
            (total,), = self._db.execute(
                "SELECT COUNT(*) FROM games WHERE tournament_id = ?", (tid,))
            (done,), = self._db.execute(
                "SELECT COUNT(*) FROM games WHERE tournament_id = ? AND status = 'finished'",
                (tid,))
        return int(total), int(done)

    def mark_running(self, game_id: str) -> None:
        with self._tx() as c:
            # A finished game stays finished (its result is never overwritten).
            c.execute(
                "UPDATE games SET status = 'running', started = ? "
                "WHERE id = ? AND status != 'finished'",
                (time.time(), game_id),
            )

    def finish_game(self, row: GameRow) -> None:
        with self._tx() as c:
            cur = c.execute(
                "UPDATE games SET status = 'finished', result = ?, record = ?, stats = ?, "
                "finished = ? WHERE id = ? AND status != 'finished'",
                (json.dumps(row.result), json.dumps(row.record), json.dumps(row.stats),
                 time.time(), row.id),
            )
            if cur.rowcount == 0 and row.tournament_id is None:
                c.execute(
                    "INSERT OR IGNORE INTO games (id, tournament_id, seq, players, deal_id, status,"
                    " result, record, stats, finished) VALUES (?, NULL, 0, ?, ?, 'finished', ?, ?,"
                    " ?, ?)",
                    (row.id, json.dumps(row.players), row.deal_id, json.dumps(row.result),
                     json.dumps(row.record), json.dumps(row.stats), time.time()),
                )

    def prune_games(self, keep: int, older_than: float) -> int:
        with self._tx() as c:
            cur = c.execute(
                "DELETE FROM games WHERE tournament_id IS NULL AND (finished < ? OR id IN ("
                "SELECT id FROM games WHERE tournament_id IS NULL "
                "ORDER BY finished DESC, rowid DESC LIMIT -1 OFFSET ?))",
                (older_than, keep),
            )
            return cur.rowcount

    def void_running(self, tid: str) -> int:
        return self._void("tournament_id", tid)

    def void_game(self, game_id: str) -> None:
        self._void("id", game_id)

    def _void(self, column: str, value: str) -> int:
        """Set the running games whose ``column`` is ``value`` back to scheduled."""
        with self._tx() as c:
            cur = c.execute(
                "UPDATE games SET status = 'scheduled', voided = voided + 1, started = NULL "
                f"WHERE {column} = ? AND status = 'running'", (value,),
            )
            return cur.rowcount

    def close(self) -> None:
        with self._lock:
            self._db.close()
        self._release()
