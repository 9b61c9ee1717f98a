"""``chinchon bots check DIR``: a submission (a folder with bot.toml) copied, built in
the sandbox with no network, and played sandboxed in the practice conformance games;
a bad manifest, a build that reaches for the network and a bot that hoards memory are
each refused with a clear message."""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from chinchon_referee.launch.confine import Confinement
from chinchon_referee.launch.limits import Limits
from chinchon_referee.launch.manifest import Manifest, ManifestError, Runtime

from tests.support.sandbox import HOSTILE
from tests.support.tournament import CLI

GOOD = """
name = "good"
runtime = "python3"
build = ["{python}", "-c", "open('built.txt', 'w').write('ok'); print('built it')"]
run = ["{python}", "-m", "chinchon.sdk", "--bot", "greedy"]
"""


@pytest.fixture
def here() -> Iterator[Path]:
    with tempfile.TemporaryDirectory(prefix="chbc-") as d:
        yield Path(d)


def _check(here: Path, manifest: str, *extra: str) -> subprocess.CompletedProcess[str]:
    sub = here / "submission"
    sub.mkdir(exist_ok=True)
    (sub / "bot.toml").write_text(manifest, encoding="utf-8")
    return subprocess.run([*CLI, "bots", "check", str(sub), "--out", str(here / "out"),
                           "--games", "2", "--seed", "s", *extra], capture_output=True,
                          text=True, timeout=240, cwd=here)


def test_a_good_submission_is_built_in_its_copy_and_passes(here: Path,
                                                           confinement: Confinement) -> None:
    proc = _check(here, GOOD)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "PASS" in proc.stdout
    assert (here / "out" / "bot" / "built.txt").read_text() == "ok"
    assert "built it" in (here / "out" / "build.log").read_text()
    assert not (here / "submission" / "built.txt").exists()  # the submission is never written
    assert (here / "out" / "practice-2.json").is_file()


def test_a_build_that_reaches_for_the_network_fails(here: Path, confinement: Confinement) -> None:
    proc = _check(here, GOOD.replace(
        "open('built.txt', 'w').write('ok'); print('built it')",
        "import socket; socket.create_connection(('1.1.1.1', 443), timeout=5)"))
    assert proc.returncode == 1, proc.stdout + proc.stderr
    said = " ".join(proc.stdout.split())
    # The system-call filter refuses the AF_INET socket before the empty network
    # namespace would find no route.
    assert "FAIL: the build failed" in said and "Address family not supported" in said, said


def test_a_hoarding_bot_fails_the_check(here: Path, confinement: Confinement) -> None:
    (here / "submission").mkdir()
    shutil.copy(HOSTILE, here / "submission" / "hostile_bot.py")
    proc = _check(here, """
name = "hoarder"
runtime = "python3"
run = ["{python}", "hostile_bot.py", "memory"]
""", "--limit", "memory_mb=96")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "FAIL" in proc.stdout


@pytest.mark.parametrize(("manifest", "says"), [
    ('name = "x"\nruntime = "python3"\n', "run: the bot's command"),
    ('name = "x y"\nruntime = "python3"\nrun = ["a"]\n', "name: 1 to 32"),
    ('name = "x"\nruntime = "java"\nrun = ["a"]\n', "runtime: one of python3, node, binary"),
    ('name = "x"\nruntime = "node"\nrun = "node bot.js"\n', "not one string"),
    ('name = "x"\nruntime = "node"\nrun = ["node"]\nnetwork = true\n', "unknown key 'network'"),
])
def test_a_bad_manifest_is_refused_naming_the_key(here: Path, manifest: str, says: str) -> None:
    proc = _check(here, manifest)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert says in " ".join(proc.stdout.split()), proc.stdout
    assert not (here / "out" / "bot").exists()


def test_no_manifest_and_a_bad_limit(here: Path) -> None:
    (here / "empty").mkdir()
    proc = subprocess.run([*CLI, "bots", "check", str(here / "empty")], capture_output=True,
                          text=True, timeout=60, cwd=here)
    assert proc.returncode == 2 and "no manifest" in proc.stdout, proc.stdout
    bad = _check(here, GOOD, "--limit", "memory_mb=lots")
    assert bad.returncode == 2 and "memory_mb" in bad.stdout, bad.stdout


def test_the_manifest_parses_and_a_submission_cannot_raise_the_organizers_limits() -> None:
    m = Manifest.parse({"name": "n", "runtime": "node", "run": ["node", "bot.js"],
                        "limits": {"memory_mb": 4096, "processes": 16}}, Path("bot.toml"))
    assert m.runtime is Runtime.NODE and m.run == ("node", "bot.js") and not m.build
    limits = Limits(memory_mb=256, processes=64).within(m.limits or {})
    assert limits.memory_mb == 256 and limits.processes == 16
    with pytest.raises(ManifestError, match="build_timeout"):
        Manifest.parse({"name": "n", "runtime": "node", "run": ["x"], "build_timeout": 0},
                       Path("bot.toml"))


def test_practice_runs_a_bot_sandboxed_in_its_folder(here: Path, confinement: Confinement) -> None:
    (here / "bot").mkdir()
    shutil.copy(HOSTILE, here / "bot" / "hostile_bot.py")
    good = subprocess.run([*CLI, "practice", "--games", "1", "--sandbox", str(here / "bot"),
                           "--out", str(here / "p1"), "--", sys.executable, "-m", "chinchon.sdk"],
                          capture_output=True, text=True, timeout=240, cwd=here)
    assert good.returncode == 0 and "PASS" in good.stdout, good.stdout + good.stderr
    hoarder = subprocess.run([*CLI, "practice", "--games", "1", "--sandbox", str(here / "bot"),
                              "--limit", "memory_mb=64", "--out", str(here / "p2"), "--",
                              sys.executable, "hostile_bot.py", "memory"],
                             capture_output=True, text=True, timeout=240, cwd=here)
    assert hoarder.returncode == 1 and "FAIL" in hoarder.stdout, hoarder.stdout
    bad = subprocess.run([*CLI, "practice", "--sandbox", str(here / "nope"), "--", "x"],
                         capture_output=True, text=True, timeout=60, cwd=here)
    assert bad.returncode == 2 and "not a folder" in bad.stdout, bad.stdout
