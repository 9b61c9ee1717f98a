"""This machine's sandboxing, found once per run: bubblewrap, and cgroups or why not.

:class:`Confinement` is what ``tournament run``, ``practice`` and ``bots check`` hold
while they launch sandboxed bots: :meth:`Confinement.find` checks that bubblewrap can
make a sandbox here (:class:`.sandbox.SandboxUnavailable` otherwise: a sandboxed bot is
then refused, never run unconfined) and where cgroups can be made; without cgroups it
carries the one warning to print at start-up (rlimits alone bound the bots: no fair CPU
share, memory per process only). :meth:`Confinement.prepare` turns one bot's command
into the sandboxed command line and its cgroup.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ..logs import get_logger
from .cgroups import BotCgroup, CgroupRoot, Unavailable, detect
from .sandbox import SandboxSpec, command, find_bwrap
from .seccomp import program_fd

log = get_logger("sandbox")
#: How long :meth:`Confinement.close` keeps trying to remove the cgroup folders.
CLOSE_WITHIN = 30.0


@dataclass
class Confinement:
    bwrap: str
    cgroups: CgroupRoot | Unavailable

    @classmethod
    def find(cls) -> Confinement:
        """This machine's sandboxing (SandboxUnavailable naming what is missing)."""
        bwrap = find_bwrap()
        found = cls(bwrap, detect())
        if isinstance(found.cgroups, Unavailable):
            log.warning("no_cgroups", why=found.cgroups.why)
        return found

    @property
    def warning(self) -> str | None:
        """What to tell the organizer at start-up when cgroups are not to be had."""
        if isinstance(self.cgroups, Unavailable):
            return (f"sandboxed bots run without cgroups ({self.cgroups.why}): rlimits "
                    "alone bound them (memory per process, no fair CPU share; "
                    "docs/security.md)")
        return None

    def prepare(self, name: str, spec: SandboxSpec,
                argv: Sequence[str]) -> tuple[list[str], BotCgroup | None, int | None]:
        """The command line that runs ``argv`` confined by ``spec`` (its environment:
        :func:`.sandbox.environment`), its cgroup (None without cgroups) and the file
        descriptor of its system-call filter, to pass to it and close once it is
        started (None on an architecture without one). OSError if the cgroup cannot be
        made."""
        group = None
        if isinstance(self.cgroups, CgroupRoot):
            group = self.cgroups.make(_safe(name), spec.limits)
        fd = program_fd()
        line = command(self.bwrap, spec, argv, memory_cgroup=group is not None, seccomp_fd=fd)
        return ([*group.join_script(), *line] if group else line), group, fd

    def close(self, within: float = CLOSE_WITHIN) -> None:
        """Remove this process's cgroup folders and any bot group still in them. A bot
        killed just now can keep its group busy for a while on a loaded machine (its
        processes not yet reaped), so this tries again for up to ``within`` seconds, then
        logs what stays (``cgroup_left``)."""
        if isinstance(self.cgroups, CgroupRoot) and not self.cgroups.removed(within):
            log.warning("cgroup_left", folders=sorted(str(b) for b in self.cgroups.bases.values()))


def _safe(name: str) -> str:
    return "".join(ch if ch.isalnum() or ch in "-_" else "_" for ch in name)[:48] or "bot"
