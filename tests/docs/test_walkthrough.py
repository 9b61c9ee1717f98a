"""docs/walkthrough.md as written: every ``sh`` block, in order, in one bash
shell, in an empty temporary folder, on loopback; so the page cannot drift from the
commands again.

The page's own conventions (stated at its top): ``localhost`` stands for
``referee.example.org``, ``127.0.0.1`` for ``0.0.0.0`` and a free port for ``50051``; a
block after ``<!-- walkthrough: background[, wait for "TEXT"] -->`` keeps running (the
server, the bots): it is started in the background, and the test waits until its output
holds TEXT; a block after ``<!-- walkthrough: file NAME -->`` is written to NAME. The
folder gets ``sample_bots/`` (linked) and the C++ bot built as ``build/cpp-bot/``.

Each foreground block runs in the same shell (its variables carry over, ``set -e``: the
first failing command ends the test, with the transcript); a background block that exits
with an error fails it too. Then what a reader must be able to rely on is checked:
the secret of ``--token-from`` never printed, the rotated ``alice.token`` replaced and
private, every bot playing over TLS, the export's report like ``tournament run``'s.
"""

from __future__ import annotations

import os
import re
import select
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.support.helpers import ROOT
from tests.support.serve import free_port

DOC = ROOT / "docs" / "walkthrough.md"
MARK = re.compile(r"<!-- walkthrough: (background(?:, wait for \"(?P<wait>[^\"]+)\")?"
                  r"|file (?P<file>\S+)) -->")
FENCE = re.compile(r"^```(\w*)\n(.*?)^```", re.M | re.S)
DONE = "__walkthrough_block_done__"


@dataclass
class Block:
    lang: str
    text: str
    #: "run", "background" or "file".
    kind: str = "run"
    wait: str | None = None
    file: str | None = None


def blocks(doc: str) -> list[Block]:
    """The page's fenced blocks in order, each with the comment that marks it, if any
    (the comment must be the line just before the fence)."""
    out = []
    for m in FENCE.finditer(doc):
        before = doc[:m.start()].rstrip("\n").rsplit("\n", 1)[-1]
        mark = MARK.fullmatch(before.strip())
        b = Block(m.group(1), m.group(2))
        if mark and mark.group("file"):
            b.kind, b.file = "file", mark.group("file")
        elif mark:
            b.kind, b.wait = "background", mark.group("wait")
        out.append(b)
    return out


def read(log: Path) -> str:
    """What a background block printed so far ("" before its shell made the file)."""
    try:
        return log.read_text(errors="replace")
    except FileNotFoundError:
        return ""


def localized(text: str, port: int) -> str:
    """A block as run here: loopback and a free port (the page's stated convention)."""
    return (text.replace("0.0.0.0:50051", f"127.0.0.1:{port}")
            .replace("referee.example.org", "localhost").replace("50051", str(port)))


def test_the_page_marks_its_blocks() -> None:
    """The parser sees the page's conventions (a test of the test): the server and the
    three bots run in the background, the server waited for, the TOML written."""
    found = blocks(DOC.read_text(encoding="utf-8"))
    kinds = [(b.kind, b.wait, b.file) for b in found if b.kind != "run"]
    assert kinds == [("background", "listening", None), ("file", None, "league.toml"),
                     ("background", None, None), ("background", None, None),
                     ("background", None, None)]
    assert {b.lang for b in found if b.kind != "file"} == {"sh"}


class Shell:
    """One bash process that runs the blocks; its output is read up to each block's end
    marker, and the background blocks' logs are watched for a failure meanwhile."""

    def __init__(self, folder: Path, env: dict[str, str]) -> None:
        self.folder = folder
        self.proc = subprocess.Popen(["bash", "--norc", "--noprofile"], cwd=folder, env=env,
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.STDOUT, start_new_session=True)
        self.transcript: list[str] = []
        self.background: list[Path] = []
        self._pending = b""
        self.send("set -eo pipefail")

    def send(self, script: str) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(script.encode() + b"\n")
        self.proc.stdin.flush()

    def check_background(self) -> None:
        for log in self.background:
            m = re.search(r"__exit__ (\d+)", read(log))
            if m and m.group(1) != "0":
                raise AssertionError(f"background block {log.name} exited {m.group(1)}:\n"
                                     + read(log)[-4000:])

    def run(self, text: str, timeout: float) -> str:
        """Run a block in the shell; its output."""
        self.transcript.append(f"$ {text}")
        self.send(f"{text}\necho {DONE}")
        assert self.proc.stdout is not None
        fd, deadline, out = self.proc.stdout.fileno(), time.monotonic() + timeout, b""
        while DONE.encode() not in self._pending:
            self.check_background()
            left = deadline - time.monotonic()
            if left <= 0:
                raise AssertionError(f"block did not finish in {timeout:g} s:\n{text}\n"
                                     + self._pending.decode(errors="replace")[-4000:])
            ready, _, _ = select.select([fd], [], [], min(left, 0.5))
            if ready:
                chunk = os.read(fd, 65536)
                if not chunk:
                    raise AssertionError(
                        "the shell stopped (a command failed, set -e):\n" + "\n".join(
                            self.transcript[-3:]) + "\n" + self._pending.decode(errors="replace"))
                self._pending += chunk
        out, _, self._pending = self._pending.partition(DONE.encode() + b"\n")
        text_out = out.decode(errors="replace")
        self.transcript.append(text_out)
        return text_out

    def start(self, text: str, n: int) -> Path:
        """A background block: its output (and ``__exit__ CODE`` when it ends) in a log."""
        log = self.folder / f"background-{n}.log"
        self.background.append(log)
        self.run(f"( {{ {text}\n}} ; echo \"__exit__ $?\" ) > {log.name} 2>&1 &", 30)
        return log

    def close(self) -> None:
        """Stop whatever still runs in the shell's session (the server, any bot)."""
        try:
            os.killpg(self.proc.pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
        try:
            self.proc.wait(30)
        except subprocess.TimeoutExpired:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait(30)


def wait_for(log: Path, text: str, timeout: float, shell: Shell) -> None:
    deadline = time.monotonic() + timeout
    while text not in read(log):
        shell.check_background()
        if time.monotonic() > deadline:
            raise AssertionError(f"{log.name}: no {text!r} in {timeout:g} s:\n"
                                 + read(log)[-4000:])
        time.sleep(0.05)  # a file another process writes: nothing to wait on but it


@pytest.mark.slow
@pytest.mark.timeout(900)
def test_every_command_of_the_walkthrough_works_as_written(tmp_path: Path, cpp_bot: Path) -> None:
    folder = tmp_path / "league"
    folder.mkdir()
    (folder / "sample_bots").symlink_to(ROOT / "sample_bots")
    (folder / "build").mkdir()
    (folder / "build" / "cpp-bot").symlink_to(cpp_bot.parent)
    port = free_port()
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("CHINCHON_") and k not in ("GRPC_DEFAULT_SSL_ROOTS_FILE_PATH",)}
    env.update(PATH=f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}",
               COLUMNS="200", PYTHONUNBUFFERED="1")
    shell = Shell(folder, env)
    outputs: list[str] = []
    try:
        for n, b in enumerate(blocks(DOC.read_text(encoding="utf-8"))):
            text = localized(b.text, port)
            if b.kind == "file":
                assert b.file is not None
                (folder / b.file).write_text(text, encoding="utf-8")
            elif b.kind == "background":
                log = shell.start(text, n)
                if b.wait:
                    wait_for(log, b.wait, 120, shell)
            else:
                outputs.append(shell.run(text, 600))
        # Every bot ended by itself, dismissed after the league: exit 0.
        for log in shell.background[1:]:
            wait_for(log, "__exit__ 0", 120, shell)
    finally:
        shell.close()
    said = "\n".join(outputs)
    carol = (folder / "carol.token").read_text().strip()
    assert len(carol) == 48 and carol not in said, "--token-from printed the secret back"
    assert "the one in carol.token (not shown)" in said
    alice = (folder / "alice.token").read_text().strip()
    assert alice.startswith("tok_") and alice not in said
    assert (folder / "alice.token").stat().st_mode & 0o077 == 0
    assert "new token of alice: written to alice.token" in said
    assert "revoked carol" in said and "tournament t-" in said and "is finished" in said
    report = (folder / "results" / "league" / "report.md").read_text(encoding="utf-8")
    for line in ("- **date**:", "- **duration**:", "## Rules", "## Policies", "time control",
                 "![ratings](ratings.svg)"):
        assert line in report, line
    assert (folder / "results" / "league" / "ratings.svg").read_text().startswith("<svg")
    assert "data:image" not in report
    for name in ("alice", "bob", "carol"):
        assert re.search(rf"\| \d+ \| {name} \| ", report), name
