"""The ladders of one referee: declared, entered, paused, resumed, closed, and run.

:class:`Ladders` is what the admin service calls (service/ladders.py): it stores a
ladder and registers its entrants' tokens (:meth:`create`), enters a bot later
(:meth:`enter`, a new version of a bot inheriting an old one's rating if the organizer
says so), takes one off (:meth:`remove`: its games and rating stay), runs every open
ladder (:meth:`resume_all` at start-up) and answers the leaderboard.

While a ladder is open, its entrants are *kept*: the director's dismissal of bots that
no tournament needs leaves them waiting (``keep``: Remaining.declared, under the name
``ladder:<id>``); when it closes they are *released* (``release``: Remaining.ended).
"""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace

from ..auth import TokenBook, digest, new_token
from ..host.pools import for_games, for_organizer
from ..logs import get_logger
from ..referee import Referee
from ..storage import SqlStore, Store
from ..storage.health import StoreHealth
from ..storage.ladders import EntrantRow, LadderGameRow, LadderRow, LadderStatus
from .history import earlier_score
from .leaderboard import Place, Standing, leaderboard
from .ratings import PRIOR, Rating
from .runner import LadderRun
from .spec import Entrant, Entry, LadderError, LadderSpec, declared

log = get_logger("ladder")

Keep = Callable[[str, Iterable[str]], None]


@dataclass(frozen=True)
class Board:
    """A ladder's leaderboard as the organizer sees it."""

    ladder: LadderRow
    spec: LadderSpec
    places: list[Place]
    #: Bots with a stream on this referee now: name -> idle streams.
    connected: dict[str, int]


def ladder_store(store: Store) -> SqlStore:
    """The store's ladder rows (every backend's store has them)."""
    if not isinstance(store, SqlStore):
        raise TypeError(f"ladders need an SQL store, got {type(store).__name__}")
    return store


class Ladders:
    def __init__(self, referee: Referee, store: Store, tokens: TokenBook, keep: Keep,
                 release: Keep, owner: str | None = None,
                 health: StoreHealth | None = None, lease: float = 0.0) -> None:
        self.referee = referee
        #: The referee's lobby: the idle streams the runs seat.
        self.lobby = referee.lobby
        #: Whether the database takes writes, and the results waiting for it: shared with
        #: the director's (one database), so that the organizer sees both and no game of
        #: either starts while a result of either waits.
        self.health = health if health is not None else StoreHealth()
        self.store = ladder_store(store)
        self.tokens = tokens
        self._keep, self._release = keep, release
        #: Sharing a database: this process's name on the games it plays, and their
        #: lease (seconds; renewed at every heartbeat by cluster/member.py).
        self.owner, self.lease = owner, lease
        self.runs: dict[str, LadderRun] = {}
        self._tasks: dict[str, asyncio.Task[None]] = {}
        self._refreshing: asyncio.Task[None] | None = None
        #: Sharing a database: tells the other processes at once that ladders or their
        #: entrants' tokens changed (they read them again, as at a heartbeat); thread-safe.
        self._tell_others: Callable[[], None] = lambda: None
        #: Called with each game rated (the web view's feed, watchers).
        self.listeners: list[Callable[[str, LadderGameRow], None]] = []

    # -- declaring -------------------------------------------------------------------
    def create(self, spec: LadderSpec, lid: str | None = None) -> tuple[str, list[Entrant]]:
        """Store a ladder and enter its entrants; returns its id and the entrants with
        their tokens (generated ones shown only here; a registered bot keeps its own and
        is returned without). LadderError (nothing stored) for a bad token."""
        spec = spec.with_seed()
        lid = lid or f"l-{uuid.uuid4().hex[:10]}"
        registered = dict(self.store.bots())
        for e in spec.entrants:
            self._check_token(e, registered)
        stored = spec.to_dict(with_secrets=True)
        for d in stored["entrants"]:
            d.pop("token", None)  # only digests are kept
        self.store.create_ladder(LadderRow(lid, spec.name, stored, LadderStatus.OPEN, time.time()))
        out = [replace(e, token=self._register(e, registered)) for e in spec.entrants]
        for e in spec.entrants:
            self._enter_row(lid, e.name, e.inherits)
        self._keep_entrants(lid, spec)
        self._tell_others()
        log.info("ladder_created", ladder=lid, name=spec.name, entrants=len(out))
        return lid, out

    def _check_token(self, e: Entrant, registered: dict[str, str]) -> None:
        if not e.token:
            return
        if self.tokens.is_admin(e.token):
            raise LadderError(f"entrants: {e.name}'s token is the admin token")
        holder = self.tokens.holder(digest(e.token))
        if holder is not None and holder != e.name:
            raise LadderError(f"entrants: {e.name}'s token is bot {holder}'s (each needs its own)")
        known = registered.get(e.name)
        if known is not None and known != digest(e.token):
            raise LadderError(f"entrants: {e.name} is registered with another token; leave "
                              "its token out to keep the registered one")

    def _register(self, e: Entrant, registered: dict[str, str]) -> str:
        """Register ``e``'s token (a new one if none is given): the token to show, or ""."""
        if e.name in registered:
            return ""
        token = e.token or new_token()
        self.store.add_bot(e.name, digest(token))
        self.tokens.add(e.name, token)
        registered[e.name] = digest(token)
        return token

    def _enter_row(self, lid: str, bot: str, inherits: str) -> EntrantRow | None:
        start = PRIOR.mu, PRIOR.sigma
        if inherits:
            old = next((r for r in self.store.entrants(lid) if r.bot == inherits), None)
            if old is not None:
                start = old.mu, old.sigma
        self.store.enter_ladder(lid, bot, start, inherits)
        return next((r for r in self.store.entrants(lid) if r.bot == bot), None)

    def enter(self, lid: str, name: str, token: str = "", inherits: str = "") -> str:
        """Enter bot ``name`` (registering it if new): the token to show it, or ""."""
        row, spec = self._ladder(lid)
        if row.status is LadderStatus.CLOSED:
            raise LadderError(f"ladder {lid} is closed")
        e = Entrant(name, token, inherits=inherits)
        e.check("entrant")
        registered = dict(self.store.bots())
        self._check_token(e, registered)
        shown = self._register(e, registered)
        entered = self._enter_row(lid, name, inherits)
        run = self.runs.get(lid)
        if run is not None and entered is not None:
            run.entrants[name] = entered
            run.removed.discard(name)
            run.changed.set()
        self._keep_entrants(lid, spec)
        self._tell_others()
        return shown

    async def enter_async(self, lid: str, bot: str) -> None:
        await for_organizer(self.enter, lid, bot)

    def remove(self, lid: str, bot: str) -> bool:
        """Take ``bot`` off the ladder: it is seated no more (a game in progress ends);
        its games and rating stay. False if it was not entered."""
        done = self.store.remove_entrant(lid, bot)
        run = self.runs.get(lid)
        if run is not None:
            run.entrants.pop(bot, None)
            run.removed.add(bot)
        if done:
            self._tell_others()
        return done

    def _keep_entrants(self, lid: str, spec: LadderSpec) -> None:
        names = (self.tokens.bots if spec.entry is Entry.REGISTERED
                 else [r.bot for r in self.store.entrants(lid) if not r.removed])
        self._keep(f"ladder:{lid}", names)

    def _ladder(self, lid: str) -> tuple[LadderRow, LadderSpec]:
        row = self.store.ladder(lid)
        if row is None:
            raise KeyError(lid)
        return row, declared(row.spec)

    # -- running ---------------------------------------------------------------------
    def resume_all(self) -> list[str]:
        """Run every ladder that is not closed (at start-up)."""
        ids = [r.id for r in self.store.ladders() if r.status is not LadderStatus.CLOSED]
        for lid in ids:
            self.start(lid)
        return ids

    def follow(self, on_beat: Callable[[Callable[[], None]], object],
               on_leases_lost: Callable[[Callable[[], None]], object],
               tell_others: Callable[[], None]) -> None:
        """Sharing a database (``on_beat``, ``on_leases_lost``, ``tell_others``: the
        cluster's): after every heartbeat, what the other processes did to the ladders is
        read again: ladders declared, paused, resumed or closed there, entrants entered or
        removed, the ratings their games moved (matchmaking here reads them), and the bots
        at a table there; what this process changes, it tells the others at once (a bot
        given its token can connect to any process straight away); when this process's
        leases may run out, its ladder games stop."""
        on_beat(self._beat)
        on_leases_lost(self.leases_lost)
        self._tell_others = tell_others

    def leases_lost(self) -> None:
        """The database is out of reach and this process's leases may run out: its ladder
        games stop now (ABORTED: voided, never rated), before another process seats
        their bots again."""
        for run in self.runs.values():
            self.referee.stop(run.games, "this referee process lost its database for too long")

    def _beat(self) -> None:
        if self._refreshing is None or self._refreshing.done():
            self._refreshing = asyncio.ensure_future(self.refresh())

    async def refresh(self) -> None:
        """Read every ladder and its entrants again (in a worker thread), and bring the
        runs here up to date."""
        def read() -> list[tuple[LadderRow, list[EntrantRow], dict[str, str | None]]]:
            return [(r, self.store.entrants(r.id), self.store.busy_ladder_bots(r.id))
                    for r in self.store.ladders() if r.status is not LadderStatus.CLOSED
                    or r.id in self.runs]

        for row, entrants, busy in await for_games(read):
            run = self.runs.get(row.id)
            task = self._tasks.get(row.id)
            if run is None or task is None or task.done():
                if row.status is not LadderStatus.CLOSED:
                    self.start(row.id)
                continue
            if run.status is not row.status:
                run.status = row.status
                if row.status is LadderStatus.CLOSED:
                    self._release(f"ladder:{row.id}", [e.bot for e in entrants])
            for e in entrants:
                if e.removed:
                    run.entrants.pop(e.bot, None)
                    run.removed.add(e.bot)
                else:
                    run.entrants[e.bot] = e
                    run.removed.discard(e.bot)
            run.busy = {b for b, owner in busy.items() if owner != self.owner}
            run.changed.set()

    def start(self, lid: str) -> None:
        """Run ``lid`` here (in the background), unless it runs already or is closed."""
        task = self._tasks.get(lid)
        if task is not None and not task.done():
            return
        row, spec = self._ladder(lid)
        if row.status is LadderStatus.CLOSED:
            return
        self._keep_entrants(lid, spec)
        run = self.runs[lid] = LadderRun(self, lid, spec, row.status, self.store.entrants(lid))
        task = self._tasks[lid] = asyncio.ensure_future(run.execute())
        task.add_done_callback(lambda t: _crashed(lid, t))

    async def set_status(self, lid: str, status: LadderStatus) -> bool:
        """Pause or resume (OPEN) ``lid``; KeyError if there is none, LadderError if closed."""
        row, _ = await for_organizer(self._ladder, lid)
        if row.status is LadderStatus.CLOSED:
            raise LadderError(f"ladder {lid} is closed")
        changed = await for_organizer(self.store.set_ladder_status, lid, status)
        run = self.runs.get(lid)
        if run is not None:
            run.status = status
            run.changed.set()
        if changed:
            self._tell_others()
        return changed

    async def close(self, lid: str, why: str = "the organizer closed it") -> bool:
        """Close ``lid`` for good: no table starts any more, the games in progress end
        (and are rated), its entrants are released. False if it was closed already."""
        await for_organizer(self._ladder, lid)  # KeyError: no such ladder
        changed = await for_organizer(self.store.set_ladder_status, lid, LadderStatus.CLOSED)
        run = self.runs.get(lid)
        if run is not None:
            run.status = LadderStatus.CLOSED
            run.changed.set()
        if changed:
            log.info("ladder_closed", ladder=lid, why=why)
            self._release(f"ladder:{lid}", [r.bot for r in self.store.entrants(lid)])
            self._tell_others()
        return changed

    async def wait(self, lid: str) -> None:
        task = self._tasks.get(lid)
        if task is not None:
            await asyncio.shield(task)

    async def settle(self, timeout: float) -> None:
        tasks = [t for t in self._tasks.values() if not t.done()]
        if tasks:
            await asyncio.wait(tasks, timeout=timeout)

    def game_rated(self, lid: str, row: LadderGameRow) -> None:
        for listener in list(self.listeners):
            listener(lid, row)

    # -- reading ---------------------------------------------------------------------
    def board(self, lid: str) -> Board:
        """The leaderboard of ``lid`` (KeyError: no such ladder). Reads the store."""
        row, spec = self._ladder(lid)
        standings = [Standing(e.bot, _rating(e), e.games, e.wins, e.last_game,
                              earlier_score(self.store, lid, e.bot,
                                            Rating(e.start_mu, e.start_sigma), spec.k), e.removed)
                     for e in self.store.entrants(lid)]
        connected = {e.bot: sum(1 for c in self.lobby.idle.get(e.bot, ()) if not c.closed.is_set())
                     for e in self.store.entrants(lid) if self.referee.connected(e.bot)}
        return Board(row, spec, leaderboard(standings, spec.k), connected)


    def bot_page(self, lid: str, bot: str, limit: int = 100
                 ) -> tuple[Board, Place | None, list[LadderGameRow]]:
        """The leaderboard, ``bot``'s place on it, and its newest ``limit`` games (KeyError:
        no such ladder). Reads the store."""
        board = self.board(lid)
        place = next((p for p in board.places if p.standing.bot == bot), None)
        return board, place, self.store.ladder_games(lid, bot=bot, limit=limit, newest_first=True)


def _crashed(lid: str, task: asyncio.Task[None]) -> None:
    """A ladder's run that ended by an error (a bug): said in the log, not lost."""
    if not task.cancelled() and task.exception() is not None:
        log.error("ladder_run_crashed", ladder=lid, error=repr(task.exception()))


def _rating(e: EntrantRow) -> Rating:
    return Rating(e.mu, e.sigma)
