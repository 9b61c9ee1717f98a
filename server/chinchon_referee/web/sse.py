"""Server-Sent Events: pages are pushed snapshots, never poll.

A :class:`Topic` is a version number that goes up when what a page shows changed. Each
subscriber sends the current snapshot, then waits for the version to move and sends
the snapshot again (at most one per ``min_interval``): a subscriber holds no queue, so
a slow or stalled reader costs no memory; it simply skips the versions it missed.

Subscribers are bounded (:class:`Subscribers`), in all and per client (its address, or
behind a trusted proxy the viewer's: guard.py). Past the bound for a client, a new
stream gets 503. When all the streams are taken, a new one from a client holding fewer
than another ends that other client's oldest stream (each client keeps its fair share:
streams opened and never read cannot shut anyone out); a stream whose client stops
reading is ended after ``write_timeout`` seconds of waiting.
A browser's ``EventSource`` reconnects by itself (after ``retry`` ms) when the referee
restarts; the pages also reopen a stream that the browser gave up on."""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from typing import Any

from aiohttp import web

from .guard import CLIENT

#: Streams open at once, all pages together, by default.
MAX_SUBSCRIBERS = 200
#: Streams open at once from one address, by default.
MAX_PER_PEER = 20
#: How long the browser waits before reconnecting (milliseconds).
RETRY_MS = 1000
#: A comment line is sent after this many seconds of silence (keeps proxies from
#: closing the stream, and finds closed connections).
KEEPALIVE = 15.0
#: Seconds a stream waits for its client to read a write before it is ended.
WRITE_TIMEOUT = 10.0


class Topic:
    """A version that goes up on each change; waiters are woken."""

    def __init__(self) -> None:
        self.version = 0
        self._changed = asyncio.Event()
        #: (version, event name, the event's bytes) of the last snapshot shared by the
        #: topic's streams: built once per version, however many pages watch.
        self.shared: tuple[int, str, bytes] | None = None

    def bump(self) -> None:
        self.version += 1
        self._changed.set()
        self._changed = asyncio.Event()

    async def wait(self, seen: int, timeout: float) -> None:
        """Return when the version is past ``seen``, or after ``timeout`` s."""
        if self.version != seen:
            return
        try:
            await asyncio.wait_for(self._changed.wait(), timeout)
        except TimeoutError:
            pass


class Slot:
    """One open stream of ``client``; ``evicted`` is set to end it for another."""

    __slots__ = ("client", "evicted")

    def __init__(self, client: str) -> None:
        self.client = client
        self.evicted = asyncio.Event()


class Subscribers:
    """Counts the open streams, in all and per client; refuses one past a client's
    bound, and, when all are taken, ends the oldest stream of the client holding the
    most (if that is more than the new stream's client would hold)."""

    def __init__(self, limit: int = MAX_SUBSCRIBERS, per_peer: int = MAX_PER_PEER) -> None:
        self.limit = limit
        self.per_peer = per_peer
        self.open = 0
        self.evictions = 0
        self._clients: dict[str, OrderedDict[Slot, None]] = {}

    def try_add(self, client: str) -> Slot | str:
        """A slot for a new stream of ``client``, or why there is none."""
        mine = self._clients.get(client)
        held = len(mine) if mine is not None else 0
        if held >= self.per_peer:
            return f"too many live pages are open from {client}: close some"
        if self.open >= self.limit:
            top = max(self._clients.values(), key=len)
            if len(top) <= held + 1:
                return "too many live pages are open: try again later"
            oldest = next(iter(top))
            self.remove(oldest)
            oldest.evicted.set()
            self.evictions += 1
        slot = Slot(client)
        self._clients.setdefault(client, OrderedDict())[slot] = None
        self.open += 1
        return slot

    def remove(self, slot: Slot) -> None:
        mine = self._clients.get(slot.client)
        if mine is None or slot not in mine:
            return
        del mine[slot]
        self.open -= 1
        if not mine:
            del self._clients[slot.client]

    def held(self, client: str) -> int:
        mine = self._clients.get(client)
        return 0 if mine is None else len(mine)


def event_bytes(name: str, data: Any) -> bytes:
    return f"event: {name}\ndata: {json.dumps(data, separators=(',', ':'))}\n\n".encode()


#: What ``_event_of`` gives when the web view is closing: the stream ends after the last
#: whole event (its final chunk written), not cut.
_CLOSED = b"closed"


async def _event_of(topic: Topic, version: int, name: str, shared: bool,
                    snapshot: Callable[[], Awaitable[dict[str, Any] | None]],
                    closing: asyncio.Event) -> bytes | None:
    """The event for ``version``: the shared encoding of it when another stream made it,
    else a fresh snapshot's; None when the thing watched is gone; ``_CLOSED`` when the
    web view closed while the snapshot was read (its pool drops the reads in flight)."""
    cached = topic.shared if shared else None
    if cached is not None and cached[0] == version and cached[1] == name:
        data: bytes = cached[2]
        return data
    try:
        snap = await snapshot()
    except asyncio.CancelledError:
        task = asyncio.current_task()
        if closing.is_set() and task is not None and not task.cancelling():
            return _CLOSED
        raise
    except Exception:
        if closing.is_set():
            return _CLOSED
        raise
    if snap is None:
        return None
    data = event_bytes(name, snap)
    if shared:
        topic.shared = (version, name, data)
    return data


async def _until_change(topic: Topic, seen: int, timeout: float, closing: asyncio.Event,
                        evicted: asyncio.Event) -> None:
    """Until ``topic`` moves past ``seen``, ``timeout`` passes, the web view closes or
    this stream is evicted."""
    waits = [asyncio.ensure_future(topic.wait(seen, timeout)),
             asyncio.ensure_future(closing.wait()), asyncio.ensure_future(evicted.wait())]
    try:
        await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for w in waits:
            w.cancel()


async def stream(
    request: web.Request, subs: Subscribers, topic: Topic,
    snapshot: Callable[[], Awaitable[dict[str, Any] | None]], name: str,
    closing: asyncio.Event, min_interval: float | Callable[[], float] = 0.25,
    shared: bool = False,
    refresh: float | None = None,
    write_timeout: float = WRITE_TIMEOUT,
) -> web.StreamResponse:
    """Send ``snapshot()`` as event ``name`` now and after each change of ``topic``,
    until the client goes, the snapshot is None (the thing is gone: event ``gone``), the
    server closes, the stream is ended for another client's (:class:`Subscribers`) or
    its client has not read a write for ``write_timeout`` seconds. Snapshots are
    ``min_interval`` seconds apart at least (a callable: asked each time, for snapshots
    whose cost grows). ``shared``: the snapshot is the same for every stream of the
    topic (public, no per-client option): it is built and encoded once per version, and
    the bytes sent to all. With ``refresh``, the snapshot is also taken after that many
    seconds without a change, and sent if it differs (one that changes with time: the
    delayed full view, never shared, never stored by a cache: ``no-store``)."""
    interval = min_interval if callable(min_interval) else (lambda: min_interval)
    slot = subs.try_add(request.get(CLIENT, request.remote or ""))
    if isinstance(slot, str):
        raise web.HTTPServiceUnavailable(text=slot, headers={"Retry-After": "5"})
    headers = {"Content-Type": "text/event-stream", "X-Accel-Buffering": "no",
               "Cache-Control": "no-cache" if shared else "no-store"}
    if not shared:
        headers["Vary"] = "Authorization"
    resp = web.StreamResponse(headers=headers)

    async def write(data: bytes) -> None:
        await asyncio.wait_for(resp.write(data), write_timeout)

    try:
        await resp.prepare(request)
        await write(f"retry: {RETRY_MS}\n\n".encode())
        seen = -1
        last = b""
        due = False
        loop = asyncio.get_running_loop()
        while not closing.is_set() and not slot.evicted.is_set():
            version = topic.version
            if version != seen or due:
                seen, due = version, False
                data = await _event_of(topic, version, name, shared, snapshot, closing)
                if data is _CLOSED:
                    break
                if data is None:
                    await write(event_bytes("gone", {}))
                    break
                if data == last:
                    await write(b": keepalive\n\n")
                    continue
                last = data
                await write(data)
                sent = loop.time()
                pause = max(0.0, interval() - (loop.time() - sent))
                if pause > 0:  # paced, but the close ends the pause at once
                    with contextlib.suppress(TimeoutError):
                        await asyncio.wait_for(closing.wait(), pause)
                continue
            await _until_change(topic, seen, refresh or KEEPALIVE, closing, slot.evicted)
            if topic.version == seen and not closing.is_set() and not slot.evicted.is_set():
                if refresh:
                    due = True
                else:
                    await write(b": keepalive\n\n")
        return resp
    except (ConnectionError, TimeoutError):  # the page went away, or stopped reading
        if request.transport is not None:
            request.transport.abort()
        return resp
    finally:
        subs.remove(slot)
