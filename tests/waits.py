"""The one polling helper of the tests, for conditions that have no event to wait on
(a bot process's printed lines, a SQLite file written by another process)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable

#: How often a condition is looked at again.
POLL = 0.02


async def until(condition: Callable[[], object], what: str, timeout: float = 30) -> None:
    """Wait until ``condition()`` is true; after ``timeout`` s fail saying ``what`` did
    not happen (and the condition's last value, when it is not a plain bool)."""
    deadline = asyncio.get_running_loop().time() + timeout
    while not (value := condition()):
        if asyncio.get_running_loop().time() > deadline:
            detail = "" if isinstance(value, bool) else f" (last: {value!r})"
            raise AssertionError(f"{what}: not in {timeout:g} s{detail}")
        await asyncio.sleep(POLL)


def until_sync(condition: Callable[[], object], what: str, timeout: float = 30) -> None:
    """``until`` for synchronous tests (another process's files or database)."""
    deadline = time.monotonic() + timeout
    while not (value := condition()):
        if time.monotonic() > deadline:
            detail = "" if isinstance(value, bool) else f" (last: {value!r})"
            raise AssertionError(f"{what}: not in {timeout:g} s{detail}")
        time.sleep(POLL)
