"""Child processes start without running Python in the forked child: under uvloop (the
referee's loop), the loop's own spawn runs the interpreter's after-fork hooks there, and
with other threads running a child was seen to die with SIGSEGV before it could exec."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from pathlib import Path

import uvloop
from chinchon_referee.host.processes import spawn

_MARK: list[str] = []


def _mark_child() -> None:
    # Runs in a forked child only if Python's after-fork hooks run there.
    if _MARK:
        Path(_MARK[0]).write_text("after-fork hook ran in the child", encoding="utf-8")


os.register_at_fork(after_in_child=_mark_child)


def _run_on_uvloop(main: asyncio.Future[None] | object) -> None:
    with asyncio.Runner(loop_factory=uvloop.new_event_loop) as runner:
        runner.run(main)  # type: ignore[arg-type]


def test_spawn_runs_no_python_in_the_forked_child(tmp_path: Path) -> None:
    mark = tmp_path / "mark"
    _MARK[:] = [str(mark)]

    async def main() -> None:
        child = await spawn([sys.executable, "-c", "print('hello')"], stdout=subprocess.PIPE)
        assert child.stdout is not None
        assert await child.stdout.read() == b"hello\n"
        assert await child.wait() == 0 and child.returncode == 0

    try:
        _run_on_uvloop(main())
    finally:
        _MARK.clear()
    assert not mark.exists()


def test_the_loops_own_spawn_would_run_it(tmp_path: Path) -> None:
    """The hazard itself: what spawn avoids is real under uvloop."""
    mark = tmp_path / "mark"
    _MARK[:] = [str(mark)]

    async def main() -> None:
        proc = await asyncio.create_subprocess_exec(sys.executable, "-c", "pass")
        assert await proc.wait() == 0

    try:
        _run_on_uvloop(main())
    finally:
        _MARK.clear()
    assert mark.exists()


def test_a_child_that_is_killed_or_writes_to_its_input_is_seen_to_end(tmp_path: Path) -> None:
    async def main() -> None:
        cat = await spawn(["cat"], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        assert cat.stdin is not None and cat.stdout is not None
        cat.stdin.write(b"ping\n")
        assert await cat.stdout.readline() == b"ping\n"
        cat.stdin.close()
        assert await asyncio.wait_for(cat.wait(), 30) == 0
        sleeper = await spawn(["sleep", "600"])
        assert sleeper.returncode is None
        sleeper.kill()
        assert await asyncio.wait_for(sleeper.wait(), 30) == -9
        sleeper.kill()  # an ended child: nothing happens

    _run_on_uvloop(main())
