"""Sandboxed bots for the tests (tests/launch/test_sandbox.py, the tournament's): this machine's
confinement (bubblewrap and cgroups), a short folder holding a bot's folder, another
bot's and the organizer's files, and a hostile bot run inside.

A missing bubblewrap fails these tests under CI (``.ci/run`` installs it:
``.ci/install-sandbox``); elsewhere they are skipped with the command that installs it."""

from __future__ import annotations

import json
import os
import shutil
import socket
import sys
import tempfile
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from chinchon_referee.launch.bots import BotProcess, Keep, Sandboxed, Sink, launch
from chinchon_referee.launch.confine import Confinement
from chinchon_referee.launch.limits import Limits
from chinchon_referee.launch.sandbox import SandboxSpec, SandboxUnavailable, python_runtime

from tests.support.helpers import ROOT

HOSTILE = ROOT / "tests" / "bots" / "hostile_bot.py"
SECRET = "organizer-secret-7f3a"


def under_ci() -> bool:
    return os.environ.get("CI", "").lower() in ("true", "1", "yes")


@pytest.fixture(scope="session")
def confinement() -> Iterator[Confinement]:
    """This machine's confinement, found once per session."""
    try:
        found = Confinement.find()
    except SandboxUnavailable as e:
        why = f"no sandbox here: {e} (install: .ci/install-sandbox)"
        if under_ci():
            pytest.fail(why)
        pytest.skip(why)
    yield found
    found.close()


@dataclass
class Place:
    """A short folder (``root``) with a bot's folder, another bot's, the organizer's
    secrets and database, and a Unix socket listening (``sock``)."""

    root: Path
    bot: Path
    other: Path
    organizer: Path
    sock: Path


@pytest.fixture
def place() -> Iterator[Place]:
    with tempfile.TemporaryDirectory(prefix="chsb-") as d:
        root = Path(d)
        bot, other, organizer = root / "bot", root / "other", root / "organizer"
        for f in (bot, other, organizer):
            f.mkdir()
        shutil.copy(HOSTILE, bot / "hostile_bot.py")
        (bot / "mine.txt").write_text("my own file")
        (other / "strategy.py").write_text(SECRET)
        (organizer / "admin-token").write_text(SECRET)
        (organizer / "tournament.sqlite3").write_text(SECRET)
        sock = root / "referee.sock"
        listener = socket.socket(socket.AF_UNIX)
        listener.bind(str(sock))
        listener.listen()
        try:
            yield Place(root, bot, other, organizer, sock)
        finally:
            listener.close()


def spec_for(place: Place, limits: Limits | None = None, socket_path: Path | None = None) -> SandboxSpec:
    return SandboxSpec(folder=place.bot, socket=socket_path or place.sock,
                       limits=limits or Limits(), runtime=python_runtime())


async def hostile(confinement: Confinement, place: Place, *attack: str,
                  limits: Limits | None = None, stderr: Sink = Keep.MEMORY,
                  token: str = "hostile-token") -> BotProcess:
    """The hostile bot running ``attack`` in its sandbox."""
    return await launch([sys.executable, "hostile_bot.py", *attack], "", token,
                        sandbox=Sandboxed(confinement, spec_for(place, limits), "hostile"),
                        stdout=Keep.MEMORY, stderr=stderr)


def results(proc: BotProcess) -> list[dict[str, Any]]:
    return [json.loads(line.removeprefix("RESULT ")) for line in proc.out
            if line.startswith("RESULT ")]


@pytest.fixture
async def sandboxed() -> AsyncIterator[list[BotProcess]]:
    """Processes to kill at the end of a test (append them)."""
    procs: list[BotProcess] = []
    yield procs
    for p in procs:
        await p.kill()
