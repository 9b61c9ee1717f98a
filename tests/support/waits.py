"""The one polling helper of the tests, for conditions that have no event to wait on
(a bot process's printed lines, a SQLite file written by another process)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable

#: How often a condition is looked at again.
POLL = 0.02


def _failure(what: str, timeout: float, detail: Callable[[], object] | None) -> AssertionError:
    return AssertionError(f"{what}: not in {timeout:g} s" + (f" ({detail()})" if detail else ""))


async def until(condition: Callable[[], object], what: str, timeout: float = 30,
                detail: Callable[[], object] | None = None) -> None:
    """Wait until ``condition()`` is true; after ``timeout`` s fail saying that ``what``
    did not happen, with ``detail()`` when given (the state it was in)."""
    deadline = asyncio.get_running_loop().time() + timeout
    while not condition():
        if asyncio.get_running_loop().time() > deadline:
            raise _failure(what, timeout, detail)
        await asyncio.sleep(POLL)


async def until_async(condition: Callable[[], Awaitable[object]], what: str,
                      timeout: float = 30, detail: Callable[[], object] | None = None) -> None:
    """``until`` for a condition that must be awaited (a call to another process)."""
    deadline = asyncio.get_running_loop().time() + timeout
    while not await condition():
        if asyncio.get_running_loop().time() > deadline:
            raise _failure(what, timeout, detail)
        await asyncio.sleep(POLL)


def until_sync(condition: Callable[[], object], what: str, timeout: float = 30,
               detail: Callable[[], object] | None = None) -> None:
    """``until`` for synchronous tests (another process's files or database)."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise _failure(what, timeout, detail)
        time.sleep(POLL)
