"""The web view's data over HTTP, against a real referee and director (in process) with
real bot processes: the standings are GetStandings' numbers, the records' archive is
streamed and complete, a spectator's live stream never holds a hidden card, records of
a duplicate-deal tournament wait for its end, nothing can be changed, and the live
streams are bounded."""

from __future__ import annotations

import asyncio
import io
import json
import os
import re
import subprocess
import urllib.request
import zipfile
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from chinchon.engine import observation
from chinchon_referee.tournament.model import TournamentSpec
from chinchon_referee.web import RunningWeb, WebContext, reader, start_web
from chinchon_referee.web.replay import steps as replay_steps
from chinchon_referee.web.spawn import ChildWeb

from tests.support.fixture_types import SpawnBot
from tests.support.helpers import raw_bot, sdk_bot, stop
from tests.support.tournament import CLI, InProcess, spec_dict
from tests.support.waits import until, until_async, until_sync
from tests.support.web import PACED_BOT, hidden_cards, running_on_the_web, states_of


@pytest.fixture
async def site(env: InProcess) -> AsyncIterator[ChildWeb]:
    s = await start_web(WebContext(referee=env.server.referee, db=env.store.path))
    assert isinstance(s, ChildWeb)  # a referee's web view: a process of its own
    try:
        yield s
    finally:
        await s.stop()


async def _get(url: str) -> tuple[int, dict[str, str], bytes]:
    async with aiohttp.ClientSession() as http, http.get(url) as r:
        return r.status, dict(r.headers), await r.read()


async def _sse_events(resp: aiohttp.ClientResponse) -> AsyncIterator[tuple[str, Any]]:
    name = ""
    async for raw in resp.content:
        line = raw.decode().rstrip("\n")
        if line.startswith("event: "):
            name = line[7:]
        elif line.startswith("data: "):
            yield name, json.loads(line[6:])


async def test_standings_games_event_log_and_streamed_archive(
    env: InProcess, site: ChildWeb, bots: SpawnBot, monkeypatch: pytest.MonkeyPatch,
) -> None:
    spec = TournamentSpec.from_dict(spec_dict(
        "web-data", ["a", "b", "ghost"], policies={"reconnect_grace": 0.5, "absence_limit": 0.0}))
    tid, _ = env.director.create(spec)
    procs = [await bots(sdk_bot("greedy"), env.server, "a"),
             await bots(sdk_bot("random"), env.server, "b")]
    assert await env.server.referee.lobby.wait_all(["a", "b"], 120)
    await asyncio.wait_for(env.director.run(tid), 90)
    await stop(*procs)
    base = f"{site.url}api/t/{tid}"
    st = env.director.standings(tid)
    # The standings downloads are GetStandings' numbers.
    status, headers, body = await _get(f"{base}/standings.json")
    assert status == 200 and json.loads(body) == json.loads(json.dumps(st.to_json()))
    status, _, body = await _get(f"{base}/standings.csv")
    assert status == 200 and body.decode() == st.to_csv()
    # The page's snapshot: progress, the same standings, the event log with forfeits.
    status, _, body = await _get(base)
    snap = json.loads(body)
    assert snap["progress"]["done"] == snap["progress"]["total"] == 6
    assert snap["standings"] == json.loads(json.dumps(st.to_json()))
    forfeits = [e for e in snap["events"] if e["kind"] == "forfeit"]
    assert len(forfeits) == 4 and all(e["bot"] == "ghost" for e in forfeits)
    # Finished games, filtered and paged.
    _, _, body = await _get(f"{base}/games?bot=ghost&result=forfeit&limit=3")
    page = json.loads(body)
    assert page["total"] == 4 and len(page["games"]) == 3
    _, _, body = await _get(f"{base}/games?bot=ghost&result=forfeit&limit=3&offset=3")
    assert len(json.loads(body)["games"]) == 1
    _, _, body = await _get(f"{base}/games?bot=a")
    assert json.loads(body)["total"] == 4
    # A head-to-head cell's games: those between the two bots only.
    _, _, body = await _get(f"{base}/games?bot=a&opponent=b")
    pair = json.loads(body)
    assert pair["total"] == 2 and all(set(g["players"]) == {"a", "b"} for g in pair["games"])
    _, _, body = await _get(f"{base}/games?bot=a&opponent=b&result=win")
    assert json.loads(body)["total"] == sum(
        1 for g in pair["games"] if [g["players"][w] for w in g["winners"]] == ["a"])
    for bad in ("result=bogus", "limit=100000", "offset=-1", "limit=x", "opponent=b"):
        status, _, _ = await _get(f"{base}/games?{bad}")
        assert status == 400, bad
    # The archive is streamed (chunked, no length known up front), a few records per
    # query, and holds every record exactly as stored.
    monkeypatch.setattr(reader, "BATCH", 2)
    status, headers, body = await _get(f"{base}/records.zip")
    assert status == 200
    assert headers.get("Transfer-Encoding") == "chunked" and "Content-Length" not in headers
    stored = {g.id: g.record for g in env.store.games(tid)}
    with zipfile.ZipFile(io.BytesIO(body)) as zf:
        got = {n.removeprefix("records/").removesuffix(".json"): json.loads(zf.read(n))
               for n in zf.namelist()}
    assert got == stored
    # A replay's seat view and bad views.
    gid = next(iter(stored))
    status, _, body = await _get(f"{site.url}api/g/{gid}/replay?view=1")
    assert status == 200 and json.loads(body)["view"] == 1
    for bad in ("9", "x", "-1"):
        status, _, _ = await _get(f"{site.url}api/g/{gid}/replay?view={bad}")
        assert status == 400


async def test_the_tournament_page_carries_its_rule_table(env: InProcess, site: RunningWeb) -> None:
    """The tournament page's rule table (tournament.js): every option with its value,
    default and meaning, the house rules included; a changed option differs from its
    default. Nothing is played: the table comes from the declaration."""
    from chinchon.engine.rules import OPTION_NAMES

    spec = TournamentSpec.from_dict(spec_dict("web-rules", ["a", "b"], rules={
        "wild_cards": ["1O"], "jokers_per_meld": 1, "close_first_round": False}))
    tid, _ = env.director.create(spec)
    status, _, body = await _get(f"{site.url}api/t/{tid}")
    assert status == 200
    rows = {r["option"]: r for r in json.loads(body)["tournament"]["rules"]}
    assert tuple(rows) == OPTION_NAMES
    assert (rows["wild_cards"]["value"], rows["wild_cards"]["default"]) == ("1O", "none")
    assert (rows["jokers_per_meld"]["value"], rows["jokers_per_meld"]["default"]) == ("1", "2")
    assert (rows["close_first_round"]["value"], rows["close_first_round"]["default"]) == (
        "false", "true")
    assert rows["deck"]["value"] == rows["deck"]["default"] == "40"
    assert "wild" in rows["wild_cards"]["meaning"]


async def test_the_web_view_is_read_only_and_its_streams_are_bounded(env: InProcess) -> None:
    s = await start_web(WebContext(referee=env.server.referee, db=env.store.path,
                                   max_subscribers=2, max_per_peer=2))
    try:
        spec = TournamentSpec.from_dict(spec_dict("ro", ["a", "b"], start="manual"))
        tid, _ = env.director.create(spec)
        async with aiohttp.ClientSession() as http:
            for method in ("POST", "PUT", "DELETE", "PATCH"):
                for path in ("api/home", f"api/t/{tid}", f"api/t/{tid}/events", ""):
                    async with http.request(method, s.url + path) as r:
                        assert r.status == 405, (method, path)
            async with http.get(s.url) as r:
                assert r.status == 200
                assert "default-src 'self'" in r.headers["Content-Security-Policy"]
                assert r.headers["X-Content-Type-Options"] == "nosniff"
            # Nothing else in the database changed: the tournament still waits.
            assert env.store.tournament(tid).status == "scheduled"
            # No record of a game not finished; no such game.
            first = env.store.games(tid)[0].id
            async with http.get(f"{s.url}api/g/{first}/record.json") as r:
                assert r.status == 404
            # Two live streams at once, not three (503, and the server goes on).
            a = await http.get(s.url + "api/home/events")
            b = await http.get(s.url + f"api/t/{tid}/events")
            assert a.status == b.status == 200
            async with http.get(s.url + "api/home/events") as r:
                assert r.status == 503 and "too many live pages" in await r.text()
            a.close()
            b.close()

            async def reopens() -> bool:  # once the server saw them close
                async with http.get(s.url + "api/home/events") as r:
                    return r.status == 200

            await until_async(reopens, "a stream opens again once the others closed")
    finally:
        await s.stop()
    # One address may not take every stream: 2 of 3 here.
    s = await start_web(WebContext(referee=env.server.referee, db=env.store.path,
                                   max_subscribers=3, max_per_peer=2))
    try:
        async with aiohttp.ClientSession() as http:
            held = [await http.get(s.url + "api/home/events") for _ in range(2)]
            assert [r.status for r in held] == [200, 200]
            async with http.get(s.url + "api/home/events") as r:
                assert r.status == 503 and "from 127.0.0.1" in await r.text()
            for r in held:
                r.close()
    finally:
        await s.stop()


async def test_a_spectator_stream_never_holds_a_hidden_card(
    env: InProcess, site: ChildWeb, bots: SpawnBot,
) -> None:
    spec = TournamentSpec.from_dict(spec_dict("live", ["pa", "pb"], games_per_pairing=1,
                                              concurrency=1))
    tid, _ = env.director.create(spec)
    procs = [await bots(sdk_bot(PACED_BOT), env.server, "pa"),
             await bots(sdk_bot(PACED_BOT), env.server, "pb")]
    assert await env.server.referee.lobby.wait_all(["pa", "pb"], 120)
    run = asyncio.ensure_future(env.director.run(tid))
    gid = await running_on_the_web(site.url, tid)
    seen: list[tuple[int, str]] = []
    async with aiohttp.ClientSession() as http, http.get(f"{site.url}api/g/{gid}/live") as r:
        assert r.status == 200 and r.headers["Content-Type"] == "text/event-stream"
        async for name, data in _sse_events(r):
            if name != "table":
                break
            seen.append((data["steps"], json.dumps(data)))
            if data["over"]:
                break
    await asyncio.wait_for(run, 90)
    await stop(*procs)
    assert len(seen) >= 3
    record = env.store.games(tid)[0].record
    states = states_of(record)
    for steps, text in seen:
        if steps == 0:
            continue
        state = states[steps - 1]
        data = json.loads(text)
        assert all(s["hand"] is None for s in data["seats"])
        obs = observation(state, 0)
        assert [s["hand_size"] for s in data["seats"]] == [p.hand_size for p in obs.players]
        cards = _card_strings(data, skip=("hands",))
        # A card discarded, or taken from the discard pile, was seen by all: the hand's
        # public events (the engine's observation) name it, even once a reshuffle has put
        # it back in the stock (CI saw that: the stock's order stays secret, its cards
        # were all on the pile). A card drawn from the stock is named by no event, and no
        # other card in a hand or the stock is named at all.
        assert all(e["card"] == "" for e in data["events"] if e["kind"] == "draw_stock")
        seen_by_all = {str(e.card) for e in obs.events if e.kind in ("draw_discard", "discard")}
        leaked = cards & hidden_cards(state) - seen_by_all
        assert not leaked, (steps, leaked)


def _card_strings(data: Any, skip: tuple[str, ...] = ()) -> set[str]:
    """Every string in ``data`` (past hand results left out: shown after their hand)."""
    out: set[str] = set()
    if isinstance(data, dict):
        for k, v in data.items():
            if k not in skip:
                out |= _card_strings(v, skip)
    elif isinstance(data, list):
        for v in data:
            out |= _card_strings(v, skip)
    elif isinstance(data, str):
        out.add(data)
    return out


async def test_records_of_a_duplicate_deal_tournament_wait_for_its_end(
    env: InProcess, site: ChildWeb, bots: SpawnBot,
) -> None:
    spec = TournamentSpec.from_dict(spec_dict("twins", ["da", "db"], duplicate_deals=True,
                                              games_per_pairing=4, concurrency=1))
    tid, _ = env.director.create(spec)
    # Only one bot: the tournament runs (its games wait for the other) and is not over.
    gate = [await bots(sdk_bot(PACED_BOT), env.server, "da")]
    run = asyncio.ensure_future(env.director.run(tid))
    late = await bots(sdk_bot(PACED_BOT), env.server, "db")
    await until(lambda: env.director.counts(tid)[1] >= 1, "a game finished", 60)
    assert env.store.tournament(tid).status == "running"
    done = next(g.id for g in env.store.games(tid) if g.status == "finished")
    for path in (f"api/g/{done}/record.json", f"api/g/{done}/replay", f"api/t/{tid}/records.zip",
                 f"api/g/{done}/step/2"):
        status, _, body = await _get(site.url + path)
        assert status == 403 and b"duplicate deals" in body, path
    await asyncio.wait_for(run, 120)
    await stop(*gate, late)
    # (a step of a game that was played: the first may be a forfeit without a move)
    played = next(g for g in env.store.games(tid) if '"move"' in json.dumps(g.record))
    move = next(i for i, a in enumerate(played.record["actions"]) if "move" in a) + 1
    for path in (f"api/g/{done}/record.json", f"api/g/{done}/replay", f"api/t/{tid}/records.zip",
                 f"api/g/{played.id}/step/{move}"):
        status, _, _ = await _get(site.url + path)
        assert status == 200, path


def test_tournament_run_serves_the_web_view_and_prints_its_url(tmp_path: Path) -> None:
    toml = tmp_path / "web.toml"
    toml.write_text(f"""
name = "Web run cup"
games_per_pairing = 2
concurrency = 1
start = "when_connected"
seed = "web-run"

[rules]
score_limit = 40

[[participants]]
name = "paced-a"
command = ["{{python}}", "-m", "chinchon.sdk", "--bot", "{PACED_BOT}"]

[[participants]]
name = "paced-b"
command = ["{{python}}", "-m", "chinchon.sdk", "--bot", "{PACED_BOT}"]
""", encoding="utf-8")
    proc = subprocess.Popen([*CLI, "tournament", "run", str(toml), "--quiet"], cwd=tmp_path,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "PYTHONUNBUFFERED": "1", "COLUMNS": "200"})
    try:
        assert proc.stdout is not None
        line = ""
        while "web view:" not in line:
            line = proc.stdout.readline()
            assert line, "tournament run ended without printing the web view's URL"
        url = line.split("web view:", 1)[1].strip()
        assert re.fullmatch(r"http://127\.0\.0\.1:\d+/", url), url
        with urllib.request.urlopen(url + "api/home", timeout=10) as r:
            home = json.loads(r.read())
        assert [t["name"] for t in home["tournaments"]] == ["Web run cup"]
        out, err = proc.communicate(timeout=150)
        assert proc.returncode == 0, out[-3000:] + err[-3000:]
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_a_seat_view_of_a_replay_names_only_cards_that_seat_saw(tmp_path: Path) -> None:
    """Every step of ``view=N``: its table and its text name no card of another hand,
    of the stock, or the face-down closing discard of another seat, at that step."""
    rec_path = tmp_path / "g.json"
    subprocess.run([*CLI, "demo", "--seed", "seat-view", "--record", str(rec_path)], check=True,
                   capture_output=True, timeout=60)
    record = json.loads(rec_path.read_text())
    states = states_of(record)
    for seat in range(len(record["seats"])):
        view = replay_steps(record, seat)
        assert view["view"] == seat and len(view["steps"]) == len(states)
        for k, (step, state) in enumerate(zip(view["steps"], states, strict=True)):
            obs = observation(state, seat)
            known = {str(c) for c in obs.hand} | {str(c) for c in obs.discard_pile}
            known |= {str(c) for t in obs.table for c in t.meld.cards}
            known |= {str(e.card) for e in obs.events if e.card is not None}
            hidden = hidden_cards(state) - known
            if state.close_discard is not None and state.closer != seat:
                hidden.add(str(state.close_discard))
            named = _card_strings(step) | set(re.findall(r"\b(?:1[0-2]|[1-9])[OCEB]\b|\bJK[12]\b",
                                                         step["text"]))
            assert not named & hidden, (seat, k + 1, named & hidden)
            mine = next(s for s in step["table"]["seats"] if s["seat"] == seat)
            assert mine["hand"] == [str(c) for c in obs.hand]
            assert all(s["hand"] is None for s in step["table"]["seats"] if s["seat"] != seat)


def test_serve_refuses_a_bad_http_address(tmp_path: Path) -> None:
    for bad in ("nonsense", "127.0.0.1:99999", "host:"):
        proc = subprocess.run([*CLI, "serve", "--address", "127.0.0.1:0", "--db",
                               str(tmp_path / "x.sqlite3"), "--http", bad],
                              capture_output=True, text=True, timeout=60, cwd=tmp_path)
        assert proc.returncode == 2, proc.stderr
        assert f"--http {bad}" in proc.stderr, proc.stderr


def test_the_pages_ship_in_the_package_and_load_nothing_from_elsewhere() -> None:
    """Every static file is in the package data, and none names another server (the one
    URL allowed is SVG's namespace, which is a name, not a download)."""
    import fnmatch
    import tomllib

    from tests.support.helpers import ROOT

    static = ROOT / "server" / "chinchon_referee" / "web" / "static"
    conf = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    patterns = conf["tool"]["setuptools"]["package-data"]["chinchon_referee.web"]
    files = [p for p in static.rglob("*") if p.is_file()]
    assert len(files) >= 10
    for f in files:
        rel = f.relative_to(static.parent).as_posix()
        assert any(fnmatch.fnmatch(rel, pat) for pat in patterns), f"{rel} would not ship"
        urls = set(re.findall(r"(?:https?:)?//[A-Za-z0-9.-]+\.[a-z]{2,}[^\s\"'`)]*", f.read_text()))
        assert urls <= {"http://www.w3.org/2000/svg"}, (rel, urls)


async def test_illegal_attempts_defaults_and_strikes_are_marked(
    env: InProcess, site: ChildWeb, bots: SpawnBot,
) -> None:
    spec = TournamentSpec.from_dict(spec_dict("cheats", ["cheat", "fair"], games_per_pairing=1,
                                              concurrency=1))
    tid, _ = env.director.create(spec)
    procs = [await bots(raw_bot("illegal"), env.server, "cheat"),
             await bots(sdk_bot("greedy"), env.server, "fair")]
    assert await env.server.referee.lobby.wait_all(["cheat", "fair"], 120)
    await asyncio.wait_for(env.director.run(tid), 90)
    await stop(*procs)
    game = env.store.games(tid)[0]
    seat = game.players.index("cheat")
    # The live view (kept a while after the end) marks each default and the illegal
    # answers before it, and counts the strikes.
    async def last_table() -> dict[str, Any] | None:
        status, _, body = await _get(f"{site.url}api/g/{game.id}/table")
        assert status == 200, body
        data: dict[str, Any] = json.loads(body)
        return data if data["over"] else None

    await until_async(last_table, "the web process showed the game's end")
    table = await last_table()
    assert table is not None
    cheat = table["seats"][seat]
    assert cheat["strikes"] == spec.policies.max_strikes and cheat["illegal"] >= cheat["strikes"]
    defaults = [m for m in table["moves"] if m.get("origin") == "ACTION_ORIGIN_DEFAULT_ILLEGAL"]
    assert len(defaults) == spec.policies.max_strikes
    assert all(m["seat"] == seat and m["illegal_before"] >= 1 for m in defaults)
    # The tournament's event log: the illegal actions and the forfeit.
    _, _, body = await _get(f"{site.url}api/t/{tid}")
    kinds = {(e["kind"], e["bot"]) for e in json.loads(body)["events"]}
    assert {("illegal", "cheat"), ("forfeit", "cheat")} <= kinds


def test_tournament_run_keeps_serving_its_results_and_says_how_to_serve_them_later(
    tmp_path: Path,
) -> None:
    """``--keep-serving``: the run's web view outlives the run, until Ctrl-C; at the end
    the run prints the ``chinchon serve --db … --http …`` command that serves them later,
    and that command does."""
    from tests.support.serve import free_port

    toml = tmp_path / "keep.toml"
    toml.write_text("""
name = "Keep cup"
games_per_pairing = 1
concurrency = 1
start = "when_connected"
seed = "keep"

[rules]
score_limit = 30

[[participants]]
name = "ka"
command = ["{python}", "-m", "chinchon.sdk", "--bot", "greedy"]

[[participants]]
name = "kb"
command = ["{python}", "-m", "chinchon.sdk", "--bot", "random"]
""", encoding="utf-8")
    http = free_port()
    proc = subprocess.Popen([*CLI, "tournament", "run", str(toml), "--quiet", "--keep-serving",
                             "--http", f"127.0.0.1:{http}"], cwd=tmp_path,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "PYTHONUNBUFFERED": "1", "COLUMNS": "300"})
    serve: subprocess.Popen[str] | None = None
    try:
        assert proc.stdout is not None
        line = ""
        while "serving the results at" not in line:
            line = proc.stdout.readline()
            assert line, "tournament run --keep-serving ended without serving"
        url = re.search(r"http://\S+/", line)
        assert url is not None and url.group(0) == f"http://127.0.0.1:{http}/", line
        # The run is over (its bots and referee stopped): its results are still served.
        with urllib.request.urlopen(url.group(0) + "api/home", timeout=10) as r:
            (t,) = json.loads(r.read())["tournaments"]
        assert t["name"] == "Keep cup" and t["status"] == "finished"
        with urllib.request.urlopen(f"{url.group(0)}t/{t['id']}", timeout=10) as r:
            assert r.status == 200
        proc.send_signal(2)  # Ctrl-C
        out, err = proc.communicate(timeout=60)
        assert proc.returncode == 0, out[-3000:] + err[-3000:]
        last = out.strip().splitlines()[-1]
        assert "to serve these results in the web view: chinchon serve --db " in last, out[-2000:]
        command = last.split(": ", 1)[1].split()
        assert command[-2:] == ["--http", f"127.0.0.1:{http}"]
        # The command printed serves them (on a free gRPC port here).
        out_file = tmp_path / "serve.out"
        with open(out_file, "w") as fh:
            serve = subprocess.Popen([*CLI, *command[1:], "--address", "127.0.0.1:0"], cwd=tmp_path,
                                     stdout=fh, stderr=subprocess.DEVNULL, text=True)
        until_sync(lambda: "\"event\": \"web\"" in out_file.read_text(), "chinchon serve served", 30)
        with urllib.request.urlopen(url.group(0) + "api/home", timeout=10) as r:
            assert [x["status"] for x in json.loads(r.read())["tournaments"]] == ["finished"]
    finally:
        for p in (proc, serve):
            if p is not None and p.poll() is None:
                p.kill()
                p.wait()
