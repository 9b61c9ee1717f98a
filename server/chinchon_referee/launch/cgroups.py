"""A cgroup per sandboxed bot: memory, processes and CPU bounded for its whole tree.

:func:`detect` finds where this process may make cgroups, once:

- **cgroup v2** (one unified tree): under this process's own cgroup, which must have
  the ``memory``, ``pids`` and ``cpu`` controllers delegated to its children (systemd:
  ``systemd-run --user --scope -p Delegate=yes chinchon ...``). Limits: memory.max
  (and memory.swap.max 0), pids.max, cpu.max (the quota) and cpu.weight (equal for
  every bot). A bot's tree is killed with cgroup.kill.
- **cgroup v1** (a hierarchy per controller, as on this project's CI machines): the
  ``memory``, ``pids`` and ``cpu`` hierarchies, each under this process's own group.
  Limits: memory.limit_in_bytes (and memsw where swap is accounted), pids.max,
  cpu.cfs_quota_us over cpu.cfs_period_us and cpu.shares. Killed by signalling every
  process listed in its groups until none is left.

When neither can be had, :func:`detect` says why (:class:`Unavailable`) and the
sandbox falls back to rlimits alone (docs/security.md says what that loses).

A bot joins its cgroup before its sandbox is made: the launcher starts it through
``/bin/sh -c`` writing its own pid to the groups' ``cgroup.procs`` then exec'ing
bubblewrap, so every process of the bot is born inside (:meth:`BotCgroup.join_script`).
"""

from __future__ import annotations

import asyncio
import contextlib
import enum
import itertools
import os
import re
import shlex
import signal
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from .limits import MIB, Limits

CONTROLLERS = ("memory", "pids", "cpu")
#: The CPU period of a quota, in microseconds (the kernel's default).
PERIOD_US = 100_000
_serial = itertools.count(1)


class CgroupVersion(enum.Enum):
    V1 = "v1"
    V2 = "v2"


@dataclass(frozen=True)
class Unavailable:
    """Why no cgroup can be made here (said once at start-up)."""

    why: str


@dataclass(frozen=True)
class CgroupRoot:
    """Where this process makes its bots' cgroups: one folder (v2) or one per
    controller (v1), each made for this process (``chinchon-<pid>``)."""

    version: CgroupVersion
    #: controller → the folder under which bot groups are made (v2: the same for all).
    bases: dict[str, Path]

    def make(self, name: str, limits: Limits) -> BotCgroup:
        """A new cgroup for one bot, its limits written (OSError if the kernel refuses)."""
        leaf = f"{name}-{next(_serial)}"
        folders = sorted({base / leaf for base in self.bases.values()})
        group = BotCgroup(self.version, folders)
        try:
            for folder in folders:
                folder.mkdir()
            for path, value in _settings(self.version, self.bases, leaf, limits):
                _write(path, value)
        except OSError:
            group.remove()
            raise
        return group

    def remove(self) -> bool:
        """Remove this process's folders, and any bot group left in them; False while a
        folder stays (a killed bot's processes are still leaving it: try again)."""
        done = True
        for base in set(self.bases.values()):
            try:
                for leaf in base.iterdir():
                    if leaf.is_dir():
                        BotCgroup(self.version, [leaf]).remove()
                base.rmdir()
            except FileNotFoundError:
                pass  # gone already
            except OSError:
                done = False
        return done

    def removed(self, within: float) -> bool:
        """:meth:`remove`, again until it is done, for about ``within`` seconds (this
        blocks: it is for a run's very end, when nothing else is left to do)."""
        for pause in _pauses(within, 1.0):
            if self.remove():
                return True
            time.sleep(pause)
        return self.remove()


def _pauses(within: float, longest: float) -> Iterator[float]:
    """The pauses between attempts at removing a busy group, for about ``within``
    seconds: from 20 ms, growing by half each time, up to ``longest``."""
    deadline, pause = time.monotonic() + within, 0.02
    while time.monotonic() <= deadline:
        yield pause
        pause = min(pause * 1.5, longest)


def _settings(version: CgroupVersion, bases: dict[str, Path], leaf: str,
              limits: Limits) -> list[tuple[Path, str]]:
    memory = str(limits.memory_mb * MIB)
    quota = str(max(1000, round(limits.cpu * PERIOD_US)))
    if version is CgroupVersion.V2:
        d = bases["memory"] / leaf
        return [(d / "memory.max", memory), (d / "memory.swap.max", "0"),
                (d / "pids.max", str(limits.processes)), (d / "cpu.weight", "100"),
                (d / "cpu.max", f"{quota} {PERIOD_US}")]
    mem, pids, cpu = (bases[c] / leaf for c in CONTROLLERS)
    out = [(mem / "memory.limit_in_bytes", memory)]
    if (mem / "memory.memsw.limit_in_bytes").exists():
        out.append((mem / "memory.memsw.limit_in_bytes", memory))
    return [*out, (pids / "pids.max", str(limits.processes)),
            (cpu / "cpu.cfs_period_us", str(PERIOD_US)), (cpu / "cpu.cfs_quota_us", quota),
            (cpu / "cpu.shares", "1024")]


def _write(path: Path, value: str) -> None:
    if not path.exists() and path.name.startswith("memory.swap"):
        return  # no swap accounting: nothing to bound
    path.write_text(value)


@dataclass
class BotCgroup:
    """One bot's cgroup (a folder, or one per controller under v1)."""

    version: CgroupVersion
    folders: list[Path]

    def join_script(self) -> list[str]:
        """``/bin/sh -c`` arguments that put the shell in this group, then exec the rest
        of the command line (exit 125 if the kernel refuses)."""
        procs = " ".join(shlex.quote(str(f / "cgroup.procs")) for f in self.folders)
        return ["/bin/sh", "-c", f'for f in {procs}; do echo $$ > "$f" || exit 125; done; '
                'exec "$@"', "chinchon-cgroup"]

    def pids(self) -> set[int]:
        found: set[int] = set()
        for folder in self.folders:
            with contextlib.suppress(OSError, ValueError):
                found.update(int(p) for p in (folder / "cgroup.procs").read_text().split())
        return found

    def oom_kills(self) -> int:
        """How many of its processes the kernel killed for memory (0 if unknown)."""
        for folder in self.folders:
            for name, key in (("memory.events", "oom_kill"), ("memory.oom_control", "oom_kill")):
                with contextlib.suppress(OSError, ValueError):
                    for line in (folder / name).read_text().splitlines():
                        k, _, v = line.partition(" ")
                        if k == key:
                            return int(v)
        return 0

    def kill(self) -> None:
        """Every process in it killed (SIGKILL), however it forked."""
        if self.version is CgroupVersion.V2:
            with contextlib.suppress(OSError):
                (self.folders[0] / "cgroup.kill").write_text("1")
                return
        for _ in range(100):  # a fork between the read and the kill: read again
            pids = self.pids()
            if not pids:
                return
            for pid in pids:
                with contextlib.suppress(OSError):
                    os.kill(pid, signal.SIGKILL)

    def remove(self) -> bool:
        """Kill what is left and remove the folders; False while a folder stays (its
        processes are still dying: try again)."""
        self.kill()
        for folder in self.folders:
            with contextlib.suppress(FileNotFoundError):
                try:
                    folder.rmdir()
                except OSError:
                    return False
        return True

    async def removed(self, within: float = 5.0) -> bool:
        """:meth:`remove`, again until it is done, for about ``within`` seconds. Killed
        processes take a moment to leave their group; under load, a group whose last
        process has exited can stay busy for a minute (EBUSY with no process listed:
        the process is not yet reaped), hence the growing pause between attempts."""
        for pause in _pauses(within, 2.0):
            if self.remove():
                return True
            await asyncio.sleep(pause)
        return self.remove()


def _mounts() -> list[tuple[str, Path, set[str]]]:
    """(filesystem type, mount point, options) of each cgroup mount."""
    found = []
    with contextlib.suppress(OSError):
        for line in Path("/proc/self/mountinfo").read_text().splitlines():
            left, _, right = line.partition(" - ")
            fstype, _source, opts = (right.split() + ["", ""])[:3]
            if fstype in ("cgroup", "cgroup2"):
                point = Path(left.split()[4])
                found.append((fstype, point, set(opts.split(","))))
    return found


def _own_paths() -> dict[str, str]:
    """controller ("" for v2) → this process's cgroup path, from /proc/self/cgroup."""
    own = {}
    with contextlib.suppress(OSError):
        for line in Path("/proc/self/cgroup").read_text().splitlines():
            _, controllers, path = line.split(":", 2)
            for c in controllers.split(",") if controllers else [""]:
                own[c] = path
    return own


def _base_name() -> str:
    """This confinement's folder: the process's, and which of its confinements."""
    return f"chinchon-{os.getpid()}-{next(_serial)}"


_STALE = re.compile(r"chinchon-(\d+)-\d+")


def _sweep_stale(parent: Path) -> None:
    """Remove the empty folders that a process now gone left in ``parent`` (a referee
    killed with kill -9 never closed its confinement). A folder that still holds a
    process cannot be removed, and none is killed: only what is empty goes."""
    with contextlib.suppress(OSError):
        for old in parent.iterdir():
            found = _STALE.fullmatch(old.name)
            if found is None or not old.is_dir() or _alive(int(found.group(1))):
                continue
            with contextlib.suppress(OSError):
                for leaf in old.iterdir():
                    if leaf.is_dir():
                        leaf.rmdir()
                old.rmdir()


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True  # someone else's: alive
    return True


def _made(bases: dict[str, Path], version: CgroupVersion) -> CgroupRoot | str:
    """A root made at ``bases`` (each folder created and writable), or why not; the
    folders left by processes now gone are removed first (:func:`_sweep_stale`)."""
    for base in set(bases.values()):
        _sweep_stale(base.parent)
        try:
            base.mkdir(exist_ok=True)
            probe = base / "probe"
            probe.mkdir()
            probe.rmdir()
        except OSError as e:
            return f"cgroup {version.value}: cannot make groups in {base.parent}: {e.strerror}"
    return CgroupRoot(version, bases)


def _v2(point: Path, own: str) -> CgroupRoot | str:
    here = point / own.lstrip("/")
    try:
        enabled = set((here / "cgroup.subtree_control").read_text().split())
        if not set(CONTROLLERS) <= enabled:
            (here / "cgroup.subtree_control").write_text(
                " ".join(f"+{c}" for c in CONTROLLERS if c not in enabled))
    except OSError as e:
        return (f"cgroup v2: the memory, pids and cpu controllers are not delegated to "
                f"{here} ({e.strerror}); run under a delegated cgroup, e.g. systemd-run "
                "--user --scope -p Delegate=yes")
    base = here / _base_name()
    made = _made({c: base for c in CONTROLLERS}, CgroupVersion.V2)
    if isinstance(made, CgroupRoot):
        try:
            (base / "cgroup.subtree_control").write_text(" ".join(f"+{c}" for c in CONTROLLERS))
        except OSError as e:
            made.remove()
            return f"cgroup v2: cannot delegate controllers in {base}: {e.strerror}"
    return made


def detect() -> CgroupRoot | Unavailable:
    """Where this process can make its bots' cgroups, or why it cannot."""
    mounts, own = _mounts(), _own_paths()
    v1 = {c: point for fstype, point, opts in mounts if fstype == "cgroup"
          for c in CONTROLLERS if c in opts}
    if set(v1) == set(CONTROLLERS):
        name = _base_name()
        bases = {c: v1[c] / own.get(c, "/").lstrip("/") / name
                 for c in CONTROLLERS}
        made = _made(bases, CgroupVersion.V1)
        return made if isinstance(made, CgroupRoot) else Unavailable(made)
    v2 = [point for fstype, point, _ in mounts if fstype == "cgroup2"]
    for point in v2:
        try:
            controllers = set((point / own.get("", "/").lstrip("/") / "cgroup.controllers")
                              .read_text().split())
        except OSError:
            continue
        if set(CONTROLLERS) <= controllers:
            made2 = _v2(point, own.get("", "/"))
            return made2 if isinstance(made2, CgroupRoot) else Unavailable(made2)
    return Unavailable("no cgroup with the memory, pids and cpu controllers is mounted "
                       "(v1) or available to this process (v2)")
