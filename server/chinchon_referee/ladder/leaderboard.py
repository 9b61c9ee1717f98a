"""The leaderboard: the entrants' ratings ordered by the conservative estimate mu - k sigma.

Ordering by mu alone would put a new entrant that won its first game above bots that
have shown their strength over hundreds; mu - k sigma ranks a bot by the skill it is
above with high probability (TrueSkill's leaderboard; k = 3 by default, the ladder's
``k``): a new entrant starts at 25 - 3 * 25/3 = 0 and climbs as its games narrow its
interval. Ties: more games first, then the name.

Pure: rows in, rows out.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from .health import suspension_text
from .ratings import Rating


@dataclass(frozen=True)
class Standing:
    """What the store holds of one entrant."""

    bot: str
    rating: Rating
    games: int = 0
    #: Games won (a tie among w winners counts 1/w).
    wins: float = 0.0
    #: When its last game finished (a ``time.time()``), None if it has played none.
    last_game: float | None = None
    #: Its conservative estimate some games ago (the trend's start), None: no history.
    earlier: float | None = None
    removed: bool = False
    #: Its games forfeited on time in a row, and when the last ended (.health).
    time_forfeits: int = 0
    last_time_forfeit: float | None = None
    #: Since when it is suspended (not seated); None: it is not.
    suspended: float | None = None

    @property
    def suspension(self) -> str:
        """Why it is suspended, in words ("" when it is not)."""
        return suspension_text(self.time_forfeits, self.last_time_forfeit, self.suspended)


@dataclass(frozen=True)
class Place:
    rank: int
    standing: Standing
    #: mu - k sigma.
    score: float
    low: float
    high: float
    win_rate: float | None
    #: The change of ``score`` since ``Standing.earlier`` (0 without history).
    trend: float


def leaderboard(standings: Sequence[Standing], k: float) -> list[Place]:
    """The entrants that are not removed, best first, ranked 1..n (equal scores share
    no rank: the order is total)."""
    shown = [s for s in standings if not s.removed]
    shown.sort(key=lambda s: (-s.rating.conservative(k), -s.games, s.bot))
    out = []
    for i, s in enumerate(shown, 1):
        score = s.rating.conservative(k)
        low, high = s.rating.interval()
        out.append(Place(i, s, score, low, high, s.wins / s.games if s.games else None,
                         0.0 if s.earlier is None else score - s.earlier))
    return out


@dataclass(frozen=True)
class RatedGame:
    """What a snapshot needs of one rated game: its players by seat, their places and
    their ratings after it, and when it ended."""

    players: Sequence[str]
    places: Sequence[int]
    after: Sequence[Rating]
    finished: float | None = None


@dataclass(frozen=True)
class Snapshot:
    #: The leaderboard after this many rated games.
    games: int
    finished: float | None
    places: list[Place]


def snapshots(games: Iterable[RatedGame], start: Mapping[str, Rating], k: float,
              every: int) -> list[Snapshot]:
    """The leaderboard after every ``every`` games and after the last, from the games in
    their rating order (the ratings after each, as stored) and each entrant's starting
    rating: the ladder's history, as leaderboards."""
    if every < 1:
        raise ValueError(f"every: at least 1, got {every}")
    rating: dict[str, Rating] = dict(start)
    played: dict[str, int] = {}
    wins: dict[str, float] = {}
    last: dict[str, float | None] = {}
    out: list[Snapshot] = []
    n, finished = 0, None

    def board() -> Snapshot:
        rows = [Standing(b, r, played.get(b, 0), wins.get(b, 0.0), last.get(b))
                for b, r in sorted(rating.items())]
        return Snapshot(n, finished, leaderboard(rows, k))

    for g in games:
        n, finished = n + 1, g.finished
        winners = [p for p, place in zip(g.players, g.places, strict=True) if place == 0]
        for p, r in zip(g.players, g.after, strict=True):
            rating[p], played[p], last[p] = r, played.get(p, 0) + 1, g.finished
            if p in winners:
                wins[p] = wins.get(p, 0.0) + 1.0 / len(winners)
        if n % every == 0:
            out.append(board())
    if n % every or not out:
        out.append(board())
    return out
