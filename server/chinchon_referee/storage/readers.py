"""Read connections, one per thread: a read never waits for another thread's read.

An organizer's call that waits on a lock (until its statement's timeout), or reads a
large page, holds only its own thread's connection: the games' reads, from their own
threads (``host/pools.py``), go on beside it. Connections are made on a thread's first read
and closed with the store."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Generic, TypeVar

C = TypeVar("C")


class Readers(Generic[C]):
    def __init__(self, connect: Callable[[], C], close: Callable[[C], None]) -> None:
        self._connect = connect
        self._close = close
        self._local = threading.local()
        self._lock = threading.Lock()
        self._all: list[C] = []

    def get(self) -> C:
        """This thread's connection (made now if it has none)."""
        conn: C | None = getattr(self._local, "conn", None)
        if conn is None:
            conn = self.replace()
        return conn

    def replace(self) -> C:
        """A new connection for this thread (its old one broke, or it had none)."""
        old: C | None = getattr(self._local, "conn", None)
        conn = self._connect()
        with self._lock:
            if old is not None and old in self._all:
                self._all.remove(old)
            self._all.append(conn)
        self._local.conn = conn
        return conn

    def all(self) -> list[C]:
        with self._lock:
            return list(self._all)

    def close(self) -> None:
        with self._lock:
            conns, self._all = self._all, []
        for conn in conns:
            self._close(conn)
