"""Referee settings: the clock, penalty policies and stream limits, with documented defaults."""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from .declarations.bounds import MAX_SECONDS as MAX_SECONDS  # the bound of a duration
from .declarations.bounds import seconds
from .declarations.errors import FieldError

#: Shortest time per move (10 ms): less than a round trip is a typo, not a time control.
MIN_PER_MOVE = 0.01
#: Most retries and strikes a policy may allow (each is a request to a bot).
MAX_COUNT = 100


@dataclass(frozen=True)
class TimeControl:
    """Per-decision time plus a per-game bank (seconds).

    A decision may take ``per_move`` seconds for free; time beyond that is taken from
    the bank; when both are used up the referee plays a default action (a strike).
    Defaults: 1 s per move, 30 s bank: generous for any language over a LAN, small
    enough that a hung bot costs its opponent at most a few seconds per game.
    """

    per_move: float = 1.0
    bank: float = 30.0

    def __post_init__(self) -> None:
        seconds(self.per_move, "time_control.per_move", positive=True)
        if self.per_move < MIN_PER_MOVE:
            raise FieldError("time_control.per_move", f"at least {MIN_PER_MOVE:g} s, "
                             f"got {self.per_move:g}")
        seconds(self.bank, "time_control.bank", positive=False)


@dataclass(frozen=True)
class Policies:
    """What happens to a bot that breaks the rules or the clock.

    * An illegal action is refused with its reason; the bot may try again (on the same
      clock) ``max_illegal_retries`` times; then, as after a timeout, the referee plays
      the default action and counts a strike.
    * ``max_strikes`` strikes in one game forfeit it.
    * A bot that disconnects mid-game keeps its seat for ``reconnect_grace`` seconds,
      counted from the moment its stream was lost; a stream with its token opened
      meanwhile resumes the seat; after that it forfeits. Its clock keeps running while
      it is away. The same grace applies to a bot that is not connected when its game
      must start.
    * A tournament bot that missed a game that way is *absent*: its games are
      postponed while others can be played, and when nothing else can, the game that is
      due waits the grace and forfeits alone. After ``absence_limit`` seconds of absence
      (counted from its first missed game) its remaining games forfeit at once; 0 does
      that at the first missed game. Default 300 s: time to restart a crashed bot.
    """

    max_illegal_retries: int = 2
    max_strikes: int = 3
    reconnect_grace: float = 10.0
    absence_limit: float = 300.0

    def __post_init__(self) -> None:
        if not 0 <= self.max_illegal_retries <= MAX_COUNT:
            raise FieldError("policies", f"max_illegal_retries must be 0 to {MAX_COUNT}, "
                             f"got {self.max_illegal_retries}")
        if not 1 <= self.max_strikes <= MAX_COUNT:
            raise FieldError("policies", f"max_strikes must be 1 to {MAX_COUNT}, "
                             f"got {self.max_strikes}")
        seconds(self.reconnect_grace, "policies.reconnect_grace", positive=False)
        seconds(self.absence_limit, "policies.absence_limit", positive=False)


@dataclass(frozen=True)
class Limits:
    """Stream limits.

    * ``max_message_bytes``: largest message a bot may send (64 KiB; an action is a few
      hundred bytes). Larger ones fail the stream with RESOURCE_EXHAUSTED.
    * ``max_admin_message_bytes``: largest message the organizer's service takes (1 MiB:
      a declaration of 200 bots is some 85 kB). The server reads no larger message on
      any call; a Play stream's message over ``max_message_bytes`` ends that stream.
    * ``max_send_bytes``: largest message the referee sends (records at game end).
    * ``max_unsolicited``: messages a stream may send without being asked (stale or
      unsolicited actions, extra hellos) since its last answer to an outstanding
      request; one more and it is closed with RESOURCE_EXHAUSTED. Each answer starts
      the count again: a bot late now and then over a long tournament is no flood.
    * ``hello_timeout``: a stream must say Hello within this time.
    * ``write_timeout``: a bot that does not read its stream for this long is treated as
      disconnected (one slow reader never holds up anything else).
    * keepalive: the server pings idle streams every ``keepalive_time`` seconds and
      drops them if no answer within ``keepalive_timeout``; clients may ping every
      ``min_client_ping`` seconds at most.
    * ``practice_wait`` / ``max_practice_wait``: how long a bot asking for practice
      against ``any`` other bot waits for one when its request does not say
      (``PracticeRequest.wait``), and the most it may ask for.
    * ``max_streams_per_bot`` / ``max_streams``: open Play streams per bot (token) and
      in all; one more is refused with RESOURCE_EXHAUSTED naming the limit. A bot needs
      one stream per game it plays at once (a tournament's ``concurrency`` at most).
    * ``max_practice_per_bot`` / ``max_practice``: practice sessions running at once per
      bot and in all; a practice hello beyond them gets an ERROR_CODE_BAD_REQUEST error
      naming the limit, and its stream ends with RESOURCE_EXHAUSTED.
    * ``practice_records`` / ``practice_record_days``: ``chinchon serve`` keeps the
      records of games outside tournaments (practice games) for this many days, and at
      most this many of them (the newest); tournament games are kept for good.
    """

    max_message_bytes: int = 64 * 1024
    max_admin_message_bytes: int = 1024 * 1024
    max_send_bytes: int = 16 * 1024 * 1024
    max_unsolicited: int = 50
    hello_timeout: float = 30.0
    write_timeout: float = 10.0
    keepalive_time: float = 20.0
    keepalive_timeout: float = 10.0
    min_client_ping: float = 5.0
    practice_wait: float = 120.0
    max_practice_wait: float = 3600.0
    max_streams_per_bot: int = 128
    max_streams: int = 1024
    max_practice_per_bot: int = 2
    max_practice: int = 16
    practice_records: int = 1000
    practice_record_days: float = 7.0

    def __post_init__(self) -> None:
        for name in ("max_streams_per_bot", "max_streams", "max_practice_per_bot",
                     "max_practice"):
            if getattr(self, name) < 1:
                raise ValueError(f"limits: {name} must be at least 1, got {getattr(self, name)}")
        if self.practice_records < 0:
            raise ValueError(f"limits: practice_records cannot be negative, "
                             f"got {self.practice_records}")
        if not self.practice_record_days > 0:
            raise ValueError(f"limits: practice_record_days must be positive, "
                             f"got {self.practice_record_days}")


@dataclass(frozen=True)
class RefereeConfig:
    time_control: TimeControl = field(default_factory=TimeControl)
    policies: Policies = field(default_factory=Policies)
    limits: Limits = field(default_factory=Limits)

    def with_(self, **changes: object) -> RefereeConfig:
        return replace(self, **changes)  # type: ignore[arg-type]
