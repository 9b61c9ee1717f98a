"""A real PostgreSQL server for the tests: a private cluster (initdb) in a temporary
folder, listening on a Unix socket only, started once per test session and stopped at
its end; each test gets a database of its own.

The cluster runs as an unprivileged user (PostgreSQL refuses root): the current user, or
``postgres`` (made by the distribution's package) when the tests run as root. Under CI
(``CI=true``) a missing PostgreSQL fails the tests (.ci/run installs it); elsewhere they
are skipped with the reason. ``CHINCHON_TEST_PG`` (a URL of a database whose user may
create databases) uses a server of your own instead.
"""

from __future__ import annotations

import glob
import os
import shutil
import subprocess
import tempfile
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest

CI = os.environ.get("CI", "").lower() in ("true", "1", "yes")


def _bindir() -> str | None:
    for d in sorted(glob.glob("/usr/lib/postgresql/*/bin"), reverse=True):
        if os.path.exists(os.path.join(d, "initdb")):
            return d
    found = shutil.which("initdb")
    return os.path.dirname(found) if found else None


@dataclass
class Cluster:
    """A running server: ``url(db)`` names one of its databases."""

    socket_dir: str
    port: int
    user: str

    def url(self, db: str = "postgres") -> str:
        return f"postgresql://{self.user}@/{db}?host={self.socket_dir}&port={self.port}"


def _as(user: str | None, cmd: list[str]) -> list[str]:
    return cmd if user is None else ["runuser", "-u", user, "--", *cmd]


class ClusterError(Exception):
    """PostgreSQL is not installed (``missing``) or did not start."""

    def __init__(self, message: str, *, missing: bool = False) -> None:
        super().__init__(message)
        self.missing = missing


@contextmanager
def start_cluster(port: int = 55432, *, fsync: bool = False) -> Iterator[Cluster]:
    """A private PostgreSQL cluster (initdb in a temporary folder, a Unix socket only,
    user ``chinchon`` trusted), stopped and deleted on exit: for the tests' fixture and
    bench/bench_shared.py. ``port`` only names the socket file. Raises
    :class:`ClusterError` when PostgreSQL is missing or does not start."""
    bindir = _bindir()
    if bindir is None:
        raise ClusterError("PostgreSQL is not installed (Debian: apt-get install postgresql)",
                           missing=True)
    runas = "postgres" if os.geteuid() == 0 else None
    top = tempfile.mkdtemp(prefix="chinchon-pg-")
    try:
        data, sock = os.path.join(top, "data"), os.path.join(top, "sock")
        os.mkdir(sock)
        if runas is not None:
            shutil.chown(top, runas)
            shutil.chown(sock, runas)
        os.chmod(top, 0o755)
        subprocess.run(_as(runas, [f"{bindir}/initdb", "-D", data, "-A", "trust", "-U",
                                   "chinchon", "--no-sync", "-E", "UTF8"]),
                       check=True, capture_output=True)
        opts = (f"-k {sock} -p {port} -c listen_addresses='' -c fsync={'on' if fsync else 'off'} "
                "-c max_connections=200")
        started = subprocess.run(
            _as(runas, [f"{bindir}/pg_ctl", "-D", data, "-o", opts, "-l", f"{top}/log", "-w",
                        "-t", "120", "start"]), capture_output=True, text=True)
        if started.returncode != 0:
            log = Path(top, "log").read_text(encoding="utf-8", errors="replace")[-3000:]
            raise ClusterError(f"PostgreSQL did not start: {started.stderr}\n{log}")
        try:
            yield Cluster(sock, port, "chinchon")
        finally:
            subprocess.run(_as(runas, [f"{bindir}/pg_ctl", "-D", data, "-m", "immediate", "-w",
                                       "stop"]), capture_output=True)
    finally:
        shutil.rmtree(top, ignore_errors=True)


@pytest.fixture(scope="session")
def pg_cluster() -> Iterator[Cluster]:
    try:
        with start_cluster() as cluster:
            yield cluster
    except ClusterError as e:
        if not e.missing:
            pytest.fail(str(e))
        if CI:
            pytest.fail(f"{e}; .ci/run installs it")
        pytest.skip(str(e))


@pytest.fixture
def pg_url(request: pytest.FixtureRequest) -> str:
    """The URL of a new, empty PostgreSQL database for one test."""
    mine = os.environ.get("CHINCHON_TEST_PG")
    if mine:
        return create_database(mine)
    cluster: Cluster = request.getfixturevalue("pg_cluster")
    return create_database(cluster.url())


@pytest.fixture(params=["sqlite", "postgres"])
def db_target(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A new database of each backend in turn: a SQLite file, then a PostgreSQL URL
    (for the tests that must pass on both)."""
    if request.param == "sqlite":
        return str(tmp_path / "referee.sqlite3")
    return str(request.getfixturevalue("pg_url"))


def create_database(base_url: str) -> str:
    """A new empty database on the server of ``base_url`` (whose user may create
    databases), named at random: its URL."""
    import psycopg  # only where PostgreSQL is used

    name = f"chinchon_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(base_url, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    head, sep, query = base_url.partition("?")
    return head.rsplit("/", 1)[0] + "/" + name + sep + query
