"""The ``Store`` in SQL that SQLite and PostgreSQL both speak: every query of the referee,
written once. A backend gives the connection (``_tx``, ``_query``), the schema and the
checks at opening; its placeholders are ``?`` here (PostgreSQL's backend translates).

Game rows move ``scheduled -> running -> finished``; on start-up ``running`` rows of a
tournament are games that were in flight when the referee died: they are voided (set
back to ``scheduled``, counted in ``voided``) and played again, from a new deal (attempt_deal). A
finished game is never written again.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import secrets
import time
from abc import abstractmethod
from collections.abc import Iterable, Sequence
from typing import Any, Protocol

from ..logs import get_logger
from ..vocabulary import GameStatus, TournamentStatus
from .ladders import LadderRows
from .rows import (
    ANY_GAME,
    GameFilter,
    GameRow,
    ProcessRow,
    Store,
    StoreError,
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
from .sql_copy import CopyRows

#: The columns of a game row without its record, and with it.
_LIGHT = ("id, tournament_id, seq, players, deal_id, status, voided, result, stats, hands, "
          "finished")
_FULL = _LIGHT + ", record, record_z"

__all__ = ["KEYS", "TABLES", "SqlStore", "schema_sql"]

#: Damaged game rows remembered (to name them in exports and standings).
DAMAGED_KEPT = 1000
_STATUSES = {s.value for s in GameStatus}
log = get_logger("store")

#: Games read at once when a tournament's schedule is read.
SCHEDULE_PAGE = 2000
#: Game rows written per transaction when a tournament is created: the store's lock
#: (which every call of the event loop takes) is never held for long.
CREATE_CHUNK = 2000
#: The same, by a store that writes beside another process's games (:attr:`SqlStore.
#: yield_writes`): a transaction of a few milliseconds.
YIELDING_CHUNK = 250
#: The least pause (seconds) such a store leaves the write lock free after each chunk:
#: longer than the first retries of a writer waiting for it (SQLite's busy handler
#: tries again after 1, 2, 5 and 10 ms), so that the waiting writer gets it.
YIELD_GAP = 0.012


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


class SqlStore(CopyRows, LadderRows, Store):
    #: The database's clock, in seconds since the epoch, as SQL (leases and heartbeats
    #: are judged by it: the hosts' clocks may disagree).
    NOW = "((julianday('now') - 2440587.5) * 86400.0)"
    #: Whether a large write (a tournament's schedule) leaves the write lock free most
    #: of the time: set by a process that writes beside another's games (the organizer's
    #: worker). SQLite has one write lock and no queue for it: written back to back, the
    #: chunks of an 80,000-game schedule keep a referee's game writes (a game's start,
    #: its end) waiting for seconds, and its games with them.
    yield_writes = False

    @abstractmethod
    def _tx(self) -> contextlib.AbstractContextManager[Tx]:
        """A transaction: committed when the block ends, rolled back if it raises."""

    @abstractmethod
    def snapshot(self) -> contextlib.AbstractContextManager[None]:
        """A block whose reads, in this thread, all see one moment of the database (a
        page read in several queries agrees with itself while games are written)."""

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
        size = YIELDING_CHUNK if self.yield_writes else CREATE_CHUNK
        try:
            while chunk := list(itertools.islice(it, size)):
                values = [(gm.id, row.id, gm.seq, json.dumps(gm.players), gm.deal_id)
                          for gm in chunk]  # made before the lock is taken
                began = time.monotonic()
                with self._tx() as c:
                    c.executemany(
                        "INSERT INTO games (id, tournament_id, seq, players, deal_id, status) "
                        "VALUES (?, ?, ?, ?, ?, 'scheduled')", values)
                if self.yield_writes:
                    # The lock free at least two thirds of the time, and long enough.
                    time.sleep(max(YIELD_GAP, 2 * (time.monotonic() - began)))
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

    def add_games(self, tid: str, games: Sequence[GameRow]) -> int:
        added = 0
        for i in range(0, len(games), CREATE_CHUNK):
            with self._tx() as c:
                for gm in games[i:i + CREATE_CHUNK]:
                    added += c.execute(
                        "INSERT INTO games (id, tournament_id, seq, players, deal_id, status) "
                        "VALUES (?, ?, ?, ?, ?, 'scheduled') ON CONFLICT DO NOTHING",
                        (gm.id, tid, gm.seq, json.dumps(gm.players), gm.deal_id)).rowcount
        return added

    def _tournament(self, r: Sequence[Any]) -> TournamentRow:
        try:
            spec = json.loads(r[2])
            if not isinstance(spec, dict):
                raise ValueError("not a JSON object")
            return TournamentRow(r[0], r[1], spec, TournamentStatus(r[3]), r[4], r[5], r[6])
        except ValueError as e:
            raise StoreError(f"{self.where}: tournament {r[0]}: its stored row is damaged "
                             f"({e}); repair or delete it") from None

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

    def set_tournament_status(self, tid: str, status: TournamentStatus,
                              notify: str | None = None) -> bool:
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
            if changed and notify is not None:
                self._notify(c, notify)
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
            try:
                record = record_of(r[12] if r[12] is not None else r[11]) if records else None
                out.append(GameRow(
                    r[0], r[1], r[2], json.loads(r[3]), r[4], GameStatus(r[5]), r[6],
                    result_of(r[7]), record, json.loads(r[8]) if r[8] else None,
                    hands_of(r[9], record), r[10],
                ))
            except Exception as e:  # a damaged row: left out, named, the others read
                self._damaged_row(str(r[0]), r[1], e)
        return out

    def _damaged_row(self, game_id: str, tid: str | None, e: BaseException) -> None:
        """A game row that cannot be read (a result that is not JSON, a bogus status, a
        record that does not inflate): logged once, remembered (bounded), skipped."""
        damaged = self.__dict__.setdefault("_damaged", {})
        if game_id in damaged:
            return
        why = f"{type(e).__name__}: {e}"[:300]
        log.error("damaged_row", game_id=game_id, tournament=tid, error=why,
                  note="the game is left out of standings, pages and exports until its row "
                  "is repaired")
        if len(damaged) < DAMAGED_KEPT:
            damaged[game_id] = (tid, why)

    def damaged_games(self, tid: str) -> dict[str, str]:
        return {g: why for g, (t, why) in dict(self.__dict__.get("_damaged", {})).items()
                if t == tid}

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
            if status in _STATUSES:  # a bogus status is a damaged row (named when read)
                counts[GameStatus(status)] = int(n)
        return counts

    def record_texts(self, tid: str, after_seq: int, limit: int) -> list[tuple[str, int, str]]:
        rows = self._query(
            "SELECT id, seq, record, record_z FROM games WHERE tournament_id = ? AND seq > ? "
            "AND status = 'finished' AND (record IS NOT NULL OR record_z IS NOT NULL) "
            "ORDER BY seq LIMIT ?", (tid, after_seq, limit))
        out = []
        for i, q, text, z in rows:
            try:
                t = record_text(z if z is not None else text)
            except Exception as e:  # a record that does not inflate: left out, named
                self._damaged_row(str(i), tid, e)
                continue
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
        self.begin_game(game_id)

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
        return self.begin_game(game_id, owner, lease, deal_id) is not None

    def begin_game(self, game_id: str, owner: str | None = None, lease: float = 0.0,
                   deal_id: str | None = None) -> int | None:
        now = time.time()
        if owner is None:
            # A finished game stays finished (its result is never overwritten).
            sql = ("UPDATE games SET status = 'running', started = ? "
                   "WHERE id = ? AND status != 'finished'")
            args: list[Any] = [now, game_id]
        else:
            # The lease is the database's clock's: every process judges it alike,
            # whatever its own clock says (hosts' clocks may disagree).
            sql = ("UPDATE games SET status = 'running', started = ?, owner = ?, "
                   f"lease_until = {self.NOW} + ? WHERE id = ? AND status = 'scheduled'")
            args = [now, owner, lease, game_id]
        with self._tx() as c:
            if owner is not None and deal_id is not None:
                self._lock_deal(c, deal_id)
                sql += (" AND NOT EXISTS (SELECT 1 FROM games t WHERE t.deal_id = ? "
                        "AND t.status = 'running')")
                args.append(deal_id)
            rows = c.execute(sql + " RETURNING voided", args).fetchall()
        return int(rows[0][0]) if rows else None

    def still_scheduled(self, game_ids: Sequence[str]) -> set[str]:
        """Which of ``game_ids`` are scheduled still (not taken by a process, nor over)."""
        if not game_ids:
            return set()
        rows = self._query(f"SELECT id FROM games WHERE status = 'scheduled' AND id IN "
                           f"({', '.join('?' for _ in game_ids)})", tuple(game_ids))
        return {str(r[0]) for r in rows}

    def renew_leases(self, owner: str, lease: float) -> int:
        """Extend the leases of every game ``owner`` is playing, of tournaments and of
        ladders; how many."""
        with self._tx() as c:
            return sum(c.execute(
                f"UPDATE {table} SET lease_until = {self.NOW} + ? WHERE owner = ? AND "
                "status = 'running'", (lease, owner)).rowcount
                for table in ("games", "ladder_games"))

    def void_expired(self, grace: float = 0.0) -> int:
        """Set back to scheduled (counted in ``voided``) the running games whose lease ran
        out: their process died or lost the database. They are played again, from the
        a new deal, by whichever process claims them next."""
        with self._tx() as c:
            return c.execute(
                "UPDATE games SET status = 'scheduled', voided = voided + 1, started = NULL, "
                "owner = NULL, lease_until = NULL "
                f"WHERE status = 'running' AND lease_until < {self.NOW} - ?", (grace,)).rowcount

    def _notify(self, c: Tx, payload: str) -> None:
        """Tell the processes sharing the database ``payload`` when this transaction
        commits (PostgreSQL's NOTIFY); nothing to tell in SQLite (one process)."""

    def finish_game(self, row: GameRow, owner: str | None = None,
                    notify: str | None = None) -> bool:
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
            if done and notify is not None:
                self._notify(c, notify)  # delivered exactly when the result is committed
            return done

    # processes sharing the database ---------------------------------------------------
    def db_clock(self) -> float:
        (now,), = self._query(f"SELECT {self.NOW}")
        return float(now)

    def heartbeat(self, row: ProcessRow) -> None:
        with self._tx() as c:
            c.execute("DELETE FROM processes WHERE owner = ?", (row.owner,))
            c.execute("INSERT INTO processes (owner, address, http, bots, started, seen) "
                      f"VALUES (?, ?, ?, ?, ?, {self.NOW})",
                      (row.owner, row.address, row.http, json.dumps(row.bots, sort_keys=True),
                       row.started))

    def processes(self, within: float) -> list[ProcessRow]:
        rows = self._query("SELECT owner, address, http, bots, started, seen FROM processes "
                           f"WHERE seen > {self.NOW} - ? ORDER BY started", (within,))
        return [ProcessRow(o, a, h, {k: (int(v[0]), int(v[1]), int(v[2]), int(v[3]))
                                     for k, v in json.loads(b).items()}, s, n)
                for o, a, h, b, s, n in rows]

    def forget_processes(self, owner: str | None, older_than: float | None) -> int:
        with self._tx() as c:
            if older_than is None:
                return c.execute("DELETE FROM processes WHERE owner = ?", (owner,)).rowcount
            return c.execute(f"DELETE FROM processes WHERE owner = ? OR seen < {self.NOW} - ?",
                             (owner, older_than)).rowcount

    def game_states(self, ids: Sequence[str]) -> dict[str, tuple[GameStatus, str | None]]:
        """The status and tournament of each game of ``ids`` found (500 per query)."""
        out: dict[str, tuple[GameStatus, str | None]] = {}
        ids = list(ids)
        for i in range(0, len(ids), 500):
            part = ids[i:i + 500]
            for gid, status, tid in self._query(
                    f"SELECT id, status, tournament_id FROM games WHERE id IN "
                    f"({', '.join('?' * len(part))})", part):
                if status in _STATUSES:
                    out[str(gid)] = (GameStatus(status), None if tid is None else str(tid))
        return out

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
