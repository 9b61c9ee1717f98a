"""Elo from paired games: the pentanomial model of a head-to-head match.

A match plays each deal twice, the seats swapped. Each game scores the candidate 1 (it
won), 0.5 (a draw: both seats among the winners) or 0 (it lost, forfeits included); a
pair scores the mean of its two games, one of 0, 1/4, 1/2, 3/4, 1. The counts of the
five pair scores are the *pentanomial* frequencies ``(LL, LD, LW+DD, DW, WW)``.

The score ``mu`` is the mean pair score and its variance the (population) variance of
the pair scores, so that the luck a pair's two games share (the deal) is taken out of
the error; the 95% interval is the normal one on ``mu``, mapped to Elo through the
logistic curve ``elo = -400 log10(1/mu - 1)``. This is the model fishtest and fastchess
use for paired games; as they do, an empty count is taken as 1e-3 (so that a run with
no loss yet has a finite variance and interval) and a score is clamped to
[1e-3, 1 - 1e-3] before it is mapped to Elo (about ±1200).

Standard library only, pure: the same counts give the same figures.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from statistics import NormalDist

#: What an empty count is taken to be (the regularization of fishtest and fastchess).
EMPTY = 1e-3
#: Scores are clamped to [CLAMP, 1 - CLAMP] before they are mapped to Elo.
CLAMP = 1e-3
#: The pair scores, by index in a pentanomial count.
PAIR_SCORES = (0.0, 0.25, 0.5, 0.75, 1.0)


def logistic_score(elo: float) -> float:
    """The expected score of a player ``elo`` points stronger: 1 / (1 + 10^(-elo/400))."""
    return 1.0 / (1.0 + math.pow(10.0, -elo / 400.0))


def score_elo(score: float) -> float:
    """The Elo difference whose expected score is ``score`` (clamped: never infinite)."""
    s = min(max(score, CLAMP), 1.0 - CLAMP)
    return -400.0 * math.log10(1.0 / s - 1.0)


@dataclass(frozen=True)
class Pentanomial:
    """The counts of pairs by score: ``counts[i]`` pairs scored i/4 for the candidate."""

    counts: tuple[int, int, int, int, int] = (0, 0, 0, 0, 0)

    def __post_init__(self) -> None:
        if len(self.counts) != 5 or any(c < 0 for c in self.counts):
            raise ValueError("a pentanomial count is five counts, none negative")

    @classmethod
    def of(cls, counts: Sequence[int]) -> Pentanomial:
        if len(counts) != 5:
            raise ValueError(f"a pentanomial count is five counts, got {len(counts)}")
        return cls((counts[0], counts[1], counts[2], counts[3], counts[4]))

    def add(self, quarter: int) -> Pentanomial:
        """One more pair, of score ``quarter``/4."""
        if not 0 <= quarter <= 4:
            raise ValueError(f"a pair scores 0 to 4 quarters, got {quarter}")
        c = list(self.counts)
        c[quarter] += 1
        return Pentanomial.of(c)

    @property
    def pairs(self) -> int:
        return sum(self.counts)

    def swapped(self) -> Pentanomial:
        """The same pairs seen from the other side."""
        return Pentanomial.of(self.counts[::-1])

    def distribution(self) -> tuple[float, list[float]]:
        """(N, p): the number of pairs and the frequency of each score, empty counts
        taken as EMPTY."""
        reg = [c if c > 0 else EMPTY for c in self.counts]
        n = sum(reg)
        return n, [c / n for c in reg]


def mean_variance(probs: Sequence[float], values: Sequence[float] = PAIR_SCORES
                  ) -> tuple[float, float]:
    """The mean and the variance of a distribution of ``values``."""
    mu = sum(p * v for p, v in zip(probs, values, strict=True))
    return mu, sum(p * (v - mu) ** 2 for p, v in zip(probs, values, strict=True))


@dataclass(frozen=True)
class EloEstimate:
    """What a match's pairs say of the candidate's strength over its opponent."""

    pairs: int
    #: The mean pair score (the score per game), and its standard error.
    score: float
    score_error: float
    elo: float
    #: The 95% interval of the Elo difference (the normal interval of the score, mapped).
    low: float
    high: float
    #: The likelihood of superiority: the chance the candidate is the stronger.
    los: float

    @property
    def half_width(self) -> float:
        """fishtest's "±": half the interval's width."""
        return (self.high - self.low) / 2.0


Z95 = NormalDist().inv_cdf(0.975)


def estimate(counts: Pentanomial, confidence: float = 0.95) -> EloEstimate:
    """The Elo difference, its interval at ``confidence`` and the LOS of ``counts``
    (zero pairs: score 0.5, an interval as wide as the clamp allows)."""
    n, probs = counts.distribution()
    mu, var = mean_variance(probs)
    se = math.sqrt(var / n)
    z = Z95 if confidence == 0.95 else NormalDist().inv_cdf(0.5 + confidence / 2.0)
    if counts.pairs == 0:
        mu, se = 0.5, 0.5
    los = NormalDist().cdf((mu - 0.5) / se) if se > 0 else 0.5
    return EloEstimate(counts.pairs, mu, se, score_elo(mu), score_elo(mu - z * se),
                       score_elo(mu + z * se), los)
