"""The SQLite file of :mod:`.storage`: created private (mode 0600), and held by one
server at a time (an OS lock on ``<db>.lock``)."""

from __future__ import annotations

import fcntl
import os


class DbFileError(Exception):
    """The file cannot be created or is held by another process (the message says why)."""


def hold(path: str) -> int:
    """Take the exclusive lock of the database at ``path`` (``<path>.lock``, holding
    the holder's pid): the descriptor, or DbFileError naming the holder."""
    lock = f"{path}.lock"
    try:
        fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o600)
    except OSError as e:
        raise DbFileError(f"{path}: cannot create its lock file {lock}: {e.strerror}") from None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        holder = os.pread(fd, 32, 0).decode(errors="replace").strip() or "unknown"
        os.close(fd)
        raise DbFileError(
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
        raise DbFileError(f"{path}: cannot create the database: {e.strerror}") from None
