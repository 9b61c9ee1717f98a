"""A submission's build: confined like the bot, into a bounded area, copied out bounded.

The build runs in the same sandbox as the running bot (:meth:`.confine.Confinement.prepare`:
bubblewrap's namespaces and no network, the same system-call filter, no new privileges,
the bot's limits and cgroup), with two differences: the submission (already a bounded
copy, :mod:`.intake`) is bound read-only at :data:`.sandbox.SOURCE_INSIDE`, and the
folder it builds in is a tmpfs of ``build_disk_mb`` at the path the bot will run from
(so paths a build writes into its files hold). A shell inside copies the source in,
runs the build (its output, both streams, to ``build.log``), and, when it succeeded,
sends what the folder holds out as a tar stream on its stdout; the referee reads that
stream as it comes with the same bounded copy as a submission's (apparent size
``build_disk_mb``, the entry bound; no special files, no links out, no setuid, setgid
or sticky bit, holes kept) into a new 0700 folder. The tmpfs goes with the sandbox: the
build never writes to the organizer's disk but its log.

The organizer bounds it (:class:`BuildBounds`: ``--build-disk-mb``,
``--build-timeout``); a manifest's ``build_timeout`` may only ask for less.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import signal
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from .bots import Sandboxed, start_confined
from .confine import Confinement
from .intake import Bounds, IntakeError, take_tar
from .limits import Limits
from .sandbox import SOURCE_INSIDE, SandboxSpec

#: Exit status of the shell when the source does not fit in the build area.
NO_ROOM = 97
FULL = "chinchon: the build area is full"
#: The shell around the build: its stdout kept on fd 3 for the stream alone.
_SHELL = f"""exec 3>&1 1>&2
cp -R {SOURCE_INSIDE}/. . || {{ echo "{FULL} (copying the submission in)"; exit {NO_ROOM}; }}
python="$1"; shift
"$@" 3>&-
rc=$?
if [ "$rc" -ne 0 ]; then
  [ "$(stat -f -c %a .)" = 0 ] && echo "{FULL}"
  exit "$rc"
fi
exec "$python" -c "$PACK" 1>&3 3>&-
"""
#: What sends the built folder out: a tar stream (links as links, never followed).
_PACK = """import sys, tarfile
with tarfile.open(fileobj=sys.stdout.buffer, mode="w|", format=tarfile.PAX_FORMAT) as t:
    t.add(".", recursive=True)
"""


#: The organizer's bounds on its bounds (inclusive): ``build_disk_mb`` and
#: ``build_timeout`` (seconds), as flags or declaration keys.
DISK_MB = (1, 64 * 1024)
TIMEOUT_S = (1, 3600)


@dataclass(frozen=True)
class BuildBounds:
    """The organizer's bounds on a build."""

    #: The build area's size (a tmpfs), and the apparent size of what is copied out.
    disk_mb: int = 256
    #: Seconds from its start to the end of its copy-out; a manifest's
    #: ``build_timeout`` may ask for less, never more.
    timeout: float = 300.0
    #: Entries (files, folders, links) it may leave.
    files: int = 20_000

    def __post_init__(self) -> None:
        if isinstance(self.disk_mb, bool) or not isinstance(self.disk_mb, int) or \
                not DISK_MB[0] <= self.disk_mb <= DISK_MB[1]:
            raise ValueError(f"build_disk_mb: between {DISK_MB[0]} and {DISK_MB[1]}, got "
                             f"{self.disk_mb!r}")
        if isinstance(self.timeout, bool) or not isinstance(self.timeout, int | float) or \
                not TIMEOUT_S[0] <= self.timeout <= TIMEOUT_S[1]:
            raise ValueError(f"build_timeout: between {TIMEOUT_S[0]} and {TIMEOUT_S[1]} "
                             f"seconds, got {self.timeout!r}")

    def timeout_for(self, asked: float | None) -> float:
        """The build's time: the organizer's, or the manifest's if lower."""
        return self.timeout if asked is None else min(self.timeout, asked)


async def build(confinement: Confinement, source: Path, dest: Path, argv: Sequence[str],
                limits: Limits, bounds: BuildBounds, timeout: float, log: Path,
                runtime: tuple[Path, ...], name: str = "bot") -> str | None:
    """Build ``source`` with ``argv`` (``{python}`` is the referee's Python) into
    ``dest`` (new): None when it succeeded and what it left was taken, else why
    (``dest`` then does not exist)."""
    dest.mkdir(mode=0o700)
    incoming = dest.with_name(dest.name + ".incoming")
    spec = SandboxSpec(dest, None, limits, runtime, build_from=source, build_mb=bounds.disk_mb)
    argv = [sys.executable if part == "{python}" else part for part in argv]
    shell = ["/bin/sh", "-c", _SHELL, "build", sys.executable, *argv]
    r, w = os.pipe()
    try:
        proc = await start_confined(shell, Sandboxed(confinement, spec, f"{name}-build"),
                                    stdout=w, stderr=log, env={"PACK": _PACK})
    except BaseException:
        os.close(r)
        raise
    finally:
        os.close(w)
    out = Bounds(size_mb=bounds.disk_mb, files=bounds.files)
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    taking = loop.run_in_executor(None, _take, r, incoming, out)
    late = f"the build did not finish within {timeout:g} s (build_timeout)"
    why: str | None = late
    try:
        await asyncio.wait_for(asyncio.shield(taking), timeout)
        # The stream ended: the shell's end follows at once (whatever else of the
        # build still runs ends with it), within the same time.
        await asyncio.wait_for(proc.wait(), max(0.0, deadline - loop.time()))
        why = None
    except TimeoutError:
        pass
    except IntakeError as e:
        why = f"what the build left is refused: {e}"
    finally:
        # Killed for ``why`` (or an error here): the stream ends with it, and the
        # reader's thread.
        code = await proc.kill()
        with contextlib.suppress(Exception):
            await taking
    failed = _failed(code, why, log, bounds)
    if failed is not None:
        shutil.rmtree(incoming, ignore_errors=True)
        os.rmdir(dest)
        return failed
    os.rmdir(dest)
    os.rename(incoming, dest)
    return None


def _take(fd: int, into: Path, bounds: Bounds) -> None:
    with open(fd, "rb", buffering=0) as stream:
        take_tar(stream, into, bounds)


def _failed(code: int, why: str | None, log: Path, bounds: BuildBounds) -> str | None:
    """Why the build failed (None: it did not), its log's end included."""
    if code == 0 or (code == -signal.SIGKILL and why is not None):
        return why  # built, and taken (None) or refused; or killed for ``why``
    tail = log.read_bytes()[-2000:].decode(errors="replace")
    if FULL in tail or code == NO_ROOM:
        return (f"the build area is full (build_disk_mb = {bounds.disk_mb} MiB; exit code "
                f"{code}); the end of {log}:\n{tail}")
    return f"the build failed (exit code {code}); the end of {log}:\n{tail}"

