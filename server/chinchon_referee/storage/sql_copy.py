"""The rows of a database as they are, table by table, for ``chinchon db migrate``
(:mod:`.copy`): a mixin of :class:`~.sql.SqlStore`, written over its connection."""

from __future__ import annotations

import contextlib
import itertools
from abc import abstractmethod
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

from .schema import KEYS, TABLES

#: Rows written per transaction.
PUT_CHUNK = 2000


class CopyRows:
    @abstractmethod
    def _tx(self) -> contextlib.AbstractContextManager[Any]: ...

    @abstractmethod
    def _query(self, sql: str, args: Sequence[Any] = ()) -> list[tuple[Any, ...]]: ...

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
        while chunk := list(itertools.islice(it, PUT_CHUNK)):
            with self._tx() as c:
                c.executemany(sql, chunk)
