"""Practice games yield to every other game on the event loop.

A bot may ask for practice as often as the limits allow and answer at once: each
practice game then runs as fast as the loop turns, and a few of them would fill every
pass of the loop with their work, delaying the tournament games beside them. The
:class:`Pacer` makes practice games take turns: before each of its steps (a decision, or
the end of the game) a practice game waits for its turn, and the pacer gives one turn
per pass of the event loop. Whatever the number of practice games, a pass then holds
the work of at most one practice step besides everything else, and other games wait
for at most that; when nothing else runs, passes are quick and practice goes at full
speed.

Other games may also *hold* the practice games for a moment: a game holds them from the
moment it has read an answer until it has written its next request (:meth:`hold`), so
that what it must do in between never waits behind a practice step.
"""

from __future__ import annotations

import asyncio
import collections


class Pacer:
    """Gives turns to its waiters one per pass of the running event loop, in order."""

    def __init__(self) -> None:
        self._waiting: collections.deque[asyncio.Future[None]] = collections.deque()
        self._scheduled = False
        self.holds = 0

    def hold(self, on: bool) -> None:
        """Hold (``on``) or let go of the practice games: no turn is given while any
        hold is on."""
        if on:
            self.holds += 1
            return
        self.holds -= 1
        if not self.holds and self._waiting and not self._scheduled:
            self._scheduled = True
            asyncio.get_running_loop().call_soon(self._next)

    def turn(self) -> asyncio.Future[None]:
        """A future done at the caller's turn (await it)."""
        loop = asyncio.get_running_loop()
        fut = loop.create_future()
        self._waiting.append(fut)
        if not self._scheduled and not self.holds:
            self._scheduled = True
            loop.call_soon(self._next)
        return fut

    def _next(self) -> None:
        if self.holds:
            self._scheduled = False  # the last hold let go schedules the next turn
            return
        waiting = self._waiting
        while waiting:
            fut = waiting.popleft()
            if not fut.done():  # a cancelled waiter gives its turn away
                fut.set_result(None)
                break
        if waiting:
            # Callbacks scheduled now run in the next pass, after everything already due.
            asyncio.get_running_loop().call_soon(self._next)
        else:
            self._scheduled = False

    def __len__(self) -> int:
        return len(self._waiting)
