"""Sample bot: StrongBot, a Chinchón bot that plays well enough to beat GreedyBot clearly.

The strategy ships with the package as ``chinchon.strategies.strong`` (read it there:
client_sdk/chinchon/strategies/strong.py), because the referee also uses it as its
"strong" house bot. This file is the runnable sample:

    python -m chinchon.sdk --target HOST:PORT --token TOKEN \\
        --bot sample_bots/python/strong_bot.py:StrongBot


Strategy (one-ply expectation, no tree search):

* **Card tracking.** From its own hand, the discard pile, the table and this hand's
  public events it knows which cards are *seen* (its hand, the pile, which is dead
  until a reshuffle, the table) and which cards each opponent *holds for sure* (taken
  from the pile and not discarded since). The rest is the *pool*: the stock plus the
  opponents' unknown cards.
* **Opponent model.** Each pool card gets a probability of being in an opponent's
  hand: the unknown hand size spread over the pool, raised for cards that fit the
  cards an opponent took from the pile (same rank, or same suit within two places)
  and lowered for cards that fit what it discarded or passed over (it drew from the
  stock while that card was on top). The chance that the next stock card is a given
  card is the chance that it is not in an opponent's hand.
* **Hand value.** A seven-card hand is valued by a one-ply expectation over the pool:
  for every card the next stock draw may bring, the best result after drawing it
  (closing, scored by its bonus and points, or else the least unmatched points after
  the best discard), weighted by that card's chance. Cards that would complete melds
  (outs) raise the value; dead cards count for nothing. From that it subtracts the
  current unmatched points (more when they would put it out of the game) times the
  chance that the opponent closes before our next turn (growing with the opponent's
  turns and pick-ups), and, for a discard, the risk of feeding the next player: the
  chance that the card completes a meld with cards the opponent is likely to hold (set
  mates, run neighbours; certain for cards it took from the pile). Equal discards are
  told apart by the bot's own ``random.Random(seed)``.
* **Draw.** Takes the pile's top card when it lets it close, or when the best hand
  after taking it (and discarding the best card) is worth more than keeping the hand
  plus the expected gain of a random stock card.
* **Close.** Closes when allowed, choosing the best bonus, then the fewest points.
  With a close worth points, it waits a turn only when the hand stays closable, the
  chance of drawing a -10 (or a chinchón, which wins the game) is good, and the
  opponent is unlikely to close first. It never waits when closing now should put the
  opponent out of the game.
* **Lay-off / lay-down.** The engine's ``layoff best`` and ``laydown best``.

Everything is exact deadwood from the engine's solver tables, sped up with per-suit
tables of its own (the best discard of an eight-card hand is four look-ups per way of
taking sets out, and so is whether it can close), so a decision takes about half a
millisecond of CPU on average. ``strict=True`` makes internal errors raise (tests);
otherwise the bot falls back to a safe legal action. Weights are class attributes and
may be overridden by keyword, e.g. ``StrongBot(seed, feed_w=8)``.
"""

from __future__ import annotations

import sys

from chinchon.strategies.strong import StrongBot

__all__ = ["StrongBot"]

if __name__ == "__main__":
    from chinchon.sdk.__main__ import main

    sys.exit(main(["--bot", f"{__file__}:StrongBot", *sys.argv[1:]]))
