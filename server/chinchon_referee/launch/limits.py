"""What a sandboxed bot may use: the organizer's limits, their bounds, their defaults.

One :class:`Limits` per bot (a tournament's ``[sandbox]`` table, a participant's own
``sandbox`` table over it, ``chinchon bots check``'s flags). Two layers apply them
(docs/security.md):

- **rlimits**, set inside the sandbox by util-linux's ``prlimit`` just before the bot's
  program starts, so they bind every process of the bot and nothing of the referee:
  open files, file size (each file it writes, its log included: a bot that writes past
  it gets SIGXFSZ), core dumps off, processes (RLIMIT_NPROC: not enforced for root,
  which the kernel exempts; the pids cgroup is what bounds a root organizer's bots),
  CPU seconds if asked, and the address space when no memory cgroup bounds it;
- **cgroups** (:mod:`.cgroups`), where this machine lets this user make them: memory,
  processes and a CPU quota (``cpu`` cores) with an equal weight per bot, so a bot
  that spins takes at most its quota from the others.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..declarations.errors import FieldError
from ..texts import clip, shown

MIB = 1024 * 1024

#: Each field's bounds (inclusive): a limit outside them is refused with its name.
BOUNDS: dict[str, tuple[float, float]] = {
    "memory_mb": (16, 64 * 1024),
    "processes": (4, 4096),
    "open_files": (16, 65536),
    "file_size_mb": (1, 64 * 1024),
    "tmp_mb": (1, 16 * 1024),
    "cpu": (0.05, 256.0),
    "cpu_seconds": (0, 7 * 24 * 3600),
}


#: The limits whose 0 means none (no bound at all), not the lowest bound.
NONE_AT_ZERO = frozenset({"cpu_seconds"})


def looseness(name: str, value: float) -> float:
    """How much limit ``name`` at ``value`` lets a bot use: the value, or infinity for a
    "0: none"."""
    return math.inf if name in NONE_AT_ZERO and value == 0 else value


def tighter(name: str, a: float, b: float) -> float:
    """The tighter of two values of limit ``name``."""
    return a if looseness(name, a) <= looseness(name, b) else b


#: A limit the organizer set that is unknown, of the wrong type or out of bounds: the
#: declarations' one error, naming the limit (its name of old, which callers catch).
LimitError = FieldError


@dataclass(frozen=True)
class Limits:
    """A sandboxed bot's limits (the defaults suit a bot of the samples' kind: the
    Python SDK's bot uses ~60 MiB and ~10 threads; the Node bot ~70 MiB)."""

    #: Memory of all its processes together (cgroup memory.max; without a memory
    #: cgroup, each process's address space is bounded to twice this instead).
    memory_mb: int = 512
    #: Processes and threads together (cgroup pids.max, and RLIMIT_NPROC).
    processes: int = 64
    #: Open file descriptors per process (RLIMIT_NOFILE).
    open_files: int = 256
    #: Largest file it may write, its stdout/stderr log included (RLIMIT_FSIZE).
    file_size_mb: int = 16
    #: Size of its private writable /tmp (a tmpfs: counted in its memory where a
    #: memory cgroup is in force).
    tmp_mb: int = 64
    #: CPU cores' worth of time it may use at once (cgroup cpu quota).
    cpu: float = 1.0
    #: Total CPU seconds per process (RLIMIT_CPU); 0: none (a tournament is long).
    cpu_seconds: int = 0

    @property
    def shm_mb(self) -> int:
        """Size of its ``/dev/shm`` (a tmpfs, like /tmp: POSIX shared memory and
        semaphores, Python's multiprocessing): a quarter of its memory."""
        return self.memory_mb // 4

    def __post_init__(self) -> None:
        for f in dataclasses.fields(self):
            value = getattr(self, f.name)
            low, high = BOUNDS[f.name]
            kind = float if f.type == "float" else int
            if isinstance(value, bool) or not isinstance(value, int | float) or \
                    (kind is int and not isinstance(value, int)) or not math.isfinite(value):
                raise LimitError(("sandbox", f.name), f"a number is needed, got {shown(value)}")
            if not low <= value <= high:
                raise LimitError(("sandbox", f.name),
                                 f"between {low:g} and {high:g}, got {shown(value)}")

    def over(self, changes: Mapping[str, Any]) -> Limits:
        """These limits with ``changes`` (TOML keys, the field names) applied."""
        unknown = sorted(set(changes) - {f.name for f in dataclasses.fields(self)})
        if unknown:
            known = ", ".join(f.name for f in dataclasses.fields(self))
            raise LimitError("sandbox", f"unknown limit {shown(unknown[0])} (known: {known})")
        return dataclasses.replace(self, **changes)

    def within(self, asked: Mapping[str, Any]) -> Limits:
        """The limits a submission asks for (its manifest's ``[limits]``), each kept
        within these: the tighter of the two wins, a "0: none" (:data:`NONE_AT_ZERO`)
        being the loosest of all, so a submission's 0 never lifts a bound of these, and
        any value it states bounds what these leave unbounded. LimitError naming a limit
        it asks for that is unknown, of the wrong type or out of bounds."""
        wanted = self.over(asked)  # checks each asked value as the organizer's are
        return self.over({k: tighter(k, getattr(self, k), getattr(wanted, k)) for k in asked})

    @classmethod
    def from_pairs(cls, pairs: list[str]) -> Limits:
        """``NAME=VALUE`` pairs (``--limit``) over the defaults (LimitError naming a bad
        one)."""
        changes: dict[str, float | int] = {}
        for pair in pairs:
            key, sep, value = pair.partition("=")
            if not sep:
                raise LimitError(f"--limit {shown(pair)}: NAME=VALUE, e.g. memory_mb=256")
            try:
                changes[key] = int(value) if value.isdigit() else float(value)
            except ValueError:
                raise LimitError(f"--limit {clip(key, quote='')}: a number, got {shown(value)}") from None
        return cls().over(changes)

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    def prlimit_args(self, memory_cgroup: bool) -> list[str]:
        """``prlimit``'s options for these limits (soft = hard: the bot cannot raise
        them; with no memory cgroup, the address space bounds memory instead)."""
        args = [f"--nofile={self.open_files}", f"--fsize={self.file_size_mb * MIB}",
                f"--nproc={self.processes}", "--core=0"]
        if self.cpu_seconds:
            args.append(f"--cpu={self.cpu_seconds}")
        if not memory_cgroup:
            args.append(f"--as={2 * self.memory_mb * MIB}")
        return args
