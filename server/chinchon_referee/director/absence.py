"""Absent bots of a tournament: whose games are postponed, and whose forfeit.

A bot becomes *absent* when one of its games had to start without it (it was not
connected within the reconnect grace: a NO_SHOW forfeit). While it is absent its games
are postponed: the director plays every other game it can. When nothing else can be
played, the game that is due waits the grace for its bots and forfeits on its own (one
game, not all of the bot's games). Only once a bot has been absent for longer than the
tournament's ``policies.absence_limit`` (counted from its first NO_SHOW) do its
remaining games forfeit at once. A bot that connects again is absent no more: its
postponed games are played normally.
"""

from __future__ import annotations

import enum
import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field


class Presence(enum.Enum):
    """What to do now with a game, given the absences of its bots."""

    #: No bot of the game is absent: play it when its bots have free streams.
    PLAY = "play"
    #: Some bot is absent, not for long: play other games first.
    POSTPONE = "postpone"
    #: Some bot has been absent longer than the absence limit: it forfeits now.
    FORFEIT = "forfeit"


@dataclass
class Absences:
    """The absent bots of one tournament, with the (monotonic) time each went absent."""

    limit: float
    since: dict[str, float] = field(default_factory=dict)

    def __contains__(self, bot: object) -> bool:
        return bot in self.since

    def __len__(self) -> int:
        return len(self.since)

    def mark(self, bots: Iterable[str], now: float) -> None:
        """``bots`` missed a game: absent from now (or still since their first miss)."""
        for b in bots:
            self.since.setdefault(b, now)

    def returned(self, connected: Callable[[str], object]) -> list[str]:
        """Forget the absent bots that are connected again; return them."""
        back = [b for b in self.since if connected(b)]
        for b in back:
            del self.since[b]
        return back

    def expired(self, bot: str, now: float) -> bool:
        """Absent for longer than the limit."""
        t = self.since.get(bot)
        return t is not None and now - t >= self.limit

    def next_expiry(self, now: float) -> float | None:
        """The first (monotonic) time after ``now`` at which an absent bot not expired
        at ``now`` is :meth:`expired`, or None (no such bot)."""
        times = [self._expiry(t) for t in self.since.values() if now - t < self.limit]
        return min(times) if times else None

    def _expiry(self, since: float) -> float:
        """The time a bot absent since ``since`` expires: ``since + limit``, moved up by
        the rounding error if need be, so that :meth:`expired` holds then."""
        when = since + self.limit
        while when - since < self.limit:
            when = math.nextafter(when, math.inf)
        return when

    def presence(self, players: Sequence[str], now: float) -> Presence:
        if any(self.expired(b, now) for b in players):
            return Presence.FORFEIT
        if any(b in self.since for b in players):
            return Presence.POSTPONE
        return Presence.PLAY

    def missing(self, players: Sequence[str]) -> list[int]:
        """The seats of ``players`` whose bot is absent."""
        return [i for i, b in enumerate(players) if b in self.since]
