"""A real, small filesystem for the full-disk tests: a tmpfs mounted in the test's folder
(no tests here).

Mounting needs root (CAP_SYS_ADMIN): CI runs as root, as do the developers' machines.
Elsewhere the tests that need it are skipped with the reason; under CI (``CI=true``) they
fail instead. A tmpfs is a full disk as the kernel says it: every write past its size
fails with ENOSPC, which SQLite reports as SQLITE_FULL ("database or disk is full") and
PostgreSQL as SQLSTATE 53100 (disk_full), the very errors of a real disk filling up.
"""

from __future__ import annotations

import contextlib
import errno
import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.postgres import CI


class SmallDisk:
    """A tmpfs of ``size`` at ``path``; :meth:`fill` takes all its space, :meth:`free`
    gives it back."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._filler = path / ".filler"

    def fill(self) -> None:
        """Write until the filesystem is full (ENOSPC)."""
        block = b"\0" * 65536
        with open(self._filler, "ab", buffering=0) as f:
            while True:
                try:
                    f.write(block)
                except OSError as e:
                    if e.errno != errno.ENOSPC:
                        raise
                    break
            # The last few bytes a smaller write still fits.
            with contextlib.suppress(OSError):
                while True:
                    f.write(b"\0" * 512)

    def free(self) -> None:
        self._filler.unlink(missing_ok=True)


@contextlib.contextmanager
def small_disk(path: Path, size: str, owner: str | None = None) -> Iterator[SmallDisk]:
    """A tmpfs of ``size`` ("8m") mounted at ``path`` (made if need be, owned by the user
    ``owner`` if given) for the block, then unmounted."""
    if os.geteuid() != 0:
        reason = "mounting a small filesystem (tmpfs) needs root"
        if CI:
            pytest.fail(reason)
        pytest.skip(reason)
    path.mkdir(parents=True, exist_ok=True)
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size},mode=0755", "tmpfs",
                           str(path)], capture_output=True, text=True)
    if done.returncode != 0:
        pytest.fail(f"cannot mount a tmpfs at {path}: {done.stderr.strip()}")
    try:
        if owner is not None:
            shutil.chown(path, owner, owner)
        yield SmallDisk(path)
    finally:
        subprocess.run(["umount", "-l", str(path)], capture_output=True)
