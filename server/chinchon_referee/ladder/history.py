"""A ladder's entrants as the leaderboard reads them from the store: each one's rating,
games, health and where it stood some games ago (the trend). The organizer's service
and the web view both build their boards from :func:`standings`."""

from __future__ import annotations

from ..storage.ladders import EntrantRow, LadderRows
from .leaderboard import Standing
from .ratings import Rating

#: The trend: the change of mu - k sigma over a bot's last this many games.
TREND_GAMES = 10


def earlier_score(store: LadderRows, lid: str, bot: str, start: Rating, k: float) -> float | None:
    """``bot``'s mu - k sigma TREND_GAMES games ago (its start's if it has played fewer),
    None if it has played none."""
    games = store.ladder_games(lid, bot=bot, limit=TREND_GAMES + 1, newest_first=True)
    if not games:
        return None
    if len(games) <= TREND_GAMES:
        return start.conservative(k)
    g = games[-1]
    mu, sigma = (g.ratings or [(start.mu, start.sigma)] * len(g.players))[g.players.index(bot)]
    return Rating(mu, sigma).conservative(k)


def standing(store: LadderRows, lid: str, e: EntrantRow, k: float) -> Standing:
    """What the leaderboard shows of the entrant ``e`` of ``lid``."""
    return Standing(e.bot, Rating(e.mu, e.sigma), e.games, e.wins, e.last_game,
                    earlier_score(store, lid, e.bot, Rating(e.start_mu, e.start_sigma), k),
                    e.removed, e.time_forfeits, e.last_time_forfeit, e.suspended)


def standings(store: LadderRows, lid: str, k: float) -> list[Standing]:
    """Every entrant of ``lid`` (removed ones too) as the leaderboard reads it."""
    return [standing(store, lid, e, k) for e in store.entrants(lid)]
