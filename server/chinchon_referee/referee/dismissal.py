"""Dismissals: telling a queue stream that nothing more will be scheduled for its bot.

The lobby sends the message and ends the stream with OK (see :meth:`Lobby.dismiss`);
who decides when is the tournament director (:mod:`chinchon_referee.director.remaining`). Here:
the reasons, the one mapping to ``chinchon.v1.DismissReason``, and the message."""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import cast

from chinchon.v1 import referee_pb2 as pb


class DismissReason(enum.Enum):
    """Why nothing more will be scheduled for a bot."""

    #: Every game scheduled for it is played (its tournaments finished, or have no game
    #: left for it).
    GAMES_PLAYED = "games_played"
    #: The last tournament that had games for it was cancelled.
    TOURNAMENT_CANCELLED = "tournament_cancelled"

    def to_proto(self) -> pb.DismissReason:
        """The protocol's ``chinchon.v1.DismissReason`` value."""
        return cast(pb.DismissReason, pb.DismissReason.Value("DISMISS_REASON_" + self.name))


@dataclass(frozen=True, slots=True)
class Dismissal:
    """Why a bot's queue streams are dismissed: the reason, the tournament whose end
    (or last game for the bot) left nothing scheduled, and a sentence for people."""

    reason: DismissReason
    tournament_id: str
    message: str

    def to_wire(self) -> pb.PlayResponse:
        return pb.PlayResponse(dismissed=pb.Dismissed(
            reason=self.reason.to_proto(), tournament_id=self.tournament_id,
            message=self.message))
