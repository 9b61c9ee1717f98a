"""Server-Sent Events: pages are pushed snapshots, never poll.

A :class:`Topic` is a version number that goes up when what a page shows changed. Each
subscriber sends the current snapshot, then waits for the version to move and sends
the snapshot again (at most one per ``min_interval``): a subscriber holds no queue, so
a slow or stalled reader costs no memory; it simply skips the versions it missed.

Subscribers are bounded (:class:`Subscribers`), in all and per address: past a limit
a new stream gets 503.
A browser's ``EventSource`` reconnects by itself (after ``retry`` ms) when the referee
restarts; the pages also reopen a stream that the browser gave up on."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from typing import Any

from aiohttp import web

#: Streams open at once, all pages together, by default.
MAX_SUBSCRIBERS = 200
#: Streams open at once from one address, by default.
MAX_PER_PEER = 20
#: How long the browser waits before reconnecting (milliseconds).
RETRY_MS = 1000
#: A comment line is sent after this many seconds of silence (keeps proxies from
#: closing the stream, and finds closed connections).
KEEPALIVE = 15.0


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


class Subscribers:
    """Counts the open streams, in all and per address; refuses one past a limit."""

    def __init__(self, limit: int = MAX_SUBSCRIBERS, per_peer: int = MAX_PER_PEER) -> None:
        self.limit = limit
        self.per_peer = per_peer
        self.open = 0
        self._peers: dict[str, int] = {}

    def try_add(self, peer: str) -> str | None:
        """None when the stream may open, else why not."""
        if self.open >= self.limit:
            return "too many live pages are open: try again later"
        if self._peers.get(peer, 0) >= self.per_peer:
            return f"too many live pages are open from {peer}: close some"
        self.open += 1
        self._peers[peer] = self._peers.get(peer, 0) + 1
        return None

    def remove(self, peer: str) -> None:
        self.open -= 1
        n = self._peers.get(peer, 0) - 1
        if n > 0:
            self._peers[peer] = n
        else:
            self._peers.pop(peer, None)


def event_bytes(name: str, data: Any) -> bytes:
    return f"event: {name}\ndata: {json.dumps(data, separators=(',', ':'))}\n\n".encode()


async def stream(
    request: web.Request, subs: Subscribers, topic: Topic,
    snapshot: Callable[[], Awaitable[dict[str, Any] | None]], name: str,
    closing: asyncio.Event, min_interval: float | Callable[[], float] = 0.25,
    shared: bool = False,
    refresh: float | None = None,
) -> web.StreamResponse:
    """Send ``snapshot()`` as event ``name`` now and after each change of ``topic``,
    until the client goes, the snapshot is None (the thing is gone: event ``gone``) or
    the server closes. Snapshots are ``min_interval`` seconds apart at least (a
    callable: asked each time, for snapshots whose cost grows). ``shared``: the snapshot
    is the same for every stream of the topic (public, no per-client option): it is
    built and encoded once per version, and the bytes sent to all. With ``refresh``, the
    snapshot is also taken after that many seconds without a change, and sent if it
    differs (one that changes with time: the delayed full view, never shared)."""
    interval = min_interval if callable(min_interval) else (lambda: min_interval)
    peer = request.remote or ""
    refused = subs.try_add(peer)
    if refused is not None:
        raise web.HTTPServiceUnavailable(text=refused, headers={"Retry-After": "5"})
    resp = web.StreamResponse(headers={
            "Content-Type": "text/event-stream", "Cache-Control": "no-cache",
        "X-Accel-Buffering": "no"})
    try:
        await resp.prepare(request)
        await resp.write(f"retry: {RETRY_MS}\n\n".encode())
        seen = -1
        last = b""
        due = False
        loop = asyncio.get_running_loop()
        while not closing.is_set():
            version = topic.version
            if version != seen or due:
                seen, due = version, False
                cached = topic.shared if shared else None
                if cached is not None and cached[0] == version and cached[1] == name:
                    data = cached[2]
                else:
                    snap = await snapshot()
                    if snap is None:
                        await resp.write(event_bytes("gone", {}))
                        break
                    data = event_bytes(name, snap)
                    if shared:
                        topic.shared = (version, name, data)
                if data == last:
                    await resp.write(b": keepalive\n\n")
                    continue
                last = data
                await resp.write(data)
                sent = loop.time()
                await asyncio.sleep(max(0.0, interval() - (loop.time() - sent)))
                continue
            waiter = asyncio.ensure_future(topic.wait(seen, refresh or KEEPALIVE))
            stop = asyncio.ensure_future(closing.wait())
            try:
                await asyncio.wait((waiter, stop), return_when=asyncio.FIRST_COMPLETED)
            finally:
                waiter.cancel()
                stop.cancel()
            if topic.version == seen and not closing.is_set():
                if refresh:
                    due = True
                else:
                    await resp.write(b": keepalive\n\n")
        return resp
    except ConnectionResetError:  # the page went away
        return resp
    finally:
        subs.remove(peer)
