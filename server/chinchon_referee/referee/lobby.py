"""The lobby: idle streams per bot, and the seats of bots that dropped mid-game (a new
stream with the same token resumes them)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Sequence

from ..logs import get_logger
from .connection import Connection
from .dismissal import Dismissal
from .errors import Disconnected, ShuttingDown
from .seats import Seat

log = get_logger("referee.lobby")


class Lobby:
    """Idle connections per bot, and seats waiting for their bot to come back."""

    def __init__(self) -> None:
        self.idle: dict[str, list[Connection]] = {}
        self.orphans: dict[str, list[Seat]] = {}
        self._changed = asyncio.Condition()
        self.seen: set[str] = set()
        #: Why the lobby is closed (the referee is shutting down), or None while open.
        self.closing: str | None = None
        self._notifier: asyncio.Future[None] | None = None
        #: Called (with no argument) when a stream comes to the lobby idle and when the
        #: lobby closes: what a scheduler waits for (see :meth:`listen`).
        self._listeners: list[Callable[[], None]] = []
        #: Asked, for each queue stream that comes to the lobby idle, whether its bot is
        #: dismissed (nothing scheduled for it any more: see :meth:`dismiss`). Set by the
        #: tournament director; None (no tournaments): never.
        self.dismissal: Callable[[str], Dismissal | None] | None = None

    def listen(self, callback: Callable[[], None]) -> Callable[[], None]:
        """Call ``callback`` each time a stream becomes idle here (a bot connected, came
        back, or finished a game) and when the lobby closes; returns the function that
        stops it."""
        self._listeners.append(callback)

        def stop() -> None:
            if callback in self._listeners:
                self._listeners.remove(callback)

        return stop

    def _tell(self) -> None:
        for callback in list(self._listeners):
            callback()

    async def add(self, conn: Connection) -> None:
        self.seen.add(conn.bot)
        if self.closing is not None:
            # Shutting down: a stream back from its game, or a new one, is ended.
            conn.end(self.closing)
            return
        if self._take_over(conn, practice=False) is not None:
            return
        if self._sent_off_if_dismissed(conn):
            return
        self.idle.setdefault(conn.bot, []).append(conn)
        self._tell()
        async with self._changed:
            self._changed.notify_all()

    def take(self, bot: str) -> Connection | None:
        """An idle open connection of ``bot`` right now, or None."""
        if self.closing is not None:
            return None
        lst = self.idle.get(bot, [])
        while lst:
            conn = lst.pop(0)
            if not conn.closed.is_set():
                conn.busy = True
                return conn
        return None

    def give_back(self, conn: Connection) -> None:
        """Undo :meth:`take` (no waiter is woken: nothing changed for them). Its bot may
        have been dismissed while the stream was taken (a game's seats are taken, then
        its claim is refused because another process played it): the stream is then
        dismissed now, as on arrival, and never left idle with nothing to come; the lobby
        closed meanwhile, it is ended."""
        conn.busy = False
        if conn.closed.is_set():
            return
        if self.closing is not None:
            conn.end(self.closing)
            return
        if self._sent_off_if_dismissed(conn):
            return
        self.idle.setdefault(conn.bot, []).insert(0, conn)

    def prefer(self, bot: str, first: Callable[[Connection], bool]) -> None:
        """Put ``bot``'s idle streams for which ``first`` holds before its others (in
        their order), so that :meth:`take` takes them first."""
        lst = self.idle.get(bot)
        if lst:
            lst.sort(key=lambda c: not first(c))

    def remove(self, conn: Connection) -> None:
        lst = self.idle.get(conn.bot)
        if lst and conn in lst:
            lst.remove(conn)

    async def release(self, conn: Connection) -> None:
        conn.busy = False
        if not conn.closed.is_set():
            await self.add(conn)

    def orphan(self, seat: Seat) -> None:
        """Hold ``seat`` for the next stream its bot opens (once)."""
        lst = self.orphans.setdefault(seat.name, [])
        if seat not in lst:
            seat.reattached.clear()
            lst.append(seat)

    def unorphan(self, seat: Seat) -> None:
        lst = self.orphans.get(seat.name)
        if lst and seat in lst:
            lst.remove(seat)

    def resume_practice(self, conn: Connection) -> asyncio.Future[None] | None:
        """Give ``conn`` (a practice stream) the seat its bot left in a practice session,
        if one is held; that session, or None."""
        seat = self._take_over(conn, practice=True)
        return None if seat is None else seat.session

    def _take_over(self, conn: Connection, practice: bool) -> Seat | None:
        """Give ``conn`` the first seat held for its bot, a practice seat or a game's
        (each kind is taken over only by a stream of its kind); that seat, or None."""
        held = self.orphans.get(conn.bot, [])
        for seat in list(held):
            if (seat.session is not None) != practice:
                continue
            held.remove(seat)
            if seat.conn is not None and not seat.conn.closed.is_set():
                continue  # resumed another way meanwhile
            if seat.session is not None and seat.session.done():
                continue  # its session is over
            seat.attach(conn)
            log.info("seat_resumed", bot=conn.bot, conn=conn.id, seat=seat.index,
                     practice=practice)
            return seat
        return None

    def dismiss(self, bot: str, why: Dismissal) -> int:
        """Nothing more will be scheduled for ``bot``: send each of its idle streams
        ``why`` (``PlayResponse.dismissed``), then end it with OK. Streams in a game are
        not touched (the director asks again, through :attr:`dismissal`, when they come
        back). Returns how many streams were dismissed."""
        n = 0
        for conn in self.idle.pop(bot, []):
            if not conn.closed.is_set():
                self._send_off(conn, why)
                n += 1
        return n

    def _sent_off_if_dismissed(self, conn: Connection) -> bool:
        """Whether ``conn``'s bot is dismissed (then the stream is sent off): asked of
        every stream that would become idle here, new, back from a game or given back."""
        why = None if self.dismissal is None else self.dismissal(conn.bot)
        if why is None:
            return False
        self._send_off(conn, why)
        return True

    def _send_off(self, conn: Connection, why: Dismissal) -> None:
        conn.busy = True  # given to no game any more
        conn.spawn(self._dismissed(conn, why))

    async def _dismissed(self, conn: Connection, why: Dismissal) -> None:
        try:
            await conn.send(why.to_wire())
        except Disconnected:
            return
        log.info("stream_dismissed", bot=conn.bot, conn=conn.id, reason=why.reason.value,
                 tournament=why.tournament_id)
        conn.finish()

    def close_idle(self, why: str) -> int:
        """Close the lobby (shutdown): end every idle stream with UNAVAILABLE and ``why``,
        and every stream that comes to the lobby from now on; give no more streams out.
        Returns how many streams were ended."""
        self.closing = why
        n = 0
        for conns in self.idle.values():
            for conn in conns:
                if not conn.closed.is_set():
                    conn.end(why)
                    n += 1
            conns.clear()
        self._notifier = asyncio.ensure_future(self._notify())  # acquire / wait_all give up
        self._tell()
        return n

    async def _notify(self) -> None:
        async with self._changed:
            self._changed.notify_all()

    def connected(self, bot: str) -> int:
        return sum(1 for c in self.idle.get(bot, []) if not c.closed.is_set())

    async def acquire(self, bot: str, timeout: float) -> Connection | None:
        """An idle connection of ``bot``, waiting up to ``timeout`` seconds."""
        deadline = time.monotonic() + timeout
        async with self._changed:
            while True:
                if self.closing is not None:
                    raise ShuttingDown(self.closing)
                conn = self.take(bot)
                if conn is not None:
                    return conn
                left = deadline - time.monotonic()
                if left <= 0:
                    return None
                try:
                    await asyncio.wait_for(self._changed.wait(), left)
                except TimeoutError:
                    return None

    async def wait_all(self, bots: Sequence[str], timeout: float | None) -> bool:
        """Wait until every bot has at least one idle connection."""
        deadline = None if timeout is None else time.monotonic() + timeout
        async with self._changed:
            while not all(self.connected(b) for b in bots):
                if self.closing is not None:
                    raise ShuttingDown(self.closing)
                left = None if deadline is None else deadline - time.monotonic()
                if left is not None and left <= 0:
                    return False
                try:
                    await asyncio.wait_for(self._changed.wait(), left)
                except TimeoutError:
                    return False
            return True
