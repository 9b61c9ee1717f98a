"""``chinchon db``: the referee's database. ``migrate`` copies a SQLite database into
PostgreSQL (or any store into an empty one), with nothing lost, and checks the copy.

Exit codes (the README's): 0 copied and checked; 1 the copy differs from its source
(the check failed); 2 a usage error: no database at ``--from``, a database that cannot be
opened (unreadable, damaged, foreign, held by a running referee), a target that is not
empty, or the source and the target being the same database (by any spelling).
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any

from ..storage import StoreError, is_url, open_store
from ..storage.copy import CopyDiffers, copy_store
from ..storage.rows import StoreHeld

#: The refusal of a copy of a database into itself.
SAME = "the source and the target are the same database"


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


def same_file(a: str, b: str) -> bool:
    """``a`` and ``b`` name one SQLite file: the same path once resolved (symbolic
    links, ``..``), or one file under two names (a hard link, a bind mount)."""
    if is_url(a) or is_url(b):
        return a == b
    if os.path.realpath(a) == os.path.realpath(b):
        return True
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False  # the target does not exist yet


def _named(target: str) -> str:
    """`` (FILE)`` for a file; nothing for a URL, which may hold a password."""
    return "" if is_url(target) else f" ({target})"


def _error(message: str, code: int) -> int:
    print(f"error: {message}", file=sys.stderr)
    return code


def cmd_migrate(args: argparse.Namespace) -> int:
    if not is_url(args.source) and not os.path.isfile(args.source):
        return _error(f"no database at {args.source}", 2)
    if same_file(args.source, args.target):
        return _error(SAME + _named(args.source), 2)
    try:
        src = open_store(args.source, exclusive=True)
    except StoreError as e:
        return _error(str(e), 2)
    try:
        try:
            dst = open_store(args.target, exclusive=True)
        except StoreHeld as e:
            # Held by this process: by the source, opened just above (two URLs of one
            # PostgreSQL database).
            return _error(SAME + _named(args.target) if e.by_this_process else str(e), 2)
        except StoreError as e:
            return _error(str(e), 2)
        try:
            report = copy_store(src, dst, lambda table, n: print(
                f"  {table}: {n} rows…", file=sys.stderr))
        except CopyDiffers as e:
            return _error(str(e), 1)
        except StoreError as e:
            return _error(str(e), 2)
        finally:
            dst.close()
    finally:
        src.close()
    counts = ", ".join(f"{n} {t}" for t, n in report.rows.items() if t != "meta")
    print(f"copied {src.where} to {dst.where}: {counts} (and {report.rows['meta']} secrets); "
          "every row checked")
    return 0
