"""Ladder ratings: openskill's Plackett-Luce model, updated once per finished game.

A rating is a Gaussian belief about a bot's skill, N(mu, sigma^2), in openskill's units
(a new entrant: mu 25, sigma 25/3; beta 25/6, the skill difference that gives the better
bot a 76% chance to win one game). Each finished game (not one the referee aborted)
updates the ratings of its players from their finishing order: the winners first (tied
if several), then the others by their final totals, lower first (chinchón's scores count
against). Sequential updates depend on the order: the store numbers the updates of a
ladder (``rated``), and :func:`recompute` replays them in that order to the same figures.

Pure: no I/O, no clock, no randomness.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from chinchon.engine import Outcome, Termination

#: openskill's defaults (and TrueSkill's): a new entrant's belief, and the game's noise.
MU = 25.0
SIGMA = MU / 3.0
BETA = MU / 6.0


@dataclass(frozen=True)
class Rating:
    mu: float = MU
    sigma: float = SIGMA

    def conservative(self, k: float) -> float:
        """mu - k * sigma: the skill the bot is above with high probability (k = 3:
        about 99.9% under the model)."""
        return self.mu - k * self.sigma

    def interval(self, z: float = 1.96) -> tuple[float, float]:
        """The 95% interval of the belief (z = 1.96)."""
        return self.mu - z * self.sigma, self.mu + z * self.sigma


#: A new entrant's rating.
PRIOR = Rating()


@lru_cache(maxsize=1)
def _model() -> Any:
    from openskill.models import PlackettLuce

    return PlackettLuce(mu=MU, sigma=SIGMA, beta=BETA)


def ranks(result: Outcome) -> list[int] | None:
    """Each seat's place in ``result`` (0 best; equal for a tie), or None when the game
    does not count (the referee aborted it: no one is to blame)."""
    if result.termination is Termination.ABORTED:
        return None
    winners = set(result.winners)
    n = len(result.totals)
    others = sorted({result.totals[s] for s in range(n) if s not in winners})
    base = 1 if winners else 0
    return [0 if s in winners else base + others.index(result.totals[s]) for s in range(n)]


def update(before: Sequence[Rating], places: Sequence[int]) -> list[Rating]:
    """The ratings of one table's players after a game they finished in ``places``
    (by seat, 0 best; equal places a tie)."""
    if len(before) != len(places) or len(before) < 2:
        raise ValueError(f"update: {len(before)} ratings for {len(places)} places")
    model = _model()
    teams = [[model.create_rating([r.mu, r.sigma])] for r in before]
    new = model.rate(teams, ranks=[float(p) for p in places])
    return [Rating(float(t[0].mu), float(t[0].sigma)) for t in new]


def recompute(games: Iterable[tuple[Sequence[str], Sequence[int]]],
              start: Mapping[str, Rating] | None = None) -> dict[str, Rating]:
    """Every bot's rating after ``games`` (players by seat, their places), in order,
    from ``start`` (an inherited rating) or the prior."""
    ratings: dict[str, Rating] = dict(start or {})
    for players, places in games:
        after = update([ratings.get(p, PRIOR) for p in players], places)
        ratings.update(zip(players, after, strict=True))
    return ratings


def match_quality(a: Rating, b: Rating) -> float:
    """TrueSkill's match quality of two players: the chance of a draw relative to two
    equal, certain players, in (0, 1]; high when their means are close and their
    uncertainty small (Herbrich, Minka and Graepel, TrueSkill, NIPS 2006: matchmaking)."""
    c2 = 2 * BETA * BETA + a.sigma * a.sigma + b.sigma * b.sigma
    return math.sqrt(2 * BETA * BETA / c2) * math.exp(-((a.mu - b.mu) ** 2) / (2 * c2))
