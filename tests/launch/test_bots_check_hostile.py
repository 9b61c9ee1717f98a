"""``chinchon bots check`` against hostile submissions of the tests' own: a build that
leaves setuid/setgid/sticky files (as root, and as an unprivileged organizer), one that
fills its build area, one whose manifest asks for more time than the organizer gives, a
sparse 4 GiB file, a link to /etc/passwd and a FIFO, a build that rewrites its manifest
(the built one runs, and is pinned: the tournament refuses it once edited), and a build
confined exactly as the bot is."""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from chinchon_referee.launch.confine import Confinement

from tests.support.submissions import GREEDY
from tests.support.submissions import check as _check
from tests.support.submissions import said as _said
from tests.support.submissions import submission as _submission
from tests.support.tournament import CLI

SETUID_BUILD = ("cp /usr/bin/id id-suid && chmod 4755 id-suid && cp /usr/bin/id id-sgid && "
                "chmod 2755 id-sgid && mkdir sticky && chmod 1777 sticky")


def _assert_stripped(out: Path) -> None:
    bot = out / "bot"
    assert stat.S_IMODE(out.stat().st_mode) == 0o700
    assert stat.S_IMODE(bot.stat().st_mode) == 0o700
    for name in ("id-suid", "id-sgid", "sticky"):
        mode = (bot / name).lstat().st_mode
        assert not mode & (stat.S_ISUID | stat.S_ISGID | stat.S_ISVTX), (name, oct(mode))
    assert os.access(bot / "id-suid", os.X_OK)


def test_a_build_leaves_no_setuid_setgid_or_sticky_bit(here: Path,
                                                        confinement: Confinement) -> None:
    _submission(here, SETUID_BUILD)
    proc = _check(here)
    assert proc.returncode == 0, _said(proc)
    _assert_stripped(here / "out")


NOBODY = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "--reset-env"]
ROOT = Path(__file__).resolve().parents[2]


def _runs_as_nobody(python: str, base_prefix: str) -> bool:
    """Whether ``nobody`` runs ``python`` with the referee, from ``base_prefix`` (the
    installation the sandbox binds for it)."""
    seen = subprocess.run([*NOBODY, python, "-c",
                           "import sys, chinchon_referee; print(sys.base_prefix)"],
                          capture_output=True, text=True, timeout=120)
    return seen.returncode == 0 and seen.stdout.strip() == base_prefix


@pytest.fixture(scope="module")
def nobodys_python() -> Iterator[str]:
    """A Python with the referee that an unprivileged user may run: this suite's own
    where it can, else the distribution's ``/usr/bin/python3`` in a virtual environment
    outside any private home (a Python under ``/root`` is closed to every other user),
    seeing this suite's packages where they are readable, or with the project installed
    into it."""
    if _runs_as_nobody(sys.executable, sys.base_prefix):
        yield sys.executable
        return
    with tempfile.TemporaryDirectory(prefix="chbh-py-") as d:
        os.chmod(d, 0o755)
        venv = Path(d) / "venv"
        subprocess.run(["/usr/bin/python3", "-m", "venv", str(venv)], check=True, timeout=300)
        python = str(venv / "bin" / "python")
        site = subprocess.run([python, "-c", "import site; print(site.getsitepackages()[0])"],
                              capture_output=True, text=True, check=True).stdout.strip()
        ours = [p for p in sys.path if p.endswith("site-packages")]
        (Path(site) / "chinchon-suite.pth").write_text(
            "".join(f"import site; site.addsitedir({p!r})\n" for p in ours), encoding="utf-8")
        if not _runs_as_nobody(python, "/usr"):  # this suite's packages are closed to it too
            (Path(site) / "chinchon-suite.pth").unlink()
            subprocess.run([python, "-m", "pip", "install", "-q", str(ROOT / "client_sdk"),
                            str(ROOT)], check=True, timeout=900, capture_output=True)
        assert _runs_as_nobody(python, "/usr"), "no Python with the referee runs as nobody"
        yield python


@pytest.mark.skipif(os.geteuid() != 0 or shutil.which("setpriv") is None,
                    reason="needs root to become an unprivileged organizer")
def test_an_unprivileged_organizer_gets_no_setuid_file_either(here: Path, nobodys_python: str,
                                                              confinement: Confinement) -> None:
    """The organizer as ``nobody`` (as on a shared machine): there a setuid file left by
    the build would run as the organizer for anyone."""
    _submission(here, SETUID_BUILD)
    os.chown(here, 65534, 65534)
    for p in (here / "submission", here / "submission" / "bot.toml"):
        os.chown(p, 65534, 65534)
    proc = _check(here, user=NOBODY, cli=[nobodys_python, *CLI[1:]])
    assert proc.returncode == 0, _said(proc)
    _assert_stripped(here / "out")
    assert (here / "out" / "bot" / "id-suid").stat().st_uid == 65534


def test_a_build_that_fills_its_area_fails_and_the_disk_is_not_filled(
        here: Path, confinement: Confinement) -> None:
    _submission(here, "i=0; while [ $i -lt 40 ]; do head -c 8388608 /dev/zero > f$i || exit 1; "
                "i=$((i+1)); done")
    proc = _check(here, "--build-disk-mb", "32")
    assert proc.returncode == 1, _said(proc)
    assert "FAIL: the build area is full (build_disk_mb = 32 MiB" in _said(proc), _said(proc)
    used = sum(f.lstat().st_size for f in (here / "out").rglob("*") if f.is_file())
    assert used < 2 * 1024 * 1024, used  # its log only: nothing of the build is left
    assert not (here / "out" / "bot").exists()


def test_the_organizers_build_timeout_wins_over_the_manifests(here: Path,
                                                              confinement: Confinement) -> None:
    _submission(here, "sleep 600", extra="build_timeout = 3600\n")
    proc = _check(here, "--build-timeout", "3")
    assert proc.returncode == 1, _said(proc)
    assert "the build did not finish within 3 s (build_timeout)" in _said(proc), _said(proc)


def test_a_sparse_file_of_4_gib_is_refused_before_any_copy(here: Path,
                                                           confinement: Confinement) -> None:
    sub = _submission(here, "true")
    with open(sub / "huge.bin", "wb") as f:
        f.truncate(4 * 1024 ** 3)
    proc = _check(here, "--submission-mb", "64")
    assert proc.returncode == 2, _said(proc)
    assert "'huge.bin': 4096.0 MiB would pass the bound on the apparent size (64 MiB" in \
        _said(proc), _said(proc)
    assert not (here / "out").exists()
    assert not list(here.glob(".chinchon-intake-*"))


@pytest.mark.parametrize(("make", "says"), [
    (lambda sub: os.symlink("/etc/passwd", sub / "passwd"), "'passwd': a link that leads out"),
    (lambda sub: os.mkfifo(sub / "pipe"), "'pipe': a FIFO: not taken"),
])
def test_a_link_out_or_a_fifo_in_the_submission_is_refused(here: Path, make: object,
                                                           says: str,
                                                           confinement: Confinement) -> None:
    sub = _submission(here, "true")
    make(sub)  # type: ignore[operator]
    proc = _check(here)
    assert proc.returncode == 2, _said(proc)
    assert says in _said(proc), _said(proc)
    assert not (here / "out").exists()


REWRITE = ("printf 'name = \"hostile\"\\nruntime = \"python3\"\\n"
           "run = [\"{python}\", \"-m\", \"chinchon.sdk\", \"--bot\", \"greedy\"]\\n' > bot.toml")


def _declaration(here: Path, submission: str) -> Path:
    decl = here / "cup.toml"
    decl.write_text(f"""
name = "cup"
format = "round_robin"
games_per_pairing = 1
[time_control]
per_move = 2.0
bank = 30.0
[[participants]]
name = "a"
command = ["{{python}}", "-m", "chinchon.sdk", "--bot", "random"]
[[participants]]
name = "hostile"
submission = "{submission}"
""", encoding="utf-8")
    return decl


def _tournament_check(here: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*CLI, "tournament", "check", str(here / "cup.toml")],
                          capture_output=True, text=True, timeout=120, cwd=here)


def test_the_built_manifest_runs_and_is_pinned(here: Path, confinement: Confinement) -> None:
    """The submitted manifest runs a program that does not exist; its build writes the
    one that plays. The check plays the built one, and records it: the tournament takes
    the folder as checked and refuses it once its manifest or a file is changed."""
    _submission(here, REWRITE, run='run = ["./no-such-program"]\n')
    proc = _check(here)
    assert proc.returncode == 0, _said(proc)
    out = here / "out"
    assert (out / "bot.check.json").is_file()
    _declaration(here, "out/bot")
    good = _tournament_check(here)
    assert good.returncode == 0, _said(good)
    toml = out / "bot" / "bot.toml"
    toml.write_text(toml.read_text().replace("greedy", "random"))
    bad = _tournament_check(here)
    assert bad.returncode == 1, _said(bad)
    assert "'bot.toml' changed since it was checked" in _said(bad), _said(bad)
    toml.write_text(toml.read_text().replace("random", "greedy"))
    assert _tournament_check(here).returncode == 0
    (out / "bot" / "extra.py").write_text("x = 1\n")
    added = _tournament_check(here)
    assert added.returncode == 1 and "'extra.py' was added since" in _said(added), _said(added)


def test_an_unchecked_submission_with_a_build_is_refused_by_the_tournament(here: Path) -> None:
    _submission(here, "true")
    _declaration(here, "submission")
    proc = _tournament_check(here)
    assert proc.returncode == 1, _said(proc)
    assert "has a build and was not checked: chinchon bots check" in _said(proc), _said(proc)


PROBE = ("import socket, sys\n"
         "status = open('/proc/self/status').read()\n"
         "lines = [l for l in status.splitlines() if l.startswith(('NoNewPrivs', 'Seccomp:'))]\n"
         "try:\n    socket.socket(socket.AF_INET, socket.SOCK_STREAM).close(); inet = 'open'\n"
         "except OSError as e:\n    inet = f'refused {e.errno}'\n"
         "try:\n    socket.create_connection(('127.0.0.1', 1), timeout=5); tcp = 'connected'\n"
         "except OSError:\n    tcp = 'no'\n"
         "print(' '.join(' '.join(l.split()) for l in lines), 'inet', inet, 'tcp', tcp, file=sys.stderr)\n")


def test_a_build_is_confined_as_the_bot_is(here: Path, confinement: Confinement) -> None:
    """The build runs in the bot's own confinement (the same function, the same
    system-call filter): no new privileges, a seccomp filter, no TCP connection, and an
    INET socket refused exactly when the bot's is."""
    sub = _submission(here, "", extra="")
    (sub / "probe.py").write_text(PROBE)
    (sub / "bot.toml").write_text('name = "probe"\nruntime = "python3"\n'
                                  'build = ["{python}", "probe.py"]\n' + GREEDY)
    proc = _check(here)
    assert proc.returncode == 0, _said(proc)
    built = " ".join((here / "out" / "build.log").read_text().split())
    assert "NoNewPrivs: 1 Seccomp: 2" in built and "tcp no" in built, built
    bot = subprocess.run([*CLI, "practice", "--games", "1", "--sandbox", str(here / "out" / "bot"),
                          "--out", str(here / "p"), "--", "python3", "probe.py"],
                         capture_output=True, text=True, timeout=240, cwd=here)
    ran = " ".join((here / "p" / "bot-stderr.log").read_text().split()) if \
        (here / "p" / "bot-stderr.log").exists() else ""
    ran += " ".join(bot.stdout.split())
    inet = built.split("inet ")[1].split(" tcp")[0]
    assert f"inet {inet} tcp no" in ran, (built, ran)
