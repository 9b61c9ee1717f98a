"""A database written when the rules of names were looser (a tournament named with a
trailing space, two of its stages of one name; a ladder likewise, opened long ago) is
served by ``chinchon serve`` as it was: it starts (not "stored declaration is
damaged"), the tournament resumes and plays to its standings, the ladder rates games.
Those rules are checked where an organizer types a declaration, not when the referee
reads one back."""

from __future__ import annotations

import datetime as dt
import json
import re
import sqlite3
import subprocess
from pathlib import Path

from tests.support.admin import AdminCli, bots_over
from tests.support.helpers import bot_token
from tests.support.ladder import rated
from tests.support.serve import Serve, free_port, stop_all
from tests.support.waits import until_sync

CUP = """name = "Old cup"
games_per_pairing = 2
concurrency = 1
start = "manual"
[rules]
score_limit = 30
[time_control]
per_move = 2.0
bank = 10.0
[[format.stages]]
kind = "round_robin"
name = "Pool"
advance = 2
[[format.stages]]
kind = "round_robin"
name = "Pool two"
[[participants]]
name = "alice"
[[participants]]
name = "bob"
"""

LADDER = """name = "Old ladder"
concurrency = 1
[rules]
score_limit = 30
[[entrants]]
name = "alice"
[[entrants]]
name = "bob"
"""


def as_stored_long_ago(db: Path, tid: str, lid: str) -> None:
    """The two rows as the older rules let an organizer declare them: names with a
    space at their end, the second stage named as the first; the ladder opened three
    years ago (farther than a declaration may say today)."""
    con = sqlite3.connect(db)
    try:
        (spec,), = con.execute("SELECT spec FROM tournaments WHERE id = ?", (tid,)).fetchall()
        cup = json.loads(spec)
        cup["name"] = "Old cup "
        cup["format"]["stages"][1]["name"] = "Pool"
        con.execute("UPDATE tournaments SET name = ?, spec = ? WHERE id = ?",
                    (cup["name"], json.dumps(cup), tid))
        (spec,), = con.execute("SELECT spec FROM ladders WHERE id = ?", (lid,)).fetchall()
        ladder = json.loads(spec)
        ladder["name"] = "Old ladder "
        ladder["opens"] = (dt.datetime.now(dt.UTC) - dt.timedelta(days=3 * 365)).isoformat()
        con.execute("UPDATE ladders SET name = ?, spec = ? WHERE id = ?",
                    (ladder["name"], json.dumps(ladder), lid))
        con.commit()
    finally:
        con.close()


def test_declarations_stored_under_older_rules_are_served_resumed_and_shown(
    tmp_path: Path,
) -> None:
    port, db = free_port(), tmp_path / "old.sqlite3"
    tokens = {b: bot_token(b) for b in ("alice", "bob")}
    flags = [x for b, t in tokens.items() for x in ("--bot", f"{b}={t}")]
    admin = AdminCli(tmp_path, port)
    first = Serve(tmp_path, port, db, 1, flags)
    try:
        (tmp_path / "cup.toml").write_text(CUP, encoding="utf-8")
        made = re.search(r"created (t-[0-9a-f]+)", admin("create", str(tmp_path / "cup.toml")))
        (tmp_path / "ladder.toml").write_text(LADDER, encoding="utf-8")
        opened = re.search(r"created ladder (l-[0-9a-f]+)",
                           admin("ladder", "create", str(tmp_path / "ladder.toml")))
        assert made and opened
        tid, lid = made.group(1), opened.group(1)
    finally:
        first.stop()
    as_stored_long_ago(db, tid, lid)

    procs: list[subprocess.Popen[bytes]] = []
    servers: list[Serve] = []
    try:
        servers.append(Serve(tmp_path, port, db, 2, flags))  # it starts: nothing damaged
        assert "Old cup " in admin("list") and "Old ladder" in admin("ladder", "list")
        procs = bots_over(port, tokens, tmp_path)
        until_sync(lambda: all(b in admin("connected") for b in tokens),
                   "the bots did not connect", 60)
        admin("start", tid)
        assert f"tournament {tid} is finished" in admin("watch", tid)
        standings = admin("standings", tid)
        assert "stage 1: Pool" in standings and "stage 2: Pool" in standings, standings
        assert "alice" in standings and "bob" in standings
        assert json.loads(admin("standings", tid, "--json"))["games"] == 4
        until_sync(lambda: rated(admin, lid) >= 1, "no ladder game was rated", 120)
        board = admin("ladder", "board", lid)
        assert "alice" in board and "bob" in board
    finally:
        stop_all(procs, servers)
