"""Tie-breaks: the documented, configurable order in which standings rank bots.

An order is a list of criteria (:class:`Tiebreak`), applied one after the other: all
the bots are first ranked by the first criterion; the bots still level are ranked
among themselves by the next one; and so on. Bots level after the whole list are
ranked by their seed (the stage's seeding: 1 first), then by name, so the order is
always total and the same for the same results.

* ``points``: match points (a win 1, a shared win 1 / number of winners, a loss 0),
  plus bye points in a Swiss; more first.
* ``head_to_head``: among the bots level so far, the share of the match points they
  scored in their games against each other (a mini-league of the level bots); applied
  only when every pair of them has met (in a Swiss most have not), else it leaves them
  level. Two bots on equal points where one beat the other 6–4 are so ranked 6–4.
* ``buchholz``: the sum of the opponents' points, one term per opponent met (a table
  of 3+ counts the mean of its other bots); a bye counts as an opponent with the bot's
  own points (FIDE's "dummy opponent"). More first.
* ``sonneborn_berger``: the same sum, each opponent's points weighted by the share of
  the points the bot took from it (all: 1, half: 0.5); a bye as a draw against the
  dummy opponent. More first.
* ``rating``: the rating (Bradley–Terry, or openskill for tables of 3+); more first.
  Fitted only when the criteria before it left bots level (it is the costly one).
* ``points_per_hand``: penalty points per hand played; fewer first.
* ``seed``: the stage's seeding (1 first). Always the last word anyway.

The defaults by format are below (:data:`DEFAULTS`); a stage's ``tiebreaks`` field
replaces them (docs/tournaments.md).
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from ..texts import shown


class Tiebreak(enum.StrEnum):
    POINTS = "points"
    HEAD_TO_HEAD = "head_to_head"
    BUCHHOLZ = "buchholz"
    SONNEBORN_BERGER = "sonneborn_berger"
    RATING = "rating"
    POINTS_PER_HAND = "points_per_hand"
    SEED = "seed"


T = Tiebreak
#: Round-robins (and a tournament declared without a format), groups included.
ROUND_ROBIN = (T.POINTS, T.HEAD_TO_HEAD, T.RATING, T.POINTS_PER_HAND)
#: Swiss: the opponents' strength before the rating.
SWISS = (T.POINTS, T.HEAD_TO_HEAD, T.BUCHHOLZ, T.SONNEBORN_BERGER, T.RATING, T.POINTS_PER_HAND)
#: Gauntlets: the challengers never meet, so no head-to-head.
GAUNTLET = (T.POINTS, T.RATING, T.POINTS_PER_HAND)
#: Brackets rank by how far a bot went (its placement) first; level bots (the losers of
#: one round) by their seed.
BRACKET = (T.SEED,)

#: What each criterion is called in report.md.
LABELS = {
    T.POINTS: "points",
    T.HEAD_TO_HEAD: "head-to-head among the level bots",
    T.BUCHHOLZ: "Buchholz (opponents' points)",
    T.SONNEBORN_BERGER: "Sonneborn–Berger",
    T.RATING: "rating",
    T.POINTS_PER_HAND: "penalty points per hand (fewer first)",
    T.SEED: "seed",
}


def parse(names: Sequence[object], where: str) -> tuple[Tiebreak, ...]:
    """A tie-break order from its names; ValueError naming ``where`` if one is unknown,
    repeated, or the list is empty."""
    if not isinstance(names, list | tuple) or not names:
        raise ValueError(f"{where}: a non-empty list of {', '.join(t.value for t in Tiebreak)}")
    out: list[Tiebreak] = []
    for n in names:
        try:
            t = Tiebreak(n)
        except ValueError:
            raise ValueError(f"{where}: unknown tie-break {shown(n)}; the tie-breaks are "
                             f"{', '.join(t.value for t in Tiebreak)}") from None
        if t in out:
            raise ValueError(f"{where}: {t.value} is listed twice")
        out.append(t)
    return tuple(out)


def sentence(order: Sequence[Tiebreak]) -> str:
    """The order in words, for report.md: "Ranked by points, then ..., then seed, then name"."""
    parts = [LABELS[t] for t in order]
    if T.SEED not in order:
        parts.append("seed")
    return "Ranked by " + ", then ".join([*parts, "name"]) + "."


@dataclass(frozen=True)
class Encounter:
    """One table of bots that met (all its games together): each bot's share of the
    match points of those games (0 to 1)."""

    share: Mapping[str, float]


@dataclass
class Facts:
    """What the criteria read, per bot. ``rating`` is called at most once, and only if
    the criteria before ``rating`` left bots level."""

    points: Mapping[str, float]
    head_to_head: Mapping[tuple[str, str], tuple[float, int]]
    points_per_hand: Mapping[str, float]
    rating: Callable[[], Mapping[str, float]]
    seeds: Mapping[str, int] = field(default_factory=dict)
    buchholz: Mapping[str, float] = field(default_factory=dict)
    sonneborn_berger: Mapping[str, float] = field(default_factory=dict)
    _ratings: Mapping[str, float] | None = field(default=None, init=False, repr=False)

    def ratings(self) -> Mapping[str, float]:
        if self._ratings is None:
            self._ratings = self.rating()
        return self._ratings


def order(bots: Sequence[str], criteria: Sequence[Tiebreak], facts: Facts) -> list[str]:
    """``bots`` best first by ``criteria`` (then seed, then name)."""
    groups: list[list[str]] = [sorted(bots, key=lambda b: (facts.seeds.get(b, 0), b))]
    for c in criteria:
        if all(len(g) == 1 for g in groups):
            break
        out: list[list[str]] = []
        for g in groups:
            out += [g] if len(g) == 1 else _split(g, _values(c, g, facts))
        groups = out
    return [b for g in groups for b in g]


def _split(group: list[str], values: Mapping[str, float]) -> list[list[str]]:
    """``group`` cut into runs of equal value, the highest first (order kept within)."""
    key = {b: round(values[b], 9) for b in group}
    levels = sorted(set(key.values()), reverse=True)
    return [[b for b in group if key[b] == v] for v in levels]


def _values(c: Tiebreak, group: list[str], f: Facts) -> Mapping[str, float]:
    """Each bot's value for ``c`` (higher is better)."""
    if c is T.POINTS:
        return f.points
    if c is T.HEAD_TO_HEAD:
        return _mini_league(group, f.head_to_head)
    if c is T.BUCHHOLZ:
        return f.buchholz
    if c is T.SONNEBORN_BERGER:
        return f.sonneborn_berger
    if c is T.RATING:
        return f.ratings()
    if c is T.POINTS_PER_HAND:
        return {b: -f.points_per_hand.get(b, 0.0) for b in group}
    return {b: -float(f.seeds.get(b, 0)) for b in group}


def _mini_league(group: list[str], h2h: Mapping[tuple[str, str], tuple[float, int]]
                 ) -> Mapping[str, float]:
    """Each bot's share of the points in the games among ``group``; all equal (no
    split) unless every pair of the group has met."""
    if any(h2h.get((a, b), (0.0, 0))[1] == 0 for a in group for b in group if a != b):
        return {b: 0.0 for b in group}
    out = {}
    for a in group:
        score = sum(h2h[(a, b)][0] for b in group if b != a)
        games = sum(h2h[(a, b)][1] for b in group if b != a)
        out[a] = score / games
    return out


def opponents(bots: Sequence[str], points: Mapping[str, float],
              encounters: Sequence[Encounter], byes: Mapping[str, int]
              ) -> tuple[dict[str, float], dict[str, float]]:
    """(Buchholz, Sonneborn–Berger) of every bot, as documented above."""
    bh = {b: byes.get(b, 0) * points[b] for b in bots}
    sb = {b: byes.get(b, 0) * 0.5 * points[b] for b in bots}
    for enc in encounters:
        for b, share in enc.share.items():
            others = [o for o in enc.share if o != b]
            if not others:
                continue
            mean = sum(points[o] for o in others) / len(others)
            bh[b] += mean
            sb[b] += share * mean
    return bh, sb
