"""The Python bot SDK.

Write a bot as a class with ``choose(obs, legal) -> action``, or as a plain function
``choose(obs, legal)``, and run it::

    export CHINCHON_TOKEN=$(cat my_bot.token)   # never --token: ps shows command lines
    python -m chinchon.sdk --target localhost:50051 --bot my_bot.py:MyBot
    python -m chinchon.sdk --target localhost:50051 --bot my_bot.py:choose
    python -m chinchon.sdk --target host1:50051,host2:50051 --bot my_bot.py:MyBot
    python -m chinchon.sdk --target referee.example.org:50051 --tls --bot my_bot.py:MyBot

Several referee processes sharing one database (docs/bots.md): one address each,
comma-separated; the bot holds one stream on each.

Give ``choose`` (method or function) a third parameter and it also gets a
:class:`RequestContext` for each request: ``game_id``, ``seat``, ``request_id``,
``attempt`` (0, then 1, 2... after refused answers), ``move_time`` and ``bank_time``
(seconds left for this move before the bank is used, and in the bank, as the referee
sent them), ``time_left`` and ``deadline``::

    def choose(obs, legal, request):
        if request.attempt > 0 or request.time_left < 0.1:
            return legal[0]  # refused once already, or no time to think: play safe
        ...

The signature is read once, when the bot is loaded. The engine's helpers a bot usually
wants are re-exported here: ``best_arrangement``, ``can_close``, ``deadwood``,
``parse_card``, ``parse_cards``.
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

from .client import (
    BotClient,
    BotLike,
    FatalError,
    PracticeOptions,
    RequestContext,
    SessionReport,
    Unreachable,
    as_chooser,
)
from .targets import parse_targets, run_bot


def can_close(hand: object, rules: RuleSet, score: int = 0) -> bool:
    """Can this hand close (under ``rules`` and at ``score``)? Seven cards: the cards
    kept after the closing discard. Eight: the hand of the discard phase, with some
    discard. ``hand`` is cards or a bit mask."""
    from chinchon.engine import cards_of, mask_of

    mask = hand if isinstance(hand, int) else mask_of(hand)  # type: ignore[arg-type]
    n = mask.bit_count()
    solver = solver_for(rules)
    if n == 7:
        return solver.closing(mask, score) is not None
    if n == 8:
        return any(solver.closing(mask & ~(1 << c), score) is not None for c in cards_of(mask))
    raise ValueError(f"can_close takes 7 cards (kept) or 8 (before the discard), not {n}")


__all__ = [
    "Action",
    "BotClient",
    "BotLike",
    "FatalError",
    "Observation",
    "PracticeOptions",
    "RequestContext",
    "RuleSet",
    "SessionReport",
    "Unreachable",
    "as_chooser",
    "best_arrangement",
    "can_close",
    "deadwood",
    "parse_card",
    "parse_cards",
    "parse_targets",
    "run_bot",
]
