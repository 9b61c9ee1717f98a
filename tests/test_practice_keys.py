"""Practice deals: repeatable for the author (same seed, same partner, same referee: the
same deals), never computable by the bot, never shared between games or partners."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from chinchon.engine import RuleSet
from chinchon.v1 import referee_pb2 as pb
from chinchon.wire import rules_to_wire
from chinchon_referee.auth import TokenBook
from chinchon_referee.config import RefereeConfig
from chinchon_referee.practice_keys import practice_key
from chinchon_referee.referee import Referee
from chinchon_referee.server import start_server
from chinchon_referee.storage import SqliteStore
from google.protobuf import json_format
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.helpers import ADMIN, RAW_BOT, bot_token
from tests.test_cross_game_leaks import RULES, Stream, client, decks

ROOT = Path(__file__).resolve().parents[1]


def _hello(opponent: str, seed: str, games: int = 2) -> pb.Hello:
    return pb.Hello(client="keys", practice=pb.PracticeRequest(
        opponent=opponent, games=games, seed=seed,
        rules=rules_to_wire(RuleSet(**RULES))))  # type: ignore[arg-type]


async def _sessions(secret: bytes | None, *sessions: tuple[str, pb.Hello]) -> list[list[tuple[str, ...]]]:
    """Play practice sessions one after the other on one referee (with ``secret``); the
    first deck of each game of each session, from the records the bot received."""
    tokens = TokenBook(ADMIN)
    for b in ("p", "q"):
        tokens.add(b, bot_token(b))
    server = await start_server("127.0.0.1:0", None, tokens,
                                referee=Referee(RefereeConfig(), practice_secret=secret))
    try:
        out = []
        for bot, hello in sessions:
            streams: list[Stream] = []
            await asyncio.wait_for(client(server.target, bot, hello, 1, streams), 60)
            ended = [m.game_ended for _, m in streams[0].got if m.WhichOneof("kind") == "game_ended"]
            assert ended and all(e.HasField("record") for e in ended)
            out.append([decks(json_format.MessageToDict(e.record))[0] for e in ended])
        return out
    finally:
        await server.stop(0)


def test_the_same_seed_and_partner_repeat_the_deals_and_nothing_else_does() -> None:
    same, again, other_partner, other_seed, none1, none2 = asyncio.run(_sessions(
        None,
        ("p", _hello("greedy", "s")), ("p", _hello("greedy", "s")), ("p", _hello("random", "s")),
        ("p", _hello("greedy", "t")), ("p", _hello("greedy", "")), ("p", _hello("greedy", "")),
    ))
    assert same == again, "the same seed on the same referee repeats the session's deals"
    assert len(set(same)) == len(same), "every game of a session has its own deal"
    seen = [same, other_partner, other_seed, none1, none2]
    for i, a in enumerate(seen):
        for b in seen[i + 1:]:
            assert not set(a) & set(b)


def test_the_secret_kept_in_the_database_survives_a_restart(tmp_path: Path) -> None:
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
    a, b = (asyncio.run(_sessions(first, ("p", _hello("greedy", "s"))))[0] for _ in range(2))
    c = asyncio.run(_sessions(None, ("p", _hello("greedy", "s"))))[0]
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


def test_chinchon_serve_repeats_a_seed_after_a_restart_and_no_other_server_does(
    tmp_path: Path,
) -> None:
    """`chinchon serve` keeps its practice secret in its database: the same seed gives
    the same deals after a restart over the same file, and other deals on another one."""
    from chinchon_referee.auth import digest

    from tests.serve_support import Serve, free_port

    def session(db: Path, n: int) -> list[tuple[str, ...]]:
        store = SqliteStore(str(db))
        store.upsert_bot("p", digest(bot_token("p")))
        store.close()
        port = free_port()
        server = Serve(tmp_path, port, db, n)
        try:
            streams: list[Stream] = []
            asyncio.run(asyncio.wait_for(
                client(f"127.0.0.1:{port}", "p", _hello("greedy", "again"), 1, streams), 60))
            ended = [m.game_ended for _, m in streams[0].got if m.WhichOneof("kind") == "game_ended"]
            assert len(ended) == 2
            return [decks(json_format.MessageToDict(e.record))[0] for e in ended]
        finally:
            server.stop()

    first = session(tmp_path / "serve.sqlite3", 1)
    assert session(tmp_path / "serve.sqlite3", 2) == first
    assert not set(session(tmp_path / "other.sqlite3", 3)) & set(first)
