"""The server's fixed vocabularies, and their names in the protocol (the one place
they are mapped). Each value is the text stored in the database."""

from __future__ import annotations

import enum
from typing import cast

from chinchon.v1 import tournament_pb2 as tpb


class TournamentStatus(enum.StrEnum):
    """Where a tournament is in its life."""

    SCHEDULED = "scheduled"
    RUNNING = "running"
    FINISHED = "finished"
    CANCELLED = "cancelled"

    @property
    def over(self) -> bool:
        """Finished or cancelled: it never runs again."""
        return self in (TournamentStatus.FINISHED, TournamentStatus.CANCELLED)

    def to_proto(self) -> tpb.TournamentStatus:
        """The protocol's ``chinchon.v1.TournamentStatus`` value."""
        return cast(tpb.TournamentStatus, tpb.TournamentStatus.Value("TOURNAMENT_STATUS_" + self.name))


class GameStatus(enum.StrEnum):
    """Where a tournament game is: not played yet (or voided, to be played again), being
    played, or played (its record stored)."""

    SCHEDULED = "scheduled"
    RUNNING = "running"
    FINISHED = "finished"

    def to_proto(self) -> tpb.GameStatus:
        """The protocol's ``chinchon.v1.GameStatus`` value."""
        return cast(tpb.GameStatus, tpb.GameStatus.Value("GAME_STATUS_" + self.name))

    @classmethod
    def from_proto(cls, value: int) -> GameStatus:
        """The status a protocol value names; ValueError for UNSPECIFIED or an unknown one."""
        try:
            return cls[tpb.GameStatus.Name(cast(tpb.GameStatus, value)).removeprefix("GAME_STATUS_")]
        except (KeyError, ValueError):
            raise ValueError(f"unknown game status {value}") from None
