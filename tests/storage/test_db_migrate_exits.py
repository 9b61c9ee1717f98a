"""``chinchon db migrate``'s exit codes are the README's: 2 for a usage error (a target
that is not empty, the source and the target being one database by any spelling, a
database held by a running referee), never the 'another referee' message for a copy
of a database into itself. The command as a subprocess, real databases."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from chinchon_referee.storage import open_store

from tests.support.serve import Serve, free_port
from tests.support.tournament import CLI

SAME = "the source and the target are the same database"


def migrate(source: str, target: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*CLI, "db", "migrate", "--from", source, "--to", target],
                          capture_output=True, text=True, timeout=120)


def a_database(path: Path, bot: str = "") -> str:
    store = open_store(str(path))
    if bot:
        store.add_bot(bot, "0" * 64)
    store.close()
    return str(path)


def test_a_target_that_is_not_empty_is_a_usage_error(tmp_path: Path) -> None:
    src = a_database(tmp_path / "src.sqlite3", "alice")
    dst = a_database(tmp_path / "dst.sqlite3", "bob")
    got = migrate(src, dst)
    assert got.returncode == 2, got.stderr
    assert "already holds bots: copy into an empty database" in got.stderr
    store = open_store(dst)
    try:
        assert [b for b, _ in store.bots()] == ["bob"]  # nothing was copied
    finally:
        store.close()


@pytest.mark.parametrize("spelling", ["as-is", "dot-slash", "parent", "symlink", "hard-link"])
def test_a_copy_into_itself_is_refused_by_any_spelling(tmp_path: Path, spelling: str) -> None:
    src = a_database(tmp_path / "src.sqlite3", "alice")
    (tmp_path / "sub").mkdir()
    other = {
        "as-is": src,
        "dot-slash": str(tmp_path / "." / "src.sqlite3"),
        "parent": str(tmp_path / "sub" / ".." / "src.sqlite3"),
        "symlink": str(tmp_path / "link.sqlite3"),
        "hard-link": str(tmp_path / "hard.sqlite3"),
    }[spelling]
    if spelling == "symlink":
        os.symlink(src, other)
    if spelling == "hard-link":
        os.link(src, other)
    got = migrate(src, other)
    assert got.returncode == 2, got.stderr
    assert SAME in got.stderr and "another referee" not in got.stderr, got.stderr


def test_a_copy_into_itself_through_another_url_is_refused(pg_url: str) -> None:
    """Two spellings of one PostgreSQL database: the target's lock is found held by this
    very process (by the source), which says it is the same database."""
    store = open_store(pg_url)
    store.add_bot("alice", "0" * 64)
    store.close()
    other = pg_url + ("&" if "?" in pg_url else "?") + "connect_timeout=9"
    got = migrate(pg_url, other)
    assert got.returncode == 2, got.stderr
    assert SAME in got.stderr and "another referee" not in got.stderr, got.stderr


def test_a_database_held_by_a_running_referee_is_a_usage_error_naming_it(tmp_path: Path) -> None:
    held = tmp_path / "held.sqlite3"
    serve = Serve(tmp_path, free_port(), held, 1)
    try:
        src = a_database(tmp_path / "src.sqlite3", "alice")
        got = migrate(src, str(held))
        assert got.returncode == 2, got.stderr
        assert f"in use by another referee (pid {serve.proc.pid})" in got.stderr
        got = migrate(str(held), str(tmp_path / "new.sqlite3"))
        assert got.returncode == 2 and f"(pid {serve.proc.pid})" in got.stderr, got.stderr
    finally:
        serve.stop()
