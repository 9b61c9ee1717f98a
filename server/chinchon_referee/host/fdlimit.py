"""The open-file limit of a process (``RLIMIT_NOFILE``): raised to what the system
allows at start, and what is left of it.

Every bot stream's connection, every web connection, every database file and pipe is a
file descriptor; the common default soft limit (1,024) is far below what a referee may
need, and any process may raise its soft limit up to its hard limit. The referee and
its web view are separate processes, each with its own table: web connections can never
take the descriptors that bots and organizers need (docs/security.md#a-spectator)."""

from __future__ import annotations

import os

from ..logs import get_logger

log = get_logger("limits")

try:
    import resource
except ImportError:  # not on Windows: no such limit to raise
    resource = None  # type: ignore[assignment]


def raise_nofile() -> tuple[int, int]:
    """Raise the soft open-file limit to the hard one; (soft, hard) after it. A system
    that refuses keeps the limit as it was (logged)."""
    if resource is None:
        return (1 << 16, 1 << 16)
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    want = hard if hard != resource.RLIM_INFINITY else max(soft, 1 << 20)
    if soft != resource.RLIM_INFINITY and soft < want:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (want, hard))
            soft = want
        except (ValueError, OSError) as e:
            log.warning("fd_limit_not_raised", soft=soft, hard=hard, error=str(e))
    return int(soft), int(hard)


def open_fds() -> int:
    """File descriptors open in this process now (0 where the system does not say)."""
    for where in ("/proc/self/fd", "/dev/fd"):
        try:
            return len(os.listdir(where))
        except OSError:
            continue
    return 0


def check_reserve(soft: int, needed: int, what: str) -> None:
    """Log the limit; warn when it is below ``needed`` descriptors (``what`` says for
    whom), naming the command that raises it."""
    if soft < needed:
        log.warning("fd_limit_low", limit=soft, needed=needed, purpose=what,
                    note="raise it (ulimit -n, or LimitNOFILE= in a systemd unit): past "
                    "it, new connections are refused")
    else:
        log.info("fd_limit", limit=soft)
