"""Copy a referee database into another (``chinchon db migrate``): every bot, tournament,
game, record and secret, page by page, then checked row by row.

The target must hold no bot, tournament or game: a copy never merges two referees'
histories. Both stores are held exclusively during the copy, so no server writes to
either meanwhile.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from .rows import StoreError
from .sql import KEYS, TABLES, SqlStore

#: Rows compared per look-up when the copy is checked.
CHECK_PAGE = 500


class TargetNotEmpty(StoreError):
    """The target holds bots, tournaments or games: a copy never merges histories."""


class CopyDiffers(StoreError):
    """A row of the copy is missing or not equal to the source's."""


@dataclass
class CopyReport:
    #: Rows copied, by table.
    rows: dict[str, int] = field(default_factory=dict)


def copy_store(src: SqlStore, dst: SqlStore,
               progress: Callable[[str, int], None] | None = None) -> CopyReport:
    """Copy every row of ``src`` into the empty ``dst``, then check that each row of
    ``src`` is in ``dst``, equal. TargetNotEmpty if ``dst`` is not empty, CopyDiffers if
    a row differs, StoreError if a database fails meanwhile."""
    for table in ("bots", "tournaments", "games"):
        if next(iter(dst.table_rows(table, page=1)), None) is not None:
            raise TargetNotEmpty(f"{dst.where} already holds {table}: copy into an empty "
                                 "database")
    report = CopyReport()
    for table in TABLES:
        report.rows[table] = 0
        dst.put_rows(table, _rows_to_copy(src, table, report, progress))
    check_copy(src, dst)
    return report


def _rows_to_copy(src: SqlStore, table: str, report: CopyReport,
                  progress: Callable[[str, int], None] | None) -> Iterator[tuple[Any, ...]]:
    for row in src.table_rows(table):
        if table == "meta" and row[0] == "schema_version":
            continue  # the target's own, written when it was opened
        report.rows[table] += 1
        if progress is not None and report.rows[table] % 1000 == 0:
            progress(table, report.rows[table])
        yield row


def check_copy(src: SqlStore, dst: SqlStore) -> None:
    """CopyDiffers naming the first row of ``src`` missing from ``dst`` or different."""
    for table, cols in TABLES.items():
        key = cols.index(KEYS[table])
        it = src.table_rows(table)
        while page := list(itertools.islice(it, CHECK_PAGE)):
            there = dst.rows_by_keys(table, [r[key] for r in page])
            for row in page:
                if there.get(row[key]) != tuple(row):
                    raise CopyDiffers(f"the copy differs in {table} row {row[key]!r}")
