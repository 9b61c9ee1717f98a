"""The per-bot page (``/b/NAME``, data ``/api/b/NAME``): its games, results, forfeits,
timeouts, illegal attempts and median answer time, equal to what the stored games say."""

from __future__ import annotations

import asyncio
import json
import statistics
from collections.abc import AsyncIterator

import aiohttp
import pytest
from chinchon_referee.tournament.model import TournamentSpec
from chinchon_referee.web import WebContext, start_web
from chinchon_referee.web.app import STATIC
from chinchon_referee.web.botpage import answer_times
from chinchon_referee.web.spawn import ChildWeb

from tests.support.fixture_types import SpawnBot
from tests.support.helpers import raw_bot, sdk_bot, stop
from tests.support.tournament import InProcess, spec_dict


@pytest.fixture
async def site(env: InProcess) -> AsyncIterator[ChildWeb]:
    s = await start_web(WebContext(referee=env.server.referee, db=env.store.path))
    assert isinstance(s, ChildWeb)
    try:
        yield s
    finally:
        await s.stop()


async def _get(url: str) -> tuple[int, bytes]:
    async with aiohttp.ClientSession() as http, http.get(url) as r:
        return r.status, await r.read()


async def test_a_bots_page_counts_its_games_forfeits_illegal_attempts_and_answer_times(
    env: InProcess, site: ChildWeb, bots: SpawnBot,
) -> None:
    spec = TournamentSpec.from_dict(spec_dict("per-bot", ["cheat", "fair"], games_per_pairing=2,
                                              concurrency=1))
    tid, _ = env.director.create(spec)
    procs = [await bots(raw_bot("illegal"), env.server, "cheat"),
             await bots(sdk_bot("greedy"), env.server, "fair")]
    assert await env.server.referee.lobby.wait_all(["cheat", "fair"], 120)
    await asyncio.wait_for(env.director.run(tid), 90)
    await stop(*procs)
    games = env.store.games(tid)
    assert len(games) == 2
    status, body = await _get(f"{site.url}api/b/cheat")
    assert status == 200, body
    cheat = json.loads(body)
    f = cheat["figures"]
    seats = [g.players.index("cheat") for g in games]
    assert f["games"] == 2 and f["losses"] == 2 and f["wins"] == 0 and f["forfeits"] == 2
    assert f["illegal"] == sum(g.stats[s]["illegal"] for g, s in zip(games, seats, strict=True)) > 0
    assert f["strikes"] == 2 * spec.policies.max_strikes
    assert f["timeouts"] == 0
    assert {g["id"] for g in cheat["games"]} == {g.id for g in games}
    assert all(g["result"] == "forfeit" and g["illegal"] > 0 for g in cheat["games"])
    assert [t["id"] for t in cheat["tournaments"]] == [tid]
    # The other bot: two wins, its median answer time over its own answers.
    status, body = await _get(f"{site.url}api/b/fair")
    fair_page = json.loads(body)
    fair = fair_page["figures"]
    assert fair["wins"] == 2 and fair["forfeits"] == 0 and fair["illegal"] == 0
    times = [t for g in games for t in answer_times(g.record, g.players.index("fair"))]
    assert times and fair["median_answer"] == pytest.approx(statistics.median(times))
    assert fair["timed_answers"] == len(times)
    # The tournament's row says the same as the card (it said "—": no answers kept).
    (row,) = fair_page["tournaments"]
    assert row["median_answer"] == pytest.approx(fair["median_answer"])
    assert row["timed_answers"] == len(times)
    # No such bot: 404; the page itself is the static page.
    status, _ = await _get(f"{site.url}api/b/nobody")
    assert status == 404
    status, body = await _get(f"{site.url}b/cheat")
    assert status == 200 and body == (STATIC / "bot.html").read_bytes()
