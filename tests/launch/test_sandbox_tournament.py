"""`chinchon tournament run` with sandboxed bots (``[sandbox]``, a participant's
``sandbox`` and ``folder``): honest SDK bots play through the referee's Unix socket
while a hostile one is killed at its memory cap; the tournament goes on, its games are
forfeited, every result is kept, and the organizer is told. A sandboxed declaration
that cannot be sandboxed is refused, naming why."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from chinchon_referee.launch.confine import Confinement

from tests.support.sandbox import HOSTILE
from tests.support.tournament import CLI

HEAD = """
name = "Sandboxed cup"
table_size = 2
games_per_pairing = 2
concurrency = 2
start = "when_connected"
seed = "sandboxed-cup"

[rules]
score_limit = 30

[time_control]
per_move = 2.0
bank = 10.0

[policies]
reconnect_grace = 1.0
absence_limit = 0.0
"""
BOTS = """
[[participants]]
name = "honest-a"
folder = "honest-a"
command = ["{python}", "-m", "chinchon.sdk", "--bot", "greedy"]

[[participants]]
name = "honest-b"
folder = "honest-b"
command = ["{python}", "-m", "chinchon.sdk", "--bot", "random"]
"""


@pytest.fixture
def cup() -> Iterator[Path]:
    """A short folder (the referee's socket goes elsewhere, but the bots' folders are
    bound at their own paths) with three bots' folders."""
    with tempfile.TemporaryDirectory(prefix="chst-") as d:
        root = Path(d)
        for name in ("honest-a", "honest-b", "hoarder"):
            (root / name).mkdir()
        shutil.copy(HOSTILE, root / "hoarder" / "hostile_bot.py")
        yield root


def _run(cup: Path, toml: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    (cup / "cup.toml").write_text(toml, encoding="utf-8")
    return subprocess.run([*CLI, "tournament", "run", "cup.toml", "--results", "res", "--quiet",
                           "--http", "off"], capture_output=True, text=True, timeout=240,
                          cwd=cup, env=env)


@pytest.mark.parametrize(("attack", "says"), [
    (["memory"], "out of memory"),            # killed at its cap by the kernel
    (["fork"], "ended during the run"),       # its bomb stops at 64 processes; it gives up
    (["net", "127.0.0.1", "9"], "ended during the run"),  # no network: it gives up
])
def test_a_hostile_bot_is_stopped_and_the_tournament_goes_on(
    cup: Path, confinement: Confinement, attack: list[str], says: str,
) -> None:
    proc = _run(cup, HEAD + "\n[sandbox]\ndefault = true\nmemory_mb = 128\n" + BOTS + f"""
[[participants]]
name = "hoarder"
folder = "hoarder"
command = {json.dumps(["{python}", "hostile_bot.py", *attack])}
""")
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out[-4000:]
    assert "hoarder (instance 0) ended during the run" in out, out[-4000:]
    if confinement.warning is None:  # with a memory cgroup, its OOM kill is seen
        assert says in out, out[-4000:]
    rows = {r["bot"]: r for r in json.loads((cup / "res" / "standings.json").read_text())["rows"]}
    assert rows["hoarder"]["forfeits"] == 4 and rows["hoarder"]["wins"] == 0
    assert rows["honest-a"]["games"] == rows["honest-b"]["games"] == 4
    assert rows["honest-a"]["forfeits"] == rows["honest-b"]["forfeits"] == 0
    with sqlite3.connect(cup / "res" / "tournament.sqlite3") as db:
        statuses = [s for (s,) in db.execute("SELECT status FROM games")]
    assert len(statuses) == 6 and set(statuses) == {"finished"}, statuses


def test_a_sandboxed_bot_needs_its_folder(cup: Path) -> None:
    proc = _run(cup, HEAD + "\n[sandbox]\ndefault = true\n" + BOTS.replace(
        'folder = "honest-b"\n', ""))
    assert proc.returncode == 2
    assert "participants[1] (honest-b): a sandboxed bot needs its folder" in proc.stdout, proc.stdout
    assert not (cup / "res" / "tournament.sqlite3").exists()


def test_no_bubblewrap_refuses_a_sandboxed_declaration_naming_it(cup: Path, tmp_path: Path) -> None:
    env = dict(os.environ, PATH=str(tmp_path))  # no bwrap on it (the CLI's Python is absolute)
    proc = _run(cup, HEAD + "\n[sandbox]\ndefault = true\n" + BOTS, env)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    said = " ".join(proc.stdout.split())
    assert "honest-a, honest-b are to run sandboxed" in said and "bubblewrap" in said, said
    with sqlite3.connect(cup / "res" / "tournament.sqlite3") as db:  # nothing stored
        assert db.execute("SELECT COUNT(*) FROM tournaments").fetchone() == (0,)


def test_unsandboxed_bots_are_named_in_one_note(cup: Path) -> None:
    proc = _run(cup, HEAD + BOTS.replace('folder = "honest-a"\n', "")
                .replace('folder = "honest-b"\n', ""))
    assert proc.returncode == 0, (proc.stdout + proc.stderr)[-3000:]
    said = " ".join(proc.stdout.split())
    assert "2 bots run unsandboxed, as you (honest-a, honest-b)" in said, said


def test_check_shows_the_sandboxed_bots(cup: Path) -> None:
    (cup / "cup.toml").write_text(HEAD + "\n[sandbox]\ndefault = true\n" + BOTS)
    proc = subprocess.run([*CLI, "tournament", "check", "cup.toml"], capture_output=True,
                          text=True, timeout=60, cwd=cup)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "sandboxed: honest-a, honest-b" in " ".join(proc.stdout.split())


def test_a_submission_plays_next_to_commands(cup: Path, confinement: Confinement) -> None:
    (cup / "stranger").mkdir()
    (cup / "stranger" / "bot.toml").write_text(
        'name = "stranger"\nruntime = "python3"\n'
        'run = ["{python}", "-m", "chinchon.sdk", "--bot", "greedy"]\n[limits]\nmemory_mb = 200\n')
    proc = _run(cup, HEAD + BOTS + """
[[participants]]
name = "stranger"
submission = "stranger"
""")
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out[-4000:]
    said = " ".join(proc.stdout.split())
    assert "2 bots run unsandboxed, as you (honest-a, honest-b)" in said, said
    rows = {r["bot"]: r for r in json.loads((cup / "res" / "standings.json").read_text())["rows"]}
    assert rows["stranger"]["games"] == 4 and rows["stranger"]["forfeits"] == 0, rows


def test_a_submission_with_a_command_is_refused(cup: Path) -> None:
    (cup / "stranger").mkdir()
    (cup / "stranger" / "bot.toml").write_text('name = "s"\nruntime = "binary"\nrun = ["./s"]\n')
    proc = _run(cup, HEAD + BOTS + """
[[participants]]
name = "stranger"
submission = "stranger"
command = ["./other"]
""")
    assert proc.returncode == 2
    assert "a submission runs its manifest's command" in " ".join(proc.stdout.split()), proc.stdout
