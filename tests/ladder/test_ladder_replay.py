"""A finished ladder game in the replay viewer's data routes: a real referee
playing a ladder with in-process SDK bots, its real web view (a child process reading the
SQLite database). The replay (every card, and each seat's view), a step and the record of
a finished ladder game are served and are those of its stored record; a ladder game in
progress, or voided, is not shown (docs/web.md: a record only once its game is finished);
the leaderboard and the bot page link each recent game to its replay."""

from __future__ import annotations

import asyncio
import json
import re
from typing import Any
from urllib.parse import quote

import aiohttp
from chinchon_referee.storage.ladders import LadderStatus
from chinchon_referee.web import WebContext, start_web
from chinchon_referee.web.replay import steps
from chinchon_referee.web.step_view import step_request

from tests.support.fixture_types import SpawnBot
from tests.support.inproc import sdk
from tests.support.ladder_run import LadderEnv, ladder_spec, no_game_running


def _plain(data: Any) -> Any:
    """``data`` as it comes back from JSON."""
    return json.loads(json.dumps(data))


async def test_a_finished_ladder_game_is_served_to_the_replay_viewer_as_its_record(
        ladder_env: LadderEnv, bots: SpawnBot) -> None:
    env = ladder_env
    lid, _ = env.ladders.create(ladder_spec(["p", "q"]))
    env.ladders.start(lid)
    await bots(sdk("greedy"), env.server, "p")
    await bots(sdk("random"), env.server, "q")
    await env.played(2)
    await env.ladders.set_status(lid, LadderStatus.PAUSED)  # the newest games stay so
    await asyncio.wait_for(no_game_running(env, lid), 60)
    gid = env.rated[-1].id
    stored = env.store.ladder_game(gid)
    assert stored is not None and stored.record is not None
    record = stored.record
    assert record["labels"]["ladder"] == lid
    # Not finished: a game in progress (its row running) and a voided one (its record
    # stored, never rated) are not shown.
    env.store.begin_ladder_game(lid, f"{lid}-running", ["p", "q"])
    env.store.begin_ladder_game(lid, f"{lid}-void", ["r", "s"])
    assert stored.result is not None
    env.store.finish_ladder_game(f"{lid}-void", stored.result, None, [], record,
                                 lambda before, places: before)

    web = await start_web(WebContext(referee=env.server.referee, db=env.store.path))
    base = web.url.rstrip("/")
    try:
        async with aiohttp.ClientSession() as http:
            async def get(path: str) -> tuple[int, bytes]:
                async with http.get(base + path) as r:
                    return r.status, await r.read()

            g = quote(gid, safe="")
            status, body = await get(f"/api/g/{g}/replay")
            assert status == 200
            got = json.loads(body)
            assert got == _plain(steps(record, None) | {"stderr": []})
            assert got["game_id"] == gid and got["labels"]["ladder"] == lid
            for seat in (0, 1):
                status, body = await get(f"/api/g/{g}/replay?view={seat}")
                assert status == 200
                assert json.loads(body) == _plain(steps(record, seat) | {"stderr": []})
            status, body = await get(f"/api/g/{g}/record.json")
            assert status == 200 and json.loads(body) == record
            status, body = await get(f"/api/lg/{g}/record.json")
            assert status == 200 and json.loads(body) == record
            # A decision as its bot received it (the first move's, by its seat).
            n, move = next((i + 1, a["move"]) for i, a in enumerate(record["actions"])
                           if "move" in a)
            seat = int(move.get("seat", 0))
            status, body = await get(f"/api/g/{g}/step/{n}?seat={seat}")
            assert status == 200 and json.loads(body) == _plain(step_request(record, n, seat))
            status, body = await get(f"/r/{g}")
            assert status == 200 and b"<html" in body.lower()

            for hidden in (f"{lid}-running", f"{lid}-void"):
                for path in ("replay", "record.json", "step/1"):
                    status, _ = await get(f"/api/g/{quote(hidden, safe='')}/{path}")
                    assert status == 404, (hidden, path)
            status, _ = await get("/api/g/no-such-game/replay")
            assert status == 404

            # The pages link each recent game to its replay.
            for page in (f"/l/{lid}", f"/l/{lid}/b/p"):
                status, body = await get(page)
                assert status == 200
                links = re.findall(r'class="replay" href="/r/([^"]+)"', body.decode())
                assert g in links, page
            status, body = await get(f"/api/l/{lid}")
            assert gid in {r["id"] for r in json.loads(body)["recent"]}
    finally:
        await web.stop()
