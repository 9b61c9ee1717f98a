"""The PostgreSQL backend (``--db postgresql://…``), through psycopg 3.

The same schema and queries as SQLite (``sql.py``). A server opens its database with
``exclusive=True``: a session advisory lock (released by PostgreSQL when the server's
connection ends, even at ``kill -9``) keeps a second server off the same database.
``shared=True`` instead (``serve --shared``): the same lock, shared, so that several
referee processes use the database together and no exclusive one joins them. The schema
is created, or checked against :data:`~.rows.SCHEMA_VERSION`, under a transaction-level
advisory lock, so that two servers starting at once do not race.

A connection that breaks (the server restarted, the network dropped) is opened again
at the next call, and its lock taken again; the call that found it broken raises
:class:`~.rows.StoreUnavailable`, and so do calls while the server cannot be reached.
"""

from __future__ import annotations

import contextlib
import os
import re
import threading
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import psycopg
import psycopg.errors

from .bus import CHANNEL
from .readers import Readers
from .rows import (
    SCHEMA_VERSION,
    StoreError,
    StoreFull,
    StoreHeld,
    StoreUnavailable,
    upgrade_steps,
)
from .sql import Cursor, SqlStore, Tx, schema_sql

#: How this backend spells what the schema upgrades need (rows.UPGRADES).
PG_DIALECT = {
    "real": "DOUBLE PRECISION", "blob": "BYTEA",
    "termination": "(result::json ->> 'termination')",
    "winners": "(SELECT COALESCE(json_agg(games.players::json -> w::int), '[]'::json)::text "
               "FROM json_array_elements_text(games.result::json -> 'winners') w)",
}

SCHEMA = schema_sql(PG_DIALECT)
#: How long a statement may wait on a lock, and run in all (milliseconds).
LOCK_TIMEOUT_MS = 5_000
STATEMENT_TIMEOUT_MS = 60_000
#: The advisory lock keys: one server per database; one schema set-up at a time.
SERVER_LOCK = 0x63686E31  # "chn1"
SCHEMA_LOCK = 0x63686E32


def _application() -> str:
    """This process's name in pg_stat_activity (shown by a refusal: who holds it)."""
    return f"chinchon-referee pid {os.getpid()}"


def redact(url: str) -> str:
    """``url`` without its password, for messages and logs."""
    return re.sub(r"^(postgres(?:ql)?://[^:/@]*):[^@]*@", r"\1:***@", url)


_PG_SQL: dict[str, str] = {}


def _pg(sql: str) -> str:
    """The query with PostgreSQL's placeholders (the queries hold no other ``?``/``%``)."""
    out = _PG_SQL.get(sql)
    if out is None:
        out = _PG_SQL[sql] = sql.replace("?", "%s")
    return out


class _PgTx:
    def __init__(self, conn: psycopg.Connection[Any]) -> None:
        self._conn = conn

    def execute(self, sql: str, args: Sequence[Any] = (), /) -> Cursor:
        return self._conn.execute(_pg(sql), tuple(args))

    def executemany(self, sql: str, rows: Iterable[Sequence[Any]], /) -> None:
        with self._conn.cursor() as cur:
            cur.executemany(_pg(sql), [tuple(r) for r in rows])


class PostgresStore(SqlStore):
    NOW = "EXTRACT(EPOCH FROM clock_timestamp())::double precision"

    def __init__(self, url: str, exclusive: bool = False, read_only: bool = False,
                 shared: bool = False) -> None:
        """Connect to the database at ``url`` and check (or create) its schema;
        StoreError if it cannot be used. ``exclusive``: hold it for this process's life
        (a server): StoreError naming the holder if another server holds it.
        ``read_only``: every transaction of this store is read-only (the web view), and
        nothing is created or upgraded."""
        self.url = self.target = url
        self.where = redact(url)
        self._lock = threading.Lock()
        self._snap = threading.local()  # the connection of this thread's snapshot
        self._held = False
        self._read_only = read_only
        self._shared = shared
        self._conn = self._connect()
        try:
            if read_only:
                self._check_version()
            else:
                self._check_schema()
            if exclusive or shared:
                self._hold()
            if exclusive:
                self._drop_orphans()
            # Reads have connections of their own, one per thread (readers.py): they
            # never wait behind a write, nor behind another thread's read.
            self._readers: Readers[psycopg.Connection[Any]] = Readers(
                self._connect_again, lambda c: c.close())
        except BaseException:
            self._conn.close()
            raise

    def _connect(self) -> psycopg.Connection[Any]:
        # No statement waits on a lock for long (an organizer's call behind a table
        # lock, a game's write behind a stuck transaction): it fails, and is retried or
        # answered UNAVAILABLE.
        options = f"-c lock_timeout={LOCK_TIMEOUT_MS} -c statement_timeout={STATEMENT_TIMEOUT_MS}"
        if self._read_only:
            options += " -c default_transaction_read_only=on"
        try:
            return psycopg.connect(self.url, autocommit=True, connect_timeout=10,
                                   application_name=_application(),
                                   options=options)
        except psycopg.Error as e:
            raise StoreError(f"{self.where}: cannot connect: {_first_line(e)}") from None

    def _check_schema(self) -> None:
        try:
            with self._conn.transaction():
                self._conn.execute("SELECT pg_advisory_xact_lock(%s)", (SCHEMA_LOCK,))
                tables = {r[0] for r in self._conn.execute(
                    "SELECT table_name FROM information_schema.tables "
                    "WHERE table_schema = current_schema()")}
                if "meta" in tables:
                    found = self._conn.execute(
                        "SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
                    if found is not None:
                        for step in upgrade_steps(self.where, found[0], PG_DIALECT, tables):
                            self._conn.execute(step)
                elif tables:
                    raise StoreError(
                        f"{self.where}: not a referee database (it has tables "
                        f"{', '.join(sorted(tables)[:5])} and no meta table); give the "
                        "referee a database of its own")
                for statement in filter(str.strip, SCHEMA.split(";")):
                    self._conn.execute(statement)
                self._conn.execute(
                    "INSERT INTO meta (key, value) VALUES ('schema_version', %s) "
                    "ON CONFLICT DO NOTHING", (SCHEMA_VERSION,))
        except psycopg.Error as e:
            raise StoreError(f"{self.where}: cannot use the database: {_first_line(e)}") from None

    def _check_version(self) -> None:
        try:
            found = self._conn.execute(
                "SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
        except psycopg.Error as e:
            raise StoreError(f"{self.where}: not a readable referee database: "
                             f"{_first_line(e)}") from None
        if found is None or found[0] != SCHEMA_VERSION:
            raise StoreError(f"{self.where}: schema version {found[0] if found else 'unknown'}, "
                             f"this referee reads {SCHEMA_VERSION}: open it with `chinchon "
                             "serve` once (it is upgraded then)")

    def _hold(self) -> None:
        take = "pg_try_advisory_lock_shared" if self._shared else "pg_try_advisory_lock"
        (got,), = self._conn.execute(f"SELECT {take}(%s)",
                                     (SERVER_LOCK,)).fetchall()
        if got:
            self._held = True
            return
        holder = self._conn.execute(
            "SELECT a.application_name, a.client_addr FROM pg_locks l "
            "JOIN pg_stat_activity a ON a.pid = l.pid "
            "WHERE l.locktype = 'advisory' AND l.objid = %s AND l.granted "
            "AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())",
            (SERVER_LOCK,)).fetchone()
        who = (f"{holder[0] or 'unknown'}" + (f" at {holder[1]}" if holder and holder[1] else "")
               if holder else "unknown")
        if self._shared:
            raise StoreError(
                f"{self.where} is in use by a referee that holds it alone ({who}); stop it "
                "first: processes that share a database all run `chinchon serve --shared`")
        raise StoreHeld(
            f"{self.where} is in use by another referee ({who}); stop it first or use "
            "another database (two servers on one database would replay each other's games; "
            "several processes can share it with `chinchon serve --shared`)",
            by_this_process=holder is not None and holder[0] == _application())

    def _notify(self, c: Tx, payload: str) -> None:
        c.execute("SELECT pg_notify(?, ?)", (CHANNEL, payload))

    def _lock_deal(self, c: Tx, deal_id: str) -> None:
        c.execute("SELECT pg_advisory_xact_lock(hashtext(?))", (deal_id,))

    def _writer(self) -> psycopg.Connection[Any]:
        """The write connection, opened again (its lock taken again) if it broke."""
        if self._conn.broken or self._conn.closed:
            self._conn = self._connect_again()
            if self._held:
                self._held = False
                self._hold()
        return self._conn

    def _connect_again(self) -> psycopg.Connection[Any]:
        try:
            return self._connect()
        except StoreError as e:
            raise StoreUnavailable(str(e)) from None

    @contextmanager
    def _tx(self) -> Iterator[Tx]:
        with self._lock:
            try:
                conn = self._writer()
                with conn.transaction():
                    yield _PgTx(conn)
            except (psycopg.OperationalError, psycopg.InterfaceError) as e:
                raise _unavailable(self.where, e) from None

    @contextmanager
    def snapshot(self) -> Iterator[None]:
        if getattr(self._snap, "conn", None) is not None:  # nested: the outer block's moment
            yield
            return
        reader = self._readers.get()
        try:
            if reader.broken or reader.closed:
                reader = self._readers.replace()
            reader.execute("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")
        except (psycopg.OperationalError, psycopg.InterfaceError) as e:
            raise _unavailable(self.where, e) from None
        self._snap.conn = reader
        try:
            yield
        finally:
            self._snap.conn = None
            with contextlib.suppress(psycopg.Error):
                reader.execute("COMMIT")

    def _query(self, sql: str, args: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        held: psycopg.Connection[Any] | None = getattr(self._snap, "conn", None)
        if held is not None:  # inside snapshot(): its connection, not tried again
            try:
                return list(held.execute(_pg(sql), tuple(args)).fetchall())
            except (psycopg.OperationalError, psycopg.InterfaceError) as e:
                raise _unavailable(self.where, e) from None
        for attempt in (1, 2):  # a read is tried again once on a new connection
            reader = self._readers.get()
            try:
                if reader.broken or reader.closed:
                    reader = self._readers.replace()
                return list(reader.execute(_pg(sql), tuple(args)).fetchall())
            except (psycopg.OperationalError, psycopg.InterfaceError) as e:
                if attempt == 2 or not (reader.broken or reader.closed):
                    raise _unavailable(self.where, e) from None
        raise AssertionError("unreachable")

    def close(self) -> None:
        self._readers.close()
        with self._lock:
            if self._held:
                # Unlocked now, not when the server notices the session ended: a server
                # started right after this one ends must find the database free.
                free = "pg_advisory_unlock_shared" if self._shared else "pg_advisory_unlock"
                with contextlib.suppress(psycopg.Error):
                    self._conn.execute(f"SELECT {free}(%s)",
                                       (SERVER_LOCK,))
            self._conn.close()


def _unavailable(where: str, e: psycopg.Error) -> StoreUnavailable:
    """A PostgreSQL error of the moment, said plainly: a full disk (SQLSTATE class 53,
    disk_full 53100) is :class:`StoreFull`."""
    if isinstance(e, psycopg.errors.DiskFull) or (e.sqlstate or "").startswith("531"):
        return StoreFull(f"{where}: the database server's disk is full ({_first_line(e)})")
    if isinstance(e, psycopg.errors.LockNotAvailable):
        return StoreUnavailable(f"{where}: a lock was held past {LOCK_TIMEOUT_MS / 1000:g} s "
                                f"({_first_line(e)})")
    return StoreUnavailable(f"{where}: {_first_line(e)}")


def _first_line(e: BaseException) -> str:
    return (str(e).strip().splitlines() or [type(e).__name__])[0]
