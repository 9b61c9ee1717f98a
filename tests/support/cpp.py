"""The C++ sample bot, built once per test run (the ``cpp_bot`` fixture, registered in
conftest.py): tests/sample_bots/test_cpp_bot.py and the walkthrough's test play it.

The build starts as soon as a worker of the run begins its first test, if any test of the
run needs the bot (``cpp_build_started``, autouse), in the background: the other tests go
on meanwhile, and ``cpp_bot`` waits for it. Under pytest-xdist the workers of one run share
it (one folder of the run's temporary tree, a lock file): it is built once per run, never
kept between runs (CI starts from a clean clone). The build runner holds an exclusive
``flock`` on ``cpp-bot.lock`` until it ends; waiting for the build is taking that lock.

The build needs the distribution's C++ gRPC toolchain (``.ci/run`` installs it). Under
CI (``CI=true``) a missing toolchain fails the tests that need it; elsewhere they are
skipped with the command that installs it."""

from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.helpers import ROOT

SOURCE = ROOT / "sample_bots" / "cpp"
TOOLS = ("cmake", "c++", "make", "pkg-config", "protoc", "grpc_cpp_plugin")
INSTALL = ("apt-get install -y --no-install-recommends cmake g++ make pkg-config "
           "libgrpc++-dev libprotobuf-dev protobuf-compiler protobuf-compiler-grpc")
#: The build, run by ``sh`` with the source and build folders as $1 and $2: its exit code
#: is written last, to ``rc`` (its output to ``log``).
BUILD = ('{ cmake -S "$1" -B "$2" && cmake --build "$2" --parallel 2; } >"$2.log" 2>&1; '
         'echo $? >"$2.rc"')


def missing_toolchain() -> list[str]:
    missing = [t for t in TOOLS if shutil.which(t) is None]
    if "pkg-config" not in missing:
        for lib in ("grpc++", "protobuf"):
            if subprocess.run(["pkg-config", "--exists", lib]).returncode != 0:
                missing.append(f"{lib} (pkg-config)")
    return missing


def _run_folder(factory: pytest.TempPathFactory) -> Path:
    """The temporary folder of this run: shared by its xdist workers (each has its own
    folder under it), the session's own otherwise."""
    base = factory.getbasetemp()
    return base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base


def start_build(factory: pytest.TempPathFactory) -> Path:
    """Start the run's build unless a worker did; the build folder (the binary appears
    in it once the lock of ``wait_build`` is free)."""
    build = _run_folder(factory) / "cpp-bot"
    lock = build.with_name("cpp-bot.lock")
    with open(build.with_name("cpp-bot.start"), "a") as start:
        fcntl.flock(start, fcntl.LOCK_EX)  # one starter at a time; released on close
        if lock.exists():
            return build
        build.mkdir()
        with open(lock, "w") as held:
            fcntl.flock(held, fcntl.LOCK_EX)
            # The runner inherits the locked file: the lock is free when it has ended.
            subprocess.Popen(["sh", "-c", BUILD, "sh", str(SOURCE), str(build)],
                             stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL, pass_fds=(held.fileno(),))
    return build


def wait_build(build: Path) -> Path:
    """Wait until the build has ended; the binary, or the build's log as the failure."""
    with open(build.with_name("cpp-bot.lock")) as lock:
        fcntl.flock(lock, fcntl.LOCK_SH)
    rc = build.with_name("cpp-bot.rc").read_text().strip()
    log = build.with_name("cpp-bot.log").read_text()
    assert rc == "0", f"the C++ bot's build ended with {rc}:\n{log[-6000:]}"
    binary = build / "chinchon_bot"
    assert binary.is_file(), log[-6000:]
    return binary


def toolchain_or_skip() -> None:
    """Fail (under CI) or skip (elsewhere) when the C++ toolchain is missing."""
    missing = missing_toolchain()
    if missing:
        why = f"the C++ toolchain is missing ({', '.join(missing)}); install it with: {INSTALL}"
        if os.environ.get("CI", "").lower() in ("true", "1", "yes"):
            pytest.fail(why)
        pytest.skip(why)


@pytest.fixture(scope="session", autouse=True)
def cpp_build_started(request: pytest.FixtureRequest,
                      tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """Starts the build at a worker's first test when a test of the run plays the bot
    (and the toolchain is there: without it ``cpp_bot`` says so)."""
    if any("cpp_bot" in getattr(item, "fixturenames", ()) for item in request.session.items) \
            and not missing_toolchain():
        start_build(tmp_path_factory)
    yield


@pytest.fixture(scope="session")
def cpp_bot(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The bot built once per test run, in the run's temporary folder."""
    toolchain_or_skip()
    return wait_build(start_build(tmp_path_factory))
