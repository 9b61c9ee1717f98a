"""Typed errors of the rules engine.

Two families, as in python-chess: input that cannot be understood at all
(:class:`MalformedInput`, e.g. ``'7X'`` is not a card) and input that is understood
but breaks a rule (:class:`IllegalAction`, which names the rule through ``code``).
Every message is written for a bot author and makes sense on its own.
"""

from __future__ import annotations

from enum import Enum


class ChinchonError(Exception):
    """Base of every error the engine raises on purpose."""


class MalformedInput(ChinchonError, ValueError):
    """Text or data that is not a card, an action or a meld at all."""


class Violation(str, Enum):
    """Machine-readable name of the rule an illegal action breaks (stable, used on the wire)."""

    GAME_OVER = "GAME_OVER"
    NOT_YOUR_TURN = "NOT_YOUR_TURN"
    WRONG_PHASE = "WRONG_PHASE"
    CHANCE_EXPECTED = "CHANCE_EXPECTED"
    CARD_NOT_IN_HAND = "CARD_NOT_IN_HAND"
    DISCARD_PILE_CLOSED = "DISCARD_PILE_CLOSED"
    RETAKE_DISCARD = "RETAKE_DISCARD"
    INVALID_MELD = "INVALID_MELD"
    CARD_USED_TWICE = "CARD_USED_TWICE"
    CLOSE_TOO_MANY_UNMATCHED = "CLOSE_TOO_MANY_UNMATCHED"
    CLOSE_TOO_MANY_POINTS = "CLOSE_TOO_MANY_POINTS"
    CLOSE_OVER_SCORE_LIMIT = "CLOSE_OVER_SCORE_LIMIT"
    CLOSE_FIRST_ROUND = "CLOSE_FIRST_ROUND"
    NO_SUCH_MELD = "NO_SUCH_MELD"
    OWN_MELD = "OWN_MELD"
    CLOSER_MELDS_LOCKED = "CLOSER_MELDS_LOCKED"
    LAYOFF_DOES_NOT_FIT = "LAYOFF_DOES_NOT_FIT"
    BAD_DEAL = "BAD_DEAL"
    BAD_RESHUFFLE = "BAD_RESHUFFLE"


class IllegalAction(ChinchonError):
    """A well-formed action that the rules do not allow now; the state is unchanged."""

    def __init__(self, code: Violation, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message

    def __repr__(self) -> str:
        return f"IllegalAction({self.code.value}, {self.message!r})"


class InvalidMeld(ChinchonError, ValueError):
    """A group of cards that is not a set or a run; ``reason`` says why."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class RuleSetError(ChinchonError, ValueError):
    """A rule set option that is unknown, of the wrong type, impossible or contradictory."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"rule set: {field}: {message}")
        self.field = field
        self.message = message


class RecordError(ChinchonError, ValueError):
    """A game record that cannot be read, or whose content does not replay."""
