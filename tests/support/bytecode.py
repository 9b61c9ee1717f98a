"""The project's own modules, byte-compiled once at the start of a test run.

The suite starts several hundred Python processes (referee servers, SDK bots, web
processes, CLI commands), and each imports the project's modules. pip byte-compiles
what it installs, but not an editable install's sources: without a ``__pycache__``
beside them, every process compiles them again, and an environment with
``PYTHONDONTWRITEBYTECODE`` set (as CI's is) never writes one. That was half of an SDK
bot's start (0.27 s of CPU -> 0.14 s) and of a server's (0.50 s -> 0.24 s). The run's
first process therefore compiles them all, once (~1 s; the next runs only recompile
what changed). Figures: docs/testing.md."""

from __future__ import annotations

import compileall
import re
from pathlib import Path

#: The folders whose modules the suite's processes import.
FOLDERS = ("server", "client_sdk", "sample_bots", "bench", "tests")
#: Paths left alone: Node's packages and build trees hold no module of the project.
SKIP = re.compile(r"node_modules|[/\\]build[/\\]")


def compile_project(root: Path) -> bool:
    """Byte-compile every module under ``root``'s :data:`FOLDERS` (a stale ``.pyc`` is
    rewritten, an up-to-date one kept); True if every module compiled."""
    ok = True
    for name in FOLDERS:
        folder = root / name
        if folder.is_dir():
            ok = bool(compileall.compile_dir(folder, quiet=2, rx=SKIP)) and ok
    return ok
