"""``chinchon db``: the referee's database. ``migrate`` copies a SQLite database into
PostgreSQL (or any store into an empty one), with nothing lost, and checks the copy.

Exit codes: 0 copied and checked; 1 the copy was refused or differs; 2 a database could
not be opened.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any

from ..storage import StoreError, is_url, open_store
from ..storage.copy import copy_store


def register(sub: Any) -> None:
    p = sub.add_parser("db", help="the referee's database: migrate SQLite to PostgreSQL")
    dbs = p.add_subparsers(dest="db_command", required=True)
    m = dbs.add_parser(
        "migrate", help="copy every tournament, game, record, bot and secret into an empty "
        "database, then check the copy row by row")
    m.add_argument("--from", dest="source", required=True, metavar="FILE",
                   help="the database to copy (a SQLite file, or a postgresql:// URL)")
    m.add_argument("--to", dest="target", required=True, metavar="URL",
                   help="the empty database to copy into (a postgresql:// URL, or a SQLite file)")
    m.set_defaults(func=cmd_migrate)


def cmd_migrate(args: argparse.Namespace) -> int:
    if not is_url(args.source) and not os.path.isfile(args.source):
        print(f"error: no database at {args.source}", file=sys.stderr)
        return 2
    try:
        src = open_store(args.source, exclusive=True)
    except StoreError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    try:
        try:
            dst = open_store(args.target, exclusive=True)
        except StoreError as e:
            print(f"error: {e}", file=sys.stderr)
            return 2
        try:
            report = copy_store(src, dst, lambda table, n: print(
                f"  {table}: {n} rows…", file=sys.stderr))
        except StoreError as e:
            print(f"error: {e}", file=sys.stderr)
            return 1
        finally:
            dst.close()
    finally:
        src.close()
    counts = ", ".join(f"{n} {t}" for t, n in report.rows.items() if t != "meta")
    print(f"copied {src.where} to {dst.where}: {counts} (and {report.rows['meta']} secrets); "
          "every row checked")
    return 0
