"""Persistence: everything is written as it happens, so a killed referee loses nothing.

:class:`Store` (``rows.py``) is the interface the referee and the scheduler use;
``sql.py`` holds its queries, written once for both backends: :class:`SqliteStore`
(``sqlite.py``, one file, the default) and ``PostgresStore`` (``postgres.py``, a
``postgresql://`` URL; needs the ``postgres`` extra). :func:`open_store` picks one;
``copy.py`` copies a database into another (``chinchon db migrate``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from .rows import (
    ANY_GAME,
    SCHEMA_VERSION,
    GameFilter,
    GameRow,
    ProcessRow,
    Store,
    StoreError,
    StoreFull,
    StoreUnavailable,
    TournamentRow,
)
from .sql import SqlStore
from .sqlite import SqliteStore

if TYPE_CHECKING:
    from .bus import Bus


def is_url(target: str) -> bool:
    """``target`` names a PostgreSQL database rather than a SQLite file."""
    return target.startswith(("postgresql://", "postgres://"))


def open_store(target: str, exclusive: bool = False, read_only: bool = False,
               shared: bool = False) -> SqlStore:
    """The store at ``target``: a ``postgresql://`` URL or a SQLite file name.
    StoreError if it cannot be used (psycopg missing included). ``read_only``: an
    existing database, for reading only. ``shared``: a server that shares the database
    with other referee processes (PostgreSQL only)."""
    if not is_url(target):
        if shared:
            raise StoreError(f"{target}: several referee processes share a PostgreSQL "
                             "database (--db postgresql://...), not a SQLite file")
        return SqliteStore(target, exclusive=exclusive, read_only=read_only)
    try:
        from .postgres import PostgresStore
    except ImportError:
        raise StoreError(
            "PostgreSQL needs psycopg: pip install 'chinchon-referee[postgres]'") from None
    return PostgresStore(target, exclusive=exclusive, read_only=read_only, shared=shared)


def open_bus(url: str, on_message: Callable[[str], None],
             on_reconnect: Callable[[], None]) -> Bus:
    """The message bus of the processes sharing the PostgreSQL database at ``url``."""
    from .bus import Bus
    return Bus(url, on_message, on_reconnect)


__all__ = ["ANY_GAME", "SCHEMA_VERSION", "GameFilter", "GameRow", "ProcessRow", "SqlStore",
           "SqliteStore", "Store", "StoreError", "StoreFull", "StoreUnavailable", "TournamentRow", "is_url",
           "open_bus", "open_store"]
