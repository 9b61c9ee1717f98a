"""The Python bot SDK.

Write a bot as a class with ``choose(obs, legal) -> action`` and run it::

    python -m chinchon.sdk --target localhost:50051 --token TOKEN --bot my_bot.py:MyBot

The engine's helpers a bot usually wants are re-exported here:
``best_arrangement``, ``can_close``, ``deadwood``, ``parse_card``, ``parse_cards``.
"""

from chinchon.engine import (
    Action,
    Observation,
    RuleSet,
    best_arrangement,
    deadwood,
    parse_card,
    parse_cards,
    solver_for,
)

from .client import BotClient, FatalError, PracticeOptions, SessionReport, run_bot


def can_close(hand7: object, rules: RuleSet, score: int = 0) -> bool:
    """Could these seven cards close a hand (under ``rules`` and at ``score``)?"""
    from chinchon.engine import mask_of

    mask = hand7 if isinstance(hand7, int) else mask_of(hand7)  # type: ignore[arg-type]
    return solver_for(rules).closing(mask, score) is not None


__all__ = [
    "Action",
    "BotClient",
    "FatalError",
    "Observation",
    "PracticeOptions",
    "RuleSet",
    "SessionReport",
    "best_arrangement",
    "can_close",
    "deadwood",
    "parse_card",
    "parse_cards",
    "run_bot",
]
