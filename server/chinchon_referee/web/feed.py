"""The referee's side of the web view's feed (feedwire.py): what it tells its web
processes, at a cost it bounds.

:class:`Feed` is the referee's step observer (``GameServices.observer``). After each
step of a game it only notes the illegal answers counted before the move and marks the
game changed for each :class:`Link` (a web process's connection): no copy, no encoding.
Every ``BATCH`` seconds a link sends, for each changed game, the record's actions it
has not sent yet (the record is the referee's own list: nothing is kept twice), the
seats' clocks and counts, and the games that ended.

A link never blocks the referee and never grows: when its web process reads slowly,
its socket's buffer fills, the link stops writing and only remembers which games
changed (and how far each was sent); when the web process catches up, it is sent what
it missed, in one go. A game that ends while a link is stalled is kept (its record) for
that link until ``MAX_ENDING`` games wait so; past that the oldest is given up (the
link is sent its end only; its record is in the database anyway). A new link (a web
process started, or started again) is sent every game in progress from its start."""

from __future__ import annotations

import asyncio
import json
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from chinchon.engine import GameState
from chinchon.engine.record import RecordBuilder, rules_to_json

from ..logs import get_logger
from ..referee import GameRunner, Referee
from ..storage.health import StoreHealth
from .feedwire import MAX_ACTIONS, line

log = get_logger("web.feed")

#: Seconds between two writes of a link (the steps of that time go together).
BATCH = 0.05
#: Bytes a link writes at once, about, before it lets the loop run (and goes on).
MAX_WRITE = 256 * 1024
#: Bytes buffered for a link before it stops writing (its web process reads slowly).
HIGH_WATER = 1024 * 1024
#: Ended games kept for links that have not sent them all (the oldest given up first).
MAX_ENDING = 256
#: Ended games whose final step count is remembered (``steps``).
ENDED_KEPT = 200
#: Seconds between two looks at the bots' streams and the other processes.
TICK = 1.0


@dataclass(eq=False)
class _Game:
    runner: GameRunner
    rec: RecordBuilder | None
    start: dict[str, Any]
    illegal: list[int]
    marks: dict[int, int] = field(default_factory=dict)
    noted: int = 0
    since: float = 0.0
    over: bool = False

    def note(self) -> None:
        """The illegal answers counted before each move recorded since the last look."""
        rec = self.rec
        if rec is None:
            return
        actions, seats = rec.actions, self.runner.seats
        for i in range(self.noted, len(actions)):
            mv = actions[i].get("move")
            if mv is None:
                continue
            seat = mv.get("seat", 0)
            n = seats[seat].stats.illegal
            if n > self.illegal[seat]:
                self.marks[i] = n - self.illegal[seat]
                self.illegal[seat] = n
        self.noted = len(actions)
        self.since = time.time()


def _start_message(runner: GameRunner) -> dict[str, Any]:
    spec = runner.spec
    tc = spec.time_control
    return {"k": "g", "g": spec.game_id, "t": spec.tournament_id, "p": list(runner.names),
            "r": rules_to_json(spec.rules), "tc": [tc.per_move, tc.bank],
            "ms": spec.policies.max_strikes, "remote": [s.remote for s in runner.seats],
            "practice": runner.practice, "at": time.time()}


class Link(asyncio.Protocol):
    """One web process's end of the feed."""

    def __init__(self, feed: Feed, hello: dict[str, Any]) -> None:
        self.feed = feed
        self.high_water = feed.high_water
        self.hello = hello
        self.transport: asyncio.Transport | None = None
        self.sent: dict[str, int] = {}
        self.dirty: dict[str, None] = {}
        self.paused = False
        self.closed = asyncio.get_running_loop().create_future()
        self.ready: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._handle: asyncio.Handle | None = None
        self._out: list[bytes] = []
        self._lobby: Any = None
        self._cluster: Any = None
        self._store: Any = None
        self._due: dict[str, bytes] = {}
        self._inbox = b""
        #: Writes skipped while the web process was not reading (for the log and tests).
        self.stalls = 0

    # -- asyncio.Protocol ---------------------------------------------------------------
    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        t: asyncio.Transport = transport  # type: ignore[assignment]
        t.set_write_buffer_limits(high=self.high_water, low=self.high_water // 4)
        self.transport = t
        self.feed.links.append(self)
        self._out.append(line({"k": "hello", **self.hello}))
        for gid in self.feed.games:
            self.dirty[gid] = None
        self.feed.refresh_now()
        self.touch()

    def data_received(self, data: bytes) -> None:
        self._inbox += data
        while b"\n" in self._inbox:
            raw, self._inbox = self._inbox.split(b"\n", 1)
            if raw.startswith(b'{"k":"ready"') and not self.ready.done():
                self.ready.set_result(json.loads(raw))
        if len(self._inbox) > 65536:  # a web process says nothing long
            self.close()

    def pause_writing(self) -> None:
        self.paused = True
        self.stalls += 1

    def resume_writing(self) -> None:
        self.paused = False
        self.touch()

    def connection_lost(self, exc: Exception | None) -> None:
        if self in self.feed.links:
            self.feed.links.remove(self)
        if self._handle is not None:
            self._handle.cancel()
        self.sent.clear()
        self.dirty.clear()
        self.feed.collect()
        if not self.closed.done():
            self.closed.set_result(None)
        if not self.ready.done():
            self.ready.set_exception(ConnectionError("the web process closed its feed"))
            self.ready.exception()

    def close(self) -> None:
        """End the feed: the web process sees its end (and exits, if it is a child)."""
        if self.transport is not None:
            self.transport.close()

    # -- writing ------------------------------------------------------------------------
    def touch(self, gid: str | None = None) -> None:
        if gid is not None and gid not in self.dirty:
            self.dirty[gid] = None
        if self._handle is None and not self.paused and self.transport is not None:
            self._handle = asyncio.get_running_loop().call_later(BATCH, self.flush)

    def say(self, kind: str, msg: Any) -> None:
        """The bots' streams (``l``), the other processes (``c``) or whether the database
        takes writes (``h``) changed: the latest
        is sent at the next write (a stalled link keeps only the latest of each)."""
        if kind == "l" and msg != self._lobby:
            self._lobby, self._due["l"] = msg, line({"k": "l", "bots": msg})
        elif kind == "c" and msg != self._cluster:
            self._cluster, self._due["c"] = msg, line({"k": "c", **msg})
        elif kind == "h" and msg != self._store:
            self._store, self._due["h"] = msg, line({"k": "h", "store": msg})
        else:
            return
        self.touch()

    def flush(self) -> None:
        self._handle = None
        t = self.transport
        if t is None or t.is_closing() or self.paused:
            return
        out, self._out = [*self._out, *self._due.values()], []
        self._due.clear()
        size = sum(len(b) for b in out)
        games = self.feed.games
        while self.dirty and size < MAX_WRITE:
            gid = next(iter(self.dirty))
            g = games.get(gid)
            n = self.sent.get(gid)
            msgs: list[bytes] = []
            if g is not None and g.rec is not None:
                if n is None:
                    msgs.append(line(g.start))
                    n = 0
                # Only the actions noted (their illegal answers counted, see _Game.note):
                # the record may hold one more, its move recorded before a write the
                # game awaits (a default, then DefaultPlayed), and sent before its note
                # it would go without its mark for good.
                actions, end = g.rec.actions, g.noted
                if n < end:
                    chunk = actions[n:min(n + MAX_ACTIONS, end)]
                    marks = {str(i): v for i, v in g.marks.items() if n <= i < n + len(chunk)}
                    seats = g.runner.seats
                    msgs.append(line({
                        "k": "s", "g": gid, "n": n, "a": chunk, "m": marks, "since": g.since,
                        "s": [[round(s.bank, 3), s.stats.strikes, s.stats.illegal, s.stats.timeouts]
                              for s in seats]}))
                    n += len(chunk)
                self.sent[gid] = n
                if n < end:
                    out += msgs
                    size += sum(len(b) for b in msgs)
                    continue  # more of it next time round
            del self.dirty[gid]
            if (g is None or g.over or g.rec is None) and gid in self.sent:
                msgs.append(line({"k": "e", "g": gid}))
                del self.sent[gid]
            out += msgs
            size += sum(len(b) for b in msgs)
        if out:
            t.write(b"".join(out))
        if self.dirty and not self.paused:
            self._handle = asyncio.get_running_loop().call_soon(self.flush)
        self.feed.collect()


class Feed:
    """Follows the referee's games and lobby for any number of :class:`Link` s."""

    def __init__(self, referee: Referee, hello: dict[str, Any],
                 web_urls: Callable[[], dict[str, str]] | None = None,
                 streams_elsewhere: Callable[[], dict[str, tuple[int, int, int]]] | None = None,
                 high_water: int = HIGH_WATER, store_health: StoreHealth | None = None) -> None:
        self.referee = referee
        self.store_health = store_health
        #: Bytes buffered for a link before it stops writing.
        self.high_water = high_water
        self.hello = hello
        self.web_urls = web_urls
        self.streams_elsewhere = streams_elsewhere
        self.games: dict[str, _Game] = {}
        self.links: list[Link] = []
        self._ending: OrderedDict[str, _Game] = OrderedDict()
        self._ended: OrderedDict[str, int] = OrderedDict()
        self._unlisten: Callable[[], None] | None = None
        self._unhealth: Callable[[], None] | None = None
        self._tick: asyncio.Task[None] | None = None
        self._lobby_soon: asyncio.TimerHandle | None = None

    def install(self) -> None:
        """Watch the referee's games and lobby from now on."""
        self.referee.services.observer = self.observe
        self._unlisten = self.referee.lobby.listen(self._lobby_changed)
        if self.store_health is not None:
            self._unhealth = self.store_health.listen(self._lobby_changed)
        self._tick = asyncio.ensure_future(self._ticking())

    async def close(self) -> None:
        if self.referee.services.observer == self.observe:
            self.referee.services.observer = None
        if self._unlisten is not None:
            self._unlisten()
        if self._unhealth is not None:
            self._unhealth()
        if self._lobby_soon is not None:
            self._lobby_soon.cancel()
        if self._tick is not None:
            self._tick.cancel()
            await asyncio.gather(self._tick, return_exceptions=True)
        for link in list(self.links):
            link.close()

    def link(self, extra: dict[str, Any] | None = None) -> Link:
        """A new link's protocol (its hello is the feed's, with ``extra``)."""
        return Link(self, {**self.hello, **(extra or {})})

    # -- the referee's observer ---------------------------------------------------------
    def observe(self, runner: GameRunner, state: GameState | None, rec: RecordBuilder | None) -> None:
        """The referee's step observer: never raises (a game must not end because its
        spectators' view failed), never blocks."""
        try:
            gid = runner.spec.game_id
            g = self.games.get(gid)
            if state is None or rec is None:
                if g is None or g.over:
                    return
                g.note()
                g.over = True
                self._ending[gid] = g
                while len(self._ending) > MAX_ENDING:  # links stalled: the oldest is given up
                    _, old = self._ending.popitem(last=False)
                    old.rec = None
                    self._forget(old)
            elif g is None:
                g = self.games[gid] = _Game(runner, rec, _start_message(runner), [0] * len(runner.seats))
                g.note()
            else:
                g.note()
            for link in self.links:
                link.touch(gid)
            if not self.links and g.over:
                self.collect()
        except Exception:
            log.exception("live_feed_failed", game_id=runner.spec.game_id)

    def collect(self) -> None:
        """Forget the ended games every link has sent."""
        while self._ending:
            gid, g = next(iter(self._ending.items()))
            if any(gid in link.dirty or gid in link.sent for link in self.links):
                return
            del self._ending[gid]
            self._forget(g)

    def _forget(self, g: _Game) -> None:
        gid = g.runner.spec.game_id
        if self.games.get(gid) is g:
            del self.games[gid]
        self._ended[gid] = g.noted
        while len(self._ended) > ENDED_KEPT:
            self._ended.popitem(last=False)

    # -- the lobby and the other processes ---------------------------------------------
    def _lobby_changed(self) -> None:
        if self._lobby_soon is None:
            self._lobby_soon = asyncio.get_running_loop().call_later(BATCH, self.refresh_now)

    def refresh_now(self) -> None:
        """Tell every link the bots' streams and the other processes, if they changed."""
        self._lobby_soon = None
        if not self.links:
            return
        per: dict[str, list[int]] = {}
        for conn in list(self.referee.connections):
            if conn.closed.is_set():
                continue
            c = per.setdefault(conn.bot, [0, 0, 0])
            c[0] += 1
            c[1 if conn.busy else 2] += 1
        bots = [[name, *per[name]] for name in sorted(per)]
        cluster = None
        if self.web_urls is not None or self.streams_elsewhere is not None:
            cluster = {"urls": self.web_urls() if self.web_urls else {},
                       "elsewhere": {b: list(v) for b, v in
                                     (self.streams_elsewhere() if self.streams_elsewhere else {}).items()}}
        store = _store_notice(self.store_health)
        for link in self.links:
            link.say("l", bots)
            link.say("h", store)
            if cluster is not None:
                link.say("c", cluster)

    async def _ticking(self) -> None:
        while True:
            await asyncio.sleep(TICK)
            try:
                self.refresh_now()
            except Exception:
                log.exception("live_feed_failed")

    # -- what tests and benchmarks read -------------------------------------------------
    def steps(self) -> dict[str, int]:
        """Each game's steps played so far: those in progress, and those ended lately."""
        out = dict(self._ended)
        for gid, g in self.games.items():
            out[gid] = len(g.rec.actions) if g.rec is not None else g.noted
        return out

    def running(self, tournament_id: str | None = None) -> list[str]:
        """The ids of the games in progress (of one tournament, if given)."""
        return [gid for gid, g in self.games.items() if not g.over and (
            tournament_id is None or g.runner.spec.tournament_id == tournament_id)]


def _store_notice(health: StoreHealth | None) -> dict[str, Any] | None:
    """The notice of a database that does not take writes, None while it does."""
    if health is None or health.problem is None:
        return None
    return {"state": health.state.value, "problem": health.problem, "since": health.since,
            "waiting": health.waiting}
