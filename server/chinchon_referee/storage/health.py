"""Whether the database takes the referee's writes, as its writes find it: what the
organizer is told (the log, ``GetServerStatus``, the web view, the tournaments' events)
and what holds new games back.

A write that fails because the database is out of reach or its disk is full
(:class:`~.rows.StoreUnavailable`, :class:`~.rows.StoreFull`) makes the store *unhealthy*
until a write works again. Meanwhile the games' results wait in memory (``waiting``
counts them; each is tried again until it is written), and no new game starts (the
director asks :meth:`StoreHealth.may_start`): memory stays bounded by the games that were
in progress.
"""

from __future__ import annotations

import enum
import time
from collections.abc import Callable

from ..logs import get_logger
from .rows import StoreFull, StoreUnavailable

log = get_logger("store")


class StoreState(enum.StrEnum):
    """The database's state; each value is the name of the same value of the protocol's
    ``chinchon.v1.StoreState`` (the one place the two are mapped)."""

    OK = "STORE_STATE_OK"
    UNREACHABLE = "STORE_STATE_UNREACHABLE"
    FULL = "STORE_STATE_FULL"


class StoreHealth:
    def __init__(self) -> None:
        self.state = StoreState.OK
        #: Why the database does not take writes (its own words), and since when
        #: (a ``time.time()``); None while it does.
        self.problem: str | None = None
        self.since: float | None = None
        #: Games' results held in memory until the database takes them.
        self.waiting = 0
        self._listeners: list[Callable[[], None]] = []

    def listen(self, callback: Callable[[], None]) -> Callable[[], None]:
        """Call ``callback`` whenever the state changes; returns the function that stops it."""
        self._listeners.append(callback)

        def stop() -> None:
            if callback in self._listeners:
                self._listeners.remove(callback)

        return stop

    def failed(self, e: StoreUnavailable) -> None:
        """A write failed: the database is out of reach, or its disk is full."""
        state = StoreState.FULL if isinstance(e, StoreFull) else StoreState.UNREACHABLE
        fresh = self.problem is None
        self.state, self.problem = state, str(e)
        if fresh:
            self.since = time.time()
            log.error("store_unavailable", state=state.value, error=str(e),
                      results_waiting=self.waiting,
                      note="no new game starts; the results of the games in progress wait "
                      "in memory and are written as soon as the database takes writes again")
            self._tell()

    def worked(self) -> None:
        """A write worked: the database takes writes (again)."""
        if self.problem is None:
            return
        since = self.since or time.time()
        log.info("store_writable", after=round(time.time() - since, 1),
                 results_waiting=self.waiting)
        self.state, self.problem, self.since = StoreState.OK, None, None
        self._tell()

    def result_written(self) -> None:
        """A result that waited was written (or dropped): one fewer waits; the listeners
        are told (a new game may start now)."""
        self.waiting -= 1
        self._tell()

    def may_start(self, running: bool) -> bool:
        """Whether a new game may start: no result waits, and the database takes writes
        (while it does not, one game at a time tries: its start is the write that tells
        whether the database is back)."""
        return self.waiting == 0 and (self.problem is None or not running)

    def _tell(self) -> None:
        for callback in list(self._listeners):
            callback()
