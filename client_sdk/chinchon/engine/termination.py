"""How a game ended: the engine's vocabulary, and its names in the protocol."""

from __future__ import annotations

import enum

from .game import GameEnd


class Termination(enum.StrEnum):
    """How a game ended. Each value is the name of the same value of the protocol's
    ``chinchon.v1.Termination`` (the one place the two are mapped: records and results
    write these names)."""

    #: Played to the end.
    NORMAL = "TERMINATION_NORMAL"
    #: Played to the end by a chinchón.
    CHINCHON = "TERMINATION_CHINCHON"
    FORFEIT_TIMEOUT = "TERMINATION_FORFEIT_TIMEOUT"
    FORFEIT_ILLEGAL = "TERMINATION_FORFEIT_ILLEGAL"
    FORFEIT_DISCONNECT = "TERMINATION_FORFEIT_DISCONNECT"
    FORFEIT_NO_SHOW = "TERMINATION_FORFEIT_NO_SHOW"
    #: Stopped by an internal error of the referee: no result.
    ABORTED = "TERMINATION_ABORTED"
    #: Nobody had won when the game reached its length limit (``game.MAX_HANDS`` hands,
    #: or ``game.MAX_TURNS`` turns in all): the lowest total among the players still in won.
    LENGTH_LIMIT = "TERMINATION_LENGTH_LIMIT"

    @property
    def played(self) -> bool:
        """The game was played to its end (its winners won at the table)."""
        return self in (Termination.NORMAL, Termination.CHINCHON, Termination.LENGTH_LIMIT)

    @property
    def forfeit(self) -> bool:
        """A seat forfeited the game."""
        return self.name.startswith("FORFEIT_")

    @classmethod
    def of_end(cls, end: GameEnd) -> Termination:
        """The termination of a game played to ``end``."""
        if end is GameEnd.LENGTH_LIMIT:
            return cls.LENGTH_LIMIT
        return cls.CHINCHON if end is GameEnd.CHINCHON else cls.NORMAL

    @classmethod
    def parse(cls, name: object) -> Termination | None:
        """The termination a record names, or None for a name it does not know."""
        if not isinstance(name, str):
            return None
        try:
            return cls(name)
        except ValueError:
            return None
