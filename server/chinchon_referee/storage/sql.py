"""The ``Store`` in SQL that SQLite and PostgreSQL both speak: every query of the referee,
written once. A backend gives the connection (``_tx``, ``_query``), the schema and the
checks at opening; its placeholders are ``?`` here (PostgreSQL's backend translates).

Game rows move ``scheduled -> running -> finished``; on start-up ``running`` rows of a
tournament are games that were in flight when the referee died: they are voided (set
back to ``scheduled``, counted in ``voided``) and replayed from the same deal. A
finished game is never written again.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import secrets
import time
from abc import abstractmethod
from collections.abc import Iterable, Iterator, Sequence
from typing import Any, Protocol

from ..vocabulary import GameStatus, TournamentStatus
from .rows import (
    ANY_GAME,
    GameFilter,
    GameRow,
    ProcessRow,
    Store,
    TournamentRow,
    hands_json,
    hands_of,
    like_json_string,
    pack_record,
    record_of,
    record_text,
    result_json,
    result_of,
    winners_json,
)
from .schema import KEYS, TABLES, schema_sql

#: The columns of a game row without its record, and with it.
_LIGHT = ("id, tournament_id, seq, players, deal_id, status, voided, result, stats, hands, "
          "finished")
_FULL = _LIGHT + ", record, record_z"

__all__ = ["KEYS", "TABLES", "SqlStore", "schema_sql"]

#: Games read at once when a tournament's schedule is read.
SCHEDULE_PAGE = 2000
#: Game rows written per transaction when a tournament is created: the store's lock
#: (which every call of the event loop takes) is never held for long.
CREATE_CHUNK = 2000

def _termination(row: GameRow) -> str | None:
    return None if row.result is None else row.result.termination.value


class Cursor(Protocol):
    @property
    def rowcount(self) -> int: ...

    def fetchall(self) -> list[Any]: ...


class Tx(Protocol):
    """One transaction's connection, as both drivers offer it."""

    def execute(self, sql: str, args: Sequence[Any] = (), /) -> Cursor: ...

    def executemany(self, sql: str, rows: Iterable[Sequence[Any]], /) -> object: ...


class SqlStore(Store):
    @abstractmethod
    def _tx(self) -> contextlib.AbstractContextManager[Tx]:
        """A transaction: committed when the block ends, rolled back if it raises."""

    @abstractmethod
    def _query(self, sql: str, args: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        """The rows of one read."""

    def _drop_orphans(self) -> None:
        """Remove the games of a tournament whose creation was interrupted (its row is
        written last): nobody can see them. Done by a server when it opens the store."""
        with self._tx() as c:
            c.execute("DELETE FROM games WHERE tournament_id IS NOT NULL AND "
                      "tournament_id NOT IN (SELECT id FROM tournaments)")

    def secret(self, key: str) -> bytes:
        with self._tx() as c:
            c.execute("INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT DO NOTHING",
                      (key, secrets.token_hex(32)))
            (value,), = c.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchall()
        return bytes.fromhex(value)

    # bots ----------------------------------------------------------------------------
    def upsert_bot(self, name: str, token_digest: str) -> None:
        with self._tx() as c:
            c.execute(
                "INSERT INTO bots (name, token_digest, created) VALUES (?, ?, ?) "
                "ON CONFLICT (name) DO UPDATE SET token_digest = excluded.token_digest",
                (name, token_digest, time.time()),
            )

    def bots(self) -> list[tuple[str, str]]:
        return [(n, d) for n, d in self._query("SELECT name, token_digest FROM bots ORDER BY name")]

    def bot_created(self) -> dict[str, float]:
        return {n: c for n, c in self._query("SELECT name, created FROM bots ORDER BY name")}

    def add_bot(self, name: str, token_digest: str) -> bool:
        with self._tx() as c:
            return c.execute("INSERT INTO bots (name, token_digest, created) VALUES (?, ?, ?) "
                             "ON CONFLICT DO NOTHING",
                             (name, token_digest, time.time())).rowcount > 0

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
            with contextlib.suppress(Exception), self._tx() as c:
                c.execute("DELETE FROM games WHERE tournament_id = ? AND tournament_id NOT IN "
                          "(SELECT id FROM tournaments)", (row.id,))
            raise

    @staticmethod
    def _tournament(r: Sequence[Any]) -> TournamentRow:
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

    def set_tournament_status(self, tid: str, status: TournamentStatus) -> bool:
        status = TournamentStatus(status)  # a word not in the vocabulary fails here
        now = time.time()
        with self._tx() as c:
            changed = c.execute("UPDATE tournaments SET status = ? WHERE id = ? AND status != ?",
                                (status.value, tid, status.value)).rowcount == 1
            if status is TournamentStatus.RUNNING:
                c.execute(
                    "UPDATE tournaments SET started = COALESCE(started, ?) WHERE id = ?", (now, tid)
                )
            if status.over and changed:
                c.execute("UPDATE tournaments SET finished = ? WHERE id = ?", (now, tid))
            return changed

    def set_tournament_spec(self, tid: str, spec: dict[str, Any]) -> None:
        with self._tx() as c:
            c.execute("UPDATE tournaments SET spec = ? WHERE id = ?", (json.dumps(spec), tid))

    # games ---------------------------------------------------------------------------
    def games(self, tid: str) -> list[GameRow]:
        return self._games("WHERE tournament_id = ? ORDER BY seq", (tid,), records=True)

    def _games(self, where: str, args: Sequence[Any], records: bool) -> list[GameRow]:
        rows = self._query(f"SELECT {_FULL if records else _LIGHT} FROM games {where}", args)
        out = []
        for r in rows:
            record = record_of(r[12] if r[12] is not None else r[11]) if records else None
            out.append(GameRow(
                r[0], r[1], r[2], json.loads(r[3]), r[4], GameStatus(r[5]), r[6],
                result_of(r[7]), record, json.loads(r[8]) if r[8] else None,
                hands_of(r[9], record), r[10],
            ))
        return out

    def games_page(self, tid: str, after_seq: int, limit: int, where: GameFilter = ANY_GAME,
                   records: bool = False) -> list[GameRow]:
        sql = "WHERE tournament_id = ? AND seq > ?"
        args: list[Any] = [tid, after_seq]
        if where.status is not None:
            sql += " AND status = ?"
            args.append(GameStatus(where.status).value)
        if where.bot is not None:
            sql += " AND players LIKE ? ESCAPE '\\'"
            args.append(like_json_string(where.bot))
        if where.termination is not None:
            sql += " AND termination = ?"
            args.append(where.termination)
        if where.winner is not None:
            sql += " AND winners LIKE ? ESCAPE '\\'"
            args.append(like_json_string(where.winner))
        return self._games(sql + " ORDER BY seq LIMIT ?", [*args, limit], records)

    def schedule(self, tid: str, where: GameFilter = ANY_GAME) -> list[GameRow]:
        out: list[GameRow] = []
        after = -1
        while page := self.games_page(tid, after, SCHEDULE_PAGE, where):
            out += page
            after = page[-1].seq
        return out

    def finished_scores(self, tid: str, after_seq: int, limit: int) -> list[GameRow]:
        rows = self._games(
            "WHERE tournament_id = ? AND seq > ? AND status = 'finished' ORDER BY seq LIMIT ?",
            (tid, after_seq, limit), records=False)
        for row in rows:
            if row.hands is None:  # a game of schema 1: its hands are in its record
                full = self.game(row.id)
                row.hands = full.hands if full is not None else None
        return rows

    def game(self, game_id: str, practice: bool = False) -> GameRow | None:
        where = "WHERE id = ?" if practice else "WHERE id = ? AND tournament_id IS NOT NULL"
        rows = self._games(where, (game_id,), records=True)
        return rows[0] if rows else None

    def status_counts(self, tid: str) -> dict[GameStatus, int]:
        counts = dict.fromkeys(GameStatus, 0)
        for status, n in self._query("SELECT status, COUNT(*) FROM games WHERE tournament_id = ? "
                                     "GROUP BY status", (tid,)):
            counts[GameStatus(status)] = int(n)
        return counts

    def record_texts(self, tid: str, after_seq: int, limit: int) -> list[tuple[str, int, str]]:
        rows = self._query(
            "SELECT id, seq, record, record_z FROM games WHERE tournament_id = ? AND seq > ? "
            "AND status = 'finished' AND (record IS NOT NULL OR record_z IS NOT NULL) "
            "ORDER BY seq LIMIT ?", (tid, after_seq, limit))
        out = []
        for i, q, text, z in rows:
            t = record_text(z if z is not None else text)
            if t is not None:
                out.append((i, q, t))
        return out

    def record_bytes(self, tid: str) -> int:
        (n,), = self._query("SELECT COALESCE(SUM(COALESCE(record_size, LENGTH(record))), 0) "
                            "FROM games WHERE tournament_id = ? AND status = 'finished'", (tid,))
        return int(n)

    def game_counts(self, tid: str) -> tuple[int, int]:
        # Two counts over the (tournament_id, status) index, without reading a row.
        (total,), = self._query("SELECT COUNT(*) FROM games WHERE tournament_id = ?", (tid,))
        (done,), = self._query(
            "SELECT COUNT(*) FROM games WHERE tournament_id = ? AND status = 'finished'", (tid,))
        return int(total), int(done)

    def mark_running(self, game_id: str) -> None:
        with self._tx() as c:
            # A finished game stays finished (its result is never overwritten).
            c.execute(
                "UPDATE games SET status = 'running', started = ? "
                "WHERE id = ? AND status != 'finished'",
                (time.time(), game_id),
            )

    def _lock_deal(self, c: Tx, deal_id: str) -> None:
        """Serialize, until the transaction ends, the claims of games of one deal (SQLite
        writes one transaction at a time already)."""

    def claim_game(self, game_id: str, owner: str, lease: float, deal_id: str | None = None) -> bool:
        """Take the scheduled game ``game_id`` for ``owner`` (a referee process), with a
        lease of ``lease`` seconds: True for exactly one of several processes that try
        (the update of one row is atomic in both databases); False if it is not
        scheduled any more (another process took it, or it finished). ``deal_id``: also
        False while another game of that deal (a duplicate-deal twin) is running, on
        any process: a bot in both would see one game's hidden cards in the other."""
        now = time.time()
        sql = ("UPDATE games SET status = 'running', started = ?, owner = ?, lease_until = ? "
               "WHERE id = ? AND status = 'scheduled'")
        args: list[Any] = [now, owner, now + lease, game_id]
        with self._tx() as c:
            if deal_id is not None:
                self._lock_deal(c, deal_id)
                sql += (" AND NOT EXISTS (SELECT 1 FROM games t WHERE t.deal_id = ? "
                        "AND t.status = 'running')")
                args.append(deal_id)
            return c.execute(sql, args).rowcount == 1

    def still_scheduled(self, game_ids: Sequence[str]) -> set[str]:
        """Which of ``game_ids`` are scheduled still (not taken by a process, nor over)."""
        if not game_ids:
            return set()
        rows = self._query(f"SELECT id FROM games WHERE status = 'scheduled' AND id IN "
                           f"({', '.join('?' for _ in game_ids)})", tuple(game_ids))
        return {str(r[0]) for r in rows}

    def renew_leases(self, owner: str, lease: float) -> int:
        """Extend the leases of every game ``owner`` is playing; how many."""
        with self._tx() as c:
            return c.execute(
                "UPDATE games SET lease_until = ? WHERE owner = ? AND status = 'running'",
                (time.time() + lease, owner)).rowcount

    def void_expired(self, grace: float = 0.0) -> int:
        """Set back to scheduled (counted in ``voided``) the running games whose lease ran
        out: their process died or lost the database. They are played again, from the
        same deal, by whichever process claims them next."""
        with self._tx() as c:
            return c.execute(
                "UPDATE games SET status = 'scheduled', voided = voided + 1, started = NULL, "
                "owner = NULL, lease_until = NULL "
                "WHERE status = 'running' AND lease_until < ?", (time.time() - grace,)).rowcount

    def finish_game(self, row: GameRow, owner: str | None = None) -> bool:
        z, size = pack_record(row.record)  # before the transaction: it holds the lock
        sql = ("UPDATE games SET status = 'finished', result = ?, record_z = ?, "
               "record_size = ?, stats = ?, finished = ?, lease_until = NULL, termination = ?, "
               "winners = ?, hands = ? WHERE id = ? AND status != 'finished'")
        args: list[Any] = [result_json(row.result), z, size, json.dumps(row.stats), time.time(),
                           _termination(row), winners_json(row), hands_json(row), row.id]
        if owner is not None:
            sql += " AND status = 'running' AND owner = ?"
            args.append(owner)
        with self._tx() as c:
            cur = c.execute(sql, args)
            done = cur.rowcount == 1
            if not done and owner is None and row.tournament_id is None:
                done = c.execute(
                    "INSERT INTO games (id, tournament_id, seq, players, deal_id, status,"
                    " result, record_z, record_size, stats, finished, termination, winners,"
                    " hands) VALUES (?, NULL, 0, ?, ?, 'finished', ?, ?, ?, ?, ?, ?, ?, ?)"
                    " ON CONFLICT DO NOTHING",
                    (row.id, json.dumps(row.players), row.deal_id, result_json(row.result),
                     z, size, json.dumps(row.stats), time.time(), _termination(row),
                     winners_json(row), hands_json(row)),
                ).rowcount == 1
            return done

    # processes sharing the database ---------------------------------------------------
    def heartbeat(self, row: ProcessRow) -> None:
        with self._tx() as c:
            c.execute("DELETE FROM processes WHERE owner = ?", (row.owner,))
            c.execute("INSERT INTO processes (owner, address, http, bots, started, seen) "
                      "VALUES (?, ?, ?, ?, ?, ?)",
                      (row.owner, row.address, row.http, json.dumps(row.bots, sort_keys=True),
                       row.started, row.seen))

    def processes(self, seen_after: float) -> list[ProcessRow]:
        rows = self._query("SELECT owner, address, http, bots, started, seen FROM processes "
                           "WHERE seen > ? ORDER BY started", (seen_after,))
        return [ProcessRow(o, a, h, {k: (int(v[0]), int(v[1]), int(v[2]), int(v[3]))
                                     for k, v in json.loads(b).items()}, s, n)
                for o, a, h, b, s, n in rows]

    def forget_processes(self, owner: str | None, seen_before: float) -> int:
        with self._tx() as c:
            return c.execute("DELETE FROM processes WHERE owner = ? OR seen < ?",
                             (owner, seen_before)).rowcount

    def game_owner(self, game_id: str) -> str | None:
        rows = self._query("SELECT owner FROM games WHERE id = ? AND status = 'running'",
                           (game_id,))
        return str(rows[0][0]) if rows and rows[0][0] is not None else None

    def prune_games(self, keep: int, older_than: float) -> int:
        with self._tx() as c:
            cur = c.execute(
                "DELETE FROM games WHERE tournament_id IS NULL AND (finished < ? OR id NOT IN ("
                "SELECT id FROM games WHERE tournament_id IS NULL "
                "ORDER BY finished DESC, id DESC LIMIT ?))",
                (older_than, keep),
            )
            return cur.rowcount

    def void_running(self, tid: str) -> int:
        return self._void("tournament_id", tid)

    def void_game(self, game_id: str, owner: str | None = None) -> None:
        if owner is None:
            self._void("id", game_id)
            return
        with self._tx() as c:
            c.execute("UPDATE games SET status = 'scheduled', voided = voided + 1, "
                      "started = NULL, owner = NULL, lease_until = NULL "
                      "WHERE id = ? AND status = 'running' AND owner = ?", (game_id, owner))

    def void_owned(self, owner: str) -> int:
        return self._void("owner", owner)

    def _void(self, column: str, value: str) -> int:
        """Set the running games whose ``column`` is ``value`` back to scheduled."""
        with self._tx() as c:
            cur = c.execute(
                "UPDATE games SET status = 'scheduled', voided = voided + 1, started = NULL, "
                f"owner = NULL, lease_until = NULL WHERE {column} = ? AND status = 'running'",
                (value,),
            )
            return cur.rowcount

    # copies ----------------------------------------------------------------------------
    def table_rows(self, table: str, page: int = 500) -> Iterator[tuple[Any, ...]]:
        """Every row of ``table`` (one of :data:`TABLES`), columns as listed there, in
        key order, read in pages: a copy of a large database holds one page at a time."""
        cols, key = ", ".join(TABLES[table]), KEYS[table]
        last: Any = None
        while True:
            if last is None:
                rows = self._query(f"SELECT {cols} FROM {table} ORDER BY {key} LIMIT ?", (page,))
            else:
                rows = self._query(f"SELECT {cols} FROM {table} WHERE {key} > ? "
                                   f"ORDER BY {key} LIMIT ?", (last, page))
            yield from rows
            if len(rows) < page:
                return
            last = rows[-1][TABLES[table].index(key)]

    def rows_by_keys(self, table: str, keys: Sequence[Any]) -> dict[Any, tuple[Any, ...]]:
        """The rows of ``table`` whose key is one of ``keys``, by key."""
        if not keys:
            return {}
        cols, key = TABLES[table], KEYS[table]
        rows = self._query(f"SELECT {', '.join(cols)} FROM {table} WHERE {key} IN "
                           f"({', '.join('?' for _ in keys)})", tuple(keys))
        return {r[cols.index(key)]: tuple(r) for r in rows}

    def put_rows(self, table: str, rows: Iterable[Sequence[Any]]) -> None:
        """Write ``rows`` (columns as in :data:`TABLES`) into ``table``, in one
        transaction per page; a row whose key exists is replaced (``meta``) or refused."""
        cols = TABLES[table]
        keep = " ON CONFLICT (key) DO UPDATE SET value = excluded.value" if table == "meta" else ""
        sql = (f"INSERT INTO {table} ({', '.join(cols)}) VALUES "
               f"({', '.join('?' for _ in cols)}){keep}")
        it = iter(rows)
        while chunk := list(itertools.islice(it, CREATE_CHUNK)):
            with self._tx() as c:
                c.executemany(sql, chunk)
