"""Why the referee played a seat's move for it, and what follows from each reason: the
record's origin, the reason told to the bot, and the termination once the strikes run
out (the one place these are mapped)."""

from __future__ import annotations

import enum

from chinchon.engine import Termination
from chinchon.engine.record import ActionOrigin
from chinchon.v1 import referee_pb2 as pb


class DefaultReason(enum.Enum):
    """Why a default action was played."""

    #: The bot did not answer within its time.
    TIMEOUT = "timeout"
    #: The bot's answers were refused until no retry was left.
    ILLEGAL = "illegal"

    @property
    def origin(self) -> ActionOrigin:
        """The record's origin of the move."""
        return (ActionOrigin.DEFAULT_TIMEOUT if self is DefaultReason.TIMEOUT
                else ActionOrigin.DEFAULT_ILLEGAL)

    @property
    def wire(self) -> pb.DefaultReason:
        """The reason ``DefaultPlayed`` tells the bot."""
        return pb.DEFAULT_REASON_TIMEOUT if self is DefaultReason.TIMEOUT else pb.DEFAULT_REASON_ILLEGAL

    @property
    def forfeit(self) -> Termination:
        """How the game ends when this reason's strikes reach the limit."""
        return (Termination.FORFEIT_TIMEOUT if self is DefaultReason.TIMEOUT
                else Termination.FORFEIT_ILLEGAL)

    @property
    def strikes(self) -> str:
        """The strikes, in words."""
        return "timeouts" if self is DefaultReason.TIMEOUT else "illegal actions"
