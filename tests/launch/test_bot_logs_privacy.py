"""A launched bot's stderr is its author's and the organizer's, and no line of a game in
progress reaches anyone: a real ``chinchon tournament run`` of three hostile bots that
print their hand at every decision without the game's id (tests/bots/hand_printer_bot.py),
at concurrency 3 and 6, while every stderr endpoint of its web view is polled with no
token, each bot's token and a token that is nobody's; then, the run over, the same
database served by ``chinchon serve`` with an admin token."""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import re
import subprocess
from pathlib import Path

import aiohttp
import pytest
from chinchon_referee.storage import open_store
from chinchon_referee.vocabulary import GameStatus

from tests.support.helpers import ADMIN, ROOT
from tests.support.serve import free_port
from tests.support.tournament import CLI
from tests.support.web import ServeWeb

HOSTILE = ROOT / "tests" / "bots" / "hand_printer_bot.py"
BOTS = {f"hp{i}": f"tok_hand_printer_{i}_0123456789" for i in range(1, 4)}
#: A token of nobody's.
STRANGER = "tok_nobody_at_all_0123456789"
MARK = re.compile(r"\bhand ([0-9a-f]{8}-\d+-\d+)\b")


def _declaration(path: Path, concurrency: int) -> Path:
    parts = "".join(f'\n[[participants]]\nname = "{n}"\ntoken = "{t}"\n'
                    f'command = ["{{python}}", "-m", "chinchon.sdk", "--bot", "{HOSTILE}"]\n'
                    for n, t in BOTS.items())
    path.write_text(f"""name = "Hands out"
table_size = 2
games_per_pairing = 6
concurrency = {concurrency}
start = "when_connected"
seed = "hands-out"

[rules]
score_limit = 60

[time_control]
per_move = 5.0
bank = 30.0
{parts}""", encoding="utf-8")
    return path


def _truth(folder: Path) -> dict[str, str]:
    """Each mark a bot printed: the game it was printed in."""
    out = {}
    for f in (folder / "truth").glob("*.jsonl"):
        for ln in f.read_text(encoding="utf-8").splitlines():
            if ln.endswith("}"):
                e = json.loads(ln)
                out[e["mark"]] = e["game"]
    return out


def _owner(mark: str) -> str:
    """The bot whose mark this is (the bot names itself by a digest of its token)."""
    who = {hashlib.sha256(t.encode()).hexdigest()[:8]: n for n, t in BOTS.items()}
    return who[mark.split("-")[0]]


class Poller:
    """Reads every stderr endpoint as everyone, checking each answer at once."""

    def __init__(self, url: str, db: Path, cwd: Path) -> None:
        self.url, self.db, self.cwd = url, db, cwd
        self.served = 0
        self.while_running = 0  # answers received while a game was in progress
        self.refused: dict[int, int] = {}

    def identities(self) -> list[tuple[str, str | None]]:
        return [("anyone", None), ("stranger", STRANGER), *BOTS.items()]

    async def get(self, http: aiohttp.ClientSession, path: str,
                  token: str | None) -> tuple[int, str]:
        headers = {} if token is None else {"Authorization": f"Bearer {token}"}
        while True:
            async with http.get(self.url + path, headers=headers) as r:
                if r.status == 429:  # the web view's rate per client: paced as it asks
                    await asyncio.sleep(float(r.headers.get("Retry-After", "1")))
                    continue
                return r.status, await r.text()

    def running_now(self, games: set[str]) -> set[str]:
        store = open_store(str(self.db), read_only=True)
        try:
            states = store.game_states(sorted(games))
        finally:
            store.close()
        return {g for g in games if states.get(g, (None,))[0] is not GameStatus.FINISHED}

    async def check(self, http: aiohttp.ClientSession, path: str, who: str,
                    token: str | None, bot_of_path: str | None) -> None:
        status, text = await self.get(http, path, token)
        if token is None:
            assert status == 401, f"{path} answered {status} to a request without a token"
            assert "error" in json.loads(text)
            return
        if token == STRANGER:
            assert status == 401, f"{path} answered {status} to a token of nobody's"
            return
        if status != 200:
            assert status in (403, 404), (path, status, text[:200])
            self.refused[status] = self.refused.get(status, 0) + 1
            return
        assert bot_of_path in (None, who), f"{who} read {bot_of_path}'s lines at {path}"
        marks = MARK.findall(text)
        truth = _truth(self.cwd)
        games = {truth[m] for m in marks}  # every mark served was noted before printed
        for m in marks:
            assert _owner(m) == who, f"{who} was served {m}, another bot's line"
        leaked = self.running_now(games)
        assert not leaked, f"{path} served {who} lines of games in progress: {sorted(leaked)}"
        self.served += len(marks)

    async def round(self, http: aiohttp.ClientSession, tid: str) -> None:
        status, body = await self.get(http, f"api/t/{tid}", None)
        if status != 200:
            return
        snap = json.loads(body)
        running = [(g["id"], g["players"]) for g in snap.get("running", [])]
        status, body = await self.get(http, f"api/t/{tid}/games", None)
        done = [(g["id"], g["players"]) for g in json.loads(body).get("games", [])][-2:] \
            if status == 200 else []
        if running:
            self.while_running += 1
        for gid, players in running + done:
            for seat, name in enumerate(players):
                for who, token in self.identities():
                    await self.check(http, f"api/g/{gid}/stderr/{seat}", who, token, name)
        for name in BOTS:
            for who, token in self.identities():
                await self.check(http, f"api/b/{name}/stderr", who, token, name)


async def _tournament_id(poller: Poller, http: aiohttp.ClientSession,
                         proc: subprocess.Popen[bytes]) -> str | None:
    while proc.poll() is None:
        try:
            status, body = await poller.get(http, "api/home", None)
        except aiohttp.ClientConnectionError:
            await asyncio.sleep(0.2)  # its web view not listening yet
            continue
        found = json.loads(body)["tournaments"] if status == 200 else []
        if found:
            return str(found[0]["id"])
        await asyncio.sleep(0.2)
    return None


@pytest.mark.parametrize("concurrency", [3, 6])
async def test_no_line_of_a_game_in_progress_reaches_anyone(tmp_path: Path, concurrency: int) -> None:
    toml = _declaration(tmp_path / "hands.toml", concurrency)
    results = tmp_path / "results"
    db = results / "tournament.sqlite3"
    http_port = free_port()
    with open(tmp_path / "run.out", "wb") as out:
        proc = subprocess.Popen([*CLI, "tournament", "run", str(toml), "--results", str(results),
                                 "--quiet", "--http", f"127.0.0.1:{http_port}"],
                                cwd=tmp_path, stdout=out, stderr=subprocess.STDOUT,
                                env={**os.environ, "PYTHONUNBUFFERED": "1"})
    poller = Poller(f"http://127.0.0.1:{http_port}/", db, tmp_path)
    try:
        async with aiohttp.ClientSession() as http:
            tid = await _tournament_id(poller, http, proc)
            assert tid is not None, (tmp_path / "run.out").read_text()[-3000:]
            while proc.poll() is None:
                try:
                    await poller.round(http, tid)
                except aiohttp.ClientConnectionError:
                    break  # the run's web view stopped with the run
        assert proc.wait(timeout=300) == 0, (tmp_path / "run.out").read_text()[-3000:]
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert poller.while_running >= 3, "the web view was read while games were in progress"
    truth = _truth(tmp_path)
    assert len(truth) > 100
    # Most lines are the bots' own (two games at once): none was any game's share.
    # The run over, the database served with an admin token: the author reads every line
    # it printed, the organizer too; nobody else any.
    web = ServeWeb(tmp_path, free_port(), free_port(), db, 1)
    try:
        store = open_store(str(db), read_only=True)
        try:
            games = [(g.id, g.players) for g in store.games(tid)]
        finally:
            store.close()
        assert len(games) == 18
        async with aiohttp.ClientSession() as http:
            final = Poller(web.url, db, tmp_path)
            for name, token in BOTS.items():
                got: dict[str, set[str]] = {"author": set(), "admin": set()}
                for who, tok in (("author", token), ("admin", ADMIN)):
                    status, text = await final.get(http, f"api/b/{name}/stderr", tok)
                    assert status == 200, text[:300]
                    got[who] |= set(MARK.findall(text))
                    for gid, players in games:
                        for seat in [s for s, p in enumerate(players) if p == name]:
                            status, text = await final.get(http, f"api/g/{gid}/stderr/{seat}", tok)
                            assert status in (200, 404), text[:300]
                            got[who] |= set(MARK.findall(text))
                    status, _ = await final.get(http, f"api/b/{name}/stderr", None)
                    assert status == 401
                mine = {m for m in truth if _owner(m) == name}
                assert got["author"] == got["admin"] == mine
                other = next(n for n in BOTS if n != name)
                status, _ = await final.get(http, f"api/b/{name}/stderr", BOTS[other])
                assert status == 403
    finally:
        web.stop()
