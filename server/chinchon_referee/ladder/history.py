"""A ladder's history as the leaderboard reads it: where a bot stood some games ago (the
trend), read from the store's rated games."""

from __future__ import annotations

from ..storage.ladders import LadderRows
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
