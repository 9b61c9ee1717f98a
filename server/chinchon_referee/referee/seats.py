"""A seat of a game: who plays it (a house bot or a bot's stream) and its clock and
counts."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, field

from chinchon.engine import Bot

from .connection import Connection


@dataclass
class SeatStats:
    timeouts: int = 0
    illegal: int = 0
    strikes: int = 0
    decisions: int = 0
    think_time: float = 0.0


@dataclass
class Seat:
    index: int
    name: str
    house: Bot | None = None
    conn: Connection | None = None
    bank: float = 0.0
    stats: SeatStats = field(default_factory=SeatStats)
    #: ``PlayResponse.accepted`` for the seat's last applied answer, until it is sent
    #: with the next message to the seat.
    ack: bytes = b""
    reattached: asyncio.Event = field(default_factory=asyncio.Event)
    #: The stream that has had this game's ``game_started``: a stream that takes the
    #: seat over gets ``game_started(resumed)`` before anything else.
    greeted: Connection | None = None
    #: Called when the seat's stream is lost while its game runs (set by the game).
    lost_hook: Callable[[Seat], None] | None = None
    #: The practice session the seat belongs to, if any: a practice stream of the bot
    #: that comes back takes the seat over and stays until the session ends.
    session: asyncio.Future[None] | None = None
    #: The game the seat is in (set by the game when it starts).
    game_id: str = ""

    @property
    def remote(self) -> bool:
        return self.house is None

    def attach(self, conn: Connection) -> None:
        """Seat ``conn`` here (a stream of this seat's bot), and watch it."""
        self.conn = conn
        conn.busy = True
        conn.game_id = self.game_id
        hook = self.lost_hook
        conn.on_lost = None if hook is None else (lambda: hook(self))
        self.reattached.set()

