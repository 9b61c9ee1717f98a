"""A step's observation over HTTP (``/api/g/GAME/step/N``): a finished game's decision
as its bot received it; nothing of a game in progress (its hands are secret), bad steps
refused."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from pathlib import Path

import aiohttp
import pytest
from chinchon_referee.auth import digest
from chinchon_referee.tournament.model import TournamentSpec
from chinchon_referee.web import WebContext, start_web
from chinchon_referee.web.spawn import ChildWeb
from chinchon_referee.web.step_view import step_request

from tests.support.fixture_types import SpawnBot
from tests.support.helpers import ADMIN, sdk_bot, stop
from tests.support.tournament import InProcess, spec_dict
from tests.support.waits import until_async
from tests.support.web import HELD_BOT, PACED_BOT, running_on_the_web


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


async def test_the_step_endpoint_serves_finished_games_only(
    env: InProcess, site: ChildWeb, bots: SpawnBot,
) -> None:
    spec = TournamentSpec.from_dict(spec_dict("steps", ["pa", "pb"], games_per_pairing=1,
                                              concurrency=1))
    tid, _ = env.director.create(spec)
    procs = [await bots(sdk_bot(PACED_BOT), env.server, "pa"),
             await bots(sdk_bot(PACED_BOT), env.server, "pb")]
    assert await env.server.referee.lobby.wait_all(["pa", "pb"], 120)
    run = asyncio.ensure_future(env.director.run(tid))
    gid = await running_on_the_web(site.url, tid)
    # In progress: an anonymous spectator gets no observation (it holds a hand).
    status, body = await _get(f"{site.url}api/g/{gid}/step/3")
    assert status == 404 and b"not finished" in body
    assert b"observation" not in body and b"hand" not in body
    await asyncio.wait_for(run, 90)
    await stop(*procs)
    record = env.store.games(tid)[0].record
    assert record is not None
    move = next(i for i, a in enumerate(record["actions"]) if "move" in a) + 1
    status, body = await _get(f"{site.url}api/g/{gid}/step/{move}")
    assert status == 200, body
    assert json.loads(body) == json.loads(json.dumps(step_request(record, move, None)))
    seat = json.loads(body)["seat"]
    status, _ = await _get(f"{site.url}api/g/{gid}/step/{move}?seat={seat}")
    assert status == 200
    for bad in (f"{move}?seat={1 - seat}", "1", "0", "x", "99999", f"{move}?seat=7x"):
        status, body = await _get(f"{site.url}api/g/{gid}/step/{bad}")
        assert status == 400, (bad, body)
    status, _ = await _get(f"{site.url}api/g/nosuchgame/step/3")
    assert status == 404


async def test_the_admin_token_gets_a_step_of_a_game_in_progress_behind_the_full_views_delay(
    env: InProcess, bots: SpawnBot, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The game goes on until the file is removed, however slow the machine: its steps
    # are read while it is in progress.
    hold = tmp_path / "hold"
    hold.touch()
    monkeypatch.setenv("CHINCHON_TEST_HOLD", str(hold))
    site = await start_web(WebContext(referee=env.server.referee, db=env.store.path,
                                      admin_digest=digest(ADMIN), full_view_delay=1.0))
    assert isinstance(site, ChildWeb)
    try:
        spec = TournamentSpec.from_dict(spec_dict("steps-live", ["la", "lb"], games_per_pairing=1,
                                                  concurrency=1))
        tid, _ = env.director.create(spec)
        procs = [await bots(sdk_bot(HELD_BOT), env.server, "la"),
                 await bots(sdk_bot(HELD_BOT), env.server, "lb")]
        assert await env.server.referee.lobby.wait_all(["la", "lb"], 120)
        run = asyncio.ensure_future(env.director.run(tid))
        gid = await running_on_the_web(site.url, tid)
        admin = {"Authorization": f"Bearer {ADMIN}"}

        seen: list[int] = []

        async def shown() -> bool:
            async with aiohttp.ClientSession() as http, http.get(
                    f"{site.url}api/g/{gid}/table?view=all", headers=admin) as r:
                if r.status == 429:  # polled faster than the per-client rate limit: wait
                    await asyncio.sleep(min(2.0, float(r.headers.get("Retry-After") or 1)))
                    return False
                data = await r.json()
            if data.get("pending") or data.get("over") or data["steps"] < 4:
                return False
            seen.append(int(data["steps"]))
            return True

        await until_async(shown, "the full view shows 4 steps of the game in progress", 60)
        steps = seen[-1]
        async with aiohttp.ClientSession() as http:
            async with http.get(f"{site.url}api/g/{gid}/step/3?view=all") as r:
                assert r.status == 401  # no token
            async with http.get(f"{site.url}api/g/{gid}/step/3?view=all", headers=admin) as r:
                body = await r.read()
                assert r.status == 200, body  # (step 1 deals, steps 2 and 3 are a turn)
                got = json.loads(body)
                assert r.headers.get("Cache-Control") == "no-store"
            async with http.get(f"{site.url}api/g/{gid}/step/{steps + 5000}?view=all", headers=admin) as r:
                assert r.status == 400 and b"not shown yet" in await r.read()
        hold.unlink()  # the game may end now
        await asyncio.wait_for(run, 90)
        await stop(*procs)
        record = env.store.games(tid)[0].record
        assert record is not None
        want = step_request(record, 3, None)
        del want["incidents"]  # (known from the record only: the live view has none)
        assert got == json.loads(json.dumps(want))
    finally:
        await site.stop()
