"""Sample bot: StrongBot, a Chinchón bot that plays well enough to beat GreedyBot clearly.

The strategy ships with the package as ``chinchon.strategies.strong`` (read it there:
client_sdk/chinchon/strategies/strong.py), because the referee also uses it as its
"strong" house bot. This file is the runnable sample:

    CHINCHON_TOKEN=$(cat strong.token) python -m chinchon.sdk --target HOST:PORT \\
        --bot sample_bots/python/strong_bot.py:StrongBot

The strategy is described at the top of that module: card tracking, an opponent
model, a one-ply expectation over unseen cards, discards that do not feed the next
player, and closes timed against the risk of the opponent closing first.
"""

from __future__ import annotations

import sys

from chinchon.strategies.strong import StrongBot

__all__ = ["StrongBot"]

if __name__ == "__main__":
    from chinchon.sdk.__main__ import main

    sys.exit(main(["--bot", f"{__file__}:StrongBot", *sys.argv[1:]]))
