"""Sample bot: greedy play, written out in full with the SDK's helpers.

* draw: take the top of the discard pile when it lowers the unmatched points;
* discard: close as soon as the rules allow (the close that leaves the fewest points);
  otherwise throw the highest unmatched card;
* after someone closes: lay off and lay down the engine's best.

It plays exactly as the engine's ``chinchon.engine.GreedyBot`` (the house bot
``greedy``), ties broken the same way (tests/strategies/test_sample_bot_strength.py checks it
decision by decision).

Run::

    CHINCHON_TOKEN=$(cat greedy.token) python -m chinchon.sdk --target HOST:PORT \\
        --bot sample_bots/python/greedy_bot.py:GreedyBot

(the token in the environment, never on the command line, where ``ps`` shows it).
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

from chinchon.engine import (
    DRAW_DISCARD,
    DRAW_STOCK,
    LAYDOWN_BEST,
    LAYOFF_BEST,
    Action,
    Close,
    Discard,
    Observation,
    Phase,
    Solver,
    mask_of,
    solver_for,
)


class GreedyBot:
    name = "greedy"

    def choose(self, obs: Observation, legal: Sequence[Action]) -> Action:
        solver = solver_for(obs.rules)  # exact, fast arrangement solver for these rules
        hand = mask_of(obs.hand)
        if obs.phase is Phase.DRAW:
            if DRAW_DISCARD in legal:
                top = obs.discard_pile[-1]
                now = solver.deadwood(hand)
                # Best 7 cards we could keep after taking the top card (it may not be
                # thrown straight back unless retake_discard is on).
                after = min(solver.deadwood((hand | 1 << top) & ~(1 << c)) for c in obs.hand)
                if after < now:
                    return DRAW_DISCARD
            return DRAW_STOCK
        if obs.phase is Phase.DISCARD:
            closes = [a for a in legal if isinstance(a, Close) and a.melds is None]
            if closes:
                # Close on the discard whose best arrangement leaves the fewest points.
                return min(closes, key=lambda a: close_points(solver, hand & ~(1 << a.card)))
            discards = [a for a in legal if isinstance(a, Discard)]
            arrangement = solver.best_arrangement(hand)
            allowed = {a.card for a in discards}
            loose = [c for c in arrangement.unmatched if c in allowed]
            points = obs.rules.card_points
            if loose:
                # The highest unmatched card (equal points: the higher card).
                return Discard(max(loose, key=lambda c: (points(c), c)))
            # Everything is melded: give up the card whose loss hurts least (equal: the
            # one worth more points, so that less is left in hand).
            return min(discards, key=lambda a: (solver.deadwood(hand & ~(1 << a.card)),
                                                -points(a.card)))
        if obs.phase is Phase.LAYOFF:
            return LAYOFF_BEST
        return LAYDOWN_BEST


def close_points(solver: Solver, rest: int) -> int:
    """The unmatched points of the best closing arrangement of the seven cards ``rest``."""
    arrangement = solver.closing(rest, 0)
    assert arrangement is not None  # only called for closes the referee listed as legal
    return arrangement.points


if __name__ == "__main__":
    from chinchon.sdk.__main__ import main

    sys.exit(main(["--bot", f"{__file__}:GreedyBot", *sys.argv[1:]]))
