"""What the ladder tests share: a ladder declaration of the CLI tests, its rated games."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from chinchon_referee.ladder.ratings import Rating, recompute
from chinchon_referee.storage import open_store

from tests.support.admin import AdminCli

LADDER = """name = "cli ladder"
concurrency = 1
[rules]
score_limit = 30
[time_control]
per_move = 2.0
bank = 10.0
[policies]
reconnect_grace = 5.0
[[entrants]]
name = "alice"
token = "{alice}"
[[entrants]]
name = "bob"
token = "{bob}"
"""


def rated(admin: AdminCli, lid: str) -> int:
    return int(board(admin, lid)["ladder"].get("gamesRated", 0))


def board(admin: AdminCli, lid: str) -> dict[str, Any]:
    got: dict[str, Any] = json.loads(admin("ladder", "board", lid, "--json"))
    return got


def ratings_recomputed(db: Path | str, lid: str) -> int:
    """The stored ratings equal a replay of the stored games; how many games there are."""
    store = open_store(str(db))
    try:
        games = store.ladder_games(lid)
        assert [g.rated for g in games] == list(range(1, len(games) + 1))
        entrants = store.entrants(lid)
        start = {e.bot: Rating(e.start_mu, e.start_sigma) for e in entrants}
        again = recompute(((g.players, g.places or []) for g in games), start)
        for e in entrants:
            r = again.get(e.bot, start[e.bot])
            assert abs(e.mu - r.mu) < 1e-9 and abs(e.sigma - r.sigma) < 1e-9, e.bot
        return len(games)
    finally:
        store.close()
