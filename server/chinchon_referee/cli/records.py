"""``chinchon tournament records DB --out DIR``: a tournament's game records, from its
database to files, on demand.

The database is where records live (deflated, ``storage/rows.py``); ``tournament run``
writes standings, report and ratings to its results folder and no copy of the records
unless asked (``--records``). This command writes one file per finished game, a page of
records at a time (never all of them in memory): compact ``.json.gz`` by default,
indented ``.json`` to read (``--format json``). ``chinchon replay`` reads either.

    chinchon tournament records results/cup/tournament.sqlite3 --out cup-records
    chinchon tournament records postgresql://host/db --id t-3 --out DIR --format json
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.markup import escape

from ..storage import Store, StoreError, TournamentRow, is_url, open_store
from .record_files import FORMATS, RecordFormat, export_records

console = Console(highlight=False, soft_wrap=True)


def register(tsub: Any) -> None:
    """The ``records`` action of ``chinchon tournament``."""
    p = tsub.add_parser(
        "records", help="write a tournament's game records from its database to files",
        description="Write every finished game's record of a tournament, read from its "
                    "database a page at a time, as one file per game in DIR: "
                    "<game>.json.gz (compact, the default) or <game>.json (indented, to "
                    "read). Each is checked and shown by `chinchon replay FILE [--view]`.")
    p.add_argument("db", help="SQLite database file or postgresql:// URL")
    p.add_argument("--id", help="tournament id (default: the newest)")
    p.add_argument("--out", required=True, metavar="DIR", help="folder to write them to "
                   "(created if need be; a game's file there is replaced)")
    p.add_argument("--format", choices=FORMATS, default=RecordFormat.JSON_GZ.value,
                   help="json.gz (default): gzipped minified JSON, ~10x smaller; "
                        "json: indented JSON")
    p.set_defaults(func=cmd_records)


def add_run_options(run: argparse.ArgumentParser) -> None:
    """``tournament run --records [--record-format F]``."""
    run.add_argument("--records", action="store_true",
                     help="also write every game's record to <results>/records/ at the end "
                          "(they are in the database either way: `chinchon tournament "
                          "records DB --out DIR` writes them later)")
    run.add_argument("--record-format", choices=FORMATS, default=RecordFormat.JSON_GZ.value,
                     help="with --records: json.gz (default) or json")


def write_run_records(store: Store, tid: str, results: Path, fmt: str) -> int:
    """``tournament run --records``: the run's records in ``results/records``."""
    return export_records(store, tid, results / "records", RecordFormat(fmt))


def open_tournament(db: str, tid: str | None) -> tuple[Store, TournamentRow] | int:
    """The database ``db`` (a file or a URL) and its tournament ``tid`` (None: the
    newest); or, having said why not, the exit code: 2 no database, 1 no tournament."""
    if not is_url(db) and not Path(db).exists():
        console.print(f"[bold red]error:[/] no database at {escape(db)}")
        return 2
    try:
        store = open_store(db)
    except StoreError as e:
        console.print(f"[bold red]error:[/] {escape(str(e))}")
        return 2
    rows = store.tournaments()
    row = next((r for r in rows if r.id == tid), None) if tid else (rows[0] if rows else None)
    if row is None:
        store.close()
        console.print(f"[bold red]error:[/] no tournament {escape(tid)}" if tid
                      else "no tournaments in this database")
        return 1
    return store, row


def cmd_records(args: argparse.Namespace) -> int:
    found = open_tournament(args.db, args.id)
    if isinstance(found, int):
        return found
    store, row = found
    try:
        fmt = RecordFormat(args.format)
        out = Path(args.out)
        try:
            n = export_records(store, row.id, out, fmt)
        except OSError as e:
            console.print(f"[bold red]error:[/] cannot write to {escape(str(out))}: "
                          f"{escape(e.strerror or str(e))}")
            return 2
        except ValueError as e:
            console.print(f"[bold red]error:[/] {escape(str(e))}")
            return 1
    finally:
        store.close()
    console.print(f"{n} records of {escape(row.id)} ({escape(row.name)}, {row.status}) "
                  f"written to {escape(str(out))}/ as <game>.{fmt.value} (check one: "
                  f"chinchon replay FILE)")
    return 0
