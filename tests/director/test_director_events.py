"""The director and the referee wait on events, not by polling: the scheduling loop
wakes when a game ends, a stream comes to the lobby, or an absence passes its limit."""

from __future__ import annotations

import asyncio
import math
from collections import Counter

from chinchon_referee.director.absence import Absences
from chinchon_referee.tournament.model import TournamentSpec
from hypothesis import given
from hypothesis import strategies as st

from tests.support.fixture_types import SpawnBot
from tests.support.helpers import bot_token
from tests.support.inproc import sdk
from tests.support.tournament import InProcess


async def test_the_scheduling_loop_sleeps_while_nothing_happens(
    env: InProcess, bots: SpawnBot,
) -> None:
    """A bot never connects: each of its games waits the whole reconnect grace, then
    forfeits. Meanwhile nothing happens, and the director's loop (which asks the lobby
    whether each absent bot is back) does not run: it wakes for the game that ends and
    the stream given back, not every few milliseconds (4 s of grace polled every 50 ms
    would be 80 looks)."""
    grace = 2.0
    server, store, director = env.server, env.store, env.director
    looks: Counter[str] = Counter()
    lobby = server.referee.lobby
    connected = lobby.connected

    def counting(bot: str) -> int:
        looks[bot] += 1
        return connected(bot)

    lobby.connected = counting  # type: ignore[method-assign]
    spec = TournamentSpec.from_dict({
        "name": "quiet", "seed": "quiet",
        "participants": [{"name": b, "token": bot_token(b)} for b in ("a", "ghost")],
        "games_per_pairing": 2, "concurrency": 1, "rules": {"score_limit": 60},
        "time_control": {"per_move": 1.0, "bank": 5.0},
        "policies": {"reconnect_grace": grace, "absence_limit": 600.0},
    })
    tid, _ = director.create(spec)
    await bots(sdk("greedy"), server, "a")
    assert await lobby.wait_all(["a"], 120)
    looks.clear()
    await asyncio.wait_for(director.run(tid, force_start=True), 60)
    games = store.games(tid)
    assert [x.record["result"]["termination"] for x in games] == [
        "TERMINATION_FORFEIT_NO_SHOW"] * 2
    # The ghost is absent from its first no-show on: from then the loop looks for it
    # each time it wakes (the first game's end, the stream it gave back, the second
    # game's start and end), a handful of times, not once per 50 ms.
    assert 1 <= looks["ghost"] <= 10, looks


@given(
    limit=st.floats(0, 1e4, allow_nan=False),
    since=st.dictionaries(st.sampled_from("abcdef"), st.floats(0, 1e4, allow_nan=False)),
    now=st.floats(0, 3e4, allow_nan=False),
)
def test_next_expiry_is_the_first_absence_to_pass_the_limit_after_now(
    limit: float, since: dict[str, float], now: float,
) -> None:
    absences = Absences(limit, dict(since))
    got = absences.next_expiry(now)
    waiting = [b for b in since if not absences.expired(b, now)]
    assert (got is None) == (not waiting)
    if got is not None:
        # Later than now, and then some bot's games forfeit (exactly as expired() says:
        # the director's wake-up never comes a rounding error too early).
        assert got > now
        assert any(absences.expired(b, got) for b in waiting)
        assert math.isclose(got, min(since[b] + limit for b in waiting),
                            rel_tol=1e-12, abs_tol=1e-300)
