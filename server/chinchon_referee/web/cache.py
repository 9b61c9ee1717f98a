"""Answers kept ready, bounded: a least-recently-used cache bounded by its bytes, and
one build per key however many requests ask for it at once (the others wait for it).

A finished game's replay and record never change: each is built once (in a worker
thread), kept while it is among the most recently asked for, and sent as bytes."""

from __future__ import annotations

import asyncio
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Hashable
from typing import Generic, TypeVar

T = TypeVar("T")


class ByteLRU:
    """Bytes by key, at most ``limit`` bytes in all (an entry above a quarter of it is
    not kept); the least recently used go first."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.size = 0
        self._items: OrderedDict[Hashable, bytes] = OrderedDict()
        self.hits = self.misses = 0

    def get(self, key: Hashable) -> bytes | None:
        data = self._items.get(key)
        if data is None:
            self.misses += 1
            return None
        self.hits += 1
        self._items.move_to_end(key)
        return data

    def put(self, key: Hashable, data: bytes) -> None:
        if len(data) > self.limit // 4:
            return
        old = self._items.pop(key, None)
        if old is not None:
            self.size -= len(old)
        self._items[key] = data
        self.size += len(data)
        while self.size > self.limit:
            _, gone = self._items.popitem(last=False)
            self.size -= len(gone)

    def __len__(self) -> int:
        return len(self._items)


class Counted(Generic[T]):
    """Values by key, at most ``limit`` of them, the least recently used forgotten first."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self._items: OrderedDict[Hashable, T] = OrderedDict()

    def get(self, key: Hashable) -> T | None:
        v = self._items.get(key)
        if v is not None:
            self._items.move_to_end(key)
        return v

    def put(self, key: Hashable, value: T) -> None:
        self._items[key] = value
        self._items.move_to_end(key)
        while len(self._items) > self.limit:
            self._items.popitem(last=False)

    def __len__(self) -> int:
        return len(self._items)


class SingleFlight(Generic[T]):
    """``await flight.run(key, make)``: one ``make()`` per key at a time; callers that
    come while it runs get its result (or its error). The build is a task of its own: a
    caller that goes away does not cancel it for the others. Nothing is kept once it is
    done: the table holds the builds in progress only."""

    def __init__(self) -> None:
        self._running: dict[Hashable, asyncio.Task[T]] = {}

    async def run(self, key: Hashable, make: Callable[[], Awaitable[T]]) -> T:
        task = self._running.get(key)
        if task is None:
            task = self._running[key] = asyncio.ensure_future(make())
            task.add_done_callback(lambda t: self._done(key, t))
        return await asyncio.shield(task)

    def _done(self, key: Hashable, task: asyncio.Task[T]) -> None:
        if self._running.get(key) is task:
            del self._running[key]
        if not task.cancelled():
            task.exception()  # retrieved here too: a build nobody waits for any more

    def __len__(self) -> int:
        return len(self._running)
