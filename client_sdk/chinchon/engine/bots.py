"""Two built-in engine bots, for tests, demos and as opponents in practice games.

A bot is anything with ``choose(observation, legal_actions) -> action``: it sees
exactly what a remote bot sees.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Protocol

from .actions import DRAW_DISCARD, DRAW_STOCK, LAYDOWN_BEST, LAYOFF_BEST, Action, Close, Discard
from .cards import mask_of
from .game import Phase
from .observation import Observation
from .solver import solver_for


class Bot(Protocol):
    @property
    def name(self) -> str: ...

    def choose(self, obs: Observation, legal: Sequence[Action]) -> Action: ...


class RandomBot:
    """Uniformly random among the legal actions (its own seeded generator)."""

    name = "random"

    def __init__(self, seed: int | str | None = 0) -> None:
        self._rng = random.Random(seed)

    def choose(self, obs: Observation, legal: Sequence[Action]) -> Action:
        return self._rng.choice(legal)


class GreedyBot:
    """Takes the discard when it lowers its unmatched points, discards its highest
    unmatched card, closes as soon as it may, lays off and down the engine's best."""

    name = "greedy"

    def choose(self, obs: Observation, legal: Sequence[Action]) -> Action:
        solver = solver_for(obs.rules)
        rules = obs.rules
        hand = mask_of(obs.hand)
        if obs.phase is Phase.DRAW:
            if DRAW_DISCARD in legal and obs.discard_pile:
                top = obs.discard_pile[-1]
                now = solver.deadwood(hand)
                with_top = hand | 1 << top
                after = min(
                    solver.deadwood(with_top & ~(1 << c))
                    for c in obs.hand
                )
                if after < now:
                    return DRAW_DISCARD
            return DRAW_STOCK
        if obs.phase is Phase.DISCARD:
            closes = [a for a in legal if isinstance(a, Close) and a.melds is None]
            if closes:
                return min(closes, key=lambda a: (solver.closing(hand & ~(1 << a.card), 0)
                                                  or _worst).points)
            discards = [a for a in legal if isinstance(a, Discard)]
            arr = solver.best_arrangement(hand)
            allowed = {a.card for a in discards}
            loose = [c for c in arr.unmatched if c in allowed]
            if loose:
                card = max(loose, key=lambda c: (rules.card_points(c), c))
                return Discard(card)
            return min(discards, key=lambda a: (solver.deadwood(hand & ~(1 << a.card)),
                                                -rules.card_points(a.card)))
        if obs.phase is Phase.LAYOFF:
            return LAYOFF_BEST
        if obs.phase is Phase.LAYDOWN:
            return LAYDOWN_BEST
        return legal[0]


class _Worst:
    points = 1 << 30


_worst = _Worst()
