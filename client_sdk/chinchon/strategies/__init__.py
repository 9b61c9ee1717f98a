"""Playing strategies shared by the house bots and the sample bots.

``StrongBot`` (in :mod:`chinchon.strategies.strong`) is the referee's "strong" house bot
and the strong sample bot. :mod:`chinchon.strategies.builtin` names every built-in bot
(``random``, ``greedy``, ``strong``): the referee's house bots, ``chinchon demo`` and
``python -m chinchon.sdk --bot NAME`` all build them from there.
"""

from .builtin import BUILTIN_BOTS, BotFactory, make_bot
from .strong import StrongBot

__all__ = ["BUILTIN_BOTS", "BotFactory", "StrongBot", "make_bot"]
