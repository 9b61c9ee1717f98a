"""The ladder tests' in-process referee (a ladder service over a SQLite store) and checks."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, field

import pytest
from chinchon_referee.director.director import Director
from chinchon_referee.ladder.ladders import Ladders
from chinchon_referee.ladder.ratings import Rating, recompute
from chinchon_referee.ladder.spec import LadderSpec
from chinchon_referee.service.server import RunningServer
from chinchon_referee.storage import SqliteStore
from chinchon_referee.storage.ladders import LadderGameRow

from tests.support.helpers import bot_token

LADDER = """name = "test ladder"
concurrency = 2
seed = "ladder-seed"
[rules]
score_limit = 30
[time_control]
per_move = 2.0
bank = 10.0
[policies]
reconnect_grace = 1.0
"""


@dataclass
class LadderEnv:
    server: RunningServer
    store: SqliteStore
    director: Director
    ladders: Ladders
    rated: list[LadderGameRow] = field(default_factory=list)
    _new: asyncio.Event = field(default_factory=asyncio.Event)

    def heard(self, lid: str, row: LadderGameRow) -> None:
        self.rated.append(row)
        self._new.set()

    async def until(self, condition: Callable[[], bool], what: str, timeout: float = 60) -> None:
        """Wait, game by game, until ``condition()`` holds (no polling: each rated game
        wakes it); fail after ``timeout`` s naming ``what``."""
        async def wait() -> None:
            while not condition():
                self._new.clear()
                await self._new.wait()
        try:
            await asyncio.wait_for(wait(), timeout)
        except TimeoutError:
            raise AssertionError(f"{what}: not in {timeout:g} s ({len(self.rated)} games rated: "
                                 f"{[g.players for g in self.rated[-5:]]})") from None

    async def played(self, n: int) -> None:
        await self.until(lambda: len(self.rated) >= n, f"{n} games rated")

    def games_of(self, bot: str) -> int:
        return sum(bot in g.players for g in self.rated)


def entrants(names: list[str]) -> str:
    return "".join(f'\n[[entrants]]\nname = "{n}"\ntoken = "{bot_token(n)}"\n' for n in names)


def ladder_spec(names: list[str]) -> LadderSpec:
    return LadderSpec.from_toml_text(LADDER + entrants(names))


def check_ratings(env: LadderEnv, lid: str) -> None:
    """Every finished game rated once, in order 1..n; the stored ratings are those a
    replay of the stored games gives."""
    games = env.store.ladder_games(lid)
    assert [g.rated for g in games] == list(range(1, len(games) + 1))
    entrants = env.store.entrants(lid)
    start = {e.bot: Rating(e.start_mu, e.start_sigma) for e in entrants}
    again = recompute(((g.players, g.places or []) for g in games), start)
    for e in entrants:
        r = again.get(e.bot, start[e.bot])
        assert (e.mu, e.sigma) == pytest.approx((r.mu, r.sigma), abs=1e-9), e.bot
        assert e.games == sum(e.bot in g.players for g in games)


async def no_game_running(env: LadderEnv, lid: str) -> None:
    run = env.ladders.runs[lid]
    while run.running:
        await asyncio.gather(*run.running, return_exceptions=True)
