"""A submission for ``chinchon bots check`` made by a test (its ``bot.toml`` with a
build of the test's own), the check run as a real process, and what it said."""

from __future__ import annotations

import json
import os
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.tournament import CLI

GREEDY = 'run = ["{python}", "-m", "chinchon.sdk", "--bot", "greedy"]\n'


@pytest.fixture
def here() -> Iterator[Path]:
    with tempfile.TemporaryDirectory(prefix="chbh-") as d:
        os.chmod(d, 0o755)
        yield Path(d)


def submission(here: Path, build: str, extra: str = "", run: str = GREEDY) -> Path:
    sub = here / "submission"
    sub.mkdir(exist_ok=True)
    (sub / "bot.toml").write_text(f'name = "hostile"\nruntime = "python3"\n'
                                  f'build = ["/bin/sh", "-c", {json.dumps(build)}]\n{run}{extra}',
                                  encoding="utf-8")
    return sub


def check(here: Path, *extra: str, user: list[str] | None = None,
           source: Path | None = None, cli: list[str] = CLI) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*(user or []), *cli, "bots", "check",
                           str(source or here / "submission"), "--out", str(here / "out"),
                           "--games", "1", "--seed", "s", *extra], capture_output=True,
                          text=True, timeout=300, cwd=here)


def said(proc: subprocess.CompletedProcess[str]) -> str:
    return " ".join((proc.stdout + proc.stderr).split())
