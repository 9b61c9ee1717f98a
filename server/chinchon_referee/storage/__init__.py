"""Persistence: everything is written as it happens, so a killed referee loses nothing.

:class:`Store` (``rows.py``) is the interface the referee and the scheduler use;
``sql.py`` holds its queries, written once for both backends: :class:`SqliteStore`
(``sqlite.py``, one file, the default) and ``PostgresStore`` (``postgres.py``, a
``postgresql://`` URL; needs the ``postgres`` extra). :func:`open_store` picks one;
``copy.py`` copies a database into another (``chinchon db migrate``).
"""

from __future__ import annotations

from .rows import ANY_GAME, SCHEMA_VERSION, GameFilter, GameRow, Store, StoreError, TournamentRow
from .sql import SqlStore
from .sqlite import SqliteStore


def is_url(target: str) -> bool:
    """``target`` names a PostgreSQL database rather than a SQLite file."""
    return target.startswith(("postgresql://", "postgres://"))


def open_store(target: str, exclusive: bool = False, read_only: bool = False) -> SqlStore:
    """The store at ``target``: a ``postgresql://`` URL or a SQLite file name.
    StoreError if it cannot be used (psycopg missing included). ``read_only``: an
    existing database, for reading only."""
    if not is_url(target):
        return SqliteStore(target, exclusive=exclusive, read_only=read_only)
    try:
        from .postgres import PostgresStore
    except ImportError:
        raise StoreError(
            "PostgreSQL needs psycopg: pip install 'chinchon-referee[postgres]'") from None
    return PostgresStore(target, exclusive=exclusive, read_only=read_only)


__all__ = ["ANY_GAME", "SCHEMA_VERSION", "GameFilter", "GameRow", "SqlStore", "SqliteStore",
           "Store", "StoreError", "TournamentRow", "is_url", "open_store"]
