"""A ladder's health: a bot that stops answering is suspended, not seated for ever.

A bot whose moves hang keeps its stream open, so it looks idle and would be seated
again and again, each game a forfeit on time and a free win for its opponent. The
rule (docs/ladder.md, "Health"):

- A game a bot forfeits **on time** (its strikes ran out on timeouts:
  ``TERMINATION_FORFEIT_TIMEOUT``) adds one to its forfeits on time in a row; any other
  end of a game it played (a game played out, a win by another's forfeit, its own
  forfeit for illegal moves or a lost stream) sets the count back to 0. A voided game
  counts for nothing.
- When the count reaches the ladder's ``suspend_after`` (3 by default; 0: never), the
  bot is **suspended**: not seated, its row and page say why.
- It **shows life again** by opening a new stream (one opened after the suspension
  began): the suspension is lifted and that stream is the one seated. The organizer
  can lift it too (``chinchon admin ladder reinstate ID BOT``). Lifted, its count stands
  until it ends a game otherwise: one more forfeit on time suspends it again at once.

Pure: no I/O, no clock.
"""

from __future__ import annotations

import datetime as dt

from chinchon.engine import Outcome, Termination


def time_forfeit_seats(result: Outcome) -> list[int]:
    """The seats of ``result`` that forfeited the game on time."""
    if result.termination is Termination.FORFEIT_TIMEOUT and result.forfeited is not None:
        return [result.forfeited]
    return []


def shows_life(stream_opened: float, suspended: float) -> bool:
    """A stream opened at ``stream_opened`` (a ``time.time()``) is a sign of life of a
    bot suspended since ``suspended``: it was opened after."""
    return stream_opened > suspended


def suspension_text(time_forfeits: int, last_time_forfeit: float | None,
                    suspended: float | None) -> str:
    """Why a bot is suspended, in words ("" when it is not)."""
    if suspended is None:
        return ""
    last = last_time_forfeit if last_time_forfeit is not None else suspended
    when = dt.datetime.fromtimestamp(last, dt.UTC).strftime("%Y-%m-%d %H:%M:%SZ")
    games = "forfeit" if time_forfeits == 1 else "forfeits"
    return f"suspended: {time_forfeits} {games} in a row on time (last at {when})"
