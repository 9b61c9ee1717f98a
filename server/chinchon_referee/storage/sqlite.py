"""The SQLite backend: one file (WAL journal, synchronous=FULL: a committed game survives
``kill -9``), the embedded default.

A file that is not a database of this program, or is damaged, is refused with a
:class:`StoreError` before anything is written. A server opens its database with
``exclusive=True``: an OS lock on ``<db>.lock`` (released by the kernel when the
process dies, even by ``kill -9``) keeps a second server off the same database.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import sqlite3
import threading
import urllib.parse
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from .readers import Readers
from .rows import (
    SCHEMA_VERSION,
    StoreError,
    StoreFull,
    StoreHeld,
    StoreUnavailable,
    upgrade_steps,
)
from .sql import SqlStore, Tx, schema_sql

#: How this backend spells what the schema upgrades need (rows.UPGRADES).
SQLITE_DIALECT = {
    "real": "REAL", "blob": "BLOB",
    "termination": "json_extract(result, '$.termination')",
    "winners": "(SELECT json_group_array(json_extract(games.players, '$[' || w.value || ']')) "
               "FROM json_each(json_extract(games.result, '$.winners')) w)",
}

SCHEMA = schema_sql(SQLITE_DIALECT)


class SqliteStore(SqlStore):
    def __init__(self, path: str, exclusive: bool = False, read_only: bool = False) -> None:
        """Open (or create) the database at ``path``; StoreError if it cannot be used.
        ``exclusive``: hold it for this process's life (a server): StoreError naming the
        holder's pid if another process holds it. ``read_only``: open an existing
        database of this referee's schema for reading only (the web view): nothing is
        created, upgraded or written."""
        self.path = path
        self.where = self.target = path
        self._lock = threading.Lock()
        self._snap = threading.local()  # the connection of this thread's snapshot
        self._lockfile: int | None = None
        if exclusive:
            self._lockfile = _hold(path)
        #: The lock file's path (removed when the lock is released).
        self._lockpath = f"{path}.lock"
        try:
            self._db = _open_read_only(path) if read_only else _open(path)
        except BaseException:
            self._release()
            raise
        # Reads have connections of their own, one per thread (readers.py): in WAL mode
        # a read never waits for a write's commit (an fsync) in another thread, nor for
        # another thread's read.
        self._readers: Readers[sqlite3.Connection] | None = None
        if path != ":memory:" and not path.startswith("file:") and not read_only:
            self._readers = Readers(lambda: _reader(path), lambda c: c.close())
        if exclusive:
            self._drop_orphans()

    def _release(self) -> None:
        if self._lockfile is not None:
            # Removed while still held (a process that opened it meanwhile finds, once it
            # holds it, that the path names another file or none: _hold tries again),
            # then closing the descriptor releases the lock: nothing stays behind.
            with contextlib.suppress(OSError):
                if os.fstat(self._lockfile).st_ino == os.stat(self._lockpath).st_ino:
                    os.unlink(self._lockpath)
            os.close(self._lockfile)
            self._lockfile = None

    @contextmanager
    def _tx(self) -> Iterator[Tx]:
        with self._lock, self._mapped():
            self._db.execute("BEGIN IMMEDIATE")
            try:
                yield self._db
                self._db.execute("COMMIT")
            except BaseException:
                # A failed COMMIT (the disk is full) leaves the transaction open; an
                # error SQLite handles itself (SQLITE_FULL mid-statement) may have
                # rolled it back already.
                if self._db.in_transaction:
                    with contextlib.suppress(sqlite3.Error):
                        self._db.execute("ROLLBACK")
                raise

    @contextmanager
    def _mapped(self) -> Iterator[None]:
        """SQLite's errors of the moment as :class:`StoreUnavailable` (the same call
        works later): a full disk (:class:`StoreFull`), a lock held past the busy
        timeout, an I/O error."""
        try:
            yield
        except sqlite3.OperationalError as e:
            code = getattr(e, "sqlite_errorcode", None)
            base = code & 0xFF if isinstance(code, int) else None
            if base == sqlite3.SQLITE_FULL:
                raise StoreFull(f"{self.where}: the disk is full ({e})") from None
            if base in (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED):
                raise StoreUnavailable(f"{self.where}: the database is locked by another "
                                       f"connection ({e})") from None
            if base == sqlite3.SQLITE_IOERR:
                raise StoreUnavailable(f"{self.where}: {e}") from None
            raise

    @contextmanager
    def snapshot(self) -> Iterator[None]:
        held: sqlite3.Connection | None = getattr(self._snap, "conn", None)
        if held is not None:  # nested: the outer block's moment
            yield
            return
        with contextlib.ExitStack() as stack:
            if self._readers is None:  # one connection: held by this thread meanwhile
                stack.enter_context(self._lock)
                conn = self._db
            else:
                conn = self._readers.get()
            with self._mapped():
                conn.execute("BEGIN")
                conn.execute("SELECT 1 FROM meta LIMIT 1").fetchall()  # the moment starts
            self._snap.conn = conn
            try:
                yield
            finally:
                self._snap.conn = None
                with contextlib.suppress(sqlite3.Error):
                    conn.execute("COMMIT")

    def _query(self, sql: str, args: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        held: sqlite3.Connection | None = getattr(self._snap, "conn", None)
        if held is not None:
            with self._mapped():
                return list(held.execute(sql, args))
        if self._readers is None:
            with self._lock, self._mapped():
                return list(self._db.execute(sql, args))
        reader = self._readers.get()
        if self._trace is not None:
            reader.set_trace_callback(self._trace)
        with self._mapped():
            return list(reader.execute(sql, args))

    _trace: Callable[[str], object] | None = None

    def trace(self, callback: Callable[[str], object] | None) -> None:
        """Call ``callback`` with every SQL statement the store runs (None: stop)."""
        self._trace = callback
        for conn in [self._db, *(self._readers.all() if self._readers else [])]:
            conn.set_trace_callback(callback)

    def close(self) -> None:
        if self._readers is not None:
            self._readers.close()
        with self._lock:
            self._db.close()
        self._release()


def _reader(path: str) -> sqlite3.Connection:
    """A read connection to the database at ``path`` (for one thread)."""
    db = sqlite3.connect(path, check_same_thread=False, isolation_level=None)
    db.execute("PRAGMA busy_timeout=5000")
    db.execute("PRAGMA query_only=1")
    return db


def _hold(path: str) -> int:
    """Take the exclusive lock of the database at ``path`` (``<path>.lock``, holding
    the holder's pid): the descriptor, or StoreError naming the holder."""
    lock = f"{path}.lock"
    for _ in range(_LOCK_TRIES):
        try:
            fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o600)
        except OSError as e:
            raise StoreError(f"{path}: cannot create its lock file {lock}: {e.strerror}") from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            holder = os.pread(fd, 32, 0).decode(errors="replace").strip() or "unknown"
            os.close(fd)
            raise StoreHeld(
                f"{path} is in use by another referee (pid {holder}); stop it first or use "
                "another database (two servers on one database would replay each other's games)",
                by_this_process=holder == str(os.getpid())) from None
        if _still_named(fd, lock):
            break
        os.close(fd)  # its holder removed it as we opened it: a new one is made
    else:
        raise StoreError(f"{path}: its lock file {lock} keeps being removed")
    os.ftruncate(fd, 0)
    os.pwrite(fd, str(os.getpid()).encode(), 0)
    return fd


#: Attempts at taking a lock file that its holder removes as it is opened.
_LOCK_TRIES = 20


def _still_named(fd: int, path: str) -> bool:
    """The file ``fd`` is still the one named ``path`` (not removed by its last holder)."""
    try:
        return os.fstat(fd).st_ino == os.stat(path).st_ino
    except OSError:
        return False


def _create_private(path: str) -> None:
    """Create a new database file readable by its owner only (mode 0600; SQLite gives
    its -wal and -shm files the same mode). It holds the secrets every deal is drawn
    from (tournament seeds, the practice secret): a local user who reads it can compute
    every hand still to be dealt. An existing file keeps its mode."""
    if path == ":memory:" or path.startswith("file:") or os.path.exists(path):
        return
    try:
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
    except FileExistsError:
        pass  # made meanwhile by another process: it is as it is
    except OSError as e:
        raise StoreError(f"{path}: cannot create the database: {e.strerror}") from None


def _open_read_only(path: str) -> sqlite3.Connection:
    """A read-only connection to the existing database at ``path``, of this schema."""
    if not os.path.isfile(path):
        raise StoreError(f"{path}: no database there")
    uri = "file:" + urllib.parse.quote(os.path.abspath(path)) + "?mode=ro"
    try:
        db = sqlite3.connect(uri, uri=True, check_same_thread=False, isolation_level=None)
        db.execute("PRAGMA busy_timeout=5000")
        found = db.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
    except sqlite3.Error as e:
        raise StoreError(f"{path}: not a readable referee database ({e})") from None
    if found is None or found[0] != SCHEMA_VERSION:
        db.close()
        raise StoreError(f"{path}: schema version {found[0] if found else 'unknown'}, this "
                         f"referee reads {SCHEMA_VERSION}: open it with `chinchon serve` or "
                         "`tournament run` once (it is upgraded then)")
    return db


def _open(path: str) -> sqlite3.Connection:
    """Connect, check the file is a sound database of this program, create the schema."""
    _create_private(path)
    try:
        db = sqlite3.connect(path, check_same_thread=False, isolation_level=None)
    except sqlite3.Error as e:
        raise StoreError(f"{path}: cannot open the database: {e}") from None
    try:
        db.execute("PRAGMA busy_timeout=5000")
        # Every page is read: a file with damaged pages is refused here, not found out
        # in the middle of a tournament.
        problems = [r[0] for r in db.execute("PRAGMA quick_check")]
        if problems != ["ok"]:
            raise StoreError(f"{path}: the database is damaged ({'; '.join(problems[:3])}); "
                             "restore it from a copy or start a new one")
        tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        upgrade: list[str] = []
        if "meta" in tables:
            found = db.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
            if found is not None:
                upgrade = upgrade_steps(path, found[0], SQLITE_DIALECT, tables)
        elif tables:
            raise StoreError(f"{path}: not a referee database (it has tables "
                             f"{', '.join(sorted(tables)[:5])} and no meta table)")
        db.execute("PRAGMA journal_mode=WAL")
        db.execute("PRAGMA synchronous=FULL")
        if upgrade:
            db.execute("BEGIN IMMEDIATE")
            for step in upgrade:
                db.execute(step)
            db.execute("COMMIT")
        db.executescript(SCHEMA)
        db.execute("INSERT INTO meta (key, value) VALUES ('schema_version', ?) ON CONFLICT DO NOTHING",
                   (SCHEMA_VERSION,))
    except sqlite3.DatabaseError as e:
        db.close()
        if "malformed" in str(e):
            raise StoreError(f"{path}: the database is damaged ({e}); restore it from a "
                             "copy or start a new one") from None
        raise StoreError(f"{path}: not a usable SQLite database ({e})") from None
    except BaseException:
        db.close()
        raise
    return db
