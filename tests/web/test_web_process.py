"""The web view's process and its feed (docs/web.md): a child of the referee, started
again when it dies and sent every game in progress from its start; a child that stops
reading (stopped by SIGSTOP here) holds up no game, costs the referee a bounded buffer,
and is sent what it missed when it reads again; and the same process run apart
(``chinchon web``), fed over a socket file only its owner may open, that follows its
referee across a restart."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import stat
import subprocess
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from chinchon_referee.tournament.model import TournamentSpec
from chinchon_referee.web import WebContext, start_web
from chinchon_referee.web.feed import MAX_WRITE
from chinchon_referee.web.spawn import ChildWeb

from tests.support.fixture_types import SpawnBot
from tests.support.helpers import ADMIN, raw_bot, sdk_bot, stop
from tests.support.serve import free_port
from tests.support.tournament import CLI, InProcess, spec_dict
from tests.support.waits import until, until_async, until_sync
from tests.support.web import PACED_BOT, get_json, running_on_the_web


@pytest.fixture
async def site(env: InProcess) -> AsyncIterator[ChildWeb]:
    s = await start_web(WebContext(referee=env.server.referee, db=env.store.path))
    assert isinstance(s, ChildWeb)
    try:
        yield s
    finally:
        await s.stop()


async def _json(url: str) -> tuple[int, Any]:
    async with aiohttp.ClientSession() as http, http.get(url) as r:
        return r.status, (await r.json() if r.status == 200 else await r.text())


async def test_a_web_process_that_dies_is_started_again_and_sent_the_games_in_progress(
    env: InProcess, site: ChildWeb, bots: SpawnBot,
) -> None:
    spec = TournamentSpec.from_dict(spec_dict("again", ["ra", "rb"], games_per_pairing=1,
                                              concurrency=1, rules={"score_limit": 200}))
    tid, _ = env.director.create(spec)
    procs = [await bots(sdk_bot(PACED_BOT), env.server, n) for n in ("ra", "rb")]
    assert await env.server.referee.lobby.wait_all(["ra", "rb"], 120)
    run = asyncio.ensure_future(env.director.run(tid))
    gid = await running_on_the_web(site.url, tid)
    first = site.pid
    os.kill(first, signal.SIGKILL)
    await until(lambda: site.pid != first and site.restarts == 1, "the web process started again", 30)

    async def resent() -> bool:  # the same game, every step so far, on the same port
        status, table = await _json(f"{site.url}api/g/{gid}/table")
        steps = site.feed.steps().get(gid, 0)
        return status == 200 and 0 < table["steps"] <= steps

    await until_async(resent, "the new web process shows the game in progress")
    # Shown: the rest of the long game would prove nothing more (it took ~35 s to play).
    await env.director.cancel(tid)
    run.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await run
    assert env.store.tournament(tid).status == "cancelled"
    await stop(*procs)


#: The feed's buffer in the stalled test (bytes): small, so that it fills soon.
BUFFER = 16 * 1024


async def test_a_stalled_web_process_holds_up_no_game_and_catches_up(
    env: InProcess, bots: SpawnBot,
) -> None:
    site = await start_web(WebContext(referee=env.server.referee, db=env.store.path,
                                      feed_buffer=BUFFER))
    assert isinstance(site, ChildWeb)
    try:
        await _stalled(env, site, bots)
    finally:
        await site.stop()


async def _stalled(env: InProcess, site: ChildWeb, bots: SpawnBot) -> None:
    spec = TournamentSpec.from_dict(spec_dict("stalled", ["sa", "sb"], games_per_pairing=20,
                                              concurrency=2))
    tid, _ = env.director.create(spec)
    procs = [await bots(raw_bot("first"), env.server, n) for n in ("sa", "sb") for _ in range(2)]
    assert await env.server.referee.lobby.wait_all(["sa", "sb"], 120)
    link = site.link
    assert link is not None and link.transport is not None
    os.kill(site.pid, signal.SIGSTOP)  # it reads nothing from now on
    try:
        await asyncio.wait_for(env.director.run(tid, force_start=True), 180)
        # Every game was played to its end, and the feed's buffer stayed bounded.
        games = env.store.games(tid)
        assert len(games) == 20 and all(g.status == "finished" for g in games)
        assert all(s["timeouts"] == 0 for g in games for s in g.stats or [])
        assert link.stalls >= 1  # its buffer filled: the link stopped writing
        assert link.transport.get_write_buffer_size() <= BUFFER + MAX_WRITE
    finally:
        os.kill(site.pid, signal.SIGCONT)
    await stop(*procs)

    # Reading again, it is sent what it missed: the games it was shown end.
    async def caught_up() -> bool:
        status, home = await _json(site.url + "api/home")
        return status == 200 and not home["running"]

    await until_async(caught_up, "the web process caught up", 60)


@pytest.fixture
def children() -> Any:
    started: list[subprocess.Popen[str]] = []

    def start(args: list[str]) -> subprocess.Popen[str]:
        p = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                             env={**os.environ, "PYTHONUNBUFFERED": "1"})
        started.append(p)
        return p

    yield start
    for p in started:
        if p.poll() is None:
            p.terminate()
            try:
                p.wait(15)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()


def _event(p: subprocess.Popen[str], name: str) -> dict[str, Any]:
    assert p.stdout is not None
    while True:
        line = p.stdout.readline()
        assert line, f"ended before printing {name}: {p.stderr.read() if p.stderr else ''}"
        if line.startswith("{") and json.loads(line).get("event") == name:
            ev: dict[str, Any] = json.loads(line)
            return ev


def test_chinchon_web_runs_apart_fed_by_a_socket_only_its_owner_may_open(
    tmp_path: Path, children: Any,
) -> None:
    db, sock = tmp_path / "apart.sqlite3", tmp_path / "web.sock"
    port = free_port()
    serve = [*CLI, "serve", "--address", f"127.0.0.1:{port}", "--db", str(db),
             "--admin-token", ADMIN, "--log-level", "warning", "--web-feed", str(sock)]
    # The web view first, its referee not there yet: the database only, and its own boot.
    web = children([*CLI, "web", "--feed", str(sock), "--db", str(db), "--http", "127.0.0.1:0",
                    "--log-level", "error"])
    url = _event(web, "web")["url"]
    alone = get_json(url + "api/home")["boot"]
    referee = children(serve)
    _event(referee, "listening")
    assert stat.S_IMODE(sock.stat().st_mode) == 0o600 and stat.S_ISSOCK(sock.stat().st_mode)
    until_sync(lambda: get_json(url + "api/home")["boot"] != alone, "the web view hears its referee", 30)
    boot = get_json(url + "api/home")["boot"]
    # The referee restarts: the web view goes on, and follows the new one.
    referee.terminate()
    assert referee.wait(30) == 0
    assert get_json(url + "api/home")["tournaments"] == []
    again = children(serve)
    _event(again, "listening")
    until_sync(lambda: get_json(url + "api/home")["boot"] not in (alone, boot),
               "the web view follows the referee that came back", 30)
