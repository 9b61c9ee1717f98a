"""Per-event-loop helpers of the write path: the deadline heap of outstanding
requests, the write watch (a write to a bot bounded in time) and the write gate (writes
of one loop pass sent together). docs/benchmarks.md tells why each is built this way."""

from __future__ import annotations

import asyncio
import heapq
import itertools
import weakref
from collections.abc import Callable, Hashable
from typing import Any, ClassVar, Self


class _PerLoop:
    """A class with one instance per event loop, kept in a weak mapping keyed by the
    loop (so the instance does not hold its loop: it runs on the loop that is running)."""

    _instances: ClassVar[weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, Any]]

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls._instances = weakref.WeakKeyDictionary()

    @classmethod
    def of(cls, loop: asyncio.AbstractEventLoop) -> Self:
        """The one instance of the loop."""
        inst: Self | None = cls._instances.get(loop)
        if inst is None:
            inst = cls._instances[loop] = cls()
        return inst


class Deadlines(_PerLoop):
    """Expires the futures of outstanding requests at their deadlines, with one event-loop
    timer for all of them.

    ``loop.call_at`` per request would put a TimerHandle per decision on the loop's heap,
    compared in Python, and leave it there, cancelled, until its deadline (a move's
    time plus the bank: thousands of dead handles at a few thousand decisions per
    second). Here a request costs one push of a tuple on a heap compared in C; answered
    requests are dropped lazily (from the top, and in a compaction when the heap has
    grown), and the single timer is armed for the earliest deadline still pending.
    """

    def __init__(self) -> None:
        self.heap: list[tuple[float, int, asyncio.Future[Any]]] = []
        self.seq = itertools.count()
        self.timer: asyncio.TimerHandle | None = None
        self.armed = float("inf")
        self.compact_at = 1024

    def add(self, when: float, fut: asyncio.Future[Any]) -> None:
        """Fail ``fut`` with TimeoutError at loop time ``when`` unless it is done by then."""
        heap = self.heap
        heapq.heappush(heap, (when, next(self.seq), fut))
        if when < self.armed:
            self._arm(when)
        if len(heap) >= self.compact_at:
            heap[:] = [e for e in heap if not e[2].done()]
            heapq.heapify(heap)
            self.compact_at = max(1024, 4 * len(heap))

    def _arm(self, when: float) -> None:
        if self.timer is not None:
            self.timer.cancel()
        self.armed = when
        self.timer = asyncio.get_running_loop().call_at(when, self._fire)

    def _fire(self) -> None:
        self.timer = None
        heap = self.heap
        now = max(asyncio.get_running_loop().time(), self.armed)
        while heap and (heap[0][0] <= now or heap[0][2].done()):
            fut = heapq.heappop(heap)[2]
            if not fut.done():
                fut.set_exception(TimeoutError())
        self.armed = float("inf")
        if heap:
            self._arm(heap[0][0])


class WriteWatch(_PerLoop):
    """Bounds every write to a bot in time, without a timer per write.

    A write to a bot that does not read its stream waits for HTTP/2 flow control and
    could wait forever. Each write is registered here with its deadline and its task;
    one sweeper task per event loop (running only while writes are in flight) cancels
    a write past its deadline, and :meth:`Connection.send` turns that into a
    disconnect. A timer per write (``asyncio.timeout``) costs a heap push and pop on
    the event loop for each of the thousands of writes per second; a sweep every
    ``write_timeout / 10`` (at most 1 s) costs nothing measurable.
    """

    def __init__(self) -> None:
        #: The writes in flight: per writer (a stream), its deadline, its task, and what
        #: to call (before the task is cancelled) when the deadline passes.
        self.writing: dict[Hashable, tuple[float, asyncio.Task[Any], Callable[[], None]]] = {}
        self.period = 1.0
        self.shortest = float("inf")  # the shortest write timeout seen sets the period
        self.sweeper: asyncio.Task[None] | None = None

    def start(
        self, conn: Hashable, timeout: float, task: asyncio.Task[Any] | None,
        loop: asyncio.AbstractEventLoop, on_expired: Callable[[], None],
    ) -> None:
        """Watch ``conn``'s write by ``task`` (None: the current task) on ``loop`` (the
        running loop); past ``timeout``, call ``on_expired`` and cancel ``task``."""
        if task is None:
            task = asyncio.current_task()
            assert task is not None
        self.writing[conn] = (loop.time() + timeout, task, on_expired)
        if timeout < self.shortest:
            self.shortest = timeout
            self.period = min(1.0, max(0.01, timeout / 10))
        if self.sweeper is None:
            self.sweeper = loop.create_task(self._sweep())

    async def _sweep(self) -> None:
        try:
            while self.writing:
                await asyncio.sleep(self.period)
                self.expire(asyncio.get_running_loop())
        finally:
            self.sweeper = None

    def expire(self, loop: asyncio.AbstractEventLoop) -> None:
        """Cancel the writes past their deadline at ``loop``'s time. Each is cancelled
        after the callbacks already due on the loop: a write whose completion reached
        the loop before this sweep resumes its task first, and is not taken for a
        timeout."""
        now = loop.time()
        for conn, entry in self.writing.items():
            if now >= entry[0]:
                loop.call_soon(self._cancel, conn, entry)

    def _cancel(
        self, conn: Hashable, entry: tuple[float, asyncio.Task[Any], Callable[[], None]],
    ) -> None:
        if self.writing.get(conn) is not entry:
            return  # the write completed meanwhile (and maybe another one began)
        del self.writing[conn]
        entry[2]()
        entry[1].cancel()


class WriteGate(_PerLoop):
    """Holds each write to a bot until the tasks already due to run in this pass of the
    event loop have run, then lets the writes through together, in the order they came.

    Under load, the games' tasks run one after another in each pass of the loop, and
    each one's Python work (apply, observation, encoding) would sit between two writes
    to gRPC. Written back to back instead, the writes meet gRPC's transport together:
    it sends them in fewer system calls, and the bots receive them in fewer wake-ups
    (measured in docs/benchmarks.md, "Write gate"; ``bench_server.py --write-gate off``
    is the baseline).

    Each writer waits on a future of its own: a cancelled writer (a write timeout, a
    game stopped) leaves the others alone.
    """

    #: Off, writes go to gRPC at once (the benchmark's baseline).
    enabled = True

    def __init__(self) -> None:
        self.waiting: list[asyncio.Future[None]] = []

    def wait(self, loop: asyncio.AbstractEventLoop) -> asyncio.Future[None]:
        """A future done when the gate next opens (on ``loop``, the running loop)."""
        fut = loop.create_future()
        if not self.waiting:
            loop.call_soon(self._open)
        self.waiting.append(fut)
        return fut

    def _open(self) -> None:
        waiting, self.waiting = self.waiting, []
        for fut in waiting:
            if not fut.done():
                fut.set_result(None)

