"""The run of one ladder on a referee: seat the connected idle entrants, again and again,
while the ladder is open.

:meth:`LadderRun.execute` loops: while the ladder is open (its window, and not paused),
it asks :func:`.matchmaking.next_tables` for the tables the waiting entrants make (those
with an idle stream in the lobby, at no table of the ladder), takes their streams and
plays each table as a game of its own; otherwise, and when no table can start, it sleeps
until something may change that (a stream comes to the lobby, a game ends, the organizer
pauses, resumes or closes it, the window opens or closes). A bot that is not connected
is simply not seated: nothing is forfeited for being away. A game in progress follows
the policies (a bot that drops mid-game has the reconnect grace, then forfeits).

Each game is a row of ``ladder_games``, written ``running`` before it starts; its end
and its rating update are one transaction (storage/ladders.py). A game stopped by the
referee's shutdown stays ``running`` and is voided when the ladder runs again (never
rated; the bots are simply seated again). A game the referee aborted is voided too.

Sharing a database (``serve --shared``), the row is written only if none of its players
is at a running game of the ladder on any process (one transaction: a bot never sits at
two tables of a ladder at once); bots refused so, and those the heartbeat finds at a
table elsewhere (:attr:`LadderRun.busy`), wait here until they are free. The row holds a
lease, renewed at every heartbeat with the tournaments' (cluster/member.py): a game whose
process died or lost the database is voided by the others once its lease runs out, and
its bots are seated again wherever they have a stream. A process that cannot renew its
leases stops its ladder games first (:meth:`.ladders.Ladders.leases_lost`).

While the database is out of reach or its disk is full (:class:`~..storage.StoreUnavailable`),
as for tournaments (director/game_rows.py): a finished game's result and rating update
wait in memory (counted in the shared :class:`~..storage.health.StoreHealth`, which the
organizer sees) and are written again and again, with a growing pause, until stored;
meanwhile no new table is seated (one start at a time tries while nothing waits: the
write that tells whether the database is back). The transaction writes only a row still
``running``, so a retry after a commit whose answer was lost writes nothing twice: the
stored row is read back instead.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import datetime as dt
import secrets
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict
from typing import Any, Protocol, TypeVar

from ..host.pools import for_games
from ..logs import get_logger
from ..referee import GameOutcome, GameSpec, Lobby, Referee, Seat, ShuttingDown
from ..referee.connection import Connection
from ..storage import SqlStore, StoreError, StoreUnavailable
from ..storage.health import StoreHealth
from ..storage.ladders import EntrantRow, LadderGameRow, LadderGameStatus, LadderStatus
from .health import shows_life, suspension_text, time_forfeit_seats
from .matchmaking import LastTable, next_tables
from .ratings import Rating, ranks, update
from .spec import EnteredAlready, Entry, LadderError, LadderSpec

log = get_logger("ladder")
_R = TypeVar("_R")


class Host(Protocol):
    """What a run needs of the ladders that host it (:class:`.ladders.Ladders`): the
    referee that plays its games and the lobby it seats from, the ladder rows and the
    database's health, its name and lease on a shared database, and three calls back."""

    referee: Referee
    lobby: Lobby
    store: SqlStore
    health: StoreHealth
    owner: str | None
    lease: float

    async def close(self, lid: str, why: str = ...) -> bool: ...

    async def enter_async(self, lid: str, bot: str) -> None: ...

    def game_rated(self, lid: str, row: LadderGameRow) -> None: ...


def rate(before: Sequence[tuple[float, float]], places: Sequence[int]) -> list[tuple[float, float]]:
    """The store's rating update (storage.ladders.Rate) by openskill (ratings.py)."""
    after = update([Rating(mu, sigma) for mu, sigma in before], places)
    return [(r.mu, r.sigma) for r in after]


#: The newest games read at start to learn each bot's last table.
RECENT = 1000
#: The tables started that a run keeps for matchmaking's shares (its longest window:
#: matchmaking.window of the most entrants).
STARTED = 5000
#: The first and the longest pause between two attempts to write while the database is
#: out of reach (seconds): as director/game_rows.py.
RETRY_FIRST, RETRY_MAX = 0.2, 2.0


def last_tables(newest: Sequence[LadderGameRow]) -> dict[str, LastTable]:
    """Each bot's last table, from the games newest first."""
    last: dict[str, LastTable] = {}
    for g in newest:
        for seat, bot in enumerate(g.players):
            last.setdefault(bot, LastTable(tuple(g.players), seat))
    return last


def _opened_since(since: float) -> Callable[[Connection], bool]:
    def fresh(conn: Connection) -> bool:
        return shows_life(conn.opened, since)
    return fresh


class LadderRun:
    """One open ladder being played by this process."""

    def __init__(self, host: Host, lid: str, spec: LadderSpec, status: LadderStatus,
                 entrants: list[EntrantRow]) -> None:
        self.host = host
        self.lid = lid
        self.spec = spec
        self.status = status
        self.entrants: dict[str, EntrantRow] = {e.bot: e for e in entrants if not e.removed}
        #: Bots taken off (not entered again when they connect to an open-entry ladder).
        self.removed = {e.bot for e in entrants if e.removed}
        self.last: dict[str, LastTable] = {}
        #: Bots at a table of this ladder now.
        self.seated: set[str] = set()
        #: The games of this ladder being played here now.
        self.games: set[str] = set()
        #: Bots at a table of this ladder on another process sharing the database (read
        #: at every heartbeat, and learnt when a table is refused for them): not seated
        #: here until they are free.
        self.busy: set[str] = set()
        self.running: set[asyncio.Task[None]] = set()
        self.changed = asyncio.Event()
        #: Games finished (rated) by this run.
        self.played = 0
        #: The next pause before a start is tried again while the database is out of reach.
        self.pause = RETRY_FIRST
        #: The tables started here, oldest first (seeded at start with the newest games):
        #: matchmaking counts each bot's share of them.
        self.started: collections.deque[tuple[str, ...]] = collections.deque(maxlen=STARTED)
        #: Bots whose suspension a new stream lifted, and when the suspension began: their
        #: streams opened since are seated before their older ones (health.py).
        self.revived: dict[str, float] = {}

    def rating(self, bot: str) -> Rating:
        e = self.entrants[bot]
        return Rating(e.mu, e.sigma)

    async def execute(self) -> None:
        stop = self.host.lobby.listen(self.changed.set)
        stop_health = self.host.health.listen(self.changed.set)  # results wait: none seated
        try:
            voided = await for_games(self.host.store.void_ladder_games, self.lid,
                                     self.host.owner)
            if voided:
                log.info("ladder_games_voided", ladder=self.lid, count=voided)
            newest = await for_games(lambda: self.host.store.ladder_games(
                self.lid, limit=RECENT, newest_first=True))
            self.last = last_tables(newest) | self.last  # a restart keeps the rotation
            self.started.extendleft(tuple(g.players) for g in newest)
            await self._loop()
        except StoreError as e:  # run again when the referee starts again
            log.error("ladder_run_stopped", ladder=self.lid, error=str(e))
        except asyncio.CancelledError:
            await self.host.referee.cancel(self.running)  # between two writes to its bots
            raise
        finally:
            stop()
            stop_health()
            await asyncio.gather(*self.running, return_exceptions=True)

    async def _loop(self) -> None:
        while self.host.referee.closing is None and self.status is not LadderStatus.CLOSED:
            # Cleared before the state is read: whatever changes it meanwhile (a stream
            # arriving while an entry is written) wakes the wait below at once.
            self.changed.clear()
            now = dt.datetime.now(dt.UTC)
            if self.spec.closes is not None and now >= self.spec.closes:
                await self.host.close(self.lid, "its window closed")
                break
            if self.status is LadderStatus.OPEN and self.spec.is_open_at(now):
                await self._enter_newcomers()
                await self._revive()
                if self._seat():
                    continue
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.changed.wait(), self._until_window(now))

    def _until_window(self, now: dt.datetime) -> float | None:
        """Seconds to the next moment the window opens or closes, None if none is ahead."""
        ahead = [(t - now).total_seconds() for t in (self.spec.opens, self.spec.closes)
                 if t is not None and t > now]
        return min(ahead) if ahead else None

    def _waiting(self) -> list[str]:
        lobby = self.host.lobby
        return [b for b, e in self.entrants.items() if b not in self.seated
                and b not in self.busy and e.suspended is None
                and any(not c.closed.is_set() for c in lobby.idle.get(b, ()))]

    async def _revive(self) -> None:
        """A suspended bot with an idle stream opened since its suspension began shows
        life: the suspension is lifted (in the store first) and that stream seated."""
        lobby = self.host.lobby
        for bot, e in list(self.entrants.items()):
            since = e.suspended
            if since is None or not any(not c.closed.is_set() and shows_life(c.opened, since)
                                        for c in lobby.idle.get(bot, ())):
                continue
            try:
                await self._write(self.host.store.lift_suspension, self.lid, bot, time.time())
            except StoreError as err:
                log.warning("ladder_revival_not_stored", ladder=self.lid, bot=bot,
                            error=str(err))
                return
            e.suspended = None
            self.revived[bot] = since
            log.info("ladder_bot_revived", ladder=self.lid, bot=bot, why="a new stream")

    async def _enter_newcomers(self) -> None:
        """An open-entry ladder ("registered"): a bot with an idle stream enters."""
        if self.spec.entry is not Entry.REGISTERED:
            return
        lobby = self.host.lobby
        for bot in [b for b, conns in list(lobby.idle.items()) if conns]:
            if bot not in self.entrants and bot not in self.removed:
                try:
                    await self.host.enter_async(self.lid, bot)
                except EnteredAlready:  # by another process: read with the entrants
                    found = await for_games(self.host.store.entrants, self.lid)
                    self.entrants.update({e.bot: e for e in found if e.bot == bot})
                    if bot not in self.entrants:
                        self.removed.add(bot)
                except (LadderError, StoreError) as e:
                    log.warning("ladder_entry_failed", ladder=self.lid, bot=bot, error=str(e))
                    self.removed.add(bot)  # not tried again by this run

    def _seat(self) -> bool:
        """Start the tables matchmaking gives now; True if one started."""
        slots = self.spec.concurrency - len(self.running)
        if not self.host.health.may_start(bool(self.running)):
            return False  # results wait for the database, or it is out of reach
        if self.host.health.problem is not None:
            slots = min(slots, 1)  # one start tries whether the database is back
        waiting = self._waiting()
        if slots <= 0 or len(waiting) < self.spec.table_size:
            return False
        ratings = {b: self.rating(b) for b in waiting}
        active = len(set(waiting) | self.seated | (self.busy & set(self.entrants)))
        started = False
        for table in next_tables(waiting, ratings, self.last, self.spec.table_size, slots,
                                 bool(self.running), self.started, active):
            gs = self._game_spec(table)
            for bot in table:
                since = self.revived.get(bot)
                if since is not None:  # its streams opened since its suspension first
                    self.host.lobby.prefer(bot, _opened_since(since))
            seats = self.host.referee.seats_for(gs)
            if seats is None:
                continue  # a stream closed between the look and the take
            self.seated.update(table)
            self.started.append(table)
            task = asyncio.ensure_future(self._one(gs, seats))
            self.running.add(task)
            task.add_done_callback(self.running.discard)
            started = True
        return started

    def _game_spec(self, table: tuple[str, ...]) -> GameSpec:
        gid = f"{self.lid}-{secrets.token_hex(6)}"
        s = self.spec
        # Each game's deal is its own (the seed with a deal id never used before): no
        # deal repeats, however many games the same bots play.
        return GameSpec(game_id=gid, rules=s.rules, players=list(table), seed=s.seed,
                        deal_id=gid, time_control=s.time_control, policies=s.policies,
                        tournament_id=self.lid, labels={"ladder": self.lid})

    async def _one(self, gs: GameSpec, seats: list[Seat]) -> None:
        host, players = self.host, gs.players
        try:
            try:
                busy = await self._write(host.store.begin_ladder_game, self.lid, gs.game_id,
                                         players, host.owner, host.lease)
            except (StoreError, KeyError) as e:
                log.warning("ladder_game_not_begun", ladder=self.lid, error=str(e))
                self._give_back(seats)
                if isinstance(e, StoreUnavailable):
                    # Holding the slot: no other start tries before the pause is over.
                    await asyncio.sleep(self._pause())
                return
            self.pause = RETRY_FIRST
            if busy:  # at a table of this ladder on another process: seated when free
                log.info("ladder_table_refused", ladder=self.lid, busy=sorted(busy),
                         why="at a table of this ladder on another process")
                self.busy |= busy
                self._give_back(seats)
                return
            self.games.add(gs.game_id)
            try:
                outcome = await host.referee.play(gs, seats, release=True)
            except ShuttingDown:
                return  # stays running: voided when its lease runs out, or the ladder runs again
            finally:
                self.games.discard(gs.game_id)
            await self._record(gs, outcome)
        finally:
            self.seated.difference_update(players)
            current = asyncio.current_task()
            if current is not None:
                self.running.discard(current)
            self.changed.set()

    def _give_back(self, seats: list[Seat]) -> None:
        for s in seats:
            if s.conn is not None:
                self.host.lobby.give_back(s.conn)

    def _pause(self) -> float:
        pause, self.pause = self.pause, min(RETRY_MAX, self.pause * 2)
        return pause

    async def _write(self, write: Callable[..., _R], *args: Any) -> _R:
        """``write(*args)`` in a worker thread; its success or failure tells the health."""
        health = self.host.health
        try:
            out = await for_games(write, *args)
        except StoreUnavailable as e:
            health.failed(e)
            raise
        health.worked()
        return out

    async def _store_end(self, gs: GameSpec, outcome: GameOutcome,
                         places: list[int] | None) -> LadderGameRow | None:
        """Write the game's end and rating update, again and again while the database is
        out of reach (the result waits in memory, counted in the health), until stored;
        the row as stored (read back if an earlier attempt was committed unanswered), or
        None if it was not this run's to write."""
        store, health = self.host.store, self.host.health
        pause, tried = RETRY_FIRST, False
        health.waiting += 1
        try:
            while True:
                try:
                    row = await self._write(store.finish_ladder_game, gs.game_id,
                                            outcome.result, places,
                                            [asdict(s) for s in outcome.stats],
                                            outcome.record, rate,
                                            time_forfeit_seats(outcome.result),
                                            self.spec.suspend_after)
                    if row is None and tried:
                        row = await self._write(store.ladder_game, gs.game_id)
                        if row is not None and row.status is LadderGameStatus.RUNNING:
                            row = None
                    return row
                except StoreUnavailable as e:
                    if self.host.referee.closing is not None:
                        raise  # stays running: voided when the ladder runs again
                    log.warning("ladder_result_retried", ladder=self.lid, game_id=gs.game_id,
                                error=str(e), retry_in=pause)
                    tried = True
                    await asyncio.sleep(pause)
                    pause = min(RETRY_MAX, pause * 2)
        finally:
            health.result_written()

    async def _record(self, gs: GameSpec, outcome: GameOutcome) -> None:
        places = ranks(outcome.result)
        try:
            row = await self._store_end(gs, outcome, places)
        except StoreError as e:
            log.warning("ladder_game_not_recorded", ladder=self.lid, game_id=gs.game_id,
                        error=str(e))
            return
        if row is None or row.ratings is None:
            return
        self.played += 1
        for seat, (bot, (mu, sigma)) in enumerate(zip(gs.players, row.ratings, strict=True)):
            self.last[bot] = LastTable(tuple(gs.players), seat)
            entrant = self.entrants.get(bot)
            if entrant is not None and places is not None:
                entrant.mu, entrant.sigma = mu, sigma
                entrant.games, entrant.last_game = entrant.games + 1, row.finished
                if places[seat] == 0:
                    entrant.wins += 1.0 / places.count(0)
        await self._health(gs, outcome, row)
        log.info("ladder_game_rated", ladder=self.lid, game_id=gs.game_id, update=row.rated,
                 summary=outcome.result.summary)
        self.host.game_rated(self.lid, row)

    async def _health(self, gs: GameSpec, outcome: GameOutcome, row: LadderGameRow) -> None:
        """The players' forfeits on time in a row after the game, as stored; a bot the
        game suspended is seated no more (health.py)."""
        on_time = time_forfeit_seats(outcome.result)
        suspended = row.suspended
        if suspended is None:  # read back after a lost answer: read the entrants too
            try:
                stored = {e.bot: e for e in await for_games(self.host.store.entrants, self.lid)}
            except StoreError:
                stored = {}
            suspended = [b for b in gs.players if b in stored and stored[b].suspended is not None]
        for seat, bot in enumerate(gs.players):
            entrant = self.entrants.get(bot)
            if entrant is None:
                continue
            if seat in on_time:
                entrant.time_forfeits += 1
                entrant.last_time_forfeit = row.finished
            else:
                entrant.time_forfeits = 0
            if bot in suspended and entrant.suspended is None:
                entrant.suspended = row.finished or time.time()
                self.revived.pop(bot, None)
                log.warning("ladder_bot_suspended", ladder=self.lid, bot=bot,
                            why=suspension_text(entrant.time_forfeits,
                                                entrant.last_time_forfeit, entrant.suspended))
