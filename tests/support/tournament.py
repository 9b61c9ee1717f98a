"""Shared helpers of the tournament tests: record checks, TOML specs, the in-process
director (no tests here)."""

from __future__ import annotations

import asyncio
import sys
from collections import Counter
from pathlib import Path
from typing import Any

from chinchon.engine import replay
from chinchon.v1 import record_pb2
from chinchon_referee.auth import TokenBook
from chinchon_referee.director.director import Director
from chinchon_referee.director.events import TournamentEvent
from chinchon_referee.service.server import RunningServer, start_server
from chinchon_referee.storage import SqliteStore
from google.protobuf import json_format

from tests.support.helpers import ADMIN, bot_token

CLI = [sys.executable, "-m", "chinchon_referee.cli"]
PLAYED = ("TERMINATION_NORMAL", "TERMINATION_CHINCHON")
FORFEITED_ABSENT = ("TERMINATION_FORFEIT_NO_SHOW", "TERMINATION_FORFEIT_DISCONNECT")

def strict_record(rec: dict[str, Any]) -> record_pb2.GameRecord:
    """The record parses as a chinchon.v1.GameRecord with no unknown field."""
    return json_format.ParseDict(rec, record_pb2.GameRecord(), ignore_unknown_fields=False)


def check_record(rec: dict[str, Any]) -> None:
    msg = strict_record(rec)
    assert msg.game_id == rec["gameId"]
    if rec["result"]["termination"] in PLAYED:
        rep = replay(rec)
        assert rep.state.is_over
        assert list(rep.state.result.winners) == rec["result"]["winners"]
    else:
        replay(rec)  # forfeits replay up to the forfeit


def spec_dict(name: str, bots: list[str], **extra: Any) -> dict[str, Any]:
    d: dict[str, Any] = {
        "name": name,
        "participants": [{"name": b, "token": bot_token(b)} for b in bots],
        "games_per_pairing": 2,
        "concurrency": 2,
        "seed": f"seed-{name}",
        "rules": {"score_limit": 60},
        "time_control": {"per_move": 1.0, "bank": 5.0},
        "policies": {"reconnect_grace": 1.0},
    }
    d.update(extra)
    return d


class InProcess:
    """A real referee server on port 0 with a Director over a real SQLite file."""

    def __init__(self, server: RunningServer, store: SqliteStore, director: Director) -> None:
        self.server, self.store, self.director = server, store, director
        self.events: list[TournamentEvent] = []
        self._watch: asyncio.Task[None] | None = None

    @classmethod
    async def start(cls, tmp_path: Path) -> InProcess:
        tokens = TokenBook(ADMIN)
        server = await start_server("127.0.0.1:0", None, tokens)
        store = SqliteStore(str(tmp_path / "tournament.sqlite3"))
        return cls(server, store, Director(server.referee, store, tokens))

    def watch(self, tid: str) -> None:
        async def collect() -> None:
            async for ev in self.director.watch(tid):
                self.events.append(ev)

        self._watch = asyncio.ensure_future(collect())

    async def watched(self, timeout: float = 10) -> None:
        assert self._watch is not None
        await asyncio.wait_for(self._watch, timeout)

    async def close(self) -> None:
        if self._watch is not None and not self._watch.done():
            self._watch.cancel()
        await self.server.stop(0)
        await self.director.settle(5.0)  # nothing is written to the store after it closes
        self.store.close()

    def ended(self) -> Counter[str]:
        """Game ids of the 'game ended' events, with how often each came."""
        return Counter(e.game_id for e in self.events if e.result is not None)


def sdk_cup(path: Path, name: str, seed: str, *, games_per_pairing: int, score_limit: int,
            concurrency: int = 2, bots: tuple[tuple[str, str], ...] = (
                ("greedy-py", "greedy"), ("random-py", "random"))) -> Path:
    """Write at ``path`` the declaration of a 2-player round-robin of SDK engine bots
    (name, engine bot), started when they are connected, a 2 s + 10 s clock."""
    participants = "".join(
        f'\n[[participants]]\nname = "{b}"\n'
        f'command = ["{{python}}", "-m", "chinchon.sdk", "--bot", "{kind}"]\n'
        for b, kind in bots)
    path.write_text(f"""name = "{name}"
table_size = 2
games_per_pairing = {games_per_pairing}
concurrency = {concurrency}
start = "when_connected"
seed = "{seed}"

[rules]
score_limit = {score_limit}

[time_control]
per_move = 2.0
bank = 10.0
{participants}""", encoding="utf-8")
    return path
