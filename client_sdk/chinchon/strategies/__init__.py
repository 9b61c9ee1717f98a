"""Playing strategies shared by the house bots and the sample bots.

``StrongBot`` (in :mod:`chinchon.strategies.strong`) is the referee's "strong" house bot
and the strong sample bot.
"""

from .strong import StrongBot

__all__ = ["StrongBot"]
