"""This referee process's part in a PostgreSQL database shared by several
(``chinchon serve --shared``): who it is, who the others are, and what they tell it.

Every process plays the games it can seat (it holds an idle stream of every player) and
claims each in the store first, so that a game is played by one process only
(:meth:`Store.claim_game`). A claimed game holds a lease, which its process renews at
every heartbeat, four times per lease:

- the process writes its row in ``processes``: its addresses, and the bots with
  streams on it (so that no process forfeits a bot that another one holds);
- it renews its games' leases, then voids the games whose lease ran out (their process
  died, or lost the database): they are played again, from a new deal, by whichever
  process claims them (a ladder's game is voided, never rated: its bots are seated
  again). Leases and heartbeats are written and judged by the database's
  clock, so hosts whose clocks disagree judge them alike; a host whose clock is off by
  more than :data:`SKEW` says so at its heartbeat (``clock_skew``, and GetServerStatus);
- it reads the other processes' rows and the registered bots (a token rotated or
  revoked through another process takes effect here too).

A bot registered through another process may connect here before this one's next
heartbeat: a token unknown here has the registered bots read again before it is refused
(:meth:`Cluster.reread_tokens`: one read at a time, at most one per
:data:`REREAD_EVERY`, whatever tokens clients send).

A message bus (PostgreSQL's ``NOTIFY``) carries the tournaments' events to every process
(a watcher hears every game, whichever process plays it), and word that tournaments or
bots changed or games were voided, so that the others act at once rather than at their
next heartbeat. A process that lost the bus for a while reads the store again.
"""

from __future__ import annotations

import asyncio
import hashlib
import os
import secrets
import socket
import time
from collections.abc import Callable, Coroutine
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from ..auth import TokenBook
from ..host.pools import for_games
from ..logs import get_logger
from ..referee import Referee
from ..referee.streams import BotStreams, end_streams, stream_counts
from ..storage import ProcessRow, SqlStore, Store, StoreError, open_bus
from .messages import BusEvent, Kind, Message, decode, encode

log = get_logger("cluster")

#: A claimed game's lease, by default (seconds): a process that stops renewing its leases
#: (killed, or cut off from the database) has its games played again by the others after
#: this long.
LEASE = 10.0
#: Heartbeats per lease: a lease is renewed this many times before it runs out.
BEATS_PER_LEASE = 4
#: A process that could not renew its leases for a whole lease stops its games (they end
#: without a result, to be played again); the others void a game only this part of a
#: lease after its lease ran out: so a game is never played by two processes at once,
#: even with clocks apart by a few seconds.
STOP_AFTER = 1.0
VOID_GRACE = 0.5
#: A token unknown here has the registered bots read again, at most once per this many
#: seconds (a client sending wrong tokens costs the database that many reads, no more).
REREAD_EVERY = 0.5
#: A process not heard from for this many leases is taken off the processes table.
FORGET_AFTER = 6
#: A host whose clock differs from the database's by more than this (seconds) is told
#: so at its heartbeats (``clock_skew``).
SKEW = 0.5
#: The longest bus message (PostgreSQL refuses 8000 bytes or more; storage/bus.py).
NOTE_MAX = 7900


def process_name() -> str:
    """A name for this process, unique among the processes of a database."""
    return f"{socket.gethostname()}:{os.getpid()}:{secrets.token_hex(3)}"


class Cluster:
    def __init__(self, store: Store, referee: Referee, tokens: TokenBook, *,
                 lease: float = LEASE) -> None:
        if not lease > 0:
            raise ValueError(f"lease {lease}: give seconds, more than 0")
        self.store = store
        self.referee = referee
        self.tokens = tokens
        self.lease = lease
        #: Where this process serves, and its web view's URL ("": none): set by start.
        self.address = ""
        self.http = ""
        self.owner = process_name()
        #: A number of this process's own (where it begins among the first games).
        self.slot = int.from_bytes(hashlib.sha256(self.owner.encode()).digest()[:4], "big")
        self.started = time.time()
        #: This host's clock minus the database's, at the last heartbeat (None: not yet).
        self.clock_offset: float | None = None
        #: Counts the voidings this process heard of (its own, or another's): a
        #: tournament's run reads its scheduled games again when it changes.
        self.voids = 0
        #: Called on the event loop for each message from another process, by kind.
        self.handlers: dict[Kind, Callable[[Message], None]] = {}
        #: Called after every heartbeat, and when the bus was lost and is back.
        self._wake: list[Callable[[], None]] = []
        self._others: dict[str, ProcessRow] = {}
        self._loop: asyncio.AbstractEventLoop | None = None
        self._task: asyncio.Task[None] | None = None
        #: Called (on the loop) when this process could not renew its leases in time, and
        #: again every heartbeat until it can.
        self._lost: list[Callable[[], None]] = []
        self._watchdog: asyncio.TimerHandle | None = None
        #: When (the loop's clock) the last renewal began, and the heartbeat in flight.
        self._renewed: float | None = None
        self._beat_began: float | None = None
        self._jobs: set[asyncio.Task[None]] = set()
        self._sender = ThreadPoolExecutor(max_workers=1, thread_name_prefix="bus-sender")
        self._bus = open_bus(store.target, self._received, self._reconnected)
        #: The registered bots' read for a token unknown here: the one in progress, and
        #: when (the loop's clock) the last one began.
        self._rereading: asyncio.Future[None] | None = None
        self._reread_began = -REREAD_EVERY
        tokens.reread = self.reread_tokens

    def soon(self, job: Coroutine[Any, Any, None]) -> None:
        """Run ``job`` on the loop, kept until it ends."""
        task = asyncio.ensure_future(job)
        self._jobs.add(task)
        task.add_done_callback(self._jobs.discard)

    @property
    def tick(self) -> float:
        """Seconds between two heartbeats."""
        return self.lease / BEATS_PER_LEASE

    async def start(self, address: str, http: str) -> None:
        """Listen to the others, say this process is here (serving at ``address``, its
        web view at the URL ``http``, "" if none), and beat from now on."""
        self.address, self.http = address, http
        self._loop = asyncio.get_running_loop()
        await for_games(self._bus.start)
        await self.beat()
        self._task = asyncio.ensure_future(self._beating())
        log.info("process_joined", owner=self.owner, lease=self.lease,
                 others=sorted(self._others))

    def on_leases_lost(self, callback: Callable[[], None]) -> None:
        """Call ``callback`` when this process's leases may run out before it can renew
        them (the database is out of reach): it must stop its games."""
        self._lost.append(callback)

    def _arm(self, renewed: float) -> None:
        """The leases were renewed by a call that began at ``renewed`` (the loop's clock)."""
        if self._watchdog is not None:
            self._watchdog.cancel()
        if self._loop is not None:
            self._watchdog = self._loop.call_at(renewed + STOP_AFTER * self.lease,
                                                self._leases_lost)

    def _leases_lost(self) -> None:
        now = self._loop.time() if self._loop is not None else 0.0
        log.error("leases_lost", owner=self.owner,
                  why="the database is out of reach: this process stops its games (they are "
                  "played again from a new deal) until it can renew its leases",
                  # What the heartbeat was doing: none since (crashed, or the loop
                  # starved), or one waiting that long for the database.
                  since_renewal=None if self._renewed is None else round(now - self._renewed, 2),
                  heartbeat_waiting=None if self._beat_began is None
                  else round(now - self._beat_began, 2))
        for callback in list(self._lost):
            callback()
        if self._loop is not None:
            self._watchdog = self._loop.call_later(self.tick, self._leases_lost)

    async def stop(self) -> None:
        """Stop beating, hand back the games this process was playing (voided: the
        others play them again), and take this process off the table. Call it once its
        games are over or stopped."""
        if self._task is not None:
            self._task.cancel()
            try:
                await self._task
            except asyncio.CancelledError:
                pass
        if self._watchdog is not None:
            self._watchdog.cancel()
        try:
            # The games stopped by the shutdown go back to the others now, not when
            # their leases run out.
            handed = await for_games(self.store.void_owned, self.owner)
            if isinstance(self.store, SqlStore):  # its ladder games: void, never rated
                await for_games(self.store.void_ladder_games, None, self.owner)
            await for_games(self.store.forget_processes, self.owner, None)
        except StoreError as e:
            log.warning("process_row_left", error=str(e))
        else:
            if handed:
                log.info("games_handed_back", count=handed)
                self._voided(handed)
        await for_games(self._sender.shutdown, True)  # what was said goes out first
        await for_games(self._bus.stop)

    def on_beat(self, callback: Callable[[], None]) -> Callable[[], None]:
        """Call ``callback`` after every heartbeat; returns the function that stops it."""
        self._wake.append(callback)

        def stop() -> None:
            if callback in self._wake:
                self._wake.remove(callback)

        return stop

    # -- who holds which bot --------------------------------------------------------------
    def rank(self) -> tuple[int, int]:
        """(this process's place among the live processes by name, how many there are),
        as of the last heartbeat."""
        owners = sorted([self.owner, *self._others])
        return owners.index(self.owner), len(owners)

    def present_elsewhere(self, bot: str) -> bool:
        """Another live process holds a stream of ``bot``."""
        return any(bot in p.bots for p in self._others.values())

    def streams_elsewhere(self) -> dict[str, tuple[BotStreams, int]]:
        """Each bot's streams on the other live processes, and on how many of them."""
        out: dict[str, tuple[BotStreams, int]] = {}
        for p in self._others.values():
            for bot, counts in p.bots.items():
                s, n = out.get(bot, (BotStreams(), 0))
                out[bot] = (s + BotStreams(*counts), n + 1)
        return out

    def web_streams(self) -> dict[str, tuple[int, int, int]]:
        """Each bot's (streams, seated, idle) on the other processes, for the web view."""
        return {b: (c.streams, c.seated, c.idle) for b, (c, _n) in self.streams_elsewhere().items()}

    def web_urls(self) -> dict[str, str]:
        """The web views' URLs of the live processes that have one, by process name."""
        return {o: p.http for o, p in self._others.items() if p.http}

    def web_of(self, owner: str) -> str | None:
        """The web view's URL of the live process ``owner`` (None: it has none)."""
        p = self._others.get(owner)
        return p.http or None if p is not None else None

    # -- the bus --------------------------------------------------------------------------
    def event_note(self, event: BusEvent) -> str | None:
        """A tournament's event as a bus message to send in the transaction that stores
        what it tells (``Store.finish_game(..., notify=)``: delivered exactly when that
        commits, never lost while the store holds it); None if too long for the bus
        (then it is published after)."""
        payload = encode(Message(self.owner, Kind.EVENT, event))
        return payload if len(payload.encode()) <= NOTE_MAX else None

    def publish(self, kind: Kind, event: BusEvent | None = None, voided: int = 0) -> None:
        """Tell every other process (not waited for; a failure is logged)."""
        payload = encode(Message(self.owner, kind, event, voided))

        def send() -> None:
            try:
                self._bus.publish(payload)
            except (StoreError, ValueError) as e:
                log.warning("bus_message_lost", kind=kind, error=str(e))

        self._sender.submit(send)

    def _received(self, payload: str) -> None:  # the bus's listening thread
        try:
            msg = decode(payload)
        except ValueError as e:
            log.warning("bus_message_unreadable", error=str(e))
            return
        if msg.owner == self.owner or self._loop is None:
            return
        self._loop.call_soon_threadsafe(self._dispatch, msg)

    def _dispatch(self, msg: Message) -> None:
        if msg.kind is Kind.VOIDED:
            self.voids += 1
            self._woken()
        elif msg.kind is Kind.BOTS:  # read the registered bots now
            self.soon(self.beat())
        handler = self.handlers.get(msg.kind)
        if handler is not None:
            handler(msg)

    def _reconnected(self) -> None:  # the bus's listening thread
        if self._loop is not None:
            self._loop.call_soon_threadsafe(self._missed)

    def _missed(self) -> None:
        """The bus was lost for a while: whatever was said meanwhile is read from the
        store instead (the runs read their scheduled games again)."""
        log.info("bus_back", owner=self.owner)
        self.voids += 1
        for kind in (Kind.TOURNAMENTS, Kind.RECONCILE):  # said meanwhile: from the store
            handler = self.handlers.get(kind)
            if handler is not None:
                handler(Message(self.owner, kind))
        self.soon(self.beat())

    def _voided(self, n: int) -> None:
        """This process voided ``n`` games: its runs and the others' read their
        scheduled games again."""
        self.voids += 1
        self.publish(Kind.VOIDED, voided=n)

    def _woken(self) -> None:
        for callback in list(self._wake):
            callback()

    # -- the heartbeat --------------------------------------------------------------------
    async def _beating(self) -> None:
        loop = asyncio.get_running_loop()
        due = loop.time()
        while True:
            # At a steady rate, however long a heartbeat takes.
            due = max(due + self.tick, loop.time())
            await asyncio.sleep(due - loop.time())
            try:
                await self.beat()
            except Exception as e:  # a bug of a callback: logged, and the beat goes on
                log.error("heartbeat_crashed", owner=self.owner, error=repr(e))

    async def beat(self) -> None:
        """One heartbeat (see the module's doc); a database out of reach is logged and
        tried again at the next."""
        counts = {b: (c.streams, c.seated, c.idle, c.other)
                  for b, c in stream_counts(self.referee).items()}
        generation = self.tokens.generation
        began = asyncio.get_running_loop().time()
        self._beat_began = began
        try:
            voided, ladder_voided, others, registered = await for_games(self._beat_io, counts)
        except StoreError as e:
            log.warning("heartbeat_failed", owner=self.owner, error=str(e))
            return
        finally:
            if self._beat_began == began:
                self._beat_began = None
        # Two heartbeats can overlap (the bus asks for one): the watchdog counts from the
        # latest renewal, whichever ends last.
        renewed = began if self._renewed is None else max(self._renewed, began)
        self._renewed = renewed
        self._arm(renewed)
        self._others = {p.owner: p for p in others if p.owner != self.owner}
        if voided:
            log.info("games_voided", count=voided, why="their process stopped renewing its "
                     "leases: they will be played again from a new deal")
            self._voided(voided)
        if ladder_voided:
            log.info("ladder_games_voided", count=ladder_voided, why="their process stopped "
                     "renewing its leases: never rated, their bots are seated again")
        if generation == self.tokens.generation:
            self.sync_tokens(registered)
        self._woken()

    def _beat_io(self, counts: dict[str, tuple[int, int, int, int]]
                 ) -> tuple[int, int, list[ProcessRow], list[tuple[str, str]]]:
        # Renewed first: a process never voids a game of its own. Every time is the
        # database's (leases, heartbeats): this host's clock only measures its offset.
        self.store.renew_leases(self.owner, self.lease)
        self.store.heartbeat(ProcessRow(self.owner, self.address, self.http, counts,
                                        self.started, 0.0))
        voided = self.store.void_expired(VOID_GRACE * self.lease)
        ladder_voided = (self.store.void_expired_ladder_games(VOID_GRACE * self.lease)
                         if isinstance(self.store, SqlStore) else 0)
        self.store.forget_processes(None, FORGET_AFTER * self.lease)
        before = time.time()
        db = self.store.db_clock()
        self._clock((before + time.time()) / 2 - db)
        return voided, ladder_voided, self.store.processes(self.lease), self.store.bots()

    def _clock(self, offset: float) -> None:
        """This host's clock minus the database's, measured at a heartbeat: leases do not
        depend on it, but a host whose clock is off says so (its logs' times, its games'
        start and end times are off by as much)."""
        before, self.clock_offset = self.clock_offset, offset
        skewed = abs(offset) > SKEW
        if skewed and (before is None or abs(before) <= SKEW or abs(offset - before) > SKEW):
            log.warning("clock_skew", owner=self.owner, offset=round(offset, 3),
                        note="this host's clock is not the database's: set it right (NTP); "
                        "leases are judged by the database's clock")
        elif not skewed and before is not None and abs(before) > SKEW:
            log.info("clock_agrees", owner=self.owner, offset=round(offset, 3))

    async def reread_tokens(self) -> None:
        """Read the registered bots again, for a token this process does not know: in a
        read begun after this call (a bot registered through another process just before
        it connected here is then known). Calls at once share one read, and reads begin
        :data:`REREAD_EVERY` apart at least; a read that fails is logged, and the token
        is refused."""
        loop = asyncio.get_running_loop()
        asked = loop.time()
        while True:
            reading = self._rereading
            if reading is not None and self._reread_began >= asked:
                await asyncio.shield(reading)  # begun after this call: its answer counts
                return
            if reading is not None and not reading.done():
                await asyncio.shield(reading)  # begun before: read again after it
                continue
            pause = self._reread_began + REREAD_EVERY - loop.time()
            if pause > 0:
                await asyncio.sleep(pause)
                continue  # another call may have begun one meanwhile
            self._reread_began = loop.time()
            self._rereading = asyncio.ensure_future(self._reread())

    async def _reread(self) -> None:
        generation = self.tokens.generation
        try:
            registered = await for_games(self.store.bots)
        except StoreError as e:
            log.warning("token_reread_failed", owner=self.owner, error=str(e))
            return
        if generation == self.tokens.generation:
            self.sync_tokens(registered)

    def sync_tokens(self, registered: list[tuple[str, str]]) -> None:
        """Bring the token book to the registered bots (as read from the store): a bot
        whose token changed or that was revoked through another process loses its
        streams here too."""
        want = dict(registered)
        have = self.tokens.digests()
        for bot, d in want.items():
            if have.get(bot) != {d}:
                self.tokens.remove(bot)
                self.tokens.add_digest(bot, d)
                if bot in have:
                    n = end_streams(self.referee, bot, "the bot's token was rotated by the "
                                    "organizer: connect with the new token")
                    log.info("bot_token_rotated_elsewhere", bot=bot, streams_ended=n)
        for bot in have.keys() - want.keys():
            self.tokens.remove(bot)
            n = end_streams(self.referee, bot, "the bot's token was revoked by the organizer")
            log.info("bot_revoked_elsewhere", bot=bot, streams_ended=n)
