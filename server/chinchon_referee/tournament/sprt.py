"""The sequential probability ratio test of a match, on pentanomial counts.

H0: the candidate is ``elo0`` logistic Elo stronger than its opponent; H1: ``elo1``.
After each pair the generalized log-likelihood ratio (GLLR) of H1 against H0 is
compared with the bounds ``log(beta / (1 - alpha))`` and ``log((1 - beta) / alpha)``:
below the lower one H0 is accepted, above the upper one H1; in between, play on. alpha
is the chance of accepting H1 when H0 holds, beta of accepting H0 when H1 holds.

The GLLR is fishtest's and fastchess's for the pentanomial model: for each hypothesis's
expected score ``s`` (``logistic_score(elo)``), the distribution over the five pair
scores that is most likely given the counts among those whose mean is ``s``. That
distribution is ``p_i = phat_i / (1 + theta (a_i - s))``, where ``theta`` solves
``sum_i phat_i (a_i - s) / (1 + theta (a_i - s)) = 0`` (the left side falls strictly
with ``theta`` between its poles, so bisection finds it); the GLLR is
``N sum_i phat_i log(p1_i / p0_i)``. :func:`llr_approximation` is the Brownian
approximation ``N (s1 - s0) (2 mu - s0 - s1) / (2 var)``, which agrees with it near
the bounds (a cross-check, and what a reader can compute by hand).

Standard library only, pure.
"""

from __future__ import annotations

import enum
import math
from collections.abc import Sequence
from dataclasses import dataclass

from .elo import PAIR_SCORES, Pentanomial, logistic_score, mean_variance

#: Bisection steps for theta (the bracket shrinks 2^-200: below any float's step).
_STEPS = 200


class SprtError(ValueError):
    """SPRT parameters that cannot be used; the message names the parameter."""


class Verdict(enum.StrEnum):
    """Where a test stands."""

    CONTINUE = "continue"
    H0 = "H0"
    H1 = "H1"


@dataclass(frozen=True)
class SprtSpec:
    elo0: float = 0.0
    elo1: float = 5.0
    alpha: float = 0.05
    beta: float = 0.05

    def __post_init__(self) -> None:
        for name in ("alpha", "beta"):
            v = getattr(self, name)
            if not 0.0 < v < 0.5:
                raise SprtError(f"{name}: between 0 and 0.5 (exclusive), got {v:g}")
        for name in ("elo0", "elo1"):
            v = getattr(self, name)
            if not math.isfinite(v) or abs(v) > 1000:
                raise SprtError(f"{name}: an Elo difference within ±1000, got {v:g}")
        if self.elo0 >= self.elo1:
            raise SprtError(f"elo0 ({self.elo0:g}) must be below elo1 ({self.elo1:g})")

    @classmethod
    def parse(cls, terms: Sequence[str]) -> SprtSpec:
        """``elo0=0 elo1=5 alpha=0.05 beta=0.05`` (any order; a missing one takes its
        default); SprtError naming a bad term."""
        values: dict[str, float] = {}
        for term in terms:
            key, sep, text = term.partition("=")
            key = key.strip()
            if not sep or key not in ("elo0", "elo1", "alpha", "beta"):
                raise SprtError(f"a term of --sprt is elo0=, elo1=, alpha= or beta=, got "
                                f"{term[:40]!r}")
            if key in values:
                raise SprtError(f"{key} given twice")
            try:
                values[key] = float(text)
            except ValueError:
                raise SprtError(f"{key}: a number, got {text[:40]!r}") from None
        return cls(**values)

    @property
    def lower(self) -> float:
        return math.log(self.beta / (1.0 - self.alpha))

    @property
    def upper(self) -> float:
        return math.log((1.0 - self.beta) / self.alpha)

    def verdict(self, llr: float) -> Verdict:
        if llr >= self.upper:
            return Verdict.H1
        if llr <= self.lower:
            return Verdict.H0
        return Verdict.CONTINUE

    def llr(self, counts: Pentanomial) -> float:
        return llr(counts, self.elo0, self.elo1)

    def to_dict(self) -> dict[str, float]:
        return {"elo0": self.elo0, "elo1": self.elo1, "alpha": self.alpha, "beta": self.beta}


def _theta(probs: Sequence[float], shifted: Sequence[float]) -> float:
    """The root of ``sum p_i a_i / (1 + theta a_i)`` (``shifted``: a_i = value - s, of
    both signs) between its poles ``-1/max(a)`` and ``-1/min(a)``."""
    lo, hi = -1.0 / max(shifted), -1.0 / min(shifted)

    def f(x: float) -> float:
        return sum(p * a / (1.0 + x * a) for p, a in zip(probs, shifted, strict=True))

    for _ in range(_STEPS):
        mid = (lo + hi) / 2.0
        if mid in (lo, hi):
            break
        if f(mid) > 0:
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2.0


def most_likely(probs: Sequence[float], s: float,
                values: Sequence[float] = PAIR_SCORES) -> list[float]:
    """The distribution over ``values`` with mean ``s`` most likely given the observed
    frequencies ``probs`` (all positive; ``s`` strictly between the extreme values)."""
    shifted = [v - s for v in values]
    theta = _theta(probs, shifted)
    return [p / (1.0 + theta * a) for p, a in zip(probs, shifted, strict=True)]


def llr(counts: Pentanomial, elo0: float, elo1: float) -> float:
    """The GLLR of ``elo1`` against ``elo0`` (logistic Elo) for ``counts``; 0 with no pair."""
    if counts.pairs == 0:
        return 0.0
    n, probs = counts.distribution()
    p0 = most_likely(probs, logistic_score(elo0))
    p1 = most_likely(probs, logistic_score(elo1))
    return n * sum(p * (math.log(b) - math.log(a))
                   for p, a, b in zip(probs, p0, p1, strict=True))


def llr_approximation(counts: Pentanomial, elo0: float, elo1: float) -> float:
    """The Brownian approximation of the GLLR: N (s1 - s0) (2 mu - s0 - s1) / (2 var)."""
    if counts.pairs == 0:
        return 0.0
    n, probs = counts.distribution()
    mu, var = mean_variance(probs)
    s0, s1 = logistic_score(elo0), logistic_score(elo1)
    return n * (s1 - s0) * (2.0 * mu - s0 - s1) / (2.0 * var)
