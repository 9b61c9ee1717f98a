"""A worker process for the referee's CPU-heavy work: house bots' decisions and game
records converted for the wire.

The referee runs every game on one event loop; a decision of the strong house bot takes
about half a millisecond of CPU (several at worst) and converting a practice game's
record to its protobuf form several more. Done inline, a flood of practice games against
the strong bot delays every other game on the loop; a thread would not help (the GIL).
So the referee hands that work to a worker process running at a lower CPU priority, and
awaits the answer while the loop serves everything else.

The worker (``python -m chinchon_referee.referee.house_worker``) reads requests on stdin and
writes replies on stdout, in order, each a frame: a 4-byte big-endian length, then a
pickle. Requests:

* ``("choose", key, kind, seed, observation, legal)``: the decision of the house bot of
  ``kind`` built from ``seed`` for ``key`` (one seat of one game; built on its first
  request and kept), given the observation and legal actions in their wire encodings
  (as the referee sends them to remote bots: an ``Observation``, and the
  ``legal_actions`` elements of an ``ActionRequest``); the reply is the index of the
  chosen action in ``legal``. The bot sees exactly what it would see inline, so it makes
  the same decisions for the same seed.
* ``("forget", key)``: the game is over; reply None.
* ``("record", record)``: the ``GameRecord`` encoding of a record in its JSON form.

Replies are ``("ok", value)`` or ``("error", message)``.
"""

from __future__ import annotations

import asyncio
import collections
import os
import pickle
import struct
import subprocess
import sys
from typing import Any, BinaryIO

from ..host.processes import Child, spawn
from ..logs import get_logger

log = get_logger("house_worker")

_HEADER = struct.Struct(">I")
#: Seats whose bots a worker keeps at most (a game forgets its own at its end; this
#: bounds what games that never said so can leave behind).
MAX_BOTS = 4096
#: How much lower than the referee's the worker's CPU priority is (``os.nice``).
NICENESS = 10


class WorkerGone(Exception):
    """The worker process ended (or could not start) before it replied."""


# -- the worker process ----------------------------------------------------------------------


def _serve(inp: BinaryIO, out: BinaryIO) -> None:
    from chinchon.v1 import game_pb2 as g
    from chinchon.v1 import referee_pb2 as pb
    from chinchon.wire import action_from_wire, observation_from_wire, record_from_json

    from .house import make_house_bot

    bots: collections.OrderedDict[str, Any] = collections.OrderedDict()

    def handle(req: tuple[Any, ...]) -> Any:
        op = req[0]
        if op == "choose":
            _, key, kind, seed, obs_b, legal_b = req
            bot = bots.get(key)
            if bot is None:
                bot = bots[key] = make_house_bot(kind, seed).bot
                if len(bots) > MAX_BOTS:
                    bots.popitem(last=False)
            obs = observation_from_wire(g.Observation.FromString(obs_b))
            legal = [action_from_wire(a) for a in pb.ActionRequest.FromString(legal_b).legal_actions]
            return legal.index(bot.choose(obs, legal))
        if op == "forget":
            bots.pop(req[1], None)
            return None
        if op == "record":
            return record_from_json(req[1]).SerializeToString()
        raise ValueError(f"unknown request {op!r}")

    while True:
        head = inp.read(_HEADER.size)
        if len(head) < _HEADER.size:
            return  # the referee closed the pipe (or died): done
        (n,) = _HEADER.unpack(head)
        req = pickle.loads(inp.read(n))
        try:
            reply: tuple[str, Any] = ("ok", handle(req))
        except Exception as e:  # reported to the referee, which logs it
            reply = ("error", f"{type(e).__name__}: {e}")
        body = pickle.dumps(reply, protocol=pickle.HIGHEST_PROTOCOL)
        out.write(_HEADER.pack(len(body)) + body)
        out.flush()


def main() -> int:
    try:
        os.nice(NICENESS)
    except OSError:
        pass
    _serve(sys.stdin.buffer, sys.stdout.buffer)
    return 0


# -- the referee's side ------------------------------------------------------------------------


class HouseWorker:
    """One worker process, started on first use (and again after it ended), asked over
    pipes from the event loop: :meth:`call` sends a request and awaits its reply."""

    def __init__(self, label: str) -> None:
        self.label = label
        self._proc: Child | None = None
        self._starting: asyncio.Future[Child] | None = None
        self._pending: collections.deque[asyncio.Future[Any]] = collections.deque()
        self._reader: asyncio.Task[None] | None = None
        self.closed = False

    @property
    def pid(self) -> int | None:
        """The worker process's id while it runs; None before it starts and once it ended."""
        proc = self._proc
        return proc.pid if proc is not None and proc.returncode is None else None

    async def call(self, *request: Any) -> Any:
        """Send ``request``; its reply's value. Raises WorkerGone if the worker ends
        first, RuntimeError if it failed to handle the request."""
        proc = await self._running()
        assert proc.stdin is not None
        body = pickle.dumps(request, protocol=pickle.HIGHEST_PROTOCOL)
        fut: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._pending.append(fut)
        proc.stdin.write(_HEADER.pack(len(body)) + body)
        kind, value = await fut
        if kind != "ok":
            raise RuntimeError(f"house worker: {value}")
        return value

    def tell(self, *request: Any) -> None:
        """Send ``request`` without waiting for its reply (which is read and dropped)."""
        proc = self._proc
        if proc is None or proc.stdin is None or proc.returncode is not None:
            return  # nothing to tell: a new worker knows nothing of older games
        body = pickle.dumps(request, protocol=pickle.HIGHEST_PROTOCOL)
        self._pending.append(asyncio.get_running_loop().create_future())
        proc.stdin.write(_HEADER.pack(len(body)) + body)

    async def _running(self) -> Child:
        if self.closed:
            raise WorkerGone("the referee is closing its workers")
        proc = self._proc
        if proc is not None and proc.returncode is None and self._reader is not None \
                and not self._reader.done():
            return proc
        starting = self._starting
        if starting is None:
            starting = self._starting = asyncio.ensure_future(self._start())
        try:
            return await asyncio.shield(starting)
        finally:
            if starting.done() and self._starting is starting:
                self._starting = None

    async def _start(self) -> Child:
        try:
            proc = await spawn([sys.executable, "-m", "chinchon_referee.referee.house_worker"],
                               stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        except OSError as e:
            raise WorkerGone(f"the house worker could not start: {e}") from None
        self._proc = proc
        self._reader = asyncio.ensure_future(self._read(proc))
        log.info("house_worker_started", worker=self.label, pid=proc.pid)
        return proc

    async def _read(self, proc: Child) -> None:
        assert proc.stdout is not None
        try:
            while True:
                head = await proc.stdout.readexactly(_HEADER.size)
                (n,) = _HEADER.unpack(head)
                reply = pickle.loads(await proc.stdout.readexactly(n))
                fut = self._pending.popleft()
                if not fut.done():
                    fut.set_result(reply)
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            pending, self._pending = self._pending, collections.deque()
            for fut in pending:
                if not fut.done():
                    fut.set_exception(WorkerGone("the house worker ended"))
                    fut.exception()  # a dropped reply of tell(): nobody waits for it
            if not self.closed:
                log.warning("house_worker_ended", worker=self.label, code=proc.returncode)

    async def close(self, timeout: float = 5.0) -> None:
        """End the worker: close its input (it exits), kill it if it does not."""
        self.closed = True
        proc = self._proc
        if proc is None:
            return
        if proc.stdin is not None:
            proc.stdin.close()
        try:
            await asyncio.wait_for(proc.wait(), timeout)
        except TimeoutError:
            proc.kill()
            await proc.wait()
        if self._reader is not None:
            await asyncio.gather(self._reader, return_exceptions=True)


if __name__ == "__main__":
    sys.exit(main())
