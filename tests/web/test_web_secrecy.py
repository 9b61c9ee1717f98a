"""Hidden cards stay hidden from the web view's spectators, as a property: every byte sent
to a client without a token, over every endpoint, while many real games run (two and
three seats, jokers, two games at once), is checked against what the public may know at
that moment. And the organizer's full view: the admin token only, and never a table
younger than its delay.

A card is public while its hand is in play if it is in the discard pile, melded on the
table, or named by a public event (a card taken from the pile): what the engine's
``observation`` shows every seat besides its own hand. A finished hand's cards are
public (its result is shown face up)."""

from __future__ import annotations

import asyncio
import json
import random
import re
import subprocess
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from chinchon.engine import GameState, observation
from chinchon.engine.record import hand_result_to_json
from chinchon_referee.auth import digest
from chinchon_referee.tournament.model import TournamentSpec
from chinchon_referee.web import WebContext, start_web
from chinchon_referee.web.app import STATIC
from chinchon_referee.web.spawn import ChildWeb

from tests.support.fixture_types import SpawnBot
from tests.support.helpers import ADMIN, sdk_bot, stop
from tests.support.tournament import CLI, InProcess, spec_dict
from tests.support.web import PACED_BOT, running_on_the_web, states_of

#: A card's text anywhere in a string: 1O..12B, JK1, JK2.
CARD = re.compile(r"(?<![A-Za-z0-9])(?:1[0-2]|[1-9])[OCEB](?![A-Za-z0-9])|(?<![A-Za-z0-9])JK[12](?![0-9])")


def card_texts(data: Any, skip: tuple[str, ...] = ()) -> set[str]:
    """Every card named in a string of ``data`` (values, and keys too), leaving out the
    values of keys in ``skip``."""
    out: set[str] = set()
    if isinstance(data, dict):
        for k, v in data.items():
            out |= set(CARD.findall(str(k)))
            if k not in skip:
                out |= card_texts(v, skip)
    elif isinstance(data, list):
        for v in data:
            out |= card_texts(v, skip)
    elif isinstance(data, str):
        out |= set(CARD.findall(data))
    return out


def public_cards(state: GameState) -> set[str]:
    """The cards of the hand in play that every seat may know: what each seat's
    observation shows besides its own hand, common to all seats."""
    known: set[str] | None = None
    for seat in range(state.n):
        obs = observation(state, seat)
        mine = {str(c) for c in obs.discard_pile} | {str(c) for t in obs.table for c in t.meld.cards}
        mine |= {str(e.card) for e in obs.events if e.card is not None}
        known = mine if known is None else known & mine
    return known or set()


@dataclass
class Sent:
    """One response as the client got it: its bytes, chunk by chunk, each with the
    moment it arrived (the number of steps every game had then)."""

    url: str
    status: int = 0
    chunks: list[tuple[dict[str, int], bytes]] = field(default_factory=list)

    @property
    def body(self) -> bytes:
        return b"".join(c for _, c in self.chunks)


class Capture:
    """Reads every response to the end, noting when each chunk arrived."""

    def __init__(self, site: ChildWeb, http: aiohttp.ClientSession) -> None:
        self.site, self.http = site, http
        self.sent: list[Sent] = []

    def moment(self) -> dict[str, int]:
        return self.site.feed.steps()  # the referee's own count, now

    async def get(self, path: str, on_chunk: Callable[[bytes], None] | None = None,
                  headers: dict[str, str] | None = None) -> Sent:
        s = Sent(path)
        self.sent.append(s)
        async with self.http.get(self.site.url + path, headers=headers) as r:
            s.status = r.status
            async for chunk in r.content.iter_any():
                s.chunks.append((self.moment(), chunk))
                if on_chunk is not None:
                    on_chunk(chunk)
        return s


def sse_blocks(s: Sent) -> list[tuple[dict[str, int], str, Any]]:
    """Every block of an event stream with the moment its last byte arrived: ("retry",
    ms), ("keepalive", None) or (event name, data). Any other byte fails."""
    out: list[tuple[dict[str, int], str, Any]] = []
    buf = b""
    for moment, chunk in s.chunks:
        buf += chunk
        while b"\n\n" in buf:
            block, buf = buf.split(b"\n\n", 1)
            text = block.decode()
            if m := re.fullmatch(r"retry: (\d+)", text):
                out.append((moment, "retry", int(m.group(1))))
            elif text == ": keepalive":
                out.append((moment, "keepalive", None))
            else:
                m = re.fullmatch(r"event: (\w+)\ndata: (.*)", text, re.S)
                assert m, (s.url, text[:300])
                out.append((moment, m.group(1), json.loads(m.group(2))))
    assert buf in (b"",), (s.url, buf[:300])
    return out


def check_table(gid: str, moment: dict[str, int], data: dict[str, Any],
                states: list[GameState], where: str) -> int:
    """A spectator's table of game ``gid``: nothing but what its declared step showed
    everyone, that step no later than the moment it arrived. Returns the step."""
    assert data["view"] == "spectator" and data["game_id"] == gid, where
    step: int = data["steps"]
    assert step <= moment[gid], (where, step, moment[gid])
    assert all(s["hand"] is None for s in data["seats"]), where
    if step == 0:
        assert not card_texts(data), where
        return step
    state = states[step - 1]
    obs = observation(state, 0)
    # The table is that step's (its label tells the truth), and hands are finished ones.
    assert data["discard_pile"] == [str(c) for c in obs.discard_pile], where
    assert [s["hand_size"] for s in data["seats"]] == [p.hand_size for p in obs.players], where
    assert data["hands"] == json.loads(json.dumps([hand_result_to_json(r) for r in state.results]))
    leaked = card_texts(data, skip=("hands",)) - public_cards(state)
    assert not leaked, (where, step, leaked)
    return step


RUNS = {
    "two-seats-two-jokers": dict(table_size=2, games_per_pairing=2,
                                 rules={"score_limit": 80, "jokers": 2}),
    "three-seats-one-joker": dict(table_size=3, games_per_pairing=4,
                                  rules={"score_limit": 80, "jokers": 1}),
}


@pytest.mark.parametrize("run", sorted(RUNS))
async def test_no_byte_sent_to_a_spectator_names_a_card_the_public_may_not_know(
    env: InProcess, bots: SpawnBot, run: str,
) -> None:
    names = ["sa", "sb", "sc"]
    spec = TournamentSpec.from_dict(spec_dict(f"secrecy-{run}", names, concurrency=2, **RUNS[run]))
    tid, _ = env.director.create(spec)
    # The full view is on (the admin token can see it): nobody without it may.
    site = await start_web(WebContext(referee=env.server.referee, db=env.store.path,
                                      admin_digest=digest(ADMIN), full_view_delay=0.0))
    assert isinstance(site, ChildWeb)
    procs = [await bots(sdk_bot(PACED_BOT), env.server, n) for n in names for _ in range(2)]
    assert await env.server.referee.lobby.wait_all(names, 120)
    rng = random.Random(run)
    stopped = False
    try:
        async with aiohttp.ClientSession() as http:
            cap = Capture(site, http)
            tasks: list[asyncio.Task[Any]] = []
            watched: set[str] = set()
            buf = [b""]

            def watch(g: str) -> None:
                if g not in watched:
                    watched.add(g)
                    tasks.append(asyncio.ensure_future(cap.get(f"api/g/{g}/live")))
                    tasks.append(asyncio.ensure_future(cap.get(f"api/g/{g}/live?view=all")))

            def on_chunk(chunk: bytes) -> None:
                # A spectator learns of games from the pages' streams, as a page does.
                buf[0] += chunk
                for gid in re.findall(rb'"id":"([^"]+)","tournament"', buf[0]):
                    watch(gid.decode())
                buf[0] = buf[0][-20000:]

            tasks += [asyncio.ensure_future(cap.get("api/home/events", on_chunk)),
                      asyncio.ensure_future(cap.get(f"api/t/{tid}/events", on_chunk))]
            run_t = asyncio.ensure_future(env.director.run(tid))
            polls = 0
            while not run_t.done():
                # (The pages' streams name the games to watch: the web process learns
                # of a game from the referee's feed a moment after it started.)
                running = site.feed.running(tid)
                gid = rng.choice(running) if running else rng.choice(sorted(watched) or ["none"])
                path = rng.choice([
                    "", f"t/{tid}", f"g/{gid}", f"r/{gid}", "static/js/game.js", "static/js/common.js",
                    "api/home", f"api/t/{tid}", f"api/t/{tid}/games", f"api/t/{tid}/standings.json",
                    f"api/t/{tid}/standings.csv", f"api/g/{gid}/table", f"api/g/{gid}/table?view=all",
                    f"api/g/{gid}/record.json", f"api/g/{gid}/replay", f"api/g/{gid}/replay?view=0",
                    f"api/g/{gid}/step/{rng.randrange(2, 40)}", f"api/b/{rng.choice(names)}",
                    f"b/{rng.choice(names)}",
                ])
                bad = rng.choice([None, {"Authorization": "Bearer not-the-admin-token!"},
                                  {"Authorization": ADMIN}, {"Authorization": "Basic " + ADMIN}])
                await cap.get(path, headers=bad)
                polls += 1
                await asyncio.wait([run_t], timeout=rng.uniform(0.0, 0.2))
            await run_t
            # The server closing ends every stream after a whole event: all is read.
            await site.stop()
            stopped = True
            await asyncio.wait_for(asyncio.gather(*tasks), 30)
    finally:
        if not stopped:
            await site.stop()
        await stop(*procs)
    games = {g.id: g for g in env.store.games(tid)}
    assert len(games) >= 4 and all(g.status == "finished" for g in games.values())
    # Every game was watched live (but one so short that it began and ended between two
    # looks: its stream then says "gone" at once).
    assert watched == set(games) or {g.id for g in games.values() if len(g.record["actions"]) > 30} <= watched
    states = {gid: states_of(g.record) for gid, g in games.items()}
    assert any("JK1" in json.dumps(g.record) for g in games.values())
    tables = 0
    for s in cap.sent:
        where = s.url
        m = re.fullmatch(r"api/g/([^/?]+)/(live|table|record\.json|replay|step/\d+)(\?view=.*)?", s.url)
        if s.url == "" or re.fullmatch(r"[tgrb]/[^/]+", s.url):
            page = {"": "index", "t": "tournament", "g": "game", "r": "replay", "b": "bot"}[s.url[:1]]
            assert s.status == 200 and s.body == (STATIC / f"{page}.html").read_bytes()
        elif s.url.startswith("static/"):
            assert s.status == 200 and s.body == (STATIC / s.url.removeprefix("static/")).read_bytes()
        elif m and m.group(3) and m.group(3) in ("?view=all",) and m.group(2) in ("live", "table"):
            assert s.status == 401 and not CARD.search(s.body.decode()), where
        elif m and m.group(2) == "live":
            gid = m.group(1)
            assert s.status == 200, where
            for moment, name, data in sse_blocks(s):
                if name == "table":
                    check_table(gid, moment, data, states[gid], where)
                    tables += 1
                else:
                    assert name in ("retry", "keepalive", "gone") and not card_texts(data), where
        elif m and m.group(2) == "table":
            gid = m.group(1)
            if s.status == 200:
                check_table(gid, s.chunks[-1][0], json.loads(s.body), states[gid], where)
            else:
                assert s.status == 404 and not CARD.search(s.body.decode()), where
        elif m:  # a record, a replay or a step: only of a game over before the request was answered
            if s.status == 200:
                gid = m.group(1)
                final = len(games[gid].record["actions"])
                assert s.chunks[0][0].get(gid, final) == final, where
            elif s.status == 400 and m.group(2).startswith("step/"):  # a deal's step
                assert not CARD.search(s.body.decode()), where
            else:
                assert s.status == 404 and not CARD.search(s.body.decode()), where
        elif s.url.endswith("/events"):
            assert s.status == 200
            for _, name, data in sse_blocks(s):
                assert not card_texts(data), (where, name)
        else:  # the home, tournament, games and standings data: no card at all
            assert s.status == 200, where
            assert not CARD.search(s.body.decode()), where
    assert tables >= 50 and polls >= 20, (tables, polls)


@pytest.fixture
async def full_site(env: InProcess) -> AsyncIterator[ChildWeb]:
    s = await start_web(WebContext(referee=env.server.referee, db=env.store.path,
                                   admin_digest=digest(ADMIN), full_view_delay=DELAY))
    assert isinstance(s, ChildWeb)
    try:
        yield s
    finally:
        await s.stop()


#: The full view's delay in the test (seconds).
DELAY = 1.5


async def test_the_full_view_needs_the_admin_token_and_lags_its_delay(
    env: InProcess, full_site: ChildWeb, bots: SpawnBot,
) -> None:
    spec = TournamentSpec.from_dict(spec_dict("full", ["fa", "fb"], games_per_pairing=1,
                                              concurrency=1, rules={"score_limit": 60}))
    tid, _ = env.director.create(spec)
    ref = env.server.referee
    # When each step of each game was first the table's (the referee's own steps, seen
    # beside the web view's observer).
    reached: dict[tuple[str, int], float] = {}
    web_observer = ref.services.observer
    assert web_observer is not None

    def observe(runner: Any, state: Any, rec: Any) -> None:
        if rec is not None:
            reached.setdefault((runner.spec.game_id, len(rec.actions)), time.time())
        web_observer(runner, state, rec)

    ref.services.observer = observe
    procs = [await bots(sdk_bot(PACED_BOT), env.server, "fa"),
             await bots(sdk_bot(PACED_BOT), env.server, "fb")]
    assert await ref.lobby.wait_all(["fa", "fb"], 120)
    run = asyncio.ensure_future(env.director.run(tid))
    gid = await running_on_the_web(full_site.url, tid)
    base = f"{full_site.url}api/g/{gid}"
    got: list[tuple[float, dict[str, Any]]] = []
    async with aiohttp.ClientSession() as http:
        # Refused without the right token, in the header (401), or a bad view (400).
        for path, headers, status in [
            ("live?view=all", {}, 401), ("table?view=all", {}, 401),
            ("live?view=all", {"Authorization": "Bearer wrong-token-but-long"}, 401),
            ("table?view=all", {"Authorization": "Bearer " + ADMIN[:-1]}, 401),
            (f"table?view=all&token={ADMIN}", {}, 401), ("table?view=bogus", {}, 400),
        ]:
            async with http.get(f"{base}/{path}", headers=headers) as r:
                body = await r.text()
                assert r.status == status and not CARD.search(body), (path, r.status, body)
        auth = {"Authorization": "Bearer " + ADMIN}
        async with http.get(f"{base}/live?view=all", headers=auth) as r:
            assert r.status == 200
            name = ""
            async for raw in r.content:
                line = raw.decode().rstrip("\n")
                if line.startswith("event: "):
                    name = line[7:]
                elif line.startswith("data: "):
                    if name != "table":
                        break
                    got.append((time.time(), json.loads(line[6:])))
                    if got[-1][1]["over"] and not got[-1][1]["pending"] and \
                            got[-1][1]["steps"] == got[-1][1]["live_steps"]:
                        break
    await asyncio.wait_for(run, 120)
    await stop(*procs)
    ref.services.observer = web_observer
    record = env.store.games(tid)[0].record
    states = states_of(record)
    shown = [d for _, d in got if not d["pending"]]
    # Pending while the game is younger than the delay (on a busy machine the stream may
    # open only after that), then tables: one at least in the middle of a hand, and the
    # end (the web process is niced: on a busy machine it sends fewer tables, not none).
    start = min(t for (g, _), t in reached.items() if g == gid)
    assert all(d["pending"] for arrived, d in got if arrived < start + DELAY), got
    assert len(shown) >= 2, got
    assert any(d["phase"] not in ("deal", "game_over") for d in shown), shown
    for arrived, d in got:
        if d["pending"]:
            assert not card_texts(d), d
            continue
        step = d["steps"]
        # The table shown was the live one DELAY seconds before it arrived, at least.
        assert reached[(gid, step)] <= arrived - DELAY, (step, arrived - reached[(gid, step)])
        assert d["at"] <= arrived - DELAY and d["live_steps"] >= step
        state = states[step - 1]
        hands = [s["hand"] for s in d["seats"]]
        if state.phase.name not in ("DEAL", "GAME_OVER"):
            assert hands == [[str(c) for c in state.hand(s)] for s in range(state.n)]
    # The last view is the end of the game, every card of it.
    assert shown[-1]["steps"] == len(record["actions"])


async def test_the_full_view_is_off_without_an_admin_token(env: InProcess) -> None:
    s = await start_web(WebContext(referee=env.server.referee, db=env.store.path))
    try:
        async with aiohttp.ClientSession() as http:
            for path in ("live", "table"):
                async with http.get(f"{s.url}api/g/x/{path}?view=all",
                                    headers={"Authorization": "Bearer " + ADMIN}) as r:
                    assert r.status == 403 and "off" in await r.text()
    finally:
        await s.stop()


def test_serve_refuses_a_bad_full_view_delay(tmp_path: Path) -> None:
    for bad in ("-1", "nan", "inf"):
        proc = subprocess.run([*CLI, "serve", "--address", "127.0.0.1:0", "--db",
                               str(tmp_path / "x.sqlite3"), "--http", "0",
                               "--web-full-view-delay", bad],
                              capture_output=True, text=True, timeout=60, cwd=tmp_path)
        assert proc.returncode == 2, proc.stderr
        assert "--web-full-view-delay" in proc.stderr, proc.stderr
