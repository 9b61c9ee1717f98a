"""Practice deals: repeatable for the author (same seed, same partner, same referee: the
same deals), never computable by the bot, never shared between games or partners."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
from chinchon.engine import RuleSet
from chinchon.v1 import referee_pb2 as pb
from chinchon.wire import rules_to_wire
from chinchon_referee.auth import TokenBook, digest
from chinchon_referee.config import RefereeConfig
from chinchon_referee.referee import Referee
from chinchon_referee.referee.practice_keys import practice_key
from chinchon_referee.service.server import RunningServer, start_server
from chinchon_referee.storage import SqliteStore
from google.protobuf import json_format
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.support.helpers import ADMIN, RAW_BOT, bot_token
from tests.support.raw_streams import RULES, Stream, client, decks
from tests.support.serve import Serve, free_port

ROOT = Path(__file__).resolve().parents[2]


def _hello(opponent: str, seed: str, games: int = 2) -> pb.Hello:
    return pb.Hello(client="keys", practice=pb.PracticeRequest(
        opponent=opponent, games=games, seed=seed,
        rules=rules_to_wire(RuleSet(**RULES))))  # type: ignore[arg-type]


#: The ``keyed_servers`` fixture: ``await keyed_servers(secret)`` starts a referee whose
#: practice deals are keyed by ``secret`` (None: a secret of its own).
StartKeyed = Callable[[bytes | None], Awaitable[RunningServer]]


@pytest.fixture
async def keyed_servers() -> AsyncIterator[StartKeyed]:
    """A factory of referees on port 0 that know the bots p and q, with a given practice
    secret; every one is stopped after the test."""
    started: list[RunningServer] = []

    async def _start(secret: bytes | None) -> RunningServer:
        tokens = TokenBook(ADMIN)
        for b in ("p", "q"):
            tokens.add(b, bot_token(b))
        server = await start_server("127.0.0.1:0", None, tokens,
                                    referee=Referee(RefereeConfig(), practice_secret=secret))
        started.append(server)
        return server

    yield _start
    for server in started:
        await server.stop(0)


async def _sessions(server: RunningServer, *sessions: tuple[str, pb.Hello]) -> list[list[tuple[str, ...]]]:
    """Play practice sessions one after the other on ``server``; the first deck of each
    game of each session, from the records the bot received."""
    out = []
    for bot, hello in sessions:
        streams: list[Stream] = []
        await asyncio.wait_for(client(server.target, bot, hello, 1, streams), 60)
        ended = [m.game_ended for _, m in streams[0].got if m.WhichOneof("kind") == "game_ended"]
        assert ended and all(e.HasField("record") for e in ended)
        out.append([decks(json_format.MessageToDict(e.record))[0] for e in ended])
    return out


async def test_the_same_seed_and_partner_repeat_the_deals_and_nothing_else_does(
    keyed_servers: StartKeyed,
) -> None:
    same, again, other_partner, other_seed, none1, none2 = await _sessions(
        await keyed_servers(None),
        ("p", _hello("greedy", "s")), ("p", _hello("greedy", "s")), ("p", _hello("random", "s")),
        ("p", _hello("greedy", "t")), ("p", _hello("greedy", "")), ("p", _hello("greedy", "")),
    )
    assert same == again, "the same seed on the same referee repeats the session's deals"
    assert len(set(same)) == len(same), "every game of a session has its own deal"
    seen = [same, other_partner, other_seed, none1, none2]
    for i, a in enumerate(seen):
        for b in seen[i + 1:]:
            assert not set(a) & set(b)


async def test_the_secret_kept_in_the_database_survives_a_restart(
    tmp_path: Path, keyed_servers: StartKeyed,
) -> None:
    db = tmp_path / "serve.sqlite3"
    store = SqliteStore(str(db))
    first = store.secret("practice_secret")
    store.close()
    store = SqliteStore(str(db))
    assert store.secret("practice_secret") == first and len(first) == 32
    store.close()
    other = SqliteStore(str(tmp_path / "other.sqlite3"))
    assert other.secret("practice_secret") != first
    other.close()
    # Two referees over the same database: the same deals for the same seed.
    a, b = [(await _sessions(await keyed_servers(first), ("p", _hello("greedy", "s"))))[0]
            for _ in range(2)]
    c = (await _sessions(await keyed_servers(None), ("p", _hello("greedy", "s"))))[0]
    assert a == b and not set(a) & set(c)


@settings(max_examples=50, deadline=None)
@given(secret=st.binary(min_size=1, max_size=32), seed=st.text(min_size=1, max_size=20),
       players=st.lists(st.text(min_size=1, max_size=8), min_size=2, max_size=2))
def test_the_key_depends_on_secret_seed_and_players_not_on_their_order(
    secret: bytes, seed: str, players: list[str]
) -> None:
    key = practice_key(secret, seed, players)
    assert key == practice_key(secret, seed, players[::-1])
    assert key not in (seed, practice_key(secret + b"x", seed, players),
                       practice_key(secret, seed + "x", players),
                       practice_key(secret, seed, [players[0], players[1] + "x"]))
    # No seed: a fresh key every time.
    assert practice_key(secret, "", players) != practice_key(secret, "", players)


def _cli(tmp_path: Path, name: str, *args: str) -> dict[str, Any]:
    report = tmp_path / f"{name}.json"
    res = subprocess.run(
        [sys.executable, "-m", "chinchon_referee.cli", "practice", "--games", "2",
         "--json", str(report), "--out", str(tmp_path / f"{name}-out"), *args,
         "--", sys.executable, RAW_BOT, "--mode", "first"],
        capture_output=True, text=True, timeout=120, cwd=ROOT, env=dict(os.environ, COLUMNS="200"))
    assert res.returncode == 0, res.stdout + res.stderr
    data: dict[str, Any] = json.loads(report.read_text())
    assert f"--seed {data['seed']}" in res.stdout
    return data


def test_cli_practice_draws_a_secret_seed_and_repeats_it_on_demand(tmp_path: Path) -> None:
    one, two = _cli(tmp_path, "one"), _cli(tmp_path, "two")
    assert one["seed"] != two["seed"] and len(one["seed"]) == 16
    again = _cli(tmp_path, "again", "--seed", one["seed"])
    assert again["seed"] == one["seed"]
    assert [(g["totals"], g["summary"]) for g in again["games"]] == \
        [(g["totals"], g["summary"]) for g in one["games"]]


#: The ``serves`` fixture: ``await serves(db, n)`` starts ``chinchon serve`` over ``db``
#: (the n-th of the test) on a free port; its port with it.
StartServe = Callable[[Path, int], Awaitable[tuple[Serve, int]]]


@pytest.fixture
async def serves(tmp_path: Path) -> AsyncIterator[StartServe]:
    """A factory of ``chinchon serve`` child processes (started and stopped off the event
    loop: they are waited for); every one is stopped after the test."""
    started: list[Serve] = []

    async def _start(db: Path, n: int) -> tuple[Serve, int]:
        port = free_port()
        server = await asyncio.to_thread(Serve, tmp_path, port, db, n)
        started.append(server)
        return server, port

    yield _start
    for server in started:
        await asyncio.to_thread(server.stop)


async def test_chinchon_serve_repeats_a_seed_after_a_restart_and_no_other_server_does(
    tmp_path: Path, serves: StartServe,
) -> None:
    """`chinchon serve` keeps its practice secret in its database: the same seed gives
    the same deals after a restart over the same file, and other deals on another one."""

    async def session(db: Path, n: int) -> list[tuple[str, ...]]:
        store = SqliteStore(str(db))
        store.upsert_bot("p", digest(bot_token("p")))
        store.close()
        server, port = await serves(db, n)
        streams: list[Stream] = []
        await asyncio.wait_for(
            client(f"127.0.0.1:{port}", "p", _hello("greedy", "again"), 1, streams), 60)
        await asyncio.to_thread(server.stop)  # before the next one opens the same database
        ended = [m.game_ended for _, m in streams[0].got if m.WhichOneof("kind") == "game_ended"]
        assert len(ended) == 2
        return [decks(json_format.MessageToDict(e.record))[0] for e in ended]

    first = await session(tmp_path / "serve.sqlite3", 1)
    assert await session(tmp_path / "serve.sqlite3", 2) == first
    assert not set(await session(tmp_path / "other.sqlite3", 3)) & set(first)
