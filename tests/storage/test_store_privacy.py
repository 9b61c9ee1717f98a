"""The database holds the secrets every deal is drawn from (tournament seeds, the
practice secret): a new one is readable by its owner only, and so are its journal and
lock files; ``chinchon serve`` warns about an existing one that others may read."""

from __future__ import annotations

import os
import signal
import stat
import subprocess
import sys
from pathlib import Path

from chinchon_referee.storage import SqliteStore

from tests.support.serve import ALICE


def _mode(path: Path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


def test_a_new_database_and_its_companions_are_private(tmp_path: Path) -> None:
    old = os.umask(0o022)  # the usual umask: files readable by everyone unless asked
    try:
        db = tmp_path / "ref.sqlite3"
        store = SqliteStore(str(db), exclusive=True)
        try:
            store.secret("practice_secret")  # a write: the WAL and its index exist now
            companions = [p for p in tmp_path.iterdir() if p != db]
            assert {p.name for p in companions} >= {"ref.sqlite3-wal", "ref.sqlite3-shm",
                                                    "ref.sqlite3.lock"}
            for p in [db, *companions]:
                assert _mode(p) & 0o077 == 0, (p.name, oct(_mode(p)))
        finally:
            store.close()
    finally:
        os.umask(old)


def test_an_existing_database_keeps_its_mode(tmp_path: Path) -> None:
    db = tmp_path / "ref.sqlite3"
    SqliteStore(str(db)).close()
    os.chmod(db, 0o640)  # the organizer's choice (a group of operators, say)
    SqliteStore(str(db)).close()
    assert _mode(db) == 0o640


def test_serve_warns_about_a_database_others_can_read(tmp_path: Path) -> None:
    db = tmp_path / "ref.sqlite3"
    SqliteStore(str(db)).close()
    os.chmod(db, 0o644)
    token = tmp_path / "admin.token"
    proc = subprocess.Popen(
        [sys.executable, "-m", "chinchon_referee.cli", "serve", "--address", "127.0.0.1:0",
         "--db", str(db), "--admin-token-file", str(token), "--bot", f"alice={ALICE}",
         "--log-format", "json"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    try:
        assert proc.stdout is not None
        for line in proc.stdout:  # the warning comes before the server listens
            if '"listening"' in line:
                break
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert "database_shared" in err, err
    assert "chmod 600" in err


def test_the_lock_file_goes_with_the_store_that_held_it(tmp_path: Path) -> None:
    """A closed server's database leaves no ``.lock`` behind, and the next server takes
    the database at once; a lock file its holder removes as another process opens it
    is made anew, never shared."""
    db = tmp_path / "ref.sqlite3"
    lock = tmp_path / "ref.sqlite3.lock"
    for _ in range(3):
        store = SqliteStore(str(db), exclusive=True)
        assert lock.read_text() == str(os.getpid())
        store.close()
        assert not lock.exists()
    first = SqliteStore(str(db), exclusive=True)
    stale = os.open(lock, os.O_RDWR)  # opened before its holder lets it go
    first.close()
    try:
        second = SqliteStore(str(db), exclusive=True)
        try:
            assert os.fstat(stale).st_ino != os.stat(lock).st_ino  # a new file, held
        finally:
            second.close()
    finally:
        os.close(stale)
