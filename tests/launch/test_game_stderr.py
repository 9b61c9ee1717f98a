"""The stderr lines of the bots ``chinchon tournament run`` launched, cut per game and
seat, kept beside the database (``stderr/GAME.SEAT.log``) and linked from the replay,
with the bot's token blanked out."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import aiohttp
from chinchon_referee.storage import GameRow, open_store
from chinchon_referee.vocabulary import TournamentStatus
from chinchon_referee.web.app import AppConfig
from chinchon_referee.web.process import serve_local
from chinchon_referee.web.serving import bind

from tests.support.helpers import ROOT
from tests.support.tournament import CLI, sdk_cup

CHATTY = ROOT / "tests" / "bots" / "chatty_bot.py"
CHATTY_TOKEN = "tok_chatty_0123456789abcdef"
QUIET_TOKEN = "tok_quiet_0123456789abcdef"


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def _played(tmp_path: Path, toml: Path, results: Path) -> tuple[Path, str, list[GameRow]]:
    """``tournament run`` of ``toml`` into ``results``: its database, the tournament's id and
    its two finished games."""
    proc = subprocess.run([*CLI, "tournament", "run", str(toml), "--results", str(results),
                           "--quiet", "--http", "off"],
                          capture_output=True, text=True, timeout=150, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    db = results / "tournament.sqlite3"
    store = open_store(str(db), read_only=True)
    try:
        tid = store.tournaments()[0].id
        games = [g for g in store.games(tid) if g.status == "finished"]
    finally:
        store.close()
    assert len(games) == 2
    return db, tid, games


async def test_each_games_stderr_lines_are_kept_and_linked_from_its_replay(tmp_path: Path) -> None:
    toml = sdk_cup(tmp_path / "chatty.toml", "Chatty cup", "chatty-seed", games_per_pairing=2,
                   score_limit=30, concurrency=1, bots=(("chatty", str(CHATTY)), ("quiet", "greedy")))
    text = toml.read_text()
    for name, token in (("chatty", CHATTY_TOKEN), ("quiet", QUIET_TOKEN)):
        text = text.replace(f'name = "{name}"\n', f'name = "{name}"\ntoken = "{token}"\n')
    toml.write_text(text)
    results = tmp_path / "results"
    db, _, games = _played(tmp_path, toml, results)
    folder = results / "stderr"
    tokens_blanked = 0
    for g in games:
        seat = g.players.index("chatty")
        lines = (folder / f"{g.id}.{seat}.log").read_text().splitlines()
        decisions = [ln for ln in lines if ln.startswith("decision ")]
        # One line per decision, all of this game's and none of the other's.
        assert g.stats is not None and len(decisions) == g.stats[seat]["decisions"]
        assert decisions[0].startswith("decision hand=1 ")
        assert all("my token is" not in ln or ln.endswith("[token]") for ln in lines)
        tokens_blanked += sum(ln.endswith("my token is [token]") for ln in lines)
        others = [o.id for o in games if o.id != g.id]
        assert not any(o in ln for o in others for ln in lines), "another game's lines"
    assert tokens_blanked == 1
    # The replay served from that database links them; the link gives the file to the
    # bot's token (its author) only: anyone else is refused, and told nothing more.
    site = await serve_local(AppConfig(db=str(db)), None, bind("127.0.0.1", 0))
    try:
        async with aiohttp.ClientSession() as http:
            for g in games:
                seat = g.players.index("chatty")
                async with http.get(f"{site.url}api/g/{g.id}/replay") as r:
                    links = (await r.json())["stderr"]
                assert {ln["seat"] for ln in links} == {0, 1}
                url = next(ln["url"] for ln in links if ln["seat"] == seat)
                async with http.get(f"{site.url}{url.lstrip('/')}", headers=bearer(CHATTY_TOKEN)) as r:
                    assert r.status == 200 and r.content_type == "text/plain"
                    assert r.headers["Cache-Control"] == "no-store"
                    assert await r.read() == (folder / f"{g.id}.{seat}.log").read_bytes()
                for headers in ({}, bearer(QUIET_TOKEN), bearer("tok_nobody_0123456789")):
                    async with http.get(f"{site.url}{url.lstrip('/')}", headers=headers) as r:
                        assert r.status in (401, 403) and "error" in await r.json()
            async with http.get(f"{site.url}api/g/{games[0].id}/stderr/x") as r:
                assert r.status == 400
            async with http.get(f"{site.url}api/g/nosuch/stderr/0") as r:
                assert r.status == 401  # not 404: nothing is told without a token
            async with http.get(f"{site.url}api/g/nosuch/stderr/0", headers=bearer(CHATTY_TOKEN)) as r:
                assert r.status == 404
    finally:
        await site.stop()


def test_practice_keeps_each_games_stderr_lines_beside_its_record(tmp_path: Path) -> None:
    out = tmp_path / "run"
    res = subprocess.run([*CLI, "practice", "--games", "2", "--out", str(out), "--",
                          sys.executable, "-m", "chinchon.sdk", "--bot", str(CHATTY)],
                         capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert res.returncode == 0, res.stdout[-2000:] + res.stderr[-2000:]
    for n in (1, 2):
        record = json.loads((out / f"practice-{n}.json").read_text())
        # (the bot is named by its program, chatty_bot.py)
        seat = [s["name"] for s in record["seats"]].index("chatty_bot")
        answers = [a for a in record["actions"]
                   if "move" in a and a["move"].get("seat", 0) == seat]
        lines = (out / f"practice-{n}.stderr.log").read_text().splitlines()
        assert len([ln for ln in lines if ln.startswith("decision ")]) == len(answers)
        assert all("my token is" not in ln or ln.endswith("[token]") for ln in lines)


async def test_public_logs_are_anyones_once_the_tournament_is_over_only(tmp_path: Path) -> None:
    """``public_logs = true``: anyone reads a game's share and the bot's own log, once the
    tournament is over; while it is not (its status set back to running in a copy of
    the database), a request without a token is refused as in a private one."""
    toml = sdk_cup(tmp_path / "open.toml", "Open cup", "open-seed", games_per_pairing=2,
                   score_limit=30, concurrency=2, bots=(("chatty", str(CHATTY)), ("quiet", "greedy")))
    toml.write_text("public_logs = true\n" + toml.read_text().replace(
        'name = "chatty"\n', f'name = "chatty"\ntoken = "{CHATTY_TOKEN}"\n'))
    results = tmp_path / "results"
    db, tid, games = _played(tmp_path, toml, results)
    # The two games ran at once: chatty's lines are its own log's, shown to anyone now.
    site = await serve_local(AppConfig(db=str(db)), None, bind("127.0.0.1", 0))
    try:
        async with aiohttp.ClientSession() as http:
            async with http.get(f"{site.url}api/b/chatty/stderr") as r:
                assert r.status == 200
                text = await r.text()
            for g in games:
                seat = g.players.index("chatty")
                async with http.get(f"{site.url}api/g/{g.id}/stderr/{seat}") as r:
                    assert r.status in (200, 404)  # 404: no line of this game alone
                    if r.status == 200:
                        text += await r.text()
            assert text.count("decision ") == sum(g.stats[g.players.index("chatty")]["decisions"]
                                                  for g in games if g.stats)
            assert "my token is [token]" in text
    finally:
        await site.stop()
    # The same database while the tournament is not over: nothing without a token.
    copy = tmp_path / "copy" / "tournament.sqlite3"
    copy.parent.mkdir()
    shutil.copy(db, copy)
    shutil.copytree(results / "stderr", copy.parent / "stderr")
    store = open_store(str(copy))
    try:
        store.set_tournament_status(tid, TournamentStatus.RUNNING)
    finally:
        store.close()
    site = await serve_local(AppConfig(db=str(copy)), None, bind("127.0.0.1", 0))
    try:
        async with aiohttp.ClientSession() as http:
            paths = ["api/b/chatty/stderr",
                     *(f"api/g/{g.id}/stderr/{g.players.index('chatty')}" for g in games)]
            for path in paths:
                async with http.get(site.url + path) as r:
                    assert r.status == 401, path
                async with http.get(site.url + path, headers=bearer(CHATTY_TOKEN)) as r:
                    assert r.status in (200, 404), path
    finally:
        await site.stop()
