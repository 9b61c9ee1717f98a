"""The SQLite file of :mod:`.storage`: created private (mode 0600), held by one server
at a time (an OS lock on ``<db>.lock``), and checked when opened (a damaged, foreign or
newer file is refused before anything is written)."""

from __future__ import annotations

import fcntl
import os
import sqlite3


class StoreError(Exception):
    """The database cannot be used (not a database, damaged, unreadable, of a newer
    version, or held by another server); the message says which file and why."""


def hold(path: str) -> int:
    """Take the exclusive lock of the database at ``path`` (``<path>.lock``, holding
    the holder's pid): the descriptor, or StoreError naming the holder."""
    lock = f"{path}.lock"
    try:
        fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o600)
    except OSError as e:
        raise StoreError(f"{path}: cannot create its lock file {lock}: {e.strerror}") from None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        holder = os.pread(fd, 32, 0).decode(errors="replace").strip() or "unknown"
        os.close(fd)
        raise StoreError(
            f"{path} is in use by another referee (pid {holder}); stop it first or use "
            "another database (two servers on one database would replay each other's games)"
        ) from None
    os.ftruncate(fd, 0)
    os.pwrite(fd, str(os.getpid()).encode(), 0)
    return fd


def create_private(path: str) -> None:
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


def open_checked(path: str, schema: str, version: str) -> sqlite3.Connection:
    """Connect, check the file is a sound database of this program (``version`` of its
    schema), create the ``schema``."""
    create_private(path)
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
        if "meta" in tables:
            found = db.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
            if found is not None and found[0] != version:
                raise StoreError(f"{path}: database schema version {found[0]}, this referee "
                                 f"reads version {version}; use a matching referee")
        elif tables:
            raise StoreError(f"{path}: not a referee database (it has tables "
                             f"{', '.join(sorted(tables)[:5])} and no meta table)")
        db.execute("PRAGMA journal_mode=WAL")
        db.execute("PRAGMA synchronous=FULL")
        db.executescript(schema)
        # Counting a tournament's games (at every event) reads this index, not the rows.
        db.execute("CREATE INDEX IF NOT EXISTS games_by_status ON games (tournament_id, status)")
        db.execute("INSERT OR IGNORE INTO meta (key, value) VALUES ('schema_version', ?)",
                   (version,))
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
